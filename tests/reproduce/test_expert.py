"""Study 002 (EXPERT) reproduction: the grids are docs/reproductions/expert.md's, the --quick
path writes the points, the comparison, the claims and the figures, and the
model obeys the physics the claims rest on (a loss-free buffer loses
nothing; EPD with b = 0 is PPD, bit for bit)."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
from PIL import Image

import atmlab
from atmlab.expand import points as expand_points
from atmlab.reproduce import Options, run
from atmlab.reproduce.expert import STUDY, claims, configurations
from atmlab.reproduce.expert.configurations import BOTTLENECK, EPD, LOSS_FREE, PPD, Config, describe, scenario
from atmlab.reproduce.kit import CLAIM_COLUMNS

from conftest import check_alternatives

CELL_RATE = 37.44e6 / 424  # the shaped VP of s3.1, cells per second (88302)


def grid_points(grid) -> list[Config]:
    """The configurations of a grid's points, as the kit finds them (the sweep's own points)."""
    t = copy.deepcopy(dict(grid.template))
    t["sweep"] = dict(grid.sweep)
    return [Config.of(grid.labels, p.params) for p in expand_points("<grid>", t)]


def test_frame_sizes_and_loss_free_goodput_are_the_specs():
    # MTU* 32 / 91 / 192 cells ((MTU + 16) / 48 rounded up, the core's arithmetic); 32.23 / 33.47 / 33.63
    # Mbit/s at 88302 cells/s.
    assert [configurations.frame_cells(m) for m in (1500, 4352, 9180)] == [32, 91, 192]
    for mtu, mbps in ((1500, 32.23), (4352, 33.47), (9180, 33.63)):
        r = atmlab.run(scenario(Config(mtu=mtu, **EPD(1)), "20 ms"), seed=1)
        basis = r.raw["efficiency_basis"]
        assert basis["link"] == BOTTLENECK and round(basis["max_goodput_bps"] / 1e6, 2) == mbps
        spec = (mtu - 40) * 8 * CELL_RATE / configurations.frame_cells(mtu)
        assert basis["max_goodput_bps"] == pytest.approx(spec, rel=1e-12)
    # s3.2's thresholds, EPDth = B - b MTU*.
    assert [Config(buffer=1088, **EPD(b)).threshold for b in (1, 2, 4)] == [997, 906, 724]
    assert Config(mtu=9180, buffer=725, **EPD(4)).threshold == -43


def test_the_full_grid_is_the_spec_s():
    exps = configurations.experiments(quick=False)
    e1 = exps["E1"]
    assert len(e1) == 8 * 3 + 1 and {c.buffer for c in e1} == {*configurations.BUFFERS, LOSS_FREE}
    assert len(exps["E3"]) == 2 * 8 * 5 + 2
    assert {c.dupack for c in exps["E4"]} == {1, 3, 10} and {c.mtu for c in exps["E4"]} == {9180}
    assert {(c.b, c.policy) for c in exps["E6"]} == {(0, "ubr"), (0, "ppd"), *((b, "epd") for b in range(1, 5))}
    assert {c.n for c in exps["E7"]} == {16} and {c.tcp for c in exps["E8"]} == {"modified"}
    assert {(c.mtu, c.timer_ms, c.tcp) for c in exps["E5"]} == {(1500, 200, "modified"), (1500, 20, "modified")}
    configs = configurations.configurations(quick=False)
    # Skipped, not clamped (atmlab's choice): EPDth < 1 cell.
    assert {(c.mtu, c.buffer, c.b) for c in configurations.skipped()} == {
        (9180, 363, 4), (9180, 544, 4), (9180, 725, 4), (9180, 363, 2), (4352, 363, 4)}
    # b = 0 is run once, as PPD.
    assert not any(c.policy == "epd" and c.b == 0 for c in configs)
    # The grids run every feasible configuration once, and the kit finds each point's configuration again.
    ran = [c for g in STUDY.grids(quick=False) for c in grid_points(g)]
    assert len(ran) == len(set(ran)) == len(configs) - 5 == 205
    assert set(ran) == set(configurations.runnable())
    assert configurations.experiments_of(Config(buffer=725, policy="ppd", b=0)) == "E1 E3 E6"


def test_epd_with_b_zero_is_ppd_bit_for_bit():
    # s3.2: "if the EPD threshold equals the switch buffer size, EPD is equivalent to PPD" - with ">" it is exact.
    for buffer in (363, 725):
        epd0 = atmlab.run(scenario(Config(buffer=buffer, policy="epd", b=0), "3 s"), seed=5)
        ppd = atmlab.run(scenario(Config(buffer=buffer, **PPD), "3 s"), seed=5)
        assert epd0.ports.loc[BOTTLENECK, "dropped"] > 0, "the comparison needs losses"
        assert epd0.to_json() == ppd.to_json()
    epd1 = atmlab.run(scenario(Config(buffer=725, **EPD(1)), "3 s"), seed=5)
    assert epd1.to_json() != ppd.to_json()


def test_the_bottleneck_is_the_shaped_vp_and_efficiency_is_the_spec_s():
    c = Config(buffer=1088, **EPD(1))
    r = atmlab.run(scenario(c, "2 s"), seed=1)
    port = r.ports.loc[BOTTLENECK]
    assert port.rate_bps == 37_440_000
    m = STUDY.measure(r, describe(c))
    # s3.2's efficiency, derived: goodput over MSS x 88302 / MTU* (bits per second).
    spec = r.connections.goodput_bps.sum() / (4312 * 8 * CELL_RATE / 91)
    assert m["efficiency"] == pytest.approx(spec, rel=1e-12) and m["efficiency"] == r.efficiency
    assert m["idle_cell_ratio"] == pytest.approx(1 - port.utilization)
    assert m["clr"] == port.dropped / port.cells_in


def test_fer_and_dead_cells_of_the_receivers_match_the_frame_counts():
    # measure() reads the receivers' AAL5 counters; the run's frame counts give the same FER and dead cells (the
    # reverse path is lossless, so every lost or corrupt frame is a data frame).
    c = Config(buffer=725, **PPD)
    r = atmlab.run(scenario(c, "3 s"), seed=2)
    m = STUDY.measure(r, describe(c))
    frames = r.frames
    bad = frames["discarded_by_receivers"]
    good = r.connections.segments_sent.sum() - frames["lost"] - frames["in_flight"]
    cells = sum(p.cells_out for name, p in r.ports.iterrows() if name.startswith("sw1->dst"))
    assert m["fer"] > 0 and m["dead_cell_ratio"] > 0
    assert bad / (good + bad) == pytest.approx(m["fer"], rel=0.02)
    assert frames["dead_cells"] / cells == pytest.approx(m["dead_cell_ratio"], rel=0.02)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    folder = tmp_path_factory.mktemp("expert")
    options = Options(out=folder / "out", quick=True, db=folder / "r.sqlite", jobs=1)
    return run("expert", options, lambda *a, **k: None), options


def test_quick_reproduction_writes_points_comparison_claims_and_figures(quick):
    rep, options = quick
    assert not rep.interrupted and not rep.failures
    csv, comparison_csv, claims_csv, *pngs = rep.files
    assert csv == options.out / "expert.csv" and claims_csv == options.out / "expert_claims.csv"
    assert comparison_csv == options.out / "expert_comparison.csv"
    df = pd.read_csv(csv)
    assert {"experiments", "tcp", "n_sources", "mtu_bytes", "frame_cells", "buffer_cells", "policy", "b",
            "epd_threshold_cells", "dupack_threshold", "timer_ms", "replications", "efficiency",
            "efficiency_ci95", "fairness", "fairness_ci95", "fairness_of_means", "clr", "fer", "dead_cell_ratio",
            "idle_cell_ratio", "timeouts", "fast_retransmits", "timeout_share"} <= set(df.columns)
    assert not any(c.startswith("goodput_bps:") for c in df.columns)
    assert len(df) == len(configurations.runnable(quick=True)) == 15
    # The quick grid's infeasible point (EPDth = -43 cells) is skipped, not run.
    assert [(c.mtu, c.buffer, c.b, c.threshold) for c in configurations.skipped(quick=True)] == [(9180, 725, 4, -43)]
    assert (df.epd_threshold_cells.dropna() >= 1).all()
    assert (df.replications == 1).all() and df.efficiency.between(0, 1.0001).all()
    assert df.fairness.between(1 / 16 - 1e-9, 1 + 1e-9).all()
    # One run per configuration: the index of the mean goodputs is the run's own index.
    assert df.fairness_of_means.to_numpy() == pytest.approx(df.fairness.to_numpy(), rel=1e-12)
    assert [p.name for p in pngs] == ["expert_fig2-4_efficiency_vs_buffer.png", "expert_fairness_vs_buffer.png",
                                      "expert_fig5-6_dupack.png", "expert_fig11-16_vs_b.png",
                                      "expert_fig7-10_campaign2.png"]
    for p in pngs:
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size[0] > 800
            assert im.text["Title"].endswith("(--quick)"), p.name


def test_published_numbers_are_compared_at_their_own_configurations(quick):
    rep, _ = quick
    comp = pd.read_csv(rep.files[1])
    df = pd.read_csv(rep.files[0])
    # --quick runs EPD b=1 at 1088 cells, MTU 4352: C3c (efficiency) and C8a (frame loss ratio); not C3a, C3b, C8b.
    assert list(comp.source.str.split(" ").str[0]) == ["C3c", "C8a"]
    point = df[(df.mtu_bytes == 4352) & (df.buffer_cells == 1088) & (df.policy == "EPD") & (df.b == 1)
               & (df.n_sources == 4) & (df.tcp == "default")]
    assert len(point) == 1
    for r in comp.itertuples():
        assert r.simulated == point[r.quantity].iloc[0]
        assert r.holds == (abs(r.simulated - r.published) <= {"efficiency": 0.03, "fer": 0.02}[r.quantity] + 1e-9)
    by_id = pd.read_csv(rep.files[2]).set_index("claim")
    assert by_id.loc["C3c", "holds"] == comp.set_index(comp.source.str.split(" ").str[0]).loc["C3c", "holds"]
    assert rep.agreement.published == 5 and rep.agreement.compared == 2


def test_claims_table_has_every_claim_and_its_columns(quick):
    rep, _ = quick
    table = pd.read_csv(rep.files[2])
    assert list(table.columns) == list(CLAIM_COLUMNS)
    ref = claims.table()
    assert list(table.claim) == list(ref.claim) and len(ref) == 36
    assert ref.source.str.startswith("s").all() and ref.source.str.contains('"').all()
    assert table.basis.map(lambda b: isinstance(b, str) and b != "").all()
    by_id = table.set_index("claim")
    c3c = by_id.loc["C3c"]
    assert c3c.threshold == "abs(simulated - 0.93) <= 0.03" and "published: 0.93 +/- 0.03" in c3c.note
    assert isinstance(c3c.value, str) and c3c.holds in (True, False)
    assert pd.isna(by_id.loc["C3a", "holds"]) and "not run (UBR B=1088)" in by_id.loc["C3a", "note"]
    assert "claims hold" in rep.summary and "not comparable" in rep.summary


def test_a_claim_fails_when_the_simulated_value_is_off(quick):
    df = pd.read_csv(quick[0].files[0])
    row = (df.mtu_bytes == 4352) & (df.buffer_cells == 1088) & (df.policy == "EPD") & (df.b == 1) & (df.n_sources == 4)
    assert row.sum() == 1
    verdicts = {}
    for value in (0.93, 0.95, 0.5):
        df.loc[row, "efficiency"] = value
        verdicts[value] = {c.claim: c.holds for c in claims.claims(df)}["C3c"]
    assert verdicts == {0.93: True, 0.95: True, 0.5: False}


def test_a_loss_free_buffer_loses_nothing_and_is_efficient(quick):
    df = pd.read_csv(quick[0].files[0])
    free = df[df.buffer_cells == LOSS_FREE].iloc[0]
    assert free.clr == 0 and free.fer == 0 and free.dead_cell_ratio == 0
    # 5 s with a ~0.2 s start (delayed ACK of the first segment) and slow start: still above 0.9.
    assert free.efficiency > 0.9 and free.fairness > 0.99
    small = df[(df.buffer_cells == 725) & (df.mtu_bytes == 4352) & (df.n_sources == 4) & (df.tcp == "default")]
    assert (small.clr > 0).all(), "a buffer below one window loses cells"
    # EPD refuses whole frames: fewer dead cells than plain UBR's tail drop.
    by = small.set_index("policy")
    assert by.loc["UBR", "dead_cell_ratio"] > by.loc["EPD"].dead_cell_ratio.min()
    assert not math.isnan(by.loc["UBR", "idle_cell_ratio"])


def test_cli_reproduce_expert_quick(cli, tmp_path):
    p = cli("reproduce", "expert", "--quick", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert "claims hold" in p.stdout and "not comparable" in p.stdout and "E6 (Fig. 11)" in p.stdout
    assert (tmp_path / "expert_claims.csv").exists() and (tmp_path / "expert_fig11-16_vs_b.png").exists()


def test_the_alternatives_of_the_open_choices_set_every_grid_s_scenario():
    check_alternatives(STUDY, "expert.md")
