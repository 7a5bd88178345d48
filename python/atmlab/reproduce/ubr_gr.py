"""ATM Forum 97-0424 (Goyal, Jain, Kalyanaraman, Fahmy, Vandalore, Cai, Kim,
Kota 1997): "Guaranteed Rate for Improving TCP Performance on UBR+ over
Terrestrial and Satellite Networks".

Every configuration of the study's Tables 1-9, run on the configuration
families ``scenarios/97-0424/{lan,wan,satellite}.toml`` with one set of
defaults (docs/reproductions/97-0424.md):

* Tables 1-2: SACK, N = 5, GR = 0 (strict priority), VBR ON = OFF = 300, 100,
  50 ms; LAN buffers 1000/3000, WAN 12000/36000 cells; tail drop, EPD,
  Selective Drop. Efficiency (Table 1) and fairness (Table 2) are published.
* Tables 3-6: LAN and WAN, N = 5 and 15, the same buffers, SACK/Reno/Vanilla,
  GR = 0.5/0.1/0.0, the three policies, VBR 300 ms (published numbers
  withheld).
* Tables 7-9: satellite, N = 5, buffers 200000/600000, the same TCP x GR grid,
  Selective Drop (7), EPD (8), tail drop (9) (withheld).

Runs go through :class:`atmlab.Sweep`: they are stored in the results
database, so an interrupted reproduction resumes, and ``--replications``
gives confidence intervals. ``--quick`` runs a small subset with short
durations (for CI); its numbers are not comparable with the study's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import reference
from ..scenario import load
from ..sweep import Sweep
from . import Options, Progress, Reproduction, run_sweeps

STUDY = "97-0424"
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


@dataclass(frozen=True)
class Grid:
    """One family's runs for some of the tables."""

    family: str
    table: str  # the tables the rows belong to ("1/2", "3/5", ...; satellite by policy)
    sweep: dict[str, list[Any]]
    duration: str | None = None  # None: the study's


def grids(quick: bool) -> list[Grid]:
    """The configurations of Tables 1-9 (or the --quick subset)."""
    if quick:
        return [
            Grid("lan", "1/2", {"n": [5], "buffer": [1000], "variant": ["sack"], "gr": [0.0],
                                "vbr": ["300 ms", "50 ms"], "policy": list(POLICIES)}, "1 s"),
            Grid("wan", "1/2", {"n": [5], "buffer": [12000], "variant": ["sack"], "gr": [0.0],
                                "vbr": ["300 ms"], "policy": list(POLICIES)}, "2 s"),
            Grid("lan", "3/5", {"n": [5], "buffer": [1000], "variant": ["sack", "reno"], "gr": [0.5, 0.0],
                                "vbr": ["300 ms"], "policy": ["selective_drop"]}, "1 s"),
            Grid("satellite", "7-9", {"n": [5], "buffer": [200000], "variant": ["sack"], "gr": [0.5],
                                      "vbr": ["300 ms"], "policy": ["selective_drop"]}, "3 s"),
        ]
    out = []
    for fam, gr_table in (("lan", "3/5"), ("wan", "4/6")):
        out.append(Grid(fam, "1/2", {"n": [5], "buffer": BUFFERS[fam], "variant": ["sack"], "gr": [0.0],
                                     "vbr": ["300 ms", "100 ms", "50 ms"], "policy": list(POLICIES)}))
        out.append(Grid(fam, gr_table, {"n": [5, 15], "buffer": BUFFERS[fam], "variant": VARIANTS, "gr": GRS,
                                        "vbr": ["300 ms"], "policy": list(POLICIES)}))
    out.append(Grid("satellite", "7-9", {"n": [5], "buffer": BUFFERS["satellite"], "variant": VARIANTS, "gr": GRS,
                                         "vbr": ["300 ms"], "policy": list(POLICIES)}))
    return out


def template(family: str) -> dict[str, Any]:
    ref = resources.files("atmlab") / "scenarios" / STUDY / f"{family}.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def sweep_for(grid: Grid, options: Options) -> Sweep:
    t = template(grid.family)
    t["sweep"] = copy.deepcopy(grid.sweep)
    if grid.duration:
        t["simulation"]["duration"] = grid.duration
    return Sweep(t, replications=options.replications, seed=options.seed)


