"""The study's figures (Figs 2-16), redrawn from the points: the published
curves are not digitised (the study gives prose only), so every figure is
atmlab's, one point per configuration (the mean over its runs)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .configurations import CAMPAIGN2_BUFFERS, LOSS_FREE, MTUS, SIM_BUFFERS, config_of

STYLE = {"UBR": ("C0", "o", "-"), "PPD": ("C1", "s", "-"), "EPD b=1": ("C2", "^", "-"),
         "EPD b=2": ("C3", "v", "--"), "EPD b=3": ("C5", "P", "--"), "EPD b=4": ("C4", "D", ":")}
NOTE = "atmlab simulation; mean over replications; published figures are not digitised (the study gives prose only)"


def labelled(points: pd.DataFrame) -> pd.DataFrame:
    """The points with ``label``: "UBR", "PPD", "EPD b=1", ..."""
    return points.assign(label=[config_of(r).label for r in points.to_dict("records")])


def default_tcp(points: pd.DataFrame, mtu: int | None = None) -> pd.DataFrame:
    """The 4-source configurations with the default TCP, threshold 3, 200 ms
    (Figs 2-4, 11-13), of one MTU if given."""
    part = points[(points.tcp == "default") & (points.n_sources == 4) & (points.dupack_threshold == 3)
                  & (points.timer_ms == 200)]
    return part if mtu is None else part[part.mtu_bytes == mtu]


def figures(points: pd.DataFrame, folder: Path) -> list[Path]:
    """Figs 2-4, s4.1's fairness, Figs 5-6, 11-16 and 7-10, written into `folder`."""
    from ... import plotting

    import matplotlib.pyplot as plt

    ok = labelled(points[points.efficiency.notna()])
    paths: list[Path] = []

    def save(fig: Any, name: str) -> None:
        paths.append(plotting.save(fig, folder / f"expert_{name}.png", note=NOTE))

    # Figs 2-4 (efficiency) and s4.1's fairness (not plotted in the study) against the buffer, both MTUs.
    for metric, labels, ylim, title, name in (
            ("efficiency", ["UBR", "PPD", "EPD b=1", "EPD b=2", "EPD b=4"], (0, 1.05),
             "002 Figs 2-4: efficiency against the buffer, 4 TCP sources (grey line: one window)",
             "fig2-4_efficiency_vs_buffer"),
            ("fairness", ["UBR", "PPD", "EPD b=1"], (0.2, 1.02),
             "002 s4.1: fairness against the buffer, 4 TCP sources (dotted: 0.95)", "fairness_vs_buffer")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110, sharey=True)
        for ax, mtu in zip(axes, MTUS, strict=True):
            part = default_tcp(ok, mtu)
            _curves(ax, part[part.buffer_cells != LOSS_FREE], metric, labels)
            if metric == "efficiency":
                free = part[part.buffer_cells == LOSS_FREE]
                if not free.empty:
                    ax.axhline(float(free.efficiency.iloc[0]), color="0.5", ls="--", lw=1,
                               label=f"loss-free ({LOSS_FREE})")
                ax.axvline(1088, color="0.8", lw=0.8)
            else:
                ax.axhline(0.95, color="0.6", ls=":", lw=1)
            ax.set_title(f"MTU {mtu} bytes", fontsize=10)
            plotting.unit_axis(ax.xaxis, "Switch buffer B", "cells")
            ax.set_ylim(*ylim)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower right")
        axes[0].set_ylabel("Efficiency (goodput / loss-free goodput of the VP)" if metric == "efficiency"
                           else "Fairness (Jain's index per run, averaged)")
        fig.suptitle(title, fontsize=10)
        save(fig, name)

    # Figs 5-6: duplicate-ACK threshold, MTU 9180.
    dup = ok[(ok.tcp == "default") & (ok.n_sources == 4) & (ok.mtu_bytes == 9180) & (ok.buffer_cells != LOSS_FREE)]
    if dup.dupack_threshold.nunique() > 1:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110)
        for ax, metric in zip(axes, ("efficiency", "fairness"), strict=True):
            for k, d in enumerate((1, 3, 10)):
                for label, ls, fill in (("EPD b=1", "-", None), ("PPD", ":", "none")):
                    g = dup[(dup.dupack_threshold == d) & (dup.label == label)].sort_values("buffer_cells")
                    if not g.empty:
                        ax.plot(g.buffer_cells, g[metric], ms=5, mfc=fill, label=f"threshold {d}, {label}",
                                **{**plotting.series(k), "linestyle": ls})
            plotting.unit_axis(ax.xaxis, "Switch buffer B", "cells")
            ax.set_ylabel(metric.capitalize())
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower right")
        fig.suptitle("002 Figs 5-6: duplicate-ACK threshold 1 / 3 / 10, MTU 9180, 4 TCP sources", fontsize=10)
        save(fig, "fig5-6_dupack")

    # Figs 11-16: against b (0 = PPD), plain UBR as a marker at b = -1.
    sim4 = default_tcp(ok, 4352)
    sim16 = ok[(ok.tcp == "default") & (ok.n_sources == 16)]
    mod = ok[(ok.tcp == "modified") & (ok.mtu_bytes == 4352)]
    fig, axes = plt.subplots(2, 3, figsize=(14, 8), dpi=100)
    _against_b(axes[0, 0], sim4, "efficiency", SIM_BUFFERS)
    axes[0, 0].set_title("Fig. 11: efficiency, default TCP", fontsize=9)
    _against_b(axes[0, 1], sim4, "fer", (725, 1088))
    for k, bf in enumerate((725, 1088)):
        g = sim4[(sim4.buffer_cells == bf) & sim4.policy.isin(["PPD", "EPD"])].sort_values("b")
        axes[0, 1].plot(g.b, g.clr, ls="--", color=f"C{k}", alpha=0.7, label=f"CLR B = {bf}")
    axes[0, 1].legend(fontsize=7)
    axes[0, 1].set_title("Fig. 12: FER at the receivers (solid), CLR at the switch (dashed)", fontsize=9)
    _against_b(axes[0, 2], sim4, "dead_cell_ratio", (725, 1088))
    axes[0, 2].set_title("Fig. 13: dead cell ratio, default TCP", fontsize=9)
    _against_b(axes[1, 0], sim16, "efficiency", (725, 1088), "efficiency, ")
    _against_b(axes[1, 0], sim16, "fairness", (725, 1088), "fairness, ", ls="--")
    axes[1, 0].set_title("Fig. 14: 16 sources, efficiency (solid) and fairness (dashed)", fontsize=9)
    _against_b(axes[1, 1], mod, "efficiency", SIM_BUFFERS)
    axes[1, 1].set_title("Fig. 15: efficiency, modified TCP (s5.3)", fontsize=9)
    _against_b(axes[1, 2], mod, "dead_cell_ratio", (725, 1088))
    axes[1, 2].set_title("Fig. 16: dead cell ratio, modified TCP", fontsize=9)
    for ax in (axes[0, 0], axes[1, 0], axes[1, 1]):
        ax.set_ylim(0, 1.05)
    for ax, label in zip(axes.flat, ("Efficiency", "Frame or cell loss ratio", "Dead cell ratio",
                                     "Efficiency, fairness", "Efficiency", "Dead cell ratio"), strict=True):
        ax.set_ylabel(label)
    fig.suptitle("002 Figs 11-16: simulation, MTU 4352, against b (x: plain UBR)", fontsize=10)
    save(fig, "fig11-16_vs_b")

    # Figs 7-10: campaign II.
    c2 = ok[(ok.tcp == "modified") & (ok.mtu_bytes == 1500)]
    if not c2.empty:
        fig, axes = plt.subplots(1, 4, figsize=(17, 4.2), dpi=100)
        for ax, timer in zip(axes[:2], (200, 20), strict=True):
            _against_b(ax, c2[c2.timer_ms == timer], "goodput_mbps", CAMPAIGN2_BUFFERS)
            plotting.unit_axis(ax.yaxis, "Aggregate goodput", "Mbit/s")
            ax.set_title(f"Fig. {7 if timer == 200 else 9}: goodput, timer {timer} ms", fontsize=9)
        for k, timer in enumerate((200, 20)):
            g = c2[(c2.timer_ms == timer) & (c2.label == "EPD b=1")].sort_values("buffer_cells")
            axes[2].plot(g.buffer_cells, g.efficiency, ms=4, label=f"{timer} ms", **plotting.series(k))
        plotting.unit_axis(axes[2].xaxis, "Switch buffer B", "cells")
        axes[2].set_ylabel("Efficiency")
        axes[2].set_ylim(0, 1.05)
        axes[2].grid(alpha=0.3)
        axes[2].legend(fontsize=7)
        axes[2].set_title("Fig. 8: efficiency, EPD b=1", fontsize=9)
        for k, timer in enumerate((200, 20)):
            g = c2[(c2.timer_ms == timer) & (c2.buffer_cells == 725) & c2.policy.isin(["PPD", "EPD"])].sort_values("b")
            axes[3].plot(g.b, g.idle_cell_ratio, marker="o", ms=4, color=f"C{k}", label=f"idle, {timer} ms")
            axes[3].plot(g.b, g.fer, marker="s", ms=4, ls="--", mfc="none", color=f"C{k}", label=f"FER, {timer} ms")
        axes[3].set_yscale("log")
        plotting.count_axis(axes[3].xaxis, "Normalised excess capacity b (frames; 0 = PPD)")
        axes[3].set_ylabel("Ratio")
        axes[3].grid(alpha=0.3)
        axes[3].legend(fontsize=7)
        axes[3].set_title("Fig. 10: idle cell ratio and FER, B = 725", fontsize=9)
        fig.suptitle("002 Figs 7-10: campaign II (modified TCP as Solaris 2.5.1 / Linux 2.0.25), MTU 1500",
                     fontsize=10)
        save(fig, "fig7-10_campaign2")
    return paths


