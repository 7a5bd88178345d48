"""The KPN pilot testbed as scenarios (van den Bergh 1995, s7.3, Figs 20, 22, 32).

Every table of the reproduction builds its scenarios here, so the whole study
runs on one set of model choices (docs/reproductions/kpn.md):

* hosts EMMA1 and EMMA2: Classical IP over AAL5 without LLC/SNAP
  (``encapsulation = "null"``, 36 bytes of UDP overhead, s7.4.2), MTU 9188 by
  default, FORE SBA-200 adapters on 100 Mbit/s TAXI links;
* the GDC APEX switch: one 31-cell FIFO output buffer per port (C-series
  cards, s7.3.4);
* the experiments with the Police Function Board (PFB) also cross the PKI
  switch over a 155.52 Mbit/s link (Fig 32). The real path goes GDC -> PKI ->
  GDC; atmlab's VCs may not visit a switch twice, so the hairpin is folded:
  the data leave the GDC toward the PKI, the PFB acts on the cells entering
  the PKI, and the PKI's 31-cell port toward the receiver stands for the
  GDC's port toward it. Propagation delays are microseconds (one room); the
  round trip of about 1 ms the study quotes (s7.5.6) is host time, which is
  not modelled here;
* TCP as the EMMAs' "Berkeley implementation (Sun TCP/IP sources)"
  (s7.4.3; s5.5, s7.5.3): window 50000 bytes, MSS = MTU - 40, initial
  ssthresh 65535, the retransmission timer of 4.3BSD-Tahoe, the Berkeley
  release of SunOS 4's era (``rto_algorithm = "bsd43_tahoe"``: BSD's
  integer estimator with RTO = srtt + 2 rttvar on the 500 ms slow timer,
  tick-aligned expiry, the two-tick floor ``TCPTV_MIN``, 6 s before the
  first sample; docs/models/tcp.md), 200 ms delayed ACKs, no fast
  retransmit (``vanilla``; the study's ~1 s per lost segment needs timeout
  recovery, see :mod:`.cell_loss`). On the testbed's sub-tick round trip
  Tahoe's RTO settles at that floor: a lost segment costs 0.5-1 s of timer,
  the "about 0.9 to 1 second" of s7.5.6 (4.3BSD-Reno's and 4.4BSD's srtt +
  4 rttvar settles at 3 ticks, 1-1.5 s).

Host processing (per-datagram and per-cell costs, the adapter's 64 KB
buffer, docs/models/hosts.md) is the study's own, one set per host and
protocol (Annex A, s7.4.5, s7.5.4; H2 fitted to Table 8), wherever the
same hosts run the same protocol: every TCP table (9, 10, 11, C.1, C.2, 12)
uses H3 on both hosts (:func:`tcp_hosts`); the UDP tables 7 and 8 use H1
and H2.
Tables 5 and 6 count the cells of single bursts, which no host cost
changes, and run without it:

* ``H1`` (UDP, Table 7): Annex A's interdatagram gap T_d and the per-cell
  time 4.24 us + T_c: EMMA2 (SPARCstation 20) 90 us and 4.303 us (98.6
  Mbit/s of cells), EMMA1 (SPARCstation 10) 110 us and 424 / 70.8e6 s =
  5.989 us (70.8 Mbit/s);
* ``H2`` (UDP through a shaped card, Table 8, EMMA2): each ``udpt`` write
  costs c_a = 396 us whether or not it fits the SBA-200's 64 KB buffer
  (``per_datagram``), one that fits c_x = 413 us more (``per_cell`` = c_x /
  172 cells = 2.401 us); a write that does not fit is lost (``overflow =
  "drop"``). c_a and c_x are one least-squares fit of T = N_gen c_a +
  N_sent c_x over Table 8 (derived in docs/reproductions/kpn.md, "The host
  model"; c_a + c_x = 809 us per 172-cell datagram, H1's EMMA2 gives 830
  us);
* ``H3`` (TCP, Tables 10 and 11, both hosts, data and ACKs): s7.5.4's T_d =
  253 us and 4.24 us + T_c = 4.24 + 3.5 = 7.74 us per cell;
* the SBA-200's 64 KB transmit buffer is ``SBA200_BUFFER`` = 1236 cells
  (65536 / 53), ``overflow = "drop"`` (s7.4.5: writes that do not fit are
  lost before atmstat counts them); in Tables 10 and 11 the 50000-byte
  window keeps at most 1166 cells outstanding, so it never overflows.

No receive costs: the study names none, and the receiver is never the
limit in Annex A's account.
"""

from __future__ import annotations

import copy
from typing import Any

TAXI = "100 Mbit/s"  # the SBA-200 / GIA-100 TAXI interface (s7.3.2-7.3.3)
OC3 = "155.52 Mbit/s"  # GDC <-> PKI (s7.3.1)
DELAY = "5 us"  # a room, not a WAN
GDC_BUFFER = "31 cells"  # C-series output buffer (s7.3.4)
MTU = 9188  # RFC 1577 default used by the study (s7.4.2)
MTUS = [9188, 8192, 4096, 2048, 1024, 512]  # s7.4.4, s7.5.4, s7.5.6, s7.6.1

