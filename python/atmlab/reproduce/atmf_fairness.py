"""atmf-fairness: every ABR switch algorithm atmlab has, on the ATM Forum's
fairness test configurations, against their exact max-min fair rates.

Not one paper's study: the configurations are the ATM Forum's (Simcoe's
Generic Fairness Configurations GFC-1 and GFC-2, ATM Forum 94-0557; the
linear and the theatre parking lot; the upstream configuration; two
sources with a late starter; N sources; three sources with one
source-limited), bundled as ``scenarios/atmf/*.toml`` with persistent
sources (``kind = "abr_persistent"``: an ABR source that always has cells
and sends at its ACR). The reference is not a
published table but the max-min fair rate of every VC, computed exactly
by progressive filling (:mod:`atmlab.maxmin`, independent of the
simulator), at the target utilisation of the algorithm run.

Every algorithm of the core's switch-control seam that runs with its
default keys is run on every configuration (the list comes from the
core's scenario schema, so a new algorithm joins by itself); EFCI needs a
queue threshold, which the study sets (:data:`.algorithms.ALGORITHM_KEYS`). Each run
is measured over its second half (docs/reproductions/atmf-fairness.md):

* ``jain``: Jain's index of ``x_i / m_i`` (``x_i`` a VC's mean ACR,
  ``m_i`` its max-min rate): 1 when every VC gets the same share of its
  max-min rate; scale-free, so a common target utilisation leaves it be;
* ``max_deviation``: the largest ``|x_i / (U m_i) - 1|``, compared with 0
  within :data:`TOLERANCE` (the comparison table);
* ``min_ratio``, ``max_ratio``, ``long_ratio`` (the parking lot's long
  VC): ``x_i / (U m_i)``;
* ``convergence_s``: the first time after which every VC's ACR stays
  within 5 % of ``U m_i`` (empty if some VC never stays);
* ``acr_spread``: the largest coefficient of variation of a VC's ACR
  (the oscillation an explicit-rate scheme leaves);
* ``peak_queue_cells``, ``mean_queue_cells``: the largest maximum and
  the largest mean queue of any switch port.

``--quick`` runs every configuration with ERICA+ and EFCI for 1 s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from ..maxmin import Allocation, describe, max_min
from ..result import Result
from ..scenario import bundled, load
from .kit import Claim, Grid, Published, StudyBase, Tolerance
from .algorithms import with_algorithm
from .algorithms import names as algorithms

# The configurations: bundled scenario, the name the tables use, and the
# simulated time (long enough for the slowest explicit-rate scheme here to
# settle on the longest loop: GFC-2's 4000 km links, 60 ms round trips).
CONFIGURATIONS: tuple[tuple[str, str, str], ...] = (
    ("atmf/two_source", "two-source (late start)", "3 s"),
    ("atmf/nsource", "N-source", "3 s"),
    ("atmf/three_source", "three-source (source-limited)", "3 s"),
    ("atmf/parking_lot", "linear parking lot", "3 s"),
    ("atmf/theatre_parking_lot", "theatre parking lot", "3 s"),
    ("atmf/upstream", "upstream", "3 s"),
    ("atmf/gfc1", "GFC-1", "4 s"),
    ("atmf/gfc2", "GFC-2", "4 s"),
)
QUICK_ALGORITHMS = ("erica_plus", "efci")
QUICK_DURATION = "1 s"
# A VC's rate is within this fraction of its max-min rate (times the
# target): the band of the literature's convergence time (5 %), and above
# what ERICA+'s feedback leaves on the configurations it settles on (about
# 3 % at most, docs/reproductions/atmf-fairness.md).
TOLERANCE = 0.05
BAND = 0.05
SOURCE = "max-min (progressive filling)"


def template(scenario: str, algorithm: str) -> dict[str, Any]:
    """The bundled configuration with `algorithm` at every switch port."""
    return with_algorithm(load(bundled(scenario)).template, algorithm)


@cache
def oracle(scenario: str, algorithm: str) -> Allocation:
    """The max-min rates of `scenario` at `algorithm`'s target utilisation."""
    network = _network(scenario, algorithm)
    return max_min(network.links, network.vcs)


@cache
def demands(scenario: str, algorithm: str) -> dict[str, float]:
    """Each VC's demand limit in bit/s (its source's, its adapter's)."""
    return {vc.name: float(vc.demand) * 424.0 for vc in _network(scenario, algorithm).vcs if vc.demand is not None}


