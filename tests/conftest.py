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


def check_alternatives(study: Any, page: str, most: int = 6) -> None:
    """The alternatives of a study's open choices (``--open-choices``): at
    most `most`, each naming a choice of its page's "Open choices" table,
    each set on every grid's scenario of the full and the quick reproduction
    as the kit sets it (every point built and checked by the core, nothing
    run), and each changing some grid's scenarios."""
    from atmlab.reproduce.kit import Options, _with_alternative, sweep_of

    text = (ROOT / "docs" / "reproductions" / page).read_text()
    section = text.split("## Open choices", 1)[1].split("\n## ", 1)[0]
    alternatives = list(study.alternatives())
    assert 0 < len(alternatives) <= most
    options = Options(out=Path("unused"), db=Path("unused.sqlite"))
    for alt in alternatives:
        assert f"| {alt.choice} |" in section, f"{alt.choice} is not a choice of {page}"
        changed = False
        for quick in (False, True):
            for grid in study.grids(quick):
                base = {p.scenario_hash for p in sweep_of(grid, options).points}
                under = {p.scenario_hash for p in sweep_of(_with_alternative(grid, alt), options).points}
                changed |= under != base
        assert changed, f"{alt.choice} ({alt.name}) changes no scenario"
    assert "--open-choices" in section, f"{page}'s Open choices do not say what --open-choices runs"
