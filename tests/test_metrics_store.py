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
             "upc": "vc", "series": "name"}
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
