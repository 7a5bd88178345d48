"""What every KPN table stands on: the configuration columns, the two
measurements (a udpt run and a ttcp run, read as atmstat and ttcp report
them), a table's points beside its published values, and the figure
helpers.

Every table module (:mod:`.bursts`, :mod:`.udp_mtu`, ...) gives its
``grids(quick)`` and ``figures(points, comparison, folder)``, and where it
has them ``published()``, ``derive(points)`` (columns computed from the
aggregated points), ``claims(points)`` and ``views(points)`` (tables to
print); the study (:data:`atmlab.reproduce.kpn.STUDY`) puts them together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ... import quantity
from ...result import Result
from ..kit import Grid

# The configuration columns of every point, in this order (a column a table
# does not use is empty in its rows).
CONFIG = ("table", "direction", "mtu_bytes", "data_size_bytes", "bursts", "user_bytes", "peak_rate_mbps", "clr",
          "pfb_one_in", "bt_cells", "reading", "tcp")
# The templates' swept parameters, as the configuration names them; the
# others (``bt_time``; the check's ``tcp.variant``, ``tcp.max_rto``) follow from one of these.
PARAMS = {"size": "data_size_bytes", "mtu": "mtu_bytes", "peak": "peak_rate_mbps", "bt": "bt_cells", "clr": "clr",
          "one_in": "pfb_one_in", "nbytes": "user_bytes", "setting": "tcp"}


def grid(name: str, template: dict[str, Any], sweep: Mapping[str, Any], **labels: Any) -> Grid:
    """A grid of one table; `labels` are its configuration columns that the
    template does not sweep."""
    assert set(labels) <= set(CONFIG), set(labels) - set(CONFIG)
    return Grid(name, template, dict(sweep), labels=labels)


def configuration(grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
    swept = {PARAMS[k]: quantity.value(quantity.parse(v)) for k, v in params.items() if k in PARAMS}
    config = {**grid.labels, **swept}
    return {c: config.get(c) for c in CONFIG}


def of(points: pd.DataFrame, *tables: str) -> pd.Series:
    """Which points belong to `tables`."""
    return points["table"].isin(tables)


def _into(r: Result, host: str) -> str:
    """The switch port toward `host` (where atmstat counts what it receives)."""
    (name,) = [p for p in r.ports.index if p.endswith(f"->{host}")]
    return str(name)


def measure_udp(r: Result, config: Mapping[str, Any]) -> dict[str, Any]:
    """A ``udpt`` run: cells into the receiver, IP datagrams (fragments) the
    sender's host sent, UDP datagrams received, writes lost at the full
    adapter, and the time from the first write to the last reception."""
    f = r.udp_flows.loc["udpt"]
    received = int(f["received"])
    session = float(f["session_throughput_bps"] or 0)
    bits = received * config["data_size_bytes"] * 8
    time_s = bits / session if session > 0 else math.nan
    return {
        "cells_received": int(r.ports.loc[_into(r, f["dst"]), "cells_out"]),
        "ip_datagrams_sent": int(r.hosts.loc[f["src"], "datagrams_sent"]),
        "datagrams_received": received,
        "adapter_dropped": int(r.hosts.loc[f["src"], "adapter_dropped"]),
        "time_s": time_s,
        "throughput_mbps": bits / time_s / 1e6,
    }


def measure_tcp(r: Result, config: Mapping[str, Any]) -> dict[str, Any]:
    """A ``ttcp`` run: cells leaving the sender and reaching the receiver,
    cells lost in the network (switch drops and the PFB's deterministic
    loss) and discarded by a policer, segments and their recovery, AAL5
    frames lost, writes lost at a full adapter, and the transfer: complete
    or not, its time from the SYN and its throughput (true Mbit/s of user
    data)."""
    c = r.connections.loc["ttcp"]
    ports = r.ports
    done = c["completed_at_s"]
    out = {
        "cells_sent": int(ports.loc[f"{c['src']}->gdc", "cells_out"]),
        "cells_received": int(ports.loc[_into(r, c["dst"]), "cells_out"]),
        "cells_dropped": int(ports.loc[ports["kind"] == "switch", "dropped"].sum() + ports["lost_on_link"].sum()),
        "segments_sent": int(c["segments_sent"]),
        "retransmitted_segments": int(c["retransmitted_segments"]),
        "timeouts": int(c["timeouts"]),
        "fast_retransmits": int(c["fast_retransmits"]),
        "pdus_lost": int(r.frames["lost"]),
        "adapter_dropped": int(r.hosts["adapter_dropped"].sum()),
        "complete": int(c["bytes_delivered"]) == config["user_bytes"],
        "time_s": float(done) if done is not None else math.nan,
        "throughput_mbps": float(c["transfer_throughput_bps"] or math.nan) / 1e6,
    }
    if not r.upc.empty:
        out["cells_discarded"] = int(r.upc.loc["vc32", "discarded"])
    return out


def measure(r: Result, config: Mapping[str, Any]) -> dict[str, Any]:
    return measure_tcp(r, config) if not r.connections.empty else measure_udp(r, config)


def beside(points: pd.DataFrame, comparison: pd.DataFrame, table: str, keys: list[str]) -> pd.DataFrame:
    """The points of `table` with the published values of their
    configuration (the comparison's) as ``published_<quantity>`` columns,
    joined on `keys`."""
    rows = points[points["table"] == table].reset_index(drop=True)
    comp = comparison[comparison["table"] == table] if "table" in comparison else comparison.iloc[0:0]
    if rows.empty or comp.empty:
        return rows
    wide = comp.pivot_table(index=keys, columns="quantity", values="published", aggfunc="first").reset_index()
    wide = wide.rename(columns={q: f"published_{q}" for q in wide.columns if q not in keys})
    for k in keys:
        wide[k] = wide[k].astype(rows[k].dtype)
    return rows.merge(wide, on=keys, how="left")


def pyplot() -> Any:
    from ... import plotting  # noqa: F401 (matplotlib set up for files)

    import matplotlib.pyplot as plt

    return plt


def plots() -> Any:
    """:mod:`atmlab.plotting` (and matplotlib), imported when a figure is
    drawn."""
    from ... import plotting

    return plotting


def save(fig: Any, path: Path, credit: str) -> Path:
    """Writes a table's figure with its `credit` (the source, the model) as
    the footnote (:func:`atmlab.plotting.save`)."""
    from ... import plotting

    return plotting.save(fig, path, note=credit)


def whole(df: pd.DataFrame) -> pd.DataFrame:
    """`df` for printing: the number columns that hold whole numbers only
    (counts, MTUs, burst tolerances) as integers."""
    df = df.copy()
    for c in df.columns:
        v = df[c]
        if pd.api.types.is_float_dtype(v) and v.notna().any() and (v.dropna() % 1 == 0).all():
            df[c] = v.astype("Int64")
    return df


def pivot(points: pd.DataFrame, index: str, value: str, label: str, descending: bool = False) -> pd.DataFrame:
    """`value` by `index` (rows) and MTU (columns, largest first), for printing."""
    table = points.pivot_table(index=index, columns="mtu_bytes", values=value, sort=False)
    table = table[sorted(table.columns, reverse=True)].sort_index(ascending=not descending)
    table.columns = [f"MTU {int(m)}" for m in table.columns]
    return table.reset_index().rename(columns={index: label})
