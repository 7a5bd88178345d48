"""Limits of the core: every time and rate range-checked where the scenario
is validated, utilization never above 1, and the memory guard that stops a
run whose queues grow without end (issue: hardening)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

import atmlab
from atmlab.scenario import bundled, load


@pytest.mark.parametrize(("where", "value", "says"), [
    (("links", 0, "delay"), "18446744.073709551615 s", "at most 1000000 s"),
    (("links", 0, "delay"), "1000000.000000000001 s", "at most 1000000 s"),
    (("simulation", "duration"), "2000000 s", "at most 1000000 s"),
    (("apps", 0, "interval"), "1e7 s", "at most 1000000 s"),
    (("links", 0, "rate"), "999 bit/s", "between 1 kbit/s and 1 Tbit/s"),
    (("links", 0, "rate"), "1.5 Tbit/s", "between 1 kbit/s and 1 Tbit/s"),
    (("simulation", "max_cells_held"), "0 cells", "outside 1.."),
])
def test_out_of_range_quantities_are_refused_naming_the_key_and_range(two_hosts, where, value, says):
    node = two_hosts
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = value
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(two_hosts)
    assert e.value.path == ".".join(str(k) for k in where).replace(".0.", "[0].")
    assert says in e.value.message


def test_the_longest_times_and_slowest_rates_run_without_overflow(two_hosts):
    """At the limits of every range the core's arithmetic is checked: a
    queue behind a 1 kbit/s adapter is later than 'never', not a panic."""
    sc = copy.deepcopy(two_hosts)
    sc["simulation"]["duration"] = "1000000 s"
    sc["links"][0].update(rate="1 kbit/s", delay="1000000 s")
    sc["apps"][0].update(payload="65000 bytes", interval="1000000 s", start="999999 s")
    r = atmlab.run(sc)
    assert r.udp_flows.loc["voice", "sent"] == 1
    assert r.udp_flows.loc["voice", "received"] == 0


@pytest.mark.parametrize("duration", ["1 ms", "1.5 ms", "7 ms", "100 ms"])
def test_port_utilization_never_exceeds_one(duration):
    """97-0424 WAN: the ON/OFF source's adapter runs at the full link rate
    while ON. Utilization is cells sent over the slots that started before
    the end, so a cell that started just before the end cannot push it
    above 1 (it once reached 1.00057 in a 1 ms run)."""
    data = load(bundled("ubr-gr/wan")).data
    data["simulation"]["duration"] = duration
    r = atmlab.run(data)
    assert (r.ports["utilization"] <= 1.0).all(), r.ports["utilization"].max()
    assert r.ports["utilization"].max() > 0.99  # the VBR adapter is saturated while ON


def flood(limit: str | None) -> dict:
    """A UDP source far faster than its unlimited adapter's 10 Mbit/s."""
    sc = {
        "name": "flood",
        "simulation": {"duration": "60 s"},
        "hosts": [{"name": "a", "adapter": {"peak": "10 Mbit/s"}}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "155.52 Mbit/s", "delay": "5 us"}],
        "vcs": [{"name": "v", "path": ["a", "b"]}],
        "apps": [{"kind": "udp_cbr", "name": "u", "vc": "v", "payload": "9000 bytes", "interval": "100 us"}],
    }
    if limit:
        sc["simulation"]["max_cells_held"] = limit
    return sc


def test_memory_guard_stops_a_run_whose_queue_grows_and_names_it():
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(flood("1000000 cells"))
    msg = str(e.value)
    assert "port a->b" in msg and "simulation.max_cells_held" in msg and "1000000 cells" in msg


