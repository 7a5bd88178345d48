"""Traces (issue: results a researcher can trust): one record per event,
agreeing with the run's own counters, in time order, filtered as asked,
and changing no result."""

from __future__ import annotations

import json

import pytest

import atmlab

# 97-0424's N-source LAN with EPD and a small buffer, 0.5 s: cells dropped
# by EPD and by overflow, TCP retransmissions and timeouts.
UBR_EPD = ["simulation.duration=500 ms", "switches[*].port.buffer=300 cells",
           'switches[*].port.drop_policy={ kind = "epd", threshold = "200 cells" }']
# 97-0177R2's WAN, 0.3 s: ABR sources, RM cells both ways, ERICA+ intervals.
ABR_WAN = ["simulation.duration=300 ms"]


def same_but_events(a, b):
    """Results equal but for the count of events: a traced run runs in the
    reference mode, which processes every event the elision spares."""
    x, y = json.loads(a.to_json()), json.loads(b.to_json())
    assert x.pop("events") >= y.pop("events")
    return x == y


def traced(tmp_path, scenario, overrides, name="t.csv"):
    path = tmp_path / name
    r = atmlab.run(scenario, overrides=overrides, trace=path)
    return r, r.trace


def test_a_ubr_run_with_epd_traces_what_its_counters_count(tmp_path):
    plain = atmlab.run("nsource_lan", overrides=UBR_EPD)
    r, t = traced(tmp_path, "nsource_lan", UBR_EPD)
    assert same_but_events(r, plain), "a trace changes no result"
    assert t.time_ps.is_monotonic_increasing, "records come in time order"
    drops = t[(t.kind == "drop") & (t.event == "dropped")]
    ports = r.ports
    assert len(drops) == int(ports["dropped"].sum()) > 0
    by_reason = drops.groupby("reason", observed=True).size().to_dict()
    assert by_reason.get("frame", 0) == int(ports["dropped_frame"].sum()) > 0
    assert by_reason.get("overflow", 0) == int(ports["dropped_overflow"].sum())
    # Per port, too.
    per_port = drops.groupby("port", observed=True).size()
    for name, n in per_port.items():
        assert n == ports.loc[name, "dropped"], name
    discards = t[t.event == "frame_discard"]
    assert 0 < len(discards) <= by_reason["frame"]
    frames = t[t.kind == "frame"]
    assert (frames.event == "delivered").sum() == r.frames["delivered"]
    assert (frames.event == "lost").sum() == r.hosts["frames_discarded"].sum()
    tcp = t[t.kind == "tcp"]
    conns = r.connections
    assert (tcp.event == "retransmit").sum() == conns["retransmitted_segments"].sum() > 0
    assert (tcp.event == "timeout").sum() == conns["timeouts"].sum()
    assert (tcp.event == "fast_retransmit").sum() == conns["fast_retransmits"].sum()
    assert ((tcp.event == "send") | (tcp.event == "retransmit")).sum() == conns["segments_sent"].sum()
    assert tcp[tcp.event == "cwnd"].cwnd.notna().all()


def test_an_abr_run_traces_its_rm_cells_and_controllers(tmp_path):
    plain = atmlab.run("tcp-abr/wan", overrides=ABR_WAN)
    r, t = traced(tmp_path, "tcp-abr/wan", ABR_WAN)
    assert same_but_events(r, plain)
    rm = t[t.kind == "rm"]
    abr = r.abr
    assert (rm.event == "frm_sent").sum() == (abr["frms_in_rate"] + abr["frms_out_of_rate"]).sum() > 0
    assert (rm.event == "brm_received").sum() == abr["brms_received"].sum() > 0
    assert (rm.event == "brm_sent").sum() == abr["brms_sent"].sum()
    brm = rm[rm.event == "brm_received"]
    assert brm.er_bps.notna().all() and brm.acr_bps.notna().all() and (brm.dir != "").all()
    control = t[t.kind == "control"]
    intervals = control.groupby("port", observed=True).size()
    for port, n in intervals.items():
        assert n == r.abr_ports.loc[port, "intervals"], port
    assert control.load_factor.notna().any()


