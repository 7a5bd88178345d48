"""A failure inside one run never stops a sweep, and a sweep's workers never
outlive it (issue: hardening).

* A run that panics inside the core (the ``ATMLAB_TEST_PANIC`` hook: a run
  whose scenario JSON holds the variable's text panics in ``_core.run``) is
  stored as failed with the core's message, the other points as ok, on
  every executor: in process, a local pool, a Dask LocalCluster.
* :func:`atmlab.executors.execute` turns every exception but
  KeyboardInterrupt and SystemExit into a picklable failed record.
* A worker process killed under a run (as by the out-of-memory killer)
  costs that run at most: the pool is rebuilt and the sweep goes on.
* SIGKILL of ``atmlab sweep`` takes its worker processes and the
  multiprocessing resource tracker with it.
"""

from __future__ import annotations

import copy
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

import atmlab
import atmlab._core as core
from atmlab.executors import WORKER_DIED, LocalPool, execute
from atmlab.records import RunRecord, RunSpec

from conftest import ROOT

MARKER = "atmlab-robust-sweep-marker"

MARKED_SWEEP = """
name = "marked"
description = "{{d}}"
[params]
d = "calm"
[sweep]
d = ["calm", "the {marker} point", "quiet"]
[simulation]
duration = "100 ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
port = {{ buffer = "1000 cells" }}
[[links]]
between = ["a", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "b"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v"
path = ["a", "sw", "b"]
[[apps]]
kind = "udp_cbr"
name = "voice"
vc = "v"
payload = "80 bytes"
interval = "10 ms"
""".format(marker=MARKER)


def marked_sweep(two_hosts: dict[str, Any]) -> dict[str, Any]:
    """MARKED_SWEEP as a dict: three points that differ in their description
    only; the second holds MARKER."""
    sc = copy.deepcopy(two_hosts)
    sc["name"] = "marked"
    sc["simulation"]["duration"] = "100 ms"
    sc["params"] = {"d": "calm"}
    sc["description"] = "{d}"
    sc["sweep"] = {"d": ["calm", f"the {MARKER} point", "quiet"]}
    return sc


def stored(db: Path) -> dict[tuple[str, int], tuple[str, str | None]]:
    """Status and error of every stored run, by (description, replication)."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT json_extract(params, '$.d'), replication, status, error FROM runs").fetchall()
    return {(d, r): (status, error) for d, r, status, error in rows}


def assert_only_the_marked_point_failed(db: Path, panicked: bool = True) -> None:
    runs = stored(db)
    assert {d for d, _ in runs} == {"calm", f"the {MARKER} point", "quiet"}
    for (d, _), (status, error) in runs.items():
        if MARKER not in d:
            assert (status, error) == ("ok", None)
            continue
        assert status == "failed" and error is not None and "\n" not in error
        if panicked:
            assert "internal error" in error and "test panic requested by ATMLAB_TEST_PANIC" in error
            assert ".rs:" in error, "the core's message names the place of the panic"


@pytest.mark.parametrize("executor", [["--jobs", "1"], ["--jobs", "2"], ["--jobs", "2", "--dask", "local"]],
                         ids=["in-process", "local-pool", "dask-local"])
def test_a_panicking_run_is_stored_as_failed_and_the_sweep_goes_on(tmp_path, executor):
    scenario, db = tmp_path / "marked.toml", tmp_path / "r.sqlite"
    scenario.write_text(MARKED_SWEEP)
    p = subprocess.run([sys.executable, "-m", "atmlab.cli", "sweep", str(scenario), "--db", str(db), *executor],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "ATMLAB_TEST_PANIC": MARKER})
    assert p.returncode == 1, (p.stdout, p.stderr)  # a sweep with a failed run
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    assert "3 runs done (1 failed)" in p.stdout
    assert "test panic requested by ATMLAB_TEST_PANIC" in p.stderr  # the failure is reported as it happens
    assert_only_the_marked_point_failed(db)


def test_the_api_reports_the_panicking_run_among_the_failures(tmp_path, two_hosts, monkeypatch):
    monkeypatch.setenv("ATMLAB_TEST_PANIC", MARKER)
    db = tmp_path / "r.sqlite"
    out = atmlab.Sweep(marked_sweep(two_hosts), replications=2).run(db, jobs=2)
    assert (out.ran, out.failed, out.runs) == (6, 2, 4)
    assert {rec.spec.params["d"] for rec in out.failures} == {f"the {MARKER} point"}
    assert_only_the_marked_point_failed(db)
    # Without the hook, the same command completes what failed and nothing else.
    monkeypatch.delenv("ATMLAB_TEST_PANIC")
    again = atmlab.Sweep(marked_sweep(two_hosts), replications=2).run(db, jobs=2)
    assert (again.ran, again.failed, again.skipped) == (2, 0, 4)


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


class NotAnException(BaseException):
    """Like pyo3's PanicException: a BaseException, not an Exception."""


