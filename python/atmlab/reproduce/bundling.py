"""bundling (Lamont, Villasenor, Chefai, Miloucheva, DREO TR 1999-020 / CRC
98-007, 1998): "Bundling Internet Traffic over VBR ATM Networks".

IP telephony (80-byte UDP TSDUs every 10 ms) bundled with bulk TCP on one
Classical-IP VBR PVC (PCR 6 Mbit/s, SCR 2 Mbit/s, MBS 32, policed), the
sender's FORE adapter shaping at 1594 kbit/s. Every experiment of the study
is run on ``scenarios/bundling/bundle.toml`` with one set of defaults
(docs/reproductions/bundling.md), on the reproduction kit (:mod:`.kit`):

* A (WAN, 1 TCP + n UDP; Tables 1-2, 5-16), B (WAN, 1 UDP + n TCP; Tables
  17-24), C (WAN, n UDP; Tables 25-26): compared with the published values;
* D, E, F (LAN; Tables 3-4, 27-43): run and measured, their published values
  withheld.

Every run measures every quantity of the study (TCP and UDP throughput, UDP
loss, the cell interarrival of one voice stream) and the UPC's discards; a
quantity is empty only where the bundle has no connection of its type.

The TCP TSDU size L is a parameter of every A/B/D/E configuration: the bulk
application writes L-byte TSDUs into a socket send buffer of the window's
size and TCP sends from it under the window and Nagle's rule (the BSD socket
send path, docs/models/tcp.md), so L shapes the segment stream.

``--quick`` runs a small subset with 20-s sessions.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import reference
from ..wire import cells as atmlab_cells
from ..result import Result
from ..scenario import load
from .kit import Alternative, Claim, Grid, Published, StudyBase, Tolerance

KB = 1024.0  # the study's KB (s6.1.1)
NET = {"WAN": {"delay": "25.75 ms", "rx_peak": "2000 kbit/s"}, "LAN": {"delay": "0.5 ms", "rx_peak": "1594 kbit/s"}}
WINDOWS = [8, 16, 32, 50]
TSDUS = (4, 8, 10, 20)  # KB; the LAN has no 10
# --quick: 20-s sessions, arrivals recorded from 5 s, 40 s simulated.
QUICK = {"session": "20 s", "udp_count": 2000, "arrivals_from": "5 s", "duration": "40 s"}
# The voice stream whose cells are timed (Tables 1-4: "100 ATM cells of one UDP connection").
TIMED_FLOW = "udp0"
# How a simulated quantity is compared with a published one
# (docs/reproductions/bundling.md): its unit and tolerance, +/-10 % for
# throughputs and interarrival means, +/-25 % for the interarrival standard
# deviation (over only 100 gaps), +/-0.5 percentage points for the loss rate.
COMPARED: dict[str, tuple[str, Tolerance]] = {
    "tcp_throughput_kbytes_per_s": ("KB/s", Tolerance.relative(0.10)),
    "udp_throughput_kbytes_per_s": ("KB/s", Tolerance.relative(0.10)),
    "udp_loss_pct": ("%", Tolerance.absolute(0.5)),
    "interarrival_mean_ms": ("ms", Tolerance.relative(0.10)),
    "interarrival_std_ms": ("ms", Tolerance.relative(0.25)),
}
# The published tables: (table, reference CSV, {its column: our quantity},
# experiment). Tables 5-24 come in groups of four, one per TSDU size L.
SERIES = (
    (5, "wan_1tcp_nudp_tcp_thr", "tcp_throughput_kbytes_per_s", "tcp_throughput_kbytes_per_s", "A"),
    (9, "wan_1tcp_nudp_udp_thr", "mean_udp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s", "A"),
    (13, "wan_1tcp_nudp_udp_loss", "mean_udp_loss_rate_pct", "udp_loss_pct", "A"),
    (17, "wan_1udp_ntcp_tcp_thr", "mean_tcp_throughput_kbytes_per_s", "tcp_throughput_kbytes_per_s", "B"),
    (21, "wan_1udp_ntcp_udp_thr", "udp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s", "B"),
)
INTERARRIVAL = {"mean_cell_interarrival_ms": "interarrival_mean_ms",
                "std_dev_cell_interarrival_ms": "interarrival_std_ms"}
TABLES = (
    (1, "table01_wan_cell_interarrival_win16k", INTERARRIVAL, "A"),
    (2, "table02_wan_cell_interarrival_win50k", INTERARRIVAL, "A"),
    *((first + i, f"table{first + i:02d}_{stem}_tsdu{tsdu}k", {column: q}, exp)
      for first, stem, column, q, exp in SERIES for i, tsdu in enumerate(TSDUS)),
    (25, "table25_wan_nudp_udp_thr", {"mean_udp_throughput_kbytes_per_s": "udp_throughput_kbytes_per_s"}, "C"),
    (26, "table26_wan_nudp_udp_loss", {"mean_udp_loss_rate_pct": "udp_loss_pct"}, "C"),
)
KEY = ["experiment", "n_tcp", "n_udp", "tcp_tsdu_kbytes", "tcp_window_kbytes"]

# The claims' numbers (s6.1.1, s6.1.3; the fluid bound is derived from them,
# docs/reproductions/bundling.md, "Claims").
CELLS_PER_S = 1594000 / 424  # the adapter's 1594 kbit/s of 53-byte cells: 3759.4 cells/s
VOICE_CELLS_PER_S = 300  # 3 cells per 80-byte TSDU, 100 TSDUs/s
VOICE_KBYTES_PER_S = 8000 / KB  # 80 bytes every 10 ms: 7.81 KB/s
# The fluid bound for 1 TCP + 1 UDP on the WAN: the cells the voice leaves,
# 192 cells per 9140-byte segment (KB/s).
FLUID_1TCP_1UDP = (CELLS_PER_S - VOICE_CELLS_PER_S) / 192 * 9140 / KB
FLUID_TOLERANCE = 0.05  # relative
VOICE_KEPT = 7.75  # KB/s: a stream "keeps" its rate at this much or more


# What the published tables allow (docs/reproductions/bundling.md; the
# command is tools/bundling_consistency.py): a load above 1 + this margin
# counts as more than the adapter sends (the study's KB and rates are rounded).
CAPACITY_MARGIN = 0.05
_TCP, _UDP = "tcp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s"


def twice_measured(published: list[Published]) -> list[tuple[Published, Published, bool]]:
    """The throughputs published twice for one configuration: 1 TCP + 1 UDP
    is the first row of Tables 5-12 and of Tables 17-24, for every L and W.
    Each pair with whether its two values agree within their tolerance
    (both ways)."""
    seen: dict[tuple[Any, ...], list[Published]] = {}
    for p in published:
        c = p.config
        if p.quantity in (_TCP, _UDP) and c["experiment"] in ("A", "B") and c["n_tcp"] == c["n_udp"] == 1:
            seen.setdefault((p.quantity, c["tcp_tsdu_kbytes"], c["tcp_window_kbytes"]), []).append(p)
    return [(a, b, bool(a.tolerance.holds(b.value, a.value) and b.tolerance.holds(a.value, b.value)))
            for _, ps in sorted(seen.items()) if len(ps) == 2 for a, b in [ps]]


def adapter_load(published: list[Published]) -> dict[tuple[Any, ...], float]:
    """Per configuration of experiments A and B with both throughputs
    published: the cells of the published rates over the adapter's cell rate
    (192 cells per 9140-byte segment, 3 per 80-byte voice datagram; KB of
    1024 bytes). Above 1 the sessions cannot have run side by side for their
    whole length, which is what the model simulates (docs/reproductions/
    bundling.md, "What the published tables allow")."""
    tcp_cells = atmlab_cells(9140, proto="tcp").cells / 9140
    udp_cells = atmlab_cells(80, proto="udp").cells / 80
    rates: dict[tuple[Any, ...], dict[str, float]] = {}
    for p in published:
        c = p.config
        if p.quantity in (_TCP, _UDP) and c["experiment"] in ("A", "B"):
            rates.setdefault(tuple(c[k] for k in KEY), {})[p.quantity] = p.value
    n_tcp, n_udp = KEY.index("n_tcp"), KEY.index("n_udp")
    return {key: (key[n_tcp] * v[_TCP] * tcp_cells + key[n_udp] * v[_UDP] * udp_cells) * KB / CELLS_PER_S
            for key, v in rates.items() if _TCP in v and _UDP in v}


def annotate_reach(published: list[Published]) -> list[Published]:
    """The published values, each noted where the tables themselves put it
    out of a simulation's reach: measured twice with values that disagree,
    or at a configuration publishing more than the adapter sends."""
    notes: dict[int, list[str]] = {}
    for a, b, agree in twice_measured(published):
        if not agree:
            for p, other in ((a, b), (b, a)):
                notes.setdefault(id(p), []).append(f"also published as {other.value:g} in {other.source}")
    loads = adapter_load(published)
    for p in published:
        load = loads.get(tuple(p.config.get(k) for k in KEY))
        if p.quantity in (_TCP, _UDP) and load is not None and load > 1 + CAPACITY_MARGIN:
            notes.setdefault(id(p), []).append(f"the configuration's published rates are {load:.2f} x the adapter's")
    return [dataclasses.replace(p, note="; ".join(filter(None, [p.note, *notes[id(p)]]))) if id(p) in notes else p
            for p in published]


def template() -> dict[str, Any]:
    """The scenario template (``scenarios/bundling/bundle.toml``)."""
    ref = resources.files("atmlab") / "scenarios" / "bundling" / "bundle.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def _grid(exp: str, net: str, tables: str, quick: bool, sweep: dict[str, list[Any]]) -> Grid:
    t = template()
    t["params"].update(NET[net])
    if quick:
        t["params"].update(QUICK)
    return Grid(f"{exp} ({net})", t, sweep, labels={"experiment": exp, "network": net, "tables": tables})


class Bundling(StudyBase):
    """The study on the reproduction kit."""

    quick_note = "--quick: 20-s sessions on a subset; not comparable with the published values."

    def grids(self, quick: bool) -> list[Grid]:
        """Experiments A-F (or the --quick subset)."""
        if quick:
            return [
                _grid("A", "WAN", "5-16", quick, {"n_tcp": [1], "n_udp": [1, 4], "tsdu": [8], "window": [16, 50]}),
                _grid("C", "WAN", "25-26", quick, {"n_tcp": [0], "n_udp": [12, 14], "tsdu": [8], "window": [50]}),
                _grid("D", "LAN", "27-35", quick, {"n_tcp": [1], "n_udp": [2], "tsdu": [8], "window": [16]}),
            ]
        return [
            _grid("A", "WAN", "1-2, 5-16", quick, {"n_tcp": [1], "n_udp": [1, 2, 3, 4, 6, 8, 12, 16],
                                                   "tsdu": list(TSDUS), "window": WINDOWS}),
            _grid("B", "WAN", "17-24", quick, {"n_udp": [1], "n_tcp": [1, 2, 3, 4, 6, 8, 10], "tsdu": list(TSDUS),
                                               "window": WINDOWS}),
            _grid("C", "WAN", "25-26", quick, {"n_tcp": [0], "n_udp": [1, 2, 3, 4, 6, 8, 10, 12, 14, 16],
                                               "tsdu": [8], "window": [50]}),
            _grid("D", "LAN", "3-4, 27-35", quick, {"n_tcp": [1], "n_udp": [1, 2, 3, 4, 6, 8, 10], "tsdu": [4, 8, 20],
                                                    "window": WINDOWS}),
            _grid("E", "LAN", "36-41", quick, {"n_udp": [1], "n_tcp": [1, 2, 3, 4, 6, 8, 10], "tsdu": [4, 8, 20],
                                               "window": WINDOWS}),
            _grid("F", "LAN", "42-43", quick, {"n_tcp": [0], "n_udp": [1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 18, 20, 26],
                                               "tsdu": [8], "window": [50]}),
        ]

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        """The experiment, network and tables of the grid, and the bundle as
        the published tables name it (L and W in KB)."""
        return {**grid.labels, "n_tcp": int(params["n_tcp"]), "n_udp": int(params["n_udp"]),
                "tcp_tsdu_kbytes": int(params["tsdu"]), "tcp_window_kbytes": int(params["window"])}

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, float]:
        """The study's metrics (s6): means over the connections of a type (KB
        of 1024 bytes), the loss rate of the voice streams, the cell
        interarrival of the timed voice stream, and the UPC's discards."""
        conns, flows = result.connections, result.udp_flows
        retransmitted = _values(conns, "retransmitted_segments")
        sent_lost = zip(_values(flows, "sent"), _values(flows, "lost"), strict=True)
        return {
            "tcp_throughput_kbytes_per_s": _mean(_kbytes(_values(conns, "transfer_throughput_bps"))),
            "udp_throughput_kbytes_per_s": _mean(_kbytes(_values(flows, "session_throughput_bps"))),
            "udp_loss_pct": _mean([100.0 * lost / sent for sent, lost in sent_lost if sent]),
            "interarrival_mean_ms": _timed_ms(flows, "interarrival_mean_s"),
            "interarrival_std_ms": _timed_ms(flows, "interarrival_std_s"),
            "upc_discarded_cells": float(sum(_values(result.upc, "discarded"))),
            "tcp_retransmitted_segments": float(sum(retransmitted)) if retransmitted else math.nan,
        }

    def published(self) -> list[Published]:
        """Tables 1-2 and 5-26: every value, at its experiment and bundle."""
        out = []
        for number, name, columns, exp in TABLES:
            for r in reference.table(f"bundling/{name}").to_dict("records"):
                config = {"experiment": exp, "n_tcp": int(r["n_tcp"]), "n_udp": int(r["n_udp"])}
                if exp != "C":  # the voice-only tables have no TCP, hence no L or W
                    config |= {"tcp_tsdu_kbytes": int(r["tcp_tsdu_kbytes"]),
                               "tcp_window_kbytes": int(r["tcp_window_kbytes"])}
                # The reference's note where it records an OCR repair (Tables 1-2 name their case of s6.1.1).
                note = r["note"] if isinstance(r["note"], str) and "OCR" in r["note"] else ""
                for column, q in columns.items():
                    unit, tolerance = COMPARED[q]
                    out.append(Published(q, float(r[column]), config, tolerance, unit=unit, source=f"Table {number}",
                                         note=note))
        return annotate_reach(out)

    def claims(self, points: pd.DataFrame) -> list[Claim]:
        return claims(points)

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
        return figures(points, comparison, folder)

    def alternatives(self) -> list[Alternative]:
        """The open choices whose alternatives the page names as keys
        (docs/reproductions/bundling.md, "Open choices"): the fits BU-11 and
        BU-12 (no host cost; study 004's 110-253 us per datagram), the
        delayed-ACK timer on Solaris's 10 ms ticks, the SBA-200's 64 KB
        transmit buffer, and Solaris 2.5's initial ssthresh of 8 MSS."""
        return [
            Alternative("BU-11", "no host costs (write_cost and rx_cpu 0, with BU-12)",
                        ('params.write_cost="0 ms"', 'params.rx_cpu="0 ms"')),
            Alternative("BU-12", "receiver 110 us per datagram (study 004's least)", ('params.rx_cpu="110 us"',)),
            Alternative("BU-12", "receiver 253 us per datagram (study 004's most)", ('params.rx_cpu="253 us"',)),
            Alternative("BU-16", "delayed ACKs on 10 ms ticks (40-50 ms)", ('tcp.delayed_ack_timer="tick_aligned"',)),
            Alternative("BU-13", "the SBA-200's 64 KB transmit buffer, blocking",
                        ('hosts[0].adapter.buffer="1236 cells"',)),
            Alternative("BU-22", "initial ssthresh 8 MSS (Solaris 2.5)", ('tcp.initial_ssthresh="73120 bytes"',)),
        ]


