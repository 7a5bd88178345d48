"""The published tables atmlab compares against (copied from the studies
into ``atmlab/data/reference``; see that folder's README)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd


def path(name: str) -> Path:
    """Path of a packaged reference CSV (``kpn/table05_udp_datagram_to_cells``: a study id and a table)."""
    parts = f"{name.removesuffix('.csv')}.csv".split("/")
    ref = resources.files("atmlab").joinpath("data", "reference", *parts)
    return Path(str(ref))


def table(name: str) -> pd.DataFrame:
    """A packaged reference table."""
    return pd.read_csv(path(name))
