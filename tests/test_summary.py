"""`atmlab run` summaries say what a scenario is about: a section per kind
of application (TCP transfers with their transfer time and throughput,
greedy TCP, UDP flows with loss and delay variation, cell sources, ABR),
per policer and per port; every metric with --all-metrics; numbers with
SI prefixes (atmlab.fmt)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from atmlab import fmt

ABR_AND_VIDEO = """
name = "abr_small"
[simulation]
duration = "100 ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[hosts]]
name = "d"
[[switches]]
name = "s1"
port = { buffer = "2000 cells", abr = { algorithm = "erica_plus" } }
[[switches]]
name = "s2"
port = { buffer = "2000 cells" }
[[links]]
between = ["a", "s1"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["c", "s1"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["s1", "s2"]
rate = "149.76 Mbit/s"
delay = "1 ms"
[[links]]
between = ["s2", "b"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["s2", "d"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
name = "abr0"
path = ["a", "s1", "s2", "b"]
category = "abr"
[[vcs]]
name = "vbr"
path = ["c", "s1", "s2", "d"]
category = "vbr"
simplex = true
[[apps]]
kind = "tcp_bulk"
name = "greedy"
vc = "abr0"
[[apps]]
kind = "onoff"
name = "video"
vc = "vbr"
peak = "60 Mbit/s"
on = "10 ms"
off = "10 ms"
[[probes]]
kind = "queue"
port = ["s1", "s2"]
interval = "5 ms"
"""


def _section(stdout: str, title: str) -> str:
    """The text of one section of a summary: from its title to the next
    title (a line that starts without a table border)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((j for j in range(start + 1, len(lines)) if lines[j] and lines[j][0] not in "┏┃┡│└"),
               len(lines))
    return "\n".join(lines[start:end])


def _row(section: str, name: str) -> list[str]:
    """The cells of the row of `name` in a section's table."""
    for line in section.splitlines():
        if line[:1] in ("│", "┃"):
            sep = line[0]
            cells = [c.strip() for c in line.strip(sep).split(sep)]
            if cells[0] == name:
                return cells
    raise AssertionError(f"no row {name!r} in\n{section}")


def _peak_scenario(root: Path, tmp_path: Path, peak: str) -> Path:
    text = (root / "scenarios/examples/host_peak_rate.toml").read_text()
    text = text.replace('peak = "40 Mbit/s"', f'peak = "{peak}"', 1)
    path = tmp_path / f"peak_{peak.split()[0]}.toml"
    path.write_text(text)
    return path


def test_transfer_throughput_varies_with_the_peak_rate(cli, root, tmp_path):
    """host_peak_rate: the goodput averaged over the 30 s run hardly says
    anything; the transfer throughput (ttcp's number) follows the adapter's
    peak rate up to about 40 Mbit/s, where the CPUs limit it."""
    rates = {}
    for peak in ("10 Mbit/s", "20 Mbit/s", "60 Mbit/s"):
        p = cli("run", str(_peak_scenario(root, tmp_path, peak)))
        assert p.returncode == 0, p.stderr
        s = _section(p.stdout, "TCP transfers")
        cells = _row(s, "ttcp")
        header = _row(s, "name")
        thr = cells[header.index("throughput")]
        m = re.fullmatch(r"([\d.]+) Mbit/s", thr)
        assert m, thr
        rates[peak] = float(m.group(1))
        assert cells[header.index("delivered")] == "30.0 MB"
        assert re.fullmatch(r"[\d.]+ s", cells[header.index("transfer time")])
    # user data = 0.899 x peak while the card limits (van den Bergh s7.5.4)
    assert rates["10 Mbit/s"] == pytest.approx(0.899 * 10, rel=0.02)
    assert rates["20 Mbit/s"] == pytest.approx(0.899 * 20, rel=0.02)
    assert 30 < rates["60 Mbit/s"] < 45


def test_udp_flows_show_loss_and_delay_variation(cli, two_hosts, tmp_path):
    sc = copy.deepcopy(two_hosts)
    sc["apps"].append({"kind": "udp", "name": "data", "vc": "v", "payload": {"exponential": "2000 bytes"},
                       "interval": {"exponential": "1 ms"}})
    sc["switches"][0]["port"]["buffer"] = "40 cells"  # some loss
    sc["links"][1]["rate"] = "10 Mbit/s"
    path = tmp_path / "udp.json"
    path.write_text(json.dumps(sc))
    p = cli("run", str(path))
    assert p.returncode == 0, p.stderr
    s = _section(p.stdout, "UDP flows")
    header = _row(s, "name")
    assert {"sent", "lost", "throughput", "mean delay", "delay variation"} <= set(header)
    voice, data = _row(s, "voice"), _row(s, "data")
    assert voice[header.index("sent")] == "100"
    assert voice[header.index("from → to")] == "a → b"
    assert re.fullmatch(r"[\d.]+ kbit/s", voice[header.index("throughput")])
    assert re.fullmatch(r"[\d.]+ [µm]?s", data[header.index("delay variation")])
    lost = data[header.index("lost")]
    assert re.fullmatch(r"[\d,]+ \([\d.]+ %\)", lost), lost  # the share of datagrams lost
    # The same numbers as the result's, formatted.
    r = json.loads(cli("run", str(path), "--json").stdout)
    flow = next(f for f in r["udp_flows"] if f["name"] == "data")
    assert flow["delay_variation_s"] == pytest.approx(flow["max_delay_s"] - flow["min_delay_s"])
    assert data[header.index("delay variation")] == fmt.si(flow["delay_variation_s"], "s")
    assert flow["lost"] > 0


def test_cell_sources_abr_and_series_have_their_sections(cli, tmp_path):
    path = tmp_path / "abr.toml"
    path.write_text(ABR_AND_VIDEO)
    p = cli("run", str(path))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    greedy = _section(out, "TCP connections (greedy)")
    assert _row(greedy, "greedy")[_row(greedy, "name").index("goodput")].endswith("Mbit/s")
    video = _section(out, "Cell sources")
    assert _row(video, "video")[_row(video, "name").index("peak")] == "60 Mbit/s"
    assert "abr0:forward" in _section(out, "ABR sources")
    assert _row(_section(out, "ABR switch ports"), "s1->s2")[1] == "erica_plus"
    ports = _section(out, "Switch ports")
    assert _row(ports, "s1->s2")[1] == "149.76 Mbit/s"
    assert "queue:s1->s2" in _section(out, "Time series")
    assert "TCP transfers" not in out and "UDP flows" not in out  # no empty sections


def test_policers_have_their_section(cli, root):
    p = cli("run", str(root / "scenarios/bundling/bundle.toml"))
    assert p.returncode == 0, p.stderr
    s = _section(p.stdout, "Policers")
    assert _row(s, "pvc")[:3] == ["pvc", "net", "vbr.1"]
    assert "tcp0" in _section(p.stdout, "TCP transfers")  # a 3-minute session (duration)
    assert "udp0" in _section(p.stdout, "UDP flows")


def test_all_metrics_lists_every_metric_with_its_meaning(cli, root, tmp_path):
    from atmlab import metrics

    path = _peak_scenario(root, tmp_path, "40 Mbit/s")
    p = cli("run", str(path), "--all-metrics")
    assert p.returncode == 0, p.stderr
    s = _section(p.stdout, "All metrics")
    row = _row(s, "connections.ttcp.transfer_throughput_bps")
    assert re.fullmatch(r"[\d.]+ Mbit/s", row[1]) and row[2].startswith("Of a finite transfer")
    doc = json.loads(cli("run", str(path), "--json").stdout)
    names = set(metrics.flatten(doc))
    shown = {line.strip("│").split("│")[0].strip() for line in s.splitlines() if line.startswith("│")}
    assert names <= shown
    assert "All metrics" not in cli("run", str(path)).stdout


@pytest.mark.parametrize(("value", "unit", "text"), [
    (40.7e6, "bit/s", "40.7 Mbit/s"),
    (8e6, "bit/s", "8.00 Mbit/s"),
    (999.96e3, "bit/s", "1.00 Mbit/s"),
    (0.00893, "s", "8.93 ms"),
    (2.5e-5, "s", "25.0 µs"),
    (30e6, "B", "30.0 MB"),
    (0, "s", "0 s"),
    (None, "s", "n/a"),
    (float("nan"), "s", "n/a"),
    (123.4, "", "123"),
    (5e13, "bit/s", "50.0 Tbit/s"),
])
def test_si(value, unit, text):
    assert fmt.si(value, unit) == text


def test_other_formats():
    assert fmt.stated(155.52e6, "bit/s") == "155.52 Mbit/s"
    assert fmt.stated(1e8, "bit/s") == "100 Mbit/s"
    assert fmt.stated(30, "s") == "30 s"
    assert fmt.count(1262592) == "1,262,592"
    assert fmt.percent(0.0893) == "8.93 %" and fmt.percent(0) == "0 %"
    assert fmt.ratio(1.7e-5) == "1.70e-05" and fmt.ratio(0.222) == "0.222"
    assert fmt.metric(1000, "cells") == "1,000 cells" and fmt.metric(3, "") == "3"


@pytest.mark.parametrize("columns", [80, 120])
def test_summaries_fit_the_width_without_cutting_numbers_or_names(root, columns):
    """`atmlab run` in 80 columns (COLUMNS, as a terminal sets it) or a
    pipe's 120: every line fits, nothing is cut off with an ellipsis, and
    the ports' names and cell counts stay whole (they wrap between words,
    if at all)."""
    import os
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "atmlab.cli", "run", "nsource_lan"], capture_output=True, text=True,
                       cwd=root, timeout=600, env={**os.environ, "COLUMNS": str(columns)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "…" not in p.stdout
    ports = _section(p.stdout, "Switch ports")
    assert {"sw1->sw2", "sw2->sw1", "sw1->src0", "sw2->dst4"} <= set(ports.replace("│", " ").split())
    assert re.search(r"│ +\d{1,3},\d{3},\d{3} │", ports), ports  # the bottleneck's cells in, whole