def _values(table: pd.DataFrame, column: str) -> list[Any]:
    """A column of a result's table as Python numbers (none if the table is empty)."""
    return table[column].tolist() if column in table.columns else []


def _kbytes(bps: list[Any]) -> list[float]:
    """Bit/s as KB/s; a transfer or session that did not finish within the
    run (no throughput) is NaN, so the mean over its bundle is too."""
    return [math.nan if b is None or pd.isna(b) else b / 8 / KB for b in bps]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _timed_ms(flows: pd.DataFrame, column: str) -> float:
    """A cell-interarrival statistic of the timed voice stream, ms."""
    if TIMED_FLOW not in flows.index or column not in flows.columns:
        return math.nan
    v = flows.at[TIMED_FLOW, column]
    return math.nan if v is None or pd.isna(v) else 1e3 * float(v)


STUDY = Bundling()


# ------------------------------------------------------------------ claims

def _at(points: pd.DataFrame, quantity: str, **config: Any) -> float | None:
    """`quantity` at the one point of `config` (None if it was not run)."""
    mask = pd.Series(True, index=points.index)
    for k, v in config.items():
        mask &= points[k] == v
    part = points.loc[mask, quantity] if quantity in points.columns else pd.Series(dtype=float)
    return float(part.iloc[0]) if len(part) == 1 else None