def test_memory_guard_names_the_adapter_behind_a_bottleneck_that_holds_runs():
    """EXPERT's bottleneck holds its cells as runs and the hosts' links hand
    it their frames (docs/benchmark.md, 2026-12-01): a flood of one-cell
    frames behind an unlimited adapter, each frame a run kept by the link
    and by the bottleneck, is charged to that adapter's link. (That the
    guard's count stays cheap however many runs wait is the fuzz test's to
    find: at the default limit, summing them at each look took 20 s.)"""
    data = load(bundled("expert/expert")).data
    data["simulation"].update(duration="2 ms", max_cells_held="3000000 cells")
    flood_app = {"kind": "udp_cbr", "name": "flood", "vc": "vc3", "payload": "0 bytes", "interval": "1 ps"}
    data["apps"].insert(1, flood_app)
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(data)
    assert "port src3->sw0" in str(e.value) and "3000000 cells" in str(e.value)


def test_memory_guard_default_is_generous_but_finite():
    """The default (50 million cells) stops the flood too, before the
    machine runs out of memory; nothing else in the run is affected."""
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(flood(None) | {"simulation": {"duration": "1000 s"}})
    assert "50000000 cells" in str(e.value)


def test_memory_guard_fails_one_sweep_point_not_the_sweep(tmp_path):
    sc = flood("1000000 cells")
    sc["simulation"]["duration"] = "{d}"
    # 50 ms: about 500 datagrams of 192 cells wait, far below the limit;
    # 60 s: the queue grows past a million cells.
    sc["params"] = {"d": "50 ms"}
    sc["sweep"] = {"d": ["50 ms", "60 s"]}
    out = atmlab.Sweep(sc).run(tmp_path / "r.sqlite", jobs=1)
    assert (out.ran, out.failed) == (2, 1)
    assert "max_cells_held" in out.failures[0].error


def test_memory_guard_holds_in_a_short_run_with_few_events():
    """The guard looks whenever cells are created, not every so many events:
    a TCP run of a few hundred events cannot hold more than a tiny limit."""
    data = load(bundled("nsource_lan")).data
    data["simulation"].update(duration="100 ms", max_cells_held="100 cells")
    with pytest.raises(atmlab.LimitError, match="100 cells"):
        atmlab.run(data)


def test_a_full_pdu_table_stops_the_run_instead_of_panicking():
    """A UDP source sending empty datagrams every picosecond (found by the
    fuzz test) fills the PDU table's 2^24 - 1 entries: that too is a
    LimitError. (The memory guard counts those entries and, at its default,
    stops the run before: test_robust_memory.py. Here it is set as high as
    it goes.)"""
    sc = flood("10000000000 cells")
    sc["simulation"]["duration"] = "2 ms"
    sc["apps"][0].update(payload="0 bytes", interval="1 ps")
    with pytest.raises(atmlab.LimitError, match="16777215 AAL5 frames are in flight"):
        atmlab.run(sc)


def test_ten_thousand_sources_validate_in_bounded_memory(tmp_path):
    """`repeat` of 10,000 sources once took 700 MB to validate (64k-cell
    queues preallocated at every port)."""
    sc = {
        "name": "many",
        "simulation": {"duration": "1 s"},
        "hosts": [{"repeat": 10000, "name": "h{i}"}, {"name": "sink"}],
        "switches": [{"name": "sw", "port": {"buffer": "100000 cells"}}],
        "links": [{"repeat": 10000, "between": ["h{i}", "sw"], "rate": "155.52 Mbit/s", "delay": "5 us"},
                  {"between": ["sw", "sink"], "rate": "155.52 Mbit/s", "delay": "5 us"}],
        "vcs": [{"repeat": 10000, "name": "v{i}", "path": ["h{i}", "sw", "sink"]}],
        "apps": [{"repeat": 10000, "kind": "udp_cbr", "name": "u{i}", "vc": "v{i}", "payload": "80 bytes",
                  "interval": "10 ms"}],
    }
    path = tmp_path / "many.json"
    path.write_text(json.dumps(sc))
    # The peak of this process alone (VmHWM): on Linux a child's ru_maxrss
    # starts from its parent's, which is pytest's.
    code = ("import json, atmlab; atmlab.validate(json.load(open(%r)));"
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])" % str(path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    peak_mb = int(p.stdout.strip()) / 1024
    assert peak_mb < 400, f"{peak_mb:.0f} MB"
