"""97-0424 reproduction: the grid covers the study's tables, the published
values are joined to the right rows, files are written, an interrupted
reproduction resumes."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from PIL import Image

from atmlab import reference
from atmlab.reproduce import Options, ubr_gr

KEY = ["config", "buffer_cells", "vbr_period_ms", "drop_policy"]


def configurations(grid: ubr_gr.Grid) -> list[dict]:
    s = grid.sweep
    return [{"config": ubr_gr.CONFIG[grid.family], "n": n, "buffer_cells": b, "variant": v, "gr": g,
             "vbr_period_ms": int(p.split()[0]), "drop_policy": pol}
            for n in s["n"] for b in s["buffer"] for v in s["variant"] for g in s["gr"] for p in s["vbr"]
            for pol in s["policy"]]


def test_the_full_grid_is_the_studys_tables():
    grids = ubr_gr.grids(quick=False)
    t12 = pd.DataFrame([c for g in grids if g.table == "1/2" for c in configurations(g)])
    eff = reference.table("ubr-gr/table01_sack_strict_priority_vbr_efficiency")
    fair = reference.table("ubr-gr/table02_sack_strict_priority_vbr_fairness")
    published = {(r.config, r.buffer_cells, r.vbr_on_ms, ubr_gr.PUBLISHED_POLICY_BACK[r.drop_policy])
                 for r in eff.itertuples()}
    assert len(eff) == len(fair) == 36
    assert set(map(tuple, t12[KEY].to_numpy().tolist())) == published
    assert (t12.n == 5).all() and (t12.variant == "sack").all() and (t12.gr == 0.0).all()
    sizes = {(g.family, g.table): len(configurations(g)) for g in grids}
    # Tables 3-6: N 5/15 x 2 buffers x 3 TCP x 3 GR x 3 policies; Tables 7-9: N 5 x the same.
    assert sizes == {("lan", "1/2"): 18, ("wan", "1/2"): 18, ("lan", "3/5"): 108, ("wan", "4/6"): 108,
                     ("satellite", "7-9"): 54}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    folder = tmp_path_factory.mktemp("r")
    options = Options(out=folder / "out", quick=True, db=folder / "r.sqlite", jobs=1)
    return ubr_gr.run(options, lambda *a: None), options


def test_quick_reproduction_writes_csv_and_figures(quick):
    rep, options = quick
    assert not rep.interrupted
    csv, *pngs = rep.files
    assert csv == options.out / "97-0424.csv"
    df = pd.read_csv(csv)
    assert {"table", "config", "n_sources", "buffer_cells", "tcp_variant", "gr", "vbr_period_ms", "drop_policy",
            "replications", "efficiency", "efficiency_ci95", "fairness", "fairness_ci95", "published_efficiency",
            "published_fairness"} <= set(df.columns)
    assert len(df) == 14 and (df.replications == 1).all()
    assert df.efficiency.between(0, 1.0001).all() and df.fairness.between(0.2 - 1e-9, 1 + 1e-9).all()
    assert [p.name for p in pngs] == ["97-0424_figure4.png", "97-0424_figure5.png"]
    for p in pngs:
        with Image.open(p) as im:
            assert im.format == "PNG" and im.size[0] > 800


def test_published_values_are_joined_to_their_own_rows(quick):
    df = pd.read_csv(quick[0].files[0])
    eff = reference.table("ubr-gr/table01_sack_strict_priority_vbr_efficiency")
    fair = reference.table("ubr-gr/table02_sack_strict_priority_vbr_fairness")
    t12 = df[df.table == "1/2"]
    assert len(t12) == 9
    for r in t12.itertuples():
        pol = ubr_gr.PUBLISHED_POLICY[r.drop_policy]
        for table, col, published in ((eff, "efficiency", r.published_efficiency),
                                      (fair, "fairness", r.published_fairness)):
            match = table[(table.config == r.config) & (table.buffer_cells == r.buffer_cells)
                          & (table.vbr_on_ms == r.vbr_period_ms) & (table.drop_policy == pol)]
            assert len(match) == 1 and match[col].iloc[0] == published
    assert df[df.table != "1/2"][["published_efficiency", "published_fairness"]].isna().all().all()


def test_interrupted_reproduction_resumes(tmp_path):
    options = Options(out=tmp_path / "t.csv", quick=True, db=tmp_path / "r.sqlite", jobs=1)
    calls = []

    def stop_after_two(message, done=None, total=None):
        calls.append(done)
        if done is not None and done >= 2:
            raise KeyboardInterrupt

    rep = ubr_gr.run(options, stop_after_two)
    assert rep.interrupted and not (tmp_path / "t.csv").exists()
    seen = []
    rep = ubr_gr.run(options, lambda m, done=None, total=None: seen.append((done, total)))
    assert not rep.interrupted and rep.files[0] == tmp_path / "t.csv"
    assert seen[0] == (2, 14), "the two finished runs are not run again"
    assert not math.isnan(pd.read_csv(tmp_path / "t.csv").efficiency.iloc[0])


def test_cli_reproduce_quick(cli, tmp_path):
    p = cli("reproduce", "97-0424", "--quick", "--out", str(tmp_path), "--db", str(tmp_path / "r.sqlite"),
            "--jobs", "1")
    assert p.returncode == 0, p.stderr
    assert "Tables 1-2" in p.stdout and "not comparable" in p.stdout
    assert (tmp_path / "97-0424_figure4.png").exists()
