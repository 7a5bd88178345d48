"""The results database: an embedded SQLite file.

One row per run in ``runs`` (identified by ``(scenario_hash, seed,
replication)``), the fully specified scenario once per hash in
``scenarios``, scalar metrics in ``metrics`` (long form) and time series in
``series``. Every run is written in its own transaction; while a sweep
writes, the database is in WAL mode, so a process killed at any moment
leaves it readable with every finished run in it. Only one process writes
(the sweep driver); workers return records.

Opening checks the file before anything else touches it: a file that is not
an SQLite database, an SQLite database that is not atmlab's (atmlab stamps
its own with ``PRAGMA application_id``), or a damaged one (``PRAGMA
quick_check``) is refused with a :class:`ResultsDatabaseError` and left as
it was. Readers open it read-only and never create or change it; a writer
that closes switches it back to a rollback journal, so that the file alone
is the whole database, readable from read-only media.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from . import metrics, quantity
from .errors import ResultsDatabaseError
from .records import RunRecord
from .result import Result

if TYPE_CHECKING:
    import pandas as pd

# 2: runs.params_typed, the swept values as numbers with their unit. A
# version-1 database is migrated when a sweep opens it, and read as it is.
SCHEMA_VERSION = 2
_READABLE_VERSIONS = {"1", "2"}
DEFAULT_DB = Path("results") / "atmlab.sqlite"
# PRAGMA application_id of an atmlab results database: "ATML". Databases
# written before the stamp are recognised by their meta table.
APPLICATION_ID = 0x41544D4C

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS scenarios (
    scenario_hash TEXT PRIMARY KEY,
    scenario TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    sweep TEXT NOT NULL,
    scenario_hash TEXT NOT NULL REFERENCES scenarios(scenario_hash),
    point INTEGER NOT NULL,
    params TEXT NOT NULL,
    params_typed TEXT,
    seed INTEGER NOT NULL,
    replication INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error TEXT,
    atmlab_version TEXT,
    git_commit TEXT,
    git_dirty INTEGER,
    started_at TEXT,
    finished_at TEXT,
    wall_s REAL,
    result TEXT,
    UNIQUE (scenario_hash, seed, replication)
);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs (sweep);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (
    run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    unit TEXT NOT NULL,
    t_s TEXT NOT NULL,
    values_json TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
"""

# The run-level metrics (the columns of `atmlab results`) and every other
# number of a result (stored too, as "connections.NAME.FIELD",
# "ports.NAME.FIELD", ...) are named by the core's result schema.
RUN_METRICS = metrics.run_metrics()


# What an SQLite error (primary result code) means for a results database,
# and what to do about it.
_ELSEWHERE = "use another database (--db)"
_FAULTS: dict[int, tuple[str, str]] = {
    sqlite3.SQLITE_FULL: ("the disk is full", f"free some space, or {_ELSEWHERE}"),
    sqlite3.SQLITE_READONLY: ("it is read-only", f"{_ELSEWHERE}, or make it writable"),
    sqlite3.SQLITE_PERM: ("permission denied", f"{_ELSEWHERE}, or make it writable"),
    sqlite3.SQLITE_CANTOPEN: ("SQLite cannot open it", f"check the file and its folder, or {_ELSEWHERE}"),
    sqlite3.SQLITE_NOTADB: ("it is not an SQLite database", _ELSEWHERE),
    sqlite3.SQLITE_CORRUPT: ("it is damaged", f"restore it from a backup, or {_ELSEWHERE}"),
    sqlite3.SQLITE_IOERR: ("an input/output error", f"check the disk, or {_ELSEWHERE}"),
    sqlite3.SQLITE_BUSY: ("another process holds it locked", f"wait for it to finish, or {_ELSEWHERE}"),
    sqlite3.SQLITE_LOCKED: ("another process holds it locked", f"wait for it to finish, or {_ELSEWHERE}"),
}

# How long to wait for a lock another process holds on the database before
# saying so. A sweep holds its write lock for one run's transaction at a time
# (milliseconds), so two sweeps, or a sweep and its readers, share a database
# within this; a lock held longer is another program's long transaction (an
# open `sqlite3` shell), which waiting longer in silence would not end.
BUSY_TIMEOUT_S = 5.0


