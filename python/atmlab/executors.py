"""Where runs execute: in this process, in a local process pool, or on a
Dask distributed cluster. Every executor maps the same pure function,
:func:`execute`, over run specifications and yields the records as they
finish; only the caller writes to the results database.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from datetime import UTC, datetime
from multiprocessing import get_context
from typing import Protocol

from .records import RunRecord, RunSpec


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def execute(spec: RunSpec) -> RunRecord:
    """Runs one scenario. Never raises: a failure is a record with its error."""
    from . import _core  # imported in the worker

    started, t0 = _now(), time.perf_counter()
    status, error, result = "ok", None, None
    try:
        result = _core.run(spec.scenario_json, spec.seed, spec.replication)
    except _core.CoreScenarioError as e:
        path, message = e.args if len(e.args) == 2 else ("", str(e))
        status, error = "failed", f"{path}: {message}" if path else message
    except Exception as e:  # a failed run is recorded, it does not stop the sweep
        status, error = "failed", f"{type(e).__name__}: {e}"
    return RunRecord(
        spec=spec,
        status=status,
        error=error,
        started_at=started,
        finished_at=_now(),
        wall_s=time.perf_counter() - t0,
        result_json=result,
    )


class Executor(Protocol):
    """Maps :func:`execute` over specs, yielding records as runs finish."""

    name: str

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]: ...

    def close(self) -> None: ...


class InProcess:
    """Runs one after the other in this process (``--jobs 1``)."""

    name = "in-process"

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        for spec in specs:
            yield execute(spec)

    def close(self) -> None:
        pass


class LocalPool:
    """A pool of worker processes, one run at a time each."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self.name = f"{self.jobs} local processes"
        # spawn: the parent may run threads (progress display); forking them is unsafe.
        self._pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=get_context("spawn"))

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        pending: set[Future[RunRecord]] = set()
        todo = iter(specs)
        # Keep a few runs per worker in flight, no more: an interrupt then
        # cancels little work, and memory stays flat for huge sweeps.
        for spec in todo:
            pending.add(self._pool.submit(execute, spec))
            if len(pending) >= 2 * self.jobs:
                break
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.add(self._pool.submit(execute, nxt))
        finally:
            for f in pending:
                f.cancel()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster:
    """Runs on a Dask distributed cluster: ``address`` is a scheduler
    (``tcp://host:8786``) or ``"local"`` for a LocalCluster of `jobs`
    single-threaded worker processes on this machine."""

    def __init__(self, address: str, jobs: int | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a dependency
            raise RuntimeError("the Dask executor needs dask[distributed] (pip install 'dask[distributed]')") from e
        self._cluster = None
        if address == "local":
            self._cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1,
                                         processes=True, dashboard_address=None)
            self._client = Client(self._cluster)
            self.name = f"Dask LocalCluster ({len(self._cluster.workers)} workers)"
        else:
            self._client = Client(address, timeout=30)
            self.name = f"Dask cluster at {address}"

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        from dask.distributed import as_completed

        futures = [self._client.submit(execute, s, pure=False, key=f"atmlab-{s.scenario_hash}-{s.seed}-{s.replication}")
                   for s in specs]
        try:
            for f in as_completed(futures):
                yield f.result()
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make(jobs: int | None = None, dask: str | None = None) -> Executor:
    """The executor for ``--jobs`` and ``--dask``."""
    if dask:
        return DaskCluster(dask, jobs)
    if jobs == 1:
        return InProcess()
    return LocalPool(jobs)
