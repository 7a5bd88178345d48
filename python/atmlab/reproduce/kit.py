"""The reproduction kit: what every study of ``atmlab reproduce`` stands on.

A study (:class:`Study`) says what it runs and how it compares: the
:class:`Grid` s of scenario points it runs, how to measure one run
(:meth:`Study.measure`), the published values it compares with
(:meth:`Study.published`: one :class:`Published` per value, with its
:class:`Tolerance`), its prose claims (:meth:`Study.claims`) and its
figures. :func:`reproduce` does the rest, the same way for every study:

1. every grid becomes a :class:`atmlab.Sweep`, run into the results
   database (so an interrupted reproduction resumes, and ``--replications``
   repeats each point with independent random streams);
2. every stored run is measured: one row of ``runs`` per run (its
   configuration, replication and quantities);
3. the replications of a configuration are aggregated: one row of
   ``points`` per configuration, with each quantity's mean, the half-width
   of its 95 % Student-t confidence interval (``<q>_ci95``) and the number of
   runs (``replications``);
4. the published values are joined with the points: the comparison table,
   one row per published value, with the same columns for every study
   (:data:`COMPARISON_COLUMNS`; ``in_ci95`` says whether the published value
   lies within the simulated 95 % interval, empty with one replication);
5. the claims are evaluated on the points: the claims table
   (:data:`CLAIM_COLUMNS`);
6. CSVs (``<id>.csv`` with every point, ``<id>_comparison.csv``,
   ``<id>_claims.csv``) and the figures are written, and a
   :class:`Reproduction` goes back to the command line.

A run's configuration is found from its scenario hash (the sweep's own
points, with the parameters as written), never by re-reading swept values.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import pandas as pd

from .. import quantity
from ..result import Result
from ..stats import summarize
from ..store import Store
from ..executors import Executor, make
from ..sweep import Progress as SweepProgress, Sweep, run_together
from .entry import Entry

# ------------------------------------------------------------ what a study says


@dataclass(frozen=True)
class Grid:
    """Points of one scenario template.

    ``template`` is a scenario with ``[params]``; ``sweep`` is what its
    ``[sweep]`` would be (lists, ranges, ``zip`` groups); ``labels`` are
    columns every point of the grid gets (the published table its rows
    belong to, a configuration's name); ``duration``, if given, replaces the
    template's simulated time (the short runs of ``--quick``).
    """

    name: str
    template: Mapping[str, Any]
    sweep: Mapping[str, Any] = field(default_factory=dict)
    labels: Mapping[str, Any] = field(default_factory=dict)
    duration: str | None = None


ToleranceKind = Literal["absolute", "relative", "factor", "at_least", "at_most"]


@dataclass(frozen=True)
class Tolerance:
    """How far a simulated value may be from the published one.

    * ``absolute(d)``: ``|simulated - published| <= d`` (``d = 0``: exact);
    * ``relative(r)``: ``|simulated - published| <= r |published|``;
    * ``factor(f)``: ``published / f <= simulated <= published * f``;
    * ``at_least(d)`` / ``at_most(d)``: the published value is a bound the
      simulation must reach: ``simulated >= published - d`` (or ``<=``).
    """

    kind: ToleranceKind
    value: float = 0.0

    @classmethod
    def absolute(cls, d: float) -> Tolerance:
        return cls("absolute", d)

    @classmethod
    def exact(cls) -> Tolerance:
        return cls("absolute", 0.0)

    @classmethod
    def relative(cls, r: float) -> Tolerance:
        return cls("relative", r)

    @classmethod
    def factor(cls, f: float) -> Tolerance:
        return cls("factor", f)

    @classmethod
    def at_least(cls, d: float = 0.0) -> Tolerance:
        return cls("at_least", d)

    @classmethod
    def at_most(cls, d: float = 0.0) -> Tolerance:
        return cls("at_most", d)

    def holds(self, published: float, simulated: float) -> bool | None:
        """Whether `simulated` is within the tolerance (``None`` if either is missing)."""
        if _missing(published) or _missing(simulated):
            return None
        eps = 1e-9 * max(1.0, abs(published))  # a value printed exactly is within "exact"
        match self.kind:
            case "absolute":
                return abs(simulated - published) <= self.value + eps
            case "relative":
                return abs(simulated - published) <= self.value * abs(published) + eps
            case "factor":
                lo, hi = sorted((published / self.value, published * self.value))
                return lo - eps <= simulated <= hi + eps
            case "at_least":
                return simulated >= published - self.value - eps
            case "at_most":
                return simulated <= published + self.value + eps
        raise AssertionError(self.kind)

    def half_width(self, published: float) -> float | None:
        """How far from `published` a value may lie (the lower side of a
        factor); ``None`` for exact values and one-sided bounds, which a
        confidence interval is not measured against."""
        match self.kind:
            case "absolute":
                return self.value or None
            case "relative":
                return self.value * abs(published) or None
            case "factor":
                return abs(published) * (1 - 1 / self.value) or None
        return None

    def __str__(self) -> str:
        match self.kind:
            case "absolute":
                return "exact" if self.value == 0 else f"+/-{self.value:g}"
            case "relative":
                return f"+/-{self.value * 100:g} %"
            case "factor":
                return f"x/ {self.value:g}"
            case "at_least":
                return ">= published" + (f" - {self.value:g}" if self.value else "")
            case "at_most":
                return "<= published" + (f" + {self.value:g}" if self.value else "")
        raise AssertionError(self.kind)


@dataclass(frozen=True)
class Published:
    """One value the study publishes: ``quantity`` (a column of the points)
    at the configuration ``config`` (columns of the points and their
    values), with the tolerance atmlab compares it with."""

    quantity: str
    value: float
    config: Mapping[str, Any]
    tolerance: Tolerance
    unit: str = ""
    source: str = ""  # where in the study: "Table 1", "s7.5.6"
    note: str = ""


@dataclass(frozen=True)
class Claim:
    """A prose statement of the study, checked on the points.

    ``measure`` says what atmlab computes, ``threshold`` the bound it must
    meet and ``basis`` where that bound comes from (the study's words, a
    standard, atmlab's reading of a qualitative word); ``value`` is the
    simulated value and ``holds`` the verdict (``None``: the configurations
    it needs were not run)."""

    claim: str
    statement: str
    measure: str
    threshold: str
    value: float | str | None
    holds: bool | None
    basis: str = ""
    note: str = ""


@dataclass(frozen=True)
class Alternative:
    """Another answer to one of the study's open choices (its page's "Open
    choices" table): ``choice`` is the choice's id there (``TA-11``),
    ``name`` says what the alternative is, and ``overrides`` are the
    ``--set`` overrides (``KEY=VALUE``) that make every grid's scenario take
    it. ``atmlab reproduce --open-choices`` runs every configuration under
    each alternative in turn, the others as chosen (one at a time), and
    reports the range of each compared value over the chosen model and the
    alternatives."""

    choice: str
    name: str
    overrides: tuple[str, ...]


class Study(Protocol):
    """What a study module provides (as its ``STUDY``); see the module docs.
    Its id, aliases, title and document are in the registry
    (:mod:`atmlab.reproduce`)."""

    def grids(self, quick: bool) -> Sequence[Grid]:
        """The grids of scenario points the study runs (``quick``: a small
        subset with short runs, for smoke tests)."""
        ...

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        """The configuration columns of a point: its grid's labels and its
        swept parameters (typed: quantities in base units), named as the
        study's tables name them."""
        ...

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, float]:
        """The quantities of one run."""
        ...

    def published(self) -> Sequence[Published]:
        """Every published value the study compares with."""
        ...

    def claims(self, points: pd.DataFrame) -> Sequence[Claim]:
        """The study's prose claims, evaluated on the points."""
        ...

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> Sequence[Path]:
        """The study's figures, written into `folder`."""
        ...


class StudyBase:
    """Defaults for the optional parts of a :class:`Study`."""

    quick_note: ClassVar[str] = "--quick: short runs on a subset; not comparable with the published values."
    # Whether ``--algorithm`` may put another ABR switch algorithm at its
    # switch ports (a study of ABR switches whose measures do not read one
    # algorithm's own readings).
    switch_algorithms: ClassVar[bool] = False

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        return {**grid.labels, **{k: quantity.value(quantity.parse(v)) for k, v in params.items()}}

    def published(self) -> Sequence[Published]:
        return []

    def claims(self, points: pd.DataFrame) -> Sequence[Claim]:
        return []

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> Sequence[Path]:
        return []

    def derive(self, points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
        """Columns computed from the aggregated points (and the runs), added
        after aggregation (default: none)."""
        return points

    def alternatives(self) -> Sequence[Alternative]:
        """The alternatives of the study's open choices that
        ``--open-choices`` runs (default: none)."""
        return []

    def views(self, result: StudyResult) -> list[tuple[str, pd.DataFrame]]:
        """Further tables to print (default: none)."""
        return []


# ------------------------------------------------------------ running a study


class Progress(Protocol):
    """Called with a message and, when known, runs done and runs in total."""

    def __call__(self, message: str, done: int | None = None, total: int | None = None) -> None: ...


DB_NAME = "atmlab.sqlite"  # a reproduction's results database, in its folder


@dataclass
class Options:
    """What the command line asked for."""

    out: Path
    quick: bool = False
    replications: int = 1
    # The results database; None: ``atmlab.sqlite`` in the study's folder
    # (each reproduction keeps its runs apart from the user's own sweeps).
    db: Path | None = None
    jobs: int | None = None
    seed: int | None = None
    # Add replications (doubling, up to max_replications) until every
    # compared value's 95 % interval is at most this fraction of its
    # tolerance (``--ci-target``); None: just ``replications``.
    ci_target: float | None = None
    max_replications: int = 10
    # Also run every configuration under each alternative of the study's
    # open choices (Study.alternatives) and report the range of each
    # compared value (``--open-choices``).
    open_choices: bool = False
    # Every switch port's ABR controller replaced by this algorithm (on its
    # defaults; ``--algorithm``), for a study whose ``switch_algorithms`` is
    # true; None: the study's own.
    algorithm: str | None = None
    # The workers every sweep of the command runs on (atmlab.executors.make);
    # None: reproduce() makes its own from `jobs` and closes it.
    executor: Executor | None = None

    def __post_init__(self) -> None:
        if self.db is None:
            self.db = self.folder / DB_NAME

    def csv_path(self, default_name: str) -> Path:
        """``--out`` may name the CSV or the folder for everything."""
        return self.out if self.out.suffix == ".csv" else self.out / default_name

    @property
    def folder(self) -> Path:
        return self.out.parent if self.out.suffix == ".csv" else self.out


@dataclass
class SweepsRun:
    """What :func:`run_sweeps` did."""

    interrupted: bool = False
    failures: list[str] = field(default_factory=list)


def run_sweeps(plan: Sequence[tuple[str, Sweep]], options: Options, progress: Progress) -> SweepsRun:
    """Runs a reproduction's sweeps (``(label, sweep)`` pairs) into
    ``options.db`` as one batch, the longest runs first
    (:func:`atmlab.sweep.run_together`: no worker waits for one grid's
    last run before the next grid starts), with one progress count over
    all of them; runs already in the database are skipped, so an
    interrupted reproduction resumes. Every sweep runs on
    ``options.executor`` (one set of workers for all), else on workers made
    here for all of them."""
    executor = options.executor or make(options.jobs)
    try:
        def tick(label: str, p: SweepProgress) -> None:
            progress(f"{label}: {p.done + p.skipped}/{p.total + p.skipped}", p.skipped + p.done, p.total + p.skipped)

        outcome = run_together(plan, options.db, executor, tick)
    finally:
        if options.executor is None:
            executor.close()
    failures = [f"{label} {rec.spec.params}: {rec.error}" for label, rec in outcome.failures]
    return SweepsRun(outcome.interrupted, failures)


COMPARISON_COLUMNS = ("source", "quantity", "published", "simulated", "ci95", "in_ci95", "replications", "tolerance",
                      "tolerance_width", "unit", "holds", "note")
# With --open-choices, each compared value's range over the chosen model and
# the alternatives of the study's open choices, and whether the published
# value lies within tolerance of some value in it (information beside the
# verdict, never a second verdict).
OPEN_COLUMNS = ("open_low", "open_high", "open_alternatives", "holds_in_open_range")
CLAIM_COLUMNS = ("claim", "statement", "measure", "threshold", "value", "holds", "basis", "note")


@dataclass
class StudyResult:
    """Everything a reproduction measured, before it is written out."""

    runs: pd.DataFrame  # one row per run: configuration, replication, quantities, cell_hops, wall_s
    points: pd.DataFrame  # one row per configuration: means, <q>_ci95, replications
    comparison: pd.DataFrame  # one row per published value that was run (COMPARISON_COLUMNS after the config)
    claims: pd.DataFrame  # one row per claim (CLAIM_COLUMNS)
    config_columns: list[str]
    quantities: list[str]


@dataclass
class Agreement:
    """How a reproduction agrees with its study, in numbers."""

    published: int = 0  # published values the study compares with
    compared: int = 0  # of those, run here
    within: int = 0  # of those, within their tolerance
    claims: int = 0  # claims evaluated
    held: int = 0  # of those, held
    runs: int = 0
    cell_hops: float = 0.0
    run_wall_s: float = 0.0  # the runs' own time (one core each)
    wall_s: float = 0.0  # the reproduction's wall time, this command

    def line(self) -> str:
        parts = []
        if self.published:
            parts.append(f"{self.within} of {self.compared} published values within tolerance"
                         + (f" ({self.published - self.compared} not run)" if self.compared < self.published else ""))
        if self.claims:
            parts.append(f"{self.held} of {self.claims} claims hold")
        return "; ".join(parts) or "nothing to compare"

    def speed(self) -> str:
        rate = (f"{self.cell_hops / self.run_wall_s / 1e6:.1f} M cell-hops per second per core"
                if self.run_wall_s > 0 else "no timing")
        return f"{self.runs} runs, {self.cell_hops:.3g} cell-hops in {self.run_wall_s:.0f} s of run time: {rate}"


@dataclass
class Reproduction:
    """What a reproduction produced, for the command line."""

    title: str
    table: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    summary: str = ""
    extra: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)  # runs that failed (their rows are missing)
    agreement: Agreement = field(default_factory=Agreement)

    @classmethod
    def stopped(cls, study: str) -> Reproduction:
        """An interrupted reproduction (its finished runs are in the database)."""
        return cls(title=f"{study}: interrupted", table=pd.DataFrame(), interrupted=True)


def sweep_of(grid: Grid, options: Options, quick_duration: str | None = None) -> Sweep:
    """The sweep of a grid."""
    import copy

    t = copy.deepcopy(dict(grid.template))
    t["sweep"] = copy.deepcopy(dict(grid.sweep))
    duration = grid.duration or quick_duration
    if duration:
        t.setdefault("simulation", {})["duration"] = duration
    return Sweep(t, replications=options.replications, seed=options.seed)


def measure_runs(study: Study, plan: Sequence[tuple[Grid, Sweep]], options: Options) -> pd.DataFrame:
    """One row per stored run of the plan: configuration, replication, the
    study's quantities, and the run's cell-hops and wall time. Only the
    replications this command asks for (not extra ones stored by an
    earlier command with more)."""
    rows: list[dict[str, Any]] = []
    with Store(options.db) as store:
        for grid, sweep in plan:
            by_hash = {p.scenario_hash: p for p in sweep.points}
            runs = sweep.results(options.db, status="ok")
            if runs.empty:
                continue
            runs = runs[runs.replication < sweep.replications]
            for r in runs.itertuples(index=False):
                point = by_hash[r.scenario_hash]
                config = study.configuration(grid, point.params)
                result = store.result(int(r.run_id))
                rows.append({**config, "replication": int(r.replication), **study.measure(result, config),
                             "cell_hops": result.cell_hops, "wall_s": float(r.wall_s)})
    return pd.DataFrame(rows)


def aggregate(runs: pd.DataFrame, config_columns: list[str], quantities: list[str]) -> pd.DataFrame:
    """One row per configuration (in the order first run): the number of
    runs, and per quantity its mean and 95 % CI half-width."""
    if runs.empty:
        return pd.DataFrame(columns=[*config_columns, "replications"])
    rows = []
    for key, g in runs.groupby(config_columns, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(config_columns, key, strict=True))
        row["replications"] = len(g)
        for q in quantities:
            s = summarize(g[q].tolist())
            row[q], row[f"{q}_ci95"] = s.mean, s.ci
        rows.append(row)
    return pd.DataFrame(rows)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _norm(v: Any) -> Any:
    """A configuration value as the join compares it: numbers by value
    (``5``, ``5.0`` and ``numpy.int64(5)`` are one), text as it is."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, int | float):
        return v
    return float(f"{float(v):.12g}")


def in_interval(published: float, simulated: Any, ci95: Any) -> bool | None:
    """Whether `published` lies within the simulated mean's 95 % interval
    (mean +/- ci95); ``None`` where there is no interval (one replication,
    or a value that is not a number). It says whether the published value
    is within the simulation's own spread, which the tolerance does not:
    a value can hold within a wide tolerance and still lie outside a narrow
    interval (a systematic difference), or miss a tolerance while inside a
    wide interval (too few runs to tell)."""
    try:
        sim, ci = float(simulated), float(ci95)
    except (TypeError, ValueError):
        return None
    if math.isnan(sim) or math.isnan(ci):
        return None
    return abs(float(published) - sim) <= ci


def compare(published: Iterable[Published], points: pd.DataFrame) -> pd.DataFrame:
    """The comparison table: one row per published value whose
    configuration was run, its configuration columns first, then
    :data:`COMPARISON_COLUMNS`."""
    records = points.to_dict("records") if not points.empty else []
    indexes: dict[tuple[str, ...], dict[tuple[Any, ...], dict[str, Any]]] = {}
    rows = []
    for p in published:
        keys = tuple(sorted(p.config))
        index = indexes.get(keys)
        if index is None:  # the points by the values of these configuration columns
            index = indexes[keys] = {}
            for rec in records:
                index.setdefault(tuple(_norm(rec.get(k)) for k in keys), rec)
        point = index.get(tuple(_norm(p.config[k]) for k in keys))
        if point is None or p.quantity not in point:
            continue  # not run (--quick, or a run that failed)
        sim = point[p.quantity]
        ci = point.get(f"{p.quantity}_ci95", math.nan)
        rows.append({**p.config, "source": p.source, "quantity": p.quantity, "published": p.value,
                     "simulated": sim, "ci95": ci, "in_ci95": in_interval(p.value, sim, ci),
                     "replications": point.get("replications"), "tolerance": str(p.tolerance),
                     "tolerance_width": p.tolerance.half_width(p.value), "unit": p.unit,
                     "holds": p.tolerance.holds(p.value, sim), "note": p.note})
    return pd.DataFrame(rows)


def claims_table(claims: Iterable[Claim]) -> pd.DataFrame:
    return pd.DataFrame([{c: getattr(k, c) for c in CLAIM_COLUMNS} for k in claims], columns=list(CLAIM_COLUMNS))


def evaluate(study: Study, runs: pd.DataFrame, config_columns: list[str]) -> StudyResult:
    """Points, comparison and claims from the measured runs."""
    meta = {"replication", "cell_hops", "wall_s"}
    quantities = [c for c in runs.columns if c not in config_columns and c not in meta]
    points = aggregate(runs, config_columns, quantities)
    derive = getattr(study, "derive", None)
    if derive is not None:
        points = derive(points, runs)
    comparison = compare(study.published(), points)
    claims = claims_table(study.claims(points))
    return StudyResult(runs, points, comparison, claims, config_columns, quantities)


def too_wide(comparison: pd.DataFrame, target: float) -> int:
    """How many compared values have no 95 % interval yet (one replication)
    or one wider than `target` times their tolerance's half-width (values
    compared exactly or against a bound do not count)."""
    n = 0
    for row in comparison.itertuples():
        width = row.tolerance_width
        if _missing(width) or _missing(row.simulated):
            continue
        ci = float(row.ci95) if not _missing(row.ci95) else math.nan
        if (row.replications or 0) < 2 or not ci <= target * width:
            n += 1
    return n


def reproduce(entry: Entry, study: Study, options: Options, progress: Progress) -> Reproduction:
    """Runs `study` (see the module docs) and writes its CSVs and figures.
    With ``options.ci_target`` the replications double until every compared
    value's interval is narrow enough against its tolerance (or they reach
    ``options.max_replications``); the runs already stored are reused."""
    if options.executor is None:  # one set of workers for every round of --ci-target
        executor = make(options.jobs)
        try:
            return reproduce(entry, study, replace(options, executor=executor), progress)
        finally:
            executor.close()
    t0 = time.perf_counter()
    folder = options.folder
    folder.mkdir(parents=True, exist_ok=True)
    wide_note = ""
    while True:
        plan = [(g, sweep_of(g, options)) for g in grids_of(study, options)]
        ran = run_sweeps([(g.name, s) for g, s in plan], options, progress)
        if ran.interrupted:
            return Reproduction.stopped(entry.id)
        runs = measure_runs(study, plan, options)
        config_columns = _config_columns(study, plan)
        res = evaluate(study, runs, config_columns)
        if options.ci_target is None or res.comparison.empty:
            break
        wide = too_wide(res.comparison, options.ci_target)
        wide_note = (f"{options.replications} replications: {len(res.comparison) - wide} of "
                     f"{len(res.comparison)} compared values have a 95% interval within "
                     f"{options.ci_target:g} x their tolerance (exact values and bounds count as within)")
        if not wide or options.replications >= options.max_replications:
            break
        options = replace(options, replications=min(options.max_replications, 2 * options.replications))

    open_note = ""
    alternatives = list(study.alternatives()) if options.open_choices and hasattr(study, "alternatives") else []
    if options.open_choices:
        if not alternatives:
            open_note = "--open-choices: this study declares no alternatives to run"
        else:
            opened = _open_choices(study, res, alternatives, options, progress, config_columns)
            if opened is None:
                return Reproduction.stopped(entry.id)
            res, open_note = opened

    csv = options.csv_path(f"{entry.id}.csv")
    csv.parent.mkdir(parents=True, exist_ok=True)
    res.points.to_csv(csv, index=False)
    files = [csv]
    if not res.comparison.empty:
        files.append(_write(res.comparison, csv.with_name(f"{entry.id}_comparison.csv")))
    if not res.claims.empty:
        files.append(_write(res.claims, csv.with_name(f"{entry.id}_claims.csv")))
    from .. import plotting  # matplotlib: imported only when figures are drawn

    quick_note = getattr(study, "quick_note", StudyBase.quick_note) if options.quick else None
    with plotting.style(), plotting.quick(quick_note):  # every figure marked "(--quick)" with the note
        files += list(study.figures(res.points, res.comparison, folder))
        if alternatives and OPEN_COLUMNS[0] in res.comparison:
            drawn = open_choices_figure(entry.id, res.comparison, folder / f"{entry.id}_open_choices.png",
                                        alternatives)
            files += [drawn] if drawn is not None else []

    agreement = _agreement(study, res, runs)
    agreement.wall_s = time.perf_counter() - t0
    lines = [agreement.line(), agreement.speed(),
             f"{len(res.points)} configurations ({options.replications} "
             f"replication{'s' if options.replications != 1 else ''} each) in {csv}; the runs in {options.db}"]
    if wide_note:
        lines.insert(1, wide_note)
    if open_note:
        lines.insert(1, open_note)
    if quick_note:
        lines.insert(0, quick_note)
    if options.algorithm is not None:
        lines.insert(0, f"--algorithm {options.algorithm}: every switch port runs {options.algorithm} on its "
                        "defaults in place of the study's own algorithm; the published values are the study's")
    views = study.views(res) if hasattr(study, "views") else []
    table, extra = _display(res)
    mark = " (--quick)" if options.quick else ""  # every titled table of a quick reproduction says so
    if options.algorithm is not None:
        mark += f" [{options.algorithm}]"
    return Reproduction(title=f"{entry.id}: {entry.title}{mark}", table=table, files=files,
                        summary="\n".join(lines), extra=[(f"{t}{mark}", df) for t, df in (*extra, *views)],
                        failures=ran.failures, agreement=agreement)


def grids_of(study: Study, options: Options) -> list[Grid]:
    """The study's grids, with ``options.algorithm`` at every switch port
    if one is given (:func:`.algorithms.with_algorithm`)."""
    grids = list(study.grids(options.quick))
    if options.algorithm is None:
        return grids
    from .algorithms import with_algorithm

    return [replace(g, name=f"{g.name} [{options.algorithm}]",
                    template=with_algorithm(dict(g.template), options.algorithm)) for g in grids]


def _with_alternative(grid: Grid, alt: Alternative) -> Grid:
    """`grid` with `alt`'s overrides applied to its scenario."""
    from ..overrides import apply

    template = apply(f"{grid.name} ({alt.choice})", copy.deepcopy(dict(grid.template)), alt.overrides)
    return replace(grid, name=f"{grid.name} [{alt.choice}: {alt.name}]", template=template)