@pytest.mark.parametrize("error, says", [
    (RuntimeError("first line\nsecond line"), "RuntimeError: first line second line"),
    (NotAnException("escaped"), "NotAnException: escaped"),
    (MemoryError(), "MemoryError"),
    (Unprintable(), "Unprintable"),
    (core.CoreLimitError("the queue of sw->b grew past 10 cells"), "the queue of sw->b grew past 10 cells"),
    (core.CoreSimulationError("internal error (a bug in atmlab): boom at x.rs:1"), "internal error (a bug in atmlab)"),
    (core.CoreScenarioError("links[0].rate", "must be positive"), "links[0].rate: must be positive"),
], ids=["multi-line", "base-exception", "memory", "unprintable", "core-limit", "core-panic", "core-scenario"])
def test_execute_turns_every_failure_into_a_picklable_record(two_hosts, monkeypatch, error, says):
    def failing(*args: Any) -> str:
        raise error

    monkeypatch.setattr(core, "run", failing)
    spec = atmlab.Sweep(two_hosts).specs()[0]
    rec = execute(spec)
    assert rec.status == "failed" and rec.result_json is None
    assert rec.error is not None and rec.error.startswith(says) and "\n" not in rec.error
    back = pickle.loads(pickle.dumps(rec))
    assert (back.spec, back.status, back.error) == (spec, "failed", rec.error)


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_execute_lets_an_interrupt_through(two_hosts, monkeypatch, stop):
    def interrupted(*args: Any) -> str:
        raise stop()

    monkeypatch.setattr(core, "run", interrupted)
    with pytest.raises(stop):
        execute(atmlab.Sweep(two_hosts).specs()[0])


def die_under_marked_runs(spec: RunSpec) -> RunRecord:
    """A worker's run function for the tests below: a run whose scenario
    holds MARKER kills its own worker process, as the out-of-memory killer
    would. With ATMLAB_TEST_KILL_ONCE naming a file, only the first time
    (the file records that it happened)."""
    once = os.environ.get("ATMLAB_TEST_KILL_ONCE")
    if MARKER in spec.scenario_json and not (once and os.path.exists(once)):
        if once:
            Path(once).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return execute(spec)


def records_by_key(specs: list[RunSpec]) -> dict[tuple[str, int, int], RunRecord]:
    pool = LocalPool(2, run=die_under_marked_runs)
    try:
        records = list(pool.map(specs))
    finally:
        pool.close()
    assert sorted(r.spec.key for r in records) == sorted(s.key for s in specs), "every run exactly once"
    return {r.spec.key: r for r in records}


def test_a_run_that_kills_its_worker_is_failed_and_the_pool_goes_on(two_hosts):
    specs = atmlab.Sweep(marked_sweep(two_hosts), replications=2).specs()
    records = records_by_key(specs)
    for spec in specs:
        rec = records[spec.key]
        if MARKER in spec.scenario_json:
            assert (rec.status, rec.error) == ("failed", WORKER_DIED)
        else:
            assert rec.status == "ok", rec.error


def test_a_worker_killed_once_costs_no_run(two_hosts, tmp_path, monkeypatch):
    monkeypatch.setenv("ATMLAB_TEST_KILL_ONCE", str(tmp_path / "killed"))
    specs = atmlab.Sweep(marked_sweep(two_hosts), replications=2).specs()
    records = records_by_key(specs)
    assert (tmp_path / "killed").exists(), "a worker was killed"
    assert {r.status for r in records.values()} == {"ok"}, [r.error for r in records.values()]


def sleep_under_marked_runs(spec: RunSpec) -> RunRecord:
    """A worker's run function: a run whose scenario holds MARKER takes a minute."""
    if MARKER in spec.scenario_json:
        time.sleep(60)
    return execute(spec)


def test_a_pool_closed_early_kills_the_runs_in_flight(two_hosts):
    """A sweep that stops early (a full disk) does not wait for runs whose
    records it can no longer store."""
    specs = atmlab.Sweep(marked_sweep(two_hosts)).specs()
    pool = LocalPool(2, run=sleep_under_marked_runs)
    records = pool.map(specs)
    assert MARKER not in next(records).spec.scenario_json
    started = time.monotonic()
    pool.close()
    assert time.monotonic() - started < 20
    records.close()


# ------------------------------------------------------------ parent death

LONG_SWEEP = """
name = "long"
[params]
buffer = 100
[sweep]
buffer = [100, 200, 300, 400]
[simulation]
duration = "600 s"
[[switches]]
name = "sw"
port = { buffer = "{buffer}" }
[[hosts]]
repeat = 3
name = "h{i}"
[[hosts]]
name = "sink"
[[links]]
repeat = 3
between = ["h{i}", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "sink"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
repeat = 3
name = "v{i}"
path = ["h{i}", "sw", "sink"]
[[apps]]
repeat = 3
kind = "tcp_bulk"
name = "t{i}"
vc = "v{i}"
"""


def session(sid: int) -> list[tuple[int, float, str]]:
    """Every live process of session `sid`, from /proc: (pid, CPU seconds,
    command line). A zombie is dead: it only waits to be reaped."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        state, sess, utime, stime = fields[0], int(fields[3]), int(fields[11]), int(fields[12])
        if sess == sid and state not in ("Z", "X"):
            found.append((int(entry), (utime + stime) / os.sysconf("SC_CLK_TCK"), cmdline.strip()))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
@pytest.mark.parametrize("executor", [["--jobs", "2"], ["--jobs", "2", "--dask", "local"]],
                         ids=["local-pool", "dask-local"])
def test_workers_die_with_a_killed_sweep(tmp_path, executor):
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG_SWEEP)
    cmd = [sys.executable, "-m", "atmlab.cli", "sweep", str(scenario), "--db", str(tmp_path / "r.sqlite"), *executor]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # Wait until two workers are simulating (they have used CPU time beyond starting up).
        deadline = time.monotonic() + 120
        while True:
            workers = [p for p in session(proc.pid) if "spawn_main" in p[2]]
            if sum(cpu >= 3.0 for _, cpu, _ in workers) >= 2:
                break
            assert proc.poll() is None and time.monotonic() < deadline, f"no busy workers: {workers}"
            time.sleep(0.2)
        before = session(proc.pid)
        assert any("resource_tracker" in cmd for _, _, cmd in before), before
        os.kill(proc.pid, signal.SIGKILL)  # the sweep alone
        proc.wait()
        deadline = time.monotonic() + 8
        while (left := session(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], f"still alive after the sweep was killed: {left}"
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
