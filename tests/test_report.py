"""Reports: PNG figures and one self-contained HTML page."""

from __future__ import annotations

import re

import pytest
from PIL import Image

import atmlab
from atmlab import display, report

from conftest import voice_sweep


def test_report_renders_a_small_sweep(tmp_path, two_hosts, cli):
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    sc["apps"].append({"kind": "tcp_bulk", "name": "ftp", "vc": "v", "tcp": {"mss": 512}})
    sc["probes"] = [{"kind": "cwnd", "app": "ftp", "interval": "5 ms"},
                    {"kind": "queue", "port": ["sw", "b"], "interval": "5 ms"}]
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(sc, replications=2).run(db, jobs=1)
    out = tmp_path / "report"
    p = cli("report", "--db", str(db), "--out", str(out))
    assert p.returncode == 0, p.stderr
    pngs = report.figure_paths(out / "index.html")
    names = {f.name for f in pngs}
    assert "voice_sweep__efficiency_vs_n.png" in names
    assert "voice_sweep__efficiency_vs_fairness.png" in names
    assert any(n.endswith("_series.png") for n in names)
    for f in pngs:
        assert f.stat().st_size > 2000
        with Image.open(f) as im:
            im.verify()
            assert im.format == "PNG"
    page = (out / "index.html").read_text()
    assert len(re.findall(r"<img ", page)) == len(pngs)
    assert page.count("data:image/png;base64,") == len(pngs)
    assert "95% confidence intervals" in page and "voice_sweep" in page


def test_report_options_and_errors(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts), replications=2).run(db, jobs=1)
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--x", "delay", "--group", "n",
            "--metric", "cell_loss_ratio")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "o" / "voice_sweep__cell_loss_ratio_vs_delay.png").exists()
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--x", "colour")
    assert p.returncode == 2 and "'colour' is not a parameter" in p.stderr
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--sweep", "nope")
    assert p.returncode == 2 and "no sweep named 'nope'" in p.stderr


def tcp_and_voice(two_hosts):
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    sc["apps"].append({"kind": "tcp_bulk", "name": "ftp", "vc": "v", "tcp": {"mss": 512}})
    return sc


def test_an_unknown_metric_is_an_error_that_lists_the_valid_names(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(tcp_and_voice(two_hosts)).run(db, jobs=1)
    for name in ("frames.lots", "connections.nobody.goodput_bps", "connections.*.colour"):
        p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--metric", name)
        assert p.returncode == 2, (name, p.stdout)
        assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
        assert f"--metric {name}: no such metric in sweep 'voice_sweep'" in p.stderr
        for valid in ("efficiency", "frames.lost", "connections.ITEM.FIELD", "ftp", "goodput_bps",
                      "udp_flows.ITEM.FIELD", "voice0"):
            assert valid in p.stderr, valid
    assert not (tmp_path / "o").exists(), "an error writes nothing"


def test_per_connection_and_per_flow_metrics_are_drawn(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(tcp_and_voice(two_hosts), replications=2).run(db, jobs=1)
    out = tmp_path / "o"
    p = cli("report", "--db", str(db), "--out", str(out), "--metric", "connections.ftp.goodput_bps",
            "--metric", "udp_flows.*.lost", "--metric", "frames.lost")
    assert p.returncode == 0, p.stderr
    names = {f.name for f in report.figure_paths(out / "index.html")}
    assert {"voice_sweep__connections.ftp.goodput_bps_vs_n.png", "voice_sweep__udp_flows.voice0.lost_vs_n.png",
            "voice_sweep__frames.lost_vs_n.png"} <= names
    page = (out / "index.html").read_text()
    assert "Goodput of TCP connection ftp against n" in page  # titles in words
    assert "Goodput of TCP connection ftp (kbit/s)" in page or "Goodput of TCP connection ftp (Mbit/s)" in page


def test_confidence_bars_stop_at_the_quantitys_bounds():
    # An efficiency of 0.99 +/- 0.05 reaches 1 at most; a loss of 0.001 +/- 0.01 reaches 0 at least.
    below, above = report._errors([0.99, 0.5], [0.05, 0.1], 0.0, 1.0)
    assert below == pytest.approx([0.05, 0.1]) and above == pytest.approx([0.01, 0.1])
    below, above = report._errors([0.001, float("nan")], [0.01, 0.2], 0.0, float("inf"))
    assert below == pytest.approx([0.001, 0.0]) and above == pytest.approx([0.01, 0.0])
    assert display.bounds("efficiency") == (0.0, 1.0)
    assert display.bounds("cell_loss_ratio") == (0.0, 1.0)
    assert display.bounds("tcp_goodput_bps") == (0.0, float("inf"))
    assert display.bounds("connections.tcp0.timeouts") == (0.0, float("inf"))


def test_the_report_says_numbers_as_people_read_them(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(tcp_and_voice(two_hosts), replications=2).run(db, jobs=1)
    out = tmp_path / "o"
    p = cli("report", "--db", str(db), "--out", str(out))
    assert p.returncode == 0, p.stderr
    page = (out / "index.html").read_text()
    table = page[page.index("<table"):]
    assert not re.search(r"\de[+-]\d", table), "no exponent in the summary table"
    assert "<th>delay (us)</th>" in table or "<th>delay (ms)</th>" in table  # one SI prefix per column
    assert "TCP goodput (" in table and "bit/s)</th>" in table
    assert "overflow-x:auto" in page  # a wide table scrolls inside the page rather than widening it
    # Axis titles in words, not identifiers.
    assert "tcp_goodput_bps" not in page.replace("__tcp_goodput_bps_vs_", "")
    assert "Efficiency against n" in page


@pytest.mark.parametrize("value, unit, shown", [
    (125149184.0, "bit/s", ("125.1", "Mbit/s")), (5e-6, "s", ("5", "us")), (50000.0, "cells", ("50,000", "cells")),
    (0.0007155397, "fraction", ("0.0007155", "")), (1536.0, "", ("1,536", "")), (999_960.0, "bit/s", ("1", "Mbit/s")),
])
def test_numbers_get_an_si_prefix_or_thousands_separators(value, unit, shown):
    values, u = display.column([value], unit)
    assert (values[0], u) == shown
