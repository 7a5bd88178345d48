"""Sweeps: every point of a scenario's ``[sweep]``, replicated, run in
parallel, stored, resumable.

>>> s = atmlab.Sweep("scenarios/examples/sweep_buffer.toml", replications=3)   # doctest: +SKIP
>>> s.run(db="results/atmlab.sqlite", jobs=2)                                    # doctest: +SKIP
>>> s.summary(db="results/atmlab.sqlite")                                        # doctest: +SKIP

A run is identified by ``(scenario_hash, seed, replication)``: running the
same sweep again skips the runs already stored with status ``ok`` (and
retries failed ones), so an interrupted sweep resumes where it stopped.
Replication ``r`` of every point uses the same master seed and index ``r``,
so points are compared on common random numbers; replications of a point
are independent (each gets its own streams, see ``docs/architecture.md``).
"""

from __future__ import annotations

import functools
import math
import subprocess
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core, expand
from .errors import ArgumentError, ScenarioError, checked_int
from .executors import Executor, make
from .overrides import check_swept
from .records import RunRecord, RunSpec
from .scenario import ScenarioLike, core_error, load
from .stats import summarize, summarize_frame, t_halfwidth
from .store import DEFAULT_DB, RUN_METRICS, Store

if TYPE_CHECKING:
    import pandas as pd


# The most replications a --ci-target adds up to, unless told (or -r is more).
DEFAULT_MAX_REPLICATIONS = 30

# Columns of `results()` and `Sweep.summary()` that are not parameters: a
# parameter may not take one of these names.
RESULT_COLUMNS = frozenset({
    "run_id", "sweep", "sweep_id", "scenario_hash", "point", "replication", "seed", "status", "error", "wall_s", "runs",
    "atmlab_version", "git_commit", "git_dirty", "started_at", "finished_at", *RUN_METRICS,
})


@dataclass
class Progress:
    """What a sweep reports after every finished run."""

    total: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    last: RunRecord | None = None


@dataclass
class SweepOutcome:
    """What a call to :meth:`Sweep.run` did."""

    points: int
    runs: int  # runs the sweep consists of now (stored or just run)
    ran: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    executor: str = ""
    failures: list[RunRecord] = field(default_factory=list)

    def _repr_html_(self) -> str:
        from .notebook import outcome_html

        return outcome_html(self)


def ci_metric_problem(name: object) -> str | None:
    """Why `name` cannot be the metric of a confidence-interval target, or
    None if it can: it must be a run-level metric (the columns of
    :func:`results`), else every point would run to the replication cap."""
    if isinstance(name, str) and name in RUN_METRICS:
        return None
    return f"{name!r} is not a run-level metric; use one of: {', '.join(RUN_METRICS)}"


@functools.cache
def provenance() -> dict[str, Any]:
    """The atmlab version, the git commit and whether the tree had
    uncommitted changes (read once per process): in a git checkout, read
    from git; else the commit the core was built from (an installed wheel
    knows it, :mod:`atmlab.about`), with ``git_dirty`` unknown."""
    from . import __version__
    from .about import commit as built_from

    out: dict[str, Any] = {"atmlab_version": f"{__version__} (core {_core.core_version()})"}
    if built_from():
        out["git_commit"] = built_from()
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists():
        try:
            commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                    timeout=10, check=True).stdout.strip()
            dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                   capture_output=True, text=True, timeout=10, check=True).stdout.strip()
            out["git_commit"], out["git_dirty"] = commit, int(bool(dirty))
        except (OSError, subprocess.SubprocessError):
            pass
    return out


