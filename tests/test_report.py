"""Reports: PNG figures and one self-contained HTML page."""

from __future__ import annotations

import re

from PIL import Image

import atmlab
from atmlab import report

from conftest import voice_sweep


def test_report_renders_a_small_sweep(tmp_path, two_hosts, cli):
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    sc["apps"].append({"kind": "tcp_bulk", "name": "ftp", "vc": "v", "tcp": {"mss": 512}})
    sc["probes"] = [{"kind": "cwnd", "app": "ftp", "interval": "5 ms"},
                    {"kind": "queue", "port": ["sw", "b"], "interval": "5 ms"}]
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(sc, replications=2).run(db, jobs=1)
    out = tmp_path / "report"
    p = cli("report", "--db", str(db), "--out", str(out))
    assert p.returncode == 0, p.stderr
    pngs = report.figure_paths(out / "index.html")
    names = {f.name for f in pngs}
    assert "voice_sweep__efficiency_vs_n.png" in names
    assert "voice_sweep__efficiency_vs_fairness.png" in names
    assert any(n.endswith("_series.png") for n in names)
    for f in pngs:
        assert f.stat().st_size > 2000
        with Image.open(f) as im:
            im.verify()
            assert im.format == "PNG"
    page = (out / "index.html").read_text()
    assert len(re.findall(r"<img ", page)) == len(pngs)
    assert page.count("data:image/png;base64,") == len(pngs)
    assert "95% confidence intervals" in page and "voice_sweep" in page


def test_report_options_and_errors(tmp_path, two_hosts, cli):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(two_hosts), replications=2).run(db, jobs=1)
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--x", "delay", "--group", "n",
            "--metric", "cell_loss_ratio")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "o" / "voice_sweep__cell_loss_ratio_vs_delay.png").exists()
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--x", "colour")
    assert p.returncode == 2 and "'colour' is not a parameter" in p.stderr
    p = cli("report", "--db", str(db), "--out", str(tmp_path / "o"), "--sweep", "nope")
    assert p.returncode == 2 and "no sweep named 'nope'" in p.stderr
