"""Sweeps: storage, resume after SIGKILL, failures, CI targets, exports."""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import atmlab
from atmlab.store import Store

from conftest import stored_results, voice_sweep


def test_sweep_stores_every_run_and_resumes(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    s = atmlab.Sweep(voice_sweep(two_hosts), replications=2)
    assert len(s.points) == 6
    out = s.run(db, jobs=1)
    assert (out.ran, out.failed, out.skipped, out.runs) == (12, 0, 0, 12)
    again = s.run(db, jobs=1)
    assert (again.ran, again.skipped) == (0, 12)
    df = atmlab.results(db)
    assert {"run_id", "scenario_hash", "replication", "seed", "status", "n", "delay", "cell_hops"} <= set(df.columns)
    assert len(df) == 12 and (df.status == "ok").all()
    assert df.groupby(["scenario_hash", "seed", "replication"]).size().max() == 1
    # More replications later: only the new ones run.
    more = atmlab.Sweep(voice_sweep(two_hosts), replications=3).run(db, jobs=1)
    assert (more.ran, more.skipped) == (6, 12)


def test_results_of_the_latest_sweep_or_every_sweep(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    first = dict(voice_sweep(two_hosts, n_values=(1, 2)), name="first")  # 4 runs (2 n x 2 delays)
    second = dict(voice_sweep(two_hosts, n_values=(3,)), name="second")  # 2 runs
    atmlab.Sweep(first).run(db, jobs=1)
    atmlab.Sweep(second).run(db, jobs=1)
    every = atmlab.results(db)
    latest = atmlab.results(db, sweep="latest")
    assert len(every) == 6 and set(every.sweep) == {"first", "second"}
    assert len(latest) == 2 and set(latest.sweep) == {"second"}
    assert len(atmlab.results(db, sweep="first")) == 4


def test_provenance_falls_back_to_the_commit_the_core_was_built_from(monkeypatch):
    # Outside a git checkout (an installed wheel) the commit still comes
    # from the core, which captured it when it was compiled.
    from atmlab import sweep as sweep_mod

    monkeypatch.setattr(sweep_mod._core, "git_commit", lambda: "0123456789abcdef")
    monkeypatch.setattr(sweep_mod, "Path", lambda *_: Path("/nonexistent/a/b/c"))
    sweep_mod.provenance.cache_clear()
    try:
        out = sweep_mod.provenance()
    finally:
        sweep_mod.provenance.cache_clear()
    assert out["git_commit"] == "0123456789abcdef" and "git_dirty" not in out


def test_provenance_and_scenario_are_stored(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    s = atmlab.Sweep(voice_sweep(two_hosts, n_values=(2,)))
    s.run(db, jobs=1)
    df = atmlab.results(db)
    assert df.atmlab_version.iloc[0].startswith(atmlab.__version__)
    with Store(db) as store:
        sc = store.scenario(df.scenario_hash.iloc[0])
        assert len(sc["apps"]) == 2 and "sweep" not in sc
        assert store.result(int(df.run_id.iloc[0])).scenario == "voice_sweep"


def test_a_failed_run_is_recorded_and_does_not_stop_the_sweep(tmp_path, two_hosts, monkeypatch):
    import atmlab._core as core

    real, calls = core.run, {"n": 0}

    def flaky(js, seed, rep, *more):  # more: progress, pcap_dir, interrupt
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("injected failure")
        return real(js, seed, rep, *more)

    monkeypatch.setattr(core, "run", flaky)
    db = tmp_path / "r.sqlite"
    out = atmlab.Sweep(voice_sweep(two_hosts)).run(db, jobs=1)
    assert (out.ran, out.failed) == (6, 1)
    df = atmlab.results(db)
    failed = df[df.status == "failed"]
    assert len(failed) == 1 and "injected failure" in failed.error.iloc[0]
    # Re-running retries the failed run only.
    monkeypatch.undo()
    again = atmlab.Sweep(voice_sweep(two_hosts)).run(db, jobs=1)
    assert (again.ran, again.failed, again.skipped) == (1, 0, 5)
    assert (atmlab.results(db).status == "ok").all()


def test_ci_target_adds_replications_until_met(tmp_path, two_hosts):
    sc = voice_sweep(two_hosts, n_values=(1,))
    sc["links"][1]["loss"] = {"kind": "bernoulli", "clr": 0.05}
    db = tmp_path / "r.sqlite"
    s = atmlab.Sweep(sc, replications=2, ci_target=1.5, ci_metric="link_cells_lost", max_replications=40)
    s.run(db, jobs=1)
    summary = s.summary(db, metrics=["link_cells_lost"])
    assert (summary.link_cells_lost_ci95 <= 1.5).all() or (summary.runs == 40).any()
    assert summary.runs.min() > 2, "the target needs more than the first two replications"


def test_local_pool_gives_the_same_results_as_in_process(tmp_path, two_hosts):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts), replications=2).run(a, jobs=1)
    atmlab.Sweep(voice_sweep(two_hosts), replications=2).run(b, jobs=2)
    assert stored_results(a) == stored_results(b)


def test_exports(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts)).run(db, jobs=1)
    p = cli("results", "--db", str(db), "--csv", str(tmp_path / "r.csv"), "--parquet", str(tmp_path / "r.parquet"))
    assert p.returncode == 0, p.stderr
    csv = pd.read_csv(tmp_path / "r.csv")
    pq = pd.read_parquet(tmp_path / "r.parquet")
    assert len(csv) == len(pq) == 6
    # A swept quantity's header says its unit; its values are numbers in that unit.
    assert {"run_id", "scenario_hash", "replication", "seed", "status", "n", "delay (s)"} <= set(csv.columns)
    assert set(csv["delay (s)"]) == {5e-6, 1e-3} and set(pq["delay (s)"]) == {5e-6, 1e-3}
    assert list(csv["point"]) == sorted(csv["point"])
    p = cli("results", "--db", str(tmp_path / "missing.sqlite"))
    assert p.returncode == 2 and "no results database" in p.stderr


