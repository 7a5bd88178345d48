"""Study 000 (Lamont, Villasenor, Chefai, Miloucheva, DREO TR 1999-020 / CRC
98-007, 1998): "Bundling Internet Traffic over VBR ATM Networks".

IP telephony (80-byte UDP TSDUs every 10 ms) bundled with bulk TCP on one
Classical-IP VBR PVC (PCR 6 Mbit/s, SCR 2 Mbit/s, MBS 32, policed), the
sender's FORE adapter shaping at 1594 kbit/s. Every experiment of the study
is run on ``scenarios/bundling/bundle.toml`` with one set of defaults
(docs/reproductions/bundling.md):

* A (WAN, 1 TCP + n UDP; Tables 5-16, A-cdv Tables 1-2), B (WAN, 1 UDP + n
  TCP; Tables 17-24), C (WAN, n UDP; Tables 25-26): published values next to
  the simulated ones;
* D, E, F (LAN; Tables 3-4, 27-43): run, published values withheld.

The TCP TSDU size L is a parameter of every A/B/D/E configuration although a
greedy writer's TSDU size does not change the simulated segment stream: the
runs of the L grid are distinct configurations of the results database with
common random numbers, so they give the same numbers.

Runs go through :class:`atmlab.Sweep` (results database, resume,
``--replications``). ``--quick`` runs a small subset with 20-s sessions.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import reference
from ..scenario import load
from ..store import Store
from ..sweep import Sweep
from . import Options, Progress, Reproduction, run_sweeps

STUDY = "bundling"
KB = 1024.0  # the study's KB (s6.1.1)
NET = {"WAN": {"delay": "25.75 ms", "rx_peak": "2000 kbit/s"}, "LAN": {"delay": "0.5 ms", "rx_peak": "1594 kbit/s"}}
WINDOWS = [8, 16, 32, 50]
# Tolerances of the side-by-side comparison (docs/reproductions/bundling.md):
# relative for throughputs and interarrival times, absolute (percentage
# points) for the loss rate.
TOL_REL = 0.10
TOL_STD_REL = 0.25
TOL_LOSS_PP = 0.5
# The fluid bound of spec s3 note 2 for 1 TCP + 1 UDP on the WAN (KB/s).
FLUID_1TCP_1UDP = (1594000 / 424 - 300) / 192 * 9140 / KB


@dataclass(frozen=True)
class Grid:
    """One experiment's configurations."""

    exp: str
    net: str
    tables: str
    sweep: dict[str, list[Any]]


def grids(quick: bool) -> list[Grid]:
    if quick:
        return [
            Grid("A", "WAN", "5-16", {"n_tcp": [1], "n_udp": [1, 4], "tsdu": [8], "window": [16, 50]}),
            Grid("C", "WAN", "25-26", {"n_tcp": [0], "n_udp": [12, 14], "tsdu": [8], "window": [50]}),
            Grid("D", "LAN", "27-35", {"n_tcp": [1], "n_udp": [2], "tsdu": [8], "window": [16]}),
        ]
    return [
        Grid("A", "WAN", "1-2, 5-16", {"n_tcp": [1], "n_udp": [1, 2, 3, 4, 6, 8, 12, 16], "tsdu": [4, 8, 10, 20],
                                       "window": WINDOWS}),
        Grid("B", "WAN", "17-24", {"n_udp": [1], "n_tcp": [1, 2, 3, 4, 6, 8, 10], "tsdu": [4, 8, 10, 20],
                                   "window": WINDOWS}),
        Grid("C", "WAN", "25-26", {"n_tcp": [0], "n_udp": [1, 2, 3, 4, 6, 8, 10, 12, 14, 16], "tsdu": [8],
                                   "window": [50]}),
        Grid("D", "LAN", "3-4, 27-35", {"n_tcp": [1], "n_udp": [1, 2, 3, 4, 6, 8, 10], "tsdu": [4, 8, 20],
                                        "window": WINDOWS}),
        Grid("E", "LAN", "36-41", {"n_udp": [1], "n_tcp": [1, 2, 3, 4, 6, 8, 10], "tsdu": [4, 8, 20],
                                   "window": WINDOWS}),
        Grid("F", "LAN", "42-43", {"n_tcp": [0], "n_udp": [1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 26],
                                   "tsdu": [8], "window": [50]}),
    ]


