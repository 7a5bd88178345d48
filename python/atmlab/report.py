"""``atmlab report``: figures and one self-contained HTML page from a
results database.

For each sweep: every summary metric against a swept parameter, as the mean
over replications with 95% confidence-interval bars, one series per value of
a second parameter (further parameters give one figure per combination): a
line over a numeric parameter, markers side by side at each category of a
parameter of words; efficiency against fairness, one marker per point (its
colour the last parameter's value, its shape the others'); and the time
series of a chosen run, titled in words. Every figure is drawn by
:mod:`atmlab.plotting` (units with SI prefixes, no mathtext) and has a
caption naming the scenario and the parameters. The report is drawn in a
staging folder and moved into place when whole: a failure writes nothing.
"""

from __future__ import annotations

import base64
import fnmatch
import html
import itertools
import math
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from . import display, metrics as metrics_mod, plotting  # noqa: E402
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
    return plotting.save(fig, path)


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


def _bars(errors: list[list[float]]) -> list[list[float]] | None:
    """Error bars to draw: none where there is no interval (one replication),
    rather than caps of zero length across the markers."""
    return errors if any(e > 0 for side in errors for e in side) else None


def _x_axis(ax: Any, name: str, values: list[float], unit: str | None) -> None:
    """A numeric swept parameter along x: ticks at the swept values when
    there are few, a log axis when they span two decades or more."""
    distinct = sorted({v for v in values if math.isfinite(v)})
    if len(distinct) > 1 and distinct[0] > 0 and distinct[-1] / distinct[0] >= 100:
        ax.set_xscale("log")
    elif 1 < len(distinct) <= 10:
        ax.xaxis.set_major_locator(ticker.FixedLocator(distinct))
    plotting.unit_axis(ax.xaxis, name, unit)


def metric_figures(sweep: str, summary: pd.DataFrame, params: list[str], metric: str, out: Path,
                   x: str | None = None, group: str | None = None,
                   units: dict[str, str] | None = None) -> list[Figure]:
    """`metric` against `x` (default: the first parameter), one series per
    `group` value (default: the second), one figure per combination of the
    other parameters; `units` are the swept quantities' units. A numeric `x`
    is an axis with its unit, the series joined by lines; words (``abr``,
    ``ubr``) are categories, the series' points side by side, unjoined."""
    if summary.empty or f"{metric}_mean" not in summary or summary[f"{metric}_mean"].isna().all():
        return []
    x = x or (params[0] if params else None)
    if x is None:
        return []
    units = units or {}
    group = group if group is not None else next((p for p in params if p != x), None)
    rest = [p for p in params if p not in (x, group)]
    lo, hi = display.bounds(metric)
    _, numeric = _axis(summary[x].tolist())
    categories = [] if numeric else list(dict.fromkeys(str(v) for v in summary[x].tolist()))
    figures = []
    combos = list(summary.groupby(rest, sort=False, dropna=False)) if rest else [((), summary)]
    with plotting.style():
        for k, (key, part) in enumerate(combos[:MAX_FIGURES_PER_METRIC]):
            key = key if isinstance(key, tuple) else (key,)
            fixed = dict(zip(rest, key, strict=True))
            fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
            lines = list(part.groupby(group, sort=False, dropna=False)) if group else [(None, part)]
            present: dict[str, list[int]] = {}  # per category, the series with a point there (side by side)
            for j, (_, g) in enumerate(lines):
                for c in dict.fromkeys(str(v) for v in g[x]):
                    present.setdefault(c, []).append(j)
            for j, (gval, g) in enumerate(lines):
                xs, _ = _axis(g[x].tolist())
                order = sorted(range(len(xs)), key=lambda i: xs[i]) if numeric else range(len(xs))
                xs = [xs[i] if numeric else categories.index(xs[i])
                      + plotting.dodge(present[xs[i]].index(j), len(present[xs[i]]), 0.3) for i in order]
                means = [float(g[f"{metric}_mean"].iloc[i]) for i in order]
                cis = [float(g[f"{metric}_ci95"].iloc[i]) for i in order]
                look = plotting.series(j, line=numeric)
                ax.errorbar(xs, means, yerr=_bars(_errors(means, cis, lo, hi)), capsize=3, ms=5,
                            **(look if numeric else {**look, "linestyle": "none"}),
                            label=_value(gval, units.get(group)) if group else None)
            if numeric:
                _x_axis(ax, x, [float(v) for v in summary[x]], units.get(x))
            else:
                plotting.category_axis(ax.xaxis, categories, x)
            plotting.unit_axis(ax.yaxis, _capital(_words(metric)), metrics_mod.unit(metric))
            ax.grid(alpha=0.3)
            if group:
                ax.legend(fontsize=8, title=group, title_fontsize=8)
            n = int(part["runs"].min()), int(part["runs"].max())
            reps = f"{n[0]}" if n[0] == n[1] else f"{n[0]}-{n[1]}"
            fixed_text = _fmt(fixed, units)
            title = f"{_capital(display.words(metric))} against {x}" + (f" ({fixed_text})" if fixed else "")
            ax.set_title(title, fontsize=9)
            caption = (f"Scenario {sweep}: {_words(metric)} against {x}"
                       + (f", one {'line' if numeric else 'marker'} per {group}" if group else "")
                       + (f"; {fixed_text}" if fixed else "")
                       + f". Mean of {reps} replications per point; bars are 95% confidence intervals (Student t)"
                       + (", clipped to the quantity's range" if math.isfinite(hi) or math.isfinite(lo) else "")
                       + ".")
            name = f"{_slug(sweep)}__{_slug(metric)}_vs_{_slug(x)}{'__' + str(k) if fixed else ''}.png"
            path = _save(fig, out / name)
            figures.append(Figure(path, title, caption))
    return figures