def claims(points: pd.DataFrame) -> list[Claim]:
    """The study's statements atmlab checks (a claim whose configurations
    were not run has no verdict)."""
    out = []
    discards = float(points["upc_discarded_cells"].sum()) if not points.empty else None
    out.append(Claim(
        "UPC", "Shaping at the source keeps the SCR: the UPC discards no cell (s2.2, s6)",
        "cells discarded by the UPC, over every configuration run", "0",
        f"{discards:.0f}" if discards is not None else None, bool(discards == 0) if discards is not None else None,
        "the study's own statement (s6: 'This ensures that the SCR is not exceeded and that cells are not "
        "discarded'); the 1594 kbit/s adapter is below the 2 Mbit/s SCR"))

    tcp = _at(points, "tcp_throughput_kbytes_per_s", experiment="A", n_udp=1, tcp_tsdu_kbytes=8, tcp_window_kbytes=50)
    out.append(Claim(
        "fluid", "With a 50 KB window one TCP bundled with one voice stream gets almost 160 KB/s on the WAN (s6.1.1)",
        "TCP throughput (KB/s), WAN, 1 TCP + 1 UDP, L 8 KB, W 50 KB",
        f"within {FLUID_TOLERANCE:.0%} of the fluid bound {FLUID_1TCP_1UDP:.1f} KB/s",
        f"{tcp:.1f}" if tcp is not None else None,
        abs(tcp - FLUID_1TCP_1UDP) <= FLUID_TOLERANCE * FLUID_1TCP_1UDP if tcp is not None else None,
        f"the fluid bound, derived from s6.1.1 and s6.1.3: ({CELLS_PER_S:.1f} cells/s of the 1594 kbit/s adapter - "
        f"{VOICE_CELLS_PER_S} cells/s of voice) / 192 cells per 9140-byte segment x 9140 bytes; "
        f"{FLUID_TOLERANCE:.0%}: atmlab's allowance for slow start and the ACK clock, which a fluid bound ignores"))

    kept, over = (_at(points, "udp_throughput_kbytes_per_s", experiment="C", n_udp=n) for n in (12, 14))
    ok = kept is not None and over is not None
    out.append(Claim(
        "voice-12", "Voice only on the WAN: the mean UDP throughput holds up to 12 streams and drops beyond "
        "(s6.1.3, Table 25)",
        "mean UDP throughput (KB/s), WAN, n UDP only, at 12 and at 14 streams",
        f">= {VOICE_KEPT} at 12, below at 14", f"{kept:.2f}, {over:.2f}" if ok else None,
        (kept >= VOICE_KEPT > over) if ok else None,
        f"s6.1.3 arithmetic: 3 cells per 80-byte TSDU, {VOICE_CELLS_PER_S} cells/s per stream; 12 x "
        f"{VOICE_CELLS_PER_S} < {CELLS_PER_S:.1f} cells/s < 13 x {VOICE_CELLS_PER_S}; {VOICE_KEPT} KB/s: the "
        f"{VOICE_KBYTES_PER_S:.2f} KB/s voice rate less 0.8 %, atmlab's reading of 'holds' (a session's start "
        "and end shift its throughput by less)"))
    return out