class Sweep:
    """The runs of one scenario's sweep.

    ``replications`` runs per point (independent seeds); with
    ``ci_target``, more are added to each point until the 95% confidence
    interval of ``ci_metric`` has at most that half-width, or
    ``max_replications`` is reached (default: 30, or ``replications`` if
    more; without ``ci_target`` it has no use, and is not checked against
    ``replications``). ``seed`` (default: the scenario's
    ``simulation.seed``) is a whole number from 0 to 2^63 - 1, what the
    results database stores; a bad argument is an :class:`ArgumentError`.
    """

    def __init__(
        self,
        scenario: ScenarioLike,
        *,
        replications: int = 1,
        seed: int | None = None,
        ci_target: float | None = None,
        ci_metric: str = "efficiency",
        max_replications: int | None = None,
        overrides: Sequence[str] = (),
    ) -> None:
        replications = checked_int("replications", replications, 1)
        if max_replications is None:
            max_replications = max(DEFAULT_MAX_REPLICATIONS, replications)
        max_replications = checked_int("max_replications", max_replications, 1)
        if ci_target is not None and max_replications < replications:
            raise ArgumentError(f"max_replications ({max_replications}) is below replications ({replications})")
        if seed is not None:
            seed = checked_int("seed", seed, 0)
        if (problem := ci_metric_problem(ci_metric)) is not None:
            raise ArgumentError(f"ci_metric {problem}")
        if ci_target is not None and (isinstance(ci_target, bool) or not isinstance(ci_target, int | float)
                                      or not ci_target > 0):
            raise ArgumentError(f"ci_target must be a positive number, not {ci_target!r}")
        sc = load(scenario, overrides=overrides)
        self.source = sc.source
        self.overrides = sc.overrides
        self.template = sc.template
        self.name = sc.name
        self.param_names = list(expand.iter_param_names(sc.template, sc.source))
        check_swept(sc.source, self.overrides, self.param_names)
        for name in self.param_names:
            if name in RESULT_COLUMNS:
                raise ScenarioError(sc.source, f"sweep.{name}",
                                    f"'{name}' is a column of the results table; give the parameter another name")
        self.points = expand.points(sc.source, sc.template)
        # The base run's seed: checked by the expansion (a whole number in the database's range);
        # a [simulation] that is no table is the core's to report, in _validate.
        simulation = sc.data.get("simulation")
        if seed is None:
            seed = int(simulation.get("seed", 1)) if isinstance(simulation, dict) else 1
        self.seed = seed
        self.replications = max(replications, 2) if ci_target is not None else replications
        self.ci_target = ci_target
        self.ci_metric = ci_metric
        self.max_replications = max_replications
        self._jsons = {p.scenario_hash: expand.canonical_json(p.scenario) for p in self.points}
        self.sweep_hash = expand.sweep_hash([(p.params, p.scenario_hash) for p in self.points], self.seed)
        check_points(self.source, self.points, self._jsons, self.seed)

    def __repr__(self) -> str:
        return (f"<Sweep {self.name}: {len(self.points)} points x {self.replications} replications, "
                f"params {self.param_names}>")

    @property
    def label(self) -> str:
        """The sweep's name and the start of its hash (its identity)."""
        return f"{self.name} ({self.sweep_hash[:8]})"

    def _repr_html_(self) -> str:
        from .notebook import sweep_html

        return sweep_html(self)

    def spec(self, point: expand.Point, replication: int) -> RunSpec:
        return RunSpec(self.name, point.scenario_hash, self._jsons[point.scenario_hash], point.index, point.params,
                       self.seed, replication)

    def simulated_s(self, scenario_hash: str) -> float:
        """How long a point's runs simulate, in seconds (0 if its scenario
        gives no duration that reads as one): what
        :func:`atmlab.sweep.run_together` orders runs by."""
        import json

        from .quantity import Quantity, parse

        simulation = json.loads(self._jsons[scenario_hash]).get("simulation")
        d = parse(simulation.get("duration")) if isinstance(simulation, dict) else None
        return d.value if isinstance(d, Quantity) and d.unit == "s" else 0.0

    def specs(self, replications: Iterable[int] | None = None) -> list[RunSpec]:
        """The run specifications, point by point."""
        reps = list(replications if replications is not None else range(self.replications))
        return [self.spec(p, r) for p in self.points for r in reps]

    def run(
        self,
        db: str | Path = DEFAULT_DB,
        *,
        jobs: int | None = None,
        dask: str | None = None,
        progress: Callable[[Progress], None] | None = None,
        executor: Executor | None = None,
    ) -> SweepOutcome:
        """Runs what is missing from `db`; see the class docs. Returns what it did.
        On KeyboardInterrupt, stops: every finished run is already stored.
        A database that cannot be used, or that fails while runs are stored
        (a full disk), is a :class:`ResultsDatabaseError`; the runs stored
        before it stay. `executor` (from :func:`atmlab.executors.make`) runs
        several sweeps on one set of workers, which the caller closes;
        without it the sweep makes its own from `jobs` and `dask`."""
        if jobs is not None:
            jobs = checked_int("jobs", jobs, 1)
        prov = provenance()
        own = executor is None
        runner = make(jobs, dask) if executor is None else executor  # a missing extra: before the database
        try:
            with Store(db, write=True) as store:
                outcome = SweepOutcome(points=len(self.points), runs=0)
                self._register(store, prov)
                try:
                    batch = self.specs()
                    while batch:
                        self._run_batch(store, runner, batch, prov, outcome, progress)
                        batch = self._more_replications(store) if self.ci_target is not None else []
                except KeyboardInterrupt:
                    outcome.interrupted = True
                outcome.executor = runner.name
                outcome.runs = store.count_ok(self.name, self.seed, self._jsons)
        finally:
            if own:
                runner.close()
        return outcome

    def _run_batch(self, store: Store, executor: Any, batch: list[RunSpec], prov: dict[str, Any],
                   outcome: SweepOutcome, progress: Callable[[Progress], None] | None) -> None:
        finished = store.finished(s.key for s in batch)
        todo = [s for s in batch if s.key not in finished]
        state = Progress(total=len(todo), skipped=len(batch) - len(todo))
        outcome.skipped += state.skipped
        if progress:
            progress(state)
        for rec in _store_each(store, executor, todo, prov, state):
            outcome.ran += 1
            if rec.status != "ok":
                outcome.failed += 1
                outcome.failures.append(rec)
            if progress:
                progress(state)

    def _more_replications(self, store: Store) -> list[RunSpec]:
        """Replications still needed for the confidence-interval target."""
        assert self.ci_target is not None
        runs = self._runs(store)
        more: list[RunSpec] = []
        for p in self.points:
            mine = runs[runs.scenario_hash == p.scenario_hash]
            n_have = int(mine.replication.max()) + 1 if not mine.empty else 0
            values = mine[self.ci_metric].tolist() if self.ci_metric in mine else []
            s = summarize(values)
            if s.n >= 2 and not math.isnan(s.ci) and s.ci <= self.ci_target:
                continue
            if n_have >= self.max_replications:
                continue
            if s.n >= 2 and s.std > 0:
                # Solve t(n-1) * s / sqrt(n) <= target for n, starting from the normal approximation.
                need = max(n_have + 1, math.ceil((1.96 * s.std / self.ci_target) ** 2))
                while need < self.max_replications and t_halfwidth(s.std, need) > self.ci_target:
                    need += 1
            else:
                need = n_have + 1
            more += [self.spec(p, r) for r in range(n_have, min(need, self.max_replications))]
        return more

    def _register(self, store: Store, prov: dict[str, Any]) -> int:
        """Stores the sweep (its identity, file, overrides, points) if the
        database does not hold it yet; its id."""
        return store.register_sweep(
            sweep_hash=self.sweep_hash, name=self.name, seed=self.seed,
            points=[(p.index, p.scenario_hash, self._jsons[p.scenario_hash], p.params) for p in self.points],
            param_names=self.param_names, source=self.source, overrides=self.overrides, provenance=prov)

    def _runs(self, store: Store, status: str | None = "ok") -> pd.DataFrame:
        """This sweep's runs (the runs of its points' scenarios at its
        seed), in point order, then by replication."""
        sweep_id = store.sweep_id(self.sweep_hash)
        if sweep_id is None:  # never run into this database: no rows, the columns of one
            return store.runs(run_id=-1)
        return store.runs(sweep=sweep_id, status=status).reset_index(drop=True)

    def results(self, db: str | Path = DEFAULT_DB, status: str | None = None) -> pd.DataFrame:
        """One row per stored run of this sweep (see :func:`atmlab.results`)."""
        with Store(db) as store:
            return self._runs(store, status)

    def summary(self, db: str | Path = DEFAULT_DB, metrics: list[str] | None = None) -> pd.DataFrame:
        """One row per point: the swept parameters, ``n``, and mean, standard
        deviation and 95% CI half-width of each metric."""
        runs = self.results(db, status="ok")
        metrics = metrics or [m for m in RUN_METRICS if m in runs.columns and runs[m].notna().any()]
        by = [c for c in self.param_names if c in runs.columns] or ["scenario_hash"]
        out = summarize_frame(runs, by, metrics)
        out.attrs["units"] = dict(runs.attrs.get("units", {}))  # of the swept quantities
        return out


