"""A sweep's options checked before anything runs or is created
(issue 29, item 8): a --ci-metric that names no metric, a replication count
above the default cap, an address that is no Dask scheduler."""

from __future__ import annotations

import pytest

import atmlab
from atmlab.store import RUN_METRICS

from conftest import TWO_HOSTS, atmlab_cli

NAMES = ", ".join(RUN_METRICS)


@pytest.mark.parametrize("name", ["bogus", "connections.voice.goodput_bps", "", 3, None])
def test_a_ci_metric_that_is_no_run_level_metric_is_refused_by_the_api(name):
    with pytest.raises(atmlab.ArgumentError) as e:
        atmlab.Sweep(TWO_HOSTS, ci_target=0.01, ci_metric=name)  # type: ignore[arg-type]
    assert str(e.value) == f"ci_metric {name!r} is not a run-level metric; use one of: {NAMES}"


def test_every_run_level_metric_is_a_ci_metric():
    for name in RUN_METRICS:
        assert atmlab.Sweep(TWO_HOSTS, ci_target=0.01, ci_metric=name).ci_metric == name


def test_a_ci_metric_that_is_no_metric_is_a_usage_error_before_the_database_exists(tmp_path):
    db = tmp_path / "r.sqlite"
    p = atmlab_cli("sweep", "scenarios/examples/sweep_buffer.toml", "--ci-target", "0.01", "--ci-metric", "bogus",
                   "--db", str(db))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (f"Error: Invalid value for '--ci-metric': 'bogus' is not a run-level "
                                                 f"metric; use one of: {NAMES}")
    assert not db.exists() and p.stdout == ""


# ------------------------------------------------ replications above the default cap

def test_more_replications_than_the_default_cap_are_accepted_by_the_api():
    assert atmlab.Sweep(TWO_HOSTS, replications=31).replications == 31
    s = atmlab.Sweep(TWO_HOSTS, replications=31, ci_target=0.01)
    assert (s.replications, s.max_replications) == (31, 31)  # the cap rises to -r
    assert atmlab.Sweep(TWO_HOSTS, replications=2, ci_target=0.01).max_replications == 30
    assert atmlab.Sweep(TWO_HOSTS, replications=5, max_replications=4).replications == 5  # no target: no use


@pytest.mark.parametrize("target", [[], ["--ci-target", "0.01"]], ids=["no-target", "target"])
def test_sweep_r_31_runs_without_max_replications(target, tmp_path):
    p = atmlab_cli("sweep", "scenarios/examples/sweep_buffer.toml", "-r", "31", *target, "--dry-run")
    assert p.returncode == 0, p.stderr
    first = " ".join(p.stdout.split("┏")[0].split())  # the line above the table, as rich wrapped it
    assert first.startswith("sweep_buffer: 8 points x 31 replications = 248 runs")
    assert first.endswith("(at most 31)") if target else "at most" not in first


def test_an_explicit_cap_below_r_is_refused_only_with_a_target():
    args = ["sweep", "scenarios/examples/sweep_buffer.toml", "-r", "5", "--max-replications", "4", "--dry-run"]
    assert atmlab_cli(*args).returncode == 0
    p = atmlab_cli(*args, "--ci-target", "0.01")
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for --max-replications: is below --replications")
