"""The atmf-fairness study (docs/reproductions/atmf-fairness.md): its
algorithms come from the core, every switch port gets the algorithm, a
run is scored against the max-min oracle, and the claims say "no verdict"
for algorithms the core lacks."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import atmlab
from atmlab.maxmin import scenario_max_min
from atmlab.reproduce import atmf_fairness as af
from atmlab.reproduce.kit import Options, reproduce
from atmlab.reproduce import entry


def test_the_algorithms_are_the_core_s_that_run_on_their_defaults():
    algs = af.algorithms()
    assert {"erica_plus", "erica", "efci"} <= set(algs)
    assert not set(algs) & {"none", "fixed_rate"}


def test_every_switch_port_runs_the_algorithm():
    t = af.template("atmf/gfc2", "efci")
    for sw in t["switches"]:
        assert sw["port"]["abr"] == {"algorithm": "efci", "threshold": 100}
    # The oracle reads each algorithm's target: ERICA aims at 0.9 of a link.
    full, erica = af.oracle("atmf/two_source", "erica_plus"), af.oracle("atmf/two_source", "erica")
    assert erica.rates["s0"] == full.rates["s0"] * 9 / 10


def _measure(scenario: str, alg: str, duration: str) -> dict[str, float]:
    label = next(lab for s, lab, _ in af.CONFIGURATIONS if s == scenario)
    result = atmlab.run(af.template(scenario, alg), overrides=[f"simulation.duration={duration}"])
    return af.STUDY.measure(result, {"configuration": label, "algorithm": alg})


def test_erica_plus_on_two_sources_is_scored_at_max_min():
    m = _measure("atmf/two_source", "erica_plus", "2 s")
    assert m["vcs"] == 2
    assert m["max_deviation"] < af.TOLERANCE and m["jain"] > 0.999
    assert 0.99 < m["late_ratio"] < 1.01
    assert m["convergence_s"] < 2.0 and m["peak_queue_cells"] > 0


def test_a_source_limited_vc_counts_at_its_application_s_rate():
    # s0 sends 10 Mbit/s; ERICA+ lets its ACR sit far above that. Scored at
    # its ACR it would be several times its max-min rate.
    m = _measure("atmf/three_source", "erica_plus", "1 s")
    assert m["max_ratio"] < 1.05
    limit = af.demands("atmf/three_source", "erica_plus")["s0"]
    assert limit == pytest.approx(float(scenario_max_min("atmf/three_source").rates["s0"]) * 424)


def test_binary_feedback_is_scored_far_from_max_min():
    m = _measure("atmf/nsource", "efci", "1 s")
    assert m["max_deviation"] > 0.2 and m["jain"] < 0.99 and math.isnan(m["convergence_s"])


def test_claims_have_no_verdict_without_their_algorithm_or_runs():
    points = pd.DataFrame([
        {"configuration": "GFC-2", "algorithm": "erica_plus", "max_deviation": 0.01, "jain": 1.0},
        {"configuration": "linear parking lot", "algorithm": "efci", "long_ratio": 0.5, "max_ratio": 0.8,
         "max_deviation": 0.5, "jain": 0.9},
    ])
    c = {x.claim: x for x in af.claims(points)}
    assert c["F1"].holds is True and c["F2"].holds is True
    assert c["F3"].holds is None and c["F5"].holds is None and c["F8a"].holds is None
    points.loc[0, "max_deviation"] = 0.2
    assert {x.claim: x for x in af.claims(points)}["F1"].holds is False


def test_one_compared_value_per_configuration_and_algorithm():
    pub = af.STUDY.published()
    assert len(pub) == len(af.CONFIGURATIONS) * len(af.algorithms())
    assert all(p.quantity == "max_deviation" and p.value == 0 for p in pub)


def test_the_quick_reproduction_runs_and_writes_its_tables(tmp_path):
    e = entry("atmf-fairness")
    rep = reproduce(e, e.load(), Options(out=tmp_path, quick=True, jobs=1), lambda *a, **k: None)
    assert not rep.failures
    for name in ("atmf-fairness.csv", "atmf-fairness_comparison.csv", "atmf-fairness_claims.csv",
                 "atmf-fairness_deviation.png"):
        assert (tmp_path / name).is_file(), name
    points = pd.read_csv(tmp_path / "atmf-fairness.csv")
    assert set(points.algorithm) == set(af.QUICK_ALGORITHMS)
    assert len(points) == len(af.CONFIGURATIONS) * len(af.QUICK_ALGORITHMS)