@cache
def _network(scenario: str, algorithm: str) -> Any:
    loaded = load(template(scenario, algorithm))
    return describe(loaded.data, f"{scenario} ({algorithm})")


def _label(scenario: str) -> str:
    return next(label for s, label, _ in CONFIGURATIONS if s == scenario)


def _scenario(label: str) -> str:
    return next(s for s, lab, _ in CONFIGURATIONS if lab == label)


class AtmfFairness(StudyBase):
    """The study on the reproduction kit."""

    quick_note = "--quick: ERICA+ and EFCI only, 1 s runs; rates have not settled."

    def __init__(self) -> None:
        # measure() keeps each (configuration, algorithm)'s first
        # replication's ACR series, as x_i / (U m_i), for the figures.
        self.series: dict[tuple[str, str], dict[str, tuple[list[float], list[float]]]] = {}

    def grids(self, quick: bool) -> list[Grid]:
        algs = [a for a in algorithms() if a in QUICK_ALGORITHMS] if quick else algorithms()
        return [Grid(f"{label} / {alg}", template(scenario, alg), {},
                     {"configuration": label, "algorithm": alg}, QUICK_DURATION if quick else duration)
                for scenario, label, duration in CONFIGURATIONS for alg in algs]

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, float]:
        scenario, alg = _scenario(str(config["configuration"])), str(config["algorithm"])
        target = oracle(scenario, alg)
        limit = demands(scenario, alg)
        s = result.series
        acr = s[s.kind == "acr"]
        half = result.duration_s / 2
        ratios: dict[str, float] = {}
        spreads: list[float] = []
        curves: dict[str, tuple[list[float], list[float]]] = {}
        last_out = 0.0
        converged = True
        for vc, rate in target.rates.items():
            mine = acr[acr.target == f"{vc}:forward"]
            m = float(rate) * 424.0
            if mine.empty or m <= 0:
                continue
            # A VC's rate is its ACR, or its source's limit if lower: a
            # source-limited VC sends at its application's rate whatever
            # its ACR (an ERICA switch sees its CCR, the ACR).
            r = mine.value.clip(upper=limit.get(vc, math.inf)) / m
            late = r[mine.t_s >= half]
            ratios[vc] = float(late.mean())
            mean = float(late.mean())
            spreads.append(float(late.std(ddof=0)) / mean if mean > 0 else math.nan)
            out = mine.t_s[(r - 1).abs() > BAND]
            if not out.empty:
                after = mine.t_s[mine.t_s > float(out.max())]
                if after.empty:
                    converged = False
                else:
                    last_out = max(last_out, float(after.min()))
            curves[vc] = (mine.t_s.tolist(), r.tolist())
        if result.replication == 0:
            self.series[(str(config["configuration"]), alg)] = curves
        x = list(ratios.values())
        jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if x and any(x) else math.nan
        switch_ports = result.ports[result.ports.kind == "switch"]
        return {
            "vcs": float(len(x)),
            "jain": jain,
            "max_deviation": max(abs(v - 1) for v in x) if x else math.nan,
            "min_ratio": min(x) if x else math.nan,
            "max_ratio": max(x) if x else math.nan,
            "long_ratio": ratios.get("long", math.nan),
            "late_ratio": (ratios["s1"] / ratios["s0"]) if {"s0", "s1"} <= ratios.keys() and ratios["s0"] else
            math.nan,
            "convergence_s": last_out if converged else math.nan,
            "acr_spread": max(spreads) if spreads else math.nan,
            "peak_queue_cells": float(switch_ports.max_queue.max()),
            "mean_queue_cells": float(switch_ports.mean_queue.max()),
            "cells_dropped": float(result.metric("switch_cells_dropped") or 0),
        }

    def published(self) -> list[Published]:
        """For every configuration and algorithm, the largest deviation of a
        VC's rate from its max-min rate (times the algorithm's target):
        0, within :data:`TOLERANCE`."""
        return [Published("max_deviation", 0.0, {"configuration": label, "algorithm": alg},
                          Tolerance.absolute(TOLERANCE), "", source=SOURCE,
                          note=f"rates of {len(oracle(scenario, alg).rates)} VCs")
                for scenario, label, _ in CONFIGURATIONS for alg in algorithms()]

    def claims(self, points: pd.DataFrame) -> list[Claim]:
        return claims(points)

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
        return figures(points, self.series, folder)


STUDY = AtmfFairness()


# ------------------------------------------------------------------ claims

