"""tools/holdout_fit.py: the held-out checks of the fitted choices
(docs/reproductions/bundling.md and kpn.md, "Held-out check of the fitted
choices"). The least squares behind KP-15 is pinned on the published
Table 8 (no run); the cheapest check, kpn-h2 with one seed (about 7 s),
runs end to end."""

from __future__ import annotations

import importlib.util

import pytest

from atmlab import reference


@pytest.fixture
def tool(root):
    spec = importlib.util.spec_from_file_location("holdout_fit", root / "tools" / "holdout_fit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_least_squares_gives_h2_on_all_rows_and_the_split_is_alternate_rows(tool):
    rows = reference.table("kpn/table08_udp_throughput_vs_peak_rate").to_dict("records")
    c_a, c_x = tool.least_squares(rows)
    assert (round(c_a * 1e6, 1), round(c_x * 1e6, 1)) == (396.2, 412.9)  # testbed.H2_EMMA2: 396 us, 413 us
    fit = [rows[i]["peak_rate_mbps"] for i in tool.KPN_H2_FIT_ROWS]
    assert fit == [87.3, 70.0, 50.0, 30.0, 10.0, 2.0]
    c_a, c_x = tool.least_squares([rows[i] for i in tool.KPN_H2_FIT_ROWS])
    assert (round(c_a * 1e6, 1), round(c_x * 1e6, 1)) == (392.4, 420.3)


def test_kpn_h2_scores_both_halves(tool, capsys):
    tool.main(["kpn-h2", "-r", "1"])
    out = capsys.readouterr().out
    lines = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    default = lines["current default (H2, all 12 rows)"].split("|")
    assert default[4].strip() == "24/24" and default[6].strip() == "21/24"
    h1 = lines["H1 (Annex A, EMMA2)"].split("|")
    assert int(h1[6].strip().split("/")[0]) < 12