def rows(grid: Grid, summary: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for _, r in summary.iterrows():
        table = SATELLITE_TABLE[r["policy"]] if grid.family == "satellite" else grid.table
        out.append({
            "table": table,
            "config": CONFIG[grid.family],
            "n_sources": int(r["n"]),
            "buffer_cells": int(r["buffer"]),
            "tcp_variant": VARIANT[r["variant"]],
            "gr": float(r["gr"]),
            "vbr_period_ms": round(float(r["vbr"]) * 1000),  # the store gives seconds
            "drop_policy": r["policy"],
            "replications": int(r["runs"]),
            "efficiency": r["efficiency_mean"],
            "efficiency_ci95": r["efficiency_ci95"],
            "fairness": r["fairness_mean"],
            "fairness_ci95": r["fairness_ci95"],
        })
    return out


def published() -> pd.DataFrame:
    """Tables 1 and 2 as printed, one row per configuration."""
    eff = reference.table("ubr-gr/table01_sack_strict_priority_vbr_efficiency")
    fair = reference.table("ubr-gr/table02_sack_strict_priority_vbr_fairness")
    key = ["config", "buffer_cells", "vbr_on_ms", "drop_policy"]
    both = eff[key + ["efficiency"]].merge(fair[key + ["fairness"]], on=key)
    both["drop_policy"] = both["drop_policy"].map(PUBLISHED_POLICY_BACK)
    return both.rename(columns={"vbr_on_ms": "vbr_period_ms", "efficiency": "published_efficiency",
                                "fairness": "published_fairness"})


def run(options: Options, progress: Progress) -> Reproduction:
    folder = options.folder
    folder.mkdir(parents=True, exist_ok=True)
    plan = [(g, sweep_for(g, options)) for g in grids(options.quick)]
    ran = run_sweeps([(f"Table {g.table} {CONFIG[g.family]}", s) for g, s in plan], options, progress)
    if ran.interrupted:
        return Reproduction.stopped(STUDY)
    all_rows: list[dict[str, Any]] = []
    runs: list[pd.DataFrame] = []
    for grid, sweep in plan:
        summary = sweep.summary(options.db, metrics=["efficiency", "fairness"])
        runs.append(sweep.results(options.db, status="ok")[["run_id", "cell_hops", "wall_s"]])
        all_rows += rows(grid, summary)
    df = pd.DataFrame(all_rows)
    df = ordered(df.drop_duplicates(subset=["table", "config", "n_sources", "buffer_cells", "tcp_variant", "gr",
                                            "vbr_period_ms", "drop_policy"]))
    pub = published()
    df = df.merge(pub, how="left", on=["config", "buffer_cells", "vbr_period_ms", "drop_policy"])
    not_t12 = df["table"] != "1/2"
    df.loc[not_t12, ["published_efficiency", "published_fairness"]] = float("nan")
    csv = options.csv_path(f"{STUDY}.csv")
    csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv, index=False)
    files = [csv, *figures(df, folder)]

    t12 = df[df["table"] == "1/2"].copy()
    comparison = t12[["config", "buffer_cells", "vbr_period_ms", "drop_policy", "replications", "efficiency",
                      "published_efficiency", "fairness", "published_fairness"]].rename(columns=DISPLAY)
    summary_lines = [agreement(t12)] if not options.quick else [
        "--quick: short runs on a subset; not comparable with the published values."]
    summary_lines.append(speed(pd.concat(runs).drop_duplicates("run_id")))
    extra = [("Tables 3-9 (published values withheld): mean over each group", claims(df))]
    return Reproduction(
        title=f"{STUDY} Tables 1-2: SACK TCP, strict-priority VBR; simulated vs published",
        table=comparison,
        files=files,
        summary="\n".join(summary_lines) + f"\n{len(df)} configurations in {csv}",
        extra=extra,
        failures=ran.failures,
    )


# Short headers for the printed table (the CSV keeps the long names).
DISPLAY = {"buffer_cells": "buffer", "vbr_period_ms": "VBR ms", "drop_policy": "policy", "replications": "runs",
           "published_efficiency": "eff. published", "published_fairness": "fair. published"}


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """The study's order: table, configuration, N, buffer, TCP, GR high to
    low, VBR period long to short, tail drop / EPD / Selective Drop."""
    rank = {
        "config": list(CONFIG.values()),
        "tcp_variant": [VARIANT[v] for v in VARIANTS],
        "drop_policy": list(POLICIES),
    }
    keys = df.assign(**{f"_{c}": df[c].map({v: i for i, v in enumerate(vs)}) for c, vs in rank.items()})
    keys = keys.sort_values(["table", "_config", "n_sources", "buffer_cells", "_tcp_variant", "gr", "vbr_period_ms",
                             "_drop_policy"], ascending=[True, True, True, True, True, False, False, True],
                            kind="stable")
    return keys.drop(columns=[f"_{c}" for c in rank]).reset_index(drop=True)


def speed(runs: pd.DataFrame) -> str:
    """Cell-hops per second of run time (one core per run), over the runs
    the table is made of (whenever they ran)."""
    hops, wall = float(runs["cell_hops"].sum()), float(runs["wall_s"].sum())
    rate = f"{hops / wall / 1e6:.1f} M cell-hops per second per core" if wall > 0 else "no timing"
    return f"{len(runs)} runs, {hops:.3g} cell-hops in {wall:.0f} s of run time: {rate}"