# ------------------------------------------------------------------ figures

def _published(points: pd.DataFrame, comparison: pd.DataFrame, quantity: str) -> pd.Series:
    """The published value of `quantity` at each point (NaN where none)."""
    out = pd.Series(math.nan, index=points.index)
    if comparison.empty:
        return out
    for r in comparison[comparison["quantity"] == quantity].to_dict("records"):
        match = pd.Series(True, index=points.index)
        for k in KEY:
            if k in r and not pd.isna(r[k]):
                match &= points[k] == r[k]
        out[match] = r["published"]
    return out


def figures(points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
    """Figures 7, 8, 13 (simulated and published, per TSDU size) and 15 (voice only, WAN and LAN)."""
    from .. import plotting

    import matplotlib.pyplot as plt

    if points.empty:
        return []
    df = points.assign(**{f"published_{q}": _published(points, comparison, q)
                          for q in ("tcp_throughput_kbytes_per_s", "udp_throughput_kbytes_per_s")})
    paths: list[Path] = []
    note = "Solid, filled: atmlab; dashed, x: published. KB = 1024 bytes (the study's)."

    def panels(exp: str, x: str, xlabel: str, metric: str, number: str, ylabel: str, title: str) -> None:
        part = df[(df["experiment"] == exp) & df[metric].notna()]
        if part.empty:
            return
        tsdus = sorted(part["tcp_tsdu_kbytes"].unique())
        windows = sorted(part["tcp_window_kbytes"].unique())
        fig, axes = plt.subplots(1, len(tsdus), figsize=(max(3.6 * len(tsdus), 6.4), 3.8), dpi=110, sharey=True,
                                 squeeze=False)
        handles: dict[str, Any] = {}
        for ax, tsdu in zip(axes[0], tsdus, strict=True):
            sub = part[part["tcp_tsdu_kbytes"] == tsdu]
            for w, g in sub.groupby("tcp_window_kbytes"):
                k = windows.index(w)
                g = g.sort_values(x)
                (line,) = ax.plot(g[x], g[metric], ms=4, **plotting.series(k))
                handles.setdefault(f"W {w:g} KB, atmlab", line)
                pub = f"published_{metric}"
                if g[pub].notna().any():
                    (line,) = ax.plot(g[x], g[pub], "x--", color=plotting.COLOURS[k], ms=6, lw=0.8)
                    handles.setdefault(f"W {w:g} KB, published", line)
            ax.set_title(f"TCP TSDU {tsdu:g} KB", fontsize=9)
            plotting.count_axis(ax.xaxis, xlabel)
            ax.grid(alpha=0.3)
        plotting.unit_axis(axes[0, 0].yaxis, ylabel, "KB/s")
        axes[0, -1].legend(handles.values(), handles.keys(), fontsize=7)
        fig.suptitle(f"Study 000 {title}", fontsize=10)
        paths.append(plotting.save(fig, folder / f"bundling_figure{number}.png", note=note))

    panels("A", "n_udp", "UDP connections n", "tcp_throughput_kbytes_per_s", "7", "TCP throughput",
           "Fig 7: WAN, 1 TCP + n UDP, TCP throughput")
    panels("A", "n_udp", "UDP connections n", "udp_throughput_kbytes_per_s", "8", "Mean UDP throughput",
           "Fig 8: WAN, 1 TCP + n UDP, UDP throughput")
    panels("B", "n_tcp", "TCP connections n", "tcp_throughput_kbytes_per_s", "13", "Mean TCP throughput",
           "Fig 13: WAN, 1 UDP + n TCP, TCP throughput")
    voice = df[df["experiment"].isin(["C", "F"])]
    if not voice.empty:
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
        for k, (exp, g) in enumerate(voice.groupby("experiment")):
            g = g.sort_values("n_udp")
            net = "WAN (C)" if exp == "C" else "LAN (F)"
            ax.plot(g["n_udp"], g["udp_throughput_kbytes_per_s"], ms=4, label=f"{net}, atmlab", **plotting.series(k))
            if g["published_udp_throughput_kbytes_per_s"].notna().any():
                ax.plot(g["n_udp"], g["published_udp_throughput_kbytes_per_s"], "x--", color=plotting.COLOURS[k],
                        label=f"{net}, published")
        ax.axhline(VOICE_KBYTES_PER_S, color="0.5", lw=0.7, ls=":")
        ax.axvline(CELLS_PER_S / VOICE_CELLS_PER_S, color="0.5", lw=0.7, ls=":")
        plotting.count_axis(ax.xaxis, "UDP (voice) connections in the bundle")
        plotting.unit_axis(ax.yaxis, "Mean UDP throughput", "KB/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.suptitle("Study 000 Fig 15: voice only on one 1594 kbit/s PVC", fontsize=10)
        paths.append(plotting.save(fig, folder / "bundling_figure15.png",
                                   note=f"Dotted: one voice stream's {VOICE_KBYTES_PER_S:.2f} KB/s, and the PVC's "
                                        f"capacity in voice streams ({CELLS_PER_S / VOICE_CELLS_PER_S:.1f}). KB = "
                                        "1024 bytes (the study's)."))
    return paths
