"""Reproductions of published experiments: ``atmlab reproduce STUDY``.

Each study module exposes ``run(options, progress) -> Reproduction``: it runs
the simulations that re-create the study's experiments (through the sweep
machinery: results database, resume, replications), writes a CSV with the
simulated values next to the published ones and the study's figures as PNG,
and returns the table to print.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pandas as pd

from ..store import DEFAULT_DB

if TYPE_CHECKING:
    from ..sweep import Progress as SweepProgress, Sweep


class Progress(Protocol):
    """Called with a message and, when known, runs done and runs in total."""

    def __call__(self, message: str, done: int | None = None, total: int | None = None) -> None: ...


@dataclass
class Options:
    """What the command line asked for."""

    out: Path
    quick: bool = False
    replications: int = 1
    db: Path = DEFAULT_DB
    jobs: int | None = None
    seed: int | None = None

    def csv_path(self, default_name: str) -> Path:
        """``--out`` may name the CSV or the folder for everything."""
        return self.out if self.out.suffix == ".csv" else self.out / default_name

    @property
    def folder(self) -> Path:
        return self.out.parent if self.out.suffix == ".csv" else self.out


@dataclass
class Reproduction:
    """What a reproduction produced."""

    title: str
    table: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    summary: str = ""
    extra: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)  # runs that failed (their rows are missing)

    @classmethod
    def stopped(cls, study: str) -> Reproduction:
        """An interrupted reproduction (its finished runs are in the database)."""
        return cls(title=f"{study}: interrupted", table=pd.DataFrame(), interrupted=True)


@dataclass
class SweepsRun:
    """What :func:`run_sweeps` did."""

    interrupted: bool = False
    failures: list[str] = field(default_factory=list)


def run_sweeps(plan: Sequence[tuple[str, Sweep]], options: Options, progress: Progress) -> SweepsRun:
    """Runs a reproduction's sweeps in turn (``(label, sweep)`` pairs) into
    ``options.db``, with one progress count over all of them; runs already
    in the database are skipped, so an interrupted reproduction resumes.
    Stops at the first interrupted sweep."""
    total = sum(len(s.points) * s.replications for _, s in plan)
    done = 0
    failures: list[str] = []
    for label, sweep in plan:
        base = done

        def tick(p: SweepProgress, label: str = label, base: int = base) -> None:
            progress(f"{label}: {p.done + p.skipped}/{p.total + p.skipped}", base + p.skipped + p.done, total)

        outcome = sweep.run(options.db, jobs=options.jobs, progress=tick)
        done = base + len(sweep.points) * sweep.replications
        failures += [f"{label} {rec.spec.params}: {rec.error}" for rec in outcome.failures]
        if outcome.interrupted:
            return SweepsRun(True, failures)
    return SweepsRun(False, failures)


STUDIES = {
    "97-0424": "Goyal, Jain et al. 1997: UBR+ with Guaranteed Rate, Tables 1-9 and Figures 4-5",
    "kpn": "van den Bergh 1995 (KPN ATM pilot): Tables 5, 6, 9 (cells), C.1 (cell loss), C.2 and 12 (VBR policing)",
    "expert": "Jaussi, Lorang, Nelissen 1998 (ACTS EXPERT, FORE ASX-200): TCP over UBR/PPD/EPD, claims C1-C31",
    "bundling": "Lamont, Villasenor et al. 1998 (DREO/CRC): IP telephony + TCP on one policed VBR PVC, Tables 1-2, 5-26",
}

# Replications per configuration when the command line gives none (a study
# not listed: 1).
DEFAULT_REPLICATIONS = {"expert": 2}


def default_replications(study: str, quick: bool = False) -> int:
    """How many runs per configuration ``atmlab reproduce STUDY`` makes by default."""
    return 1 if quick else DEFAULT_REPLICATIONS.get(study, 1)


def studies() -> dict[str, str]:
    """Study id -> one-line description."""
    return dict(STUDIES)


def run(study: str, options: Options, progress: Progress) -> Reproduction:
    if study == "kpn":
        from . import kpn

        return kpn.run(options, lambda msg: progress(msg))
    if study == "97-0424":
        from . import ubr_gr

        return ubr_gr.run(options, progress)
    if study == "expert":
        from . import expert

        return expert.run(options, progress)
    if study == "bundling":
        from . import bundling

        return bundling.run(options, progress)
    raise KeyError(study)
