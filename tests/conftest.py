"""Shared fixtures: small scenarios as dicts, and a CLI runner."""

from __future__ import annotations

import copy
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

TWO_HOSTS: dict[str, Any] = {
    "name": "two_hosts",
    "simulation": {"duration": "1 s"},
    "hosts": [{"name": "a"}, {"name": "b"}],
    "switches": [{"name": "sw", "port": {"buffer": "1000 cells"}}],
    "links": [
        {"between": ["a", "sw"], "rate": "155.52 Mbit/s", "delay": "5 us"},
        {"between": ["sw", "b"], "rate": "155.52 Mbit/s", "delay": "5 us"},
    ],
    "vcs": [{"name": "v", "path": ["a", "sw", "b"]}],
    "apps": [{"kind": "udp_cbr", "name": "voice", "vc": "v", "payload": "80 bytes", "interval": "10 ms"}],
}


@pytest.fixture
def two_hosts() -> dict[str, Any]:
    """A voice stream (80 bytes every 10 ms) over one switch, for 1 s."""
    return copy.deepcopy(TWO_HOSTS)


def atmlab_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the `atmlab` command as a user would, its output in a pipe's
    120 columns whatever COLUMNS the tests run under."""
    return subprocess.run(
        [sys.executable, "-m", "atmlab.cli", *args],
        capture_output=True, text=True, cwd=cwd or ROOT, timeout=600, env={**os.environ, "COLUMNS": "120"},
    )


@pytest.fixture
def cli():
    return atmlab_cli


@pytest.fixture
def root() -> Path:
    """The repository root."""
    return ROOT


def voice_sweep(two_hosts: dict[str, Any], n_values: tuple[int, ...] = (1, 2, 3)) -> dict[str, Any]:
    """A small sweep: bundles of 1..3 voice streams x two link delays."""
    sc = copy.deepcopy(two_hosts)
    sc["name"] = "voice_sweep"
    sc["simulation"]["duration"] = "200 ms"
    sc["params"] = {"n": 1, "delay": "5 us"}
    sc["links"][0]["delay"] = "{delay}"
    sc["apps"][0].update(repeat="{n}", name="voice{i}", start_jitter="10 ms")
    sc["sweep"] = {"n": list(n_values), "delay": ["5 us", "1 ms"]}
    return sc


def stored_results(db: Path) -> dict[tuple[str, int, int], tuple[str, str]]:
    """Status and result JSON of every stored run, by run key."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT scenario_hash, seed, replication, status, result FROM runs").fetchall()
    return {(h, s, r): (st, res) for h, s, r, st, res in rows}
