"""Reports: PNG figures and one self-contained HTML page."""

from __future__ import annotations

import re

import pandas as pd
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


# ------------------------------------------------------------ figures for a paper

def drawn(monkeypatch):
    """The figures the report draws, laid out as saved and kept open."""
    from atmlab import plotting

    figs = []

    def keep(fig, path):
        plotting.finish(fig)
        figs.append(fig)
        return path

    monkeypatch.setattr(report, "_save", keep)
    return figs


def tick_texts(axis):
    return [t.get_text() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]


def test_a_dollar_in_a_swept_value_or_a_probe_name_is_text_not_mathtext(tmp_path, two_hosts, cli):
    # "$x_$" is broken mathtext: matplotlib used to raise while saving, the report half written.
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    sc["apps"].append({"kind": "tcp_bulk", "name": "ftp", "vc": "v", "tcp": {"mss": 512}})
    sc["params"]["tag"] = "t"
    sc["sweep"] = {"tag": ["US$5", "$x_$"], "n": [1, 2]}
    sc["probes"] = [{"kind": "cwnd", "app": "ftp", "interval": "5 ms", "name": "cwnd {tag} $_$"}]
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(sc).run(db, jobs=1)
    out = tmp_path / "report"
    p = cli("report", "--db", str(db), "--out", str(out))
    assert p.returncode == 0, p.stderr
    names = {f.name for f in report.figure_paths(out / "index.html")}
    assert "voice_sweep__efficiency_vs_tag.png" in names and any(n.endswith("_series.png") for n in names)
    page = (out / "index.html").read_text()
    assert "US$5" in page and "$x_$" in page


def test_a_report_that_fails_writes_nothing(tmp_path, two_hosts, monkeypatch):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts), replications=2).run(db, jobs=1)

    def broken(*args, **kwargs):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(report, "scatter_figure", broken)  # after the metric figures are drawn
    out = tmp_path / "new" / "report"
    with pytest.raises(RuntimeError, match="drawing failed"):
        report.build(db, out)
    assert not (tmp_path / "new").exists(), "no folder, no half a report"
    # Over an earlier report: the earlier one stays as it was, nothing half-new beside it.
    old = tmp_path / "old"
    old.mkdir()
    (old / "index.html").write_text("earlier report")
    with pytest.raises(RuntimeError):
        report.build(db, old)
    assert [f.name for f in old.iterdir()] == ["index.html"] and (old / "index.html").read_text() == "earlier report"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["old", "r.sqlite"]
    monkeypatch.undo()
    page = report.build(db, old)
    assert page == old / "index.html" and "earlier report" not in page.read_text()
    assert len(report.figure_paths(page)) >= 1
    assert sorted(f.name for f in tmp_path.iterdir()) == ["old", "r.sqlite"], "no staging folder left"


def test_a_time_series_has_titles_in_words_and_si_prefixes(tmp_path, two_hosts, monkeypatch):
    sc = tcp_and_voice(two_hosts)
    sc["tcp"] = {"window": "1000000 bytes"}
    sc["probes"] = [{"kind": "cwnd", "app": "ftp", "interval": "5 ms"},
                    {"kind": "queue", "port": ["sw", "b"], "interval": "5 ms"}]
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(sc).run(db, jobs=1)
    figs = drawn(monkeypatch)
    with report.Store(db) as store:
        fig = report.series_figure(store, 1, tmp_path)
    assert fig is not None and fig.title.startswith("Run 1 of voice_sweep (")
    cwnd, queue = figs[0].axes
    assert cwnd.get_title() == "Congestion window of ftp" and queue.get_title() == "Queue at port sw->b"
    assert cwnd.get_ylabel() in ("Congestion window (kB)", "Congestion window (MB)"), "bytes get an SI prefix"
    top = float(report.Store(db).series(1).query("kind == 'cwnd'")["value"].max())
    assert top > 100_000 and all(float(t.replace(",", "")) < 1000 for t in tick_texts(cwnd.yaxis))
    assert queue.get_ylabel() == "Queue (cells)"
    assert queue.xaxis.get_label_text() == "Time (ms)" or queue.xaxis.get_label_text() == "Time (s)"
    assert all(not ax.yaxis.get_offset_text().get_text() for ax in figs[0].axes)