def template() -> dict[str, Any]:
    ref = resources.files("atmlab") / "scenarios" / "bundling" / "bundle.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def sweep_for(grid: Grid, options: Options) -> Sweep:
    t = template()
    t["params"].update(NET[grid.net])
    if options.quick:
        t["params"].update({"session": "20 s", "udp_count": 2000, "arrivals_from": "5 s", "duration": "40 s"})
    t["sweep"] = {k: list(v) for k, v in grid.sweep.items()}
    return Sweep(t, replications=options.replications, seed=options.seed)


def run_metrics(raw: dict[str, Any]) -> dict[str, float]:
    """The study's metrics of one run (s6): means over the connections of a type."""
    conns = [c for c in raw.get("connections", [])]
    flows = [f for f in raw.get("udp_flows", [])]
    out: dict[str, float] = {
        "tcp_throughput_kbytes_per_s": _mean([c["transfer_throughput_bps"] / 8 / KB for c in conns]),
        "tcp_retransmitted_segments": float(sum(c["retransmitted_segments"] for c in conns)) if conns else math.nan,
        "udp_throughput_kbytes_per_s": _mean([f["session_throughput_bps"] / 8 / KB for f in flows]),
        "udp_loss_pct": _mean([100.0 * f["lost"] / f["sent"] for f in flows if f["sent"]]),
        "upc_discarded_cells": float(sum(u["discarded"] for u in raw.get("upc", []))),
    }
    first = next((f for f in flows if f["name"] == "udp0"), None)
    mean_s = first.get("interarrival_mean_s") if first else None
    std_s = first.get("interarrival_std_s") if first else None
    out["interarrival_mean_ms"] = 1e3 * mean_s if mean_s is not None else math.nan
    out["interarrival_std_ms"] = 1e3 * std_s if std_s is not None else math.nan
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


METRICS = ["tcp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s", "udp_loss_pct", "interarrival_mean_ms",
           "interarrival_std_ms", "upc_discarded_cells", "tcp_retransmitted_segments"]
KEY = ["experiment", "n_tcp", "n_udp", "tcp_tsdu_kbytes", "tcp_window_kbytes"]


def _ref(name: str, column: str, exp: str, out: str) -> pd.DataFrame:
    d = reference.table(name)
    d = d.assign(experiment=exp).rename(columns={column: out})
    return d[KEY + [out]]


