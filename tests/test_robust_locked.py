"""A results database another process holds locked (issue 29, item 8):
after a short wait (store.BUSY_TIMEOUT_S), one error line that says it is
locked and, where Linux tells (/proc/locks), by which process; never a
silent minute."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import atmlab
from atmlab.store import BUSY_TIMEOUT_S

from conftest import TWO_HOSTS, atmlab_cli, voice_sweep

HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
con.execute("DELETE FROM metrics WHERE run_id = 1")
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture
def locked_db(tmp_path: Path):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(TWO_HOSTS, n_values=(1,))).run(db, jobs=1)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield db, holder.pid
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


@pytest.mark.parametrize("command", ["results", "sweep"])
def test_a_locked_database_is_one_line_naming_the_holder_within_seconds(locked_db, command, tmp_path):
    db, pid = locked_db
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(voice_sweep(TWO_HOSTS, n_values=(1, 2))))
    args = ["results", "--db", str(db)] if command == "results" else ["sweep", str(scenario), "-j", "1", "--db", str(db)]
    t0 = time.monotonic()
    p = atmlab_cli(*args)
    took = time.monotonic() - t0
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {db}: cannot ") and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"another process has held it locked for {BUSY_TIMEOUT_S:g} s (by process {pid}: " in line, line
    assert "wait for it to finish, or use another database (--db)" in line
    assert BUSY_TIMEOUT_S <= took < BUSY_TIMEOUT_S + 20, took
