"""Table 6 (s7.4.3): UDP bursts at MTU 48, IP fragmentation.

``udpt emma2 -n 1000 -t 1000000 -s SIZE``: 1000 bursts one second apart,
EMMA2 -> GDC -> EMMA1, MTU 48 set with ``atmconfig``; ``atmstat`` counts
cells and IP datagrams (fragments) per burst. The SunOS stack cuts the last
fragment to a multiple of 8 bytes too (``fragmentation = "berkeley"``): 24
data bytes per fragment, 52-byte fragments of 2 cells, a last fragment of up
to 20 bytes in 1 cell.

The simulator's counts (fragments sent by the UDP flow, cells leaving the
switch toward EMMA1, per burst) are set beside the printed ones and beside
the core's arithmetic (``atmlab.cells``, the rule the Rust test
``reference_tables.rs`` checks). The rows of 1048 and 1049 bytes are printed
one cell below what 44 and 45 fragments need (44 of them carry 24 bytes, 2
cells each): a source error, flagged in the reference CSV's ``note``; they
are reported, not special-cased.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ... import reference
from ...result import Result
from ...wire import cells as wire
from .. import Options
from . import testbed
from .parts import Grid, Part, PartResult, Say, pyplot, run_grids, save, write_csv

BURSTS = 1000  # udpt -n 1000 -t 1000000
QUICK_BURSTS = 10  # --quick: the same counts per burst from fewer bursts
MTU = 48


def grid(sizes: list[int], bursts: int = BURSTS) -> Grid:
    t = testbed.direct(
        "kpn_table6",
        testbed.host("emma2", MTU, fragmentation="berkeley"),
        testbed.host("emma1", MTU, fragmentation="berkeley"),
        [{"kind": "udp_cbr", "name": "udpt", "vc": "vc32", "payload": "{size} bytes", "interval": "1 s",
          "count": bursts, "max_payload": "9000 bytes"}],
        duration=f"{bursts + 1} s",
    )
    del t["tcp"]
    t["params"] = {"size": sizes[0]}
    t["sweep"] = {"size": sizes}
    return Grid(t, {"bursts": bursts})


def extract(r: Result) -> dict[str, Any]:
    flow = r.udp_flows.loc["udpt"]
    return {
        "cells_received": int(r.ports.loc["gdc->emma1", "cells_out"]),
        "fragments_sent": int(flow["fragments_sent"]),
        "bursts_received": int(flow["received"]),
    }


def run(options: Options, say: Say) -> PartResult:
    published = reference.table("kpn/table06_udp_fragmentation_mtu48")
    sizes = [int(s) for s in published["data_size_bytes"]]
    g = grid(sizes, bursts=QUICK_BURSTS if options.quick else BURSTS)
    runs = run_grids("Table 6", [g], options, say, extract)
    if runs.interrupted:
        return PartResult.stopped("table6")
    sim = runs.indexed("size")
    rows = []
    for _, p in published.iterrows():
        size = int(p["data_size_bytes"])
        berkeley = wire(size, mtu=MTU, encap="null", fragmentation="berkeley")
        rfc791 = wire(size, mtu=MTU, encap="null", fragmentation="rfc791")
        s = sim.loc[size] if size in sim.index else None
        bursts = s["bursts"] if s is not None else float("nan")
        note = p["note"] if isinstance(p["note"], str) else ""
        rows.append({
            "data_size_bytes": size,
            "published_cells": int(p["cells_per_burst"]),
            "simulated_cells": s["cells_received"] / bursts if s is not None else float("nan"),
            "arithmetic_cells": berkeley.cells,
            "published_datagrams": int(p["udp_datagrams_per_burst"]),
            "simulated_datagrams": s["fragments_sent"] / bursts if s is not None else float("nan"),
            "arithmetic_datagrams": berkeley.datagrams,
            "rfc791_datagrams": rfc791.datagrams,
            "bursts_delivered": s["bursts_received"] / bursts if s is not None else float("nan"),
            "flagged_in_source": "possible source error" in note,
        })
    df = pd.DataFrame(rows)
    df["match"] = (df.published_cells == df.simulated_cells) & (df.published_datagrams == df.simulated_datagrams)
    df["simulated_equals_arithmetic"] = ((df.simulated_cells == df.arithmetic_cells)
                                         & (df.simulated_datagrams == df.arithmetic_datagrams))
    csv = write_csv(df, options.folder / "kpn_table6.csv")
    png = figure(df, options)
    n, ok = len(df), int(df["match"].sum())
    misses = df[~df["match"]]
    flagged = misses["flagged_in_source"].all() and ((misses.simulated_cells - misses.published_cells) == 1).all()
    arith = int(df["simulated_equals_arithmetic"].sum())
    miss_text = ", ".join(f"{s} B" for s in misses.data_size_bytes)
    summary = (f"Table 6: {ok} of {n} rows match exactly"
               + (f"; the other {len(misses)} ({miss_text}) are the rows the source prints one cell low"
                  if len(misses) and flagged else (f"; unexpected misses: {miss_text}" if len(misses) else ""))
               + f"; simulated = the fragmentation arithmetic on {arith} of {n}")
    display = df[["data_size_bytes", "published_cells", "simulated_cells", "published_datagrams",
                  "simulated_datagrams", "rfc791_datagrams", "match"]].rename(columns={
                      "data_size_bytes": "bytes", "published_cells": "cells published", "simulated_cells": "simulated",
                      "published_datagrams": "datagrams published", "simulated_datagrams": "simulated ",
                      "rfc791_datagrams": "RFC 791 rule"})
    display["note"] = df.flagged_in_source.map({True: "printed one cell low (source error)", False: ""})
    return PartResult("table6", "Table 6 (s7.4.3): cells and datagrams per UDP burst at MTU 48, Berkeley fragmentation",
                      df, display, summary, [csv, png], failures=runs.failures)


def figure(df: pd.DataFrame, options: Options) -> Path:
    plt = pyplot()
    fig, (ax, dx) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110, gridspec_kw={"width_ratios": [1.1, 1]})
    sizes = list(range(1, 9001))
    ax.plot(sizes, [wire(s, mtu=MTU, encap="null", fragmentation="berkeley").cells for s in sizes], color="0.8",
            lw=0.8, label="Berkeley fragmentation rule")
    ax.plot(df.data_size_bytes, df.simulated_cells, "o", mfc="none", ms=9, color="C0", label="atmlab (simulated)")
    ax.plot(df.data_size_bytes, df.published_cells, "x", ms=7, color="C3", label="published (Table 6)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("UDP burst size (bytes)")
    ax.set_ylabel("ATM cells per burst")
    ax.set_title("cells per burst", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    x = list(range(len(df)))
    dx.bar([i - 0.2 for i in x], df.published_cells - df.simulated_cells, width=0.4, color="C3", label="cells")
    dx.bar([i + 0.2 for i in x], df.published_datagrams - df.simulated_datagrams, width=0.4, color="C0",
           label="datagrams")
    dx.axhline(0, color="0.3", lw=0.8)
    dx.set_xticks(x, [str(s) for s in df.data_size_bytes], rotation=60, fontsize=7)
    dx.set_ylim(-1.5, 1.5)
    dx.set_yticks([-1, 0, 1])
    dx.set_xlabel("UDP burst size (bytes)")
    dx.set_ylabel("published - simulated, per burst")
    dx.set_title("differences (1048, 1049 B: printed one cell low, flagged in the source)", fontsize=9)
    dx.legend(fontsize=8, loc="upper left")
    dx.grid(alpha=0.3, axis="y")
    fig.suptitle("KPN Table 6: UDP bursts at MTU 48, IP fragments of 24 data bytes (SunOS)", fontsize=10)
    return save(fig, options.folder / "kpn_table6.png",
                "van den Bergh 1995, s7.4.3; 1000 bursts per size; counts per burst at the receiver")


PART = Part("table6", "Table 6: UDP fragmentation at MTU 48", run)
