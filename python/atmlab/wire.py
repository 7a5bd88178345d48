"""What a message becomes on the wire: IP datagrams (fragments or TCP
segments) and ATM cells. The arithmetic is the core's (``atmlab_net::ip``),
the same the simulator runs; see ``docs/models/aal5.md``.

>>> import atmlab
>>> atmlab.cells(9000, mtu=48, encap="null", fragmentation="berkeley")  # doctest: +SKIP
Wire(datagrams=376, cells=751, ...)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from . import _core

Proto = Literal["udp", "tcp"]
Encap = Literal["llc_snap", "null"]
Rule = Literal["rfc791", "berkeley"]


@dataclass(frozen=True)
class Wire:
    """The datagrams and cells of one message."""

    payload: int
    proto: str
    mtu: int
    encap: str
    fragmentation: str
    datagrams: int
    cells: int
    sizes: tuple[tuple[int, int, int], ...]  # (IP bytes, how many, cells each), in sending order

    @property
    def efficiency(self) -> float:
        """User bytes over the bytes of the cells (53 each)."""
        return self.payload / (self.cells * 53) if self.cells else 0.0

    def to_dict(self) -> dict[str, object]:
        d = dict(self.__dict__)
        d["sizes"] = [{"ip_bytes": s, "count": n, "cells": c} for s, n, c in self.sizes]
        d["efficiency"] = self.efficiency
        return d


def cells(payload: int, *, proto: Proto = "udp", mtu: int = 9180, encap: Encap = "llc_snap",
          fragmentation: Rule = "rfc791") -> Wire:
    """The datagrams and cells ``payload`` bytes of user data become: one UDP
    datagram (fragmented above the MTU), or a TCP transfer in segments of
    MSS = MTU - 40 bytes (data segments only). Raises ``ValueError`` naming
    the bad argument."""
    if payload < 0:
        raise ValueError(f"payload: {payload} bytes is negative")
    raw = json.loads(_core.cells(payload, proto, mtu, encap, fragmentation))
    return Wire(payload, proto, mtu, encap, fragmentation, raw["datagrams"], raw["cells"],
                tuple((int(d["ip_bytes"]), int(d["count"]), int(d["cells"])) for d in raw["sizes"]))