def results(db: str | Path = DEFAULT_DB, *, sweep: str | None = None, status: str | None = None,
            all_metrics: bool = False) -> pd.DataFrame:
    """The runs in a results database, one row each: ``run_id,
    scenario_hash, replication, seed, status`` and more, the swept
    parameters, and the run-level metrics (all stored metrics, per
    connection and port too, with ``all_metrics``). ``sweep`` picks one
    sweep: by id (``3`` or ``"#3"``), by name (the latest sweep of that
    name: an edited scenario run under its old name is another sweep), or
    ``"latest"`` the one used last (what ``atmlab results`` shows by
    default); without it, every sweep, one after the other. An unknown
    sweep is a KeyError saying what the database holds. The database is
    opened read-only; a missing, foreign or damaged one is a
    :class:`ResultsDatabaseError`."""
    with Store(db) as store:
        if sweep == "latest" and not store.sweep_info():
            return store.runs(status=status, all_metrics=all_metrics)
        return store.runs(sweep=sweep, status=status, all_metrics=all_metrics)


def _store_each(store: Store, executor: Any, specs: list[RunSpec], prov: dict[str, Any],
                state: Progress) -> Iterator[RunRecord]:
    """Runs `specs` on `executor`, storing each finished run at once (with
    the provenance `prov`) and counting it in `state`; yields each."""
    for rec in executor.map(specs):
        rec.provenance = prov
        store.record(rec)
        state.done += 1
        state.last = rec
        if rec.status != "ok":
            state.failed += 1
        yield rec


