"""atmlab.run(): results, tables, determinism, the analytic checks."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import atmlab


def test_voice_stream_is_300_cells_per_second(two_hosts):
    # 80 bytes + UDP 8 + IP 20 + LLC/SNAP 8 + AAL5 trailer 8 = 124 -> 3 cells;
    # 100 packets a second -> 300 cells a second (000 s6.1.3).
    r = atmlab.run(two_hosts)
    assert r.ports.loc["a->sw", "cells_out"] == 300
    voice = r.udp_flows.loc["voice"]
    assert voice["sent"] == voice["received"] == 100
    assert voice["lost"] == 0
    # 100 x 80 bytes x 8 bits over 1 s = 64 kbit/s
    assert voice["throughput_bps"] == pytest.approx(64_000)


def test_result_tables_are_dataframes(two_hosts):
    r = atmlab.run(two_hosts)
    assert isinstance(r.ports, pd.DataFrame)
    assert {"cells_in", "cells_out", "dropped", "max_queue", "mean_queue"} <= set(r.ports.columns)
    assert r.connections.empty
    assert r.efficiency is None and r.fairness is None
    assert "two_hosts" in repr(r)


def test_same_seed_same_json_different_seed_different_run():
    a = atmlab.run("nsource_lan", seed=3)
    b = atmlab.run("nsource_lan", seed=3)
    c = atmlab.run("nsource_lan", seed=4)
    assert a.to_json() == b.to_json()
    # nsource has random start times: another seed is another run.
    assert a.to_json() != c.to_json()
    assert a.seed == 3 and c.seed == 4


def test_nsource_lan_metrics_are_sane():
    r = atmlab.run("nsource_lan")
    assert 0.3 < r.efficiency <= 1.0
    assert 0.2 <= r.fairness <= 1.0
    assert r.raw["efficiency_basis"]["max_goodput_bps"] == pytest.approx(155.52e6 * 512 / 636)
    assert len(r.connections) == 5
    assert r.connections["goodput_bps"].sum() == pytest.approx(r.tcp_goodput_bps)
    # Jain's index recomputed from the table
    x = r.connections["goodput_bps"]
    assert r.fairness == pytest.approx(x.sum() ** 2 / (len(x) * (x**2).sum()))
    assert r.cell_loss_ratio > 0, "a 1000-cell tail-drop buffer overflows"


def test_window_limited_tcp_gets_window_over_rtt(two_hosts):
    # One TCP, 64 KB window, 10 ms links both ways: far below 155 Mbit/s, so
    # goodput = window / RTT once slow start is over (within 2%).
    sc = two_hosts
    sc["simulation"]["duration"] = "20 s"
    for link in sc["links"]:
        link["delay"] = "10 ms"
    sc["apps"] = [{"kind": "tcp_bulk", "name": "ftp", "vc": "v", "tcp": {"mss": 512, "window": 65535}}]
    r = atmlab.run(sc)
    c = r.connections.loc["ftp"]
    cell = 424 / 155.52e6
    rtt = 0.040 + 2 * 12 * cell + 2 * 2 * cell  # propagation + one segment and one ACK per hop
    window = 65535 // 512 * 512
    ramp = 8 * rtt  # slow start from 1 to 127 segments
    steady = c["bytes_delivered"] * 8 / (20 - ramp)
    assert steady == pytest.approx(window * 8 / rtt, rel=0.02)


def test_efficiency_ceiling_is_80_5_percent_for_mss_512():
    r = atmlab.run("nsource_lan")
    basis = r.raw["efficiency_basis"]
    assert f"{basis['payload_fraction']:.3f}" == "0.805"
    assert basis["max_goodput_bps"] / 1e6 == pytest.approx(125.2, abs=0.05)


def test_negative_seed_is_refused(two_hosts):
    with pytest.raises(ValueError, match="seed"):
        atmlab.run(two_hosts, seed=-1)


def test_scenario_error_names_the_source_and_key(two_hosts):
    two_hosts["links"][0]["rate"] = "-155.52 Mbit/s"
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.run(two_hosts)
    assert e.value.source == "<dict>"
    assert e.value.path == "links[0].rate"
    assert "negative" in e.value.message


def test_fairness_is_undefined_without_goodput(two_hosts):
    two_hosts["simulation"]["duration"] = "1 us"
    two_hosts["apps"] = [{"kind": "tcp_bulk", "name": "ftp", "vc": "v"}]
    r = atmlab.run(two_hosts)
    assert r.fairness is None
    assert not math.isnan(r.cell_loss_ratio)


def test_progress_is_reported_and_changes_nothing():
    seen: list[float] = []
    with_progress = atmlab.run("nsource_lan", seed=2, progress=seen.append)
    plain = atmlab.run("nsource_lan", seed=2)
    assert with_progress.to_json() == plain.to_json()
    assert len(seen) == 99 and seen == sorted(seen)
    assert seen[0] == pytest.approx(0.01) and seen[-1] == pytest.approx(0.99)


def test_result_scalars_are_typed_attributes(two_hosts):
    r = atmlab.run(two_hosts)
    assert isinstance(r.cell_hops, int) and r.cell_hops == 600  # 300 cells x 2 links
    assert isinstance(r.duration_s, float) and r.duration_s == 1.0
    assert r.frames["sent"] == r.frames["delivered"] == 100
    with pytest.raises(AttributeError):
        r.no_such_metric  # noqa: B018


def test_policed_pvc_shaped_by_the_adapter(two_hosts):
    """000's set-up in miniature: a VBR PVC policed at the switch, the sender's
    adapter shaped to 1594 kbit/s, below the SCR: nothing is discarded."""
    sc = two_hosts
    sc["hosts"][0]["adapter"] = {"peak": "1594 kbit/s"}
    sc["vcs"][0] |= {"category": "vbr", "contract": {"pcr": "6 Mbit/s", "scr": "2 Mbit/s", "mbs": 32, "cdvt": "250 us"},
                     "upc": {"at": "sw"}}
    r = atmlab.run(sc)
    u = r.upc.loc["v"]
    assert (u["at"], u["conformance"], u["discarded"]) == ("sw", "vbr.1", 0)
    assert u["cells"] == 300  # 100 voice packets of 3 cells
    assert r.ports.loc["a->sw", "rate_bps"] == 1_594_000
    # Unshaped, 4-kbyte bursts at line rate break the 32-cell burst size.
    sc["hosts"][0].pop("adapter")
    sc["apps"][0]["payload"] = "4000 bytes"
    r = atmlab.run(sc)
    assert r.upc.loc["v", "discarded"] > 0
    assert r.udp_flows.loc["voice", "received"] == 0
