"""atmlab: a laboratory for TCP/IP over ATM networks.

>>> import atmlab
>>> result = atmlab.run("nsource_lan", seed=1)      # doctest: +SKIP
>>> result.efficiency, result.fairness               # doctest: +SKIP
>>> result.connections                               # doctest: +SKIP
>>> sweep = atmlab.Sweep("scenarios/examples/sweep_buffer.toml", replications=3)  # doctest: +SKIP
>>> sweep.run(db="results/atmlab.sqlite")            # doctest: +SKIP
>>> atmlab.results("results/atmlab.sqlite")          # doctest: +SKIP
"""

# The names of the API are imported when first used (PEP 562), so that
# `import atmlab` and the command line start quickly: `atmlab --version`
# needs neither the scenario loader nor the sweep machinery, and nothing
# reads the package's metadata (importlib.metadata alone took a third of
# `import atmlab`). __version__ is the core's: maturin gives the package the
# version of the Rust crates (pyproject.toml: dynamic = ["version"]), so the
# two are one number (tests/test_startup.py checks it against the installed
# metadata).

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    ArgumentError,
    AtmlabError,
    LimitError,
    ResultsDatabaseError,
    ScenarioError,
    SimulationError,
    UnknownSweep,
)

if TYPE_CHECKING:
    from .api import run
    from .result import Result
    from .scenario import load, validate
    from .sweep import Sweep, SweepOutcome, results
    from .trace import read as read_trace
    from .wire import Wire, cells

    __version__: str

# Public name -> the module that defines it.
_LAZY = {
    "run": "api",
    "Result": "result",
    "load": "scenario",
    "validate": "scenario",
    "Sweep": "sweep",
    "SweepOutcome": "sweep",
    "results": "sweep",
    "Wire": "wire",
    "cells": "wire",
    "read_trace": "trace",
}
# Public names that are another name in their module.
_RENAMED = {"read_trace": "read"}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._core import core_version

        value: Any = core_version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), _RENAMED.get(name, name))
    elif not name.startswith("_"):
        # A submodule not imported yet (atmlab.expand, atmlab.store, ...), as
        # an eager package would have made it reachable.
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
