"""The Python front in a notebook: time series as DataFrames, HTML views of
results and sweeps, the version with its commit."""

from __future__ import annotations

import copy
import math
import re
import shutil
import subprocess

import pytest

import atmlab
from atmlab import _core, about

from conftest import voice_sweep


@pytest.fixture
def probed(two_hosts):
    sc = copy.deepcopy(two_hosts)
    sc["name"] = "<probed & co>"
    sc["simulation"]["duration"] = "100 ms"
    sc["probes"] = [
        {"kind": "goodput", "app": "voice", "interval": "20 ms"},
        {"kind": "queue", "port": ["sw", "b"], "interval": "10 ms", "name": "q"},
    ]
    return atmlab.run(sc)


def test_series_long_form(probed):
    df = probed.series
    assert list(df.columns) == ["name", "kind", "target", "unit", "t_s", "value"]
    raw = {s["name"]: s for s in probed.raw["series"]}
    assert set(df.name) == {"goodput:voice", "q"} == set(raw)
    for name, s in raw.items():
        part = df[df.name == name]
        assert list(part.t_s) == s["t_s"] and list(part.value) == s["values"]
        assert set(part.unit) == {s["unit"]} and set(part.target) == {s["target"]}
    # samples at k x interval before the end: 0, 10, ..., 90 ms and 0, 20, ..., 80 ms
    assert len(df[df.name == "q"]) == 10 and len(df[df.name == "goodput:voice"]) == 5


def test_series_wide_aligns_times(probed):
    df = probed.series_wide()
    assert df.index.name == "t_s" and list(df.columns) == ["goodput:voice", "q"]
    assert df.index.is_monotonic_increasing
    assert math.isnan(df.loc[0.01, "goodput:voice"]) and not math.isnan(df.loc[0.02, "goodput:voice"])
    assert df["q"].notna().all()
    assert df.attrs["units"] == {"goodput:voice": "bit/s", "q": "cells"}
    only = probed.series_wide(["q"])
    assert list(only.columns) == ["q"] and len(only) == 10
    with pytest.raises(KeyError, match="no time series 'cwnd'.*goodput:voice, q"):
        probed.series_wide(["cwnd"])


def test_series_without_probes_are_empty(two_hosts):
    r = atmlab.run(two_hosts)
    assert r.series.empty and list(r.series.columns) == ["name", "kind", "target", "unit", "t_s", "value"]
    assert r.series_wide().empty


def test_result_html_shows_the_summary_escaped(probed):
    html = probed._repr_html_()
    assert "&lt;probed &amp; co&gt;" in html and "<probed" not in html
    for title in ("UDP flows", "Switch ports", "Time series"):
        assert f">{title}" in html
    assert "voice" in html and "kbit/s" in html and "<table>" in html
    assert "<script" not in html


def test_sweep_and_outcome_html(two_hosts, tmp_path):
    s = atmlab.Sweep(voice_sweep(two_hosts, (1, 2)), replications=2)
    html = s._repr_html_()
    assert "voice_sweep" in html and "4 points x 2 replications = 8 runs" in html
    assert html.count("<tr>") == 1 + 4  # the header and a row per point
    for p in s.points:
        assert p.scenario_hash in html
    outcome = s.run(tmp_path / "r.sqlite", jobs=1)
    html = outcome._repr_html_()
    assert re.search(r"ran now</th><td[^>]*>8<", html) and "failed" in html


def test_version_names_the_commit(cli, root):
    p = cli("--version")
    assert p.returncode == 0, p.stderr
    m = re.fullmatch(r"atmlab (\S+) \(core (\S+), (release|debug) build(?: with profile (llvm\d+\.profdata))?, "
                     r"commit ([0-9a-f]{12})\)\n", p.stdout)
    assert m, p.stdout
    assert m.group(1) == atmlab.__version__ and m.group(2) == _core.core_version()
    assert m.group(4) == _core.core_profile()  # the profile the build used, or none (pgo/)
    commit = _core.git_commit()
    assert commit is not None and commit.startswith(m.group(5)) and len(commit) == 40
    if shutil.which("git") and (root / ".git").exists():
        # A commit of this repository (the one the extension was built from).
        kind = subprocess.run(["git", "cat-file", "-t", commit], cwd=root, capture_output=True, text=True)
        assert kind.stdout.strip() == "commit", kind.stderr


def test_version_without_a_commit(monkeypatch):
    monkeypatch.setattr(_core, "git_commit", lambda: None)
    assert about.text().endswith(", commit unknown)")
    assert about.commit() is None


def test_version_with_and_without_a_profile(monkeypatch):
    monkeypatch.setattr(_core, "core_profile", lambda: "llvm22.profdata")
    build = f"core {_core.core_version()}, {_core.core_build()} build"
    assert f"{build} with profile llvm22.profdata, commit" in about.text()
    monkeypatch.setattr(_core, "core_profile", lambda: None)
    assert f"{build}, commit" in about.text()