def published() -> pd.DataFrame:
    """The visible tables (1-2, 5-26), one row per configuration and metric column."""
    parts = []
    for i, tsdu in zip((5, 6, 7, 8), (4, 8, 10, 20), strict=True):
        parts.append((f"bundling/table{i:02d}_wan_1tcp_nudp_tcp_thr_tsdu{tsdu}k", "tcp_throughput_kbytes_per_s", "A",
                      "published_tcp_throughput_kbytes_per_s"))
        parts.append((f"bundling/table{i + 4:02d}_wan_1tcp_nudp_udp_thr_tsdu{tsdu}k", "mean_udp_throughput_kbytes_per_s",
                      "A", "published_udp_throughput_kbytes_per_s"))
        parts.append((f"bundling/table{i + 8:02d}_wan_1tcp_nudp_udp_loss_tsdu{tsdu}k", "mean_udp_loss_rate_pct", "A",
                      "published_udp_loss_pct"))
        parts.append((f"bundling/table{i + 12:02d}_wan_1udp_ntcp_tcp_thr_tsdu{tsdu}k", "mean_tcp_throughput_kbytes_per_s",
                      "B", "published_tcp_throughput_kbytes_per_s"))
        parts.append((f"bundling/table{i + 16:02d}_wan_1udp_ntcp_udp_thr_tsdu{tsdu}k", "udp_throughput_kbytes_per_s", "B",
                      "published_udp_throughput_kbytes_per_s"))
    parts.append(("bundling/table25_wan_nudp_udp_thr", "mean_udp_throughput_kbytes_per_s", "C",
                  "published_udp_throughput_kbytes_per_s"))
    parts.append(("bundling/table26_wan_nudp_udp_loss", "mean_udp_loss_rate_pct", "C", "published_udp_loss_pct"))
    parts.append(("bundling/table01_wan_cell_interarrival_win16k", "mean_cell_interarrival_ms", "A",
                  "published_interarrival_mean_ms"))
    parts.append(("bundling/table01_wan_cell_interarrival_win16k", "std_dev_cell_interarrival_ms", "A",
                  "published_interarrival_std_ms"))
    parts.append(("bundling/table02_wan_cell_interarrival_win50k", "mean_cell_interarrival_ms", "A",
                  "published_interarrival_mean_ms"))
    parts.append(("bundling/table02_wan_cell_interarrival_win50k", "std_dev_cell_interarrival_ms", "A",
                  "published_interarrival_std_ms"))
    frames: dict[str, list[pd.DataFrame]] = {}
    for name, col, exp, out in parts:
        frames.setdefault(out, []).append(_ref(name, col, exp, out))
    merged: pd.DataFrame | None = None
    for frs in frames.values():
        d = pd.concat(frs, ignore_index=True)
        d["tcp_tsdu_kbytes"] = d["tcp_tsdu_kbytes"].fillna(8).astype(int)
        d["tcp_window_kbytes"] = d["tcp_window_kbytes"].fillna(50).astype(int)
        merged = d if merged is None else merged.merge(d, on=KEY, how="outer")
    assert merged is not None
    return merged


def run(options: Options, progress: Progress) -> Reproduction:
    folder = options.folder
    folder.mkdir(parents=True, exist_ok=True)
    plan = [(g, sweep_for(g, options)) for g in grids(options.quick)]
    ran = run_sweeps([(f"{STUDY} {g.exp} ({g.net})", s) for g, s in plan], options, progress)
    if ran.interrupted:
        return Reproduction.stopped(STUDY)
    rows: list[dict[str, Any]] = []
    timing: list[tuple[int, float]] = []
    for grid, sweep in plan:
        runs = sweep.results(options.db, status="ok")
        per_config: dict[tuple[int, int, int, int], list[dict[str, float]]] = {}
        with Store(options.db) as store:
            for r in runs.itertuples(index=False):
                raw = store.result(int(r.run_id)).raw
                key = (int(r.n_tcp), int(r.n_udp), int(r.tsdu), int(r.window))
                per_config.setdefault(key, []).append(run_metrics(raw))
                timing.append((int(raw["cell_hops"]), float(r.wall_s)))
        for (n_tcp, n_udp, tsdu, window), ms in sorted(per_config.items()):
            row: dict[str, Any] = {"experiment": grid.exp, "network": grid.net, "tables": grid.tables,
                                   "n_tcp": n_tcp, "n_udp": n_udp, "tcp_tsdu_kbytes": tsdu,
                                   "tcp_window_kbytes": window, "replications": len(ms)}
            for m in METRICS:
                vals = [x[m] for x in ms if not math.isnan(x[m])]
                row[m] = sum(vals) / len(vals) if vals else math.nan
            rows.append(row)
    df = pd.DataFrame(rows)
    # Connection-type metrics that do not apply (no TCP / no UDP in the bundle) stay empty.
    df = df.merge(published(), on=KEY, how="left")
    cdv = (df["experiment"] == "A") & (df["tcp_tsdu_kbytes"] == 8) & df["tcp_window_kbytes"].isin([16, 50]) & (
        df["n_udp"] <= 8)
    df.loc[~cdv, ["interarrival_mean_ms", "interarrival_std_ms"]] = math.nan
    csv = options.csv_path(f"{STUDY}.csv")
    csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv, index=False)
    files = [csv, *figures(df, folder)]
    side = side_by_side(df)
    lines = []
    if options.quick:
        lines.append("--quick: 20-s sessions on a subset; not comparable with the published values.")
    lines.append(agreement_text(side))
    discards = int(df["upc_discarded_cells"].fillna(0).sum())
    lines.append(f"UPC discards over all runs: {discards} cells (the study: none by design)")
    hops, wall = sum(h for h, _ in timing), sum(w for _, w in timing)
    if wall > 0:
        lines.append(f"{len(timing)} runs, {hops:.3g} cell-hops in {wall:.0f} s of run time")
    lines.append(f"{len(df)} configurations in {csv}")
    show = df[df["experiment"].isin(["A", "B", "C"]) & df["published_tcp_throughput_kbytes_per_s"].notna()
              | (df["experiment"] == "C")]
    table = show[["experiment", "n_tcp", "n_udp", "tcp_tsdu_kbytes", "tcp_window_kbytes",
                  "tcp_throughput_kbytes_per_s", "published_tcp_throughput_kbytes_per_s",
                  "udp_throughput_kbytes_per_s", "published_udp_throughput_kbytes_per_s"]].rename(columns=DISPLAY)
    summary_csv = csv.with_name(f"{STUDY}_agreement.csv")
    side.to_csv(summary_csv, index=False)
    files.append(summary_csv)
    return Reproduction(
        title=f"{STUDY} (study 000): TCP and IP telephony bundled on one VBR PVC; simulated vs published",
        table=table,
        files=files,
        summary="\n".join(lines),
        extra=[("Agreement per published table", side)],
        failures=ran.failures,
    )


