"""Table C.2 (s7.6.1) and Table 12 (s7.6.2): bulk TCP through a VBR policer.

EMMA2 -> GDC -> PKI -> EMMA1; the workstations' adapters shape to a peak
rate (``hosts[].adapter.peak``, 10 Mbit/s in C.2); the Police Function Board
at the PKI switch polices PCR 10 Mbit/s, SCR 3 Mbit/s and a burst tolerance
BT in cells (400 ... 12800), discarding what does not conform
(``vcs[].contract``, ``vcs[].upc = {at = "pki", action = "discard"}``).
``ttcp -t -s -n100 -l50000``: 5e6 bytes (the text says "50 10^6 bytes";
atmlab follows the command line, whose n x l is the stated volume in every
other ttcp experiment of the study).

BT is read as a burst of cells (``reading = "mbs"``, primary): a VBR.1
contract with MBS = BT, i.e. BT cells may pass back to back at the PCR (the
SCR test's tolerance is (MBS - 1)(1/SCR - 1/PCR)). The study's own picture
(Fig 36) is a bucket of BT cells filled by every cell and drained at the
SCR, which lets about BT x PCR / (PCR - SCR) = 1.43 BT cells pass at 10
Mbit/s; that reading (``reading = "fluid"``: the SCR test's tolerance (BT -
1) / SCR) runs beside it. The PCR test never binds for a source shaped to the
PCR: its CDVT (10 us) covers the slotting jitter of the 155.52 Mbit/s link
(at most one cell time there, 2.7 us), and it adds 0.07 cells to the SCR
test.

Both tables are withheld: the study's statements are checked instead, for
each reading (claims C.2-1 ... C.2-4, 12-1 ... 12-3): throughput never
reaches the SCR and falls as BT shrinks, whatever the MTU; with BT 3200 the
best throughput is at a source peak equal to the SCR, with no discards, and
it falls as the peak rises. Throughput is in kb/s with k = 1024 bits, as the
study's tables (``throughput_kbps``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..kit import Claim, Grid
from . import testbed
from .common import grid, of, pivot, plots, pyplot, save

PCR_BPS = 10e6
SCR_BPS = 3e6
CDVT = "10 us"
DIRECTION = "EMMA2 -> EMMA1"
BTS = [400, 800, 1600, 3200, 6400, 12800]  # cells: 400 to 12800 (s7.6.1); docs/reproductions/kpn.md
NBYTES = 5_000_000  # ttcp -n100 -l50000
C2_PEAK = 10
T12_BT = 3200
T12_MTU = 8192
T12_PEAKS = [3, 4, 5, 6, 7, 8, 9, 10]  # Mbit/s; "varied between 3 and 10 Mb" (grid not printed)
READINGS = {"mbs": "BT = MBS (burst of BT cells at the PCR)", "fluid": "bucket of BT cells drained at the SCR"}
# How atmlab reads the study's words (docs/reproductions/kpn.md).
CLOSE = 0.9  # "close to the SCR": at least 90 % of it
FALLING_TAU = -0.5  # "decreases as the peak rises": Kendall's tau between peak and throughput at most this
TREND = ("atmlab's reading of a trend 'whatever the MTU' in single, irregular runs (fixed after seeing them): "
         "docs/reproductions/kpn.md")


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
    t = testbed.via_pki(
        name, *testbed.tcp_hosts("emma2", "emma1", "{mtu} bytes", peak="{peak} Mbit/s"),
        [testbed.ttcp(f"{NBYTES} bytes")], duration="7200 s",
        vc={"category": "vbr", "contract": contract, "upc": {"at": "pki", "action": "discard"}})
    t["params"] = {"mtu": testbed.MTU, "bt": BTS[0], "peak": C2_PEAK}
    if reading != "mbs":
        t["params"]["bt_time"] = fluid_tolerance(BTS[0])
    return t


def _bt_sweep(reading: str, bts: list[int]) -> dict[str, Any]:
    if reading == "mbs":
        return {"bt": bts}
    return {"zip": {"bt": {"bt": bts, "bt_time": [fluid_tolerance(b) for b in bts]}}}


def grids(quick: bool) -> list[Grid]:
    bts = [400, 3200, 12800] if quick else BTS
    mtus = [9188, 512] if quick else testbed.MTUS
    peaks = [3, 6, 10] if quick else T12_PEAKS
    out = []
    for reading in READINGS:
        out.append(grid(f"Table C.2 {reading}", template("kpn_tableC2", reading),
                        {**_bt_sweep(reading, bts), "mtu": mtus}, table="C.2", direction=DIRECTION, reading=reading,
                        peak_rate_mbps=C2_PEAK, user_bytes=NBYTES))
    for reading in READINGS:
        t = template("kpn_table12", reading)
        t["params"].update(mtu=T12_MTU, bt=T12_BT)
        if reading != "mbs":
            t["params"]["bt_time"] = fluid_tolerance(T12_BT)
        out.append(grid(f"Table 12 {reading}", t, {"peak": peaks}, table="12", direction=DIRECTION,
                        reading=reading, bt_cells=T12_BT, mtu_bytes=T12_MTU, user_bytes=NBYTES))
    return out


def derive(points: pd.DataFrame) -> pd.DataFrame:
    """Throughput in kb/s (k = 1024 bits, as Tables C.2 and 12) and as a
    fraction of the SCR."""
    m = of(points, "C.2", "12")
    p = points[m]
    points.loc[m, "throughput_kbps"] = p.user_bytes * 8 / 1024 / p.time_s
    points.loc[m, "fraction_of_scr"] = p.user_bytes * 8 / p.time_s / SCR_BPS
    return points


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


def claims(points: pd.DataFrame) -> list[Claim]:
    return [c for claims_of in (_c2_claims, _t12_claims) for r in READINGS for c in claims_of(points, r)]


def _c2_claims(points: pd.DataFrame, reading: str) -> list[Claim]:
    """The statements of s7.6.1. A trend "whatever the MTU" holds when the
    mean over the MTUs moves the claimed way at every BT step and every MTU
    ends lower at the smallest BT than at the largest; the per-MTU rank
    correlations are reported beside (single runs are noisy: the study saw
    the throughput "fluctuate" with the MTU too)."""
    df = points[of(points, "C.2") & (points.reading == reading)]
    ok = not df.empty
    best = df.fraction_of_scr.max() if ok else None
    out = [Claim(f"C.2-1 {reading}", "The throughput never reaches the SCR of 3 Mb (s7.6.1)",
                 "highest throughput over all BT and MTU, as a fraction of the SCR", "below 100 %",
                 f"at most {100 * best:.0f}% of the SCR" if ok else None, bool(best < 1) if ok else None,
                 "the study's statement", READINGS[reading])]
    for k, what, column, sign in ((2, "throughput falls as BT shrinks, whatever the MTU", "throughput_kbps", 1),
                                  (3, "dropped cells rise as BT shrinks", "share", -1)):
        value, holds = _trend(df, column, sign) if ok else (None, None)
        measure = ("throughput" if sign > 0 else "share of cells discarded") + " against BT: the mean over the " \
            "MTUs at each BT, and each MTU at the largest and the smallest BT"
        out.append(Claim(f"C.2-{k} {reading}", f"The {what} (s7.6.1)", measure,
                         "the mean moves the claimed way at every BT step, and every MTU ends the claimed way",
                         value, holds, TREND, READINGS[reading]))
    out.append(Claim(f"C.2-4 {reading}", "The throughput is close to the SCR only for BT > 12800 (s7.6.1)",
                     "highest throughput as a fraction of the SCR (BT <= 12800 here)", f"below {CLOSE:.0%}",
                     f"best {100 * best:.0f}% of the SCR" if ok else None, bool(best < CLOSE) if ok else None,
                     "atmlab's reading of 'close'", READINGS[reading]))
    return out


def _trend(df: pd.DataFrame, column: str, sign: int) -> tuple[str, bool]:
    """Whether `column` falls (``sign`` 1) or rises (-1) as BT shrinks."""
    d = df.assign(share=df.cells_discarded / df.cells_sent)
    lo, hi = d.bt_cells.min(), d.bt_cells.max()
    mean = d.groupby("bt_cells")[column].mean().sort_index(ascending=False)
    mean_ok = _monotone(list(sign * mean))
    taus, ends, strict = [], [], []
    for _, g in d.groupby("mtu_bytes"):
        taus.append(_tau(g.bt_cells, g[column]))
        strict.append(_monotone(list(sign * g.sort_values("bt_cells", ascending=False)[column])))
        ends.append(sign * (g[g.bt_cells == hi][column].iloc[0] - g[g.bt_cells == lo][column].iloc[0]) > 0)
    what = "throughput" if column == "throughput_kbps" else "share of cells discarded"
    value = (f"mean over MTUs {'monotone' if mean_ok else 'NOT monotone'}; BT {hi:.0f} vs {lo:.0f} the claimed way "
             f"at {sum(ends)} of {len(ends)} MTUs; step by step at {sum(strict)} of {len(strict)}; Kendall tau(BT, "
             f"{what}) {min(taus):+.2f} to {max(taus):+.2f}")
    return value, bool(mean_ok and all(ends))


def _t12_claims(points: pd.DataFrame, reading: str) -> list[Claim]:
    """The statements of s7.6.2. "Decreases as the peak rises" holds when
    every peak above the SCR gives less than the SCR does and Kendall's rank
    correlation between peak and throughput is at most -0.5."""
    df = points[of(points, "12") & (points.reading == reading)].sort_values("peak_rate_mbps")
    scr = SCR_BPS / 1e6
    thr, peaks = list(df.throughput_kbps), list(df.peak_rate_mbps)
    best = peaks[thr.index(max(thr))] if thr else None
    at_scr = df[df.peak_rate_mbps == scr]
    discarded = int(at_scr.cells_discarded.iloc[0]) if not at_scr.empty else None
    tau = _tau(df.peak_rate_mbps, df.throughput_kbps)
    steps = sum(a >= b for a, b in zip(thr, thr[1:], strict=False))
    below = all(t < thr[peaks.index(scr)] for p, t in zip(peaks, thr, strict=True) if p > scr) if scr in peaks else False
    return [
        Claim(f"12-1 {reading}", "The best throughput is at a source peak equal to the SCR, 3 Mb (s7.6.2)",
              "the source peak with the highest throughput", "3 Mb",
              f"best at {best:g} Mb ({max(thr):.0f} kb/s)" if thr else None, bool(best == scr) if thr else None,
              "the study's statement", READINGS[reading]),
        Claim(f"12-2 {reading}", "No cells are discarded at a source peak equal to the SCR (s7.6.2)",
              "cells discarded by the policer at a 3 Mb source peak", "0",
              f"{discarded} discarded" if discarded is not None else None,
              bool(discarded == 0) if discarded is not None else None, "the study's statement", READINGS[reading]),
        Claim(f"12-3 {reading}", "The throughput decreases as the source peak rises (s7.6.2)",
              "throughput at every peak above the SCR against that at the SCR; Kendall's tau between peak and "
              "throughput", f"all below, and tau <= {FALLING_TAU:g}",
              f"{thr[0]:.0f} -> {thr[-1]:.0f} kb/s; {steps} of {len(thr) - 1} steps down; Kendall tau {tau:+.2f}"
              if thr else None, bool(below and tau <= FALLING_TAU) if thr else None,
              "atmlab's reading of a decreasing trend in single, irregular runs", READINGS[reading]),
    ]


def views(points: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    c2, t12 = points[of(points, "C.2")], points[of(points, "12")]
    out = [(f"Table C.2 (withheld): simulated TCP throughput (kb/s, k = 1024) vs BT and MTU, {READINGS[r]}",
            pivot(c2[c2.reading == r], "bt_cells", "throughput_kbps", "BT (cells)", descending=True))
           for r in READINGS if (c2.reading == r).any()]
    if not t12.empty:
        mbs = t12[t12.reading == "mbs"][["peak_rate_mbps", "cells_sent", "cells_discarded", "timeouts", "time_s",
                                         "throughput_kbps"]]
        fluid = t12[t12.reading == "fluid"][["peak_rate_mbps", "throughput_kbps"]]
        out.append(("Table 12 (withheld): TCP vs source peak, BT 3200, MTU 8192 (kb/s, k = 1024)",
                    mbs.merge(fluid, on="peak_rate_mbps", how="outer", suffixes=("", " (fluid bucket)"))))
    return out


def figures(points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
    c2, t12 = points[of(points, "C.2")], points[of(points, "12")]
    return ([c2_figure(c2, folder)] if not c2.empty else []) + ([t12_figure(t12, folder)] if not t12.empty else [])


def c2_figure(df: pd.DataFrame, folder: Path) -> Path:
    plt, plotting = pyplot(), plots()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110, sharey=True)
    bts = sorted(df.bt_cells.unique())
    for ax, reading in zip(axes, READINGS, strict=True):
        part = df[df.reading == reading]
        for k, (mtu, g) in enumerate(sorted(part.groupby("mtu_bytes"), key=lambda kv: -kv[0])):
            g = g.sort_values("bt_cells")
            ax.plot(g.bt_cells, g.throughput_kbps, ms=4, label=f"MTU {int(mtu)}", **plotting.series(k))
        ax.axhline(SCR_BPS / 1024, color="0.4", ls="--", lw=0.8)
        ax.text(df.bt_cells.max(), SCR_BPS / 1024 * 0.98, "SCR 3 Mb", fontsize=7, color="0.4", ha="right", va="top")
        ax.set_xscale("log", base=2)
        ax.set_xticks(bts, [str(int(b)) for b in bts], fontsize=7)
        ax.set_xlabel("Burst tolerance BT (cells)")
        ax.set_title(READINGS[reading], fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center left")
    plotting.unit_axis(axes[0].yaxis, "TCP throughput", "kb/s, k = 1024")
    fig.suptitle("KPN Table C.2: bulk TCP through a PCR 10 / SCR 3 Mb policer (cf. Fig 37; atmlab, published "
                 "values withheld)", fontsize=10)
    return save(fig, folder / "kpn_tableC2.png",
                "van den Bergh 1995, s7.6.1; source peak 10 Mb, 5e6 bytes (ttcp -n100 -l50000)")


def t12_figure(df: pd.DataFrame, folder: Path) -> Path:
    plt, plotting = pyplot(), plots()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for reading, fmt, style in (("mbs", "o-", {"color": "C0"}), ("fluid", "s--", {"color": "C1", "ms": 4})):
        g = df[df.reading == reading].sort_values("peak_rate_mbps")
        ax.plot(g.peak_rate_mbps, g.throughput_kbps, fmt, label=READINGS[reading], **style)
    ax.axhline(SCR_BPS / 1024, color="0.4", ls="--", lw=0.8)
    ax.text(df.peak_rate_mbps.min(), SCR_BPS / 1024 * 0.98, "SCR 3 Mb", fontsize=7, color="0.4", va="top")
    plotting.unit_axis(ax.xaxis, "Source peak rate", "Mbit/s")
    plotting.unit_axis(ax.yaxis, "TCP throughput", "kb/s, k = 1024")
    ax.set_ylim(bottom=0)
    ax.set_title("KPN Table 12: TCP vs source peak, BT 3200 cells, MTU 8192 (cf. Fig 39)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, folder / "kpn_table12.png",
                "van den Bergh 1995, s7.6.2; PFB PCR 10 Mb, SCR 3 Mb; atmlab, published values withheld")
