"""The 95% confidence interval covers the true mean about 95% of the time.

A metric with a known distribution: a link that loses each cell with
probability p = 0.01, crossed by N = 2000 one-cell datagrams. The cells lost
in one run are Binomial(N, p), mean N p = 20. Each repeat is a sweep of R = 10
replications with its own master seed; its Student-t interval of the mean
either covers 20 or not. Over K = 200 repeats the coverage is
Binomial(200, 0.95)/200 if the intervals are right: mean 0.95, standard
deviation 0.015. The test accepts [0.91, 0.985] (about -2.6 to +2.3 standard
deviations); with its fixed seeds it is deterministic.
"""

from __future__ import annotations

import copy

import atmlab

P, N, R, K = 0.01, 2000, 10, 200


def test_confidence_interval_coverage(tmp_path, two_hosts):
    sc = copy.deepcopy(two_hosts)
    sc["name"] = "bernoulli"
    # 8 bytes of data without LLC/SNAP: 8 + 28 + 8 = 44 bytes, one cell each.
    for h in sc["hosts"]:
        h["encapsulation"] = "null"
    sc["links"][0]["loss"] = {"kind": "bernoulli", "clr": P, "direction": "forward"}
    sc["apps"][0].update(payload="8 bytes", interval="10 us", count=N)
    sc["simulation"]["duration"] = "30 ms"
    db = tmp_path / "cov.sqlite"
    covered = 0
    for k in range(K):
        s = atmlab.Sweep(sc, replications=R, seed=1000 + k)
        s.run(db, jobs=1)
        summary = s.summary(db, metrics=["link_cells_lost"]).iloc[0]
        assert summary.runs == R
        mean, ci = summary.link_cells_lost_mean, summary.link_cells_lost_ci95
        covered += mean - ci <= N * P <= mean + ci
    coverage = covered / K
    assert 0.91 <= coverage <= 0.985, coverage
