"""The KPN ATM pilot (van den Bergh 1995, document 004): ``atmlab reproduce kpn``.

The study measured TCP/IP and UDP/IP over AAL5 between two Sun workstations
with FORE SBA-200 adapters across KPN's ATM pilot (a GDC APEX switch with
31-cell output buffers; a PKI switch with a Police Function Board that
discards cells deterministically or polices a VBR contract). Each published
table is a *part* (``parts.Part``), run in the study's order:

* ``udp_bursts``: Table 5, UDP bursts into cells at MTU 9188 (s7.4.2);
  every printed row;
* ``fragmentation``: Table 6, UDP at MTU 48, Berkeley fragmentation
  (s7.4.3); every printed row;
* ``udp_mtu``: Table 7, UDP time against the MTU, both directions (s7.4.4),
  host model H1 (Annex A);
* ``udp_peak``: Table 8, UDP against the card's peak rate with the 64 KB
  adapter buffer losing writes (s7.4.5), host model H2;
* ``tcp_cells``: Table 9, the cells of 30e6 bytes of TCP per MTU (s7.5.2);
  the exact minimum and the measured counts;
* ``tcp_mtu``: Table 10, TCP throughput against the MTU (s7.5.4), host
  model H3;
* ``tcp_peak``: Table 11, TCP throughput against the card's peak rate
  (s7.5.5), host model H3;
* ``cell_loss``: Table C.1, TCP against the PFB's deterministic cell loss
  and the MTU (s7.5.6); withheld, the study's statements;
* ``policing``: Tables C.2 and 12, TCP through a PCR 10 / SCR 3 Mb policer
  against the burst tolerance and the MTU (s7.6.1) and against the source
  peak (s7.6.2); withheld, the study's statements.

Tables 7, 8, 10 and 11 (throughput limited by the workstations) use the
simulator's host model (per-datagram and per-cell CPU costs, the adapter's
64 KB buffer) with the study's own numbers (``testbed.H1``, ``H2_EMMA2``,
``H3``).

The testbed and the model choices shared by every part are in
:mod:`.testbed`; docs/reproductions/kpn.md has the results.
"""

from __future__ import annotations

from collections.abc import Callable


from .. import Options, Reproduction
from . import cell_loss, fragmentation, policing, tcp_cells, tcp_mtu, tcp_peak, udp_bursts, udp_mtu, udp_peak
from .parts import Part, PartResult
from .udp_bursts import BURSTS, UDPT_MAX_BURST, figure, table5, table5_scenario

PARTS: list[Part] = [udp_bursts.PART, fragmentation.PART, udp_mtu.PART, udp_peak.PART, tcp_cells.PART, tcp_mtu.PART,
                     tcp_peak.PART, cell_loss.PART, policing.PART_C2, policing.PART_12]

__all__ = ["BURSTS", "PARTS", "UDPT_MAX_BURST", "Part", "PartResult", "figure", "run", "table5", "table5_scenario"]


def run(options: Options, progress: Callable[[str], None]) -> Reproduction:
    """Every part in turn. Table 5 is printed as the main table; the other
    parts follow as further tables, with one summary line each. Runs are
    stored in ``options.db`` (Table 5's eleven exact runs excepted), so an
    interrupted reproduction resumes."""
    done: list[PartResult] = []
    for part in PARTS:
        result = part.run(options, progress)
        if result.interrupted:
            return Reproduction.stopped("KPN ATM pilot")
        done.append(result)
    main, rest = done[0], done[1:]
    extra = []
    for r in rest:
        extra.append((r.title, r.display))
        extra += r.extra
    lines = [r.summary for r in done]
    if options.quick:
        lines.append("--quick: Tables 5 and 6 in full (fewer bursts), the others on a subset of their grids.")
    return Reproduction(
        title=main.title,
        table=main.display,
        files=[f for r in done for f in r.files],
        summary="\n".join(lines),
        extra=extra,
        failures=[f for r in done for f in r.failures],
    )
