"""ubr-gr (ATM Forum 97-0424; Goyal, Jain, Kalyanaraman, Fahmy, Vandalore,
Cai, Kim, Kota 1997): "Guaranteed Rate for Improving TCP Performance on UBR+
over Terrestrial and Satellite Networks".

Every configuration of the study's Tables 1-9, run on the configuration
families ``scenarios/ubr-gr/{lan,wan,satellite}.toml`` with one set of
defaults (docs/reproductions/ubr-gr.md):

* Tables 1-2: SACK, N = 5, GR = 0 (strict priority), VBR ON = OFF = 300, 100,
  50 ms; LAN buffers 1000/3000, WAN 12000/36000 cells; tail drop, EPD,
  Selective Drop. Efficiency (Table 1) and fairness (Table 2) are published
  and compared within +/-0.10.
* Tables 3-6: LAN and WAN, N = 5 and 15, the same buffers, SACK/Reno/Vanilla,
  GR = 0.5/0.1/0.0, the three policies, VBR 300 ms (published numbers
  withheld).
* Tables 7-9: satellite, N = 5, buffers 200000/600000, the same TCP x GR grid,
  Selective Drop (7), EPD (8), tail drop (9) (withheld).

The study's conclusions (s5) are checked as claims on the simulated tables.
``--quick`` runs a small subset with short durations (for CI); its numbers
are not comparable with the study's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import quantity, reference
from ..result import Result
from ..scenario import load
from .kit import Alternative, Claim, Grid, Published, StudyBase, Tolerance

CONFIG = {"lan": "LAN", "wan": "WAN", "satellite": "satellite"}
VARIANT = {"sack": "SACK", "reno": "Reno", "vanilla": "Vanilla"}
POLICIES = ("tail_drop", "epd", "selective_drop")
# The names the published CSVs use.
PUBLISHED_POLICY = {"tail_drop": "UBR (tail drop)", "epd": "EPD", "selective_drop": "Selective Drop"}
PUBLISHED_POLICY_BACK = {v: k for k, v in PUBLISHED_POLICY.items()}
SATELLITE_TABLE = {"selective_drop": "7", "epd": "8", "tail_drop": "9"}
BUFFERS = {"lan": [1000, 3000], "wan": [12000, 36000], "satellite": [200000, 600000]}
VARIANTS = ["sack", "reno", "vanilla"]
GRS = [0.5, 0.1, 0.0]
# Tables 1-2 are compared within this (an efficiency or fairness index,
# both in [0, 1]; docs/reproductions/ubr-gr.md says why).
TOLERANCE = Tolerance.absolute(0.10)
# How atmlab reads the study's words in its claims (one reading for all):
# "significantly" / "the highest" / "best" need a difference of this much
# efficiency between group means; "do not matter much" allows a spread of
# at most this.
DIFFERENT = 0.05


def template(family: str) -> dict[str, Any]:
    ref = resources.files("atmlab") / "scenarios" / "ubr-gr" / f"{family}.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def _grid(family: str, table: str, sweep: dict[str, list[Any]], duration: str | None = None) -> Grid:
    return Grid(f"Table {table} {CONFIG[family]}", template(family), sweep,
                labels={"table": table, "config": CONFIG[family]}, duration=duration)


class UbrGr(StudyBase):
    """The study on the reproduction kit."""

    def grids(self, quick: bool) -> list[Grid]:
        """The configurations of Tables 1-9 (or the --quick subset)."""
        if quick:
            return [
                _grid("lan", "1/2", {"n": [5], "buffer": [1000], "variant": ["sack"], "gr": [0.0],
                                     "vbr": ["300 ms", "50 ms"], "policy": list(POLICIES)}, "1 s"),
                _grid("wan", "1/2", {"n": [5], "buffer": [12000], "variant": ["sack"], "gr": [0.0],
                                     "vbr": ["300 ms"], "policy": list(POLICIES)}, "2 s"),
                _grid("lan", "3/5", {"n": [5], "buffer": [1000], "variant": ["sack", "reno"], "gr": [0.5, 0.0],
                                     "vbr": ["300 ms"], "policy": ["selective_drop"]}, "1 s"),
                _grid("satellite", "7-9", {"n": [5], "buffer": [200000], "variant": ["sack"], "gr": [0.5],
                                           "vbr": ["300 ms"], "policy": ["selective_drop"]}, "3 s"),
            ]
        out = []
        for fam, gr_table in (("lan", "3/5"), ("wan", "4/6")):
            out.append(_grid(fam, "1/2", {"n": [5], "buffer": BUFFERS[fam], "variant": ["sack"], "gr": [0.0],
                                          "vbr": ["300 ms", "100 ms", "50 ms"], "policy": list(POLICIES)}))
            out.append(_grid(fam, gr_table, {"n": [5, 15], "buffer": BUFFERS[fam], "variant": VARIANTS, "gr": GRS,
                                             "vbr": ["300 ms"], "policy": list(POLICIES)}))
        out.append(_grid("satellite", "7-9", {"n": [5], "buffer": BUFFERS["satellite"], "variant": VARIANTS,
                                              "gr": GRS, "vbr": ["300 ms"], "policy": list(POLICIES)}))
        return out

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        p = quantity.typed(params)
        table = grid.labels["table"]
        if table == "7-9":  # the satellite tables are one per drop policy
            table = SATELLITE_TABLE[p["policy"]]
        return {"table": table, "config": grid.labels["config"], "n_sources": p["n"], "buffer_cells": p["buffer"],
                "tcp_variant": VARIANT[p["variant"]], "gr": float(p["gr"]),
                "vbr_period_ms": round(p["vbr"].value * 1000), "drop_policy": p["policy"]}

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, float]:
        return {"efficiency": result.efficiency, "fairness": result.fairness}

    def published(self) -> list[Published]:
        """Tables 1 (efficiency) and 2 (fairness), 36 values each."""
        out = []
        for name, quantity_, source in (("ubr-gr/table01_sack_strict_priority_vbr_efficiency", "efficiency",
                                         "Table 1"),
                                        ("ubr-gr/table02_sack_strict_priority_vbr_fairness", "fairness", "Table 2")):
            for r in reference.table(name).itertuples():
                config = {"table": "1/2", "config": r.config, "buffer_cells": int(r.buffer_cells),
                          "vbr_period_ms": int(r.vbr_on_ms), "drop_policy": PUBLISHED_POLICY_BACK[r.drop_policy]}
                out.append(Published(quantity_, float(getattr(r, quantity_)), config, TOLERANCE, source=source))
        return out

    def claims(self, points: pd.DataFrame) -> list[Claim]:
        return claims(points)

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
        return figures(points, comparison, folder)

    def alternatives(self) -> list[Alternative]:
        """The open choices whose alternatives the page names and a key of
        every template sets (docs/reproductions/ubr-gr.md, "Open choices"):
        the fit UG-13 and the timer choices that carry the WAN rows. UG-1 to
        UG-3 are keys of the EPD and Selective Drop policies only, which
        tail drop refuses, and every grid sweeps the three policies: they
        cannot be set on every grid's scenario."""
        return [
            Alternative("UG-13", "link clocks +/-20 ppm", ("simulation.clock_tolerance_ppm=20",)),
            Alternative("UG-18", "4.4BSD-Lite RTO estimator", ('tcp.rto_algorithm="bsd44_lite"',)),
            Alternative("UG-18", "4.3BSD-Tahoe RTO estimator", ('tcp.rto_algorithm="bsd43_tahoe"',)),
            Alternative("UG-19", "timeouts exactly when due", ('tcp.rto_timer="exact"',)),
            Alternative("UG-21", "initial RTO 6 s", ('tcp.initial_rto="6 s"',)),
            # apps[0]: the TCP sources' entry of every template (the VBR source is the last)
            Alternative("UG-11", "TCP sources all start at t = 0", ('apps[0].start_jitter="0 s"',)),
        ]


