"""The exceptions atmlab raises. Every one carries a message meant for the
person who wrote the scenario; the CLI prints it and exits non-zero.

Also the one range check behind every whole-number argument (seeds,
replication indices, counts), so that the Python API, the command line and
the scenario file state the same ranges in the same words.
"""

from __future__ import annotations

from collections.abc import Callable

from numbers import Integral

# The results database stores seeds and replication indices as SQLite
# INTEGER, a signed 64-bit number: anything larger cannot be saved.
INT64_MAX = 2**63 - 1


class AtmlabError(Exception):
    """Base class of every error atmlab reports to its users."""


class ScenarioError(AtmlabError):
    """A scenario that cannot be run: malformed, an unknown key, an
    impossible value, a dangling reference. ``source`` is the file (or
    ``"<dict>"``), ``path`` the key path (``switches[0].port.buffer``),
    ``message`` what is wrong."""

    def __init__(self, source: str, path: str, message: str) -> None:
        self.source = source
        self.path = path
        self.message = message
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {message}")


class ArgumentError(AtmlabError, ValueError):
    """An argument of an API call outside its allowed range (a negative
    seed, a replication index too large to store). A ``ValueError`` too, as
    a bad argument is in Python."""


class SimulationError(AtmlabError):
    """A run whose result failed its own checks (cell conservation): a bug
    in atmlab, never in the scenario. Please report it with the scenario."""


class LimitError(AtmlabError):
    """A run stopped by a resource limit it would otherwise have exceeded:
    the memory guard (``simulation.max_cells_held``) when more cells pile up
    in queues and on links than the limit allows. The message names the
    place that grew; the scenario offers more traffic there than can be
    sent."""


class ResultsDatabaseError(AtmlabError):
    """A results database that cannot be used: missing, not a database, not
    atmlab's, damaged, read-only for a sweep, or a disk that filled up while
    a sweep stored its runs. The message names the file and what to do; the
    file is left as it was (a sweep keeps every run it stored before)."""


class UnknownSweep(AtmlabError, KeyError):
    """A sweep asked for by id or name that the results database does not
    hold; the message says what it holds. A ``KeyError`` too."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def require_extra(extra: str, feature: str, *modules: str) -> None:
    """Raises an :class:`AtmlabError` naming the extra to install unless one
    of `modules` can be imported: ``require_extra("dask", "the Dask executor
    (--dask)", "dask.distributed")``."""
    import importlib.util

    for m in modules:
        try:
            if importlib.util.find_spec(m) is not None:
                return
        except ImportError:  # a missing parent package (no dask at all)
            continue
    raise AtmlabError(f"{feature} needs atmlab's {extra} extra: pip install 'atmlab[{extra}]'")


def core_errors() -> tuple[type[BaseException], ...]:
    """The exception types the core raises (for ``except``)."""
    from . import _core

    return (_core.CoreScenarioError, _core.CoreLimitError, _core.CoreSimulationError)


def from_core(e: BaseException, source: str = "", locate: Callable[[str], str] | None = None) -> AtmlabError:
    """atmlab's error for an error of the core: a scenario problem (with
    its key path, mapped back to the file by `locate`), a run stopped by a
    limit, or a failed run (a bug: a conservation failure or a panic).
    `source` names the scenario (a file, ``<dict>``) in the message."""
    from . import _core

    if isinstance(e, _core.CoreScenarioError):
        path, message = e.args if len(e.args) == 2 else ("", str(e))
        return ScenarioError(source, locate(path) if locate else path, str(message))
    prefix = f"{source}: " if source else ""
    if isinstance(e, _core.CoreLimitError):
        return LimitError(f"{prefix}{e}")
    if isinstance(e, _core.CoreSimulationError):
        return SimulationError(f"{prefix}{e}")
    raise TypeError(f"not an error of the core: {e!r}")


def out_of_range(value: object, lo: int, hi: int = INT64_MAX) -> str | None:
    """Why `value` is not a whole number from `lo` to `hi`, or None if it is.
    ``True`` is not a number here, though Python counts it as 1."""
    allowed = f"a whole number from {lo} to {hi}"
    if isinstance(value, bool) or not isinstance(value, Integral):
        return f"must be {allowed}, not {value!r}"
    if not lo <= int(value) <= hi:
        return f"must be {allowed}, not {int(value)}"
    return None


def checked_int(name: str, value: object, lo: int, hi: int = INT64_MAX) -> int:
    """`value` as an int if it is a whole number from `lo` to `hi`; else
    :class:`ArgumentError` naming `name` and the allowed range."""
    problem = out_of_range(value, lo, hi)
    if problem or not isinstance(value, Integral):
        raise ArgumentError(f"{name} {problem}")
    return int(value)