SLOW_SWEEP = """
name = "slow"
[params]
buffer = 100
[sweep]
buffer = {{ start = 100, step = 100, count = 12 }}
[simulation]
duration = "300 ms"
[[switches]]
name = "sw"
port = {{ buffer = "{{buffer}}" }}
[[hosts]]
repeat = 3
name = "h{{i}}"
[[hosts]]
name = "sink"
[[links]]
repeat = 3
between = ["h{{i}}", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "sink"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
repeat = 3
name = "v{{i}}"
path = ["h{{i}}", "sw", "sink"]
[[apps]]
repeat = 3
kind = "tcp_bulk"
name = "t{{i}}"
vc = "v{{i}}"
"""


def count_ok(db) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_sigkill_partway_then_rerun_completes_every_point_once(tmp_path, root):
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SLOW_SWEEP.format())
    db = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "atmlab.cli", "sweep", str(scenario), "--replications", "2", "--jobs", "1",
           "--db", str(db)]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while count_ok(db) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = count_ok(db)
    assert 3 <= partial < 24, "killed partway"
    # Readable after the kill, every stored run complete with its metrics.
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        orphans = con.execute("SELECT count(*) FROM runs r WHERE status = 'ok' AND NOT EXISTS "
                              "(SELECT 1 FROM metrics m WHERE m.run_id = r.run_id)").fetchone()[0]
        assert orphans == 0
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"{24 - partial} runs done" in p.stdout and f"{partial} already in" in p.stdout
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT scenario_hash, seed, replication, status FROM runs").fetchall()
    assert len(rows) == 24 and len({r[:3] for r in rows}) == 24
    assert {r[3] for r in rows} == {"ok"}


def test_cli_sweep_dry_run_lists_points(cli):
    p = cli("sweep", "scenarios/examples/sweep_buffer.toml", "--dry-run")
    assert p.returncode == 0, p.stderr
    assert "8 points" in p.stdout and "3000 cells" in p.stdout


def test_cli_sweep_rejects_bad_options(cli, tmp_path):
    p = cli("sweep", "scenarios/examples/sweep_buffer.toml", "--replications", "0")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[simulation]\nduration = "1 s"\n[params]\nx = 1\n[sweep]\ny = [1, 2]\n')
    p = cli("sweep", str(bad), "--db", str(tmp_path / "x.sqlite"))
    assert p.returncode == 2 and "sweep.y" in p.stderr and "Traceback" not in p.stderr


def test_sweep_json_from_results_is_consistent(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts, n_values=(1,))).run(db, jobs=1)
    df = atmlab.results(db, all_metrics=True)
    with Store(db) as store:
        res = store.result(int(df.run_id.iloc[0]))
    assert df["udp_flows.voice0.sent"].iloc[0] == res.udp_flows.loc["voice0", "sent"]
    assert df["hosts.b.frames_received"].iloc[0] == res.hosts.loc["b", "frames_received"] > 0
    assert json.loads(res.to_json())["seed"] == res.seed == 1


def test_a_swept_parameter_may_not_shadow_a_results_column(two_hosts):
    sc = voice_sweep(two_hosts)
    sc["params"]["seed"] = 1
    sc["sweep"] = {"seed": [1, 2]}
    with pytest.raises(atmlab.ScenarioError, match=r"sweep\.seed.*column of the results table"):
        atmlab.Sweep(sc)


