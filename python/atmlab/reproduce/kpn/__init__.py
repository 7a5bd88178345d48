"""The KPN ATM pilot (van den Bergh 1995, document 004): ``atmlab reproduce kpn``.

The study measured TCP/IP and UDP/IP over AAL5 between two Sun workstations
with FORE SBA-200 adapters across KPN's ATM pilot (a GDC APEX switch with
31-cell output buffers; a PKI switch with a Police Function Board that
discards cells deterministically or polices a VBR contract). Every table is
a set of grids of the reproduction kit (:mod:`atmlab.reproduce.kit`), one
module per experiment, in the study's order:

* :mod:`.bursts`: Tables 5 and 6, UDP bursts into cells at MTU 9188 and 48
  (Berkeley fragmentation; s7.4.2, s7.4.3); every printed count, exactly;
* :mod:`.udp_mtu`: Table 7, UDP time against the MTU, both directions
  (s7.4.4), host model H1 (Annex A);
* :mod:`.udp_peak`: Table 8, UDP against the card's peak rate with the 64 KB
  adapter buffer losing writes (s7.4.5), host model H2;
* :mod:`.tcp_cells`: Table 9, the cells of 30e6 bytes of TCP per MTU
  (s7.5.2) against the measured counts and the exact minimum;
* :mod:`.tcp_throughput`: Tables 10 and 11, TCP throughput against the MTU
  and the card's peak rate (s7.5.4, s7.5.5), host model H3;
* :mod:`.cell_loss`: Table C.1, TCP against the PFB's deterministic cell
  loss and the MTU (s7.5.6); withheld, the study's statements;
* :mod:`.policing`: Tables C.2 and 12, TCP through a PCR 10 / SCR 3 Mb
  policer against the burst tolerance and the MTU (s7.6.1) and against the
  source peak (s7.6.2); withheld, the study's statements.

Each module gives its grids, its published values (with their tolerances)
and its figures, and where it needs them the columns it derives from the
points, its claims and the tables it prints. A run is measured the same way
in every table (:func:`.common.measure`: a udpt run or a ttcp run); the
points carry one configuration column set (:data:`.common.CONFIG`), the
``table`` column saying which published table a point belongs to. The
testbed and the model choices shared by every table are in :mod:`.testbed`;
docs/reproductions/kpn.md has the results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...result import Result
from ..kit import Alternative, Claim, Grid, Published, StudyBase, StudyResult
from . import bursts, cell_loss, common, policing, tcp_cells, tcp_throughput, udp_mtu, udp_peak

TABLES = (bursts, udp_mtu, udp_peak, tcp_cells, tcp_throughput, cell_loss, policing)

__all__ = ["STUDY", "TABLES", "Kpn"]


class Kpn(StudyBase):
    """The study on the reproduction kit: the tables' modules put together."""

    quick_note = ("--quick: Tables 5 and 6 in full with 10 bursts per size (counts per burst, comparable), the "
                  "others on a subset of their grids.")

    def grids(self, quick: bool) -> list[Grid]:
        return [g for m in TABLES for g in m.grids(quick)]

    def configuration(self, grid: Grid, params: Mapping[str, Any]) -> dict[str, Any]:
        return common.configuration(grid, params)

    def measure(self, result: Result, config: Mapping[str, Any]) -> dict[str, Any]:
        return common.measure(result, config)

    def derive(self, points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
        if points.empty:
            return points
        points = points.copy()
        for m in TABLES:
            if hasattr(m, "derive"):
                points = m.derive(points)
        return points

    def published(self) -> list[Published]:
        return [p for m in TABLES if hasattr(m, "published") for p in m.published()]

    def claims(self, points: pd.DataFrame) -> list[Claim]:
        if points.empty:
            return []
        return [c for m in TABLES if hasattr(m, "claims") for c in m.claims(points)]

    def figures(self, points: pd.DataFrame, comparison: pd.DataFrame, folder: Path) -> Sequence[Path]:
        if points.empty:
            return []
        return [f for m in TABLES for f in m.figures(points, comparison, folder)]

    def views(self, result: StudyResult) -> list[tuple[str, pd.DataFrame]]:
        if result.points.empty:
            return []
        views = [v for m in TABLES if hasattr(m, "views") for v in m.views(result.points)]
        return [(title, common.whole(table)) for title, table in views]

    def alternatives(self) -> list[Alternative]:
        """The open choices whose alternatives the page names and a key of
        every grid's built scenario sets (docs/reproductions/kpn.md, "Open
        choices"): the fits KP-7 and KP-8, and ttcp's writes through the
        socket send path (KP-12). The scenarios without TCP (Tables 5-8) get
        a TCP table they do not use. KP-15 (H2 against H1) and KP-19 (the
        card's peak as a payload rate) are settings of some grids' hosts
        only: no key of every grid."""
        return [
            Alternative("KP-7", "Reno: fast retransmit and recovery (the text's)", ('tcp.variant="reno"',)),
            Alternative("KP-7", "Tahoe: fast retransmit", ('tcp.variant="tahoe"',)),
            Alternative("KP-8", "4.4BSD-Lite's timer (srtt + 4 rttvar)", ('tcp.rto_algorithm="bsd44_lite"',)),
            Alternative("KP-12", "ttcp's 50000-byte writes through a 50000-byte send buffer",
                        ('tcp.send_buffer="50000 bytes"', 'tcp.write_size="50000 bytes"')),
        ]


STUDY = Kpn()