def summary_frame(xs, groups, values, x="policy", group="buffer"):
    rows = [{x: xv, group: g, "runs": 2, "efficiency_mean": v, "efficiency_ci95": 0.01}
            for xv, g, v in zip(xs, groups, values, strict=True)]
    return pd.DataFrame(rows)


def test_a_categorical_axis_is_drawn_as_categories(tmp_path, monkeypatch):
    figs = drawn(monkeypatch)
    summary = summary_frame(["abr", "ubr", "abr", "ubr"], [500, 500, 2000, 2000], [275.1, 275.3, 275.2, 275.4])
    report.metric_figures("s", summary, ["policy", "buffer"], "efficiency", tmp_path, units={"buffer": "cells"})
    (ax,) = figs[0].axes
    assert tick_texts(ax.xaxis) == ["abr", "ubr"]
    assert ax.xaxis.get_offset_text().get_text() == "" and ax.yaxis.get_offset_text().get_text() == ""
    assert not any("e" in t or "+" in t for t in tick_texts(ax.yaxis)), tick_texts(ax.yaxis)
    points = [line for line in ax.lines if line.get_marker() not in ("_", "|")]  # not the bars' caps
    assert len(points) == 2 and all(line.get_linestyle() == "None" for line in points), "no line joins categories"
    markers = {line.get_marker() for line in points}
    colours = {line.get_color() for line in points}
    assert len(markers) == 2 and len(colours) == 2, "each series has its own marker and colour"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["500 cells", "2,000 cells"] and ax.get_legend().get_title().get_text() == "buffer"
    # The two series stand side by side at a category, not on top of each other.
    xs = sorted({round(float(x), 3) for line in points for x in line.get_xdata()})
    assert len(xs) == 4


def test_the_scatter_tells_every_point_apart(tmp_path, monkeypatch):
    figs = drawn(monkeypatch)
    rows = [{"buffer": b, "policy": p, "runs": 1, "efficiency_mean": 0.9, "efficiency_ci95": float("nan"),
             "fairness_mean": 0.5, "fairness_ci95": float("nan")}
            for b in (500, 1000, 2000) for p in ("tail_drop", "epd")]
    report.scatter_figure("s", pd.DataFrame(rows), ["buffer", "policy"], tmp_path, {"buffer": "cells"})
    (ax,) = figs[0].axes
    looks = [(line.get_color(), line.get_marker()) for line in ax.lines]
    assert len(looks) == 6 and len(set(looks)) == 6, looks
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["policy = tail_drop", "policy = epd", "buffer = 500 cells", "buffer = 1,000 cells",
                      "buffer = 2,000 cells"]


def test_the_same_data_give_the_same_png_bytes(tmp_path):
    summary = summary_frame([500, 1000, 500, 1000], ["epd", "epd", "tail", "tail"], [0.5, 0.6, 0.7, 0.8],
                            x="buffer", group="policy")
    a, b = (report.metric_figures("s", summary, ["buffer", "policy"], "efficiency", tmp_path / d,
                                  units={"buffer": "cells"}) for d in ("a", "b"))
    assert a[0].path.read_bytes() == b[0].path.read_bytes()
    with Image.open(a[0].path) as im:
        assert im.text["Title"] == "Efficiency against buffer"


@pytest.mark.parametrize("name, kind, target, title", [
    ("cwnd:tcp0", "cwnd", "tcp0", "congestion window of tcp0"),
    ("queue:sw0->sw1", "queue", "sw0->sw1", "queue at port sw0->sw1"),
    ("acr:vc0:forward", "acr", "vc0:forward", "allowed cell rate of VC vc0"),
    ("my $x_$ window", "cwnd", "tcp0", "my $x_$ window: congestion window of tcp0"),
])
def test_a_probes_series_is_titled_in_words(name, kind, target, title):
    assert display.series_title(name, kind, target) == title
