"""The configurations of the EXPERT study: what one point is (:class:`Config`),
the experiments E1-E8 (docs/reproductions/expert.md, "The experiments"), and
the grids the kit runs.

Every point is one template, ``scenarios/expert/expert.toml``, with its
parameters filled in (``n``, ``mtu``, ``buffer``, ``b``, ``dupack``,
``timer``); the drop policy (plain UBR, PPD, EPD) and the TCP profile
(default, or the four "modified TCP" switches of s5.3) pick one of a few
fixed overrides of the template: a *family*. The kit runs one grid per
family, a zip of the swept parameters of its members.

MTU* (the cells of a full frame) is the core's arithmetic, as the scenario's
``frame_cells = "auto"`` is: :func:`frame_cells` asks ``atmlab.cells`` for
the cells of one full TCP segment.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ... import quantity
from ...scenario import load
from ...wire import cells
from ..kit import Grid

# 725, 1088, 1360, 2176: named in s4.1-s5.2; 363, 544, 906, 1632: atmlab's fill-in.
BUFFERS = (363, 544, 725, 906, 1088, 1360, 1632, 2176)
LOSS_FREE = 8192  # > 4 windows of 1092 cells: no loss
SIM_BUFFERS = (725, 1088, 1360, 2176)  # s5.2 names 725 and 1088; the others atmlab's
CAMPAIGN2_BUFFERS = (725, 1088, 2176)  # Fig. 10 (s4.3) is at 725; the others atmlab's
MTUS = (4352, 9180)  # campaign I; campaign II runs 1500
BOTTLENECK = "sw0->sw1"  # the shaped VP of the ASX-200
QUICK_DURATION = "5 s"

# The four switches of s5.3 (docs/models/tcp.md "Options of the measured stacks"),
# also used for campaign II's hosts (s5.3 models the s4.3 stacks with them).
MODIFIED_TCP = {
    "backoff_reset": "rtt_sample",  # (1) backoff held until every retransmission is acknowledged
    "stretch_ack": "4 ms",  # (2) ACK only when a 4 ms timer fires
    "freeze_window_in_fast_recovery": True,  # (3) no window growth until the fast retransmission is ACKed
    "keep_dupacks_on_timeout": True,  # (4) the duplicate-ACK count survives a timeout
}
POLICY_TABLES = {
    "ubr": {"kind": "tail_drop"},
    "ppd": {"kind": "ppd", "keep_end_of_frame": True},
    # "epd": the template's own (excess_frames = b, frame_cells = "auto", ">", EOM kept)
}
POLICY_NAMES = {"ubr": "UBR", "ppd": "PPD", "epd": "EPD"}
POLICY_KEYS = {v: k for k, v in POLICY_NAMES.items()}


@functools.cache
def frame_cells(mtu: int) -> int:
    """MTU*: the cells of a full-sized frame (one TCP segment of MSS = MTU - 40
    bytes, LLC/SNAP, AAL5), by the core's arithmetic: (MTU + 16) / 48 cells,
    rounded up (32, 91, 192 at MTU 1500, 4352, 9180)."""
    return cells(mtu - 40, proto="tcp", mtu=mtu).cells


@dataclass(frozen=True)
class Config:
    """One configuration: the swept parameters and the two families (drop
    policy, TCP profile) that pick the template's overrides."""

    n: int = 4
    mtu: int = 4352
    buffer: int = 1088
    policy: str = "epd"  # ubr (tail drop), ppd, epd
    b: int = 1  # EPD excess capacity, frames (0 for UBR and PPD)
    dupack: int = 3
    timer_ms: int = 200
    tcp: str = "default"  # or "modified" (s5.3's four switches; campaign II)

    def canonical(self) -> Config:
        """b = 0 is PPD (s3.2; checked bit for bit by the tests); UBR and PPD carry b = 0."""
        if self.policy != "epd":
            return replace(self, b=0)
        return replace(self, policy="ppd") if self.b == 0 else self

    @property
    def threshold(self) -> int | None:
        """EPDth = B - b MTU* (cells), EPD only."""
        return self.buffer - self.b * frame_cells(self.mtu) if self.policy == "epd" else None

    @property
    def feasible(self) -> bool:
        """An EPD threshold below one cell cannot be set: such points are skipped
        (atmlab's choice; docs/reproductions/expert.md)."""
        t = self.threshold
        return t is None or t >= 1

    @property
    def label(self) -> str:
        return f"EPD b={self.b}" if self.policy == "epd" else POLICY_NAMES[self.policy]

    @property
    def family(self) -> tuple[str, str]:
        return (self.policy, self.tcp)

    def params(self) -> dict[str, Any]:
        """The template's parameters, as written in the sweep."""
        p: dict[str, Any] = {"n": self.n, "mtu": self.mtu, "buffer": self.buffer, "dupack": self.dupack,
                             "timer": f"{self.timer_ms} ms"}
        if self.policy == "epd":
            p |= {"b": self.b}
        return p

    @classmethod
    def of(cls, family: Mapping[str, Any], params: Mapping[str, Any]) -> Config:
        """The configuration of a grid's point: its family (the grid's labels)
        and its parameters (typed by :mod:`atmlab.quantity`)."""
        p = quantity.typed(dict(params))
        return cls(n=int(p["n"]), mtu=int(p["mtu"]), buffer=int(p["buffer"]), policy=family["policy"],
                   b=int(p.get("b", 0)), dupack=int(p["dupack"]), timer_ms=round(p["timer"].value * 1000),
                   tcp=family["tcp"])