# The host models of Tables 7, 8, 10, 11 (module docs; docs/reproductions/kpn.md).
H1: dict[str, dict[str, str]] = {
    "emma2": {"per_datagram": "90 us", "per_cell": "4.303 us"},  # T_d 90 us, 4.24 us + T_c 63 ns
    "emma1": {"per_datagram": "110 us", "per_cell": f"{424 / 70.8:.6f} us"},  # T_d 110 us, 70.8 Mbit/s of cells
}
H2_EMMA2: dict[str, str] = {"per_datagram": "396 us", "per_cell": f"{413 / 172:.6f} us"}  # c_a, c_x / 172
H3: dict[str, str] = {"per_datagram": "253 us", "per_cell": "7.74 us"}  # T_d 253 us, 4.24 us + T_c 3.5 us
SBA200_BUFFER = "1236 cells"  # 64 KB = 65536 / 53 cells (s7.4.5)
DIRECTIONS = {"EMMA2 -> EMMA1": ("emma2", "emma1"), "EMMA1 -> EMMA2": ("emma1", "emma2")}


def us(value: str) -> float:
    """``"4.303 us"`` in seconds (the host-model constants above)."""
    number, unit = value.split()
    assert unit == "us", value
    return float(number) * 1e-6


def serial_time(cpu: dict[str, str], datagrams: int, cells: int) -> float:
    """The study's serial sender (Annex A): T = dg T_d + cells per_cell, s."""
    return datagrams * us(cpu["per_datagram"]) + cells * us(cpu["per_cell"])


# TCP of the EMMA workstations ("Berkeley implementation (Sun TCP/IP sources)", s7.4.3).
TCP: dict[str, Any] = {
    "variant": "vanilla",
    "window": "50000 bytes",  # "set maximal (50000 bytes)" (s7.5.3)
    "initial_ssthresh": "65535 bytes",  # s5.5.2
    "rto_algorithm": "bsd43_tahoe",  # srtt + 2 rttvar (docs/models/tcp.md)
    "timer_tick": "500 ms",  # BSD slow timer
    "rto_timer": "tick_aligned",
    "min_rto": "1 s",  # two ticks (BSD TCPTV_MIN)
    "delayed_ack": True,
    "delayed_ack_timeout": "200 ms",  # BSD fast timer
    "delayed_ack_timer": "tick_aligned",
}


def host(name: str, mtu: Any = MTU, **extra: Any) -> dict[str, Any]:
    return {"name": name, "mtu": mtu if isinstance(mtu, str) else f"{mtu} bytes", "encapsulation": "null", **extra}


def tcp_hosts(src: str, dst: str, mtu: Any = MTU, peak: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ends of a ttcp run: H3 and the SBA-200 buffer on both
    (data and ACKs); ``peak`` is the card setting (both cards, as the study
    set them)."""
    adapter: dict[str, Any] = {"buffer": SBA200_BUFFER, "overflow": "drop"}
    if peak is not None:
        adapter["peak"] = peak
    return (host(src, mtu, cpu=dict(H3), adapter=dict(adapter)),
            host(dst, mtu, cpu=dict(H3), adapter=dict(adapter)))


def direct(name: str, src: dict[str, Any], dst: dict[str, Any], apps: list[dict[str, Any]],
           duration: str, vc: dict[str, Any] | None = None) -> dict[str, Any]:
    """``src`` -> GDC -> ``dst`` on 100 Mbit/s TAXI links, VP 0 VC 32 (Fig 22)."""
    link = {"rate": TAXI, "delay": DELAY}
    return {
        "name": name,
        "simulation": {"duration": duration},
        "tcp": copy.deepcopy(TCP),
        "hosts": [src, dst],
        "switches": [{"name": "gdc", "port": {"buffer": GDC_BUFFER}}],
        "links": [{"between": [src["name"], "gdc"], **link}, {"between": ["gdc", dst["name"]], **link}],
        "vcs": [{"name": "vc32", "path": [src["name"], "gdc", dst["name"]], "label": "0/32", **(vc or {})}],
        "apps": apps,
    }


def via_pki(name: str, src: dict[str, Any], dst: dict[str, Any], apps: list[dict[str, Any]], duration: str,
            pfb_loss: dict[str, Any] | None = None, vc: dict[str, Any] | None = None) -> dict[str, Any]:
    """``src`` -> GDC -> PKI (Police Function Board) -> ``dst`` (Fig 32, the
    hairpin folded: see the module docs). ``pfb_loss`` is the deterministic
    loss on the cells entering the PKI; ``vc`` adds keys to the VC (a
    contract and ``upc = {at = "pki"}``)."""
    taxi = {"rate": TAXI, "delay": DELAY}
    pfb = {"between": ["gdc", "pki"], "rate": OC3, "delay": DELAY}
    if pfb_loss is not None:
        pfb["loss"] = pfb_loss
    return {
        "name": name,
        "simulation": {"duration": duration},
        "tcp": copy.deepcopy(TCP),
        "hosts": [src, dst],
        "switches": [{"name": "gdc", "port": {"buffer": GDC_BUFFER}}, {"name": "pki", "port": {"buffer": GDC_BUFFER}}],
        "links": [{"between": [src["name"], "gdc"], **taxi}, pfb, {"between": ["pki", dst["name"]], **taxi}],
        "vcs": [{"name": "vc32", "path": [src["name"], "gdc", "pki", dst["name"]], "label": "0/32", **(vc or {})}],
        "apps": apps,
    }


def ttcp(nbytes: Any) -> dict[str, Any]:
    """``ttcp -t -s -n N -l 50000``: N x 50000 bytes as fast as TCP allows."""
    return {"kind": "tcp_bulk", "name": "ttcp", "vc": "vc32", "bytes": nbytes}