def _curves(ax: Any, part: pd.DataFrame, metric: str, labels: Iterable[str]) -> None:
    """One curve per policy label against the buffer."""
    for label in labels:
        g = part[part.label == label].sort_values("buffer_cells")
        if g.empty:
            continue
        color, marker, ls = STYLE.get(label, ("k", "o", "-"))
        ax.plot(g["buffer_cells"], g[metric], marker=marker, ls=ls, color=color, ms=4, label=label)


def _against_b(ax: Any, part: pd.DataFrame, metric: str, buffers: Iterable[int], prefix: str = "",
               ls: str = "-") -> None:
    """One curve per buffer against b (0 = PPD), plain UBR as a cross at b = -1."""
    from ... import plotting

    for k, bf in enumerate(buffers):
        g = part[(part.buffer_cells == bf) & part.policy.isin(["PPD", "EPD"])].sort_values("b")
        u = part[(part.buffer_cells == bf) & (part.policy == "UBR")]
        if g.empty:
            continue
        look = plotting.series(k)
        ax.plot(g.b, g[metric], ms=4, label=f"{prefix}B = {bf}", **{**look, "linestyle": ls})
        if not u.empty:
            ax.plot([-1], u[metric], marker="x", ms=7, mew=1.5, color=look["color"])
    ax.set_xticks(range(-1, 5), ["UBR", "0 (PPD)", "1", "2", "3", "4"])
    ax.set_xlabel("Normalised excess capacity b (frames)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
