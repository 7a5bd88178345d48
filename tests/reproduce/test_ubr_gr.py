"""ubr-gr (97-0424) reproduction: the grid covers the study's tables, the
published values are joined to the right configurations, the claims are
evaluated, files are written, an interrupted reproduction resumes."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
from PIL import Image

from atmlab import reference
from atmlab.expand import points
from atmlab.reproduce import Options, entry, run, ubr_gr

from conftest import check_alternatives

KEY = ["config", "buffer_cells", "vbr_period_ms", "drop_policy"]


def configurations(grid) -> list[dict]:
    t = copy.deepcopy(dict(grid.template))
    t["sweep"] = dict(grid.sweep)
    return [ubr_gr.STUDY.configuration(grid, p.params) for p in points("<grid>", t)]


def test_the_full_grid_is_the_studys_tables():
    grids = ubr_gr.STUDY.grids(quick=False)
    configs = pd.DataFrame([c for g in grids for c in configurations(g)])
    t12 = configs[configs.table == "1/2"]
    eff = reference.table("ubr-gr/table01_sack_strict_priority_vbr_efficiency")
    fair = reference.table("ubr-gr/table02_sack_strict_priority_vbr_fairness")
    published = {(r.config, r.buffer_cells, r.vbr_on_ms, ubr_gr.PUBLISHED_POLICY_BACK[r.drop_policy])
                 for r in eff.itertuples()}
    assert len(eff) == len(fair) == 36
    assert set(map(tuple, t12[KEY].to_numpy().tolist())) == published
    assert (t12.n_sources == 5).all() and (t12.tcp_variant == "SACK").all() and (t12.gr == 0.0).all()
    # Tables 3-6: N 5/15 x 2 buffers x 3 TCP x 3 GR x 3 policies; Tables 7-9: N 5 x the same, one table per policy.
    sizes = configs.groupby(["config", "table"]).size().to_dict()
    assert sizes == {("LAN", "1/2"): 18, ("WAN", "1/2"): 18, ("LAN", "3/5"): 108, ("WAN", "4/6"): 108,
                     ("satellite", "7"): 18, ("satellite", "8"): 18, ("satellite", "9"): 18}
    assert len(ubr_gr.STUDY.published()) == 72


def test_the_study_answers_to_its_document_number():
    assert entry("97-0424").id == entry("ubr-gr").id == "ubr-gr"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    folder = tmp_path_factory.mktemp("r")
    options = Options(out=folder / "out", quick=True, db=folder / "r.sqlite", jobs=1)
    return run("ubr-gr", options, lambda *a: None), options


def test_quick_reproduction_writes_csvs_and_figures(quick):
    rep, options = quick
    assert not rep.interrupted
    assert [p.name for p in rep.files] == ["ubr-gr.csv", "ubr-gr_comparison.csv", "ubr-gr_claims.csv",
                                           "ubr-gr_figure4.png", "ubr-gr_figure5.png"]
    for p in rep.files[3:]:
        with Image.open(p) as im:
            assert im.text["Title"].endswith("(--quick)"), p.name
    df = pd.read_csv(rep.files[0])
    assert {"table", "config", "n_sources", "buffer_cells", "tcp_variant", "gr", "vbr_period_ms", "drop_policy",
            "replications", "efficiency", "efficiency_ci95", "fairness", "fairness_ci95"} <= set(df.columns)
    assert len(df) == 14 and (df.replications == 1).all()
    assert df.efficiency.between(0, 1.0001).all() and df.fairness.between(0.2 - 1e-9, 1 + 1e-9).all()
    for p in rep.files[3:]:
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size[0] > 800


def test_published_values_are_joined_to_their_own_configurations(quick):
    rep, _ = quick
    comp = pd.read_csv(rep.files[1])
    eff = reference.table("ubr-gr/table01_sack_strict_priority_vbr_efficiency")
    points = pd.read_csv(rep.files[0])
    # 9 Table 1-2 configurations run, 2 values each.
    assert len(comp) == 18 and set(comp.source) == {"Table 1", "Table 2"}
    assert set(comp.columns) >= {"published", "simulated", "ci95", "replications", "tolerance", "unit", "holds",
                                 "note", *KEY}
    for r in comp[comp.quantity == "efficiency"].itertuples():
        pol = ubr_gr.PUBLISHED_POLICY[r.drop_policy]
        match = eff[(eff.config == r.config) & (eff.buffer_cells == r.buffer_cells)
                    & (eff.vbr_on_ms == r.vbr_period_ms) & (eff.drop_policy == pol)]
        assert len(match) == 1 and match.efficiency.iloc[0] == r.published
        sim = points[(points.table == "1/2") & (points.config == r.config) & (points.buffer_cells == r.buffer_cells)
                     & (points.vbr_period_ms == r.vbr_period_ms) & (points.drop_policy == r.drop_policy)]
        assert sim.efficiency.iloc[0] == r.simulated
        assert r.holds == (abs(r.simulated - r.published) <= 0.10 + 1e-9)
    assert rep.agreement.compared == 18 and rep.agreement.published == 72


def test_claims_are_evaluated_where_their_tables_ran(quick):
    rep, _ = quick
    claims = pd.read_csv(rep.files[2])
    assert list(claims.columns) == ["claim", "statement", "measure", "threshold", "value", "holds", "basis", "note"]
    by_id = claims.set_index("claim")
    assert by_id.loc["C1-LAN", "holds"] in (True, False)  # the quick LAN grid has 300 and 50 ms
    assert pd.isna(by_id.loc["C5", "holds"])  # one satellite TCP variant only: no verdict
    assert all(isinstance(b, str) and b for b in claims.basis)


def test_interrupted_reproduction_resumes(tmp_path):
    options = Options(out=tmp_path / "t.csv", quick=True, db=tmp_path / "r.sqlite", jobs=1)
    calls = []

    def stop_after_two(message, done=None, total=None):
        calls.append(done)
        if done is not None and done >= 2:
            raise KeyboardInterrupt

    rep = run("ubr-gr", options, stop_after_two)
    assert rep.interrupted and not (tmp_path / "t.csv").exists()
    seen = []
    rep = run("ubr-gr", options, lambda m, done=None, total=None: seen.append((done, total)))
    assert not rep.interrupted and rep.files[0] == tmp_path / "t.csv"
    assert seen[0] == (2, 14), "the two finished runs are not run again"
    assert not math.isnan(pd.read_csv(tmp_path / "t.csv").efficiency.iloc[0])


def test_cli_reproduce_quick_by_its_document_number(cli, tmp_path):
    p = cli("reproduce", "97-0424", "--quick", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert "ubr-gr" in p.stdout and "not comparable" in p.stdout and "published values within tolerance" in p.stdout
    assert (tmp_path / "ubr-gr_figure4.png").exists()


def test_the_alternatives_of_the_open_choices_set_every_grid_s_scenario():
    check_alternatives(ubr_gr.STUDY, "ubr-gr.md")
