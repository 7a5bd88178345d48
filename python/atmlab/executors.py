"""Where runs execute: in this process, in a local process pool, or on a
Dask distributed cluster. Every executor maps the same pure function,
:func:`execute`, over run specifications and yields the records as they
finish; only the caller writes to the results database. A command makes
one executor (:func:`make`) and runs all its sweeps on it: a reproduction of
many grids starts its worker processes once, when the first batch of more
than one run needs them.

A failure inside one run never stops a sweep: :func:`execute` turns every
error of a run (a scenario the core refuses, the memory guard, a panic in
the core, anything else) into a failed record, and the executors turn a
run whose worker process died, or whose record never came back, into one
too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from multiprocessing import get_context
from typing import Protocol

from .errors import AtmlabError, require_extra
from .records import RunRecord, RunSpec

# A worker that died under a run: killed (the out-of-memory killer, a user)
# or crashed (a native abort).
WORKER_DIED = "the worker process running it died (killed, e.g. by the out-of-memory killer, or crashed)"
WORKERS_CANNOT_START = (
    "the worker processes died while starting; a script that runs a sweep with more than one job needs "
    "Python's guard around its top-level code: if __name__ == \"__main__\": ... (or run it with jobs=1)")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def one_line(text: str) -> str:
    """`text` on one line: a record's error is shown in a table row."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def describe(e: BaseException) -> str:
    """One line saying why a run failed, keeping the core's own words."""
    try:
        text = _text(e)
    except Exception:  # an exception whose text cannot be made, or no core to ask
        text = ""
    return one_line(text) or type(e).__name__


def _text(e: BaseException) -> str:
    from .errors import ScenarioError, core_errors, from_core

    if isinstance(e, core_errors()):
        err = from_core(e)  # the core's own words: "path: message", a limit's reason, "internal error ..."
        if isinstance(err, ScenarioError):
            return f"{err.path}: {err.message}" if err.path else err.message
        return str(err)
    return f"{type(e).__name__}: {e}"


def execute(spec: RunSpec, interrupt: Callable[[], bool] | None = None) -> RunRecord:
    """Runs one scenario. Never raises (but for KeyboardInterrupt and
    SystemExit): a failure is a record with its error. `interrupt`, asked
    every few tens of milliseconds while the run simulates, ends it with
    KeyboardInterrupt when it returns true (so does Ctrl-C, with Python's
    own handler)."""
    started, t0 = _now(), time.perf_counter()
    status, error, result = "ok", None, None
    try:
        from . import _core  # imported in the worker

        args = (spec.scenario_json, spec.seed, spec.replication)
        result = _core.run(*args) if interrupt is None else _core.run(*args, None, None, interrupt)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # a failed run is recorded, it does not stop the sweep
        status, error, result = "failed", describe(e), None
    return RunRecord(
        spec=spec,
        status=status,
        error=error,
        started_at=started,
        finished_at=_now(),
        wall_s=time.perf_counter() - t0,
        result_json=result,
    )


def lost(spec: RunSpec, e: BaseException) -> RunRecord:
    """The record of a run whose own record never came back from its worker."""
    return RunRecord.failure(spec, f"the run's worker failed: {describe(e)}", finished_at=_now())


class Executor(Protocol):
    """Maps :func:`execute` over specs, yielding records as runs finish."""

    name: str

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]: ...

    def close(self) -> None: ...


class InProcess:
    """Runs one after the other in this process (``--jobs 1``).

    Ctrl-C stops the run being simulated within a fraction of a second
    (the core lets the handler run, :func:`execute`) and the sweep with it;
    a run that finished before is stored first (:func:`deferred_interrupt`):
    while the records are taken, Ctrl-C only takes note, and the next run
    does not start."""

    name = "in-process"

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        with deferred_interrupt() as interrupted:
            for spec in specs:
                if interrupted():
                    raise KeyboardInterrupt
                yield execute(spec, interrupted)
            if interrupted():  # during the last run's record
                raise KeyboardInterrupt

    def close(self) -> None:
        pass


@contextmanager
def deferred_interrupt() -> Iterator[Callable[[], bool]]:
    """While in effect, Ctrl-C (SIGINT) does not raise KeyboardInterrupt
    where Python happens to be, which could be between a run's end and its
    record being stored, and lose a finished run: it is noted, and the
    function yielded tells whether it was. A second Ctrl-C raises at once
    (a way out of anything that hangs). Only in the main thread, and only
    if SIGINT has Python's default handler (not ignored, not someone
    else's); else the function always says no and nothing changes."""
    noted = threading.Event()
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield noted.is_set
        return

    def note(signum: int, frame: object) -> None:
        if noted.is_set():
            raise KeyboardInterrupt
        noted.set()

    signal.signal(signal.SIGINT, note)
    try:
        yield noted.is_set
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# ------------------------------------------------- workers die with their parent

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_POLL_S = 0.5


