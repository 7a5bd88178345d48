"""The Python API: run a scenario and get its result."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from . import _core, trace as trace_mod
from .errors import checked_int, core_errors
from .result import Result
from .scenario import ScenarioLike, load


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    replication: int = 0,
    progress: Callable[[float], object] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    overrides: Sequence[str] = (),
    trace: str | os.PathLike[str] | None = None,
) -> Result:
    """Runs one scenario.

    ``scenario`` is a TOML file path, the name of a bundled scenario
    (``"nsource_lan"``), a mapping with the same structure, or a scenario
    already loaded with :func:`atmlab.load`. The scenario is built once, by
    the run itself (a problem is a :class:`atmlab.ScenarioError`). ``seed``
    defaults to the scenario's ``simulation.seed``; runs with the same
    scenario, seed and replication are identical bit for bit. Both are whole
    numbers from 0 to 2^63 - 1 (what the results database stores); outside,
    :class:`atmlab.ArgumentError`. ``progress``, if given, is called with
    the fraction of simulated time done (0 to 1). ``pcap``, a directory
    (created if missing), receives a packet capture for Wireshark: one pcap
    file per direction of each link ``simulation.capture`` names (every
    link without it), ``<from>-<to>.pcap``; capturing changes no result
    (docs/experiments.md, "Packet capture"). ``overrides``, ``"KEY=VALUE"``
    strings as ``--set`` takes them (``"simulation.duration=3 s"``), change
    the scenario as written before it is expanded (:mod:`atmlab.overrides`).
    ``trace``, a file (CSV, or Parquet if it ends ``.parquet``), receives
    the run's trace: one record per event of the kinds ``[trace]`` asks for
    (:mod:`atmlab.trace`); :attr:`Result.trace` reads it back. A traced run
    gives the same result, more slowly.

    >>> r = run("nsource_lan")          # doctest: +SKIP
    >>> round(r.efficiency, 2)          # doctest: +SKIP
    """
    if seed is not None:
        seed = checked_int("seed", seed, 0)
    replication = checked_int("replication", replication, 0)
    sc = load(scenario, overrides=overrides)
    trace_csv, parquet = trace_mod.csv_path_for(trace) if trace is not None else (None, None)
    try:
        extra = {} if trace_csv is None else {"trace_file": os.fspath(trace_csv)}
        raw = _core.run(sc.to_json(), seed, replication, progress, None if pcap is None else os.fspath(pcap), **extra)
    except core_errors() as e:
        if trace_csv is not None and parquet is not None:
            trace_csv.unlink(missing_ok=True)
        raise sc.error(e) from None
    except BaseException:
        if trace_csv is not None and parquet is not None:
            trace_csv.unlink(missing_ok=True)
        raise
    result = Result(raw)
    if trace_csv is not None:
        result.trace_file = trace_mod.finish(trace_csv, parquet)
    return result
