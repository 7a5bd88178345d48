"""The results database: an embedded SQLite file.

One row per run in ``runs`` (identified by ``(scenario_hash, seed,
replication)``), the fully specified scenario once per hash in
``scenarios``, scalar metrics in ``metrics`` (long form) and time series in
``series``. A sweep is identified by its content, not its name: ``sweeps``
holds one row per distinct sweep (the hash of its points' scenarios and its
seed, :func:`atmlab.expand.sweep_hash`, with the file, the ``--set``
overrides, the atmlab version and commit that first ran it), and
``sweep_points`` its points (index, swept values, scenario hash). A sweep's
runs are the stored runs of its points' scenarios at its seed: an edited
scenario run under its old name is a new sweep whose points share no run
with the old one (unless a point's scenario is unchanged, when its runs,
identical bit for bit, are reused), and nothing that reads a sweep ever
pools runs of two scenarios. Every run is written in its own transaction; while a sweep
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

import dataclasses
import functools
import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from . import expand, metrics, quantity
from .errors import ResultsDatabaseError, UnknownSweep
from .records import RunRecord
from .result import Result

if TYPE_CHECKING:
    import pandas as pd

# 2: runs.params_typed, the swept values as numbers with their unit.
# 3: sweeps and sweep_points: a sweep is its content, not its name.
# An older database is migrated when a sweep opens it to write, and read as
# it is (its sweeps derived in memory, as the migration would store them).
SCHEMA_VERSION = 3
_READABLE_VERSIONS = {"1", "2", "3"}
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
CREATE INDEX IF NOT EXISTS runs_by_scenario ON runs (scenario_hash, seed);
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

# The sweeps (schema 3): created in the database by a writer, as TEMP tables
# by a reader of an older database.
_SWEEP_TABLES = """
CREATE {temp}TABLE IF NOT EXISTS sweeps (
    sweep_id INTEGER PRIMARY KEY,
    sweep_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    seed INTEGER NOT NULL,
    param_names TEXT NOT NULL,
    source TEXT,
    overrides TEXT,
    atmlab_version TEXT,
    git_commit TEXT,
    git_dirty INTEGER,
    created_at TEXT,
    last_used INTEGER NOT NULL,
    migrated INTEGER NOT NULL DEFAULT 0
);
CREATE {temp}TABLE IF NOT EXISTS sweep_points (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(sweep_id) ON DELETE CASCADE,
    point INTEGER NOT NULL,
    scenario_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    params_typed TEXT NOT NULL,
    PRIMARY KEY (sweep_id, point)
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
    """One sweep of a results database: one scenario's points at one seed."""

    sweep_id: int
    name: str
    runs: int
    ok: int
    points: int
    created_at: str | None
    last_finished_at: str | None
    sweep_hash: str
    seed: int
    overrides: list[str]
    atmlab_version: str | None
    git_commit: str | None
    # What differs from the sweep of the same name before it ("" for the
    # first of its name): changed keys of the base scenario, the swept
    # values, the seed, the overrides.
    differs: str = ""

    @property
    def label(self) -> str:
        """The sweep's name, and its id: ``sweep_buffer #3``."""
        return f"{self.name} #{self.sweep_id}"


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
            return self._readable(self._checked(self._connect("mode=ro"), new_ok=False))
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
            return self._readable(self._checked(self._connect("immutable=1"), new_ok=False))
        except sqlite3.Error as e:
            raise self.failure("read it", e) from None

    def _readable(self, db: sqlite3.Connection) -> sqlite3.Connection:
        if self._version < 3:
            self._derive_for_reading(db)
        return db

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
        version = getattr(self, "_version", SCHEMA_VERSION)
        if version == 1:
            self._migrate_v1(db)
        db.executescript(_SCHEMA)
        if version < 3 and self._has_runs(db):
            self._migrate_v2(db)
        db.executescript(_SWEEP_TABLES.format(temp=""))
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        self._version = SCHEMA_VERSION

    @staticmethod
    def _has_runs(db: sqlite3.Connection) -> bool:
        return "runs" in {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

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

    @staticmethod
    def _migrate_v2(db: sqlite3.Connection) -> None:
        """Version 2 to 3, in one transaction: the sweeps of the runs
        stored so far (:func:`_derived_sweeps`), kept in ``sweeps`` and
        ``sweep_points``."""
        db.execute("BEGIN IMMEDIATE")
        for statement in _SWEEP_TABLES.format(temp="").split(";"):  # (executescript would commit first)
            db.execute(statement)
        _store_derived_sweeps(db, "main")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        db.execute("COMMIT")

    def _derive_for_reading(self, db: sqlite3.Connection) -> None:
        """For a reader of a database older than version 3 (which it may
        not change): its sweeps in TEMP tables, as the migration would
        store them."""
        db.executescript(_SWEEP_TABLES.format(temp="TEMP ").replace("REFERENCES sweeps(sweep_id) ON DELETE CASCADE",
                                                                     ""))
        if self._has_runs(db):
            _store_derived_sweeps(db, "temp")

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

    # ------------------------------------------------------------ sweeps

    @_guarded("store the sweep")
    def register_sweep(self, *, sweep_hash: str, name: str, seed: int,
                       points: Sequence[tuple[int, str, str, dict[str, Any]]], param_names: Sequence[str],
                       source: str | None, overrides: Sequence[str], provenance: dict[str, Any]) -> int:
        """The id of the sweep with this hash, stored first if it is new
        (with its points, ``(index, scenario_hash, scenario_json,
        params)``, and their scenarios); either way it becomes the latest."""
        from datetime import datetime, timezone

        with self._tx():
            row = self._db.execute("SELECT sweep_id FROM sweeps WHERE sweep_hash = ?", (sweep_hash,)).fetchone()
            used = self._db.execute("SELECT COALESCE(MAX(last_used), 0) + 1 FROM sweeps").fetchone()[0]
            if row is not None:
                self._db.execute("UPDATE sweeps SET last_used = ? WHERE sweep_id = ?", (used, row[0]))
                return int(row[0])
            p = provenance
            cur = self._db.execute(
                "INSERT INTO sweeps (sweep_hash, name, seed, param_names, source, overrides, atmlab_version, "
                "git_commit, git_dirty, created_at, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sweep_hash, name, seed, json.dumps(list(param_names)), source, json.dumps(list(overrides)),
                 p.get("atmlab_version"), p.get("git_commit"), p.get("git_dirty"),
                 datetime.now(timezone.utc).isoformat(timespec="seconds"), used))
            sweep_id = int(cur.lastrowid or 0)
            self._db.executemany("INSERT OR IGNORE INTO scenarios VALUES (?, ?)",
                                 [(h, text) for _, h, text, _ in points])
            self._db.executemany(
                "INSERT INTO sweep_points VALUES (?, ?, ?, ?, ?)",
                [(sweep_id, i, h, json.dumps(params), json.dumps(quantity.to_json(params)))
                 for i, h, _, params in points])
        return sweep_id

    @_guarded("read it")
    def sweep_id(self, sweep_hash: str) -> int | None:
        """The id of the sweep with this hash, if the database holds it."""
        row = self._db.execute("SELECT sweep_id FROM sweeps WHERE sweep_hash = ?", (sweep_hash,)).fetchone()
        return None if row is None else int(row[0])

    @_guarded("read it")
    def sweeps(self) -> list[str]:
        """The names of the sweeps (a name edited and run again is one
        name and several sweeps: :meth:`sweep_info`)."""
        return [r[0] for r in self._db.execute("SELECT DISTINCT name FROM sweeps ORDER BY name")]

    @_guarded("read it")
    def sweep_info(self, differs: bool = True) -> list[SweepInfo]:
        """The sweeps the database holds, the one used last at the end,
        each with (if `differs`) what differs from the sweep of the same
        name before it."""
        rows = self._db.execute(
            "SELECT s.sweep_id, s.name, COUNT(r.run_id), COALESCE(SUM(r.status = 'ok'), 0), "
            "(SELECT COUNT(*) FROM sweep_points q WHERE q.sweep_id = s.sweep_id), s.created_at, "
            "MAX(r.finished_at), s.sweep_hash, s.seed, s.overrides, s.atmlab_version, s.git_commit "
            "FROM sweeps s LEFT JOIN sweep_points p ON p.sweep_id = s.sweep_id "
            "LEFT JOIN runs r ON r.scenario_hash = p.scenario_hash AND r.seed = s.seed "
            "GROUP BY s.sweep_id ORDER BY s.last_used").fetchall()
        info = [SweepInfo(int(i), name, int(n), int(ok), int(points), created, finished, h, int(seed),
                          json.loads(over) if over else [], version, commit)
                for i, name, n, ok, points, created, finished, h, seed, over, version, commit in rows]
        if not differs:
            return info
        previous: dict[str, SweepInfo] = {}
        out: list[SweepInfo] = []
        for i in sorted(info, key=lambda x: x.sweep_id):
            before = previous.get(i.name)
            previous[i.name] = i
            out.append(dataclasses.replace(i, differs=self._differs(before, i)) if before else i)
        order = {i.sweep_id: k for k, i in enumerate(info)}
        return sorted(out, key=lambda x: order[x.sweep_id])

    def _differs(self, a: SweepInfo, b: SweepInfo) -> str:
        """What makes sweep `b` another experiment than `a` (same name)."""
        def first(sweep_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            rows = self._db.execute(
                "SELECT p.params, c.scenario FROM sweep_points p LEFT JOIN scenarios c USING (scenario_hash) "
                "WHERE p.sweep_id = ? ORDER BY p.point", (sweep_id,)).fetchall()
            base = json.loads(rows[0][1]) if rows and rows[0][1] else {}
            return base, [json.loads(r[0]) for r in rows]

        (base_a, params_a), (base_b, params_b) = first(a.sweep_id), first(b.sweep_id)
        changes = scenario_diff(_unswept(base_a, params_a[:1]), _unswept(base_b, params_b[:1]))
        swept_a, swept_b = _swept_values(params_a), _swept_values(params_b)
        for k in [*swept_a, *[k for k in swept_b if k not in swept_a]]:
            if swept_a.get(k) != swept_b.get(k):
                changes.append(f"swept {k}: {_short(swept_a.get(k, '-'))} -> {_short(swept_b.get(k, '-'))}")
        if a.seed != b.seed:
            changes.append(f"seed {a.seed} -> {b.seed}")
        if not changes and len(params_a) != len(params_b):
            changes.append(f"points {len(params_a)} -> {len(params_b)}")
        if not changes:
            changes.append("the same scenarios, stored in another order")
        shown = "; ".join(changes[:3])
        return shown + (f"; and {len(changes) - 3} more" if len(changes) > 3 else "")

    @_guarded("read it")
    def find_sweep(self, which: str | int) -> SweepInfo:
        """One sweep: by id (an ``int``, or text ``"#3"`` or ``"3"``), by
        name (the latest of that name), or ``"latest"``. A KeyError saying
        what the database holds if there is none."""
        if isinstance(which, int) and not isinstance(which, bool):
            row = self._db.execute("SELECT name FROM sweeps WHERE sweep_id = ?", (which,)).fetchone()
            if row is not None:
                return next(i for i in self.sweep_info(differs=False) if i.sweep_id == which)
        info = self.sweep_info(differs=False)
        if not info:
            raise UnknownSweep(f"{self.path}: no sweeps in it (run a sweep first)")
        if which == "latest":
            return info[-1]
        text = str(which).strip()
        named = [i for i in info if i.name == text]
        number = text.removeprefix("#")
        if isinstance(which, int) or text.startswith("#") or (not named and number.isdigit()):
            found = [i for i in info if number.isdigit() and i.sweep_id == int(number)]
            if found:
                return found[0]
            raise UnknownSweep(f"{self.path}: no sweep #{number} (atmlab results --list lists them)")
        if named:
            return named[-1]
        raise UnknownSweep(f"{self.path}: no sweep named {text!r} (it holds: "
                       f"{', '.join(sorted({i.name for i in info}))}; atmlab results --list lists them)")

    @_guarded("read it")
    def runs(self, sweep: str | int | None = None, status: str | None = None, all_metrics: bool = False,
             run_id: int | None = None) -> pd.DataFrame:
        """One row per run: ``run_id, sweep, sweep_id, scenario_hash,
        point, replication, seed, status, error, wall_s``, then one column
        per swept parameter (numbers in base units where the value is a
        quantity), then the run-level metrics (every stored metric with
        `all_metrics`). `sweep` is one sweep (:meth:`find_sweep`: an id,
        or a name for the latest of that name); without it, every sweep,
        one after the other (a run whose scenario two sweeps share is a
        row of each). Rows are in point order: sweep by sweep (the one used
        last at the end), then by point, seed and replication, whatever
        order parallel workers finished in. With `run_id`, that run alone.
        ``attrs["units"]`` holds the units of the swept quantities
        (``{"buffer": "cells"}``), ``attrs["metric_units"]`` those of the
        metric columns (``{"tcp_goodput_bps": "bit/s",
        "abr.vc0:forward.mean_acr_bps": "bit/s", "efficiency": "fraction"}``,
        see :func:`atmlab.metrics.unit`)."""
        import pandas as pd

        where, args = [], []
        if sweep is not None:
            where.append("s.sweep_id = ?")
            known = isinstance(sweep, int) and self._db.execute(
                "SELECT 1 FROM sweeps WHERE sweep_id = ?", (sweep,)).fetchone() is not None
            args.append(sweep if known else self.find_sweep(sweep).sweep_id)
        if status is not None:
            where.append("r.status = ?")
            args.append(status)
        if run_id is not None:
            where.append("r.run_id = ?")
            args.append(run_id)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        runs = pd.read_sql_query(
            "SELECT r.run_id, s.name AS sweep, s.sweep_id, r.scenario_hash, p.point, r.replication, r.seed, r.status, "
            "r.error, r.wall_s, p.params, p.params_typed, r.atmlab_version, r.git_commit, r.git_dirty, r.started_at, "
            "r.finished_at FROM sweeps s JOIN sweep_points p ON p.sweep_id = s.sweep_id "
            f"JOIN runs r ON r.scenario_hash = p.scenario_hash AND r.seed = s.seed {clause} "
            "ORDER BY s.last_used, p.point, r.seed, r.replication, r.run_id",
            self._db, params=args,
        )
        if run_id is not None:
            runs = runs.head(1)  # a run two sweeps share: once
        if runs.empty:
            return runs.drop(columns=["params", "params_typed"])
        typed = [quantity.from_json(json.loads(t)) if t else quantity.typed(json.loads(p))
                 for p, t in zip(runs.pop("params"), runs.pop("params_typed"), strict=True)]
        units = {k: v.unit for row in typed for k, v in row.items() if isinstance(v, quantity.Quantity)}
        params = pd.DataFrame([{k: _cell(quantity.value(v)) for k, v in row.items()} for row in typed], index=runs.index)
        names = "" if all_metrics else " AND name IN (" + ",".join("?" * len(RUN_METRICS)) + ")"
        margs = [] if all_metrics else list(RUN_METRICS)
        ids = ",".join(str(int(i)) for i in runs.run_id.unique())
        stored = pd.read_sql_query(
            f"SELECT run_id, name, value FROM metrics WHERE run_id IN ({ids}){names}", self._db, params=margs
        )
        wide = stored.pivot(index="run_id", columns="name", values="value") if not stored.empty else pd.DataFrame()
        order = [m for m in RUN_METRICS if m in wide.columns] + sorted(c for c in wide.columns if c not in RUN_METRICS)
        front = runs.iloc[:, :10]
        back = runs.iloc[:, 10:]
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


# ------------------------------------------------------------ sweeps derived from runs

def _store_derived_sweeps(db: sqlite3.Connection, schema: str) -> None:
    """Stores, in `schema`'s ``sweeps`` and ``sweep_points`` (``main`` when
    migrating, ``temp`` for a reader), the sweeps of a database written
    before version 3, which knew sweeps only by name. Runs of one name
    and seed are taken in the order they were first stored, point by point
    (each ``(point, scenario)`` pair once); a point index seen before with
    another scenario starts a new sweep, since an edited scenario was run
    under the old name. So no derived sweep ever has two scenarios at one
    point; a sweep extended by new points without changing the old ones
    stays one sweep."""
    columns = {r[1] for r in db.execute("PRAGMA main.table_info(runs)")}
    typed = "params_typed" if "params_typed" in columns else "NULL"
    rows = db.execute(
        f"SELECT sweep, seed, point, scenario_hash, MIN(params), MIN({typed}), MIN(run_id), MIN(started_at), "
        "MIN(atmlab_version), MIN(git_commit) FROM main.runs GROUP BY sweep, seed, point, scenario_hash "
        "ORDER BY MIN(run_id)").fetchall()
    sweeps: list[dict[str, Any]] = []
    current: dict[tuple[str, int], dict[str, Any]] = {}
    for name, seed, point, h, params, params_typed, first, started, version, commit in rows:
        sw = current.get((name, seed))
        if sw is None or (point in sw["points"] and sw["points"][point][0] != h):
            sw = {"name": name, "seed": int(seed), "points": {}, "first": first, "created": started,
                  "version": version, "commit": commit}
            current[(name, seed)] = sw
            sweeps.append(sw)
        if point not in sw["points"]:
            sw["points"][point] = (h, params, params_typed or json.dumps(quantity.to_json(json.loads(params))))
    used = db.execute(f"SELECT COALESCE(MAX(last_used), 0) FROM {schema}.sweeps").fetchone()[0]
    for k, sw in enumerate(sweeps, 1):
        points = sorted(sw["points"].items())
        h = expand.sweep_hash([(json.loads(p), sh) for _, (sh, p, _) in points], sw["seed"])
        names = list(json.loads(points[0][1][1])) if points else []
        cur = db.execute(
            f"INSERT OR IGNORE INTO {schema}.sweeps (sweep_hash, name, seed, param_names, atmlab_version, "
            "git_commit, created_at, last_used, migrated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
            (h, sw["name"], sw["seed"], json.dumps(names), sw["version"], sw["commit"], sw["created"], used + k))
        if not cur.rowcount:
            continue
        sweep_id = cur.lastrowid
        db.executemany(f"INSERT INTO {schema}.sweep_points VALUES (?, ?, ?, ?, ?)",
                       [(sweep_id, i, sh, p, pt) for i, (sh, p, pt) in points])


# ------------------------------------------------------------ what differs

def scenario_diff(a: Any, b: Any, where: str = "") -> list[str]:
    """The key paths at which two scenarios differ, each as ``path: old ->
    new`` (``simulation.duration: 5 s -> 3 s``), in the order of `b`."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in [*b, *[k for k in a if k not in b]]:
            here = expand.key_path(where, k)
            if k not in a:
                out.append(f"{here}: added")
            elif k not in b:
                out.append(f"{here}: removed")
            else:
                out += scenario_diff(a[k], b[k], here)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for j, (x, y) in enumerate(zip(a, b, strict=True)) for d in scenario_diff(x, y, f"{where}[{j}]")]
    if a == b and type(a) is type(b):
        return []
    return [f"{where or 'the scenario'}: {_short(a)} -> {_short(b)}"]


def _short(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _unswept(scenario: dict[str, Any], params: list[dict[str, Any]]) -> dict[str, Any]:
    """A point's scenario without what its swept key paths set (their
    change shows as a change of the swept values)."""
    if not params:
        return scenario
    out = json.loads(json.dumps(scenario))
    for key in params[0]:
        if expand.is_path(key):
            with suppress(Exception):
                expand.set_path("<diff>", out, key, None)
    return out


def _swept_values(points: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each swept key's distinct values, in the order of the points."""
    values: dict[str, list[Any]] = {}
    for params in points:
        for k, v in params.items():
            seen = values.setdefault(k, [])
            if v not in seen:
                seen.append(v)
    return values
