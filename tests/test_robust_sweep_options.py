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
