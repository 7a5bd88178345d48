"""Max-min fair rates by progressive filling: an oracle for ABR.

Independent of the simulator: nothing here runs or asks the core. Given a
network (link directions with capacities, the higher-priority load on each,
a target utilisation, and the VCs, each crossing an ordered list of link
directions with a demand limit), :func:`max_min` computes each VC's max-min
fair rate by progressive filling (Bertsekas & Gallager, *Data Networks*,
2nd ed. 1992, s6.5.2), exactly, in :class:`fractions.Fraction` cells per
second. :func:`describe` derives that network from an atmlab scenario (the
expanded data of :func:`atmlab.load`), and :func:`scenario_max_min` does
both. What it reads and what it assumes: ``docs/models/maxmin.md``.

A rate here is a cell rate of the ATM layer: cells per second, RM cells
included, what an ABR source's ACR counts. In bit/s it is cells/s x 424
(53-byte cells), the way atmlab writes every rate (``Allocation.bps``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

__all__ = [
    "CELL_BITS", "Link", "Vc", "Network", "Allocation", "OracleError",
    "max_min", "describe", "scenario_max_min", "parse_rate", "parse_time", "parse_bytes",
]

CELL_BITS = 424  # a 53-byte cell

Number = int | Fraction


class OracleError(ValueError):
    """A network or scenario the oracle cannot describe; the message says
    where (the scenario's key path, with the file) and why."""


@dataclass(frozen=True)
class Link:
    """One direction of a link, as the ABR VCs crossing it see it.

    ``capacity``: cells/s; ``hp_load``: the cells/s of higher-priority
    (CBR, VBR) traffic on it; ``target``: the target utilisation U. The
    capacity the ABR VCs share is ``max(0, U x capacity - hp_load)``, as
    ERICA computes its target ABR capacity (``docs/models/abr.md``).
    """

    name: str
    capacity: Fraction
    hp_load: Fraction = Fraction(0)
    target: Fraction = Fraction(1)

    @property
    def available(self) -> Fraction:
        return max(Fraction(0), self.target * self.capacity - self.hp_load)


@dataclass(frozen=True)
class Vc:
    """A VC: the names of the link directions it crosses, in order, and its
    demand (cells/s; ``None``: it takes whatever it is given)."""

    name: str
    links: tuple[str, ...]
    demand: Fraction | None = None


@dataclass(frozen=True)
class Network:
    """Links and VCs, as :func:`max_min` takes them; ``notes`` says where
    each number came from (filled by :func:`describe`)."""

    links: tuple[Link, ...]
    vcs: tuple[Vc, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Allocation:
    """The max-min fair allocation.

    ``rates``: VC name -> cells/s. ``bottleneck``: VC name -> the link
    direction that froze it (saturated, and no VC on it has a larger
    rate), or ``None`` when the VC's own demand limits it. ``order``: the
    levels of progressive filling, each with the VCs frozen there.
    """

    rates: dict[str, Fraction]
    bottleneck: dict[str, str | None]
    load: dict[str, Fraction]  # link name -> sum of the rates of the VCs on it
    available: dict[str, Fraction]  # link name -> the capacity the VCs share
    order: tuple[tuple[Fraction, tuple[str, ...]], ...] = field(default=())
    notes: tuple[str, ...] = ()

    def bps(self, vc: str) -> Fraction:
        """The VC's rate in bit/s of 53-byte cells."""
        return self.rates[vc] * CELL_BITS

    def saturated(self, link: str) -> bool:
        return self.load[link] == self.available[link]

    def table(self) -> list[dict[str, Any]]:
        """One row per VC: name, cells/s, bit/s (floats), bottleneck."""
        return [{"vc": v, "cells_per_s": float(r), "bps": float(r * CELL_BITS),
                 "bottleneck": self.bottleneck[v] or "demand"} for v, r in self.rates.items()]


def _frac(x: Any, what: str) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, Fraction, Decimal, float, str)):
        raise OracleError(f"{what}: {x!r} is not a number")
    try:
        f = Fraction(x)
    except (ValueError, ZeroDivisionError) as e:
        raise OracleError(f"{what}: {x!r} is not a finite number ({e})") from None
    return f


