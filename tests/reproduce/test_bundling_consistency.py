"""tools/bundling_consistency.py: what study 000's published tables allow
(docs/reproductions/bundling.md, "What the published tables allow"). The
figures are properties of the published values, so they are pinned here:
a change in the reference data or in the tool's arithmetic shows."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest


@pytest.fixture
def tool(root):
    spec = importlib.util.spec_from_file_location("bundling_consistency", root / "tools" / "bundling_consistency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_twice_measured_tcp_pairs_disagree_where_the_study_measured_differently(tool):
    rows = tool.twice_measured()
    tcp = [r for r in rows if r["quantity"] == tool.TCP]
    udp = [r for r in rows if r["quantity"] == tool.UDP]
    assert len(tcp) == len(udp) == 16  # L in 4, 8, 10, 20 x W in 8, 16, 32, 50
    assert sum(r["agree"] for r in tcp) == 10
    assert all(r["agree"] for r in udp)
    # the widest gap: L 4 KB, W 32 KB, 158.55 (Table 5) against 65.17 (Table 17)
    worst = next(r for r in tcp if (r["L"], r["W"]) == (4, 32))
    assert not worst["agree"] and "158.55" in worst["first"] and "65.17" in worst["second"]


def test_over_capacity_counts_the_cells_of_the_published_rates(tool):
    rows = tool.over_capacity(0.05)
    a = [r for r in rows if r["experiment"] == "A"]
    b = [r for r in rows if r["experiment"] == "B"]
    assert (len(a), len(b)) == (128, 112)
    assert sum(r["over"] for r in a) == 44 and not any(r["over"] for r in b)
    # 1 TCP + 1 UDP, L 8, W 50: the adapter's fluid share, about full load
    one = next(r for r in a if (r["n_udp"], r["L"], r["W"]) == (1, 8, 50))
    assert one["load"] == pytest.approx(1.0, abs=0.02)
    # with no margin more rows are over, with a wide one none
    assert sum(r["over"] for r in tool.over_capacity(0.0)) > 44
    assert not any(r["over"] for r in tool.over_capacity(0.4))


def test_the_command_prints_both_checks_and_refuses_a_bad_margin(root):
    cmd = [sys.executable, str(root / "tools" / "bundling_consistency.py")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "10 of 16 pairs agree" in p.stdout and "44 of 128 configurations" in p.stdout
    bad = subprocess.run([*cmd, "--margin", "2"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--margin" in bad.stderr


def test_the_comparison_notes_the_values_out_of_reach():
    """The reproduction's published values carry the two checks in their
    note (bundling_comparison.csv's `note`), nothing else about them changes."""
    from atmlab.reproduce import bundling as B

    published = B.STUDY.published()
    over = [p for p in published if "x the adapter's" in p.note]
    twice = [p for p in published if "also published as" in p.note]
    assert (len(published), len(over), len(twice)) == (652, 88, 12)
    assert {p.quantity for p in over} == {"tcp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s"}
    assert all(p.config["experiment"] == "A" for p in over)
    t5 = next(p for p in twice if p.source == "Table 5" and p.config["tcp_window_kbytes"] == 32)
    assert t5.value == 158.55 and "also published as 65.17 in Table 17" in t5.note
    # the OCR notes of the reference are kept beside the new ones
    t17 = next(p for p in twice if p.source == "Table 17" and p.config["tcp_window_kbytes"] == 32)
    assert "OCR" in t17.note and "also published as 158.55 in Table 5" in t17.note
