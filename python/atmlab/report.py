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
import fnmatch
import html
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from . import display, metrics as metrics_mod  # noqa: E402
from .stats import SUMMARY_METRICS, summarize_frame  # noqa: E402
from .store import Store  # noqa: E402

MAX_FIGURES_PER_METRIC = 12

# Longer words for the axes of the main metrics (display.words gives the others).
LABELS: dict[str, str] = {
    "efficiency": "efficiency (TCP goodput / TCP payload capacity)",
    "fairness": "fairness (Jain's index of the TCP goodputs)",
    "cell_loss_ratio": "cell loss ratio at switch ports",
}

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


def _words(metric: str) -> str:
    return LABELS.get(metric, display.words(metric))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fmt(params: dict[str, Any], units: dict[str, str] | None = None) -> str:
    return ", ".join(f"{k} = {_value(v, (units or {}).get(k))}" for k, v in params.items())


def _errors(means: list[float], cis: list[float], lo: float, hi: float) -> list[list[float]]:
    """Asymmetric error bars: the 95% interval, clipped to the quantity's
    physical range [lo, hi] (an efficiency is never above 1, a loss never
    below 0)."""
    below, above = [], []
    for m, c in zip(means, cis, strict=True):
        c = 0.0 if c is None or math.isnan(c) or math.isnan(m) else c
        below.append(max(0.0, min(c, m - lo)))
        above.append(max(0.0, min(c, hi - m)))
    return [below, above]


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
    units = units or {}
    group = group if group is not None else next((p for p in params if p != x), None)
    rest = [p for p in params if p not in (x, group)]
    yfactor, yunit = display.scale(summary[f"{metric}_mean"].tolist(), metrics_mod.unit(metric))
    ylabel = display.header(_capital(_words(metric)), yunit)
    lo, hi = display.bounds(metric)
    _, numeric = _axis(summary[x].tolist())
    xfactor, xunit = display.scale(summary[x].tolist(), units.get(x)) if numeric else (1.0, "")
    figures = []
    combos = list(summary.groupby(rest, sort=False)) if rest else [((), summary)]
    for k, (key, part) in enumerate(combos[:MAX_FIGURES_PER_METRIC]):
        key = key if isinstance(key, tuple) else (key,)
        fixed = dict(zip(rest, key, strict=True))
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        lines = list(part.groupby(group, sort=False)) if group else [(None, part)]
        for gval, g in lines:
            xs, _ = _axis(g[x].tolist())
            order = sorted(range(len(xs)), key=lambda i: xs[i]) if numeric else range(len(xs))
            xs = [xs[i] * xfactor if numeric else xs[i] for i in order]
            means = [float(g[f"{metric}_mean"].iloc[i]) for i in order]
            cis = [float(g[f"{metric}_ci95"].iloc[i]) for i in order]
            yerr = [[e * yfactor for e in side] for side in _errors(means, cis, lo, hi)]
            ax.errorbar(xs, [m * yfactor for m in means], yerr=yerr, marker="o", capsize=3,
                        label=f"{group} = {_value(gval, units.get(group))}" if group else None)
        ax.set_xlabel(display.header(x, xunit))
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if group:
            ax.legend(fontsize=8)
        n = int(part["runs"].min()), int(part["runs"].max())
        reps = f"{n[0]}" if n[0] == n[1] else f"{n[0]}-{n[1]}"
        fixed_text = _fmt(fixed, units)
        title = f"{_capital(display.words(metric))} against {x}" + (f" ({fixed_text})" if fixed else "")
        ax.set_title(title, fontsize=9)
        caption = (f"Scenario {sweep}: {_words(metric)} against {x}" + (f", one line per {group}" if group else "")
                   + (f"; {fixed_text}" if fixed else "")
                   + f". Mean of {reps} replications per point; bars are 95% confidence intervals (Student t)"
                   + (", clipped to the quantity's range" if math.isfinite(hi) or math.isfinite(lo) else "") + ".")
        path = _save(fig, out / f"{_slug(sweep)}__{_slug(metric)}_vs_{_slug(x)}{'__' + str(k) if fixed else ''}.png")
        figures.append(Figure(path, title, caption))
    return figures


