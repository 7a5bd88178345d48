"""The result of one run: run-level metrics as attributes, tables as pandas
DataFrames, and the full record as JSON."""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

import pandas as pd


class Result:
    """What one run reported.

    Scalars: ``efficiency``, ``fairness``, ``cell_loss_ratio``,
    ``tcp_goodput_bps``, ``duration_s``, ``seed``, ``replication``,
    ``scenario``. Tables (DataFrames, one row per item): ``connections``
    (TCP), ``udp_flows``, ``ports``. ``frames`` is a dict of AAL5 frame
    counts; ``raw`` the whole record.
    """

    def __init__(self, raw_json: str) -> None:
        self._json = raw_json
        self.raw: dict[str, Any] = json.loads(raw_json)

    def __getattr__(self, key: str) -> Any:
        raw = self.__dict__.get("raw", {})
        if key in raw and not isinstance(raw[key], list):
            return raw[key]
        raise AttributeError(key)

    def __repr__(self) -> str:
        eff = "n/a" if self.efficiency is None else f"{self.efficiency:.3f}"
        fair = "n/a" if self.fairness is None else f"{self.fairness:.3f}"
        return (f"<Result {self.scenario} seed={self.seed} rep={self.replication}: "
                f"efficiency={eff} fairness={fair} clr={self.cell_loss_ratio:.2e}>")

    def _table(self, key: str) -> pd.DataFrame:
        rows = self.raw.get(key, [])
        df = pd.DataFrame(rows)
        if "name" in df.columns:
            df = df.set_index("name")
        return df

    @cached_property
    def connections(self) -> pd.DataFrame:
        """One row per TCP connection (index: application name)."""
        return self._table("connections")

    @cached_property
    def udp_flows(self) -> pd.DataFrame:
        """One row per UDP flow (index: application name)."""
        return self._table("udp_flows")

    @cached_property
    def ports(self) -> pd.DataFrame:
        """One row per output port, ``from->to`` (index)."""
        return self._table("ports")

    def to_json(self, indent: int | None = None) -> str:
        """The full record as JSON (identical for identical runs)."""
        if indent is None:
            return self._json
        return json.dumps(self.raw, indent=indent)