def _key(v: Any) -> Any:
    """A parameter's value as a key: a missing value (NaN, which equals
    nothing) as None."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _value(v: Any, unit: str | None) -> str:
    """A swept value with its unit, scaled: 5e-06 s is "5 us"; a missing one
    (a parameter some runs do not have) "none"."""
    if _key(v) is None:
        return "none"
    if unit and isinstance(v, int | float) and not isinstance(v, bool):
        factor, shown = display.scale([v], unit)
        return f"{display.number(v * factor)} {shown}"
    return display.number(v)


def scatter_figure(sweep: str, summary: pd.DataFrame, params: list[str], out: Path,
                   units: dict[str, str] | None = None) -> Figure | None:
    """Efficiency against fairness, one marker per point (97-0424 Fig. 4):
    the colour says the last parameter's value, the marker's shape the
    others' (up to ten combinations; beyond, each point is labelled with
    them), so that every point can be told apart."""
    if summary.empty or "efficiency_mean" not in summary or "fairness_mean" not in summary:
        return None
    ok = summary.dropna(subset=["efficiency_mean", "fairness_mean"])
    if ok.empty:
        return None
    units = units or {}
    group = params[-1] if params else None
    others = [p for p in params if p != group]
    colours = list(dict.fromkeys(_key(v) for v in ok[group])) if group else [None]
    shapes = list(dict.fromkeys(tuple(map(_key, r)) for r in ok[others].itertuples(index=False))) if others else [()]
    labelled = len(shapes) > len(plotting.MARKERS)
    with plotting.style():
        fig, ax = plt.subplots(figsize=(7.2, 4.6), dpi=110)
        for row in ok.to_dict("records"):
            c = colours.index(_key(row[group])) if group else 0
            m = 0 if labelled else shapes.index(tuple(_key(row[p]) for p in others))
            f, e = row["fairness_mean"], row["efficiency_mean"]
            ax.errorbar([f], [e], xerr=_bars(_errors([f], [row["fairness_ci95"]], 0.0, 1.0)),
                        yerr=_bars(_errors([e], [row["efficiency_ci95"]], 0.0, 1.0)), capsize=2, ms=6, linestyle="none",
                        color=plotting.COLOURS[c % len(plotting.COLOURS)], marker=plotting.MARKERS[m], mfc="none",
                        mew=1.4)  # hollow: points that coincide stay visible
            if labelled:
                ax.annotate(", ".join(_value(row[p], units.get(p)) for p in others), (f, e), fontsize=6,
                            xytext=(3, 3), textcoords="offset points", color="0.3")
        handles = []
        if group:
            handles += [Patch(color=plotting.COLOURS[i % len(plotting.COLOURS)],
                              label=f"{group} = {_value(v, units.get(group))}") for i, v in enumerate(colours)]
        if others and not labelled:
            handles += [Line2D([], [], linestyle="none", marker=plotting.MARKERS[i], color="0.35", mfc="none",
                               mew=1.4, label=_fmt(dict(zip(others, key, strict=True)), units))
                        for i, key in enumerate(shapes)]
        plotting.unit_axis(ax.xaxis, _capital(LABELS["fairness"]))
        plotting.unit_axis(ax.yaxis, _capital(LABELS["efficiency"]))
        ax.set_xlim(0, 1.05)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        if handles and max(len(h.get_label()) for h in handles) > 30:  # long labels: below the axes, full width
            ncol = 1 if max(len(h.get_label()) for h in handles) > 45 else 2
            fig.set_size_inches(6.4, 4.6 + 0.19 * math.ceil(len(handles) / ncol))
            ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=ncol,
                      borderaxespad=0)
        elif handles:
            ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        title = "Efficiency against fairness"
        ax.set_title(title, fontsize=9)
        path = _save(fig, out / f"{_slug(sweep)}__efficiency_vs_fairness.png")
    caption = (f"Scenario {sweep}: one marker per sweep point ({', '.join(params) or 'no parameters'}"
               + (f"; colour: {group}" if group else "")
               + (f"; shape: {', '.join(others)}" if others and not labelled else "")
               + (f"; labels: {', '.join(others)}" if labelled else "")
               + "), mean over replications with 95% confidence intervals (clipped to 0-1); the desirable corner is "
               "the upper right.")
    return Figure(path, title, caption)


def series_figure(store: Store, run_id: int, out: Path) -> Figure | None:
    """The time series of one run, one panel per probe, titled in words
    ("Congestion window of tcp0"), each axis with its unit."""
    df = store.series(run_id)
    if df.empty:
        return None
    runs = store.runs(run_id=run_id)
    row = runs.iloc[0]
    units = dict(runs.attrs.get("units", {}))
    params = {c: row[c] for c in runs.columns if c not in _RUN_COLUMNS and c in _param_columns(runs)}
    names = list(dict.fromkeys(df["name"]))
    with plotting.style():
        fig, axes = plt.subplots(len(names), 1, figsize=(7, 2.2 * len(names) + 0.8), dpi=110, sharex=True,
                                 squeeze=False)
        for ax, name in zip(axes[:, 0], names, strict=True):
            s = df[df["name"] == name]
            kind, target = str(s["kind"].iloc[0]), str(s["target"].iloc[0])
            ax.step(s["t_s"], s["value"], where="post", lw=0.9, color=plotting.COLOURS[0])
            plotting.unit_axis(ax.yaxis, _capital(display.series_words(kind)), s["unit"].iloc[0])
            ax.yaxis.label.set_fontsize(8)
            words = display.series_title(str(name), kind, target)
            ax.set_title(words if words.startswith(f"{name}: ") else _capital(words), fontsize=8)
            ax.grid(alpha=0.3)
        plotting.unit_axis(axes[-1, 0].xaxis, "Time", "s")
        title = f"Run {run_id} of {row['sweep']}" + (f" ({_fmt(params, units)})" if params else "")
        fig.suptitle(title, fontsize=9)
        path = _save(fig, out / f"{_slug(str(row['sweep']))}__run{run_id}_series.png")
    caption = (f"Scenario {row['sweep']}, run {run_id} (seed {row['seed']}, replication {row['replication']}"
               + (f"; {_fmt(params, units)}" if params else "") + "): sampled probes.")
    return Figure(path, title, caption)


_RUN_COLUMNS = {"run_id", "sweep", "sweep_id", "scenario_hash", "point", "replication", "seed", "status", "error",
                "wall_s", "atmlab_version", "git_commit", "git_dirty", "started_at", "finished_at"}


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
        work, made = _staging(out)  # drawn here, then moved into `out` whole: a failure leaves nothing
        try:
            for name, runs, params, chosen in plans:
                summary = summarize_frame(runs, params or ["scenario_hash"], chosen)
                units = dict(runs.attrs.get("units", {}))
                figs: list[Figure] = []
                if params:
                    for m in chosen:
                        figs += metric_figures(name, summary, params, m, work, x, group, units)
                scatter = scatter_figure(name, summary, params, work, units)
                if scatter:
                    figs.append(scatter)
                wanted = run_id if run_id is not None else _first_run_with_series(store, runs)
                if wanted is not None and wanted in set(runs.run_id):
                    fig = series_figure(store, int(wanted), work)
                    if fig:
                        figs.append(fig)
                sections.append((name, figs, summary[[c for c in summary.columns if c == "runs" or c in params
                                                      or c.endswith(("_mean", "_ci95"))]] if params else summary,
                                 units))
            (work / "index.html").write_text(_html(Path(db), sections), encoding="utf-8")
        except BaseException:
            shutil.rmtree(made, ignore_errors=True)
            raise
    return _publish(work, out)


def _staging(out: Path) -> tuple[Path, Path]:
    """A new hidden folder beside `out` to draw the report in, and the
    outermost folder made for it (to remove on failure: the staging folder,
    or the first missing parent of `out`)."""
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out}: a file, not a folder")
    missing = next((p for p in reversed([out.parent, *out.parent.parents]) if not p.exists()), None)
    out.parent.mkdir(parents=True, exist_ok=True)
    for k in itertools.count():  # not tempfile.mkdtemp: its folder is private (0700), the report's is not
        work = out.parent / f".{out.name}.{os.getpid()}-{k}.partial"
        try:
            work.mkdir()
            return work, missing or work
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def _publish(work: Path, out: Path) -> Path:
    """Moves the finished report from `work` into `out`: the folder itself
    if `out` is new, else file by file (the figures, then ``index.html``),
    each replacing its namesake."""
    if not out.exists():
        os.replace(work, out)
        return out / "index.html"
    for f in sorted(work.iterdir(), key=lambda p: (p.name == "index.html", p.name)):
        os.replace(f, out / f.name)
    work.rmdir()
    return out / "index.html"


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
