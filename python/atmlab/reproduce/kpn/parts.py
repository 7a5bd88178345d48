"""The pieces every part of the KPN reproduction is made of.

A *part* re-creates one published table: it runs its simulations, writes a
CSV (``published_*`` columns where the study prints a value, ``simulated_*``
columns) and a figure into the output folder, and returns a
:class:`PartResult` with the table to print and one summary line.
``kpn.PARTS`` lists them in the study's order; a new table (the host-model
Tables 7, 8, 10, 11) is one more module with a ``PART`` appended there.

Multi-run parts go through :class:`atmlab.Sweep` (:func:`run_grids`): every
run is stored in the results database, so an interrupted reproduction
resumes, and ``--replications`` repeats each point with independent random
streams (only the links' slot phases are random here) and averages them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ...result import Result
from ...store import Store
from ...sweep import Sweep
from .. import Options, run_sweeps

Say = Callable[[str], None]


@dataclass
class PartResult:
    """What one part produced."""

    key: str
    title: str
    table: pd.DataFrame  # the CSV's rows
    display: pd.DataFrame  # what the command line prints (shorter)
    summary: str  # one line
    files: list[Path] = field(default_factory=list)
    extra: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False

    @classmethod
    def stopped(cls, key: str) -> PartResult:
        """A part whose runs were interrupted (the finished ones are stored)."""
        return cls(key, "", pd.DataFrame(), pd.DataFrame(), "", interrupted=True)


@dataclass(frozen=True)
class Part:
    """One published table of the study, re-created."""

    key: str  # "table6", "tableC1", ...
    title: str
    run: Callable[[Options, Say], PartResult]


@dataclass
class Grid:
    """A scenario template with ``[params]`` and ``[sweep]``; ``constants``
    are added to every row (values the template does not sweep)."""

    template: dict[str, Any]
    constants: dict[str, Any] = field(default_factory=dict)


@dataclass
class Runs:
    """Every run of a part's grids: one row per point (replications
    averaged), the swept parameters and what ``extract`` took from each
    result."""

    rows: pd.DataFrame
    failures: list[str]
    interrupted: bool = False

    def indexed(self, keys: str | list[str]) -> pd.DataFrame:
        """The rows indexed by the swept ``keys`` (empty if nothing ran)."""
        return self.rows.set_index(keys) if not self.rows.empty else pd.DataFrame()

    def matched(self, published: pd.DataFrame, keys: str | list[str],
                key_of: Callable[[pd.Series], Any]) -> Iterator[tuple[Any, pd.Series, pd.Series]]:
        """``(key, published row, simulated row)`` for every published row
        whose configuration was run (``key_of`` gives its index value)."""
        sim = self.indexed(keys)
        for _, p in published.iterrows():
            key = key_of(p)
            if key in sim.index:
                yield key, p, sim.loc[key]


def run_grids(label: str, grids: list[Grid], options: Options, say: Say,
              extract: Callable[[Result], dict[str, Any]]) -> Runs:
    sweeps = [(g, Sweep(g.template, replications=options.replications, seed=options.seed)) for g in grids]
    ran = run_sweeps([(label, s) for _, s in sweeps], options, lambda message, *_: say(f"{message} runs"))
    if ran.interrupted:
        return Runs(pd.DataFrame(), ran.failures, interrupted=True)
    rows: list[dict[str, Any]] = []
    for grid, sweep in sweeps:
        runs = sweep.results(options.db, status="ok")
        if runs.empty:
            continue
        with Store(options.db) as store:
            for _, r in runs.iterrows():
                result = store.result(int(r["run_id"]))
                params = {name: r[name] for name in sweep.param_names}
                rows.append({**grid.constants, **params, "replication": int(r["replication"]), **extract(result)})
    df = pd.DataFrame(rows)
    if df.empty:
        return Runs(df, ran.failures)
    keys = [c for c in df.columns if c in _keys(grids)]
    values = [c for c in df.columns if c not in keys and c != "replication"]
    grouped = df.groupby(keys, sort=False, dropna=False)
    how = {c: "mean" if pd.api.types.is_numeric_dtype(df[c]) else "first" for c in values}
    out = grouped.agg(how) if values else pd.DataFrame(index=grouped.size().index)
    out.insert(0, "replications", grouped.size())
    return Runs(out.reset_index(), ran.failures)


def _keys(grids: list[Grid]) -> set[str]:
    keys: set[str] = set()
    for g in grids:
        keys |= set(g.constants)
        for k, v in g.template.get("sweep", {}).items():
            keys |= set(k2 for t in v.values() for k2 in t) if k == "zip" else {k}
    return keys


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, path: Path, credit: str) -> Path:
    plt = pyplot()
    fig.text(0.01, 0.01, credit, fontsize=7, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_csv(df: pd.DataFrame, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False)
    return path
