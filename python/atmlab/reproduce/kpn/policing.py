"""Table C.2 (s7.6.1) and Table 12 (s7.6.2): bulk TCP through a VBR policer.

EMMA2 -> GDC -> PKI -> EMMA1; the workstations' adapters shape to a peak
rate (``hosts[].adapter.peak``, 10 Mbit/s in C.2); the Police Function Board
at the PKI switch polices PCR 10 Mbit/s, SCR 3 Mbit/s and a burst tolerance
BT in cells (400 ... 12800), discarding what does not conform
(``vcs[].contract``, ``vcs[].upc = {at = "pki", action = "discard"}``).
``ttcp -t -s -n100 -l50000``: 5e6 bytes (the text says "50 10^6 bytes"; the
command line, exact everywhere else, gives 5e6: spec A4).

BT is read as a burst of cells (primary): a VBR.1 contract with MBS = BT,
i.e. BT cells may pass back to back at the PCR (the SCR test's tolerance is
(MBS - 1)(1/SCR - 1/PCR)). The study's own picture (Fig 36) is a bucket of
BT cells filled by every cell and drained at the SCR, which lets about
BT x PCR / (PCR - SCR) = 1.43 BT cells pass at 10 Mbit/s; that reading (the
SCR test's tolerance (BT - 1) / SCR) runs beside it in the ``fluid_*``
columns. The PCR test never binds for a source shaped to the PCR: its CDVT
(10 us) covers the slotting jitter of the 155.52 Mbit/s link (at most one
cell time there, 2.7 us), and it adds 0.07 cells to the SCR test.

Both tables are withheld: the CSVs have no published columns; the study's
statements are checked instead (throughput never reaches the SCR and falls
as BT shrinks, whatever the MTU; with BT 3200 the best throughput is at a
source peak equal to the SCR, with no discards, and it falls as the peak
rises). Throughput is printed in kb/s with k = 1024 bits, as the study's
tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ...result import Result
from .. import Options
from . import testbed
from .parts import Grid, Part, PartResult, Say, pyplot, run_grids, save, write_csv

PCR_BPS = 10e6
SCR_BPS = 3e6
CDVT = "10 us"
BTS = [400, 800, 1600, 3200, 6400, 12800]  # cells (models.md s7.3)
NBYTES = 5_000_000  # ttcp -n100 -l50000
T12_BT = 3200
T12_MTU = 8192
T12_PEAKS = [3, 4, 5, 6, 7, 8, 9, 10]  # Mbit/s; "varied between 3 and 10 Mb" (grid not printed)
READINGS = {"mbs": "BT = MBS (burst of BT cells at the PCR)", "fluid": "bucket of BT cells drained at the SCR"}


def fluid_tolerance(bt: int) -> str:
    """The SCR test's tolerance for a bucket of ``bt`` cells drained at the
    SCR: a cell conforms while the bucket holds at most bt - 1 cells."""
    return f"{(bt - 1) * 424 / (SCR_BPS / 1e6):.6f} us"


def template(name: str, reading: str) -> dict[str, Any]:
    contract: dict[str, Any] = {"conformance": "vbr.1", "pcr": f"{PCR_BPS / 1e6:g} Mbit/s",
                                "scr": f"{SCR_BPS / 1e6:g} Mbit/s", "cdvt": CDVT}
    if reading == "mbs":
        contract["mbs"] = "{bt}"
    else:
        contract["bt"] = "{bt_time}"
    peak = {"adapter": {"peak": "{peak} Mbit/s"}}
    t = testbed.via_pki(
        name, testbed.host("emma2", "{mtu} bytes", **peak), testbed.host("emma1", "{mtu} bytes", **peak),
        [testbed.ttcp(f"{NBYTES} bytes")], duration="7200 s",
        vc={"category": "vbr", "contract": contract, "upc": {"at": "pki", "action": "discard"}})
    t["params"] = {"mtu": testbed.MTU, "bt": BTS[0], "peak": 10}
    if reading != "mbs":
        t["params"]["bt_time"] = fluid_tolerance(BTS[0])
    return t


def _bt_sweep(reading: str, bts: list[int]) -> dict[str, Any]:
    if reading == "mbs":
        return {"bt": bts}
    return {"zip": {"bt": {"bt": bts, "bt_time": [fluid_tolerance(b) for b in bts]}}}


def c2_grids(quick: bool) -> list[Grid]:
    bts = [400, 3200, 12800] if quick else BTS
    mtus = [9188, 512] if quick else testbed.MTUS
    out = []
    for reading in READINGS:
        t = template("kpn_tableC2", reading)
        t["sweep"] = {**_bt_sweep(reading, bts), "mtu": mtus}
        out.append(Grid(t, {"reading": reading, "peak": 10}))
    return out


def t12_grids(quick: bool) -> list[Grid]:
    peaks = [3, 6, 10] if quick else T12_PEAKS
    out = []
    for reading in READINGS:
        t = template("kpn_table12", reading)
        t["params"].update(mtu=T12_MTU, bt=T12_BT)
        if reading != "mbs":
            t["params"]["bt_time"] = fluid_tolerance(T12_BT)
        t["sweep"] = {"peak": peaks}
        out.append(Grid(t, {"reading": reading, "bt": T12_BT, "mtu": T12_MTU}))
    return out


def extract(r: Result) -> dict[str, Any]:
    c = r.connections.loc["ttcp"]
    done = c["completed_at_s"]
    return {
        "cells_sent": int(r.ports.loc["emma2->gdc", "cells_out"]),
        "cells_received": int(r.ports.loc["pki->emma1", "cells_out"]),
        "cells_discarded": int(r.upc.loc["vc32", "discarded"]),
        "pdus_sent": int(c["segments_sent"]),
        "pdus_lost": int(r.frames["lost"]),
        "retransmitted_segments": int(c["retransmitted_segments"]),
        "timeouts": int(c["timeouts"]),
        "bytes_delivered": int(c["bytes_delivered"]),
        "time_s": float(done) if done is not None else float("nan"),
    }


METRICS = ["cells_sent", "cells_received", "cells_discarded", "pdus_sent", "pdus_lost", "retransmitted_segments",
           "timeouts", "time_s", "throughput_kbps", "fraction_of_scr", "complete"]


def widen(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per configuration: the MBS reading's metrics as
    ``simulated_*``, the fluid bucket's as ``fluid_*``."""
    rows = rows.copy()
    rows["complete"] = rows.bytes_delivered == NBYTES
    rows["throughput_kbps"] = NBYTES * 8 / 1024 / rows.time_s  # k = 1024 bits, as Tables C.2 and 12
    rows["fraction_of_scr"] = NBYTES * 8 / rows.time_s / SCR_BPS
    parts = []
    for reading, prefix in (("mbs", "simulated_"), ("fluid", "fluid_")):
        part = rows[rows.reading == reading].set_index(keys)[["replications", *METRICS]]
        parts.append(part.add_prefix(prefix))
    return parts[0].join(parts[1], how="outer").reset_index()


