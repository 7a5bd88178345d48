"""``atmlab report``: figures and one self-contained HTML page from a
results database.

For each sweep: every summary metric against a swept parameter, as the mean
over replications with 95% confidence-interval bars, one line per value of a
second parameter (further parameters give one figure per combination);
efficiency against fairness, one marker per point; and the time series of a
chosen run. Every figure has axis labels with units and a caption naming the
scenario and the parameters.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .stats import SUMMARY_METRICS, summarize_frame  # noqa: E402
from .store import Store  # noqa: E402

MAX_FIGURES_PER_METRIC = 12

# Metric -> (label with unit, scale to apply)
LABELS: dict[str, tuple[str, float]] = {
    "efficiency": ("efficiency (TCP goodput / TCP payload capacity)", 1.0),
    "fairness": ("fairness (Jain's index)", 1.0),
    "tcp_goodput_bps": ("total TCP goodput (Mbit/s)", 1e-6),
    "cell_loss_ratio": ("cell loss ratio at switch ports", 1.0),
    "switch_cells_dropped": ("cells dropped at switch ports", 1.0),
    "link_cells_lost": ("cells lost on links", 1.0),
}

UNIT_SCALE = {"bit/s": (1e-6, "Mbit/s"), "bytes": (1.0, "bytes"), "cells": (1.0, "cells"), "fraction": (1.0, "")}



@dataclass
class Figure:
    path: Path
    title: str
    caption: str


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _axis(values: list[Any]) -> tuple[list[Any], bool]:
    """The x values as numbers (the store types swept quantities), else as
    categories."""
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], True
    return [str(v) for v in values], False


def _label(metric: str) -> tuple[str, float]:
    return LABELS.get(metric, (metric.replace("_", " "), 1.0))


def _fmt(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in params.items())


def metric_figures(sweep: str, summary: pd.DataFrame, params: list[str], metric: str, out: Path,
                   x: str | None = None, group: str | None = None,
                   units: dict[str, str] | None = None) -> list[Figure]:
    """`metric` against `x` (default: the first parameter), one line per
    `group` value (default: the second), one figure per combination of the
    other parameters; `units` are the swept quantities' units."""
    if summary.empty or f"{metric}_mean" not in summary or summary[f"{metric}_mean"].isna().all():
        return []
    x = x or (params[0] if params else None)
    if x is None:
        return []
    group = group if group is not None else next((p for p in params if p != x), None)
    rest = [p for p in params if p not in (x, group)]
    ylabel, scale = _label(metric)
    figures = []
    combos = list(summary.groupby(rest, sort=False)) if rest else [((), summary)]
    for k, (key, part) in enumerate(combos[:MAX_FIGURES_PER_METRIC]):
        key = key if isinstance(key, tuple) else (key,)
        fixed = dict(zip(rest, key, strict=True))
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        lines = list(part.groupby(group, sort=False)) if group else [(None, part)]
        _, numeric = _axis(part[x].tolist())
        unit = (units or {}).get(x, "")
        for gval, g in lines:
            xs, _ = _axis(g[x].tolist())
            order = sorted(range(len(xs)), key=lambda i: xs[i]) if numeric else range(len(xs))
            xs = [xs[i] for i in order]
            ys = [g[f"{metric}_mean"].iloc[i] * scale for i in order]
            ci = [g[f"{metric}_ci95"].iloc[i] * scale for i in order]
            ci = [0.0 if (c is None or math.isnan(c)) else c for c in ci]
            ax.errorbar(xs, ys, yerr=ci, marker="o", capsize=3, label=f"{group} = {gval}" if group else None)
        ax.set_xlabel(f"{x} ({unit})" if unit else x)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if group:
            ax.legend(fontsize=8)
        n = int(part["runs"].min()), int(part["runs"].max())
        reps = f"{n[0]}" if n[0] == n[1] else f"{n[0]}-{n[1]}"
        title = f"{sweep}: {metric} vs {x}" + (f" ({_fmt(fixed)})" if fixed else "")
        ax.set_title(title, fontsize=9)
        caption = (f"Scenario {sweep}: {ylabel} against {x}" + (f", one line per {group}" if group else "")
                   + (f"; {_fmt(fixed)}" if fixed else "")
                   + f". Mean of {reps} replications per point; bars are 95% confidence intervals (Student t).")
        path = _save(fig, out / f"{_slug(sweep)}__{metric}_vs_{_slug(x)}{'__' + str(k) if fixed else ''}.png")
        figures.append(Figure(path, title, caption))
    return figures


def scatter_figure(sweep: str, summary: pd.DataFrame, params: list[str], out: Path) -> Figure | None:
    """Efficiency against fairness, one marker per point (97-0424 Fig. 4)."""
    if summary.empty or "efficiency_mean" not in summary or "fairness_mean" not in summary:
        return None
    ok = summary.dropna(subset=["efficiency_mean", "fairness_mean"])
    if ok.empty:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 4.6), dpi=110)
    group = params[-1] if params else None
    for gval, g in (ok.groupby(group, sort=False) if group else [(None, ok)]):
        ax.errorbar(g["fairness_mean"], g["efficiency_mean"], xerr=g["fairness_ci95"].fillna(0),
                    yerr=g["efficiency_ci95"].fillna(0), fmt="o", capsize=2,
                    label=f"{group} = {gval}" if group else None)
    ax.set_xlabel("fairness (Jain's index)")
    ax.set_ylabel("efficiency (TCP goodput / TCP payload capacity)")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    if group:
        ax.legend(fontsize=8)
    title = f"{sweep}: efficiency vs fairness"
    ax.set_title(title, fontsize=9)
    path = _save(fig, out / f"{_slug(sweep)}__efficiency_vs_fairness.png")
    caption = (f"Scenario {sweep}: one marker per sweep point ({', '.join(params) or 'no parameters'}), mean over "
               "replications with 95% confidence intervals; the desirable corner is the upper right.")
    return Figure(path, title, caption)