DISPLAY = {"experiment": "exp", "tcp_tsdu_kbytes": "L", "tcp_window_kbytes": "W",
           "tcp_throughput_kbytes_per_s": "TCP KB/s", "published_tcp_throughput_kbytes_per_s": "TCP pub.",
           "udp_throughput_kbytes_per_s": "UDP KB/s", "published_udp_throughput_kbytes_per_s": "UDP pub."}

# (tables, experiment, metric, selection, tolerance kind, tolerance)
COMPARISONS = [
    ("1", "A", "interarrival_mean_ms", {"tcp_window_kbytes": 16}, "rel", TOL_REL),
    ("1 (std)", "A", "interarrival_std_ms", {"tcp_window_kbytes": 16}, "rel", TOL_STD_REL),
    ("2", "A", "interarrival_mean_ms", {"tcp_window_kbytes": 50}, "rel", TOL_REL),
    ("2 (std)", "A", "interarrival_std_ms", {"tcp_window_kbytes": 50}, "rel", TOL_STD_REL),
    ("5-8", "A", "tcp_throughput_kbytes_per_s", {}, "rel", TOL_REL),
    ("9-12", "A", "udp_throughput_kbytes_per_s", {}, "rel", TOL_REL),
    ("13-16", "A", "udp_loss_pct", {}, "abs", TOL_LOSS_PP),
    ("17-20", "B", "tcp_throughput_kbytes_per_s", {}, "rel", TOL_REL),
    ("21-24", "B", "udp_throughput_kbytes_per_s", {}, "rel", TOL_REL),
    ("25", "C", "udp_throughput_kbytes_per_s", {}, "rel", TOL_REL),
    ("26", "C", "udp_loss_pct", {}, "abs", TOL_LOSS_PP),
]


def side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """Per published table: values compared, the fraction within tolerance, mean difference."""
    out = []
    for tables, exp, metric, sel, kind, tol in COMPARISONS:
        part = df[df["experiment"] == exp]
        for k, v in sel.items():
            part = part[part[k] == v]
        part = part[part[f"published_{metric}"].notna() & part[metric].notna()]
        if part.empty:
            continue
        pub, sim = part[f"published_{metric}"], part[metric]
        diff = sim - pub
        ok = diff.abs() <= tol + 1e-9 if kind == "abs" else diff.abs() <= tol * pub.abs() + 1e-9
        out.append({"tables": tables, "experiment": exp, "metric": metric, "values": len(part),
                    "within": int(ok.sum()), "fraction_within": ok.mean(),
                    "tolerance": f"+/-{tol:g} pp" if kind == "abs" else f"+/-{tol:.0%}",
                    "mean_simulated": sim.mean(), "mean_published": pub.mean(),
                    "mean_abs_diff": diff.abs().mean()})
    return pd.DataFrame(out)


