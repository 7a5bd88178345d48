"""KPN Table 5: every published cell count, through the whole simulator."""

from __future__ import annotations

import math

from PIL import Image

from atmlab import reference
from atmlab.reproduce import Options, kpn


def test_table5_matches_every_published_row():
    df = kpn.table5(progress=lambda _: None)
    published = reference.table("s004_table05_udp_datagram_to_cells")
    assert len(df) == len(published) == 11
    # Exact: cell counts are integers and nothing is random here.
    assert (df.simulated_cells == df.published_cells).all(), df
    assert (df.simulated_datagrams == df.published_datagrams).all(), df
    # The arithmetic the study states: 36 bytes of overhead, 48 per cell.
    sent = df[df.published_datagrams == 1]
    assert (sent.simulated_cells == [math.ceil((s + 36) / 48) for s in sent.data_size_bytes]).all()


def test_reproduction_writes_its_table_and_figure(tmp_path):
    rep = kpn.run(Options(out=tmp_path / "t5.csv"), progress=lambda _: None)
    csv, png = rep.files
    assert (csv, png) == (tmp_path / "t5.csv", tmp_path / "kpn_table5.png")
    assert csv.read_text().startswith("data_size_bytes,published_cells,simulated_cells")
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size[0] > 400
    assert "11 of 11" in rep.summary


def test_cli_reproduce_prints_the_table(cli, tmp_path):
    p = cli("reproduce", "kpn", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "11 of 11 rows match" in p.stdout
    assert (tmp_path / "kpn_table5.png").stat().st_size > 1000
