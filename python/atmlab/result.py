"""The result of one run: run-level metrics as attributes, tables as pandas
DataFrames, and the full record as JSON."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class Result:
    """What one run reported (see docs/models/metrics.md for every definition).

    Scalars are attributes; ``connections`` (TCP), ``udp_flows``,
    ``cell_sources`` (ON/OFF and piecewise), ``abr`` (ABR sources),
    ``abr_ports`` (ERICA, EFCI controllers), ``upc`` (policers), ``ports``
    and ``hosts`` are DataFrames with one row per item, indexed by name;
    ``series`` and :meth:`series_wide` are the probes' time series; ``raw``
    is the whole record and :meth:`to_json` its JSON text, identical for
    identical runs. In a notebook a result shows its summary
    (:mod:`atmlab.summary`) as tables.
    """

    def __init__(self, raw_json: str) -> None:
        self._json = raw_json
        self.raw: dict[str, Any] = json.loads(raw_json)
        # The trace the run wrote, if it was traced (atmlab.run(trace=...)).
        self.trace_file: Path | None = None

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

    @property
    def trace(self) -> pd.DataFrame:
        """The run's trace (:func:`atmlab.trace.read`): one row per record,
        if the run wrote one (``atmlab.run(..., trace=FILE)``)."""
        if self.trace_file is None:
            raise AttributeError("this run wrote no trace: run it with trace=FILE (atmlab run --trace FILE)")
        from .trace import read

        return read(self.trace_file)

    def metric(self, name: str) -> float | None:
        """One number of the result by its metric name, as the results
        database stores it (:func:`atmlab.metrics.flatten`):
        ``efficiency``, ``frames.lost``, ``ports.sw0->sw1.max_queue``,
        ``connections.tcp0.goodput_bps``. An unknown name is a KeyError
        naming it."""
        flat = self._flat
        if name not in flat:
            raise KeyError(f"no metric {name!r} in this result (atmlab.metrics lists the names)")
        return flat[name]

    @cached_property
    def _flat(self) -> dict[str, float | None]:
        from .metrics import flatten

        return flatten(self.raw)

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
        """One row per switch port with an ABR controller (index: port): its
        algorithm and that algorithm's own readings (ERICA's load factor,
        ABR capacity and fair share of its last averaging interval, EFCI's
        marked cells, ...); a reading the port's algorithm does not report
        is missing."""
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

    @cached_property
    def series(self) -> pd.DataFrame:
        """The time series of the scenario's probes, long form: one row per
        sample, columns ``name``, ``kind``, ``target``, ``unit``, ``t_s``,
        ``value`` (as :meth:`atmlab.store.Store.series` returns a stored
        run's). Empty (with those columns) without probes."""
        import pandas as pd  # imported when a table is first asked for

        rows = [(s["name"], s["kind"], s["target"], s["unit"], t, v)
                for s in self.raw.get("series", []) for t, v in zip(s["t_s"], s["values"], strict=True)]
        return pd.DataFrame(rows, columns=["name", "kind", "target", "unit", "t_s", "value"])

    def series_wide(self, names: list[str] | None = None) -> pd.DataFrame:
        """The time series side by side: indexed by the sample time ``t_s``,
        one column per series (all, or those in `names`, in that order); a
        series without a sample at a time has NaN there (probes may have
        different intervals). ``r.series_wide(["cwnd:tcp0"]).plot()``.
        The units are in ``df.attrs["units"]``. An unknown name is a
        KeyError that lists the series."""
        import pandas as pd

        known = [s["name"] for s in self.raw.get("series", [])]
        if names is None:
            names = known
        missing = [n for n in names if n not in known]
        if missing:
            raise KeyError(f"no time series {missing[0]!r}; this run has: {', '.join(known) or 'none'}")
        by_name = {s["name"]: s for s in self.raw.get("series", [])}
        columns = {n: pd.Series(by_name[n]["values"], index=pd.Index(by_name[n]["t_s"], name="t_s"), dtype=float)
                   for n in names}
        df = pd.DataFrame(columns) if columns else pd.DataFrame(index=pd.Index([], name="t_s", dtype=float))
        df = df.sort_index()
        df.index.name = "t_s"
        df.attrs["units"] = {n: by_name[n]["unit"] for n in names}
        return df

    def _repr_html_(self) -> str:
        from .notebook import result_html

        return result_html(self)

    def to_json(self, indent: int | None = None) -> str:
        """The full record as JSON (identical for identical runs)."""
        if indent is None:
            return self._json
        return json.dumps(self.raw, indent=indent)
