"""Tables 5 (s7.4.2) and 6 (s7.4.3): UDP bursts into AAL5 cells.

``udpt`` on EMMA2 sends bursts one second apart to EMMA1 through the GDC
switch (VP 0, VC 32), Classical IP over AAL5 without LLC/SNAP; ``atmstat``
counts cells and IP datagrams per burst.

* Table 5: 100 bursts per size at MTU 9188. Each burst gets 36 bytes of
  overhead (UDP 8, IP 20, AAL5 trailer 8); udpt refuses bursts above 9000
  bytes (``max_payload``), which the study reports as 0 cells.
* Table 6: ``udpt emma2 -n 1000 -t 1000000 -s SIZE`` at MTU 48 (set with
  ``atmconfig``): IP fragments of 24 data bytes, the SunOS stack cutting the
  last fragment to a multiple of 8 bytes too (``fragmentation =
  "berkeley"``): 52-byte fragments of 2 cells, a last one of up to 20 bytes
  in 1 cell.

The simulator's counts (cells leaving the switch toward EMMA1, IP datagrams
the sender sent, per burst) are compared exactly with every printed row;
Table 6's are also set beside the core's arithmetic (``atmlab.cells``, the
rule the Rust test ``reference_tables.rs`` checks) and RFC 791's rule. The
rows of 1048 and 1049 bytes are printed one cell below what 44 and 45
fragments need (44 of them carry 24 bytes, 2 cells each): a source error,
flagged in the reference table's ``note`` and in the comparison's; they are
reported, not special-cased. ``--quick`` sends 10 bursts per size: the
counts per burst are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ... import reference
from ...wire import cells as wire
from ..kit import Grid, Published, Tolerance
from . import testbed
from .common import beside, grid, of, plots, pyplot, save

BURSTS = {"5": 100, "6": 1000}  # s7.4.2; udpt -n 1000 -t 1000000
QUICK_BURSTS = 10
MTU = {"5": testbed.MTU, "6": 48}
UDPT_MAX_BURST = "9000 bytes"  # s7.4.2: "The burst size is limited to 9000 bytes"
REFERENCE = {"5": ("kpn/table05_udp_datagram_to_cells", "datagrams_per_burst"),
             "6": ("kpn/table06_udp_fragmentation_mtu48", "udp_datagrams_per_burst")}
SOURCE_ERROR = "printed one cell low: the fragments need one more (flagged in the reference table)"


def template(table: str, bursts: int) -> dict[str, Any]:
    """The experiment of `table` for one burst size (``{size}``)."""
    extra = {"fragmentation": "berkeley"} if table == "6" else {}
    udpt = {"kind": "udp_cbr", "name": "udpt", "vc": "vc32", "payload": "{size} bytes", "interval": "1 s",
            "count": bursts, "max_payload": UDPT_MAX_BURST}
    t = testbed.direct(f"kpn_table{table}", testbed.host("emma2", MTU[table], **extra),
                       testbed.host("emma1", MTU[table], **extra), [udpt], duration=f"{bursts + 1} s")
    del t["tcp"]
    t["params"] = {"size": 12}
    return t


def grids(quick: bool) -> list[Grid]:
    out = []
    for table, (name, _) in REFERENCE.items():
        bursts = QUICK_BURSTS if quick else BURSTS[table]
        sizes = [int(s) for s in reference.table(name)["data_size_bytes"]]
        out.append(grid(f"Table {table}", template(table, bursts), {"size": sizes}, table=table,
                        direction="EMMA2 -> EMMA1", mtu_bytes=MTU[table], bursts=bursts))
    return out


def published() -> list[Published]:
    out = []
    for table, (name, datagrams) in REFERENCE.items():
        for r in reference.table(name).itertuples():
            note = r.note if isinstance(r.note, str) else ""
            flagged = "possible source error" in note  # the cell count only
            config = {"table": table, "data_size_bytes": int(r.data_size_bytes)}
            out += [Published("cells_per_burst", float(r.cells_per_burst), config, Tolerance.exact(), "cells",
                              f"Table {table}", SOURCE_ERROR if flagged else note),
                    Published("datagrams_per_burst", float(getattr(r, datagrams)), config, Tolerance.exact(),
                              "IP datagrams", f"Table {table}", "" if flagged else note)]
    return out


def derive(points: pd.DataFrame) -> pd.DataFrame:
    """Counts per burst; Table 6's fragmentation arithmetic beside them."""
    m = of(points, "5", "6")
    p = points[m]
    points.loc[m, "cells_per_burst"] = p.cells_received / p.bursts
    points.loc[m, "datagrams_per_burst"] = p.ip_datagrams_sent / p.bursts
    points.loc[m, "bursts_delivered"] = p.datagrams_received / p.bursts
    m6 = of(points, "6")
    for column, rule, what in (("arithmetic_cells_per_burst", "berkeley", "cells"),
                               ("arithmetic_datagrams_per_burst", "berkeley", "datagrams"),
                               ("rfc791_datagrams_per_burst", "rfc791", "datagrams")):
        points.loc[m6, column] = [getattr(wire(int(s), mtu=MTU["6"], encap="null", fragmentation=rule), what)
                                  for s in points.loc[m6, "data_size_bytes"]]
    return points