def run_c2(options: Options, say: Say) -> PartResult:
    runs = run_grids("Table C.2", c2_grids(options.quick), options, say, extract)
    if runs.interrupted:
        return PartResult.stopped("tableC2")
    df = widen(runs.rows, ["bt", "mtu"]).rename(columns={"bt": "bt_cells", "mtu": "mtu_bytes"})
    df = df.sort_values(["bt_cells", "mtu_bytes"], ascending=[False, False], kind="stable").reset_index(drop=True)
    df.insert(2, "source_peak_mbps", 10)
    claims = c2_claims(df)
    csv = write_csv(df, options.folder / "kpn_tableC2.csv")
    csv_claims = write_csv(claims, options.folder / "kpn_tableC2_claims.csv")
    png = c2_figure(df, options)
    best = df.simulated_throughput_kbps.max()
    summary = (f"Table C.2 (withheld, claims only): {int(claims.holds.sum())} of {len(claims)} claims hold; "
               f"best {best:.0f} kb/s = {100 * df.simulated_fraction_of_scr.max():.0f}% of the SCR "
               f"(fluid bucket: {100 * df.fluid_fraction_of_scr.max():.0f}%)")
    pivot = df.pivot_table(index="bt_cells", columns="mtu_bytes", values="simulated_throughput_kbps", sort=False)
    pivot = pivot[sorted(pivot.columns, reverse=True)]
    pivot.columns = [f"MTU {m}" for m in pivot.columns]
    pivot.index = pivot.index.astype(int)
    display = pivot.reset_index().rename(columns={"bt_cells": "BT (cells)"})
    return PartResult(
        "tableC2", "Table C.2 (s7.6.1, published values withheld): simulated TCP throughput (kb/s, k = 1024) vs BT "
        "and MTU, BT = MBS", df, display, summary, [csv, csv_claims, png],
        extra=[("Table C.2: the study's claims", claims)], failures=runs.failures)


