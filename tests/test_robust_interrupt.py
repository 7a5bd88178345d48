"""Ctrl-C during a run in this process (issue 29, item 8): `atmlab run`
and `atmlab sweep -j 1` stop within a second (the core lets Python's
signal handlers run every few tens of milliseconds of wall time), a sweep
keeps every run that finished before the interrupt and records none as
failed, and the checks change no result."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

import atmlab
from atmlab import _core, executors
from atmlab.executors import deferred_interrupt

from conftest import ROOT

LONG_LAN = (ROOT / "scenarios" / "nsource_lan.toml").read_text().replace('duration = "10 s"', 'duration = "1000 s"')


@pytest.fixture(autouse=True)
def ctrl_c_handled():
    """Ctrl-C as an interactive shell leaves it, whoever started pytest. A
    shell without job control starts a background command with SIGINT
    ignored, and Python then installs no handler: a signal sent to this
    process, or to an `atmlab` started from it, would do nothing. With a
    handler here, the children start with the default action, as from a
    terminal."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_after(seconds: float, *args: str, ready: Callable[[], bool] = lambda: True
                    ) -> tuple[subprocess.CompletedProcess[str], float]:
    """`atmlab ARGS`, sent SIGINT `seconds` after `ready()` says so: the
    finished process and how long it took to end after the signal."""
    p = subprocess.Popen([sys.executable, "-m", "atmlab.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "120"})
    deadline = time.monotonic() + 120
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(seconds)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()  # one that did not stop: killed and reaped, not left running
        p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), time.monotonic() - t0


def test_ctrl_c_stops_atmlab_run_within_a_second(tmp_path):
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG_LAN)  # some minutes of wall time
    p, took = interrupt_after(2, "run", str(scenario))
    assert took < 1.0, f"{took:.2f} s after SIGINT"
    assert (p.returncode, p.stderr, p.stdout) == (130, "interrupted\n", "")


def test_ctrl_c_stops_the_api_run_with_keyboard_interrupt():
    """Python's own handler, run by the core between steps, raises."""
    sc = atmlab.load("nsource_lan")
    calls = []

    def progress(fraction: float) -> None:
        calls.append(fraction)
        if len(calls) == 3:
            signal.raise_signal(signal.SIGINT)  # noted by Python; its handler runs at the core's next check

    with pytest.raises(KeyboardInterrupt):
        _core.run(sc.to_json(), None, 0, progress, None, None)
    assert calls == [0.01, 0.02, 0.03]


def test_a_sweep_keeps_the_runs_finished_before_ctrl_c_and_records_no_failure(tmp_path):
    """Three points: the first ends in moments, the second runs for
    minutes and is interrupted a second into it."""
    scenario, db = tmp_path / "sweep.toml", tmp_path / "r.sqlite"
    scenario.write_text(LONG_LAN.replace('duration = "1000 s"', 'duration = "{duration}"')
                        + '\n[params]\nduration = "100 ms"\n[sweep]\nduration = ["100 ms", "1000 s", "1001 s"]\n')

    def first_stored() -> bool:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
                n = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            con.close()
            return n > 0
        except sqlite3.Error:
            return False

    p, took = interrupt_after(1, "sweep", str(scenario), "-j", "1", "--db", str(db), ready=first_stored)
    assert took < 1.0, f"{took:.2f} s after SIGINT"
    assert p.returncode == 130, p.stderr
    assert "interrupted: every finished run is saved" in p.stderr and "Traceback" not in p.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT point, status FROM runs").fetchall()
    con.close()
    assert rows == [(0, "ok")]


def test_a_run_that_finished_is_stored_though_ctrl_c_comes_before_its_record(tmp_path, monkeypatch, two_hosts):
    """The signal lands after the core returned the result, before the
    sweep stored it (where Python's own handler would throw it away): the
    run is stored, and the next does not start."""
    real = executors.execute
    ran = []

    def execute(spec, interrupt=None):
        rec = real(spec, interrupt)
        ran.append(spec.point)
        signal.raise_signal(signal.SIGINT)  # handled here, right after the run
        return rec

    monkeypatch.setattr(executors, "execute", execute)
    sc = {**two_hosts, "params": {"d": "1 ms"}, "sweep": {"d": ["1 ms", "2 ms", "3 ms"]}}
    sc["simulation"] = {"duration": "{d}"}
    out = atmlab.Sweep(sc).run(tmp_path / "r.sqlite", jobs=1)
    assert out.interrupted and (out.ran, out.failed, out.runs) == (1, 0, 1)
    assert ran == [0]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_raises_at_once():
    with pytest.raises(KeyboardInterrupt), deferred_interrupt() as interrupted:
        signal.raise_signal(signal.SIGINT)
        assert interrupted()
        signal.raise_signal(signal.SIGINT)
        pytest.fail("not reached")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("scenario", ["nsource_lan", "tcp-abr/wan.toml"])
def test_the_checks_change_nothing_in_a_run(scenario):
    """Bit for bit, events included, whether the core asks `interrupt` or
    not; with progress too. Where the steps between checks end changes
    nothing either (`advance_events`: the Rust test
    test_advancing_a_few_events_at_a_time_gives_the_same_run_event_for_event)."""
    path = scenario if "/" not in scenario else ROOT / "python" / "atmlab" / "scenarios" / scenario
    sc = atmlab.load(path)
    data = {**sc.data, "simulation": {**sc.data["simulation"], "duration": "300 ms"}}
    text = json.dumps(data, sort_keys=True)
    asked = []
    plain = _core.run(text)
    checked = _core.run(text, None, 0, None, None, lambda: asked.append(1) or False)
    assert checked == plain and asked
    # Steps of simulated time (progress) end the stretches ABR sources send ahead: the results are the
    # same, the count of events may differ (as it did before the checks).
    progress = json.loads(_core.run(text, None, 0, lambda f: None))
    checked = json.loads(_core.run(text, None, 0, lambda f: None, None, lambda: asked.append(1) or False))
    assert checked == progress and len(asked) >= 100  # at every percent, and between
    plain_result = json.loads(plain)
    assert {**progress, "events": 0} == {**plain_result, "events": 0}
