"""The reproduction kit, end to end on a toy study: two points, one
published value, one claim; and the rules the comparison follows."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
from PIL import Image

from atmlab.reproduce import REGISTRY, entry, kit, names
from atmlab.reproduce.kit import (
    COMPARISON_COLUMNS,
    Alternative,
    Claim,
    Entry,
    Grid,
    Options,
    Published,
    StudyBase,
    Tolerance,
    compare,
    holds_in_range,
    reproduce,
    too_wide,
)

from conftest import TWO_HOSTS

# 80-byte voice datagrams every 10 ms: 64 kbit/s of user data; every 5 ms: 128.
PUBLISHED_KBPS = 64.0


class Toy(StudyBase):
    """One grid of two points (the voice interval), the throughput measured."""

    def grids(self, quick: bool) -> list[Grid]:
        t = copy.deepcopy(TWO_HOSTS)
        t["params"] = {"interval": "10 ms"}
        t["apps"][0]["interval"] = "{interval}"
        return [Grid("voice", t, {"interval": ["10 ms", "5 ms"]}, labels={"table": "T1"})]

    def measure(self, result, config):
        return {"throughput_kbps": float(result.udp_flows.loc["voice", "throughput_bps"]) / 1e3}

    def published(self):
        return [Published("throughput_kbps", PUBLISHED_KBPS, {"table": "T1", "interval": 0.01},
                          Tolerance.relative(0.05), unit="kbit/s", source="Table T1")]

    def claims(self, points):
        by = dict(zip(points["interval"], points["throughput_kbps"], strict=True))
        ratio = by[0.005] / by[0.01]
        return [Claim("K1", "Halving the interval doubles the throughput", "throughput at 5 ms / at 10 ms",
                      "2 +/- 0.01", f"{ratio:.4f}", abs(ratio - 2) <= 0.01, "arithmetic of a constant-rate source")]


def test_a_toy_study_runs_end_to_end(tmp_path):
    e = Entry("toy", "a toy study", "no document")
    options = Options(out=tmp_path / "out", db=tmp_path / "r.sqlite", jobs=1, replications=2)
    rep = reproduce(e, Toy(), options, lambda *a: None)
    assert not rep.failures and not rep.interrupted
    points = pd.read_csv(tmp_path / "out" / "toy.csv")
    # Two configurations (the swept interval, typed: seconds), two runs each.
    assert list(points["interval"]) == [0.01, 0.005] and (points["replications"] == 2).all()
    assert {"throughput_kbps", "throughput_kbps_ci95"} <= set(points.columns)
    comp = pd.read_csv(tmp_path / "out" / "toy_comparison.csv")
    assert len(comp) == 1 and set(COMPARISON_COLUMNS) <= set(comp.columns)
    row = comp.iloc[0]
    # The first datagram goes at start + a random jitter < 10 ms; in 1 s that is 100 or 99 datagrams.
    assert row["published"] == PUBLISHED_KBPS and 63.0 <= row["simulated"] <= 64.0
    assert bool(row["holds"]) and row["tolerance"] == "+/-5 %" and row["unit"] == "kbit/s"
    assert row["replications"] == 2 and row["ci95"] >= 0
    assert bool(row["in_ci95"]) == (abs(row["published"] - row["simulated"]) <= row["ci95"])
    claims = pd.read_csv(tmp_path / "out" / "toy_claims.csv")
    assert list(claims["claim"]) == ["K1"] and bool(claims["holds"].iloc[0])
    a = rep.agreement
    assert (a.published, a.compared, a.within, a.claims, a.held, a.runs) == (1, 1, 1, 1, 1, 4)
    assert "1 of 1 published values within tolerance; 1 of 1 claims hold" in rep.summary


def test_tolerance_half_widths():
    assert Tolerance.relative(0.1).half_width(-50.0) == pytest.approx(5.0)
    assert Tolerance.absolute(0.1).half_width(3.0) == 0.1
    assert Tolerance.factor(2.0).half_width(10.0) == pytest.approx(5.0)  # the lower side: 10 / 2
    for t in (Tolerance.exact(), Tolerance.at_least(1.0), Tolerance.at_most()):
        assert t.half_width(10.0) is None


def test_too_wide_counts_values_whose_interval_is_missing_or_wider_than_the_target():
    comp = pd.DataFrame([
        # width 10: a CI of 2 is within 0.25 x 10, 3 is not; one run has no CI
        {"simulated": 1.0, "ci95": 2.0, "replications": 3, "tolerance_width": 10.0},
        {"simulated": 1.0, "ci95": 3.0, "replications": 3, "tolerance_width": 10.0},
        {"simulated": 1.0, "ci95": math.nan, "replications": 1, "tolerance_width": 10.0},
        # exact values and bounds, and values not simulated, never count
        {"simulated": 1.0, "ci95": 9.0, "replications": 3, "tolerance_width": None},
        {"simulated": None, "ci95": 9.0, "replications": 3, "tolerance_width": 10.0},
    ])
    assert too_wide(comp, 0.25) == 2
    assert too_wide(comp, 0.5) == 1


def test_ci_target_adds_replications_until_the_intervals_are_narrow(tmp_path):
    # A target no spread can meet stops at the most replications allowed,
    # doubling from one (1, 2, 4), and reuses the stored runs on the way.
    options = Options(out=tmp_path / "out", db=tmp_path / "r.sqlite", jobs=1, ci_target=1e-12, max_replications=4)
    rep = reproduce(Entry("toy", "a toy study", "no document"), Toy(), options, lambda *a: None)
    points = pd.read_csv(tmp_path / "out" / "toy.csv")
    comp = pd.read_csv(tmp_path / "out" / "toy_comparison.csv")
    spread = comp.ci95.iloc[0] > 0
    assert (points.replications == (4 if spread else 2)).all() and rep.agreement.runs == 2 * points.replications[0]
    assert "compared values have a 95% interval within 1e-12 x their tolerance" in rep.summary
    assert comp.tolerance_width.iloc[0] == pytest.approx(0.05 * PUBLISHED_KBPS)
    # A loose target is met at once with two runs (a CI exists).
    options = Options(out=tmp_path / "out2", db=tmp_path / "r.sqlite", jobs=1, ci_target=1.0)
    reproduce(Entry("toy", "a toy study", "no document"), Toy(), options, lambda *a: None)
    assert (pd.read_csv(tmp_path / "out2" / "toy.csv").replications == 2).all()


def test_a_published_value_that_misses_says_no(tmp_path):
    class Strict(Toy):
        def published(self):
            return [Published("throughput_kbps", 80.0, {"table": "T1", "interval": 0.01}, Tolerance.relative(0.05))]

    rep = reproduce(Entry("strict", "t", "d"), Strict(), Options(out=tmp_path, db=tmp_path / "r.sqlite", jobs=1),
                    lambda *a: None)
    assert (rep.agreement.compared, rep.agreement.within) == (1, 0)


@pytest.mark.parametrize(("published", "simulated", "ci95", "inside"), [
    (64.0, 63.5, 0.5, True),     # on the edge
    (64.0, 63.5, 0.49, False),   # just outside
    (64.0, 64.0, 0.0, True),     # every run the same, and equal
    (64.0, 63.0, math.nan, None),  # one replication: no interval
    (64.0, "n/a", 1.0, None),
])
def test_in_ci95_says_whether_the_published_value_is_within_the_simulated_interval(published, simulated, ci95,
                                                                                    inside):
    from atmlab.reproduce.kit import in_interval

    assert in_interval(published, simulated, ci95) is inside


@pytest.mark.parametrize(("tolerance", "published", "simulated", "holds"), [
    (Tolerance.absolute(0.1), 0.5, 0.6, True),
    (Tolerance.absolute(0.1), 0.5, 0.61, False),
    (Tolerance.exact(), 121, 121, True),
    (Tolerance.exact(), 121, 122, False),
    (Tolerance.relative(0.1), 200, 180, True),
    (Tolerance.relative(0.1), 200, 179, False),
    (Tolerance.factor(1.5), 1000, 1500, True),
    (Tolerance.factor(1.5), 1000, 666, False),
    (Tolerance.factor(1.5), 1000, 667, True),
    (Tolerance.at_least(), 100, 100, True),
    (Tolerance.at_least(), 100, 99, False),
    (Tolerance.at_most(1), 100, 101, True),
    (Tolerance.absolute(0.1), 0.5, math.nan, None),
])
def test_tolerances(tolerance, published, simulated, holds):
    assert tolerance.holds(published, simulated) is holds


def test_a_published_value_is_found_by_value_whatever_the_number_type():
    points = pd.DataFrame([{"n": 5, "gr": 0.1, "policy": "epd", "q": 1.0}])
    pub = [Published("q", 1.0, {"n": 5.0, "gr": 0.1, "policy": "epd"}, Tolerance.exact()),
           Published("q", 1.0, {"n": 15, "gr": 0.1, "policy": "epd"}, Tolerance.exact())]
    comp = compare(pub, points)
    assert len(comp) == 1 and bool(comp["holds"].iloc[0])


def test_one_registry_one_id_per_study_with_aliases():
    ids = [e.id for e in REGISTRY]
    assert len(set(ids)) == len(ids) and set(names()) >= set(ids) | {"97-0424"}
    for e in REGISTRY:
        assert entry(e.id) is e
        assert e.module == f"atmlab.reproduce.{e.id.replace('-', '_')}"
    with pytest.raises(KeyError):
        entry("no-such-study")


class ToyWithChoices(Toy):
    """The toy whose payload is an open choice: 80 bytes (chosen), 40 or 160."""

    def alternatives(self):
        return [Alternative("TOY-1", "40-byte payload", ("apps[0].payload=40 bytes",)),
                Alternative("TOY-1", "160-byte payload", ("apps[0].payload=160 bytes",))]


def test_open_choices_report_each_compared_value_s_range_and_keep_the_verdict(tmp_path):
    e = Entry("toy", "a toy study", "no document")
    plain = reproduce(e, ToyWithChoices(), Options(out=tmp_path / "a", db=tmp_path / "r.sqlite", jobs=1),
                      lambda *a: None)
    assert "open_low" not in pd.read_csv(tmp_path / "a" / "toy_comparison.csv").columns
    rep = reproduce(e, ToyWithChoices(), Options(out=tmp_path / "b", db=tmp_path / "r.sqlite", jobs=1,
                                                 open_choices=True), lambda *a: None)
    assert not rep.failures and "2 alternatives of 1 open choices run" in rep.summary
    row = pd.read_csv(tmp_path / "b" / "toy_comparison.csv").iloc[0]
    # The chosen model's value and verdict, unchanged; the range spans half to twice it.
    assert row["simulated"] == pd.read_csv(tmp_path / "a" / "toy_comparison.csv").iloc[0]["simulated"]
    assert bool(row["holds"]) and row["open_alternatives"] == 2
    assert row["open_low"] == pytest.approx(row["simulated"] / 2, rel=0.02)
    assert row["open_high"] == pytest.approx(row["simulated"] * 2, rel=0.02)
    assert bool(row["holds_in_open_range"])
    assert plain.agreement.within == rep.agreement.within == 1
    # The figure of the range: written when the alternatives ran, not otherwise.
    figure = tmp_path / "b" / "toy_open_choices.png"
    assert figure in rep.files and figure.stat().st_size > 0
    assert not (tmp_path / "a" / "toy_open_choices.png").exists()
    assert not any(f.name.endswith("_open_choices.png") for f in plain.files)
    with Image.open(figure) as png:
        assert png.info["Title"].startswith("toy: the compared values under the open choices (2 alternatives of 1 choice)")


def test_open_choices_of_a_study_without_alternatives_draw_no_figure(tmp_path):
    e = Entry("toy", "a toy study", "no document")
    rep = reproduce(e, Toy(), Options(out=tmp_path, db=tmp_path / "r.sqlite", jobs=1, open_choices=True),
                    lambda *a: None)
    assert "this study declares no alternatives" in rep.summary
    assert not (tmp_path / "toy_open_choices.png").exists()


def _comparison(published: list[float], quantity: str = "q") -> pd.DataFrame:
    n = len(published)
    return pd.DataFrame({"source": ["T"] * n, "quantity": [quantity] * n, "published": published,
                         "simulated": [p * 1.1 + 1 for p in published], "ci95": [0.05] * n,
                         "tolerance_width": [0.1 * abs(p) for p in published], "unit": ["s"] * n,
                         "open_low": [p * 0.9 for p in published], "open_high": [p * 1.3 + 1 for p in published]})


def test_the_open_choices_figure_draws_every_value_it_can_and_says_what_it_leaves_out(tmp_path):
    alts = [Alternative("X-1", "a", ("simulation.seed=2",))]
    many = pd.concat([_comparison([1.0 + k for k in range(kit.OPEN_FIGURE_VALUES + 5)], "a"),
                      _comparison([0.0, 2.0], "b")], ignore_index=True)
    from matplotlib import pyplot as plt

    before = set(plt.get_fignums())  # figures another test may have left open
    path = kit.open_choices_figure("toy", many, tmp_path / "toy_open_choices.png", alts)
    assert path == tmp_path / "toy_open_choices.png" and path.stat().st_size > 0
    assert set(plt.get_fignums()) <= before  # saved and closed
    # Nothing to draw: every published value is 0 (no ratio), or nothing compared.
    assert kit.open_choices_figure("toy", _comparison([0.0, 0.0]), tmp_path / "zero.png", alts) is None
    assert not (tmp_path / "zero.png").exists()
    assert kit.open_choices_figure("toy", _comparison([]), tmp_path / "none.png", alts) is None


def test_the_open_choices_figure_notes_the_values_it_leaves_out(tmp_path, monkeypatch):
    from matplotlib import pyplot as plt

    from atmlab import plotting

    notes = []

    def save(fig, path, note=None, dpi=None):
        notes.append(note)
        plt.close(fig)
        return path

    monkeypatch.setattr(plotting, "save", save)
    many = pd.concat([_comparison([1.0 + k for k in range(kit.OPEN_FIGURE_VALUES + 5)], "a"),
                      _comparison([0.0, 2.0], "b")], ignore_index=True)
    kit.open_choices_figure("toy", many, tmp_path / "x.png", [Alternative("X-1", "a", ())])
    assert f"Of a, the first {kit.OPEN_FIGURE_VALUES} of {kit.OPEN_FIGURE_VALUES + 5} values drawn." in notes[0]
    assert "1 value published as 0 not drawn" in notes[0]


@pytest.mark.parametrize("published, low, high, holds", [
    (100.0, 90.0, 110.0, True),     # inside
    (100.0, 101.0, 120.0, True),    # within 5 % of the low end
    (100.0, 106.0, 120.0, False),   # beyond tolerance of both ends
    (100.0, math.nan, 120.0, None),
])
def test_holds_in_range(published, low, high, holds):
    assert holds_in_range(Tolerance.relative(0.05), published, low, high) == holds