def _lock_holders(path: Path) -> str:
    """" (by process 4242: sqlite3 results/atmlab.sqlite)": the processes
    holding a lock on the database `path` or its side files, from Linux's
    /proc/locks; "" where that cannot be known."""
    files = {}
    for name in ("", "-journal", "-wal", "-shm"):
        try:
            st = os.stat(f"{path}{name}")
        except OSError:
            continue
        files[f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"] = True
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            pids = sorted({int(parts[4]) for parts in (line.split() for line in f)
                           if len(parts) > 5 and parts[5] in files and parts[4].isdigit()} - {os.getpid()})
    except OSError:
        return ""
    who = []
    for pid in pids[:3]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = " ".join(f.read().replace(b"\0", b" ").decode(errors="replace").split())
        except OSError:
            command = ""
        who.append(f"{pid}: {command[:80]}" if command else str(pid))
    return f" (by process {'; '.join(who)})" if who else ""


@dataclass(frozen=True)
class SweepInfo:
    """One sweep of a results database."""

    name: str
    runs: int
    ok: int
    points: int
    last_run_id: int
    last_finished_at: str | None


P = ParamSpec("P")
T = TypeVar("T")


def _read_only_fs(path: Path) -> bool:
    """True if `path` is on a file system mounted read-only (a CD, a
    read-only share or bind mount); False if unknown (Windows has no statvfs)."""
    statvfs = getattr(os, "statvfs", None)
    try:
        return statvfs is not None and bool(statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _sqlite_cause(e: BaseException) -> sqlite3.Error | None:
    """The SQLite error behind `e` (pandas wraps them in its own)."""
    while e is not None and not isinstance(e, sqlite3.Error):
        e = e.__cause__  # type: ignore[assignment]
    return e


def _database_error(e: BaseException) -> bool:
    """True for an SQLite error, or pandas' wrapping of one (pandas is
    imported only where a table is read)."""
    if isinstance(e, sqlite3.Error):
        return True
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(e, pd.errors.DatabaseError)


def _guarded(doing: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Turns SQLite errors of a Store method into a ResultsDatabaseError
    saying what it was `doing`, what went wrong and what to do."""

    def wrap(method: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(method)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return method(*args, **kwargs)
            except Exception as e:
                if not _database_error(e):
                    raise
                store = args[0]
                assert isinstance(store, Store)
                raise store.failure(doing, e) from None

        return guarded

    return wrap


class Store:
    """A results database.

    Opened to read (the default), it must exist; it is opened read-only
    and never created or changed (on read-only media too). Opened to write
    (``write=True``, what a sweep does), it is created if missing. Either
    way a file that is not an atmlab results database, or is damaged, is
    refused with a :class:`ResultsDatabaseError`, as is every later SQLite
    failure (a full disk while storing a run: every run stored before is
    kept)."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, write: bool = False) -> None:
        self.path = Path(path)
        self.write = write
        try:
            if self.path.is_dir():
                raise ResultsDatabaseError(f"{self.path}: a folder, not a results database; {_ELSEWHERE}")
            self._db = self._open_writer() if write else self._open_reader()
        except OSError as e:  # a folder on the way that we may not enter or create
            raise ResultsDatabaseError(f"{self.path}: cannot open it ({e.strerror or e}: {e.filename}); "
                                       f"check the file and its folder, or {_ELSEWHERE}") from None

    # ------------------------------------------------------------ opening

    def _connect(self, mode: str) -> sqlite3.Connection:
        uri = f"{self.path.absolute().as_uri()}?{mode}"  # percent-encoded: a "?" or "#" in a name stays a name
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)

    def _open_reader(self) -> sqlite3.Connection:
        if not self.path.exists():
            raise ResultsDatabaseError(f"{self.path}: no results database (run a sweep first)")
        if not os.access(self.path, os.R_OK):
            raise ResultsDatabaseError(f"{self.path}: cannot read it: permission denied; "
                                       f"make it readable, or {_ELSEWHERE}")
        try:
            return self._checked(self._connect("mode=ro"), new_ok=False)
        except sqlite3.Error as e:
            if e.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY):
                raise self.failure("read it", e) from None
            if not self._frozen():
                raise ResultsDatabaseError(
                    f"{self.path}: cannot read it: it is in WAL mode with changes in its -wal file, and SQLite "
                    f"cannot create the files it needs next to it ({e}); copy it with its -wal and -shm files "
                    "to a writable folder") from None
        # A database left in WAL mode needs files next to it, even to be read; without locks it needs none.
        try:
            return self._checked(self._connect("immutable=1"), new_ok=False)
        except sqlite3.Error as e:
            raise self.failure("read it", e) from None

    def _frozen(self) -> bool:
        """True if the file alone is the whole database and nobody can
        change it while we read it without locks (``immutable``): no WAL
        file with changes in it, and the file is on a read-only file system
        or in a folder we may not write to (nor, then, may a writer in WAL
        mode that would start while we read)."""
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            return False
        return _read_only_fs(self.path) or not os.access(self.path.parent, os.W_OK)

    def _open_writer(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        why = self._not_writable()
        if why:
            raise ResultsDatabaseError(f"{self.path}: cannot write to it: {why}; {_ELSEWHERE}, or make it writable")
        try:
            db = self._checked(self._connect("mode=rwc"), new_ok=True)
            self._set_up(db)
        except sqlite3.Error as e:
            raise self.failure("open it for writing", e) from None
        return db

    def _not_writable(self) -> str | None:
        """Why a sweep could not write the database, if it could not: said
        plainly before SQLite fails with "attempt to write a readonly database"."""
        if _read_only_fs(self.path.parent):
            return "it is on a read-only file system"
        if self.path.exists() and not os.access(self.path, os.R_OK | os.W_OK):
            return "the file is read-only"
        if not os.access(self.path.parent, os.W_OK | os.X_OK):
            return "its folder is read-only (SQLite writes its journal next to the file)"
        return None

    def _checked(self, db: sqlite3.Connection, new_ok: bool) -> sqlite3.Connection:
        """`db` if it is a sound atmlab results database (or, with `new_ok`,
        an empty one); else closes it and raises. Reads only."""
        try:
            problems = [row[0] for row in db.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise ResultsDatabaseError(
                    f"{self.path}: the database is damaged (PRAGMA quick_check: {problems[0]}"
                    + (f", and {len(problems) - 1} more problems" if len(problems) > 1 else "")
                    + f"); restore it from a backup, or {_ELSEWHERE}")
            self._check_identity(db, new_ok)
        except BaseException:
            db.close()
            raise
        return db

    def _check_identity(self, db: sqlite3.Connection, new_ok: bool) -> None:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id == 0 and not tables:
            if new_ok:
                return
            raise ResultsDatabaseError(f"{self.path}: an empty database, no atmlab results in it (run a sweep first)")
        found = None
        if app_id in (0, APPLICATION_ID) and "meta" in tables:
            found = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if found is None:
            raise ResultsDatabaseError(
                f"{self.path}: an SQLite database, but not an atmlab results database; "
                + (f"atmlab leaves it as it is: {_ELSEWHERE}" if new_ok else "give the database a sweep wrote (--db)"))
        if str(found[0]) not in _READABLE_VERSIONS:
            raise ResultsDatabaseError(f"{self.path}: results database schema {found[0]}, this atmlab "
                                       f"uses {SCHEMA_VERSION}; {_ELSEWHERE}")
        self._version = int(found[0])

    def _set_up(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        if getattr(self, "_version", SCHEMA_VERSION) == 1:
            self._migrate_v1(db)
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        self._version = SCHEMA_VERSION

    @staticmethod
    def _migrate_v1(db: sqlite3.Connection) -> None:
        """Version 1 to 2, in one transaction: the typed swept values of
        every run, from its params as written."""
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE runs ADD COLUMN params_typed TEXT")
        rows = db.execute("SELECT run_id, params FROM runs").fetchall()
        db.executemany("UPDATE runs SET params_typed = ? WHERE run_id = ?",
                       [(json.dumps(quantity.to_json(json.loads(p))), i) for i, p in rows])
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        db.execute("COMMIT")

    def failure(self, doing: str, e: BaseException) -> ResultsDatabaseError:
        """A one-line ResultsDatabaseError for an SQLite error `e` while `doing`."""
        cause = _sqlite_cause(e)
        code = cause.sqlite_errorcode & 0xFF if cause is not None else -1
        what, todo = _FAULTS.get(code, ("an SQLite error", _ELSEWHERE))
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            what = f"another process has held it locked for {BUSY_TIMEOUT_S:g} s{_lock_holders(self.path)}"
        if doing == "store a run":
            todo += ", and run the same command again: every run stored before is kept, and the sweep resumes"
        return ResultsDatabaseError(f"{self.path}: cannot {doing}: {what} ({cause or e}); {todo}")

    def close(self) -> None:
        if self.write:
            self._settle()
        self._db.close()

    def _settle(self) -> None:
        """Checkpoints the WAL into the file and leaves WAL mode, so that the
        file alone holds the database: readers on read-only media need no
        side files. Only possible when no other connection is open; else
        the last one to close checkpoints."""
        with suppress(sqlite3.Error):
            self._db.execute("PRAGMA busy_timeout = 0")
            self._db.execute("PRAGMA journal_mode = DELETE")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:  # SQLite may have rolled back itself (a full disk)
                with suppress(sqlite3.Error):  # the first error is the one to report
                    self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")

    @_guarded("read it")
    def finished(self, keys: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]:
        """The keys among `keys` whose run is stored with status ``ok``."""
        done = set(self._db.execute("SELECT scenario_hash, seed, replication FROM runs WHERE status = 'ok'"))
        return {k for k in keys if k in done}

    @_guarded("read it")
    def count_ok(self, sweep: str, seed: int, hashes: Iterable[str]) -> int:
        """How many runs of `sweep` with `seed` and one of the scenario
        `hashes` are stored with status ``ok`` (without pandas: what an
        interrupted sweep says before it exits)."""
        wanted = set(hashes)
        rows = self._db.execute("SELECT scenario_hash FROM runs WHERE sweep = ? AND seed = ? AND status = 'ok'",
                                (sweep, seed))
        return sum(1 for (h,) in rows if h in wanted)

    @_guarded("store a run")
    def record(self, rec: RunRecord) -> int:
        """Stores one run (replacing an earlier failed attempt), atomically."""
        result = json.loads(rec.result_json) if rec.result_json else None
        spec = rec.spec
        with self._tx():
            self._db.execute("INSERT OR IGNORE INTO scenarios VALUES (?, ?)", (spec.scenario_hash, spec.scenario_json))
            self._db.execute("DELETE FROM runs WHERE scenario_hash = ? AND seed = ? AND replication = ?", spec.key)
            p = rec.provenance
            cur = self._db.execute(
                "INSERT INTO runs (sweep, scenario_hash, point, params, params_typed, seed, replication, status, "
                "error, atmlab_version, git_commit, git_dirty, started_at, finished_at, wall_s, result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (spec.sweep, spec.scenario_hash, spec.point, json.dumps(spec.params),
                 json.dumps(quantity.to_json(spec.params)), spec.seed,
                 spec.replication, rec.status, rec.error, p.get("atmlab_version"), p.get("git_commit"),
                 p.get("git_dirty"), rec.started_at, rec.finished_at, rec.wall_s, rec.result_json),
            )
            run_id = int(cur.lastrowid or 0)
            if result is not None:
                self._db.executemany("INSERT INTO metrics VALUES (?, ?, ?)",
                                     [(run_id, k, v) for k, v in metrics.flatten(result).items()])
                self._db.executemany(
                    "INSERT INTO series VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, s["name"], s["kind"], s["target"], s["unit"], json.dumps(s["t_s"]),
                      json.dumps(s["values"])) for s in result.get("series", [])],
                )
        return run_id

    @_guarded("read it")
    def sweeps(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT sweep FROM runs ORDER BY sweep")]

    @_guarded("read it")
    def sweep_info(self) -> list[SweepInfo]:
        """The sweeps the database holds, the one stored last at the end."""
        rows = self._db.execute(
            "SELECT sweep, COUNT(*), SUM(status = 'ok'), COUNT(DISTINCT point), MAX(run_id), MAX(finished_at) "
            "FROM runs GROUP BY sweep ORDER BY MAX(run_id)").fetchall()
        return [SweepInfo(name, int(n), int(ok or 0), int(points), int(last), finished)
                for name, n, ok, points, last, finished in rows]

    def latest_sweep(self) -> str | None:
        """The sweep with the run stored last (None in a database without runs)."""
        info = self.sweep_info()
        return info[-1].name if info else None

    @_guarded("read it")
    def runs(self, sweep: str | None = None, status: str | None = None, all_metrics: bool = False,
             run_id: int | None = None) -> pd.DataFrame:
        """One row per run: ``run_id, sweep, scenario_hash, point,
        replication, seed, status, error, wall_s``, then one column per swept
        parameter (numbers in base units where the value is a quantity),
        then the run-level metrics (every stored metric with `all_metrics`).
        Rows are in point order: sweep by sweep (in the order they were
        first stored), then by point, seed and replication, whatever order
        parallel workers finished in. ``attrs["units"]`` holds the units of
        the swept quantities (``{"buffer": "cells"}``),
        ``attrs["metric_units"]`` those of the metric columns
        (``{"tcp_goodput_bps": "bit/s", "abr.vc0:forward.mean_acr_bps":
        "bit/s", "efficiency": "fraction"}``, see :func:`atmlab.metrics.unit`)."""
        import pandas as pd

        where, args = [], []
        if sweep is not None:
            where.append("sweep = ?")
            args.append(sweep)
        if status is not None:
            where.append("status = ?")
            args.append(status)
        if run_id is not None:
            where.append("run_id = ?")
            args.append(run_id)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        typed_column = "params_typed" if self._version >= 2 else "NULL AS params_typed"
        runs = pd.read_sql_query(
            f"SELECT run_id, sweep, scenario_hash, point, replication, seed, status, error, wall_s, params, {typed_column}, "
            f"atmlab_version, git_commit, git_dirty, started_at, finished_at FROM runs AS r {clause} "
            "ORDER BY (SELECT MIN(run_id) FROM runs WHERE sweep = r.sweep), point, seed, replication, run_id",
            self._db, params=args,
        )
        if runs.empty:
            return runs.drop(columns=["params", "params_typed"])
        typed = [quantity.from_json(json.loads(t)) if t else quantity.typed(json.loads(p))
                 for p, t in zip(runs.pop("params"), runs.pop("params_typed"), strict=True)]
        units = {k: v.unit for row in typed for k, v in row.items() if isinstance(v, quantity.Quantity)}
        params = pd.DataFrame([{k: _cell(quantity.value(v)) for k, v in row.items()} for row in typed], index=runs.index)
        names = "" if all_metrics else " AND name IN (" + ",".join("?" * len(RUN_METRICS)) + ")"
        margs = [] if all_metrics else list(RUN_METRICS)
        ids = ",".join(str(int(i)) for i in runs.run_id)
        stored = pd.read_sql_query(
            f"SELECT run_id, name, value FROM metrics WHERE run_id IN ({ids}){names}", self._db, params=margs
        )
        wide = stored.pivot(index="run_id", columns="name", values="value") if not stored.empty else pd.DataFrame()
        order = [m for m in RUN_METRICS if m in wide.columns] + sorted(c for c in wide.columns if c not in RUN_METRICS)
        front = runs.iloc[:, :9]
        back = runs.iloc[:, 9:]
        out = pd.concat([front, params], axis=1)
        if not wide.empty:
            out = out.merge(wide[order], left_on="run_id", right_index=True, how="left")
        out = pd.concat([out, back], axis=1)
        out.attrs["units"] = units  # of the swept quantities: {"buffer": "cells", "vbr": "ms"}
        out.attrs["metric_units"] = metrics.units(order)
        return out

    @_guarded("read it")
    def result(self, run_id: int) -> Result:
        """The full result of a stored run."""
        row = self._db.execute("SELECT result FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None or row[0] is None:
            raise KeyError(f"no result stored for run {run_id}")
        return Result(row[0])

    @_guarded("read it")
    def series(self, run_id: int) -> pd.DataFrame:
        """The time series of a run, long form: name, kind, target, unit, t_s, value."""
        import pandas as pd

        rows = []
        for name, kind, target, unit, t, v in self._db.execute(
            "SELECT name, kind, target, unit, t_s, values_json FROM series WHERE run_id = ? ORDER BY name", (run_id,)
        ):
            for ti, vi in zip(json.loads(t), json.loads(v), strict=True):
                rows.append((name, kind, target, unit, ti, vi))
        return pd.DataFrame(rows, columns=["name", "kind", "target", "unit", "t_s", "value"])

    @_guarded("read it")
    def scenario(self, scenario_hash: str) -> dict[str, Any]:
        row = self._db.execute("SELECT scenario FROM scenarios WHERE scenario_hash = ?", (scenario_hash,)).fetchone()
        if row is None:
            raise KeyError(scenario_hash)
        return dict(json.loads(row[0]))


def _cell(v: Any) -> Any:
    """A swept value as a table cell: a list or table (a swept
    `drop_policy.categories`, say) as its JSON text, which groups, sorts and
    exports like the scalars."""
    return json.dumps(v) if isinstance(v, (list, dict)) else v
