"""Rich views of atmlab's objects in Jupyter (``_repr_html_``).

A :class:`atmlab.Result` shows its summary (:mod:`atmlab.summary`) as
tables; a :class:`atmlab.Sweep` its points; a :class:`atmlab.SweepOutcome`
what a run of the sweep did. Everything is escaped plain HTML, no scripts
or styles beyond alignment.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from . import summary

if TYPE_CHECKING:
    from .result import Result
    from .sweep import Sweep, SweepOutcome

MAX_POINTS_SHOWN = 50


def result_html(r: Result) -> str:
    return summary.result_html(r)


def sweep_html(s: Sweep) -> str:
    e = html.escape
    n = len(s.points)
    head = (f"<h3 style='margin:0'>{e(s.name)}</h3><p>sweep of {n:,} point{'s' if n != 1 else ''} x "
            f"{s.replications} replication{'s' if s.replications != 1 else ''} = {n * s.replications:,} runs, "
            f"seed {s.seed}; from {e(s.source)}"
            + (f"; until the 95% interval of {e(s.ci_metric)} is within ±{s.ci_target:g} "
               f"(at most {s.max_replications} replications)" if s.ci_target is not None else "")
            + "</p>")
    table = summary.Section("Points", ["point", *s.param_names, "scenario hash"], 1 + len(s.param_names))
    for p in s.points[:MAX_POINTS_SHOWN]:
        table.rows.append([str(p.index), *[str(p.params.get(k, "")) for k in s.param_names], p.scenario_hash])
    if n > MAX_POINTS_SHOWN:
        table.note = f"the first {MAX_POINTS_SHOWN} of {n:,} points"
    return f"<div class='atmlab-sweep'>{head}{summary.section_html(table)}</div>"


def outcome_html(o: SweepOutcome) -> str:
    e = html.escape
    rows = [("points", f"{o.points:,}"), ("runs in the sweep", f"{o.runs:,}"), ("ran now", f"{o.ran:,}"),
            ("failed", f"{o.failed:,}"), ("already stored", f"{o.skipped:,}"), ("executor", o.executor)]
    if o.interrupted:
        rows.append(("interrupted", "yes: run the sweep again to resume"))
    body = "".join(f"<tr><th style='text-align:left'>{e(a)}</th><td style='text-align:right'>{e(b)}</td></tr>"
                   for a, b in rows)
    failures = ""
    if o.failures:
        t = summary.Section("Failed runs", ["point", "replication", "error"], 3)
        for rec in o.failures[:MAX_POINTS_SHOWN]:
            t.rows.append([str(rec.spec.point), str(rec.spec.replication), rec.error or ""])
        failures = summary.section_html(t)
    return f"<div class='atmlab-sweep-outcome'><table>{body}</table>{failures}</div>"
