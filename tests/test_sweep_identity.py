"""A sweep is its scenario, not its name (issue: results a researcher can trust).

An edited scenario swept again under its old name into the same database is
a new sweep: `atmlab results`, `atmlab report` and every aggregate work on
one sweep and never pool runs of two scenarios; resuming an unchanged sweep
reuses its runs; a database written before sweeps had an identity (schema
2, ``tests/data/results_schema2.sqlite``, written by the previous version
with exactly that mistake in it) is read as it is and migrated by a writer.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

import atmlab
from atmlab.stats import summarize
from atmlab.store import SCHEMA_VERSION, Store

from conftest import ROOT, voice_sweep

V2 = ROOT / "tests" / "data" / "results_schema2.sqlite"


def edited_pair(two_hosts):
    """The same sweep (name and points) at two durations."""
    before = voice_sweep(two_hosts, n_values=(1, 2))
    after = copy.deepcopy(before)
    after["simulation"]["duration"] = "100 ms"
    return before, after


def test_an_edited_scenario_under_its_old_name_is_a_new_sweep(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    before, after = edited_pair(two_hosts)
    atmlab.Sweep(before, replications=2).run(db, jobs=1)
    out = atmlab.Sweep(after, replications=1).run(db, jobs=1)
    assert (out.ran, out.skipped, out.runs) == (4, 0, 4)  # nothing of the old sweep counts as this one's
    with Store(db) as store:
        info = store.sweep_info()
    assert [(i.name, i.points, i.runs) for i in info] == [("voice_sweep", 4, 8), ("voice_sweep", 4, 4)]
    assert info[0].differs == "" and info[1].differs == "simulation.duration: 200 ms -> 100 ms"
    # By name: the latest sweep of that name; by id: either; never both at once.
    assert len(atmlab.results(db, sweep="voice_sweep")) == 4
    assert len(atmlab.results(db, sweep=info[0].sweep_id)) == 8
    assert len(atmlab.results(db, sweep=f"#{info[1].sweep_id}")) == 4
    every = atmlab.results(db)
    assert sorted(every.groupby("sweep_id").size().tolist()) == [4, 8]
    # Each Sweep object reads its own runs, whatever the database holds besides.
    assert atmlab.Sweep(before).summary(db)["runs"].tolist() == [2, 2, 2, 2]
    assert atmlab.Sweep(after).summary(db)["runs"].tolist() == [1, 1, 1, 1]
    # Resuming an unchanged sweep reuses its runs and makes no new sweep.
    again = atmlab.Sweep(before, replications=2).run(db, jobs=1)
    assert (again.ran, again.skipped) == (0, 8)
    with Store(db) as store:
        assert len(store.sweep_info()) == 2
        assert store.find_sweep("latest").sweep_id == info[0].sweep_id  # used last
    with pytest.raises(atmlab.UnknownSweep, match="no sweep named 'nope'.*voice_sweep"):
        atmlab.results(db, sweep="nope")
    with pytest.raises(KeyError, match="no sweep #99"):
        atmlab.results(db, sweep=99)


def test_results_and_report_show_two_sweeps_each_with_its_own_means(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    before, after = edited_pair(two_hosts)
    atmlab.Sweep(before, replications=2).run(db, jobs=1)
    atmlab.Sweep(after, replications=1).run(db, jobs=1)
    listed = cli("results", "--db", str(db), "--list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("voice_sweep") == 2 and "200 ms -> 100 ms" in listed.stdout
    latest = cli("results", "--db", str(db))
    assert latest.returncode == 0, latest.stderr
    assert "2 sweeps are named voice_sweep, each another scenario, never pooled" in " ".join(latest.stdout.split())
    assert "4 runs of sweep voice_sweep #2" in " ".join(latest.stdout.split())
    first = cli("results", "--db", str(db), "--sweep", "1", "--csv", str(tmp_path / "first.csv"))
    assert first.returncode == 0 and "wrote 8 runs" in first.stdout

    # The report: a section per sweep, each point's mean over its own runs only.
    page_dir = tmp_path / "report"
    rep = cli("report", "--db", str(db), "--out", str(page_dir), "--all", "--metric", "switch_cells_offered")
    assert rep.returncode == 0, rep.stderr
    page = (page_dir / "index.html").read_text()
    assert "voice_sweep #1" in page and "voice_sweep #2" in page
    sections = {m.group(1): m.group(2) for m in re.finditer(r"<h2>Sweep (.*?)</h2>(.*?)(?=<h2>|$)", page, re.S)}
    assert set(sections) == {"voice_sweep #1", "voice_sweep #2"}
    for sweep_id, reps in ((1, 2), (2, 1)):
        runs = atmlab.results(db, sweep=sweep_id)
        body = sections[f"voice_sweep #{sweep_id}"].split("<tbody>")[1]
        rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body)]
        assert len(rows) == 4
        for row in rows:  # n, delay, runs, the metric's mean +/- half-width
            assert row[2] == str(reps), "each point's runs are this sweep's own"
        # The mean shown is the mean of this sweep's runs at that point.
        means = runs.groupby("point", sort=True)["switch_cells_offered"].mean().tolist()
        shown = [float(r[3].split(" ")[0].replace(",", "")) for r in rows]
        assert shown == pytest.approx(means, rel=1e-3)


def test_a_schema_2_database_is_read_as_it_is_and_migrated_by_a_writer(tmp_path):
    db = tmp_path / "old.sqlite"
    shutil.copy(V2, db)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    # Written by the previous version: two scenarios stored under one name,
    # their runs at the same points (the mistake this schema version ends).
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "2"
        assert con.execute("SELECT COUNT(DISTINCT scenario_hash) FROM runs WHERE sweep = 'voice_sweep' "
                           "AND point = 0").fetchone()[0] == 2
    with Store(db) as store:  # a reader: sweeps derived in memory, the file untouched
        read = [(i.name, i.points, i.runs) for i in store.sweep_info()]
        runs_read = store.runs().drop(columns=["sweep_id"])
    assert read == [("voice_sweep", 4, 8), ("voice_sweep", 4, 4), ("other", 1, 1)]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    for sweep_id, n in ((1, 8), (2, 4)):
        runs = atmlab.results(db, sweep=sweep_id)
        assert len(runs) == n and runs.groupby("point").scenario_hash.nunique().max() == 1  # never pooled

    # A writer migrates; the unchanged sweep "other" is recognised and resumes.
    other = atmlab.Sweep(_other_scenario(db))
    out = other.run(db, jobs=1)
    assert (out.ran, out.skipped) == (0, 1)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert con.execute("SELECT COUNT(*), SUM(migrated) FROM sweeps").fetchone() == (3, 3)
    with Store(db) as store:
        assert [(i.name, i.points, i.runs) for i in store.sweep_info()] == [
            ("voice_sweep", 4, 8), ("voice_sweep", 4, 4), ("other", 1, 1)]
        assert store.runs().drop(columns=["sweep_id"]).equals(runs_read)


def _other_scenario(db: Path) -> dict:
    """The scenario of the old database's sweep "other", as a template
    again (the stored scenario plus its [params] and [sweep])."""
    with sqlite3.connect(db) as con:
        (text,) = con.execute("SELECT s.scenario FROM scenarios s JOIN runs r USING (scenario_hash) "
                              "WHERE r.sweep = 'other'").fetchone()
    import json

    sc = json.loads(text)
    sc["params"] = {"n": 1, "delay": "5 us"}
    sc["sweep"] = {"n": [3]}
    return sc


def test_a_sweep_with_one_bad_value_names_that_point_and_runs_nothing(tmp_path, two_hosts, cli):
    sc = voice_sweep(two_hosts, n_values=(1,))
    sc["sweep"] = {"delay": ["5 us", "5 parsecs", "1 ms", "-1 ms"]}
    path = tmp_path / "bad.toml"
    path.write_text(_toml(sc))
    for args in (["validate", str(path)], ["sweep", str(path), "--dry-run"],
                 ["sweep", str(path), "--db", str(tmp_path / "r.sqlite"), "-j", "1"]):
        p = cli(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        text = " ".join(p.stderr.split())
        assert "2 of 4 points of the sweep are invalid, so none was run" in text
        assert "links[0].delay (point 1, delay = '5 parsecs')" in text
        assert "links[0].delay (point 3, delay = '-1 ms')" in text
        assert "point 0" not in text and "point 2" not in text
    assert not (tmp_path / "r.sqlite").exists()
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.Sweep(sc)
    assert [p.path for p in e.value.problems] == ["links[0].delay (point 1, delay = '5 parsecs')",
                                                  "links[0].delay (point 3, delay = '-1 ms')"]
    ok = cli("validate", str(path), "--set", 'sweep.delay=["5 us", "1 ms"]')
    assert ok.returncode == 0 and "every one of the sweep's 2 points is valid" in ok.stdout


def _toml(data: dict, prefix: str = "") -> str:
    """A small TOML writer for the tests' scenarios (tables, arrays of tables, scalars, lists)."""
    import json

    def value(v):
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        return json.dumps(v)

    lines, tables = [], []
    for k, v in data.items():
        if isinstance(v, dict):
            tables.append(f"[{prefix}{k}]\n" + "".join(f"{json.dumps(a)} = {value(b)}\n" for a, b in v.items()))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            tables += [f"[[{prefix}{k}]]\n" + "".join(f"{json.dumps(a)} = {value(b)}\n" for a, b in x.items())
                       for x in v]
        else:
            lines.append(f"{json.dumps(k)} = {value(v)}\n")
    return "".join(lines) + "\n".join(tables)
