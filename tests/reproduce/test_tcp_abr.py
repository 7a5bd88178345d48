"""tcp-abr (97-0177R2) reproduction: the grid is the study's tables, the
published values join their configurations, the MSS 512 and 9140 runs of a
row see the same video, the claims are evaluated, files are written."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
from PIL import Image

import atmlab
from atmlab import reference
from atmlab.expand import points
from atmlab.reproduce import Options, entry, run, tcp_abr


def configurations(grid) -> list[dict]:
    t = copy.deepcopy(dict(grid.template))
    t["sweep"] = dict(grid.sweep)
    return [tcp_abr.STUDY.configuration(grid, p.params) for p in points("<grid>", t)]


def test_the_full_grid_is_the_studys_tables():
    configs = pd.DataFrame([c for g in tcp_abr.STUDY.grids(quick=False) for c in configurations(g)])
    sizes = configs.groupby(["config", "table"]).size().to_dict()
    assert sizes == {("WAN", "1a"): 3, ("WAN", "1b"): 3, ("SAT+WAN", "2a"): 3, ("SAT+WAN", "2b"): 3,
                     ("SAT+SAT", "3a"): 3, ("SAT+SAT", "3b"): 3, ("WAN ON-OFF", "s7.2"): 2,
                     ("SAT+SAT VS/VD", "s7.4"): 2}
    rows = configs[configs.config == "WAN"][["row", "video_mean_mbps", "video_std_mbps"]].drop_duplicates()
    assert sorted(map(tuple, rows.to_numpy().tolist())) == [(1, 5.0, 5.0), (2, 7.5, 7.0), (3, 10.0, 5.0)]
    table = reference.table("tcp-abr/table1a_wan_mss512")
    assert list(table.video_mean_per_source_mbps) == [5, 7.5, 10] and list(table.video_std_per_source_mbps) == [5, 7, 5]
    # Five columns of three rows in each of Tables 1a and 1b, and s7.2's ON-OFF queue at both MSS.
    assert len(tcp_abr.STUDY.published()) == 2 * 15 + 2


def test_the_templates_are_the_studys_configurations():
    # RTT 30 ms on the WAN, about 550 ms on both satellite configurations;
    # feedback delay (sw0 to the sources and back) 10, 10 and 550 ms.
    def delays(family):
        t = tcp_abr.template(family)
        d = {tuple(lk["between"]): lk["delay"] for lk in t["links"]}
        from atmlab import quantity
        s = lambda x: quantity.value(quantity.parse(x))  # noqa: E731
        access = s(d[("src{i}", "sw0")])
        return 2 * (access + s(d[("sw0", "sw1")]) + s(d[("sw1", "dst{i}")])), 2 * access
    for family, rtt, feedback in (("wan", 0.030, 0.010), ("sat_wan", 0.550, 0.010), ("sat_sat", 0.550, 0.550)):
        got = delays(family)
        assert got[0] == pytest.approx(rtt, abs=1e-4) and got[1] == pytest.approx(feedback, abs=1e-4), family
    # The VS/VD variant is SAT+SAT with sw0 (where the satellite links end) a
    # virtual source and destination, and nothing else changed.
    plain, vs = atmlab.load(tcp_abr.template("sat_sat")), atmlab.load(tcp_abr.vs_vd_template())
    assert [(s["name"], s.get("vs_vd", False)) for s in vs.data["switches"]] == [("sw0", True), ("sw1", False)]
    assert [{k: v for k, v in s.items() if k != "vs_vd"} for s in vs.data["switches"]] == plain.data["switches"]
    assert {k: v for k, v in vs.data.items() if k not in ("switches", "name", "description")} == \
        {k: v for k, v in plain.data.items() if k not in ("switches", "name", "description")}
    onoff = tcp_abr.onoff_template()
    app = next(a for a in onoff["apps"] if a["kind"] == "onoff")
    assert app["duty"] == 0.7 and app["period"] == "20 ms" and app["peak"] == "119.808 Mbit/s"


def test_the_study_answers_to_its_document_number():
    assert entry("97-0177").id == entry("tcp-abr").id == "tcp-abr"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    folder = tmp_path_factory.mktemp("r")
    options = Options(out=folder / "out", quick=True, db=folder / "r.sqlite", jobs=1)
    return run("97-0177", options, lambda *a: None), options


def test_quick_reproduction_writes_csvs_and_figures(quick):
    rep, _ = quick
    assert not rep.interrupted and not rep.failures
    names = [p.name for p in rep.files]
    assert names[:3] == ["tcp-abr.csv", "tcp-abr_comparison.csv", "tcp-abr_claims.csv"]
    assert {"tcp-abr_wan.png", "tcp-abr_sat_wan.png", "tcp-abr_wan_onoff.png", "tcp-abr_sat_sat_vsvd.png"} <= set(names)
    for p in rep.files[3:]:
        with Image.open(p) as im:
            assert im.text["Title"].endswith("(--quick)"), p.name
    df = pd.read_csv(rep.files[0])
    assert len(df) == 5
    for q in ("max_queue_cells", "tcp_throughput_mbps", "vbr_throughput_mbps", "abr_capacity_mbps", "efficiency",
              "efficiency_study", "retransmitted_segments", "cells_lost"):
        assert q in df.columns and f"{q}_ci95" in df.columns
    # The two efficiencies: the exact factor (31/32 x MSS / (cells x 53)) and the study's rounded 0.78 / 0.87.
    wan = df[df.config == "WAN"].set_index("mss_bytes")
    assert wan.max_tcp_fraction[512] == pytest.approx(512 / (12 * 53) * 31 / 32)
    assert wan.max_tcp_fraction[9140] == pytest.approx(9140 / (192 * 53) * 31 / 32)
    for mss, rounded in ((512, 0.78), (9140, 0.87)):
        r = wan.loc[mss]
        assert r.efficiency_study == pytest.approx(r.tcp_throughput_mbps / (rounded * r.abr_capacity_mbps))
        assert r.efficiency == pytest.approx(r.tcp_throughput_mbps / (r.max_tcp_fraction * r.abr_capacity_mbps),
                                             rel=1e-9)
        assert r.abr_capacity_mbps == pytest.approx(149.76 - r.vbr_throughput_mbps)
    for p in rep.files[3:]:
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size[0] > 800


def test_both_mss_of_a_row_see_the_same_video(quick):
    rep, _ = quick
    wan = pd.read_csv(rep.files[0]).query("config == 'WAN'")
    assert len(wan) == 2 and wan.vbr_throughput_mbps.nunique() == 1
    assert wan.tcp_throughput_mbps.nunique() == 2  # but TCP differs


def test_published_values_are_joined_to_their_own_configurations(quick):
    rep, _ = quick
    comp = pd.read_csv(rep.files[1])
    t1a = reference.table("tcp-abr/table1a_wan_mss512").set_index("row")
    # Row 1 at both MSS (5 values each) and the ON-OFF queue at MSS 512.
    assert len(comp) == 11
    row = comp[(comp.config == "WAN") & (comp.mss_bytes == 512)].set_index("quantity")
    assert row.published["max_queue_cells"] == t1a.max_switch_queue_cells[1]
    assert row.published["efficiency_study"] == pytest.approx(t1a.efficiency_pct_of_max[1] / 100)
    assert row.tolerance["max_queue_cells"] == "x/ 1.5" and row.tolerance["efficiency_study"] == "+/-0.05"
    points = pd.read_csv(rep.files[0])
    sim = points[(points.config == "WAN") & (points.mss_bytes == 512)].iloc[0]
    assert row.simulated["tcp_throughput_mbps"] == sim.tcp_throughput_mbps


def test_claims_are_evaluated_or_say_why_not(quick):
    rep, _ = quick
    claims = pd.read_csv(rep.files[2])
    assert list(claims.claim) == [f"C{i}" for i in range(1, 14)]
    by = claims.set_index("claim")
    # The quick subset runs no SAT+SAT point and one WAN row: those claims have no verdict.
    for c in ("C5", "C8", "C9"):
        assert isinstance(by.holds[c], float) and math.isnan(by.holds[c]), c
    # No loss and identical video across MSS hold in any run of this study.
    assert by.holds["C3"] and by.holds["C10"]


def test_the_vs_vd_configuration_reports_its_per_vc_queues(quick):
    """2 s of SAT+SAT with VS/VD at sw0 (too short for TCP to build the
    large queue: the effect itself is tested in the core,
    sim::abr_tests::test_a_vs_vd_switch_keeps_the_long_loops_queue_off_the_next_port):
    cells waited in sw0's per-VC queues, the port toward sw1 stays within
    C6's three 10 ms feedback delays, and C13 is evaluated."""
    rep, _ = quick
    df = pd.read_csv(rep.files[0]).set_index("config")
    vs = df.loc["SAT+SAT VS/VD"]
    assert vs.max_queue_cells <= 3 * 0.010 * 149.76e6 / 424
    assert 0 < vs.vs_max_queue_cells <= vs.vs_sum_max_queues_cells
    assert math.isnan(df.loc["SAT+WAN"].vs_max_queue_cells)  # no VS/VD there
    claims = pd.read_csv(rep.files[2]).set_index("claim")
    assert claims.holds["C13"] in (True, "True")


def test_another_switch_algorithm_replaces_erica_plus_at_every_port(tmp_path):
    # --algorithm charny: every grid's every switch port runs Charny's
    # algorithm on its defaults, the probes of ERICA's own readings are
    # gone (Charny's does not report them), the rest is the study's.
    from atmlab.reproduce.algorithms import READING_PROBES
    from atmlab.reproduce.kit import Options, grids_of

    own = grids_of(tcp_abr.STUDY, Options(out=tmp_path, quick=True))
    other = grids_of(tcp_abr.STUDY, Options(out=tmp_path, quick=True, algorithm="charny"))
    assert len(own) == len(other)
    for g, h in zip(own, other, strict=True):
        assert {sw["port"]["abr"]["algorithm"] for sw in g.template["switches"]} == {"erica_plus"}
        assert {sw["port"]["abr"]["algorithm"] for sw in h.template["switches"]} == {"charny"}
        assert h.name == f"{g.name} [charny]" and h.sweep == g.sweep
        kinds = {p["kind"] for p in h.template.get("probes", [])}
        assert not kinds & set(READING_PROBES)
        assert kinds == {p["kind"] for p in g.template.get("probes", [])} - set(READING_PROBES)