def agreement(t12: pd.DataFrame) -> str:
    """The share of Table 1-2 values within +/-0.10 of the published ones."""
    parts = []
    for m in ("efficiency", "fairness"):
        diff = (t12[m] - t12[f"published_{m}"]).abs()
        within = int((diff <= 0.10 + 1e-9).sum())
        parts.append(f"{m}: {within} of {len(t12)} within +/-0.10 (mean |diff| {diff.mean():.3f})")
    return "Tables 1-2 agreement: " + "; ".join(parts)


def claims(df: pd.DataFrame) -> pd.DataFrame:
    """Means of the withheld tables' rows along the factors the study's
    conclusions name (drop policy on the LAN, GR on the WAN, TCP variant on
    the satellite)."""
    gr_rows = df[df["table"] != "1/2"]
    out = []
    for config, factor in (("LAN", "drop_policy"), ("LAN", "gr"), ("WAN", "gr"), ("WAN", "drop_policy"),
                           ("satellite", "tcp_variant"), ("satellite", "gr"), ("satellite", "drop_policy")):
        part = gr_rows[gr_rows["config"] == config]
        if part.empty:
            continue
        for value, g in part.groupby(factor, sort=False):
            out.append({"config": config, "factor": factor, "value": value, "configurations": len(g),
                        "efficiency": g["efficiency"].mean(), "fairness": g["fairness"].mean()})
    return pd.DataFrame(out)


def figures(df: pd.DataFrame, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    # Figure 4: Tables 1-2, efficiency vs fairness, LAN and WAN, by VBR period.
    t12 = df[df["table"] == "1/2"]
    if not t12.empty:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), dpi=110, sharey=True)
        for ax, config in zip(axes, ("LAN", "WAN"), strict=True):
            part = t12[t12["config"] == config]
            for k, (period, g) in enumerate(part.groupby("vbr_period_ms", sort=False)):
                color = f"C{k}"
                ax.plot(g["fairness"], g["efficiency"], "o", color=color, label=f"{period} ms (atmlab)")
                if g["published_efficiency"].notna().any():
                    ax.plot(g["published_fairness"], g["published_efficiency"], "x", color=color, ms=8,
                            label=f"{period} ms (published)")
            ax.set_title(f"{config}", fontsize=10)
            ax.set_xlabel("fairness (Jain's index)")
            ax.set_xlim(0, 1.05)
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, title="VBR on/off", title_fontsize=7, loc="lower left")
        axes[0].set_ylabel("efficiency (TCP goodput / capacity left by VBR)")
        fig.suptitle("97-0424 Figure 4: SACK TCP over UBR+ with strict-priority VBR (Tables 1-2)", fontsize=10)
        fig.text(0.01, 0.01, "o atmlab, x published; one point per buffer size and drop policy",
                 fontsize=7, color="0.4")
        fig.tight_layout(rect=(0, 0.03, 1, 0.95))
        p = folder / f"{STUDY}_figure4.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    # Figure 5: Tables 3-9, efficiency vs fairness by drop policy.
    rest = df[df["table"] != "1/2"]
    configs = [c for c in ("LAN", "WAN", "satellite") if c in set(rest["config"])]
    if configs:
        fig, axes = plt.subplots(1, len(configs), figsize=(4.6 * len(configs), 4.4), dpi=110, sharey=True,
                                 squeeze=False)
        names = {"selective_drop": "Selective Drop", "epd": "EPD", "tail_drop": "UBR (tail drop)"}
        for ax, config in zip(axes[0], configs, strict=True):
            part = rest[rest["config"] == config]
            for k, policy in enumerate(("selective_drop", "epd", "tail_drop")):
                g = part[part["drop_policy"] == policy]
                ax.plot(g["fairness"], g["efficiency"], "o", color=f"C{k}", ms=4, label=names[policy])
            ax.set_title(config, fontsize=10)
            ax.set_xlabel("fairness (Jain's index)")
            ax.set_xlim(0, 1.05)
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower left")
        axes[0, 0].set_ylabel("efficiency (TCP goodput / capacity left by VBR)")
        fig.suptitle("97-0424 Figure 5: TCP over UBR+ with GR, VBR 300 ms on/off (Tables 3-9, atmlab)",
                     fontsize=10)
        fig.text(0.01, 0.01, "one point per N, buffer, TCP variant and GR; published values withheld",
                 fontsize=7, color="0.4")
        fig.tight_layout(rect=(0, 0.03, 1, 0.95))
        p = folder / f"{STUDY}_figure5.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)
    return paths
