"""The result of one run: run-level metrics as attributes, tables as pandas
DataFrames, and the full record as JSON."""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class Result:
    """What one run reported (see docs/models/metrics.md for every definition).

    Scalars are attributes; ``connections`` (TCP), ``udp_flows``,
    ``cell_sources`` (ON/OFF and piecewise), ``abr`` (ABR sources),
    ``abr_ports`` (ERICA, EFCI controllers), ``upc`` (policers), ``ports``
    and ``hosts`` are DataFrames with one row per item, indexed by name; ``raw``
    is the whole record and :meth:`to_json` its JSON text, identical for
    identical runs.
    """

    def __init__(self, raw_json: str) -> None:
        self._json = raw_json
        self.raw: dict[str, Any] = json.loads(raw_json)

    # Identity of the run
    @property
    def scenario(self) -> str:
        return str(self.raw["scenario"])

    @property
    def seed(self) -> int:
        return int(self.raw["seed"])

    @property
    def replication(self) -> int:
        return int(self.raw["replication"])

    @property
    def duration_s(self) -> float:
        """Simulated time, seconds."""
        return float(self.raw["duration_s"])

    # Run-level metrics
    @property
    def efficiency(self) -> float | None:
        """Sum of TCP goodputs over the largest TCP payload rate of the
        reference link (97-0424 s4.2); ``None`` without TCP."""
        return self.raw["efficiency"]

    @property
    def fairness(self) -> float | None:
        """Jain's index of the TCP goodputs; ``None`` when undefined."""
        return self.raw["fairness"]

    @property
    def tcp_goodput_bps(self) -> float:
        return float(self.raw["tcp_goodput_bps"])

    @property
    def cell_loss_ratio(self) -> float:
        """Cells dropped / cells offered, at switch ports."""
        return float(self.raw["cell_loss_ratio"])

    @property
    def frames(self) -> dict[str, int]:
        """AAL5 frames sent, delivered, lost, in flight, discarded by receivers."""
        return dict(self.raw["frames"])

    @property
    def cell_hops(self) -> int:
        return int(self.raw["cell_hops"])

    @property
    def events(self) -> int:
        return int(self.raw["events"])

    def __repr__(self) -> str:
        eff = "n/a" if self.efficiency is None else f"{self.efficiency:.3f}"
        fair = "n/a" if self.fairness is None else f"{self.fairness:.3f}"
        return (f"<Result {self.scenario} seed={self.seed} rep={self.replication}: "
                f"efficiency={eff} fairness={fair} clr={self.cell_loss_ratio:.2e}>")

    def _table(self, key: str, index: str = "name") -> pd.DataFrame:
        import pandas as pd  # imported when a table is first asked for

        df = pd.DataFrame(self.raw.get(key, []))
        if index in df.columns:
            df = df.set_index(index)
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
    def cell_sources(self) -> pd.DataFrame:
        """One row per application of cell sources, ON/OFF or piecewise
        (index: application name)."""
        return self._table("cell_sources")

    @cached_property
    def abr(self) -> pd.DataFrame:
        """One row per ABR source, one per direction of each ABR VC (index:
        ``<vc>:forward`` or ``<vc>:backward``): ACR, RM cells, rule 5 and 6 cuts."""
        return self._table("abr")

    @cached_property
    def abr_ports(self) -> pd.DataFrame:
        """One row per switch port with an ABR controller (index: port): the
        last averaging interval's load factor, ABR capacity and fair share."""
        return self._table("abr_ports", index="port")

    @cached_property
    def upc(self) -> pd.DataFrame:
        """One row per policed VC (index: VC name)."""
        return self._table("upc", index="vc")

    @cached_property
    def ports(self) -> pd.DataFrame:
        """One row per output port, ``from->to`` (index)."""
        return self._table("ports")

    @cached_property
    def hosts(self) -> pd.DataFrame:
        """One row per host (index: name): frames received and corrupted,
        dead cells, datagrams sent and lost in the end system."""
        return self._table("hosts")

    def to_json(self, indent: int | None = None) -> str:
        """The full record as JSON (identical for identical runs)."""
        if indent is None:
            return self._json
        return json.dumps(self.raw, indent=indent)