@dataclass
class PlanOutcome:
    """What a call to :func:`run_together` did."""

    ran: int = 0
    skipped: int = 0
    interrupted: bool = False
    failures: list[tuple[str, RunRecord]] = field(default_factory=list)  # (the sweep's label, the run)


def run_together(plan: Sequence[tuple[str, Sweep]], db: str | Path, executor: Executor,
                 progress: Callable[[str, Progress], None] | None = None) -> PlanOutcome:
    """Runs what is missing of several sweeps (``(label, sweep)`` pairs)
    into `db` as one batch on `executor`, the longest runs first; what
    :meth:`Sweep.run` does for each (sweeps registered, stored runs
    skipped, every finished run stored at once, so an interrupted batch
    resumes), without waiting for one sweep's last runs before the next
    sweep starts.

    Sweeps run one after the other leave workers idle while each one's
    last runs end. Taking the runs longest first (by simulated duration: runs of
    one study cost about alike per simulated second; equal ones in plan
    order) leaves only the shortest to end the batch. The runs, their seeds
    and what is stored are the same in any order. `progress` gets the label
    of the sweep of each finished run and the batch's count. Sweeps with a
    ``ci_target`` add replications round by round: run them with
    :meth:`Sweep.run`."""
    if any(sweep.ci_target is not None for _, sweep in plan):
        raise ArgumentError("run_together runs fixed replications; a sweep with a ci_target runs with Sweep.run")
    prov = provenance()
    outcome = PlanOutcome()
    with Store(db, write=True) as store:
        todo: list[tuple[float, int, RunSpec]] = []
        label_of: dict[tuple[str, int, int], str] = {}
        # A run two grids share (the same scenario, seed and replication)
        # runs once and counts for both, as it did when the second grid
        # found it stored.
        copies: dict[tuple[str, int, int], int] = {}
        for label, sweep in plan:
            sweep._register(store, prov)
            specs = sweep.specs()
            finished = store.finished(s.key for s in specs)
            outcome.skipped += sum(1 for s in specs if s.key in finished)
            seconds: dict[str, float] = {}
            for s in specs:
                if s.key in finished:
                    continue
                if s.key in label_of:
                    copies[s.key] += 1
                    continue
                label_of[s.key], copies[s.key] = label, 1
                if s.scenario_hash not in seconds:
                    seconds[s.scenario_hash] = sweep.simulated_s(s.scenario_hash)
                todo.append((-seconds[s.scenario_hash], len(todo), s))
        todo.sort(key=lambda t: (t[0], t[1]))
        state = Progress(total=sum(copies.values()), skipped=outcome.skipped)
        if progress and todo:
            progress(label_of[todo[0][2].key], state)  # the count before the first (long) run ends
        try:
            for rec in _store_each(store, executor, [s for _, _, s in todo], prov, state):
                state.done += copies[rec.spec.key] - 1
                outcome.ran += 1
                if rec.status != "ok":
                    outcome.failures.append((label_of[rec.spec.key], rec))
                if progress:
                    progress(label_of[rec.spec.key], state)
        except KeyboardInterrupt:
            outcome.interrupted = True
    return outcome