def _value(points: pd.DataFrame, label: str, alg: str, q: str) -> float | None:
    row = points[(points.configuration == label) & (points.algorithm == alg)]
    if row.empty or pd.isna(row[q].iloc[0]):
        return None
    return float(row[q].iloc[0])


def claims(points: pd.DataFrame) -> list[Claim]:
    """What the literature reports of the algorithms on these
    configurations, each checked where its algorithm and configuration
    were run (docs/reproductions/atmf-fairness.md says where each comes
    from); a claim whose algorithm atmlab lacks, or whose runs were not
    made, has no verdict."""
    out: list[Claim] = []

    def claim(cid: str, statement: str, measure: str, threshold: str, value: float | None,
              holds: bool | None, basis: str, text: str | None = None) -> None:
        out.append(Claim(cid, statement, measure, threshold,
                         text if text is not None else (None if value is None else f"{value:.4g}"),
                         None if value is None else holds, basis))

    v = _value(points, "GFC-2", "erica_plus", "max_deviation")
    claim("F1", "ERICA+ reaches the expected max-min rates on GFC-2",
          "GFC-2, ERICA+: the largest |x / m - 1| over the 22 VCs, second half of the run",
          f"<= {TOLERANCE}", v, v is not None and v <= TOLERANCE,
          "Vandalore et al., ATM Forum 98-0408 / cs/9809041 (GFC-2 with ERICA+'s linear and hyperbolic queue "
          "control)")

    v = _value(points, "linear parking lot", "efci", "long_ratio")
    lo = _value(points, "linear parking lot", "efci", "max_ratio")
    claim("F2", "Binary (EFCI) feedback beats down the VC that crosses every congested hop of a linear parking "
          "lot: it gets less than the short VCs", "linear parking lot (3 hops), EFCI: the long VC's x / m, "
          "against the largest x / m of a short VC", "< 0.9 and below the short VCs'", v,
          v is not None and lo is not None and v < 0.9 and v < lo,
          "the beat-down problem of binary feedback (Jain, Congestion control and traffic management in ATM "
          "networks, Computer Networks and ISDN Systems 28, 1996)",
          None if v is None else f"{v:.3f} (short VCs up to {lo:.3f})")

    v = _value(points, "theatre parking lot", "efci", "jain")
    claim("F3", "On the theatre parking lot only the last hop is congested, so even binary feedback is fair in "
          "steady state", "theatre parking lot, EFCI: Jain's index of x / m", ">= 0.95", v,
          v is not None and v >= 0.95, "atmlab's reading of the configuration (one congested link)")

    for alg, name in (("erica_plus", "ERICA+"), ("erica", "ERICA")):
        worst = points[points.algorithm == alg]
        worst = worst[worst.configuration != "three-source (source-limited)"]
        v = float(worst.max_deviation.max()) if not worst.empty else None
        where = str(worst.loc[worst.max_deviation.idxmax(), "configuration"]) if not worst.empty else ""
        claim(f"F4{'a' if alg == 'erica_plus' else 'b'}", f"{name} gives every VC its max-min rate (at its target "
              "utilisation) on every configuration whose sources are all persistent",
              f"{name}: the largest |x / (U m) - 1| over the configurations but three-source", f"<= {TOLERANCE}",
              v, v is not None and v <= TOLERANCE,
              "the explicit-rate schemes' design goal (Jain et al., ERICA, ATM Forum 96-1172)",
              None if v is None else f"{v:.4g} ({where})")

    v = _value(points, "two-source (late start)", "eprca", "late_ratio")
    claim("F5", "EPRCA's rates depend on when a source starts: a late starter does not catch up",
          "two-source, EPRCA: the late VC's x / m over the early VC's", "< 0.9", v, v is not None and v < 0.9,
          "Kalyanaraman, dissertation (OSU, 1997), on EPRCA's start-time dependence (unverified there)")

    v = _value(points, "two-source (late start)", "aprc", "late_ratio")
    claim("F6", "APRC removes EPRCA's start-time dependence", "two-source, APRC: the late VC's x / m over the "
          "early VC's", "within 0.9-1.1", v, v is not None and 0.9 <= v <= 1.1,
          "Siu and Tzeng, intelligent marking (ATM Forum 94-1142)")

    v = _value(points, "two-source (late start)", "capc", "acr_spread")
    claim("F7", "CAPC has no steady-state oscillation", "two-source, CAPC: the largest coefficient of "
          "variation of a VC's ACR over the second half", "<= 0.02", v, v is not None and v <= 0.02,
          "Barnhart, CAPC (ATM Forum 94-0983), as Kalyanaraman's dissertation reports it")

    for alg, name in (("charny", "Charny's algorithm"), ("osu", "the OSU scheme")):
        v = _value(points, "GFC-2", alg, "max_deviation")
        claim(f"F8{'a' if alg == 'charny' else 'b'}", f"{name} reaches the max-min rates on GFC-2",
              f"GFC-2, {name}: the largest |x / (U m) - 1|", f"<= {TOLERANCE}", v,
              v is not None and v <= TOLERANCE,
              "Charny, Clark, Jain (ICC 1995): max-min within a bounded number of round trips" if alg == "charny"
              else "Jain et al., the OSU scheme (ATM Forum 94-0883): fair, slowly")
    return out


