"""Table 5 (s7.4.2): UDP bursts into AAL5 cells.

``udpt`` on EMMA2 sends 100 UDP bursts, one per second, to EMMA1 through the
GDC switch (VP 0, VC 32), Classical IP over AAL5 without LLC/SNAP, MTU 9188
bytes; ``atmstat`` counts the cells. The study concludes that each burst gets
36 bytes of overhead (UDP 8, IP 20, AAL5 trailer 8) and that udpt refuses
bursts above 9000 bytes.

Here the same experiment runs in the simulator: two hosts with 100 Mbit/s
TAXI adapters, the GDC switch with its 31-cell output buffer, 100 datagrams
at 1 s intervals, and the cells per burst are counted at the receiver. Exact
and deterministic: ``quick``, ``replications`` and the database do not
apply.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from ... import reference
from ...api import run as run_scenario
from .. import Options
from .parts import Part, PartResult, pyplot, write_csv

BURSTS = 100
UDPT_MAX_BURST = "9000 bytes"  # s7.4.2: "The burst size is limited to 9000 bytes"


def table5_scenario(data_size: int) -> dict[str, Any]:
    """The s7.4.2 experiment for one burst size."""
    host = {"mtu": "9188 bytes", "encapsulation": "null"}
    link = {"rate": "100 Mbit/s", "delay": "5 us"}
    return {
        "name": f"kpn_table5_{data_size}B",
        "simulation": {"duration": f"{BURSTS + 1} s"},
        "hosts": [{"name": "emma2", **host}, {"name": "emma1", **host}],
        "switches": [{"name": "gdc", "port": {"buffer": "31 cells"}}],
        "links": [{"between": ["emma2", "gdc"], **link}, {"between": ["gdc", "emma1"], **link}],
        "vcs": [{"name": "vc32", "path": ["emma2", "gdc", "emma1"], "label": "0/32"}],
        "apps": [{
            "kind": "udp_cbr", "name": "udpt", "vc": "vc32",
            "payload": f"{data_size} bytes", "interval": "1 s", "count": BURSTS,
            "max_payload": UDPT_MAX_BURST,
        }],
    }


def table5(progress: Callable[[str], None]) -> pd.DataFrame:
    published = reference.table("kpn/table05_udp_datagram_to_cells")
    rows = []
    for _, row in published.iterrows():
        size = int(row["data_size_bytes"])
        progress(f"Table 5: {size}-byte bursts")
        r = run_scenario(table5_scenario(size))
        received = r.ports.loc["gdc->emma1", "cells_out"]
        flow = r.udp_flows.loc["udpt"]
        rows.append({
            "data_size_bytes": size,
            "published_cells": int(row["cells_per_burst"]),
            "simulated_cells": received / BURSTS,
            "published_datagrams": int(row["datagrams_per_burst"]),
            "simulated_datagrams": flow["received"] / BURSTS,
        })
    df = pd.DataFrame(rows)
    df["match"] = (df.published_cells == df.simulated_cells) & (df.published_datagrams == df.simulated_datagrams)
    return df


def figure(df: pd.DataFrame, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    sizes = range(1, 9001, 1)
    sawtooth = [-(-(s + 36) // 48) for s in sizes]
    ax.plot(list(sizes), sawtooth, color="0.8", lw=0.8, label="ceil((size + 36) / 48)")
    ax.plot(df.data_size_bytes, df.simulated_cells, "o", mfc="none", ms=9, color="C0", label="atmlab (simulated)")
    ax.plot(df.data_size_bytes, df.published_cells, "x", ms=7, color="C3", label="published (Table 5)")
    ax.set_xlabel("UDP burst size (bytes)")
    ax.set_ylabel("ATM cells per burst")
    ax.set_title("KPN Table 5: UDP bursts into AAL5 cells (MTU 9188, no LLC/SNAP)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    fig.text(0.01, 0.01, "van den Bergh 1995, s7.4.2; bursts above 9000 bytes are refused by udpt (0 cells)",
             fontsize=7, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def run(options: Options, say: Callable[[str], None]) -> PartResult:
    df = table5(say)
    csv = write_csv(df, options.csv_path("kpn_table5.csv"))
    png = options.folder / "kpn_table5.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    figure(df, png)
    n, ok = len(df), int(df["match"].sum())
    return PartResult(
        key="table5",
        title="KPN ATM pilot, Table 5: cells per UDP burst (published vs simulated)",
        table=df,
        display=df,
        summary=f"Table 5: {ok} of {n} rows match the published cell and datagram counts exactly",
        files=[csv, png],
    )


PART = Part("table5", "Table 5: UDP bursts into cells, MTU 9188", run)
