"""Reproductions of published experiments: ``atmlab reproduce STUDY``.

Each study module exposes ``run(options, progress) -> Reproduction``: it runs
the simulations that re-create the study's experiments (through the sweep
machinery: results database, resume, replications), writes a CSV with the
simulated values next to the published ones and the study's figures as PNG,
and returns the table to print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd

from ..store import DEFAULT_DB


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


STUDIES = {
    "97-0424": "Goyal, Jain et al. 1997: UBR+ with Guaranteed Rate, Tables 1-9 and Figures 4-5",
    "kpn": "van den Bergh 1995 (KPN ATM pilot): Table 5, UDP datagrams into AAL5 cells",
}


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
    raise KeyError(study)