def _comparison_key(row: Mapping[str, Any], columns: Sequence[str]) -> tuple[Any, ...]:
    """A comparison row's identity: its configuration, source and quantity
    (a column the row does not have, or NaN, is None: NaN equals nothing)."""
    return tuple(None if _missing(v := row.get(c)) else _norm(v) for c in columns)


def holds_in_range(tolerance: Tolerance, published: float, low: float, high: float) -> bool | None:
    """Whether `published` is within `tolerance` of some value in [low,
    high]: inside it, or within tolerance of an end."""
    if _missing(low) or _missing(high):
        return None
    if low <= published <= high:
        return True
    ends = [tolerance.holds(published, v) for v in (low, high)]
    if all(e is None for e in ends):
        return None
    return any(bool(e) for e in ends)


def _open_choices(study: Study, res: StudyResult, alternatives: Sequence[Alternative], options: Options,
                  progress: Progress, config_columns: list[str]) -> tuple[StudyResult, str] | None:
    """Runs every grid under each alternative (one at a time) and adds the
    range of each compared value (:data:`OPEN_COLUMNS`) to the comparison;
    ``None`` if interrupted."""
    comparison = res.comparison.copy()
    if comparison.empty:
        return res, "--open-choices: nothing compared"
    key_columns = [c for c in config_columns if c in comparison.columns] + ["source", "quantity"]
    values: dict[tuple[Any, ...], list[float]] = {
        _comparison_key(r, key_columns): [float(r["simulated"])] for r in comparison.to_dict("records")}
    for alt in alternatives:
        plan = [(g2, sweep_of(g2, options)) for g2 in (_with_alternative(g, alt) for g in grids_of(study, options))]
        ran = run_sweeps([(g.name, s) for g, s in plan], options, progress)
        if ran.interrupted:
            return None
        runs = measure_runs(study, plan, options)
        if runs.empty:
            continue
        alt_res = evaluate(study, runs, config_columns)
        for r in alt_res.comparison.to_dict("records"):
            k = _comparison_key(r, key_columns)
            if k in values and not _missing(r["simulated"]):
                values[k].append(float(r["simulated"]))
    pubs = {(_comparison_key({**p.config, "source": p.source, "quantity": p.quantity}, key_columns)): p
            for p in study.published()}
    lows, highs, counts, verdicts = [], [], [], []
    for r in comparison.to_dict("records"):
        k = _comparison_key(r, key_columns)
        vs = [v for v in values[k] if not _missing(v)]
        low, high = (min(vs), max(vs)) if vs else (math.nan, math.nan)
        p = pubs.get(k)
        lows.append(low)
        highs.append(high)
        counts.append(len(vs) - 1)
        verdicts.append(holds_in_range(p.tolerance, float(r["published"]), low, high) if p is not None else None)
    comparison["open_low"], comparison["open_high"] = lows, highs
    comparison["open_alternatives"], comparison["holds_in_open_range"] = counts, verdicts
    within = sum(v is True for v in verdicts)
    note = (f"--open-choices: {len(alternatives)} alternatives of {len({a.choice for a in alternatives})} open "
            f"choices run; {within} of {len(comparison)} compared values lie within tolerance of their range over "
            f"the chosen model and the alternatives (the verdicts are the chosen model's)")
    return replace(res, comparison=comparison), note