UBR, PPD = {"policy": "ubr", "b": 0}, {"policy": "ppd", "b": 0}


def EPD(b: int) -> dict[str, Any]:  # noqa: N802 (reads like the study's "EPD b=1")
    return {"policy": "epd", "b": b}


POLICIES = (UBR, PPD, EPD(1), EPD(2), EPD(4))  # Figs 2-4
B_AXIS = (PPD, EPD(1), EPD(2), EPD(3), EPD(4))  # b = 0..4 (Figs 11, 14, 15)


def experiments(quick: bool = False) -> dict[str, list[Config]]:
    """The configurations of each experiment (docs/reproductions/expert.md),
    infeasible ones included."""
    if quick:
        return {
            "E1": [Config(buffer=LOSS_FREE, **UBR)] + [Config(buffer=725, **p) for p in (UBR, PPD, EPD(1))]
                  + [Config(buffer=1088, **EPD(1))],
            "E3": [Config(mtu=9180, buffer=725, **EPD(4)), Config(mtu=9180, buffer=1088, **EPD(1))],
            "E4": [Config(mtu=9180, buffer=1088, dupack=d, **EPD(1)) for d in (1, 3, 10)],
            "E5": [Config(tcp="modified", mtu=1500, buffer=725, timer_ms=t, **EPD(1)) for t in (200, 20)],
            "E6": [Config(buffer=725, **p) for p in (UBR, PPD, EPD(2))],
            "E7": [Config(n=16, buffer=725, **p) for p in (PPD, EPD(2))],
            "E8": [Config(tcp="modified", buffer=725, **p) for p in (PPD, EPD(2))],
        }
    ref = [Config(mtu=m, buffer=LOSS_FREE, **UBR) for m in MTUS]
    return {
        "E1": [Config(mtu=4352, buffer=bf, **p) for bf in BUFFERS for p in POLICIES[:3]] + ref[:1],
        "E2": [Config(mtu=9180, buffer=bf, **p) for bf in BUFFERS for p in POLICIES[:3]] + ref[1:],
        "E3": [Config(mtu=m, buffer=bf, **p) for m in MTUS for bf in BUFFERS for p in POLICIES] + ref,
        "E4": [Config(mtu=9180, buffer=bf, dupack=d, **p) for d in (1, 3, 10) for bf in BUFFERS
               for p in (EPD(1), PPD, UBR)],
        "E5": [Config(tcp="modified", mtu=1500, buffer=bf, timer_ms=t, **p) for t in (200, 20)
               for bf in CAMPAIGN2_BUFFERS for p in (UBR, PPD, EPD(1), EPD(2), EPD(4))]
              + [Config(tcp="modified", mtu=1500, buffer=bf, timer_ms=t, **EPD(1)) for t in (200, 20)
                 for bf in BUFFERS],
        "E6": [Config(buffer=bf, **p) for bf in SIM_BUFFERS for p in (UBR, *B_AXIS)],
        "E7": [Config(n=16, buffer=bf, **p) for bf in (725, 1088) for p in (UBR, *B_AXIS)],
        "E8": [Config(tcp="modified", buffer=bf, **p) for bf in SIM_BUFFERS for p in (UBR, *B_AXIS)],
    }