def run_t12(options: Options, say: Say) -> PartResult:
    runs = run_grids("Table 12", t12_grids(options.quick), options, say, extract)
    if runs.interrupted:
        return PartResult.stopped("table12")
    df = widen(runs.rows, ["peak", "bt", "mtu"]).rename(
        columns={"peak": "source_peak_mbps", "bt": "bt_cells", "mtu": "mtu_bytes"})
    df = df.sort_values("source_peak_mbps", kind="stable").reset_index(drop=True)
    claims = t12_claims(df)
    csv = write_csv(df, options.folder / "kpn_table12.csv")
    csv_claims = write_csv(claims, options.folder / "kpn_table12_claims.csv")
    png = t12_figure(df, options)
    summary = (f"Table 12 (withheld, claims only): {int(claims.holds.sum())} of {len(claims)} claims hold; "
               + ", ".join(f"{int(p)} Mb: {v:.0f}" for p, v in zip(df.source_peak_mbps, df.simulated_throughput_kbps,
                                                                     strict=True)) + " kb/s")
    display = df[["source_peak_mbps", "simulated_cells_sent", "simulated_cells_discarded", "simulated_timeouts",
                  "simulated_time_s", "simulated_throughput_kbps", "fluid_throughput_kbps"]].rename(columns={
                      "source_peak_mbps": "peak Mb/s", "simulated_cells_sent": "cells",
                      "simulated_cells_discarded": "discarded", "simulated_timeouts": "timeouts",
                      "simulated_time_s": "time s", "simulated_throughput_kbps": "kb/s",
                      "fluid_throughput_kbps": "kb/s (fluid bucket)"})
    for c in ("cells", "discarded", "timeouts"):
        display[c] = display[c].round().astype("Int64")
    return PartResult(
        "table12", "Table 12 (s7.6.2, published values withheld): TCP vs source peak, BT 3200, MTU 8192", df,
        display, summary, [csv, csv_claims, png], extra=[("Table 12: the study's claims", claims)],
        failures=runs.failures)


def _monotone(values: list[float]) -> bool:
    return all(a >= b for a, b in zip(values, values[1:], strict=False))


def _tau(x: pd.Series, y: pd.Series) -> float:
    """Kendall's rank correlation (tau-a: concordant less discordant pairs
    over all pairs; the swept values have no ties)."""
    pts = list(zip(x, y, strict=True))
    pairs = [(a, b) for i, a in enumerate(pts) for b in pts[i + 1:]]
    if not pairs:
        return float("nan")
    s = sum(_sign(a[0] - b[0]) * _sign(a[1] - b[1]) for a, b in pairs)
    return s / len(pairs)


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def c2_claims(df: pd.DataFrame) -> pd.DataFrame:
    """The statements of s7.6.1. A trend "whatever the MTU" holds when the
    mean over the MTUs moves the claimed way at every BT step and every MTU
    ends lower at the smallest BT than at the largest; the per-MTU rank
    correlations are reported beside (single runs are noisy: the study saw
    the throughput "fluctuate" with the MTU too)."""
    out = []
    lo, hi = df.bt_cells.min(), df.bt_cells.max()
    for prefix, reading in (("simulated_", "mbs"), ("fluid_", "fluid")):
        name = READINGS[reading]
        frac = df[f"{prefix}fraction_of_scr"]
        out.append({"reading": name, "claim": "never reaches the SCR of 3 Mb",
                    "atmlab": f"at most {100 * frac.max():.0f}% of the SCR", "holds": bool(frac.max() < 1)})
        for what, column in (("throughput", f"{prefix}throughput_kbps"), ("share of cells discarded", "share")):
            d = df.assign(share=df[f"{prefix}cells_discarded"] / df[f"{prefix}cells_sent"])
            sign = 1 if what == "throughput" else -1
            mean = d.groupby("bt_cells")[column].mean().sort_index(ascending=False)
            mean_ok = _monotone(list(sign * mean))
            taus, ends, strict = [], [], []
            for _, g in d.groupby("mtu_bytes"):
                taus.append(_tau(g.bt_cells, g[column]))
                strict.append(_monotone(list(sign * g.sort_values("bt_cells", ascending=False)[column])))
                ends.append(sign * (g[g.bt_cells == hi][column].iloc[0] - g[g.bt_cells == lo][column].iloc[0]) > 0)
            claim = ("falls as BT shrinks, whatever the MTU" if what == "throughput"
                     else "dropped cells rise as BT shrinks")
            out.append({"reading": name, "claim": claim,
                        "atmlab": f"mean over MTUs {'monotone' if mean_ok else 'NOT monotone'}; BT {hi} vs {lo} "
                                  f"the claimed way at {sum(ends)} of {len(ends)} MTUs; step by step at "
                                  f"{sum(strict)} of {len(strict)}; Kendall tau(BT, {what}) {min(taus):+.2f} to "
                                  f"{max(taus):+.2f}",
                        "holds": bool(mean_ok and all(ends))})
        out.append({"reading": name, "claim": "close to the SCR only for BT > 12800 (here: below 90% of it)",
                    "atmlab": f"best {100 * frac.max():.0f}% of the SCR", "holds": bool(frac.max() < 0.9)})
    return pd.DataFrame(out)


