"""The result boundary: metric names from the core's result schema, typed
swept values in the results store (and databases of schema 1 migrated)."""

from __future__ import annotations

import json
import sqlite3

import atmlab
from atmlab import metrics
from atmlab.quantity import Quantity, parse
from atmlab.store import SCHEMA_VERSION, Store

from conftest import voice_sweep


def _numbers(node, prefix=""):
    """Every scalar number of a result JSON, by walking it (independently of
    the schema): dotted names as the store uses them."""
    keyed = {"connections": "name", "udp_flows": "name", "cell_sources": "name", "ports": "name", "hosts": "name",
             "upc": "vc", "series": "name", "abr": "name", "abr_ports": "port"}
    for k, v in node.items():
        if isinstance(v, bool) or isinstance(v, str):
            continue
        if isinstance(v, int | float):
            yield prefix + k
        elif isinstance(v, dict) and prefix == "":
            yield from _numbers(v, f"{k}.")
        elif isinstance(v, list) and k in keyed:
            for row in v:
                for name, x in row.items():
                    if isinstance(x, int | float) and not isinstance(x, bool):
                        yield f"{k}.{row[keyed[k]]}.{name}"


def test_every_number_of_a_result_is_a_named_metric_with_a_description():
    r = atmlab.run("nsource_lan")
    flat = metrics.flatten(r.raw)
    walked = set(_numbers(r.raw)) - set(metrics.identity())
    assert walked == {k for k, v in flat.items() if v is not None}  # (the walk cannot tell a null's type)
    assert {"efficiency", "fairness", "cell_loss_ratio", "frames.lost", "ports.sw1->sw2.max_queue",
            "connections.tcp0.goodput_bps"} <= set(flat)
    for name in metrics.run_metrics():
        assert metrics.describe(name), name
    assert metrics.describe("ports.sw1->sw2.max_queue") == "Largest queue, cells."
    assert set(metrics.identity()) == {"scenario", "seed", "replication", "duration_s"}


def test_swept_quantities_are_stored_as_numbers_with_their_unit(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts, n_values=(1, 2))).run(db, jobs=1)
    df = atmlab.results(db)
    # "5 us" and "1 ms" in one column: both in seconds.
    assert sorted(df["delay"].unique()) == [5e-06, 0.001]
    assert df["n"].dtype.kind == "i"
    assert df.attrs["units"] == {"delay": "s"}


def test_quantity_parsing():
    assert parse("300 ms") == Quantity(0.3, "s")
    assert parse("1e-6 s") == Quantity(1e-6, "s")
    assert parse("155.52 Mbit/s") == Quantity(155.52e6, "bit/s")
    assert parse("64 KiB") == Quantity(65536, "bytes") and parse("1000 cells") == Quantity(1000, "cells")
    assert parse("tail_drop") == "tail_drop" and parse(5) == 5 and parse(True) is True


def test_a_schema_1_database_is_read_and_migrated_by_a_sweep(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    sweep = voice_sweep(two_hosts, n_values=(1,))
    atmlab.Sweep(sweep).run(db, jobs=1)
    with sqlite3.connect(db) as con:  # back to schema 1: no typed values
        con.execute("ALTER TABLE runs DROP COLUMN params_typed")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    before = atmlab.results(db)
    assert sorted(before["delay"]) == [5e-06, 0.001]  # typed when read, from the params as written
    atmlab.Sweep(sweep, replications=2).run(db, jobs=1)  # a writer migrates, then stores
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        typed = [json.loads(t) for (t,) in con.execute("SELECT params_typed FROM runs")]
    assert len(typed) == 4 and all(t["delay"]["unit"] == "s" for t in typed)
    with Store(db) as store:
        assert store.runs()["delay"].notna().all()


def test_abr_tables_are_metrics_with_their_units(tmp_path, root):
    """The shipped 97-0177R2 WAN scenario, 0.2 s of it: its ABR sources and
    ERICA+ ports are named metrics with units, in the result and in the
    results store."""
    sc = atmlab.load(root / "scenarios" / "tcp-abr" / "wan.toml")
    sc.data["simulation"]["duration"] = "0.2 s"
    r = atmlab.run(sc)
    flat = metrics.flatten(r.raw)
    assert set(_numbers(r.raw)) - set(metrics.identity()) == {k for k, v in flat.items() if v is not None}
    want = {
        "abr.vc0:forward.mean_acr_bps": "bit/s", "abr.vc0:forward.acr_bps": "bit/s",
        "abr.vc0:backward.last_er_bps": "bit/s", "abr.vc14:forward.data_cells": "cells",
        "abr.vc0:forward.frms_in_rate": "cells", "abr.vc0:forward.adtf_cuts": "",
        "abr_ports.sw0->sw1.load_factor": "", "abr_ports.sw0->sw1.abr_capacity_bps": "bit/s",
        "abr_ports.sw0->sw1.fair_share_bps": "bit/s", "abr_ports.sw0->sw1.high_priority_bps": "bit/s",
        "abr_ports.sw0->sw1.active_vcs": "", "abr_ports.sw0->sw1.intervals": "",
        "cell_sources.video.throughput_bps": "bit/s", "efficiency_basis.background_bps": "bit/s",
        "efficiency": "fraction", "ports.sw0->sw1.max_queue": "cells",
    }
    assert set(want) <= set(flat)
    assert {name: metrics.unit(name) for name in want} == want
    assert flat["abr.vc0:forward.mean_acr_bps"] == r.abr.loc["vc0:forward", "mean_acr_bps"] > 0
    assert flat["abr_ports.sw0->sw1.load_factor"] == r.abr_ports.loc["sw0->sw1", "load_factor"] > 0
    assert metrics.describe("abr_ports.sw0->sw1.load_factor").startswith("Load factor")
    # Every number a result can hold has a unit (a new field of the core needs one in metrics._UNITS).
    assert all(metrics.unit(name) is not None for name in flat), [n for n in flat if metrics.unit(n) is None]
    assert metrics.unit("abr.vc0:forward.host") is None and metrics.unit("abr_ports.sw0->sw1") is None

    db = tmp_path / "r.sqlite"
    atmlab.Sweep(sc.data).run(db, jobs=1)
    with Store(db) as store:
        runs = store.runs(all_metrics=True)
    row = runs.iloc[0]
    assert row["abr.vc0:forward.mean_acr_bps"] == flat["abr.vc0:forward.mean_acr_bps"]
    assert row["abr_ports.sw0->sw1.load_factor"] == flat["abr_ports.sw0->sw1.load_factor"]
    units = runs.attrs["metric_units"]
    assert {k: units[k] for k in want} == want
    assert units["tcp_goodput_bps"] == "bit/s"


def test_every_number_of_the_result_schema_has_a_unit():
    """Walks the schema itself: a field the core adds without a unit here
    fails this test, not a report later."""
    def names(definition=None, prefix=""):
        for f in metrics.fields(definition):
            if f.identity:
                continue
            if f.kind == "number":
                yield prefix + f.name
            elif f.kind == "object":
                yield from names(f.ref, f"{prefix}{f.name}.")
            elif f.kind == "table":
                yield from names(f.ref, f"{prefix}{f.name}.row.with.dots.")

    every = list(names())
    assert len(every) > 80
    missing = [n for n in every if metrics.unit(n) is None]
    assert not missing
    assert set(map(metrics.unit, every)) == {"bit/s", "s", "bytes", "cells", "fraction", ""}