@functools.cache
def configurations(quick: bool = False) -> dict[Config, tuple[str, ...]]:
    """Every distinct (canonical) configuration and the experiments it belongs to, in order."""
    out: dict[Config, list[str]] = {}
    for exp, configs in experiments(quick).items():
        for c in configs:
            tags = out.setdefault(c.canonical(), [])
            if exp not in tags:
                tags.append(exp)
    return {c: tuple(tags) for c, tags in out.items()}


def runnable(quick: bool = False) -> list[Config]:
    """The configurations that are run: the feasible ones."""
    return [c for c in configurations(quick) if c.feasible]


def skipped(quick: bool = False) -> list[Config]:
    """The configurations of the study's grid that cannot be set (EPDth < 1 cell)."""
    return [c for c in configurations(quick) if not c.feasible]


def experiments_of(config: Config) -> str:
    """The experiments of the study (its full grid) a configuration belongs to, e.g. ``"E1 E3 E6"``."""
    return " ".join(configurations(False).get(config.canonical(), ()))


# ------------------------------------------------------------------ scenarios

def template() -> dict[str, Any]:
    ref = resources.files("atmlab") / "scenarios" / "expert" / "expert.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def family_template(policy: str, tcp: str) -> dict[str, Any]:
    """The template with the family's drop policy and TCP profile."""
    t = template()
    if policy in POLICY_TABLES:
        t["switches"][0]["port_to"]["sw1"]["drop_policy"] = copy.deepcopy(POLICY_TABLES[policy])
    if tcp == "modified":
        t["tcp"].update(MODIFIED_TCP)
    return t


def scenario(config: Config, duration: str | None = None) -> dict[str, Any]:
    """A single configuration as a runnable template (``atmlab.run(scenario(c), seed=1)``).
    Not canonicalised: ``Config(policy="epd", b=0)`` gives EPD with EPDth = B."""
    t = family_template(config.policy, config.tcp)
    t["params"].update(config.params())
    if duration:
        t["simulation"]["duration"] = duration
    return t


def grids(quick: bool = False) -> list[Grid]:
    """One grid per family over its feasible configurations (a zip of every
    swept parameter); the family is the grid's labels."""
    families: dict[tuple[str, str], list[Config]] = {}
    for c in runnable(quick):
        families.setdefault(c.family, []).append(c)
    out = []
    for (policy, tcp), members in families.items():
        keys = list(members[0].params())
        sweep = {"zip": {"configuration": {k: [m.params()[k] for m in members] for k in keys}}}
        out.append(Grid(f"{POLICY_NAMES[policy]}, {tcp} TCP", family_template(policy, tcp), sweep,
                        labels={"policy": policy, "tcp": tcp}, duration=QUICK_DURATION if quick else None))
    return out


def describe(config: Config) -> dict[str, Any]:
    """The configuration columns of a point, as the study's tables name them."""
    return {
        "experiments": experiments_of(config),
        "tcp": config.tcp,
        "n_sources": config.n,
        "mtu_bytes": config.mtu,
        "frame_cells": frame_cells(config.mtu),
        "buffer_cells": config.buffer,
        "policy": POLICY_NAMES[config.policy],
        "b": config.b if config.policy == "epd" else (0 if config.policy == "ppd" else float("nan")),
        "epd_threshold_cells": config.threshold if config.policy == "epd" else float("nan"),
        "dupack_threshold": config.dupack,
        "timer_ms": config.timer_ms,
    }


def config_of(row: Mapping[str, Any]) -> Config:
    """The configuration of a row of the points (the inverse of :func:`describe`)."""
    policy = POLICY_KEYS[row["policy"]]
    return Config(n=int(row["n_sources"]), mtu=int(row["mtu_bytes"]), buffer=int(row["buffer_cells"]),
                  policy=policy, b=int(row["b"]) if policy == "epd" else 0, dupack=int(row["dupack_threshold"]),
                  timer_ms=int(row["timer_ms"]), tcp=str(row["tcp"]))
