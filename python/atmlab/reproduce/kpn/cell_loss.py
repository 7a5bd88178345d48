"""Table C.1 (s7.5.6): TCP throughput against the cell loss ratio.

``ttcp -t -s -n600 -l50000`` (30e6 bytes) for CLR 0, 1e-6, 1e-5, 1e-4 and
``-n20`` (1e6 bytes) for 1e-3 and 2e-3, EMMA1 -> GDC -> PKI -> EMMA2, at
MTU 9188 ... 512, peak rate unrestricted. The Police Function Board discards
cells deterministically, one in N = 1/CLR ("499 cells pass the PFB and the
next cell is discarded", CLR 2e-3), counting from the set-up of the
connection; here ``loss = {kind = "periodic", one_in = N, direction =
"forward"}`` on the cells entering the PKI switch (data cells only: the ACKs
return on the other direction). The published numbers are withheld: what
the study says about them (s7.5.6, s7.7) is checked instead (claims C.1-1
... C.1-7): about 0.9-1 s of extra transfer time per lost segment, a
significant drop for CLR > 1e-6, MTU 8192 best at 1e-5, and for CLR >= 1e-4
a throughput of 3 Mb/s or less whatever the MTU.

"Seconds lost per lost segment" is the study's estimate: (T - T_0) /
retransmitted segments, T_0 the loss-free transfer time at the same MTU
(for the 1e6-byte runs, the 30e6-byte loss-free time scaled by 1/30: the
loss-free transfer runs at a constant rate, the round trip being
microseconds). The TCP and the hosts are the study's one set
(``testbed.TCP``, ``testbed.tcp_hosts``: 4.3BSD-Tahoe's timers, whose RTO
settles at the two-tick floor, 1 s, on this sub-tick round trip; H3 on both
workstations). The check at CLR 1e-4 (table ``C.1 check``) shows what the
choice of loss recovery (fast retransmit or not) does to this number: the
reason for atmlab's choice of no fast retransmit (docs/reproductions/kpn.md,
"Which loss recovery").
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ..kit import Claim, Grid
from . import testbed
from .common import grid, of, pivot, plots, pyplot, save

DIRECTION = "EMMA1 -> EMMA2"
# (CLR, one in N, user bytes): s7.5.6.
LEVELS = [(1e-6, 1_000_000, 30_000_000), (1e-5, 100_000, 30_000_000), (1e-4, 10_000, 30_000_000),
          (1e-3, 1_000, 1_000_000), (2e-3, 500, 1_000_000)]
LOSS_FREE_BYTES = 30_000_000
QUICK_LEVELS = [LEVELS[1], LEVELS[2], LEVELS[4]]
QUICK_MTUS = [9188, 512]
# The TCP loss-recovery check ("Which loss recovery"): label, variant, max RTO.
SETTINGS = [
    ("no fast retransmit (vanilla), the choice", "vanilla", "64 s"),
    ("Tahoe (fast retransmit)", "tahoe", "64 s"),
    ("Reno (fast retransmit and recovery)", "reno", "64 s"),
]
CHECK_ONE_IN = 10_000  # CLR 1e-4, where the study's 0.92 s per segment example sits
TCP_SETTINGS = {
    "bsd": "4.3BSD-Tahoe timers (RTO at the 2-tick floor on a sub-tick RTT, with backoff), H3 hosts",
}
# How atmlab reads the study's words (docs/reproductions/kpn.md).
SIGNIFICANT = 0.2  # "throughput falls rapidly": more than 20 % from CLR 1e-6 to 1e-5 at every MTU
MTU_IRRELEVANT = 1.5  # "the MTU size does not matter any more": max/min across MTUs at most this
PER_LOSS_S = (0.8, 1.1)  # "about 0.9-1 s" per lost segment: the median within this


def template(name: str, loss: bool) -> dict[str, Any]:
    t = testbed.via_pki(
        name, *testbed.tcp_hosts("emma1", "emma2", "{mtu} bytes"), [testbed.ttcp("{nbytes} bytes")], duration="7200 s",
        pfb_loss={"kind": "periodic", "one_in": "{one_in}", "direction": "forward"} if loss else None)
    t["params"] = {"mtu": testbed.MTU, "nbytes": LOSS_FREE_BYTES}
    if loss:
        t["params"].update(clr=LEVELS[0][0], one_in=LEVELS[0][1])
    return t


def grids(quick: bool) -> list[Grid]:
    mtus = QUICK_MTUS if quick else testbed.MTUS
    levels = QUICK_LEVELS if quick else LEVELS
    out = []
    for setting in TCP_SETTINGS:
        lossy = {"zip": {"clr": {"clr": [c for c, _, _ in levels], "one_in": [n for _, n, _ in levels],
                                 "nbytes": [b for _, _, b in levels]}}, "mtu": mtus}
        out += [grid(f"Table C.1 {setting}, CLR 0", template("kpn_tableC1", loss=False),
                     {"mtu": mtus}, table="C.1", direction=DIRECTION, tcp=setting, clr=0.0, pfb_one_in=0,
                     user_bytes=LOSS_FREE_BYTES),
                grid(f"Table C.1 {setting}", template("kpn_tableC1", loss=True), lossy,
                     table="C.1", direction=DIRECTION, tcp=setting)]
    t = template("kpn_tableC1_tcp", loss=True)
    t["params"].update(setting=SETTINGS[0][0], one_in=CHECK_ONE_IN, clr=1e-4)
    # The check sets the TCP keys themselves (key paths in the sweep), so it
    # compares the three settings whatever the template's TCP is: under
    # --open-choices' KP-7 alternative (tcp.variant of every grid) too.
    check = {"zip": {"tcp": {"setting": [s for s, _, _ in SETTINGS], "tcp.variant": [v for _, v, _ in SETTINGS],
                             "tcp.max_rto": [m for _, _, m in SETTINGS]}}, "mtu": [9188] if quick else [9188, 512]}
    out.append(grid("Table C.1 TCP check", t, check, table="C.1 check", direction=DIRECTION, clr=1e-4,
                    pfb_one_in=CHECK_ONE_IN, user_bytes=LOSS_FREE_BYTES))
    return out


def derive(points: pd.DataFrame) -> pd.DataFrame:
    """Throughput in KB/s (K = 1024 bytes, as Table C.1) and the seconds
    lost per lost segment, against the loss-free time of the same TCP at the
    same MTU (the check's: the BSD timers')."""
    m = of(points, "C.1", "C.1 check")
    p = points[m]
    points.loc[m, "throughput_KBps"] = p.user_bytes / 1024 / p.time_s
    free = p[(p.table == "C.1") & (p.clr == 0)]
    for setting in [*TCP_SETTINGS, None]:
        rows = p[(p.table == "C.1") & (p.tcp == setting)] if setting else p[p.table == "C.1 check"]
        loss_free = free[free.tcp == (setting or "bsd")].set_index("mtu_bytes")["time_s"]
        t0 = rows.mtu_bytes.map(loss_free) * rows.user_bytes / LOSS_FREE_BYTES
        points.loc[rows.index, "loss_free_time_s"] = t0
        retransmitted = rows.retransmitted_segments
        points.loc[rows.index, "s_per_lost_segment"] = (rows.time_s - t0) / retransmitted.where(retransmitted > 0)
    return points


def _throughput(rows: pd.DataFrame, clr: float, mtu: int) -> float:
    v = rows[(rows.clr == clr) & (rows.mtu_bytes == mtu)].throughput_mbps
    return float(v.iloc[0]) if len(v) else math.nan


def claims(points: pd.DataFrame) -> list[Claim]:
    """The study's statements about Table C.1 (s7.5.6, s7.7), each on the
    runs of one TCP setting; a claim whose runs are missing has no verdict."""
    return [c for setting in TCP_SETTINGS for c in _claims(points, setting)]


def _claims(points: pd.DataFrame, setting: str) -> list[Claim]:
    df = points[of(points, "C.1") & (points.tcp == setting)]
    mtus = sorted(df.mtu_bytes.unique(), reverse=True)
    clrs = sorted(df.clr.unique())
    out: list[Claim] = []

    def add(k: int, statement: str, measure: str, threshold: str, basis: str, value: str | None = None,
            holds: Any = None) -> None:
        out.append(Claim(f"C.1-{k} {setting}", statement, measure, threshold, value,
                         None if holds is None else bool(holds), basis, TCP_SETTINGS[setting]))

    free = df[df.clr == 0.0]
    ok = not free.empty
    add(1, "CLR 0 loses nothing (no cell loss introduced)", "cells dropped and segments retransmitted at CLR 0",
        "0 and 0", "the experiment's set-up (s7.5.6)",
        f"{int(free.cells_dropped.sum())} cells dropped, {int(free.retransmitted_segments.sum())} retransmissions"
        if ok else None, ok and free.cells_dropped.sum() == 0 and free.retransmitted_segments.sum() == 0)
    ok = 1e-6 in clrs and 1e-5 in clrs
    drops = [1 - _throughput(df, 1e-5, m) / _throughput(df, 1e-6, m) for m in mtus] if ok else []
    add(2, "A significant drop for CLR > 1e-6: throughput falls rapidly once cells are lost (s7.5.6)",
        "throughput drop from CLR 1e-6 to 1e-5, per MTU", f"> {SIGNIFICANT:.0%} at every MTU",
        "atmlab's reading of 'significant'",
        f"1e-6 -> 1e-5: -{100 * min(drops):.0f}% to -{100 * max(drops):.0f}% across MTUs" if ok else None,
        min(drops) > SIGNIFICANT if ok else None)
    ok = 1e-5 in clrs and {9188, 8192} <= set(mtus)
    a, b = (_throughput(df, 1e-5, 8192), _throughput(df, 1e-5, 9188)) if ok else (0.0, 1.0)
    add(3, "At CLR 1e-5 the highest throughput is at MTU 8192 (s7.5.6)", "throughput at CLR 1e-5, MTU 8192 and 9188",
        "8192 above 9188", "the study's ordering",
        f"8192: {a:.2f}, 9188: {b:.2f} Mb/s ({100 * (a / b - 1):+.2f}%)" if ok else None, a > b if ok else None)
    high = df[df.clr >= 1e-4]
    ok = not high.empty
    add(4, "For CLR >= 1e-4 the throughput is 3 Mb/s or less (s7.5.6)", "highest throughput at CLR >= 1e-4",
        "<= 3 Mb/s", "the study's number", f"at most {high.throughput_mbps.max():.2f} Mb/s" if ok else None,
        high.throughput_mbps.max() <= 3.0 if ok else None)
    spreads = [(c, g.throughput_mbps.max() / g.throughput_mbps.min()) for c, g in high.groupby("clr") if len(g) > 1]
    add(5, "For CLR >= 1e-4 the MTU size does not matter any more (s7.5.6)",
        "max / min throughput across MTUs, at each CLR >= 1e-4", f"<= {MTU_IRRELEVANT:g} at every CLR",
        "atmlab's reading of 'does not matter'",
        "max/min throughput across MTUs: " + ", ".join(f"{c:g}: {s:.2f}" for c, s in spreads) if spreads else None,
        max(s for _, s in spreads) <= MTU_IRRELEVANT if spreads else None)
    ok = 9188 in mtus and len(clrs) > 1
    col = [_throughput(df, c, 9188) for c in clrs] if ok else []
    add(6, "The throughput falls with the CLR (Fig 33)", "throughput at MTU 9188, CLR 0 upwards",
        "never rises with the CLR", "the study's Fig 33", " > ".join(f"{v:.2f}" for v in col) if ok else None,
        all(x >= y for x, y in zip(col, col[1:], strict=False)) if ok else None)
    lossy = df[df.s_per_lost_segment.notna()]
    ok = not lossy.empty
    example = lossy[(lossy.clr == 1e-4) & (lossy.mtu_bytes == 9188)].s_per_lost_segment.mean() if ok else math.nan
    add(7, "About 0.9-1 s of extra transfer time per lost segment ((65 - 5) / 65 = 0.92 s at MTU 9188; s7.5.6)",
        "median over the lossy runs of (T - T_0) / retransmitted segments",
        f"{PER_LOSS_S[0]:g} to {PER_LOSS_S[1]:g} s", "the study's 0.9-1 s, about 0.1 s either side",
        f"median {lossy.s_per_lost_segment.median():.2f} s (1e-4, MTU 9188: {example:.2f} s)" if ok else None,
        PER_LOSS_S[0] <= lossy.s_per_lost_segment.median() <= PER_LOSS_S[1] if ok else None)
    return out


def views(points: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    c1 = points[of(points, "C.1")]
    check = points[of(points, "C.1 check")]
    out = [(f"Table C.1 (withheld): simulated TCP throughput (Mb/s) vs CLR and MTU, {TCP_SETTINGS[s]}",
            pivot(c1[c1.tcp == s], "clr", "throughput_mbps", "CLR")) for s in TCP_SETTINGS if (c1.tcp == s).any()]
    if not check.empty:
        out.append(("Table C.1: loss recovery at CLR 1e-4 (seconds lost per lost segment)",
                    check[["tcp", "mtu_bytes", "retransmitted_segments", "timeouts", "fast_retransmits", "time_s",
                           "throughput_mbps", "s_per_lost_segment"]]))
    return out


def _clr(c: float) -> str:
    """A cell loss ratio for a figure: "10⁻⁵", "2×10⁻³", "0" (the study's
    1e-5 and 2e-3)."""
    if c == 0:
        return "0"
    from ... import plotting

    mantissa, exponent = f"{c:.0e}".split("e")
    return plotting.power(int(exponent)) if mantissa == "1" else f"{mantissa}×{plotting.power(int(exponent))}"


def figures(points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
    c1 = points[of(points, "C.1")]
    df = c1[c1.tcp == "bsd"]
    if df.empty:
        return []
    plt, plotting = pyplot(), plots()
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110)
    zero_at = 1e-7
    for k, (mtu, g) in enumerate(sorted(df.groupby("mtu_bytes"), key=lambda kv: -kv[0])):
        g = g.sort_values("clr")
        a.plot([c if c > 0 else zero_at for c in g.clr], g.throughput_mbps, ms=4, label=f"MTU {int(mtu)}",
               **plotting.series(k))
    a.set_xscale("log")
    a.set_yscale("log")
    ticks = sorted(set(df.clr))
    a.set_xticks([c if c > 0 else zero_at for c in ticks], [_clr(c) for c in ticks], fontsize=8)
    a.minorticks_off()
    a.axhline(3.0, color="0.5", lw=0.8, ls="--")
    a.text(zero_at, 3.2, "3 Mb/s", fontsize=7, color="0.4")
    a.set_xlabel("Cell loss ratio (PFB: one cell in 1/CLR)")
    plotting.unit_axis(a.yaxis, "TCP throughput", "Mbit/s")
    a.set_title("Throughput against CLR (cf. Fig 33)", fontsize=9)
    a.legend(fontsize=7)
    a.grid(alpha=0.3, which="both")
    for k, (clr, g) in enumerate(df.groupby("clr")):
        g = g.sort_values("mtu_bytes", ascending=False)
        b.plot(g.mtu_bytes, g.throughput_mbps, ms=4, label=f"CLR {_clr(clr)}", **plotting.series(k))
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    mtus = sorted(df.mtu_bytes.unique())
    b.set_xticks(mtus, [str(int(m)) for m in mtus], fontsize=8)
    b.minorticks_off()
    b.set_xlabel("MTU (bytes)")
    plotting.unit_axis(b.yaxis, "TCP throughput", "Mbit/s")
    b.set_title("Throughput against MTU (cf. Fig 34)", fontsize=9)
    b.legend(fontsize=7)
    b.grid(alpha=0.3, which="both")
    fig.suptitle("KPN Table C.1: TCP over the PFB's deterministic cell loss (atmlab; published values withheld)",
                 fontsize=10)
    return [save(fig, folder / "kpn_tableC1.png",
                 "van den Bergh 1995, s7.5.6; 30e6 bytes for CLR <= 1e-4, 1e6 bytes for 1e-3 and 2e-3; "
                 "H3 on both hosts, 4.3BSD-Tahoe timers")]
