"""expert (study 002): Jaussi, Lorang, Nelissen, "A Detailed Experimental
Performance Evaluation on TCP over UBR" (ACTS EXPERT testbed, FORE ASX-200).

Four (or sixteen) greedy TCP connections share one VP-shaped port of the
ASX-200 (37.44 Mbit/s, a shared buffer of B cells with per-VC queues served
round robin), run on the template ``scenarios/expert/expert.toml`` with one
set of defaults (docs/reproductions/expert.md). The experiments
(:mod:`.configurations`):

* E1/E2/E3 (Figs 2-4, s4.1): efficiency and fairness against B, MTU 4352 and
  9180; plain UBR, PPD, EPD with b = 1, 2, 4; a loss-free reference buffer.
* E4 (Figs 5-6, s4.2): duplicate-ACK threshold 1, 3, 10; MTU 9180; EPD b = 1
  (PPD and plain UBR as sensitivity).
* E5 (Figs 7-10, s4.3): campaign II (Solaris 2.5.1 senders, Linux 2.0.25
  stretch-ACK receivers) as the four "modified TCP" switches of s5.3 at MTU
  1500, timer granularity 200 and 20 ms.
* E6 (Figs 11-13, s5.1): efficiency, FER, CLR and dead cells against b = 0..4
  (b = 0 is PPD) and plain UBR, B = 725, 1088, 1360, 2176, MTU 4352.
* E7 (Fig. 14, s5.2): 16 sources, B = 725 and 1088.
* E8 (Figs 15-16, s5.3): E6 with the modified TCP.

The study prints no tables: its prose numbers and statements (claims C1-C31,
``data/reference/expert/claims.csv``) are checked as claims
(:mod:`.claims`); the five that print a number at one configuration are also
the comparison's published values. ``--quick`` runs a few short
configurations (for CI); its numbers are not comparable with the study's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...result import Result
from ..kit import Alternative, Claim, Grid, Published, StudyBase, StudyResult
from . import claims as _claims, configurations as _configurations, figures as _figures
from .configurations import BOTTLENECK, QUICK_DURATION, SIM_BUFFERS, Config, describe

# A run's goodput of connection i, kept per run only to compute the index of
# the mean goodputs (the other reading of s3.2's index); not a column of the points.
CONNECTION_GOODPUT = "goodput_bps:"


class Expert(StudyBase):
    """The study on the reproduction kit."""

    quick_note = f"--quick: {QUICK_DURATION} runs on a subset; not comparable with the study."

    def grids(self, quick: bool) -> list[Grid]:
        return _configurations.grids(quick)

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        return describe(Config.of(grid.labels, params))

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, float]:
        """The study's metrics (s3.2) of one run. Efficiency and
        fairness are the core's (efficiency: TCP goodput over the loss-free
        goodput of the shaped VP, its rate times MSS / (53 MTU*)); FER and
        dead cells are the receivers' AAL5 counters."""
        bott = result.ports.loc[BOTTLENECK]
        conns = result.connections
        receivers = result.hosts.loc[[f"dst{i}" for i in range(int(config["n_sources"]))]]
        good, bad = int(receivers.frames_received.sum()), int(receivers.frames_discarded.sum())
        cells, dead = int(receivers.cells_received.sum()), int(receivers.dead_cells.sum())
        dropped, offered = int(bott.dropped), int(bott.cells_in)
        timeouts, fast = int(conns.timeouts.sum()), int(conns.fast_retransmits.sum())
        return {
            "efficiency": math.nan if result.efficiency is None else result.efficiency,
            "fairness": math.nan if result.fairness is None else result.fairness,
            "goodput_mbps": result.tcp_goodput_bps / 1e6,
            "clr": dropped / offered if offered else 0.0,
            "fer": bad / (good + bad) if good + bad else 0.0,
            "dead_cell_ratio": dead / cells if cells else 0.0,
            "idle_cell_ratio": 1.0 - float(bott.utilization),
            "timeouts": timeouts / len(conns),
            "fast_retransmits": fast / len(conns),
            "timeout_share": timeouts / (timeouts + fast) if timeouts + fast else math.nan,
            **{f"{CONNECTION_GOODPUT}{i}": float(g) for i, g in enumerate(conns.goodput_bps)},
        }

    def derive(self, points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
        """``fairness_of_means``: Jain's index of the connections' mean
        goodputs (the other reading of s3.2's index; ``fairness`` is the index
        per run, averaged); the
        per-connection goodputs it is computed from are not kept."""
        conn = sorted((c for c in points.columns if c.startswith(CONNECTION_GOODPUT) and not c.endswith("_ci95")),
                      key=lambda c: int(c[len(CONNECTION_GOODPUT):]))
        if not conn:
            return points
        means = points[conn].to_numpy().tolist()
        index = [jain([m for m in row if not math.isnan(m)]) for row in means]
        out = points.drop(columns=[c for c in points.columns if c.startswith(CONNECTION_GOODPUT)])
        at = list(out.columns).index("fairness_ci95") + 1 if "fairness_ci95" in out else len(out.columns)
        out.insert(at, "fairness_of_means", index)
        return out

    def published(self) -> list[Published]:
        return _claims.published()

    def claims(self, points: pd.DataFrame) -> list[Claim]:
        return _claims.claims(points)

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> list[Path]:
        return _figures.figures(points, folder) if not points.empty else []

    def alternatives(self) -> list[Alternative]:
        """The open choices whose alternatives the page names as keys of the
        template (docs/reproductions/expert.md, "Open choices"). The
        modified-TCP grids already reset the backoff on an RTT sample, so
        EX-21 changes only the default TCP's. EX-9 (PPD's end-of-frame cell)
        is a key of the PPD policy only, which the other grids' policies
        refuse: it cannot be set on every grid's scenario."""
        return [
            Alternative("EX-19", "both timers exactly when due", ('tcp.delayed_ack_timer="exact"',)),
            Alternative("EX-19", "both timers on each host's own ticks", ('tcp.rto_timer="host_ticks"',)),
            Alternative("EX-18", "initial RTO 6 s", ('tcp.initial_rto="6 s"',)),
            Alternative("EX-21", "backoff reset by a valid RTT sample (Karn)", ('tcp.backoff_reset="rtt_sample"',)),
            Alternative("EX-3", "ttcp's 16 KiB writes into a 52224-byte send buffer",
                        ('tcp.send_buffer="52224 bytes"', 'tcp.write_size="16 KiB"')),
            Alternative("EX-27", "link clocks +/-20 ppm", ("simulation.clock_tolerance_ppm=20",)),
        ]

    def views(self, result: StudyResult) -> list[tuple[str, pd.DataFrame]]:
        """The E1/E3 efficiency against B (Figs 2-4) and the E6 efficiency
        against b (Fig. 11), MTU 4352; the study's configurations not run."""
        points = result.points
        out = []
        if not points.empty:
            out += [("E1/E3 efficiency, MTU 4352 (rows: buffer, cells)", policy_pivot(points, 4352)),
                    ("E6 (Fig. 11) efficiency against b, MTU 4352 (rows: buffer, cells)", b_pivot(points))]
        skipped = pd.DataFrame([describe(c) for c in _configurations.skipped()])
        out.append(("the study's configurations not run: EPD threshold below one cell (skipped, not clamped)",
                    skipped[["experiments", "mtu_bytes", "buffer_cells", "policy", "b", "epd_threshold_cells"]]))
        return out


def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index."""
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else math.nan


def policy_pivot(points: pd.DataFrame, mtu: int) -> pd.DataFrame:
    """Efficiency by buffer (rows) and policy (columns), 4 sources, default TCP."""
    part = _figures.labelled(_figures.default_tcp(points, mtu))
    if part.empty:
        return pd.DataFrame()
    out = part.pivot_table(index="buffer_cells", columns="label", values="efficiency", sort=False)
    out = out[[c for c in _figures.STYLE if c in out.columns]]
    return out.reset_index().rename(columns={"buffer_cells": "buffer"}).round(3)


def b_pivot(points: pd.DataFrame) -> pd.DataFrame:
    """Efficiency by buffer (rows) and b (columns, 0 = PPD), E6."""
    part = _figures.default_tcp(points, 4352)
    part = part[part.buffer_cells.isin(SIM_BUFFERS) & part.policy.isin(["PPD", "EPD"])]
    if part.empty:
        return pd.DataFrame()
    out = part.pivot_table(index="buffer_cells", columns="b", values="efficiency")
    out.columns = [f"b={int(c)}" for c in out.columns]
    return out.reset_index().rename(columns={"buffer_cells": "buffer"}).round(3)


STUDY = Expert()