def agreement_text(side: pd.DataFrame) -> str:
    if side.empty:
        return "no published values to compare"
    within, values = int(side["within"].sum()), int(side["values"].sum())
    return f"within tolerance: {within} of {values} published values ({within / values:.0%})"


def figures(df: pd.DataFrame, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: list[Path] = []

    def panels(exp: str, x: str, metric: str, number: str, ylabel: str, title: str) -> None:
        part = df[(df["experiment"] == exp) & df[metric].notna()]
        if part.empty:
            return
        tsdus = sorted(part["tcp_tsdu_kbytes"].unique())
        fig, axes = plt.subplots(1, len(tsdus), figsize=(3.6 * len(tsdus), 3.6), dpi=110, sharey=True,
                                 squeeze=False)
        for ax, tsdu in zip(axes[0], tsdus, strict=True):
            sub = part[part["tcp_tsdu_kbytes"] == tsdu]
            for k, (w, g) in enumerate(sub.groupby("tcp_window_kbytes")):
                g = g.sort_values(x)
                ax.plot(g[x], g[metric], "o-", color=f"C{k}", ms=3, label=f"W {w} KB")
                pub = f"published_{metric}"
                if pub in g and g[pub].notna().any():
                    ax.plot(g[x], g[pub], "x--", color=f"C{k}", ms=6, lw=0.7)
            ax.set_title(f"TCP TSDU {tsdu} KB", fontsize=9)
            ax.set_xlabel(x.replace("_", " "))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        axes[0, 0].set_ylabel(ylabel)
        fig.suptitle(f"Study 000 {title} (o- atmlab, x-- published)", fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.93))
        p = folder / f"{STUDY}_figure{number}.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)

    panels("A", "n_udp", "tcp_throughput_kbytes_per_s", "7", "TCP throughput (KB/s)",
           "Fig 7: WAN, 1 TCP + n UDP, TCP throughput")
    panels("A", "n_udp", "udp_throughput_kbytes_per_s", "8", "mean UDP throughput (KB/s)",
           "Fig 8: WAN, 1 TCP + n UDP, UDP throughput")
    panels("B", "n_tcp", "tcp_throughput_kbytes_per_s", "13", "mean TCP throughput (KB/s)",
           "Fig 13: WAN, 1 UDP + n TCP, TCP throughput")
    voice = df[df["experiment"].isin(["C", "F"])]
    if not voice.empty:
        fig, ax = plt.subplots(figsize=(5.5, 3.8), dpi=110)
        for k, (exp, g) in enumerate(voice.groupby("experiment")):
            g = g.sort_values("n_udp")
            net = "WAN (C)" if exp == "C" else "LAN (F)"
            ax.plot(g["n_udp"], g["udp_throughput_kbytes_per_s"], "o-", color=f"C{k}", ms=3, label=f"{net} atmlab")
            if g["published_udp_throughput_kbytes_per_s"].notna().any():
                ax.plot(g["n_udp"], g["published_udp_throughput_kbytes_per_s"], "x--", color=f"C{k}",
                        label=f"{net} published")
        ax.axhline(8000 / KB, color="0.5", lw=0.7, ls=":")
        ax.axvline(1594000 / 424 / 300, color="0.5", lw=0.7, ls=":")
        ax.set_xlabel("UDP (voice) connections in the bundle")
        ax.set_ylabel("mean UDP throughput (KB/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.suptitle("Study 000 Fig 15: voice only on one 1594 kbit/s PVC", fontsize=10)
        fig.tight_layout()
        p = folder / f"{STUDY}_figure15.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths
