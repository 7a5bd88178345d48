"""The results database: an embedded SQLite file.

One row per run in ``runs`` (identified by ``(scenario_hash, seed,
replication)``), the fully specified scenario once per hash in
``scenarios``, scalar metrics in ``metrics`` (long form) and time series in
``series``. Every run is written in its own transaction; the database is in
WAL mode, so a process killed at any moment leaves it readable with every
finished run in it. Only one process writes (the sweep driver); workers
return records.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from .records import RunRecord

SCHEMA_VERSION = 1
DEFAULT_DB = Path("results") / "atmlab.sqlite"

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

# Run-level numbers copied from a result into the metrics table (and the
# columns of `atmlab results`). Per-connection, -flow, -port, -host and
# -policer numbers are stored as well, under "connections.NAME.FIELD",
# "hosts.NAME.FIELD", "upc.VC.FIELD" and so on.
RUN_METRICS = (
    "efficiency",
    "fairness",
    "tcp_goodput_bps",
    "cell_loss_ratio",
    "switch_cells_offered",
    "switch_cells_dropped",
    "link_cells_lost",
    "cell_hops",
    "events",
)


def flat_metrics(result: dict[str, Any]) -> dict[str, float | None]:
    """The scalar numbers of a result, flattened to dotted names."""
    out: dict[str, float | None] = {}
    for key in RUN_METRICS:
        if key in result:
            out[key] = _num(result[key])
    for key, value in result.get("frames", {}).items():
        out[f"frames.{key}"] = _num(value)
    for table, name in (("connections", "name"), ("udp_flows", "name"), ("ports", "name"), ("hosts", "name"),
                        ("upc", "vc")):
        for row in result.get(table, []):
            for key, value in row.items():
                if key != name and isinstance(value, int | float | type(None)) and not isinstance(value, bool):
                    out[f"{table}.{row[name]}.{key}"] = _num(value)
    return out


def _num(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


class Store:
    """A results database (created if missing)."""

    def __init__(self, path: str | Path = DEFAULT_DB) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        found = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        if int(found) != SCHEMA_VERSION:
            raise RuntimeError(f"{self.path}: results database schema {found}, this atmlab writes {SCHEMA_VERSION}")

    def close(self) -> None:
        self._db.close()

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
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")

    def finished(self, keys: Iterable[tuple[str, int, int]]) -> set[tuple[str, int, int]]:
        """The keys among `keys` whose run is stored with status ``ok``."""
        done = set(self._db.execute("SELECT scenario_hash, seed, replication FROM runs WHERE status = 'ok'"))
        return {k for k in keys if k in done}

    def record(self, rec: RunRecord) -> int:
        """Stores one run (replacing an earlier failed attempt), atomically."""
        result = json.loads(rec.result_json) if rec.result_json else None
        spec = rec.spec
        with self._tx():
            self._db.execute("INSERT OR IGNORE INTO scenarios VALUES (?, ?)", (spec.scenario_hash, spec.scenario_json))
            self._db.execute("DELETE FROM runs WHERE scenario_hash = ? AND seed = ? AND replication = ?", spec.key)
            p = rec.provenance
            cur = self._db.execute(
                "INSERT INTO runs (sweep, scenario_hash, point, params, seed, replication, status, error, "
                "atmlab_version, git_commit, git_dirty, started_at, finished_at, wall_s, result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (spec.sweep, spec.scenario_hash, spec.point, json.dumps(spec.params), spec.seed,
                 spec.replication, rec.status, rec.error, p.get("atmlab_version"), p.get("git_commit"),
                 p.get("git_dirty"), rec.started_at, rec.finished_at, rec.wall_s, rec.result_json),
            )
            run_id = int(cur.lastrowid or 0)
            if result is not None:
                self._db.executemany("INSERT INTO metrics VALUES (?, ?, ?)",
                                     [(run_id, k, v) for k, v in flat_metrics(result).items()])
                self._db.executemany(
                    "INSERT INTO series VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, s["name"], s["kind"], s["target"], s["unit"], json.dumps(s["t_s"]),
                      json.dumps(s["values"])) for s in result.get("series", [])],
                )
        return run_id

    def sweeps(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT sweep FROM runs ORDER BY sweep")]

    def runs(self, sweep: str | None = None, status: str | None = None, all_metrics: bool = False,
             run_id: int | None = None) -> pd.DataFrame:
        """One row per run: ``run_id, sweep, scenario_hash, point,
        replication, seed, status, error, wall_s``, then one column per swept
        parameter, then the run-level metrics (every stored metric with
        `all_metrics`)."""
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
        runs = pd.read_sql_query(
            "SELECT run_id, sweep, scenario_hash, point, replication, seed, status, error, wall_s, params, "
            f"atmlab_version, git_commit, git_dirty, started_at, finished_at FROM runs {clause} ORDER BY run_id",
            self._db, params=args,
        )
        if runs.empty:
            return runs.drop(columns=["params"])
        params = pd.DataFrame([json.loads(p) for p in runs.pop("params")], index=runs.index)
        names = "" if all_metrics else " AND name IN (" + ",".join("?" * len(RUN_METRICS)) + ")"
        margs = [] if all_metrics else list(RUN_METRICS)
        ids = ",".join(str(int(i)) for i in runs.run_id)
        metrics = pd.read_sql_query(
            f"SELECT run_id, name, value FROM metrics WHERE run_id IN ({ids}){names}", self._db, params=margs
        )
        wide = metrics.pivot(index="run_id", columns="name", values="value") if not metrics.empty else pd.DataFrame()
        order = [m for m in RUN_METRICS if m in wide.columns] + sorted(c for c in wide.columns if c not in RUN_METRICS)
        front = runs.iloc[:, :9]
        back = runs.iloc[:, 9:]
        out = pd.concat([front, params], axis=1)
        if not wide.empty:
            out = out.merge(wide[order], left_on="run_id", right_index=True, how="left")
        return pd.concat([out, back], axis=1)

    def result(self, run_id: int) -> dict[str, Any]:
        row = self._db.execute("SELECT result FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None or row[0] is None:
            raise KeyError(f"no result stored for run {run_id}")
        return dict(json.loads(row[0]))

    def series(self, run_id: int) -> pd.DataFrame:
        """The time series of a run, long form: name, kind, target, unit, t_s, value."""
        rows = []
        for name, kind, target, unit, t, v in self._db.execute(
            "SELECT name, kind, target, unit, t_s, values_json FROM series WHERE run_id = ? ORDER BY name", (run_id,)
        ):
            for ti, vi in zip(json.loads(t), json.loads(v), strict=True):
                rows.append((name, kind, target, unit, ti, vi))
        return pd.DataFrame(rows, columns=["name", "kind", "target", "unit", "t_s", "value"])

    def scenario(self, scenario_hash: str) -> dict[str, Any]:
        row = self._db.execute("SELECT scenario FROM scenarios WHERE scenario_hash = ?", (scenario_hash,)).fetchone()
        if row is None:
            raise KeyError(scenario_hash)
        return dict(json.loads(row[0]))
