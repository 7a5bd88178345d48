"""Reproductions of published experiments: ``atmlab reproduce STUDY``.

Each study module exposes ``run(out_dir, progress) -> Reproduction``: it runs
the simulations that re-create the study's experiments, writes a CSV with the
simulated values next to the published ones and the study's figure as PNG,
and returns the table to print.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

Progress = Callable[[str], None]


@dataclass
class Reproduction:
    """What a reproduction produced."""

    title: str
    table: pd.DataFrame
    files: list[Path] = field(default_factory=list)
    summary: str = ""


def studies() -> dict[str, str]:
    """Study id -> one-line description."""
    return {
        "kpn": "van den Bergh 1995 (KPN ATM pilot): Table 5, UDP datagrams into AAL5 cells",
    }


def run(study: str, out_dir: Path, progress: Progress) -> Reproduction:
    if study == "kpn":
        from . import kpn

        return kpn.run(out_dir, progress)
    raise KeyError(study)
