"""Study 000 (bundling IP telephony with TCP on one policed VBR PVC): the grid
covers the visible tables, --quick writes its files, the model keeps the
study's stated capacity arithmetic (spec s3 note 2, s4)."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
from PIL import Image

import atmlab
from atmlab.reproduce import Options, bundling


def _run(**params: object) -> atmlab.Result:
    t = copy.deepcopy(bundling.template())
    t["params"].update(params)
    return atmlab.run(t)


def test_every_published_value_has_a_configuration():
    pub = bundling.published()
    cfgs = {(g.exp, t, u, L, w) for g in bundling.grids(quick=False)
            for t in g.sweep["n_tcp"] for u in g.sweep["n_udp"] for L in g.sweep["tsdu"] for w in g.sweep["window"]}
    keys = set(map(tuple, pub[bundling.KEY].to_numpy().tolist()))
    assert keys <= cfgs
    # A: 8 n x 4 L x 4 W, B: 7 x 4 x 4, C: 10 (WAN); D, E: 7 x 3 x 4, F: 13 (LAN).
    sizes = {g.exp: len(g.sweep["n_tcp"]) * len(g.sweep["n_udp"]) * len(g.sweep["tsdu"]) * len(g.sweep["window"])
             for g in bundling.grids(quick=False)}
    assert sizes == {"A": 128, "B": 112, "C": 10, "D": 84, "E": 84, "F": 13}
    assert len(pub) == 128 + 112 + 10


def test_quick_writes_csv_figures_and_upc_discards_nothing(tmp_path):
    rep = bundling.run(Options(out=tmp_path, quick=True, db=tmp_path / "db.sqlite", jobs=1), lambda *a, **k: None)
    assert not rep.failures and not rep.interrupted
    df = pd.read_csv(tmp_path / "bundling.csv")
    assert len(df) == 7
    assert (df["upc_discarded_cells"] == 0).all()
    a = df[df["experiment"] == "A"]
    assert a["published_tcp_throughput_kbytes_per_s"].notna().all()
    assert a["interarrival_mean_ms"].notna().all()
    for name in ("bundling_figure7.png", "bundling_figure15.png"):
        with Image.open(tmp_path / name) as im:
            assert im.size[0] > 300
    assert (tmp_path / "bundling_agreement.csv").exists()


def test_the_upc_discards_nothing_with_a_full_bundle():
    r = _run(n_tcp=1, n_udp=16, window=50, session="30 s", udp_count=3000, duration="60 s")
    assert int(r.upc["discarded"].sum()) == 0
    assert int(r.upc["cells"].sum()) > 0


def test_one_tcp_one_udp_on_the_wan_reaches_the_fluid_bound():
    # spec s3 note 2: (3759.4 - 300) cells/s / 192 cells per segment x 9140 B = 160.8 KB/s
    assert bundling.FLUID_1TCP_1UDP == pytest.approx(160.8, abs=0.05)
    r = _run(n_tcp=1, n_udp=1, window=50)
    assert int(r.upc["discarded"].sum()) == 0
    tcp = float(r.connections["transfer_throughput_bps"].iloc[0]) / 8 / 1024
    assert tcp == pytest.approx(bundling.FLUID_1TCP_1UDP, rel=0.05)
    udp = float(r.udp_flows["session_throughput_bps"].iloc[0]) / 8 / 1024
    assert udp == pytest.approx(7.8, abs=0.05)


@pytest.mark.parametrize(("n", "keeps"), [(12, True), (14, False)])
def test_voice_only_bundle_holds_twelve_streams(n, keeps):
    # s6.1.3: 3 cells per 80-byte TSDU, 300 cells/s per stream; 12 x 300 < 3759.4 cells/s < 13 x 300.
    r = _run(n_tcp=0, n_udp=n)
    thr = r.udp_flows["session_throughput_bps"] / 8 / 1024
    assert bool(thr.min() >= 7.75) is keeps
    assert int(r.udp_flows["lost"].sum()) == 0