def _value(v: Any, unit: str | None) -> str:
    """A swept value with its unit, scaled: 5e-06 s is "5 us"."""
    if unit and isinstance(v, int | float) and not isinstance(v, bool):
        factor, shown = display.scale([v], unit)
        return f"{display.number(v * factor)} {shown}"
    return display.number(v)


def scatter_figure(sweep: str, summary: pd.DataFrame, params: list[str], out: Path,
                   units: dict[str, str] | None = None) -> Figure | None:
    """Efficiency against fairness, one marker per point (97-0424 Fig. 4)."""
    if summary.empty or "efficiency_mean" not in summary or "fairness_mean" not in summary:
        return None
    ok = summary.dropna(subset=["efficiency_mean", "fairness_mean"])
    if ok.empty:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 4.6), dpi=110)
    group = params[-1] if params else None
    for gval, g in (ok.groupby(group, sort=False) if group else [(None, ok)]):
        fm, em = g["fairness_mean"].tolist(), g["efficiency_mean"].tolist()
        ax.errorbar(fm, em, xerr=_errors(fm, g["fairness_ci95"].tolist(), 0.0, 1.0),
                    yerr=_errors(em, g["efficiency_ci95"].tolist(), 0.0, 1.0), fmt="o", capsize=2,
                    label=f"{group} = {_value(gval, (units or {}).get(group))}" if group else None)
    ax.set_xlabel(_capital(LABELS["fairness"]))
    ax.set_ylabel(_capital(LABELS["efficiency"]))
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    if group:
        ax.legend(fontsize=8)
    title = "Efficiency against fairness"
    ax.set_title(title, fontsize=9)
    path = _save(fig, out / f"{_slug(sweep)}__efficiency_vs_fairness.png")
    caption = (f"Scenario {sweep}: one marker per sweep point ({', '.join(params) or 'no parameters'}), mean over "
               "replications with 95% confidence intervals (clipped to 0-1); the desirable corner is the upper right.")
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
        scale, shown = display.scale(s["value"].tolist(), unit)
        ax.step(s["t_s"], s["value"] * scale, where="post", lw=0.9)
        ax.set_ylabel(f"{s['kind'].iloc[0]}" + (f" ({shown})" if shown else ""), fontsize=8)
        ax.set_title(f"{name} ({s['target'].iloc[0]})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    title = f"Time series of run {run_id}"
    fig.suptitle(title, fontsize=9)
    path = _save(fig, out / f"{_slug(str(row['sweep']))}__run{run_id}_series.png")
    caption = (f"Scenario {row['sweep']}, run {run_id} (seed {row['seed']}, replication {row['replication']}"
               + (f"; {_fmt(params)}" if params else "") + "): sampled probes.")
    return Figure(path, title, caption)


_RUN_COLUMNS = {"run_id", "sweep", "scenario_hash", "point", "replication", "seed", "status", "error", "wall_s",
                "atmlab_version", "git_commit", "git_dirty", "started_at", "finished_at"}


def _param_columns(runs: pd.DataFrame) -> list[str]:
    from .store import RUN_METRICS

    return [c for c in runs.columns if c not in _RUN_COLUMNS and c not in RUN_METRICS
            and metrics_mod.field(c) is None]


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_") or "x"


def chosen_metrics(runs: pd.DataFrame, asked: list[str] | None, sweep: str) -> list[str]:
    """The metrics to draw for one sweep's runs (read with every stored
    metric): `asked` (a name, or a pattern with ``*`` such as
    ``connections.*.goodput_bps``, one figure per match), else the main
    ones that the runs have (TCP goodput only where there is TCP). An
    unknown name is a KeyError listing the valid ones."""
    stored = [c for c in runs.columns if metrics_mod.field(c) is not None and runs[c].notna().any()]
    if not asked:
        chosen = [m for m in SUMMARY_METRICS if m in stored]
        if "efficiency" not in chosen and "tcp_goodput_bps" in chosen:
            chosen.remove("tcp_goodput_bps")  # no TCP connection: a flat 0 says nothing
        return chosen
    out: list[str] = []
    for name in asked:
        found = fnmatch.filter(stored, name) if "*" in name else ([name] if name in stored else [])
        if not found:
            raise KeyError(f"--metric {name}: no such metric in sweep {sweep!r}; valid names: {valid_names(stored)}")
        out += [m for m in found if m not in out]
    return out


def valid_names(stored: list[str]) -> str:
    """The metrics of a sweep, compactly: the run-level names, then each
    per-item table as ``table.ITEM.FIELD`` with its items and fields."""
    run_level = [m for m in stored if "." not in m]
    tables: dict[str, tuple[list[str], list[str]]] = {}
    nested: list[str] = []
    for m in stored:
        parts = m.split(".")
        if len(parts) >= 3 and parts[0] in display._TABLES:
            items, fields = tables.setdefault(parts[0], ([], []))
            item = ".".join(parts[1:-1])
            if item not in items:
                items.append(item)
            if parts[-1] not in fields:
                fields.append(parts[-1])
        elif len(parts) > 1:
            nested.append(m)
    text = ", ".join(run_level + nested)
    for table, (items, fields) in tables.items():
        text += (f"; {table}.ITEM.FIELD (or {table}.*.FIELD) with ITEM one of {', '.join(items)} and FIELD one of "
                 f"{', '.join(fields)}")
    return text


def build(db: str | Path, out: str | Path, *, sweep: str | int | None = None, x: str | None = None,
          group: str | None = None, metrics: list[str] | None = None, run_id: int | None = None) -> Path:
    """Writes the figures and ``index.html`` into `out` for `sweep` (an id,
    or a name for the latest sweep of that name; every sweep, each in its
    own section, if None); returns the page. An unknown sweep, parameter, metric
    or run is a KeyError saying what there is."""
    out = Path(out)
    sections: list[tuple[str, list[Figure], pd.DataFrame | None, dict[str, str]]] = []
    with Store(db) as store:  # a missing or refused database leaves no folder behind
        info = store.sweep_info(differs=False)
        picked = [store.find_sweep(sweep)] if sweep is not None else info
        named = Counter(i.name for i in info)
        plans = []
        for sw in picked:  # every sweep checked before a figure is drawn; each on its own, never pooled
            name = sw.name if named[sw.name] == 1 else sw.label
            runs = store.runs(sweep=sw.sweep_id, status="ok", all_metrics=metrics is not None)
            if runs.empty:
                continue
            params = [c for c in _param_columns(runs) if runs[c].nunique(dropna=False) > 1]
            for p in (x, group):
                if p is not None and p not in _param_columns(runs):
                    raise KeyError(f"{p!r} is not a parameter of sweep {name!r} (it has: {', '.join(params)})")
            plans.append((name, runs, params, chosen_metrics(runs, metrics, name)))
        if run_id is not None and not any(run_id in set(store.runs(sweep=sw.sweep_id).run_id) for sw in picked):
            raise KeyError(f"no run {run_id} in {db}")
        out.mkdir(parents=True, exist_ok=True)
        for name, runs, params, chosen in plans:
            summary = summarize_frame(runs, params or ["scenario_hash"], chosen)
            units = dict(runs.attrs.get("units", {}))
            figs: list[Figure] = []
            if params:
                for m in chosen:
                    figs += metric_figures(name, summary, params, m, out, x, group, units)
            scatter = scatter_figure(name, summary, params, out, units)
            if scatter:
                figs.append(scatter)
            wanted = run_id if run_id is not None else _first_run_with_series(store, runs)
            if wanted is not None and wanted in set(runs.run_id):
                fig = series_figure(store, int(wanted), out)
                if fig:
                    figs.append(fig)
            sections.append((name, figs, summary[[c for c in summary.columns if c == "runs" or c in params
                                                  or c.endswith(("_mean", "_ci95"))]] if params else summary,
                             units))
    page = out / "index.html"
    page.write_text(_html(Path(db), sections), encoding="utf-8")
    return page


def _first_run_with_series(store: Store, runs: pd.DataFrame) -> int | None:
    for rid in runs.run_id:
        if not store.series(int(rid)).empty:
            return int(rid)
    return None


def chosen_of(section: tuple[str, list[Figure], pd.DataFrame | None, dict[str, str]]) -> list[str]:
    summary = section[2]
    return [c[: -len("_mean")] for c in summary.columns if c.endswith("_mean")] if summary is not None else []


def summary_table(summary: pd.DataFrame, units: dict[str, str], metric_names: list[str]) -> str:
    """The per-point summary as HTML: the swept values, the runs, and each
    metric as mean +/- 95% half-width, one SI prefix per column."""
    params = [c for c in summary.columns if c != "runs" and not c.endswith(("_mean", "_std", "_ci95"))
              and c != "scenario_hash"]
    head, cols = [], []
    for c in params:
        values, shown = display.column(summary[c].tolist(), units.get(c))
        head.append(display.header(c, shown))
        cols.append(values)
    head.append("runs")
    cols.append([display.number(v) for v in summary["runs"]])
    for m in metric_names:
        means, cis = summary[f"{m}_mean"].tolist(), summary[f"{m}_ci95"].tolist()
        factor, shown = display.scale(means, metrics_mod.unit(m))
        head.append(display.header(_capital(display.words(m)), shown))
        cells = []
        for mean, ci in zip(means, cis, strict=True):
            text = display.number(mean * factor)
            cells.append(text + (f" &plusmn; {display.number(ci * factor, 2)}" if text and ci == ci else ""))
        cols.append(cells)
    rows = "".join("<tr>" + "".join(f"<td>{cell if i >= len(params) + 1 else html.escape(cell)}</td>"
                                    for i, cell in enumerate(r)) + "</tr>" for r in zip(*cols, strict=True))
    return ("<div class='scroll'><table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + f"</tr></thead><tbody>{rows}</tbody></table></div>")


def _html(db: Path, sections: list[tuple[str, list[Figure], pd.DataFrame | None, dict[str, str]]],
          metrics_of: Any = chosen_of) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>atmlab report</title>",
        "<style>body{font-family:sans-serif;max-width:1180px;margin:1.5em auto;padding:0 1em;color:#222;"
        "line-height:1.4}"
        ".figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1em}"
        "figure{margin:0}figcaption{font-size:0.85em;color:#444}img{width:100%;height:auto}"
        ".scroll{overflow-x:auto;max-width:100%}"
        "table{border-collapse:collapse;font-size:0.85em;font-variant-numeric:tabular-nums}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td{white-space:nowrap}"
        "th{background:#f4f4f4;min-width:4em;max-width:11em;vertical-align:bottom}</style></head><body>",
        f"<h1>atmlab report</h1><p>Results database: <code>{html.escape(str(db))}</code></p>",
    ]
    if not sections:
        parts.append("<p>No finished runs.</p>")
    for section in sections:
        name, figs, summary, units = section
        parts.append(f"<h2>Sweep {html.escape(name)}</h2><div class='figs'>")
        for f in figs:
            data = base64.b64encode(f.path.read_bytes()).decode()
            parts.append(f"<figure><img alt='{html.escape(f.title)}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{html.escape(f.caption)}</figcaption></figure>")
        parts.append("</div>")
        if summary is not None and not summary.empty:
            parts.append("<h3>Per point: mean &plusmn; 95% confidence half-width</h3>")
            parts.append(summary_table(summary, units, metrics_of(section)))
    parts.append("</body></html>")
    return "\n".join(parts)


def figure_paths(page: Path) -> list[Path]:
    return sorted(page.parent.glob("*.png"))


__all__ = ["SUMMARY_METRICS", "build", "figure_paths"]
