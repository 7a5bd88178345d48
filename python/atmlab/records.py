"""What a run is (a :class:`RunSpec`) and what it gave (a :class:`RunRecord`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunSpec:
    """Everything one run needs: a fully specified scenario and its seeds."""

    sweep: str
    scenario_hash: str
    scenario_json: str
    point: int
    params: dict[str, Any]
    seed: int
    replication: int

    @property
    def key(self) -> tuple[str, int, int]:
        """The run's identity in the results database."""
        return (self.scenario_hash, self.seed, self.replication)


@dataclass
class RunRecord:
    """One finished run, as a worker returns it. Plain strings and numbers
    only, so that it always travels back from a worker process (pickled)."""

    spec: RunSpec
    status: str
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    wall_s: float | None = None
    result_json: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def failure(cls, spec: RunSpec, error: str, **times: Any) -> RunRecord:
        """A run that gave no result, with why (one line)."""
        return cls(spec=spec, status="failed", error=error, **times)