def max_min(links: Iterable[Link], vcs: Iterable[Vc]) -> Allocation:
    """The max-min fair rates of `vcs` on `links`, by progressive filling.

    Every VC not yet frozen has the same rate, the current level. The next
    level is the smallest of: each link's share, (available capacity - the
    rates frozen on it) / (VCs not frozen on it), and each unfrozen VC's
    demand. At that level the VCs whose demand it is, and every unfrozen
    VC of each link whose share it is, are frozen; repeat until none is
    left. Exact (fractions), so a tie is a tie.
    """
    by_name: dict[str, Link] = {}
    for link in links:
        if link.name in by_name:
            raise OracleError(f"link {link.name!r} is given twice")
        for what, x in (("capacity", link.capacity), ("hp_load", link.hp_load), ("target", link.target)):
            if _frac(x, f"link {link.name!r} {what}") < 0:
                raise OracleError(f"link {link.name!r}: {what} {x} is negative")
        by_name[link.name] = link
    vc_list = list(vcs)
    names = [v.name for v in vc_list]
    if len(set(names)) != len(names):
        raise OracleError(f"a VC name is given twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    on: dict[str, list[str]] = {name: [] for name in by_name}
    for v in vc_list:
        if v.demand is not None and _frac(v.demand, f"VC {v.name!r} demand") < 0:
            raise OracleError(f"VC {v.name!r}: demand {v.demand} is negative")
        if len(set(v.links)) != len(v.links):
            raise OracleError(f"VC {v.name!r} crosses a link direction twice: {list(v.links)}")
        for name in v.links:
            if name not in by_name:
                raise OracleError(f"VC {v.name!r} crosses {name!r}, which is no link")
            on[name].append(v.name)
        if not v.links and v.demand is None:
            raise OracleError(f"VC {v.name!r} crosses no link and has no demand: its rate has no bound")

    available = {name: Fraction(link.available) for name, link in by_name.items()}
    demand = {v.name: None if v.demand is None else Fraction(v.demand) for v in vc_list}
    rates: dict[str, Fraction] = {}
    bottleneck: dict[str, str | None] = {}
    frozen_on = {name: Fraction(0) for name in by_name}
    unfrozen_on = {name: len(vs) for name, vs in on.items()}
    order: list[tuple[Fraction, tuple[str, ...]]] = []
    left = [v.name for v in vc_list]
    path = {v.name: v.links for v in vc_list}
    while left:
        shares = {name: (available[name] - frozen_on[name]) / unfrozen_on[name]
                  for name in by_name if unfrozen_on[name] > 0}
        candidates = list(shares.values()) + [d for v in left if (d := demand[v]) is not None]
        level = min(candidates)
        tight = {name for name, s in shares.items() if s == level}
        now: list[str] = []
        for v in left:
            if demand[v] is not None and demand[v] == level:
                bottleneck[v] = None
            else:
                hit = [name for name in path[v] if name in tight]
                if not hit:
                    continue
                bottleneck[v] = hit[0]
            rates[v] = level
            now.append(v)
        for v in now:
            for name in path[v]:
                frozen_on[name] += level
                unfrozen_on[name] -= 1
        order.append((level, tuple(now)))
        left = [v for v in left if v not in rates]
    load = {name: sum((rates[v] for v in on[name]), Fraction(0)) for name in by_name}
    return Allocation(rates={v: rates[v] for v in names}, bottleneck={v: bottleneck[v] for v in names},
                      load=load, available=available, order=tuple(order))


# --- quantities, exactly as the scenario format writes them -----------------

_RATE = {"bit/s": 1, "bps": 1, "kbit/s": 10**3, "kbps": 10**3, "Mbit/s": 10**6, "Mbps": 10**6,
         "Gbit/s": 10**9, "Gbps": 10**9, "Tbit/s": 10**12, "Tbps": 10**12, "cells/s": CELL_BITS}
_TIME = {"ps": Fraction(1, 10**12), "ns": Fraction(1, 10**9), "us": Fraction(1, 10**6),
         "µs": Fraction(1, 10**6), "ms": Fraction(1, 10**3), "s": Fraction(1)}
_BYTES = {"bytes": 1, "B": 1, "byte": 1, "kB": 10**3, "KiB": 1024, "MB": 10**6, "MiB": 2**20, "GB": 10**9}


def _split(text: Any, units: Mapping[str, Any], what: str) -> tuple[Fraction, Any]:
    if not isinstance(text, str):
        raise OracleError(f"{what}: {text!r} is not a quantity with a unit")
    parts = text.strip().split(None, 1)
    if len(parts) != 2 or parts[1].strip() not in units:
        raise OracleError(f"{what}: {text!r} is not a number and one of the units {', '.join(units)}")
    try:
        number = Fraction(Decimal(parts[0]))
    except (InvalidOperation, ValueError):
        raise OracleError(f"{what}: {text!r} is not a number and one of the units {', '.join(units)}") from None
    return number, units[parts[1].strip()]


def _round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def parse_rate(text: Any, what: str = "rate") -> int:
    """A rate of the scenario format in bit/s, rounded to the nearest bit/s
    as the core rounds it (``"353207.55 cells/s"`` is 149,760,001 bit/s)."""
    number, factor = _split(text, _RATE, what)
    return _round_half_up(number * factor)


def parse_time(text: Any, what: str = "time") -> Fraction:
    """A time in seconds, rounded to the nearest picosecond as the core does."""
    number, factor = _split(text, _TIME, what)
    return Fraction(_round_half_up(number * factor * 10**12), 10**12)


def parse_bytes(value: Any, what: str = "bytes") -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number, factor = _split(value, _BYTES, what)
    n = number * factor
    if n.denominator != 1:
        raise OracleError(f"{what}: {value!r} is not a whole number of bytes")
    return int(n)


# --- from a scenario ---------------------------------------------------------

# What the oracle takes as each controller's target utilisation.
# ERICA: its target_utilization (ABR capacity = U x link - CBR/VBR).
# ERICA+: 1, the whole capacity: its target ABR capacity is f(Tq) x (link -
# CBR/VBR), with f = 1 at the target queueing delay T0 (docs/models/abr.md);
# in steady state its rates sum to the capacity with the queue near T0.
# EFCI: 1 (binary feedback has no target rate; a fair EFCI switch fills the
# link). fixed_rate: 1 on the link, and the ER caps each VC (a demand).
# CAPC, OSU, Charny: their target_utilization, as ERICA's (target = U x link -
# CBR/VBR). EPRCA, APRC: 1 (no target rate: they cut only while the queue is
# long, so a fair one fills the link).
ERICA_DEFAULT_U = Fraction(9, 10)
# The defaults of the core (abr/control/*.rs, docs/models/abr.md).
DEFAULT_U = {"erica": ERICA_DEFAULT_U, "capc": Fraction(95, 100), "osu": Fraction(9, 10), "charny": Fraction(1)}
LLC_SNAP = 8
AAL5_TRAILER = 8
UDP_IP_HEADERS = 28


def _where(source: str, path: str) -> str:
    return f"{source}: {path}" if source else path


def _cells_of_datagram(payload: int, mtu: int, encapsulation: str, where: str) -> int:
    if payload + UDP_IP_HEADERS > mtu:
        raise OracleError(f"{where}: a {payload}-byte datagram is larger than the MTU {mtu} and fragmented; "
                          "the oracle counts only unfragmented datagrams")
    over = LLC_SNAP if encapsulation == "llc_snap" else 0
    return -(-(payload + UDP_IP_HEADERS + over + AAL5_TRAILER) // 48)


def _constant(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def describe(data: Mapping[str, Any], source: str = "") -> Network:
    """The network of a scenario's expanded data (``atmlab.load(x).data``),
    as :func:`max_min` takes it.

    Links: one per direction, named ``"from->to"`` as atmlab names ports,
    crossed by the forward loop of each ABR VC (from its first host along
    ``path``); capacity the link's rate in cells/s, lowered to a port's
    ``shape`` and to a host's ``adapter.peak``; the target utilisation of
    the output port's ABR controller; the CBR and VBR load of constant-rate
    sources on it. VCs: every ABR VC, with its demand the least of its PCR
    (``abr.pcr``, default the slower of its hosts' adapters), the ER of a
    ``fixed_rate`` port on its path, and, when all its applications are
    constant-rate UDP, their cell rate times Nrm/(Nrm-1) (one in-rate cell
    in Nrm is an FRM). Raises :class:`OracleError` naming the key for what
    it cannot describe.
    """
    sim = data.get("simulation") or {}
    if sim.get("clock_tolerance_ppm"):
        raise OracleError(_where(source, "simulation.clock_tolerance_ppm") + ": link rates are drawn at random "
                          "(clock tolerance), so the capacities are not known exactly")
    hosts = {h["name"]: (i, h) for i, h in enumerate(data.get("hosts") or [])}
    switches = {s["name"]: (i, s) for i, s in enumerate(data.get("switches") or [])}
    notes: list[str] = []

    # Link directions.
    cap: dict[str, Fraction] = {}
    link_of: dict[tuple[str, str], int] = {}
    for i, link in enumerate(data.get("links") or []):
        a, b = link["between"]
        bps = parse_rate(link["rate"], _where(source, f"links[{i}].rate"))
        for x, y in ((a, b), (b, a)):
            link_of[(x, y)] = i
            rate = Fraction(bps, CELL_BITS)
            if x in hosts:
                peak = (hosts[x][1].get("adapter") or {}).get("peak")
                if peak is not None:
                    j = hosts[x][0]
                    rate = min(rate, Fraction(parse_rate(peak, _where(source, f"hosts[{j}].adapter.peak")),
                                              CELL_BITS))
            elif x in switches:
                j, sw = switches[x]
                port, where = _port(sw, y, j)
                if port.get("shape") is not None:
                    rate = min(rate, Fraction(parse_rate(port["shape"], _where(source, f"{where}.shape")),
                                              CELL_BITS))
            cap[f"{x}->{y}"] = rate

    def adapter_rate(host: str) -> Fraction:
        i, h = hosts[host]
        link = next(((x, y) for (x, y) in link_of if x == host), None)
        if link is None:
            raise OracleError(_where(source, f"hosts[{i}]") + f": host {host!r} has no link")
        return cap[f"{link[0]}->{link[1]}"]

    # Applications, by VC.
    apps_of: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, app in enumerate(data.get("apps") or []):
        apps_of.setdefault(app.get("vc"), []).append((i, app))

    hp: dict[str, Fraction] = {name: Fraction(0) for name in cap}
    abr_vcs: list[tuple[int, dict[str, Any]]] = []
    backward_tcp: dict[str, str] = {}
    for i, vc in enumerate(data.get("vcs") or []):
        category = vc.get("category", "abr" if "abr" in vc else "ubr")
        path = vc["path"]
        hops = [f"{path[k]}->{path[k + 1]}" for k in range(len(path) - 1)]
        if category == "abr":
            abr_vcs.append((i, vc))
            if any(app.get("kind") == "tcp_bulk" for _, app in apps_of.get(vc["name"], [])):
                for k in range(len(path) - 1, 0, -1):
                    backward_tcp[f"{path[k]}->{path[k - 1]}"] = vc["name"]
        elif category in ("cbr", "vbr"):
            rate = _hp_rate(vc, apps_of.get(vc["name"], []), hosts, source, i)
            for name in hops:
                hp[name] += rate
            if rate:
                notes.append(f"{vc['name']}: {category.upper()} at {float(rate * CELL_BITS):.6g} bit/s "
                             f"on {', '.join(hops)}")

    # The controllers of the ports the forward loops leave by.
    target: dict[str, Fraction] = {}
    er_cap: dict[str, tuple[Fraction, str]] = {}
    controlled: set[str] = set()
    for name in cap:
        x, y = name.split("->")
        if x not in switches:
            continue
        j, sw = switches[x]
        port, where = _port(sw, y, j)
        abr = port.get("abr")
        if abr is None:
            continue
        algorithm = abr.get("algorithm", "erica_plus")
        where = f"{where}.abr"
        if algorithm == "none":
            continue
        controlled.add(name)
        if algorithm in DEFAULT_U:
            u = abr.get("target_utilization", DEFAULT_U[algorithm])
            target[name] = _frac(u if not isinstance(u, float) else Decimal(repr(u)), _where(source, where))
        elif algorithm == "fixed_rate":
            er = parse_rate(abr.get("er"), _where(source, f"{where}.er"))
            er_cap[name] = (Fraction(er, CELL_BITS), f"{where}.er")
        elif algorithm in ("erica_plus", "efci", "eprca", "aprc"):
            pass  # no target rate: the whole link
        elif "target_utilization" in abr:
            # An algorithm the oracle does not know, which says its target.
            u = abr["target_utilization"]
            target[name] = _frac(u if not isinstance(u, float) else Decimal(repr(u)), _where(source, where))
        else:
            raise OracleError(_where(source, f"{where}.algorithm") + f": the oracle knows no target for "
                              f"{algorithm!r}: give it the port's target_utilization")

    links_used: dict[str, list[str]] = {}
    vcs: list[Vc] = []
    for i, vc in abr_vcs:
        path = vc["path"]
        name = vc["name"]
        if path[0] not in hosts or path[-1] not in hosts:
            raise OracleError(_where(source, f"vcs[{i}].path") + ": an ABR VC runs from a host to a host")
        hops = [f"{path[k]}->{path[k + 1]}" for k in range(len(path) - 1)]
        for h in hops:
            if h not in cap:
                raise OracleError(_where(source, f"vcs[{i}].path") + f": no link between the nodes of {h}")
            links_used.setdefault(h, []).append(name)
        params = vc.get("abr") or {}
        pcr = params.get("pcr")
        demand = (Fraction(parse_rate(pcr, _where(source, f"vcs[{i}].abr.pcr")), CELL_BITS) if pcr is not None
                  else min(adapter_rate(path[0]), adapter_rate(path[-1])))
        for h in hops:
            if h in er_cap and er_cap[h][0] < demand:
                demand = er_cap[h][0]
        app_rate = _app_rate(vc, apps_of.get(name, []), hosts, source, i)
        if app_rate is not None and app_rate < demand:
            demand = app_rate
        vcs.append(Vc(name, tuple(hops), demand))

    links: list[Link] = []
    for name, capacity in cap.items():
        if name not in links_used:
            continue
        if name in backward_tcp and any(v.demand != 0 for v in vcs if name in v.links):
            raise OracleError(_where(source, f"links[{link_of[tuple(name.split('->'))]}]") + f": direction {name} "
                              f"carries the forward loop of {links_used[name][0]} and the TCP ACKs of "
                              f"{backward_tcp[name]}'s backward loop, whose rate the oracle does not know")
        link = Link(name, capacity, hp[name], target.get(name, Fraction(1)))
        if name not in controlled:
            peak = sum((v.demand for v in vcs if name in v.links and v.demand is not None), Fraction(0))
            if hp[name] + peak > capacity:
                raise OracleError(_where(source, f"links[{link_of[tuple(name.split('->'))]}]") + f": direction "
                                  f"{name} runs no ABR controller, and the ABR VCs on it "
                                  f"({', '.join(links_used[name])}) may send more than it carries: their rates "
                                  "there are set by its queue, not by max-min")
        links.append(link)
    return Network(tuple(links), tuple(vcs), tuple(notes))


def _port(sw: Mapping[str, Any], neighbour: str, j: int) -> tuple[dict[str, Any], str]:
    """The port table of switch `sw` toward `neighbour`: ``port_to.X`` over
    ``port``, key by key (the ``abr`` table whole)."""
    base = dict(sw.get("port") or {})
    over = (sw.get("port_to") or {}).get(neighbour)
    if over is None:
        return base, f"switches[{j}].port"
    return {**base, **over}, f"switches[{j}].port_to.{neighbour}"


def _hp_rate(vc: Mapping[str, Any], apps: Sequence[tuple[int, Mapping[str, Any]]],
             hosts: Mapping[str, Any], source: str, i: int) -> Fraction:
    total = Fraction(0)
    for k, app in apps:
        where = _where(source, f"apps[{k}]")
        kind = app.get("kind")
        if kind == "udp_cbr" or (kind == "udp" and _constant(app.get("payload")) and _constant(app.get("interval"))):
            if any(app.get(x) is not None for x in ("count", "bytes", "duration")):
                raise OracleError(f"{where}: a {kind} source that stops is no constant load")
            total += _udp_rate(app, vc, hosts, where)
        elif kind == "onoff":
            duty = app.get("duty")
            if duty != 1 and not (app.get("off") is not None and parse_time(app["off"], f"{where}.off") == 0):
                raise OracleError(f"{where}: an on/off source with OFF periods is no constant load "
                                  f"(VC {vc['name']!r}, {vc.get('category')})")
            total += Fraction(parse_rate(app["peak"], f"{where}.peak"), CELL_BITS)
        else:
            raise OracleError(f"{where}: a {kind} application on the {vc.get('category')} VC {vc['name']!r} is no "
                              "constant load: the capacity it leaves to ABR is not known")
    return total


def _udp_rate(app: Mapping[str, Any], vc: Mapping[str, Any], hosts: Mapping[str, Any], where: str) -> Fraction:
    host = hosts[vc["path"][0]][1]
    mtu = int(host.get("mtu", 9180))
    encap = host.get("encapsulation", "llc_snap")
    payload = parse_bytes(app["payload"], f"{where}.payload")
    interval = parse_time(app["interval"], f"{where}.interval")
    if interval <= 0:
        raise OracleError(f"{where}.interval: must be positive")
    return _cells_of_datagram(payload, mtu, encap, where) / interval


def _app_rate(vc: Mapping[str, Any], apps: Sequence[tuple[int, Mapping[str, Any]]],
              hosts: Mapping[str, Any], source: str, i: int) -> Fraction | None:
    """The cell rate an ABR VC's applications offer, in-rate FRMs included,
    or None when some application is greedy (TCP, a persistent source)."""
    if not apps:
        return Fraction(0)
    nrm = int((vc.get("abr") or {}).get("nrm", 32))
    total = Fraction(0)
    for k, app in apps:
        where = _where(source, f"apps[{k}]")
        kind = app.get("kind")
        if kind == "abr_persistent":
            return None
        if kind == "tcp_bulk":
            if app.get("bytes", "inf") != "inf" or app.get("duration") is not None:
                raise OracleError(f"{where}: a TCP transfer that ends leaves no steady state to compare with")
            return None
        if kind == "udp_cbr" or (kind == "udp" and _constant(app.get("payload")) and _constant(app.get("interval"))):
            if any(app.get(x) is not None for x in ("count", "bytes", "duration")):
                raise OracleError(f"{where}: a {kind} source that stops leaves no steady state to compare with")
            total += _udp_rate(app, vc, hosts, where)
        else:
            raise OracleError(f"{where}: the oracle knows no steady rate of a {kind} application on an ABR VC")
    return total * Fraction(nrm, nrm - 1)


def scenario_max_min(scenario: Any, *, overrides: Sequence[str] = ()) -> Allocation:
    """The max-min allocation of a scenario: a path, a bundled name, a
    mapping, or a loaded scenario (:func:`atmlab.load`)."""
    from .scenario import LoadedScenario, load

    loaded = scenario if isinstance(scenario, LoadedScenario) and not overrides else load(scenario,
                                                                                          overrides=overrides)
    network = describe(loaded.data, loaded.source)
    allocation = max_min(network.links, network.vcs)
    return Allocation(allocation.rates, allocation.bottleneck, allocation.load, allocation.available,
                      allocation.order, network.notes)