STUDY = UbrGr()


# ------------------------------------------------------------------ claims

def _means(points: pd.DataFrame, config: str, tables: Sequence[str], factor: str) -> dict[Any, float]:
    part = points[(points["config"] == config) & points["table"].isin(tables)]
    return {k: float(g["efficiency"].mean()) for k, g in part.groupby(factor, sort=False)}


def _f(x: float) -> str:
    return f"{x:.3f}"


def claims(points: pd.DataFrame) -> list[Claim]:
    """The study's conclusions (s5; reference README s2.3), each on the
    group means of the tables it speaks of. A claim whose tables were not
    run has no verdict."""
    basis = (f"atmlab's reading of the study's comparative words: a difference of at least {DIFFERENT} in "
             "mean efficiency (one reading for every claim)")
    out: list[Claim] = []

    def claim(cid: str, statement: str, measure: str, threshold: str, value: str | None, holds: bool | None,
              b: str = basis) -> None:
        out.append(Claim(cid, statement, measure, threshold, value, holds, b))

    for config in ("LAN", "WAN"):
        by_vbr = _means(points, config, ["1/2"], "vbr_period_ms")
        ok = {300, 50} <= set(by_vbr)
        claim(f"C1-{config}", "Longer VBR bursts (same 50 % mean) give lower TCP efficiency (Table 1)",
              f"{config}: mean efficiency of Table 1 at VBR 300 ms and at 50 ms",
              "300 ms below 50 ms", f"{_f(by_vbr[300])} vs {_f(by_vbr[50])}" if ok else None,
              by_vbr[300] < by_vbr[50] if ok else None, "the study's own ordering (s5.1)")

    lan = _means(points, "LAN", ["3/5"], "drop_policy")
    ok = {"selective_drop", "tail_drop", "epd"} <= set(lan)
    claim("C2", "LAN: Selective Drop significantly improves performance (Tables 3, 5)",
          "LAN, Tables 3/5: mean efficiency of Selective Drop minus the better of tail drop and EPD",
          f">= {DIFFERENT}", _f(lan["selective_drop"] - max(lan["tail_drop"], lan["epd"])) if ok else None,
          lan["selective_drop"] - max(lan["tail_drop"], lan["epd"]) >= DIFFERENT if ok else None)

    wan = _means(points, "WAN", ["4/6"], "gr")
    ok = {0.5, 0.1, 0.0} <= set(wan)
    claim("C3", "WAN: GR 0 hurts; GR 0.5 and 0.1 give the highest efficiency (Tables 4, 6)",
          "WAN, Tables 4/6: mean efficiency of GR 0.5 and of GR 0.1, each minus that of GR 0",
          f"both >= {DIFFERENT}", f"{_f(wan[0.5] - wan[0.0])}, {_f(wan[0.1] - wan[0.0])}" if ok else None,
          min(wan[0.5], wan[0.1]) - wan[0.0] >= DIFFERENT if ok else None)

    lan_p, wan_p = _means(points, "LAN", ["3/5"], "drop_policy"), _means(points, "WAN", ["4/6"], "drop_policy")
    ok = len(lan_p) == len(wan_p) == 3
    spread = (max(wan_p.values()) - min(wan_p.values()), max(lan_p.values()) - min(lan_p.values())) if ok else None
    claim("C4", "WAN: the drop policy matters less than on the LAN",
          "spread (max - min) of the drop policies' mean efficiency, WAN (Tables 4/6) and LAN (Tables 3/5)",
          "WAN spread below LAN spread", f"{_f(spread[0])} vs {_f(spread[1])}" if spread else None,
          spread[0] < spread[1] if spread else None, "the study's own comparison (s5.2)")

    sat = _means(points, "satellite", ["7", "8", "9"], "tcp_variant")
    ok = {"SACK", "Reno", "Vanilla"} <= set(sat)
    claim("C5", "Satellite: SACK is best, Reno worst (Tables 7-9)",
          "satellite: mean efficiency per TCP variant",
          f"SACK above Vanilla above Reno, SACK - Reno >= {DIFFERENT}",
          f"SACK {_f(sat['SACK'])}, Vanilla {_f(sat['Vanilla'])}, Reno {_f(sat['Reno'])}" if ok else None,
          (sat["SACK"] > sat["Vanilla"] > sat["Reno"] and sat["SACK"] - sat["Reno"] >= DIFFERENT) if ok else None)

    for factor, label in (("drop_policy", "the drop policy"), ("gr", "GR")):
        m = _means(points, "satellite", ["7", "8", "9"], factor)
        ok = len(m) == 3
        spread_ = max(m.values()) - min(m.values()) if ok else None
        claim(f"C6-{factor}", f"Satellite: {label} does not matter much (Tables 7-9)",
              f"satellite: spread (max - min) of the mean efficiency per value of {label}",
              f"< {DIFFERENT}", _f(spread_) if spread_ is not None else None,
              spread_ < DIFFERENT if spread_ is not None else None)
    return out


