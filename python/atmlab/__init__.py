"""atmlab: a laboratory for TCP/IP over ATM networks.

>>> import atmlab
>>> result = atmlab.run("nsource_lan", seed=1)      # doctest: +SKIP
>>> result.efficiency, result.fairness               # doctest: +SKIP
>>> result.connections                               # doctest: +SKIP
>>> sweep = atmlab.Sweep("scenarios/examples/sweep_buffer.toml", replications=3)  # doctest: +SKIP
>>> sweep.run(db="results/atmlab.sqlite")            # doctest: +SKIP
>>> atmlab.results("results/atmlab.sqlite")          # doctest: +SKIP
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from .api import run
from .errors import (
    ArgumentError,
    AtmlabError,
    LimitError,
    ResultsDatabaseError,
    ScenarioError,
    SimulationError,
    UnknownSweep,
)
from .result import Result
from .scenario import load, validate
from .sweep import Sweep, SweepOutcome, results
from .trace import read as read_trace
from .wire import Wire, cells

try:
    __version__ = version("atmlab")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "ArgumentError",
    "AtmlabError",
    "LimitError",
    "Result",
    "ResultsDatabaseError",
    "ScenarioError",
    "SimulationError",
    "Sweep",
    "SweepOutcome",
    "UnknownSweep",
    "Wire",
    "__version__",
    "cells",
    "load",
    "read_trace",
    "results",
    "run",
    "validate",
]