def t12_claims(df: pd.DataFrame) -> pd.DataFrame:
    """The statements of s7.6.2. "Decreases as the peak rises" holds when
    every peak above the SCR gives less than the SCR does and Kendall's rank
    correlation between peak and throughput is at most -0.5."""
    out = []
    scr = SCR_BPS / 1e6
    for prefix, reading in (("simulated_", "mbs"), ("fluid_", "fluid")):
        name = READINGS[reading]
        thr = list(df[f"{prefix}throughput_kbps"])
        peaks = list(df.source_peak_mbps)
        best = peaks[thr.index(max(thr))]
        at_scr = df[df.source_peak_mbps == scr]
        out.append({"reading": name, "claim": "best throughput at source peak = SCR (3 Mb)",
                    "atmlab": f"best at {best:g} Mb ({max(thr):.0f} kb/s)", "holds": bool(best == scr)})
        if not at_scr.empty:
            d = int(at_scr[f"{prefix}cells_discarded"].iloc[0])
            out.append({"reading": name, "claim": "no cells discarded at peak = SCR", "atmlab": f"{d} discarded",
                        "holds": d == 0})
        tau = _tau(df.source_peak_mbps, df[f"{prefix}throughput_kbps"])
        steps = sum(a >= b for a, b in zip(thr, thr[1:], strict=False))
        below = all(t < thr[peaks.index(scr)] for p, t in zip(peaks, thr, strict=True) if p > scr) \
            if scr in peaks else False
        out.append({"reading": name, "claim": "throughput decreases as the peak rises",
                    "atmlab": f"{thr[0]:.0f} -> {thr[-1]:.0f} kb/s; {steps} of {len(thr) - 1} steps down; "
                              f"Kendall tau {tau:+.2f}",
                    "holds": bool(below and tau <= -0.5)})
    return pd.DataFrame(out)


def c2_figure(df: pd.DataFrame, options: Options) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110, sharey=True)
    for ax, (prefix, reading) in zip(axes, (("simulated_", "mbs"), ("fluid_", "fluid")), strict=True):
        for k, (mtu, g) in enumerate(sorted(df.groupby("mtu_bytes"), key=lambda kv: -kv[0])):
            g = g.sort_values("bt_cells")
            ax.plot(g.bt_cells, g[f"{prefix}throughput_kbps"], "o-", ms=4, color=f"C{k}", label=f"MTU {mtu}")
        ax.axhline(SCR_BPS / 1024, color="0.4", ls="--", lw=0.8)
        ax.text(df.bt_cells.max(), SCR_BPS / 1024 * 1.02, "SCR 3 Mb", fontsize=7, color="0.4", ha="right")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(df.bt_cells.unique()), [str(b) for b in sorted(df.bt_cells.unique())], fontsize=7)
        ax.set_xlabel("burst tolerance BT (cells)")
        ax.set_title(READINGS[reading], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center left")
    axes[0].set_ylabel("TCP throughput (kb/s, k = 1024)")
    fig.suptitle("KPN Table C.2: bulk TCP through a PCR 10 / SCR 3 Mb policer (cf. Fig 37; atmlab, published "
                 "values withheld)", fontsize=10)
    return save(fig, options.folder / "kpn_tableC2.png",
                "van den Bergh 1995, s7.6.1; source peak 10 Mb, 5e6 bytes (ttcp -n100 -l50000)")


def t12_figure(df: pd.DataFrame, options: Options) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    ax.plot(df.source_peak_mbps, df.simulated_throughput_kbps, "o-", color="C0", label=READINGS["mbs"])
    ax.plot(df.source_peak_mbps, df.fluid_throughput_kbps, "s--", color="C1", ms=4, label=READINGS["fluid"])
    ax.axhline(SCR_BPS / 1024, color="0.4", ls="--", lw=0.8)
    ax.text(df.source_peak_mbps.min(), SCR_BPS / 1024 * 1.02, "SCR 3 Mb", fontsize=7, color="0.4")
    ax.set_xlabel("source peak rate (Mbit/s)")
    ax.set_ylabel("TCP throughput (kb/s, k = 1024)")
    ax.set_ylim(bottom=0)
    ax.set_title("KPN Table 12: TCP vs source peak, BT 3200 cells, MTU 8192 (cf. Fig 39)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, options.folder / "kpn_table12.png",
                "van den Bergh 1995, s7.6.2; PFB PCR 10 Mb, SCR 3 Mb; atmlab, published values withheld")


PART_C2 = Part("tableC2", "Table C.2: TCP vs burst tolerance", run_c2)
PART_12 = Part("table12", "Table 12: TCP vs source peak under VBR policing", run_t12)