# ------------------------------------------------------------------ figures

def figures(points: pd.DataFrame, series: Mapping[tuple[str, str], Mapping[str, tuple[list[float], list[float]]]],
            folder: Path) -> list[Path]:
    """A table of the largest deviation from max-min (algorithm x
    configuration), and per configuration every VC's ACR over its max-min
    rate, one panel per algorithm."""
    from .. import plotting

    import matplotlib.pyplot as plt

    paths: list[Path] = []
    if points.empty:
        return paths
    configs = [label for _, label, _ in CONFIGURATIONS if label in set(points.configuration)]
    algs = [a for a in algorithms() if a in set(points.algorithm)]
    grid = [[_value(points, c, a, "max_deviation") for c in configs] for a in algs]
    fig, ax = plt.subplots(figsize=(1.2 * len(configs) + 2.5, 0.6 * len(algs) + 2.0), dpi=110)
    shown = [[math.nan if v is None else min(v, 0.5) for v in row] for row in grid]
    im = ax.imshow(shown, cmap="RdYlGn_r", vmin=0.0, vmax=0.5, aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, "" if v is None else f"{v:.1%}" if v < 10 else ">999%", ha="center", va="center",
                    fontsize=8, color="black")
    ax.set_xticks(range(len(configs)), configs, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(algs)), algs, fontsize=8)
    cbar = fig.colorbar(im, ax=ax)
    cbar.set_label("largest |x / (U m) - 1| (capped at 50 %)", fontsize=8)
    fig.suptitle("ATM Forum configurations: the largest deviation of a VC's rate from its max-min rate, per "
                 "switch algorithm (atmlab)", fontsize=10)
    paths.append(plotting.save(fig, folder / "atmf-fairness_deviation.png",
                               note=f"Second half of each run; U: the algorithm's target utilisation; within "
                                    f"{TOLERANCE:.0%} counts as reaching max-min."))
    for label in configs:
        runs = {a: series[(label, a)] for a in algs if (label, a) in series}
        if not runs:
            continue
        fig, axes = plt.subplots(len(runs), 1, figsize=(8, 1.9 * len(runs) + 1.0), dpi=110, sharex=True,
                                 squeeze=False)
        for ax, (alg, curves) in zip(axes[:, 0], runs.items(), strict=True):
            for k, (vc, (t, r)) in enumerate(curves.items()):
                ax.plot(t, r, lw=0.8, label=vc if len(curves) <= 8 else None,
                        color=plotting.COLOURS[k % len(plotting.COLOURS)],
                        linestyle=plotting.LINESTYLES[(k // len(plotting.COLOURS)) % len(plotting.LINESTYLES)])
            ax.axhspan(1 - BAND, 1 + BAND, color="0.85", zorder=0)
            ax.set_ylim(0, 2)
            ax.set_ylabel(f"{alg}\nACR / (U m)", fontsize=8)
            ax.grid(alpha=0.3)
            if len(curves) <= 8:
                ax.legend(fontsize=6, loc="upper right", ncol=4)
        plotting.unit_axis(axes[-1, 0].xaxis, "Time", "s")
        fig.suptitle(f"{label}: each VC's allowed cell rate over its max-min rate (atmlab)", fontsize=10)
        name = label.split(" (")[0].lower().replace(" ", "_").replace("-", "")
        paths.append(plotting.save(fig, folder / f"atmf-fairness_{name}.png",
                                   note=f"Grey band: within {BAND:.0%} of max-min."))
    return paths


def configurations() -> Sequence[str]:
    """The configurations' labels, in the tables' order."""
    return [label for _, label, _ in CONFIGURATIONS]