def _fmt_params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in params.items())


class InvalidPoints(ScenarioError):
    """Points of a sweep that the core refuses, every one with its swept
    values, key path and message (``problems``: one
    :class:`ScenarioError` each, its path ending ``(point 3, buffer =
    10)``). ``path`` and ``message`` are the first problem's; nothing has
    run."""

    def __init__(self, source: str, problems: list[ScenarioError], n_points: int) -> None:
        self.problems = problems
        first = problems[0]
        super().__init__(source, first.path, first.message)
        self.head = ("" if n_points == 1 and len(problems) == 1 else
                     f"{len(problems)} of {n_points} points of the sweep are invalid, so none was run")
        if self.head:
            self.args = (f"{source}: {self.head}: " + "; ".join(f"{p.path}: {p.message}" for p in problems),)

    def lines(self) -> list[str]:
        """The error as a heading and one line per bad point."""
        if not self.head:
            return [str(self)]
        return [f"{self.source}: {self.head}:", *[f"  {p.path}: {p.message}" for p in self.problems]]


def check_points(source: str, points: Sequence[expand.Point], jsons: dict[str, str], seed: int | None) -> None:
    """Builds every point (without simulating it) and raises
    :class:`InvalidPoints` naming every one the core refuses."""
    problems: list[ScenarioError] = []
    for p in points:
        try:
            _core.validate(jsons[p.scenario_hash], seed)
        except _core.CoreScenarioError as e:
            err = core_error(source, e, p.origins)
            assert isinstance(err, ScenarioError)
            where = err.path
            if len(points) > 1 or p.params:
                at = f"point {p.index}" + (f", {_fmt_params(p.params)}" if p.params else "")
                where = f"{where} ({at})" if where else at
            problems.append(ScenarioError(source, where, err.message))
    if problems:
        raise InvalidPoints(source, problems, len(points))