def test_results_come_in_point_order_whatever_order_the_runs_finished(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    sweep = atmlab.Sweep(voice_sweep(two_hosts), replications=2)
    sweep.run(db, jobs=2)
    runs = sweep.results(db)
    order = {p.scenario_hash: i for i, p in enumerate(sweep.points)}
    assert list(zip(runs.scenario_hash.map(order), runs.replication)) == sorted(
        (i, r) for i in range(len(sweep.points)) for r in range(2))


def test_a_list_valued_sweep_summarizes_and_exports(tmp_path, cli, root):
    # examples/voice_cbr.toml sweeps drop_policy.categories, a list: its
    # values group, print and export as their JSON text (a list is no table
    # key). The run is shortened; the point is the table, not the network.
    import tomllib

    sc = tomllib.loads((root / "scenarios/examples/voice_cbr.toml").read_text())
    sc["simulation"]["duration"] = "50 ms"
    db = tmp_path / "r.sqlite"
    s = atmlab.Sweep(sc)
    s.run(db, jobs=1)
    key = "switches[*].port.drop_policy.categories"
    assert list(s.summary(db)[key]) == ['["ubr"]', '["cbr", "ubr"]']
    out = cli("results", "--db", str(db), "--csv", str(tmp_path / "r.csv"))
    assert out.returncode == 0, out.stderr
    assert list(pd.read_csv(tmp_path / "r.csv")[key]) == ['["ubr"]', '["cbr", "ubr"]']


class _Recording:
    """Runs in this process, noting the order it was given the runs in;
    with `stop_after`, Ctrl-C after that many (as from the keyboard)."""

    name = "recording"

    def __init__(self, stop_after: int | None = None) -> None:
        self.order: list[str] = []
        self.stop_after = stop_after

    def map(self, specs):
        from atmlab.executors import execute

        for spec in specs:
            if self.stop_after is not None and len(self.order) == self.stop_after:
                raise KeyboardInterrupt
            self.order.append(spec.sweep)
            yield execute(spec)

    def close(self) -> None:
        pass


def test_sweeps_run_together_longest_first_resume_and_store_what_each_sweep_would(tmp_path, two_hosts):
    from atmlab.sweep import run_together

    def plan():
        short = dict(voice_sweep(two_hosts, n_values=(1, 2)), name="short")  # 4 runs of 200 ms
        long = dict(voice_sweep(two_hosts, n_values=(3,)), name="long")  # 2 runs of 300 ms
        long["simulation"] = dict(long["simulation"], duration="300 ms")
        return [("short", atmlab.Sweep(short)), ("long", atmlab.Sweep(long))]

    # One after the other, as each sweep alone would run them.
    alone = tmp_path / "alone.sqlite"
    for _, sweep in plan():
        sweep.run(alone, jobs=1)

    db = tmp_path / "r.sqlite"
    stopped = _Recording(stop_after=3)
    out = run_together(plan(), db, stopped)
    assert out.interrupted and out.ran == 3
    # The longest first, then the rest in plan order.
    assert stopped.order == ["long", "long", "short"]
    seen = []
    rest = run_together(plan(), db, _Recording(), lambda label, p: seen.append((label, p.done, p.total, p.skipped)))
    assert (rest.ran, rest.skipped, rest.interrupted, rest.failures) == (3, 3, False, [])
    assert seen == [("short", 0, 3, 3), ("short", 1, 3, 3), ("short", 2, 3, 3), ("short", 3, 3, 3)]
    assert run_together(plan(), db, _Recording()).ran == 0
    # The same runs and results as each sweep run alone, each under its sweep.
    assert stored_results(db) == stored_results(alone)
    assert {s: len(atmlab.results(db, sweep=s)) for s in ("short", "long")} == {"short": 4, "long": 2}
    # A run two grids share runs once and counts for both.
    twice = [(label, atmlab.Sweep(dict(voice_sweep(two_hosts, n_values=(1,)), name="twice"))) for label in "ab"]
    counts = []
    out = run_together(twice, tmp_path / "twice.sqlite", _Recording(), lambda label, p: counts.append((p.done, p.total)))
    assert out.ran == 2 and counts == [(0, 4), (2, 4), (4, 4)]


def test_run_together_refuses_a_sweep_that_adds_replications(tmp_path, two_hosts):
    from atmlab.sweep import run_together

    s = atmlab.Sweep(voice_sweep(two_hosts), replications=2, ci_target=0.1)
    with pytest.raises(atmlab.ArgumentError, match="ci_target"):
        run_together([("s", s)], tmp_path / "r.sqlite", _Recording())