def series_figure(store: Store, run_id: int, out: Path) -> Figure | None:
    """The time series of one run, one panel per quantity."""
    df = store.series(run_id)
    if df.empty:
        return None
    runs = store.runs(run_id=run_id)
    row = runs.iloc[0]
    params = {c: row[c] for c in runs.columns if c not in _RUN_COLUMNS and c in _param_columns(runs)}
    names = list(dict.fromkeys(df["name"]))
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 2.2 * len(names) + 0.6), dpi=110, sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names, strict=True):
        s = df[df["name"] == name]
        unit = s["unit"].iloc[0]
        scale, shown = UNIT_SCALE.get(unit, (1.0, unit))
        ax.step(s["t_s"], s["value"] * scale, where="post", lw=0.9)
        ax.set_ylabel(f"{s['kind'].iloc[0]}" + (f" ({shown})" if shown else ""), fontsize=8)
        ax.set_title(f"{name} ({s['target'].iloc[0]})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    title = f"{row['sweep']}: time series of run {run_id}"
    fig.suptitle(title, fontsize=9)
    path = _save(fig, out / f"{_slug(str(row['sweep']))}__run{run_id}_series.png")
    caption = (f"Scenario {row['sweep']}, run {run_id} (seed {row['seed']}, replication {row['replication']}"
               + (f"; {_fmt(params)}" if params else "") + "): sampled probes.")
    return Figure(path, title, caption)


_RUN_COLUMNS = {"run_id", "sweep", "scenario_hash", "point", "replication", "seed", "status", "error", "wall_s",
                "atmlab_version", "git_commit", "git_dirty", "started_at", "finished_at"}


def _param_columns(runs: pd.DataFrame) -> list[str]:
    from .store import RUN_METRICS

    return [c for c in runs.columns if c not in _RUN_COLUMNS and c not in RUN_METRICS]


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_") or "x"


def build(db: str | Path, out: str | Path, *, sweep: str | None = None, x: str | None = None,
          group: str | None = None, metrics: list[str] | None = None, run_id: int | None = None) -> Path:
    """Writes the figures and ``index.html`` into `out`; returns the page."""
    out = Path(out)
    sections: list[tuple[str, list[Figure], pd.DataFrame | None]] = []
    with Store(db) as store:  # a missing or refused database leaves no folder behind
        out.mkdir(parents=True, exist_ok=True)
        names = [sweep] if sweep else store.sweeps()
        if sweep and sweep not in store.sweeps():
            raise KeyError(f"no sweep named {sweep!r} in {db} (there are: {', '.join(store.sweeps()) or 'none'})")
        for name in names:
            runs = store.runs(sweep=name, status="ok")
            if runs.empty:
                continue
            params = [c for c in _param_columns(runs) if runs[c].nunique(dropna=False) > 1]
            for p in (x, group):
                if p is not None and p not in _param_columns(runs):
                    raise KeyError(f"{p!r} is not a parameter of sweep {name!r} (it has: {', '.join(params)})")
            chosen = metrics or [m for m in SUMMARY_METRICS if m in runs and runs[m].notna().any()]
            summary = summarize_frame(runs, params or ["scenario_hash"], chosen)
            figs: list[Figure] = []
            if params:
                for m in chosen:
                    figs += metric_figures(name, summary, params, m, out, x, group, runs.attrs.get("units"))
            scatter = scatter_figure(name, summary, params, out)
            if scatter:
                figs.append(scatter)
            wanted = run_id if run_id is not None else _first_run_with_series(store, runs)
            if wanted is not None and wanted in set(runs.run_id):
                fig = series_figure(store, int(wanted), out)
                if fig:
                    figs.append(fig)
            sections.append((name, figs, summary))
        if run_id is not None and not any(run_id in set(store.runs(sweep=n).run_id) for n in names):
            raise KeyError(f"no run {run_id} in {db}")
    page = out / "index.html"
    page.write_text(_html(Path(db), sections), encoding="utf-8")
    return page


def _first_run_with_series(store: Store, runs: pd.DataFrame) -> int | None:
    for rid in runs.run_id:
        if not store.series(int(rid)).empty:
            return int(rid)
    return None


def _html(db: Path, sections: list[tuple[str, list[Figure], pd.DataFrame | None]]) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>atmlab report</title>",
        "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
        "figure{margin:1.5em 0}figcaption{font-size:0.9em;color:#444}"
        "table{border-collapse:collapse;font-size:0.8em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "img{max-width:100%}</style></head><body>",
        f"<h1>atmlab report</h1><p>Results database: <code>{html.escape(str(db))}</code></p>",
    ]
    if not sections:
        parts.append("<p>No finished runs.</p>")
    for name, figs, summary in sections:
        parts.append(f"<h2>{html.escape(name)}</h2>")
        for f in figs:
            data = base64.b64encode(f.path.read_bytes()).decode()
            parts.append(f"<figure><img alt='{html.escape(f.title)}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
        if summary is not None and not summary.empty:
            parts.append("<h3>Summary per point (mean, 95% CI half-width)</h3>")
            parts.append(summary.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep=""))
    parts.append("</body></html>")
    return "\n".join(parts)


def figure_paths(page: Path) -> list[Path]:
    return sorted(page.parent.glob("*.png"))


__all__ = ["SUMMARY_METRICS", "build", "figure_paths"]