def die_with_parent(parent: int) -> None:
    """Initializer of every pool worker: the worker ends as soon as the
    process that started it ends, even by SIGKILL.

    A worker outlives a killed parent otherwise: it waits on the pool's
    call queue, whose write end it holds itself, so it never sees the end of
    it, and the multiprocessing resource tracker waits for the workers. On
    Linux the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``);
    everywhere, a daemon thread also notices the new parent process id (the
    core releases the GIL while it simulates, so the thread runs)."""
    _set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the kernel knew to tell us
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="atmlab-watch-parent", daemon=True).start()


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0))
    except (OSError, AttributeError):  # no prctl: the watching thread alone
        pass


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


class LocalPool:
    """A pool of worker processes, one run at a time each.

    The pool is started, used and closed by one call of :meth:`Sweep.run`,
    in the thread that calls it: on Linux a worker is killed when the
    thread that started it ends. ``run`` is the function the workers map
    (:func:`execute`; a test may give another, importable one)."""

    def __init__(self, jobs: int | None = None, run: Callable[[RunSpec], RunRecord] = execute) -> None:
        self.jobs = jobs or os.cpu_count() or 1
        self.name = f"{self.jobs} local processes"
        self._run = run
        self._pending: dict[Future[RunRecord], RunSpec] = {}
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        """A new pool, known to start workers: so that a worker that dies
        later died under a run, not while starting."""
        # spawn: the parent may run threads (progress display); forking them is unsafe.
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=get_context("spawn"),
                                   initializer=die_with_parent, initargs=(os.getpid(),))
        try:
            pool.submit(os.getpid).result()
        except BrokenProcessPool:
            pool.shutdown(wait=True)
            raise AtmlabError(WORKERS_CANNOT_START) from None
        return pool

    def _restart(self) -> None:
        """A new pool in place of one a dead worker broke."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = self._start()

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        todo = iter(specs)
        pending = self._pending

        def fill() -> None:
            # Keep a few runs per worker in flight, no more: an interrupt then
            # cancels little work, and memory stays flat for huge sweeps.
            while len(pending) < 2 * self.jobs and (spec := next(todo, None)) is not None:
                pending[self._pool.submit(self._run, spec)] = spec

        try:
            fill()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                suspects: list[RunSpec] = []
                for f in done:
                    spec = pending.pop(f)
                    try:
                        rec = f.result()
                    except BrokenProcessPool:
                        suspects.append(spec)
                        continue
                    except Exception as e:  # the record did not come back (pickling, ...)
                        rec = lost(spec, e)
                    yield rec
                if suspects:
                    # A worker died: every run in flight failed with it. Run them again one at a time,
                    # so that only a run that kills its worker on its own is recorded as failed.
                    suspects += pending.values()
                    pending.clear()
                    yield from self._one_by_one(suspects)
                fill()
        finally:
            for f in pending:
                f.cancel()

    def _one_by_one(self, specs: list[RunSpec]) -> Iterator[RunRecord]:
        """Runs `specs` alone in turn, each in a fresh pool if the last broke."""
        self._restart()
        for spec in specs:
            try:
                rec = self._pool.submit(self._run, spec).result()
            except BrokenProcessPool:
                rec = RunRecord.failure(spec, WORKER_DIED, finished_at=_now())
                self._restart()
            except Exception as e:
                rec = lost(spec, e)
            yield rec

    def close(self) -> None:
        """Ends the workers. If the sweep stopped early (a full disk, an
        interrupt), runs still in flight are abandoned: their workers are
        killed rather than waited for."""
        if any(not f.done() for f in self._pending):
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster:
    """Runs on a Dask distributed cluster: ``address`` is a scheduler
    (``tcp://host:8786``) or ``"local"`` for a LocalCluster of `jobs`
    single-threaded worker processes on this machine.

    LocalCluster workers already end with this process, even when it is
    killed: Dask's nanny hands each worker one end of a pipe, and a thread
    in the worker exits the process when the pipe closes."""

    def __init__(self, address: str, jobs: int | None = None) -> None:
        require_dask()
        from dask.distributed import Client, LocalCluster

        self._cluster = None
        if address == "local":
            self._cluster = LocalCluster(n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1,
                                         processes=True, dashboard_address=None)
            self._client = Client(self._cluster)
            self.name = f"Dask LocalCluster ({len(self._cluster.workers)} workers)"
        else:
            check_scheduler(address, DASK_CONNECT_S)
            try:
                self._client = Client(address, timeout=DASK_CONNECT_S)
            except Exception as e:  # anything that went wrong on the way: the address is the user's to check
                raise AtmlabError(_no_scheduler(address, _reason(e))) from None
            self.name = f"Dask cluster at {address}"

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        from dask.distributed import as_completed

        futures = {self._client.submit(execute, s, pure=False,
                                       key=f"atmlab-{s.scenario_hash}-{s.seed}-{s.replication}"): s for s in specs}
        try:
            for f in as_completed(futures):
                try:
                    rec = f.result()
                except Exception as e:  # a worker that died under it too often (KilledWorker), ...
                    rec = lost(futures[f], e)
                yield rec
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


# How long connecting to a Dask scheduler, and its handshake, may take.
DASK_CONNECT_S = 10.0


def check_scheduler(address: str, timeout: float = DASK_CONNECT_S) -> None:
    """Raises an :class:`AtmlabError` naming `address` unless a Dask
    scheduler answers there with Dask's handshake within `timeout` seconds.

    dask.distributed's own connect waits for ever on a server that accepts
    and says nothing, and reads another server's bytes (an HTTP or SSH
    server's) as frame lengths, failing with a MemoryError of some
    exbibytes; this handshake is bounded in time and any failure is one
    error. It runs in a thread of its own, whatever event loop the caller
    runs (a notebook's)."""
    import asyncio  # here: asyncio takes a while to import, and only --dask needs it

    outcome: list[BaseException | None] = []

    async def handshake() -> None:
        from distributed.comm import connect

        comm = await connect(address, timeout=timeout)
        try:
            if not isinstance(comm.remote_info, dict) or "pickle-protocol" not in comm.remote_info:
                raise ValueError("what it sent is not Dask's handshake")
        finally:
            comm.abort()

    def probe() -> None:
        try:
            asyncio.run(asyncio.wait_for(handshake(), timeout + 2))  # connect's own timeout says more
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - reported to the caller's thread
            outcome.append(e)

    thread = threading.Thread(target=probe, name="atmlab-dask-handshake", daemon=True)
    thread.start()
    thread.join(timeout + 7)
    if not outcome:  # pragma: no cover - asyncio's own timeout failed to end the probe
        raise AtmlabError(_no_scheduler(address, f"no answer within {timeout:g} s"))
    if outcome[0] is not None:
        raise AtmlabError(_no_scheduler(address, _reason(outcome[0], timeout)))


def _reason(e: BaseException, timeout: float = DASK_CONNECT_S) -> str:
    if isinstance(e, TimeoutError):  # asyncio.TimeoutError is TimeoutError since Python 3.11
        return f"no Dask handshake within {timeout:g} s"
    if isinstance(e, OSError):  # refused, unreachable, timed out (the last failure of its retries after it)
        root = e
        while root.__cause__ is not None or root.__context__ is not None:
            root = root.__cause__ or root.__context__  # type: ignore[assignment]
        why = root.strerror if isinstance(root, OSError) and root is not e and root.strerror else None
        return (str(e) or type(e).__name__) + (f" ({why})" if why else "")
    if isinstance(e, ValueError):  # a malformed address, or not Dask's handshake
        return str(e)
    return f"what it sent is not Dask's handshake ({type(e).__name__})"


def _no_scheduler(address: str, reason: str) -> str:
    return (f"--dask {address}: no Dask scheduler answers there: {reason}; give the address of a running "
            "scheduler (tcp://HOST:8786), or --dask local")


def require_dask() -> None:
    """Raises an :class:`AtmlabError` naming the extra to install if
    dask.distributed is missing."""
    require_extra("dask", "the Dask executor (--dask)", "dask.distributed")


class Shared:
    """The executor of one command (``--jobs``, ``--dask``), shared by every
    sweep the command runs and made when first needed: a local pool or a
    Dask client is started once per command, not once per sweep, and not at
    all for a batch of a single run, which runs in this process (starting
    workers would cost more than the run). ``--jobs 1`` runs everything in
    this process."""

    def __init__(self, jobs: int | None = None, dask: str | None = None) -> None:
        if dask:
            require_dask()  # before anything is opened or started
        self.jobs, self.dask = jobs, dask
        self._executor: Executor | None = InProcess() if jobs == 1 and not dask else None
        if dask and dask != "local":
            # Connected now: an address where no scheduler answers is an error before the
            # results database is created, not after.
            self._executor = DaskCluster(dask, jobs)

    @property
    def name(self) -> str:
        if self._executor is not None:
            return self._executor.name
        return "in-process (one run)"

    def map(self, specs: Iterable[RunSpec]) -> Iterator[RunRecord]:
        specs = list(specs)
        if self._executor is None:
            if len(specs) <= 1 and not self.dask:
                yield from InProcess().map(specs)
                return
            self._executor = DaskCluster(self.dask, self.jobs) if self.dask else LocalPool(self.jobs)
        yield from self._executor.map(specs)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()


def make(jobs: int | None = None, dask: str | None = None) -> Shared:
    """The executor of a command's ``--jobs`` and ``--dask`` (see :class:`Shared`);
    a missing dask extra is an :class:`AtmlabError` saying what to install."""
    return Shared(jobs, dask)
