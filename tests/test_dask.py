"""The Dask path against a real dask.distributed LocalCluster."""

from __future__ import annotations

import copy

import atmlab

from conftest import stored_results, voice_sweep


def test_dask_local_cluster_gives_the_same_database_as_the_local_pool(tmp_path, two_hosts):
    sc = voice_sweep(copy.deepcopy(two_hosts))
    local, dask = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    a = atmlab.Sweep(sc, replications=2).run(local, jobs=2)
    b = atmlab.Sweep(sc, replications=2).run(dask, dask="local", jobs=2)
    assert b.executor.startswith("Dask LocalCluster")
    assert (a.ran, b.ran) == (12, 12)
    assert stored_results(local) == stored_results(dask)
    # Metrics tables agree too (run ids may differ: compare by run key).
    ra, rb = atmlab.results(local, all_metrics=True), atmlab.results(dask, all_metrics=True)
    key = ["scenario_hash", "seed", "replication"]
    metric_cols = [c for c in ra.columns if "." in c or c in ("cell_hops", "events")]
    ma = ra.set_index(key)[metric_cols].sort_index()
    mb = rb.set_index(key)[metric_cols].sort_index()
    assert ma.equals(mb)
