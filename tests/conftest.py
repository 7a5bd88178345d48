"""Shared fixtures: small scenarios as dicts, and a CLI runner."""

from __future__ import annotations

import copy
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
    """Runs the `atmlab` command as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "atmlab.cli", *args],
        capture_output=True, text=True, cwd=cwd or ROOT, timeout=600,
    )


@pytest.fixture
def cli():
    return atmlab_cli