# ------------------------------------------------------------------ figures

def figures(points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
    from .. import plotting

    import matplotlib.pyplot as plt

    paths = []
    fairness, efficiency = "Fairness (Jain's index)", "Efficiency (TCP goodput / capacity left by VBR)"
    # Figure 4: Tables 1-2, efficiency vs fairness, LAN and WAN, by VBR period.
    t12 = points[points["table"] == "1/2"]
    published = _published_pairs(comparison)
    if not t12.empty:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), dpi=110, sharey=True)
        periods = list(dict.fromkeys(t12["vbr_period_ms"]))
        for ax, config in zip(axes, ("LAN", "WAN"), strict=True):
            part = t12[t12["config"] == config]
            for period, g in part.groupby("vbr_period_ms", sort=False):
                k = periods.index(period)
                look = plotting.series(k, line=False)
                ax.plot(g["fairness"], g["efficiency"], linestyle="none", mfc="none", mew=1.4, ms=7, clip_on=False,
                        label=f"{period:g} ms (atmlab)", **look)
                pub = published[(published["config"] == config) & (published["vbr_period_ms"] == period)]
                if not pub.empty:
                    ax.plot(pub["fairness"], pub["efficiency"], plotting.PUBLISHED[k % 4], color=look["color"], ms=8,
                            mew=1.5, clip_on=False, label=f"{period:g} ms (published)")
            ax.set_title(f"{config}", fontsize=10)
            plotting.unit_axis(ax.xaxis, fairness)
            ax.set_xlim(0, 1.05)
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, title="VBR on/off", title_fontsize=7, loc="lower left")
        plotting.unit_axis(axes[0].yaxis, efficiency)
        fig.suptitle("97-0424 Figure 4: SACK TCP over UBR+ with strict-priority VBR (Tables 1-2)", fontsize=10)
        paths.append(plotting.save(fig, folder / "ubr-gr_figure4.png",
                                   note="Hollow markers: atmlab; crosses and stars: published; one point per buffer "
                                        "size and drop policy"))
    # Figure 5: Tables 3-9, efficiency vs fairness by drop policy.
    rest = points[points["table"] != "1/2"]
    configs = [c for c in ("LAN", "WAN", "satellite") if c in set(rest["config"])]
    if configs:
        fig, axes = plt.subplots(1, len(configs), figsize=(max(4.6 * len(configs), 6.4), 4.4), dpi=110, sharey=True,
                                 squeeze=False)
        for ax, config in zip(axes[0], configs, strict=True):
            part = rest[rest["config"] == config]
            for k, policy in enumerate(("selective_drop", "epd", "tail_drop")):
                g = part[part["drop_policy"] == policy]
                if not g.empty:  # a legend of what is drawn
                    ax.plot(g["fairness"], g["efficiency"], linestyle="none", mfc="none", mew=1.2, ms=5,
                            clip_on=False, label=PUBLISHED_POLICY[policy], **plotting.series(k, line=False))
            ax.set_title(config, fontsize=10)
            plotting.unit_axis(ax.xaxis, fairness)
            ax.set_xlim(0, 1.05)
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower left")
        plotting.unit_axis(axes[0, 0].yaxis, efficiency)
        fig.suptitle("97-0424 Figure 5: TCP over UBR+ with GR, VBR 300 ms on/off (Tables 3-9, atmlab)",
                     fontsize=10)
        paths.append(plotting.save(fig, folder / "ubr-gr_figure5.png",
                                   note="One point per N, buffer, TCP variant and GR; published values withheld"))
    return paths


def _published_pairs(comparison: pd.DataFrame) -> pd.DataFrame:
    """The published efficiency and fairness of each compared Table 1-2
    configuration, side by side."""
    if comparison.empty:
        return pd.DataFrame(columns=["config", "vbr_period_ms", "efficiency", "fairness"])
    keys = ["config", "buffer_cells", "vbr_period_ms", "drop_policy"]
    wide = comparison.pivot_table(index=keys, columns="quantity", values="published").reset_index()
    return wide.dropna(subset=["efficiency", "fairness"])
