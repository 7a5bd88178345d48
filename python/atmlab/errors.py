"""The exceptions atmlab raises. Every one carries a message meant for the
person who wrote the scenario; the CLI prints it and exits non-zero."""

from __future__ import annotations


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


class SimulationError(AtmlabError):
    """A run whose result failed its own checks (cell conservation): a bug
    in atmlab, never in the scenario. Please report it with the scenario."""


class LimitError(AtmlabError):
    """A run stopped by a resource limit it would otherwise have exceeded:
    the memory guard (``simulation.max_cells_held``) when more cells pile up
    in queues and on links than the limit allows. The message names the
    place that grew; the scenario offers more traffic there than can be
    sent."""
