"""Table 8 (s7.4.5): UDP through the SBA-200's peak-rate setting.

``udpt -n 50000 -t 0 -s 8192 emma1`` (100000 datagrams at 20 Mb and below,
the table's footnote), EMMA2 -> EMMA1, MTU 9188 (172 cells a datagram), the
card's peak rate set to 87.3 ... 1 Mbit/s (a cell rate: spec 1.1). udpt
writes faster than a shaped card sends; the SBA-200's 64 KB buffer
(``adapter.buffer = "1236 cells"``) fills and the writes that do not fit are
lost before the wire (``overflow = "drop"``), so fewer datagrams arrive the
lower the peak.

Host model H2 (``testbed.H2_EMMA2``): every write costs c_a = 396 us
(``per_datagram``, paid before the buffer check), one that fits c_x = 413 us
more (``per_cell`` = 413 us / 172 cells). These are the spec's single
least-squares fit of T = N_gen c_a + N_sent c_x over the whole table (spec
section 4, H2), chosen once; nothing is tuned per row, and the 80 and 87.3
Mb rows run with the same model (the spec's suggestion to treat them as
unrestricted is not followed: the card setting is simulated as set).
Because c_a and c_x come from this table, agreement in level is partly by
construction; the fall of the delivered datagrams with the peak is the
model's.

Compared: datagrams received, time (first write to last reception) and Mb/s
= datagrams x 8192 x 8 / time (the study's own definition: correct units),
each within :data:`TOLERANCE`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ... import reference
from ...result import Result
from .. import Options
from . import testbed
from .parts import Grid, Part, PartResult, Say, pyplot, run_grids, save, write_csv

BURST = 8192
TOLERANCE = 0.10  # times printed to 0.5-1 s of 24-45 s; the footnote rows are 100000 writes
QUICK_PEAKS = [70.0, 30.0]


def grid(peaks: list[float], count: int) -> Grid:
    adapter = {"peak": "{peak} Mbit/s", "buffer": testbed.SBA200_BUFFER, "overflow": "drop"}
    udpt = {"kind": "udp_cbr", "name": "udpt", "vc": "vc32", "payload": f"{BURST} bytes", "interval": "1 ns",
            "count": count}
    t = testbed.direct("kpn_table8", testbed.host("emma2", cpu=testbed.H2_EMMA2, adapter=adapter),
                       testbed.host("emma1"), [udpt], duration="600 s")
    t["params"] = {"peak": peaks[0]}
    t["sweep"] = {"peak": peaks}
    return Grid(t, {"datagrams_generated": count})


def extract(r: Result) -> dict[str, Any]:
    f = r.udp_flows.loc["udpt"]
    received = int(f["received"])
    session = float(f["session_throughput_bps"] or 0)
    return {
        "cells_received": int(r.ports.loc["gdc->emma1", "cells_out"]),
        "datagrams_received": received,
        "adapter_dropped": int(r.hosts.loc["emma2", "adapter_dropped"]),
        "time_s": received * BURST * 8 / session if session > 0 else float("nan"),
    }


def run(options: Options, say: Say) -> PartResult:
    published = reference.table("kpn/table08_udp_throughput_vs_peak_rate")
    peaks = [float(x) for x in published.peak_rate_mbps]
    if options.quick:
        peaks = QUICK_PEAKS
    counts = {float(p): int(n) for p, n in zip(published.peak_rate_mbps, published.datagrams_generated, strict=True)}
    grids = [grid(ps, n) for n in sorted(set(counts.values()))
             if (ps := [p for p in peaks if counts[p] == n])]
    runs = run_grids("Table 8", grids, options, say, extract)
    if runs.interrupted:
        return PartResult.stopped("table8")
    rows = []
    for peak, p, s in runs.matched(published, "peak", lambda p: float(p["peak_rate_mbps"])):
        mbps = float(s["datagrams_received"]) * BURST * 8 / float(s["time_s"]) / 1e6
        rows.append({
            "peak_rate_mbps": peak,
            "datagrams_generated": int(p["datagrams_generated"]),
            "published_datagrams_received": int(p["datagrams_received"]),
            "simulated_datagrams_received": int(s["datagrams_received"]),
            "datagrams_rel_diff": float(s["datagrams_received"]) / int(p["datagrams_received"]) - 1,
            "published_cells_received": int(p["cells_received"]),
            "simulated_cells_received": int(s["cells_received"]),
            "simulated_adapter_dropped": int(s["adapter_dropped"]),
            "published_time_s": float(p["time_s"]),
            "simulated_time_s": float(s["time_s"]),
            "time_rel_diff": float(s["time_s"]) / float(p["time_s"]) - 1,
            "published_mbps": float(p["throughput_mbps"]),
            "simulated_mbps": mbps,
            "mbps_rel_diff": mbps / float(p["throughput_mbps"]) - 1,
        })
    df = pd.DataFrame(rows)
    if df.empty:
        return PartResult("table8", "Table 8", df, df, "Table 8: no runs", failures=runs.failures)
    for m in ("datagrams", "time", "mbps"):
        df[f"{m}_within"] = df[f"{m}_rel_diff"].abs() <= TOLERANCE
    df["within_tolerance"] = df.datagrams_within & df.time_within & df.mbps_within
    csv = write_csv(df, options.folder / "kpn_table8.csv")
    png = figure(df, options)
    n = len(df)
    within = int(df.within_tolerance.sum())
    worst = df.loc[df.mbps_rel_diff.abs().idxmax()]
    summary = (f"Table 8: datagrams, time and Mb/s all within +-{100 * TOLERANCE:.0f}% at {within} of {n} peaks "
               f"({within / n:.0%}); Mb/s alone at {int(df.mbps_within.sum())} of {n}, datagrams at "
               f"{int(df.datagrams_within.sum())}, time at {int(df.time_within.sum())} (largest Mb/s gap "
               f"{100 * worst.mbps_rel_diff:+.1f}% at {worst.peak_rate_mbps:g} Mb); H2 c_a 396 us, c_x 413 us")
    display = df[["peak_rate_mbps", "datagrams_generated", "published_datagrams_received",
                  "simulated_datagrams_received", "simulated_adapter_dropped", "published_time_s", "simulated_time_s",
                  "published_mbps", "simulated_mbps", "mbps_rel_diff"]].rename(columns={
                      "peak_rate_mbps": "peak Mb", "datagrams_generated": "written",
                      "published_datagrams_received": "dg pub", "simulated_datagrams_received": "dg sim",
                      "simulated_adapter_dropped": "dropped sim", "published_time_s": "time pub s",
                      "simulated_time_s": "time sim s", "published_mbps": "Mb/s pub", "simulated_mbps": "Mb/s sim",
                      "mbps_rel_diff": "Mb/s diff"}).round(3)
    return PartResult("table8", "Table 8 (s7.4.5): UDP against the card's peak rate, MTU 9188 (host model H2)",
                      df, display, summary, [csv, png], failures=runs.failures)


def figure(df: pd.DataFrame, options: Options) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    ax = axes[0]
    ax.plot(df.peak_rate_mbps, df.simulated_mbps, "o-", color="C0", label="atmlab (H2)")
    ax.plot(df.peak_rate_mbps, df.published_mbps, "x", ms=8, color="C3", label="published")
    ax.plot([0, 100], [0, 100 * 8192 / (172 * 53)], color="0.7", lw=0.8, ls="--", label="user rate at the peak")
    ax.set_xlabel("card peak rate (Mbit/s of cells)")
    ax.set_ylabel("UDP throughput (Mbit/s)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax = axes[1]
    frac_sim = df.simulated_datagrams_received / df.datagrams_generated
    frac_pub = df.published_datagrams_received / df.datagrams_generated
    ax.plot(df.peak_rate_mbps, frac_sim, "o-", color="C0", label="atmlab (H2)")
    ax.plot(df.peak_rate_mbps, frac_pub, "x", ms=8, color="C3", label="published")
    ax.set_xlabel("card peak rate (Mbit/s of cells)")
    ax.set_ylabel("datagrams received / written")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.suptitle("KPN Table 8: 8192-byte UDP writes into a shaped SBA-200 (64 KB buffer, overflow lost)",
                 fontsize=10)
    return save(fig, options.folder / "kpn_table8.png",
                "van den Bergh 1995, s7.4.5; 50000 writes (100000 at <= 20 Mb); c_a 396 us per write, "
                "c_x 413 us per datagram sent")


PART = Part("table8", "Table 8: UDP against the peak rate", run)