def figures(points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
    t5 = beside(points, comparison, "5", ["data_size_bytes"])
    t6 = beside(points, comparison, "6", ["data_size_bytes"])
    return ([figure5(t5, folder)] if "published_cells_per_burst" in t5 else []) + \
           ([figure6(t6, folder)] if "published_cells_per_burst" in t6 else [])


def figure5(df: pd.DataFrame, folder: Path) -> Path:
    plt, plotting = pyplot(), plots()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    sizes = range(1, 9001, 1)
    sawtooth = [-(-(s + 36) // 48) for s in sizes]
    ax.plot(list(sizes), sawtooth, color="0.8", lw=0.8, label="ceil((size + 36) / 48)")
    ax.plot(df.data_size_bytes, df.cells_per_burst, "o", mfc="none", ms=9, color="C0", label="atmlab (simulated)")
    ax.plot(df.data_size_bytes, df.published_cells_per_burst, "x", ms=7, color="C3", label="published (Table 5)")
    plotting.unit_axis(ax.xaxis, "UDP burst size", "bytes")
    plotting.unit_axis(ax.yaxis, "ATM cells per burst")
    ax.set_title("KPN Table 5: UDP bursts into AAL5 cells (MTU 9188, no LLC/SNAP)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    return save(fig, folder / "kpn_table5.png",
                "van den Bergh 1995, s7.4.2; bursts above 9000 bytes are refused by udpt (0 cells)")


def figure6(df: pd.DataFrame, folder: Path) -> Path:
    plt, plotting = pyplot(), plots()
    fig, (ax, dx) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110, gridspec_kw={"width_ratios": [1.1, 1]})
    sizes = list(range(1, 9001))
    ax.plot(sizes, [wire(s, mtu=MTU["6"], encap="null", fragmentation="berkeley").cells for s in sizes], color="0.8",
            lw=0.8, label="Berkeley fragmentation rule")
    ax.plot(df.data_size_bytes, df.cells_per_burst, "o", mfc="none", ms=9, color="C0", label="atmlab (simulated)")
    ax.plot(df.data_size_bytes, df.published_cells_per_burst, "x", ms=7, color="C3", label="published (Table 6)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.unit_axis(ax.xaxis, "UDP burst size", "bytes")
    plotting.unit_axis(ax.yaxis, "ATM cells per burst")
    ax.set_title("Cells per burst", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    x = list(range(len(df)))
    dx.bar([i - 0.2 for i in x], df.published_cells_per_burst - df.cells_per_burst, width=0.4, color="C3",
           label="cells")
    dx.bar([i + 0.2 for i in x], df.published_datagrams_per_burst - df.datagrams_per_burst, width=0.4, color="C0",
           label="datagrams")
    dx.axhline(0, color="0.3", lw=0.8)
    dx.set_xticks(x, [str(int(s)) for s in df.data_size_bytes], fontsize=7)
    dx.set_ylim(-1.5, 1.5)
    dx.set_yticks([-1, 0, 1])
    dx.set_xlabel("UDP burst size (B)")
    dx.set_ylabel("Published - simulated, per burst")
    dx.set_title("Differences (1048, 1049 B: printed one cell low, flagged in the source)", fontsize=9)
    dx.legend(fontsize=8, loc="upper left")
    dx.grid(alpha=0.3, axis="y")
    fig.suptitle("KPN Table 6: UDP bursts at MTU 48, IP fragments of 24 data bytes (SunOS)", fontsize=10)
    return save(fig, folder / "kpn_table6.png",
                f"van den Bergh 1995, s7.4.3; {int(df.bursts.iloc[0])} bursts per size; counts per burst at the "
                "receiver")