def test_filters_by_kind_vc_port_and_window(tmp_path):
    over = [*UBR_EPD, 'trace={ kinds = ["drop", "tcp"], vcs = ["vc1"], from = "100 ms", until = "400 ms" }']
    r, t = traced(tmp_path, "nsource_lan", over)
    assert set(t.kind) <= {"drop", "tcp"} and len(t) > 0
    assert set(t.vc[t.kind == "drop"]) == {"vc1"}
    assert set(t.conn[t.kind == "tcp"]) == {"tcp1"}
    assert t.time_s.min() >= 0.1 and t.time_s.max() < 0.4
    over = [*UBR_EPD, 'trace={ kinds = ["drop"], ports = [["sw1", "sw2"]] }']
    _, t = traced(tmp_path, "nsource_lan", over, "p.csv")
    assert set(t.port) == {"sw1->sw2"}


def test_a_trace_in_parquet_reads_as_the_csv(tmp_path):
    over = [*UBR_EPD, 'trace={ kinds = ["drop", "frame"] }']
    _, csv = traced(tmp_path, "nsource_lan", over, "t.csv")
    r, pq = traced(tmp_path, "nsource_lan", over, "t.parquet")
    assert r.trace_file.suffix == ".parquet" and not list(tmp_path.glob(".t.parquet.*"))
    assert len(pq) == len(csv) and list(pq.columns) == list(csv.columns)
    assert (pq.event.astype(str).tolist()) == (csv.event.astype(str).tolist())


def test_trace_mistakes_name_their_keys(tmp_path, two_hosts):
    cases = {
        'trace={ kinds = ["drops"] }': "trace.kinds",
        'trace={ vcs = ["nope"] }': "trace.vcs[0]",
        'trace={ ports = [["a", "b"]] }': "trace.ports[0]",
        'trace={ from = "2 s", until = "1 s" }': "trace.until",
        'trace={ kinds = [] }': "trace.kinds",
        "trace={ colour = 1 }": "trace.colour",
    }
    for text, where in cases.items():
        with pytest.raises(atmlab.ScenarioError) as e:
            atmlab.run(two_hosts, overrides=[text], trace=tmp_path / "x.csv")
        assert where in str(e.value), (text, str(e.value))
    r = atmlab.run(two_hosts)
    with pytest.raises(AttributeError, match="wrote no trace"):
        _ = r.trace


def test_cli_run_writes_a_trace(cli, tmp_path):
    path = tmp_path / "t.csv"
    p = cli("run", "nsource_lan", "--trace", str(path), *[a for o in UBR_EPD for a in ("--set", o)])
    assert p.returncode == 0, p.stderr
    assert "trace: written to" in p.stderr
    t = atmlab.read_trace(path)
    assert {"drop", "frame", "tcp"} <= set(t.kind)


def _pcap_records(path) -> int:
    """The records of a pcap file (its 24-byte header, then per record a
    16-byte header whose third word is the bytes captured)."""
    import struct

    data = path.read_bytes()
    pos, n = 24, 0
    while pos < len(data):
        (incl,) = struct.unpack_from("<I", data, pos + 8)
        pos += 16 + incl
        n += 1
    return n


def test_a_capture_at_a_port_input_holds_the_frames_the_port_then_drops(tmp_path):
    over = [*UBR_EPD, 'simulation.capture=[["sw1", "sw2"]]', 'simulation.capture_input=[["sw1", "sw2"]]']
    r = atmlab.run("nsource_lan", overrides=over, pcap=tmp_path)
    offered = _pcap_records(tmp_path / "sw1-sw2.input.pcap")
    carried = _pcap_records(tmp_path / "sw1-sw2.pcap")
    assert r.ports.loc["sw1->sw2", "dropped_frame"] > 0
    assert offered > carried > 0, (offered, carried)
    # Capturing changes no result.
    assert json.loads(r.to_json()) == json.loads(atmlab.run("nsource_lan", overrides=over).to_json())