# The figure of --open-choices: at most this many compared values per
# quantity (the first, in the comparison's order) and this many quantities.
OPEN_FIGURE_VALUES = 60
OPEN_FIGURE_PANELS = 10


def open_choices_figure(study_id: str, comparison: pd.DataFrame, path: Path,
                        alternatives: Sequence[Alternative]) -> Path | None:
    """``<id>_open_choices.png``: per compared value (one panel per
    quantity), the simulated value with its 95 % interval and its range over
    the chosen model and the alternatives (:data:`OPEN_COLUMNS`), each over
    the published value, beside the tolerance around it; ``None`` if no
    value can be drawn (nothing compared, or every published value 0)."""
    from .. import plotting  # matplotlib: imported only when figures are drawn

    import matplotlib.pyplot as plt

    rows = comparison.reset_index(drop=True)
    published = pd.to_numeric(rows["published"], errors="coerce")
    usable = published.notna() & (published != 0) & pd.to_numeric(rows["simulated"], errors="coerce").notna()
    quantities = list(dict.fromkeys(rows.loc[usable, "quantity"]))
    if not quantities:
        return None
    notes = []
    if (zero := int((published == 0).sum())):
        notes.append(f"{zero} value{'s' if zero != 1 else ''} published as 0 not drawn (no ratio).")
    if len(quantities) > OPEN_FIGURE_PANELS:
        notes.append(f"The first {OPEN_FIGURE_PANELS} of {len(quantities)} quantities drawn.")
        quantities = quantities[:OPEN_FIGURE_PANELS]
    ncols = 1 if len(quantities) == 1 else 2
    nrows = math.ceil(len(quantities) / ncols)
    fig = plt.figure(figsize=(5.2 * ncols, 2.9 * nrows + 1.3), dpi=110)
    grid = fig.add_gridspec(nrows + 1, ncols, height_ratios=[0.22 * (3 - ncols)] + [1.0] * nrows)
    key = fig.add_subplot(grid[0, :])  # the legend's row, above the panels
    key.axis("off")
    axes = [fig.add_subplot(grid[1 + k // ncols, k % ncols]) for k in range(len(quantities))]
    for ax, q in zip(axes, quantities, strict=True):
        part = rows[usable & (rows["quantity"] == q)]
        if len(part) > OPEN_FIGURE_VALUES:
            notes.append(f"Of {q}, the first {OPEN_FIGURE_VALUES} of {len(part)} values drawn.")
            part = part.iloc[:OPEN_FIGURE_VALUES]
        _open_panel(ax, part, plotting)
        unit = next((u for u in part["unit"] if isinstance(u, str) and u), "") if "unit" in part else ""
        ax.set_title(q + (f" ({unit})" if unit and unit != q else ""), fontsize=9)
        plotting.category_axis(ax.xaxis, [str(i + 1) for i in part.index],
                               f"compared value (row of {study_id}_comparison.csv)")
        ax.set_ylabel("simulated / published")
    legend: dict[str, Any] = {}  # every panel's entries, once (a panel of exact values has no tolerance)
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    order = ["published", "tolerance", "range over the open choices", "simulated (chosen model), 95 % interval"]
    labels = sorted(legend, key=lambda label: order.index(label) if label in order else len(order))
    key.legend([legend[label] for label in labels], labels, loc="center", ncols=min(len(labels), 2 * ncols),
               fontsize=8, frameon=False)
    choices = len({a.choice for a in alternatives})
    fig.suptitle(f"{study_id}: the compared values under the open choices ({len(alternatives)} "
                 f"alternative{'s' if len(alternatives) != 1 else ''} of {choices} choice{'s' if choices != 1 else ''})")
    note = ("Each value over its published one (1, dashed): the chosen model's value with its 95 % interval "
            "where replicated (points), its range over the chosen model and the alternatives (bar), the "
            "tolerance around the published value (grey). The verdicts are the chosen model's."
            + "".join(f" {n}" for n in notes))
    return plotting.save(fig, path, note=note)


def _open_panel(ax: Any, part: pd.DataFrame, plotting: Any) -> None:
    """One quantity's values of the open-choices figure, at 0, 1, 2, ..."""
    x = list(range(len(part)))
    pub = part["published"].astype(float).abs().to_numpy()
    sign = part["published"].astype(float).to_numpy() / pub  # a negative published value keeps its orientation

    def ratio(column: str) -> list[float]:
        return list(pd.to_numeric(part[column], errors="coerce").astype(float).to_numpy() * sign / pub)

    sim, low, high = ratio("simulated"), ratio("open_low"), ratio("open_high")
    lo, hi = [min(a, b) for a, b in zip(low, high, strict=True)], [max(a, b) for a, b in zip(low, high, strict=True)]
    width = pd.to_numeric(part["tolerance_width"], errors="coerce").astype(float).to_numpy() / pub
    ci = pd.to_numeric(part["ci95"], errors="coerce").astype(float).to_numpy() / pub
    tol = [(i, w) for i, w in zip(x, width, strict=True) if not math.isnan(w)]
    if tol:
        ax.bar([i for i, _ in tol], [2 * w for _, w in tol], bottom=[1 - w for _, w in tol], width=0.9,
               color="0.88", label="tolerance", zorder=1)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="published", zorder=2)
    ax.bar(x, [h - l for l, h in zip(lo, hi, strict=True)], bottom=lo, width=0.45, color=plotting.COLOURS[1],
           alpha=0.75, label="range over the open choices", zorder=3)
    ax.errorbar(x, sim, yerr=[0.0 if math.isnan(c) else c for c in ci], fmt="o", ms=3.5, capsize=2,
                color=plotting.COLOURS[0], label="simulated (chosen model), 95 % interval", zorder=4)
    ax.use_sticky_edges = False  # a margin beyond the bars, so that no point sits on the frame
    ax.margins(x=0.02, y=0.06)


def _config_columns(study: Study, plan: Sequence[tuple[Grid, Sweep]]) -> list[str]:
    """The configuration columns, in the order the study's configuration
    gives them (the union over its grids)."""
    cols: list[str] = []
    for grid, sweep in plan:
        params = sweep.points[0].params if sweep.points else {}
        for c in study.configuration(grid, params):
            if c not in cols:
                cols.append(c)
    return cols


def _agreement(study: Study, res: StudyResult, runs: pd.DataFrame) -> Agreement:
    comp = res.comparison
    evaluated = res.claims[res.claims["holds"].notna()] if not res.claims.empty else res.claims
    return Agreement(
        published=len(list(study.published())),
        compared=len(comp),
        within=int((comp["holds"] == True).sum()) if not comp.empty else 0,  # noqa: E712 (object column)
        claims=len(evaluated),
        held=int((evaluated["holds"] == True).sum()) if not evaluated.empty else 0,  # noqa: E712
        runs=len(runs),
        cell_hops=float(runs["cell_hops"].sum()) if not runs.empty else 0.0,
        run_wall_s=float(runs["wall_s"].sum()) if not runs.empty else 0.0,
    )


MAX_PRINTED_ROWS = 60


def _display(res: StudyResult) -> tuple[pd.DataFrame, list[tuple[str, pd.DataFrame]]]:
    """The comparison as printed: every row when it is short, else the
    agreement per source and quantity (the CSV has every row); and the
    claims."""
    comp, extra = res.comparison, []
    if len(comp) > MAX_PRINTED_ROWS:
        grouped = comp.groupby(["source", "quantity", "tolerance"], sort=False)
        table = grouped.agg(compared=("holds", "size"), within=("holds", lambda h: int((h == True).sum())),  # noqa: E712
                            median_abs_diff=("simulated", lambda s: float(
                                (s - comp.loc[s.index, "published"]).abs().median()))).reset_index()
    else:
        table = comp
    table = table.dropna(axis=1, how="all")  # the printout shows what there is (the CSV has every column)
    table = table.loc[:, [c for c in table.columns if not (table[c].astype(str).isin(["", "None", "nan"])).all()]]
    # What a reader can tell from the other columns stays in the CSV only: the
    # tolerance's width (from the tolerance and the published value) and a
    # replication count that every row shares (the summary line says it).
    drop = [c for c in ("tolerance_width",) if c in table]
    if "replications" in table and table["replications"].nunique(dropna=False) == 1:
        drop.append("replications")
    table = table.drop(columns=drop)
    if not res.claims.empty:
        extra.append(("claims", res.claims[["claim", "statement", "threshold", "value", "holds"]]))
    return table, extra


def _write(df: pd.DataFrame, path: Path) -> Path:
    df.to_csv(path, index=False)
    return path
