"""Property-based fuzzing of the shipped scenarios.

Every scenario under ``python/atmlab/scenarios`` (the ``scenarios`` folder at
the top of the repository) is mutated by Hypothesis: 1 to 3 mutations at
random places of its template (the parsed TOML), or one change to its TOML
text (truncated, a character inserted, a line doubled or deleted). The
mutations: delete a key or an entry; duplicate an array entry (same name
twice); add an unknown key; replace a value by one of another type; extreme
numbers (0, -1, -0.0, 2^31, 2^63, 2^64, +-1e308, nan, inf); quantity strings
with unknown units, no unit, huge, tiny or negative values; names that
dangle or name the wrong kind of thing; empty, very long and odd strings;
two values of a table swapped; a documented key set to a value of its own
kind, valid or not; a new entry (probes of every kind, UDP, on/off and
piecewise sources, VCs, ABR VCs, hosts, links, ABR controllers on switch
ports); the template machinery ([params], ``repeat``, [sweep]). The
documented keys include ABR (``vcs[].abr`` with the TM 4.0 parameters, the
``abr`` table of switch ports with every ERICA/ERICA+/EFCI option),
``piecewise`` applications (rates as lists, ``{ fgn = ... }``, and
``{ file, unit }`` tables naming files that are missing or no rates,
intervals constant or uniform, ``frame_cells``), the ABR and cell-rate
probes with ``vc`` and ``direction``, and ``efficiency_capacity =
"left_by_measured"``. One case in five instead sets 2 to 4 keys to values
at the edges of the valid range (1 ps, 1e6 s, 1 kbit/s, 1 Tbit/s, 2^64 - 1,
Nrm 2 and 256, 10000 sources, ...), which mostly still run. Each case then goes through what a user does with it:

    atmlab.load -> atmlab.validate -> atmlab.Sweep (expands every point of
    [sweep] and validates the first) -> atmlab.run (the base point, seed
    from the file)

The simulated time is capped: if ``simulation.duration`` (after expansion)
is still a valid time longer than 2 ms, it becomes ``"2 ms"`` (in
``[params]`` when the duration is a ``"{param}"``); an invalid or extreme
duration is kept, so that its validation is tested too.

Each case must end in one of three outcome classes:

* ``ok``: it ran;
* ``scenario_error``: a :class:`atmlab.ScenarioError` naming the key path,
  or with an empty path only for a whole-file problem (malformed TOML, a
  missing top-level table, ...);
* ``limit_error``: the run was stopped by the memory guard.

Anything else is a failure of the test: a ``SimulationError`` (a core panic,
"internal error", or a conservation failure), any other exception
(``PanicException``, ``TypeError``, ``ValueError``, ``KeyError``,
``OverflowError``, ``RecursionError``, ``MemoryError``, ...), a
``ScenarioError`` without a key path for a problem that has one, a case that
takes longer than the timeout (a hang), or a worker process that dies (an
abort or a crash). Cases run in worker processes (so a hang or a crash
cannot take the test run down); each failure is reduced to the fewest of its
mutations that still give it, deduplicated, and printed with the mutations
and the path of a JSON file holding the complete mutated scenario, which
reproduces it with ``atmlab.run(json.load(open(PATH)))`` (or, for a TOML
text case, a ``.toml`` file for ``atmlab.run(PATH)``).

The cases are the same on every run (``derandomize=True``, no example
database); the failures found so far are pinned (``PINNED``) and run first
on every run. With ``pytest -s`` the counts per outcome class are printed for
each scenario and in total; they are also written, with every distinct
failure, the empty-path errors, the slowest cases and the mutations that
were accepted although they look wrong (an unknown key, a dangling name, a
duplicated name, an empty name, ...), to ``fuzz_summary.json`` in the pytest
temporary directory (the path is printed).

Environment variables (defaults for CI):

* ``ATMLAB_FUZZ_EXAMPLES`` (3000): cases in total, spread evenly over the
  shipped scenarios. For a long run by hand::

      ATMLAB_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/test_fuzz_scenarios.py -s

* ``ATMLAB_FUZZ_TIMEOUT`` (20): seconds of wall time after which a case is a
  hang (its worker is killed and replaced).
* ``ATMLAB_FUZZ_JOBS`` (2): worker processes.
* ``ATMLAB_FUZZ_MEMORY_MB`` (8192): address-space limit of each worker.
* ``ATMLAB_FUZZ_SEED``: run other cases than CI's (a seed instead of
  ``derandomize``).
"""

from __future__ import annotations

import copy
import json
import math
import multiprocessing
import os
import re
import time
import tomllib
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from itertools import combinations
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_DIR = ROOT / "python" / "atmlab" / "scenarios"
SCENARIO_FILES = sorted(p.relative_to(SCENARIO_DIR).as_posix() for p in SCENARIO_DIR.rglob("*.toml"))

EXAMPLES = int(os.environ.get("ATMLAB_FUZZ_EXAMPLES", "3000"))
TIMEOUT = float(os.environ.get("ATMLAB_FUZZ_TIMEOUT", "20"))
JOBS = int(os.environ.get("ATMLAB_FUZZ_JOBS", "2"))
MEMORY_MB = int(os.environ.get("ATMLAB_FUZZ_MEMORY_MB", "8192"))
FUZZ_SEED = os.environ.get("ATMLAB_FUZZ_SEED")
SLOW_S = 1.0  # a case slower than this is listed in the summary
CAP = "2 ms"
CAP_S = Decimal("0.002")
MAX_TIME_S = Decimal(10) ** 6
MINIMIZE_BUDGET = 300  # re-runs spent reducing failures to their fewest mutations

OK, SCENARIO_ERROR, LIMIT_ERROR = "ok", "scenario_error", "limit_error"
# A ScenarioError without a key path is right only for a problem of the whole
# file: these are the messages of such problems.
WHOLE_FILE = re.compile(r"^(malformed TOML|cannot read|not plain data|no such file|missing field `\w+`$)")

Path_ = tuple[str | int, ...]


def _template(rel: str) -> dict[str, Any]:
    with open(SCENARIO_DIR / rel, "rb") as f:
        return tomllib.load(f)


TEMPLATES: dict[str, dict[str, Any]] = {rel: _template(rel) for rel in SCENARIO_FILES}
TEXTS: dict[str, str] = {rel: (SCENARIO_DIR / rel).read_text(encoding="utf-8") for rel in SCENARIO_FILES}


# ------------------------------------------------------------------ trees

def fmt(path: Path_) -> str:
    """``("switches", 0, "port", "buffer")`` -> ``switches[0].port.buffer``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            name = p if re.fullmatch(r"[A-Za-z0-9_]+", p) else json.dumps(p)
            out += f".{name}" if out else name
    return out or "<root>"


def generic(path: Path_) -> str:
    """The key path with indices and free names (neighbours, categories)
    replaced: the place a cause is deduplicated by."""
    parts: list[str | int] = []
    for i, p in enumerate(path):
        if isinstance(p, int):
            parts.append(-1)
        elif i > 0 and path[i - 1] in ("port_to", "classes", "zip"):
            parts.append("*")
        else:
            parts.append(p)
    return fmt(tuple(parts)).replace("[-1]", "[*]")


def walk(node: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    """Every node below `node` (not `node` itself), depth first."""
    out: list[tuple[Path_, Any]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        out.append((path + (k,), v))
        out.extend(walk(v, path + (k,)))
    return out


def get(tree: Any, path: Path_) -> Any:
    node = tree
    for p in path:
        if isinstance(node, dict) and isinstance(p, str) and p in node:
            node = node[p]
        elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
            node = node[p]
        else:
            raise LookupError(fmt(path))
    return node


class Inapplicable(Exception):
    """A mutation whose place no longer exists (when replaying a subset)."""


@dataclass(frozen=True)
class Op:
    """One mutation: `action` on the node at `path`."""

    kind: str  # the mutator that made it (for the report)
    action: str  # set, delete, insert, rename, swap, text
    path: Path_ = ()
    value: Any = None
    other: Path_ = ()

    def describe(self) -> str:
        v = _short(self.value)
        if self.action == "set":
            return f"{self.kind}: set {fmt(self.path)} = {v}"
        if self.action == "delete":
            return f"{self.kind}: delete {fmt(self.path)}"
        if self.action == "insert":
            return f"{self.kind}: insert at {fmt(self.path)}: {v}"
        if self.action == "rename":
            return f"{self.kind}: rename {fmt(self.path)} -> {v}"
        if self.action == "swap":
            return f"{self.kind}: swap {fmt(self.path)} <-> {fmt(self.other)}"
        return f"{self.kind}: {self.value[0]} at {self.value[1]} {_short(self.value[2])}"

    def places(self) -> list[str]:
        if self.action == "text":
            return [f"<toml text: {self.value[0]}>"]
        out = [generic(self.path)]
        if self.action == "swap":
            out.append(generic(self.other))
        return out


def _short(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > limit:
        text = f"{text[:limit // 2]}...<{len(text)} chars>...{text[-20:]}"
    return text


def apply(tree: Any, op: Op) -> None:
    if op.action == "swap":
        a, b = get(tree, op.path), get(tree, op.other)
        _put(tree, op.path, copy.deepcopy(b))
        _put(tree, op.other, copy.deepcopy(a))
        return
    parent = get(tree, op.path[:-1])
    key = op.path[-1]
    if op.action == "set":
        _put(tree, op.path, copy.deepcopy(op.value))
    elif op.action == "delete":
        get(tree, op.path)
        del parent[key]
    elif op.action == "insert":
        if not isinstance(parent, list) or not 0 <= key <= len(parent):
            raise Inapplicable(fmt(op.path))
        parent.insert(key, copy.deepcopy(op.value))
    elif op.action == "rename":
        get(tree, op.path)
        items = [(op.value if k == key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
    else:
        raise ValueError(op.action)


def _put(tree: Any, path: Path_, value: Any) -> None:
    parent = get(tree, path[:-1])
    key = path[-1]
    if isinstance(parent, dict) and isinstance(key, str):
        parent[key] = value
    elif isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        parent[key] = value
    else:
        raise Inapplicable(fmt(path))


def mutated_template(rel: str, ops: tuple[Op, ...]) -> dict[str, Any]:
    tree = copy.deepcopy(TEMPLATES[rel])
    for op in ops:
        try:
            apply(tree, op)
        except LookupError as e:
            raise Inapplicable(str(e)) from None
    return tree


def mutated_text(rel: str, op: Op) -> str:
    what, pos, s = op.value
    text = TEXTS[rel]
    if what == "truncate":
        return text[:pos]
    if what == "insert":
        return text[:pos] + s + text[pos:]
    lines = text.splitlines(keepends=True)
    if what == "duplicate_line":
        return "".join(lines[:pos + 1] + lines[pos:])
    if what == "delete_line":
        return "".join(lines[:pos] + lines[pos + 1:])
    raise ValueError(what)


# ------------------------------------------------------------ value pools

NAN, INF = float("nan"), float("inf")
EXTREMES = [0, -1, -0.0, 2**31, 2**31 - 1, 2**32, 2**63, 2**63 - 1, 2**64, 2**64 - 1, 1e308, -1e308,
            NAN, INF, -INF, 0.5, 1e-308, 5e-324]
QUANTITY_STRINGS = [
    "5 parsecs", "10 cellz", "5", "18446744.073709551615 s", "18446744073709551616 ps", "1e30 Mbit/s",
    "0 cells", "0.0000001 ps", "-5 us", "0 s", "1 ps", "1e6 s", "1000001 s", "1e-30 s", "nan s",
    "inf Mbit/s", "1e999999999 s", "1e-999999999 s", "1 Tbit/s", "1000000000001 bit/s", "999 bit/s",
    "0 bit/s", "1 cells/s", "0 bytes", "18446744073709551616 bytes", "5 KB", "1.5 cells", "1.5 bytes",
    "  5   us  ", "5us", "+5 ms", "5 us extra", "5 s s", "1_000 cells", "_ s", ". s", "e5 s", "1e s",
    "1e+ s", "0x10 cells", "1,5 ms", "5 µs", "5 Ms", "5 MS", "1 GB", "1 MiB", "4294967296 cells",
]
NUMBERS = ["0", "-1", "-0", "0.0", "1e30", "1e-30", "18446744073709551616", "18446744073709551615",
           "340282366920938463463374607431768211456", "1e38", "0.0000001", "1", "2", "1e6", "1000001",
           "1e-12", "1e+3", "9" * 40, "0." + "0" * 30 + "1", "1e-6", "4294967296", "nan", "inf", ""]
UNITS = ["ps", "ns", "us", "µs", "ms", "s", "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "cells/s", "bytes",
         "kB", "KiB", "MB", "GB", "cells", "parsecs", "", "KB", "sec"]
STRINGS = ["", "x" * 100_000, " ", "é名前", "{", "}", "{}", "{nosuch}", "{i}", "{{n}}", "a\x00b", "\n",
           "null", "true", "0", "inf", "src0", "sw0"]
UNKNOWN_KEYS = ["bufer", "unknown", "Name", "x-y", "", "repeat", "name ", "extra", "durat1on", "kind2",
                "__class__", "params", "sweep", "i", "port", "名"]

TIME = ["0 s", "1 ps", "1 ns", "1 us", "5 us", "1 ms", "10 ms", "100 ms", "1 s", "64 s", "1e6 s",
        "1000001 s", "-1 s", "0.4 ps", "0.6 ps", 1, "1"]
RATE = ["1 kbit/s", "999 bit/s", "1 bit/s", "64 kbit/s", "1594 kbit/s", "37.44 Mbit/s", "155.52 Mbit/s",
        "622.08 Mbit/s", "1 Gbit/s", "1000 Gbit/s", "1000.000001 Gbit/s", "1 cells/s", "0 bit/s",
        "353207.55 cells/s", 155520000]
BYTES = ["0 bytes", "1 bytes", "28 bytes", "40 bytes", "41 bytes", "48 bytes", "512 bytes", "9180 bytes",
         "65507 bytes", "65508 bytes", "65527 bytes", "65528 bytes", "1 GB", "1073741824 bytes",
         "1073741825 bytes", "18446744073709551615 bytes", 0, 1, 100000, -1]
CELLS = ["0 cells", "1 cells", "2 cells", "100 cells", "1000 cells", "50000000 cells",
         "18446744073709551615 cells", 0, 1, 10**9, -1]
INTS = [0, 1, 2, 3, 4, 5, 100, 2**32 - 1, 2**32, -1, 2**64]
FRACS = [0, 0.0, 0.5, 0.9, 1, 1.0, 1.5, -0.1, 1e-9, NAN]
BOOLS = [True, False, 1, "true"]


def _enum(*names: str) -> list[Any]:
    return [*names, "bogus", "", names[0].upper()]


DROP_POLICIES = [
    {"kind": "tail_drop"}, {"kind": "ppd"}, {"kind": "ppd", "keep_end_of_frame": False},
    {"kind": "epd"}, {"kind": "epd", "threshold": "0 cells"}, {"kind": "epd", "threshold": "1 cells"},
    {"kind": "epd", "threshold_fraction": 0}, {"kind": "epd", "threshold_fraction": 1.5},
    {"kind": "epd", "excess_frames": 1, "frame_cells": "91 cells", "compare": ">"},
    {"kind": "epd", "excess_frames": 1000, "frame_cells": "91 cells"},
    {"kind": "epd", "excess_frames": -1, "frame_cells": "0 cells"}, {"kind": "epd", "compare": "<"},
    {"kind": "epd", "keep_end_of_refused_frame": True, "keep_end_of_frame": False},
    {"kind": "selective_drop"}, {"kind": "selective_drop", "z": 0}, {"kind": "selective_drop", "z": 1e308},
    {"kind": "selective_drop", "threshold": "1 cells", "z": 0.0001}, {"kind": "fba"},
    {"kind": "fba", "threshold_fraction": 0.0, "z": 0.8}, {"kind": "fba", "threshold_fraction": 1.0, "z": 1},
    {"kind": "fba", "z": -1}, {"kind": "bogus"}, {}, {"kind": "tail_drop", "threshold": "10 cells"},
]
SCHEDULERS = [
    {"kind": "strict_priority"}, {"kind": "round_robin"}, {"kind": "guaranteed_rate", "gr": 0},
    {"kind": "guaranteed_rate", "gr": 1}, {"kind": "guaranteed_rate", "gr": 1.0000001},
    {"kind": "guaranteed_rate", "gr": 0.5, "class": "cbr"}, {"kind": "guaranteed_rate", "gr": 1e-300},
    {"kind": "guaranteed_rate"}, {"kind": "guaranteed_rate", "gr": NAN}, {"kind": "round_robin", "gr": 0.5},
    {"kind": "bogus"},
]
CLASSES = [{}, {"ubr": {"buffer": "10 cells"}}, {"cbr": {"buffer": "1 cells"}}, {"vbr": {}},
           {"abr": {"buffer": "0 cells"}}, {"ubr": {"drop_policy": {"kind": "epd"}}},
           {"bogus": {"buffer": "1 cells"}}, {"ubr": {"buffer": "2000000 cells", "drop_policy": {"kind": "fba"}}}]
LOSSES = [
    {"kind": "bernoulli", "clr": 0.01}, {"kind": "bernoulli", "clr": 0}, {"kind": "bernoulli", "clr": 1},
    {"kind": "bernoulli", "clr": 1.5}, {"kind": "bernoulli", "clr": NAN}, {"kind": "bernoulli"},
    {"kind": "bernoulli", "clr": 0.5, "direction": "backward"}, {"kind": "periodic", "one_in": 1},
    {"kind": "periodic", "one_in": 0}, {"kind": "periodic", "one_in": 100, "phase": "random"},
    {"kind": "periodic", "one_in": 2**64 - 1, "phase": "random", "direction": "forward"},
    {"kind": "periodic", "clr": 0.1}, {"kind": "bogus"}, {"kind": "periodic", "one_in": 3, "direction": "up"},
]
CONTRACTS = [
    {"pcr": "6 Mbit/s"}, {"pcr": "6 Mbit/s", "scr": "2 Mbit/s", "mbs": 32, "cdvt": "250 us"},
    {"conformance": "vbr.1", "pcr": "6 Mbit/s", "scr": "2 Mbit/s", "mbs": 0},
    {"conformance": "vbr.2", "pcr": "1 kbit/s", "scr": "1 kbit/s", "bt": "1e6 s"},
    {"conformance": "vbr.3", "pcr": "1 Tbit/s", "scr": "1 kbit/s", "mbs": 2**64 - 1},
    {"conformance": "cbr.1", "pcr": "155.52 Mbit/s", "cdvt": "1e6 s"}, {"pcr": "2 Mbit/s", "scr": "6 Mbit/s", "mbs": 32},
    {"pcr": "6 Mbit/s", "scr": "2 Mbit/s"}, {"pcr": "6 Mbit/s", "scr": "2 Mbit/s", "mbs": 32, "bt": "1 ms"},
    {"conformance": "vbr.9", "pcr": "6 Mbit/s"}, {"scr": "2 Mbit/s"}, {"pcr": "6 Mbit/s", "mbs": 1},
]
RATE_DIST = [{"exponential": "1 ms"}, {"exponential": "0 s"}, {"exponential": "1 ps"},
             {"bivalue": ["1 us", "1 ms"], "p": 0.5}, {"bivalue": ["1 ms", "1 ms"], "p": 1.5},
             {"bivalue": ["1 ms"], "p": 0.5}, {"exponential": "1 ms", "p": 0.5}, {}]
PAYLOAD_DIST = [{"exponential": "100 bytes"}, {"exponential": "0 bytes"}, {"exponential": "1 GB"},
                {"bivalue": ["80 bytes", "1500 bytes"], "p": 0.5}, {"bivalue": ["80 bytes", "70000 bytes"], "p": 1},
                {"bivalue": ["0 bytes", "0 bytes"], "p": 0}, {"bivalue": [], "p": 0.5}]

ABR_VCS = [  # vcs[].abr: TM 4.0 parameters of both directions
    {}, {"pcr": "10 Mbit/s"}, {"pcr": "1 kbit/s", "icr": "1 kbit/s", "mcr": "0 cells/s"}, {"nrm": 2, "mrm": 1},
    {"tbe": "4096 cells", "frtt": "30 ms"}, {"rif": 1, "rdf": 1, "cdf": 0}, {"trm": "781.25 us", "adtf": "10 ms"},
    {"icr": "1 cells/s", "tcr": "1 cells/s"}, {"pcr": "10 Mbit/s", "icr": "20 Mbit/s"},
    {"mcr": "10 Mbit/s", "pcr": "1 Mbit/s"}, {"pcr": "1 Tbit/s"}, {"pcr": "0 bit/s"}, {"nrm": 0}, {"nrm": 1},
    {"nrm": 257}, {"nrm": 2**32}, {"mrm": 0}, {"nrm": 2, "mrm": 3}, {"trm": "0 s"}, {"trm": "101 ms"}, {"rif": 0},
    {"rdf": 1.5}, {"cdf": -0.1}, {"rif": NAN}, {"adtf": "0 s"}, {"adtf": "10.24 s"}, {"tbe": "0 cells"},
    {"tbe": "16777216 cells"}, {"tbe": "18446744073709551615 cells"}, {"frtt": "1e6 s"}, {"frtt": "16.777216 s"},
    {"tcr": "0 bit/s"}, {"tcr": "1 Tbit/s"}, {"pcr": 5}, {"bogus": 1}, [],
]
LOAD_AVERAGING = [{"method": "ratio", "alpha": 0.5}, {"method": "separate", "alpha": 1}, {"method": "ratio", "alpha": 0},
                  {"method": "separate", "alpha": 1.5}, {"method": "ratio", "alpha": NAN}, {"method": "mean", "alpha": 0.5},
                  {"alpha": 0.5}, {"method": "ratio"}, {"method": "ratio", "alpha": 0.5, "beta": 1}]
ABR_SWITCHES = [  # switches[].port.abr: a port's ABR controller
    {}, {"algorithm": "erica_plus"}, {"algorithm": "erica", "target_utilization": 0.95},
    {"algorithm": "efci", "threshold": "100 cells"}, {"algorithm": "none"},
    {"interval": "1 ms", "interval_cells": 0}, {"interval": "1 ps", "interval_cells": 1},
    {"t0": "1 ps", "underload_gain": 1, "overload_gain": 1, "qdlf": 0},
    {"max_min_fix": False, "bidirectional_counting": False, "immediate_fair_share": True,
     "limit_sudden_increase": False, "one_er_per_interval": False, "cap_at_abr_capacity": False},
    {"algorithm": "erica", "active_vc_decay": 0.5, "load_averaging": {"method": "separate", "alpha": 0.5}},
    {"load_averaging": {"method": "ratio", "alpha": 1}, "delta": 0},
    {"algorithm": "efci"}, {"algorithm": "efci", "threshold": "0 cells"}, {"algorithm": "efci", "threshold": "4294967296 cells"},
    {"algorithm": "efci", "interval": "1 ms", "threshold": "1 cells"}, {"algorithm": "none", "t0": "1 ms"},
    {"algorithm": "erica", "t0": "1 ms"}, {"algorithm": "erica_plus", "target_utilization": 0.9},
    {"algorithm": "erica", "target_utilization": 0}, {"algorithm": "erica", "target_utilization": 1.5},
    {"interval": "0 s"}, {"interval": "1e6 s", "interval_cells": 2**32}, {"t0": "0 s"}, {"underload_gain": 0.5},
    {"overload_gain": NAN}, {"overload_gain": 1e308, "underload_gain": 1e308}, {"qdlf": 1.5}, {"delta": -1},
    {"delta": 1e308}, {"active_vc_decay": 0}, {"active_vc_decay": 1.5}, {"load_averaging": LOAD_AVERAGING[2]},
    {"load_averaging": LOAD_AVERAGING[5]}, {"load_averaging": {}}, {"algorithm": "bogus"}, {"algorithm": "ERICA"},
    {"bogus": 1}, [],
]
FGN = {"mean": "5 Mbit/s", "std": "5 Mbit/s", "peak": "15 Mbit/s", "hurst": 0.8}
FGN_TABLES = [
    FGN, FGN | {"method": "davies_harte"}, FGN | {"length": 2**15}, FGN | {"method": "paxson", "length": 2},
    FGN | {"hurst": 0.5, "std": "1 bit/s"}, FGN | {"length": 3}, FGN | {"length": 0}, FGN | {"length": 2**24 + 2},
    FGN | {"hurst": 0}, FGN | {"hurst": 1}, FGN | {"hurst": NAN}, FGN | {"std": "0 bit/s"},
    FGN | {"mean": "1 Tbit/s", "std": "1 bit/s"}, FGN | {"peak": "1 bit/s"}, FGN | {"method": "hosking"},
    FGN | {"peak": "1 Tbit/s"}, {"mean": "5 Mbit/s"}, {}, FGN | {"extra": 1},
]
RATE_LISTS = [  # a piecewise application's rates, one per interval
    ["10 Mbit/s", "0 bit/s"], ["5 Mbit/s", "15 Mbit/s", "1 Mbit/s"], ["0 bit/s"], ["1 bit/s"], ["149.76 Mbit/s"],
    ["1 kbit/s", "100 Mbit/s", "353207.55 cells/s"], [], ["1 Tbit/s"], ["1000.000001 Gbit/s"], ["-1 Mbit/s"],
    ["10 Mbit/s", 5], "10 Mbit/s", [["1 Mbit/s"]], ["5 parsecs"],
]
# The Python front reads { file, unit } tables: files that are missing, or
# hold no rates (relative to the current folder: the repository's root).
FILE_RATES = [
    {"file": "nosuch.txt", "unit": "Mbit/s"}, {"file": "README.md", "unit": "Mbit/s"}, {"file": ".", "unit": "Mbit/s"},
    {"file": "/dev/zero", "unit": "Mbit/s"}, {"file": "", "unit": "Mbit/s"}, {"file": "{n}", "unit": "Mbit/s"},
    {"unit": "Mbit/s"}, {"file": "nosuch.txt"}, {"file": "nosuch.txt", "unit": "parsecs"}, {"file": 5, "unit": "Mbit/s"},
    {"file": "nosuch.txt", "unit": "Mbit/s", "fgn": FGN},
]
RATES = RATE_LISTS + [{"fgn": f} for f in FGN_TABLES[:8]] + [{"fgn": FGN, "x": 1}, {}] + FILE_RATES
INTERVALS = ["50 ms", "20 ms", "1 ms", "1 ns", "1 ps", "0 s", "1e6 s", "-1 ms", {"uniform": ["20 ms", "100 ms"]},
             {"uniform": ["1 ps", "1 ns"]}, {"uniform": ["100 ms", "20 ms"]}, {"uniform": ["0 s", "1 ms"]},
             {"uniform": ["1 ms"]}, {"uniform": []}, {"uniform": "1 ms"}, {"exponential": "1 ms"}, {}, 5]
PROBE_KINDS = ["cwnd", "ssthresh", "rto", "srtt", "goodput", "queue", "drops", "utilization", "abr_queue", "vbr_queue",
               "hp_rate", "load_factor", "abr_capacity", "fair_share", "acr", "er", "cell_rate"]
APP_PROBES = ("cwnd", "ssthresh", "rto", "srtt", "goodput", "cell_rate")
VC_PROBES = ("acr", "er")
ERICA_PROBES = ("hp_rate", "load_factor", "abr_capacity", "fair_share")
# A new probe's kind is drawn by group first: Hypothesis favours the first
# indices of a long list, and would leave some kinds out.
PROBE_GROUPS = [["cwnd", "ssthresh", "rto", "srtt", "goodput", "queue", "drops", "utilization"], list(VC_PROBES),
                list(ERICA_PROBES), ["abr_queue", "vbr_queue", "cell_rate"]]

TCP_KEYS: dict[str, list[Any]] = {
    "variant": _enum("vanilla", "tahoe", "reno", "newreno", "sack"), "mss": BYTES, "window": BYTES,
    "window_scaling": _enum("auto", "on", "off"), "initial_cwnd": INTS, "initial_ssthresh": BYTES,
    "timer_tick": TIME, "initial_rto": TIME, "min_rto": TIME, "max_rto": TIME,
    "rto_timer": _enum("tick_aligned", "host_ticks", "exact"), "dupack_threshold": INTS, "delayed_ack": BOOLS,
    "rto_algorithm": _enum("ns2", "bsd44_lite", "rfc6298"),
    "delayed_ack_timeout": TIME, "delayed_ack_timer": _enum("tick_aligned", "host_ticks", "exact"),
    "delayed_ack_rule": _enum("bsd", "solaris"), "delayed_ack_max": [0, 1, 2, 16, 17, 2**32 - 1, 2**32, -1],
    "max_sack_blocks": [0, 1, 3, 4, 5, 255, 256], "stretch_ack": TIME, "backoff_reset": _enum("rtt_sample", "new_ack"),
    "freeze_window_in_fast_recovery": BOOLS, "keep_dupacks_on_timeout": BOOLS,
}
PORT_KEYS: dict[str, list[Any]] = {"buffer": CELLS, "drop_policy": DROP_POLICIES, "scheduler": SCHEDULERS,
                                   "classes": CLASSES, "shape": RATE, "clp_threshold": CELLS, "abr": ABR_SWITCHES}
GAINS = [1, 1.05, 1.15, 0.5, 0, -1, 1e308, NAN, INF]
KNOWN: dict[str, dict[str, list[Any]]] = {
    "root": {"name": STRINGS[:6], "description": STRINGS[:6],
             "metrics": [{}, {"efficiency_capacity": "left_by_onoff"}, {"efficiency_capacity": "left_by_measured"}],
             "tcp": [{}, {"variant": "sack", "mss": "9140 bytes"}], "probes": [[], [{}]]},
    "simulation": {"duration": TIME, "seed": [0, 1, 2**63, 2**64 - 1, 2**64, -1, 1.5, "1"],
                   "slot_phase": _enum("random", "aligned"), "clock_tolerance_ppm": [0, 1, 100, 1000, 1000.1, -1, NAN],
                   "max_cells_held": CELLS},
    "tcp": TCP_KEYS,
    "host": {"mtu": BYTES, "encapsulation": _enum("llc_snap", "null"), "fragmentation": _enum("rfc791", "berkeley"),
             "adapter": [{}, {"peak": "1 kbit/s"}, {"peak": "1 Tbit/s"}, {"buffer": "1 cells"},
                         {"buffer": "1236 cells", "overflow": "drop"}, {"overflow": "drop"},
                         {"buffer": "10 cells", "overflow": "block"}, {"peak": "1 kbit/s", "buffer": "1236 cells"}],
             "cpu": [{}, {"per_datagram": "253 us", "per_cell": "7.74 us"}, {"per_cell": "1 s"},
                     {"receive_per_datagram": "1 ms", "receive_queue": 0}, {"receive_queue": 1},
                     {"per_datagram": "1e6 s"}, {"receive_per_datagram": "1 ps", "receive_queue": 2**64 - 1}]},
    "adapter": {"peak": RATE, "buffer": CELLS, "overflow": _enum("block", "drop")},
    "cpu": {"per_datagram": TIME, "per_cell": TIME, "receive_per_datagram": TIME, "receive_queue": INTS},
    "port": PORT_KEYS,
    "class": {"buffer": CELLS, "drop_policy": DROP_POLICIES},
    "drop_policy": {"kind": _enum("tail_drop", "ppd", "epd", "selective_drop", "fba"), "threshold": CELLS,
                    "threshold_fraction": FRACS, "z": FRACS + [1e308], "keep_end_of_frame": BOOLS,
                    "excess_frames": [0, 1, 1.5, 100, -1, 1e308], "frame_cells": CELLS,
                    "compare": [">=", ">", "<", "=="], "keep_end_of_refused_frame": BOOLS},
    "scheduler": {"kind": _enum("strict_priority", "guaranteed_rate", "round_robin"), "gr": FRACS,
                  "class": _enum("cbr", "vbr", "abr", "ubr")},
    "link": {"rate": RATE, "delay": TIME, "loss": LOSSES},
    "loss": {"kind": _enum("bernoulli", "periodic"), "clr": FRACS, "one_in": INTS,
             "phase": _enum("random"), "direction": _enum("both", "forward", "backward")},
    "vc": {"category": _enum("cbr", "vbr", "abr", "ubr"), "simplex": BOOLS, "contract": CONTRACTS,
           "label": ["0/32", "0/0", "0/31", "255/65535", "256/32", "4095/65535", "0/65536", "32", "0/32/1", "a/b", ""],
           "upc": [{}, {"action": "tag"}, {"action": "discard"}, {"action": "bogus"}], "abr": ABR_VCS},
    "abr_vc": {"pcr": RATE, "mcr": RATE, "icr": RATE, "tcr": RATE, "nrm": INTS + [32, 256, 257],
               "mrm": INTS, "trm": TIME + ["781.25 us", "781.24 us", "100 ms"], "rif": FRACS + [1 / 16, 2],
               "rdf": FRACS + [1 / 16], "cdf": FRACS, "adtf": TIME + ["10 ms", "10.23 s"], "tbe": CELLS + ["16777215 cells"],
               "frtt": TIME + ["16.777215 s"]},
    "abr_switch": {"algorithm": _enum("erica_plus", "erica", "efci", "none"), "interval": TIME,
                   "interval_cells": INTS, "t0": TIME, "underload_gain": GAINS, "overload_gain": GAINS, "qdlf": FRACS,
                   "target_utilization": FRACS, "delta": FRACS + [1e308, -1], "max_min_fix": BOOLS,
                   "bidirectional_counting": BOOLS, "immediate_fair_share": BOOLS, "limit_sudden_increase": BOOLS,
                   "one_er_per_interval": BOOLS, "cap_at_abr_capacity": BOOLS, "active_vc_decay": FRACS,
                   "load_averaging": LOAD_AVERAGING, "threshold": CELLS},
    "load_averaging": {"method": _enum("ratio", "separate"), "alpha": FRACS},
    "contract": {"conformance": ["cbr.1", "vbr.1", "vbr.2", "vbr.3", "vbr.4"], "pcr": RATE, "cdvt": TIME,
                 "scr": RATE, "mbs": INTS, "bt": TIME},
    "upc": {"action": _enum("discard", "tag")},
    "app": {"kind": _enum("tcp_bulk", "udp_cbr", "udp", "onoff", "piecewise"), "start": TIME, "start_jitter": TIME,
            "bytes": BYTES + ["inf", "Inf"], "duration": TIME, "payload": BYTES + PAYLOAD_DIST,
            "interval": TIME + RATE_DIST, "count": INTS, "max_payload": BYTES,
            "record_arrivals": [{"from": "0 s", "count": 10}, {"from": "1 ms", "count": 0},
                                {"from": "1e6 s", "count": 2**32 - 1}, {"count": 5}, {"from": "0 s"}],
            "peak": RATE, "on": TIME, "off": TIME, "period": TIME, "duty": FRACS,
            "tcp": [{}, {"mss": "1 bytes"}, {"window": "1 bytes"}, {"variant": "vanilla", "delayed_ack": True}],
            "sources": [0, 1, 2, 9, 100, 10001, -1, 1.5, "9"], "rates": RATES, "intervals": INTERVALS, "cycle": BOOLS,
            "frame_cells": [0, 1, 8, 91, 2**32 - 1, 2**32, -1, "8 cells"]},
    "rates": {"fgn": FGN_TABLES, "file": ["nosuch.txt", "", "."], "unit": ["Mbit/s", "parsecs", ""]},
    "fgn": {"mean": RATE, "std": RATE, "peak": RATE, "hurst": FRACS + [0.8, 0.999999, 1e-9],
            "method": _enum("paxson", "davies_harte"), "length": INTS + [2**15, 2**15 + 1, 2**24, 2**24 + 2]},
    "intervals": {"uniform": [["20 ms", "100 ms"], ["1 ps", "1 ps"], ["1 ms", "1 ps"], ["0 s", "0 s"], ["1 ms"],
                              ["1 ms", "2 ms", "3 ms"], [], "1 ms", [1, 2]]},
    "tcp_of_app": TCP_KEYS,
    "record_arrivals": {"from": TIME, "count": INTS},
    "metrics": {"efficiency_capacity": _enum("link", "left_by_onoff", "left_by_measured")},
    "probe": {"kind": _enum(*PROBE_KINDS), "interval": TIME, "name": STRINGS[:4],
              "direction": _enum("forward", "backward")},
}


def table_kind(path: Path_) -> str | None:
    """Which kind of table the node at `path` is (None: not one of KNOWN)."""
    p = [x if isinstance(x, str) else 0 for x in path]
    n = len(p)
    if n == 0:
        return "root"
    last = p[-1]
    if n == 1:
        return {"simulation": "simulation", "tcp": "tcp", "metrics": "metrics"}.get(last)
    if n == 2 and p[1] == 0:
        return {"hosts": "host", "links": "link", "vcs": "vc", "apps": "app", "probes": "probe"}.get(p[0])
    if p[0] == "hosts" and n == 3:
        return {"adapter": "adapter", "cpu": "cpu"}.get(last)
    if p[0] == "switches":
        if n == 3 and last == "port" or n == 4 and p[2] == "port_to":
            return "port"
        if last == "abr" and (n == 4 and p[2] == "port" or n == 5 and p[2] == "port_to"):
            return "abr_switch"
        if last == "load_averaging" and p[-2] == "abr":
            return "load_averaging"
        if last == "drop_policy":
            return "drop_policy"
        if last == "scheduler":
            return "scheduler"
        if n >= 2 and p[-2] == "classes":
            return "class"
    if p[0] == "links" and n == 3 and last == "loss":
        return "loss"
    if p[0] == "vcs" and n == 3:
        return {"contract": "contract", "upc": "upc", "abr": "abr_vc"}.get(last)
    if p[0] == "apps" and n == 3:
        return {"tcp": "tcp_of_app", "record_arrivals": "record_arrivals", "rates": "rates",
                "intervals": "intervals"}.get(last)
    if p[0] == "apps" and n == 4 and p[2] == "rates" and last == "fgn":
        return "fgn"
    return None


# ----------------------------------------------------------------- context

@dataclass
class Context:
    """Names in a scenario's base point, for references that dangle or
    point at the wrong kind of thing."""

    hosts: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    vcs: list[str] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    ports: list[list[str]] = field(default_factory=list)
    vc_paths: list[list[str]] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    abr_vcs: list[str] = field(default_factory=list)  # VCs with ABR sources
    cell_apps: list[str] = field(default_factory=list)  # onoff and piecewise applications
    erica_ports: list[list[str]] = field(default_factory=list)  # ports running ERICA or ERICA+


def _context(rel: str) -> Context:
    import atmlab

    data = atmlab.load(SCENARIO_DIR / rel).data
    names = lambda table: [e["name"] for e in data.get(table, [])]  # noqa: E731
    ports = [list(link["between"]) for link in data.get("links", [])]
    ports += [list(reversed(p)) for p in ports]
    erica = []
    for sw in data.get("switches", []):
        for a, b in ports:
            if a == sw["name"]:  # a port_to table's abr replaces the port's
                abr = sw.get("port_to", {}).get(b, {}).get("abr", sw.get("port", {}).get("abr"))
                if abr is not None and abr.get("algorithm", "erica_plus") in ("erica", "erica_plus"):
                    erica.append([a, b])
    return Context(names("hosts"), names("switches"), names("vcs"), names("apps"), ports,
                   [list(vc["path"]) for vc in data.get("vcs", [])], list(TEMPLATES[rel].get("params", {})),
                   [v["name"] for v in data.get("vcs", []) if "abr" in v or v.get("category") == "abr"],
                   [a["name"] for a in data.get("apps", []) if a.get("kind") in ("onoff", "piecewise")], erica)


_CONTEXTS: dict[str, Context] = {}


def context(rel: str) -> Context:
    if rel not in _CONTEXTS:
        _CONTEXTS[rel] = _context(rel)
    return _CONTEXTS[rel]


def reference_places(tree: dict[str, Any]) -> list[tuple[Path_, str]]:
    """Places that name something else, and what they name (node, vc, app, switch)."""
    out: list[tuple[Path_, str]] = []
    for path, v in walk(tree):
        p = [x if isinstance(x, str) else 0 for x in path]
        if not isinstance(v, str):
            continue
        if p[:1] == ["vcs"] and len(p) == 4 and p[2] == "path":
            out.append((path, "node"))
        elif p[:1] == ["links"] and len(p) == 4 and p[2] == "between":
            out.append((path, "node"))
        elif p[:1] == ["metrics"] and len(p) == 3 and p[1] == "efficiency_link":
            out.append((path, "node"))
        elif p[:1] == ["probes"] and len(p) == 4 and p[2] == "port":
            out.append((path, "node"))
        elif p[:1] == ["apps"] and len(p) == 3 and p[2] == "vc":
            out.append((path, "vc"))
        elif p[:1] == ["probes"] and len(p) == 3 and p[2] == "app":
            out.append((path, "app"))
        elif p[:1] == ["probes"] and len(p) == 3 and p[2] == "vc":
            out.append((path, "vc"))
        elif p[:1] == ["vcs"] and len(p) == 4 and p[2:] == ["upc", "at"]:
            out.append((path, "switch"))
    return out


# --------------------------------------------------------------- mutators

def _pick(draw: Any, items: list[Any]) -> Any:
    return items[draw(st.integers(0, len(items) - 1))]


def _value_of_other_type(draw: Any, old: Any) -> Any:
    pools: dict[str, list[Any]] = {
        "str": ["abc", "", "1", "5 us", "true"],
        "int": [0, 1, -1, 42, 2**40],
        "float": [0.0, 1.5, -2.5, 1e9],
        "bool": [True, False],
        "list": [[], [1], ["a", "b"], [[]], [{}], ["a", 1, True]],
        "table": [{}, {"a": 1}, {"kind": "x"}, {"name": "x", "repeat": 2}],
    }
    kind = {str: "str", int: "int", float: "float", bool: "bool", list: "list", dict: "table"}.get(type(old), "")
    other = [k for k in pools if k != kind]
    return _pick(draw, pools[_pick(draw, other)])


def m_delete(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    places = walk(tree)
    if not places:
        return None
    path, _ = _pick(draw, places)
    return [Op("delete", "delete", path)]


def m_duplicate(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    lists = [(p, v) for p, v in walk(tree) if isinstance(v, list) and v]
    if not lists:
        return None
    path, lst = _pick(draw, lists)
    j = draw(st.integers(0, len(lst) - 1))
    return [Op("duplicate", "insert", path + (j + 1,), lst[j])]


def m_unknown_key(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    tables = [((), tree)] + [(p, v) for p, v in walk(tree) if isinstance(v, dict)]
    path, table = _pick(draw, tables)
    key = _pick(draw, [k for k in UNKNOWN_KEYS if k not in table])
    value = _pick(draw, [1, "x", True, 1.5, [], {}, "5 us", "{n}"])
    return [Op("unknown_key", "set", path + (key,), value)]


def m_retype(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    path, old = _pick(draw, walk(tree))
    return [Op("retype", "set", path, _value_of_other_type(draw, old))]


def _leaves(tree: dict[str, Any]) -> list[tuple[Path_, Any]]:
    return [(p, v) for p, v in walk(tree) if not isinstance(v, dict | list)]


def m_extreme(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    path, _ = _pick(draw, _leaves(tree) or walk(tree))
    return [Op("extreme", "set", path, _pick(draw, EXTREMES))]


_QUANTITY = re.compile(r"^\s*([-+0-9._eE]+)\s*(\S.*)?$")


def m_quantity(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    strings = [(p, v) for p, v in walk(tree) if isinstance(v, str)]
    path, old = _pick(draw, strings or _leaves(tree))
    how = draw(st.integers(0, 2))
    m = _QUANTITY.match(old) if isinstance(old, str) else None
    if how == 1 and m and m.group(2):
        value = f"{_pick(draw, NUMBERS)} {m.group(2)}".strip()
    elif how == 2 and m:
        value = f"{m.group(1)} {_pick(draw, UNITS)}".strip()
    else:
        value = _pick(draw, QUANTITY_STRINGS)
    return [Op("quantity", "set", path, value)]


def m_dangling(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    refs = reference_places(tree)
    port_to = [(p, k) for p, v in walk(tree) if p[-1:] == ("port_to",) and isinstance(v, dict) for k in v]
    if not refs and not port_to:
        return None
    if port_to and (not refs or draw(st.integers(0, 4)) == 0):
        path, key = _pick(draw, port_to)
        new = _pick(draw, ["nosuch", *ctx.hosts[:2], *ctx.switches, *ctx.vcs[:1], key.upper()])
        return [Op("dangling", "rename", path + (key,), new)]
    path, what = _pick(draw, refs)
    old = get(tree, path)
    wrong = {"node": ctx.vcs[:2] + ctx.apps[:1], "vc": ctx.hosts[:2] + ctx.apps[:1],
             "app": ctx.vcs[:1] + ctx.hosts[:1], "switch": ctx.hosts[:2] + ctx.vcs[:1]}[what]
    right_kind = {"node": ctx.hosts + ctx.switches, "vc": ctx.vcs, "app": ctx.apps, "switch": ctx.switches}[what]
    value = _pick(draw, ["nosuch", "", old.upper(), old + " ", " " + old, *wrong, *right_kind[:4], "{i}"])
    return [Op("dangling", "set", path, value)]


def m_string(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    strings = [(p, v) for p, v in walk(tree) if isinstance(v, str)]
    names = [(p, v) for p, v in strings if p[-1] == "name"]
    pool = names if names and draw(st.booleans()) else strings
    if not pool:
        return None
    path, _ = _pick(draw, pool)
    return [Op("string", "set", path, _pick(draw, STRINGS))]


def m_swap(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    pairs: list[tuple[Path_, list[Any]]] = []
    for p, v in [((), tree), *walk(tree)]:
        if isinstance(v, dict) and len(v) >= 2:
            pairs.append((p, list(v)))
        elif isinstance(v, list) and len(v) >= 2:
            pairs.append((p, list(range(len(v)))))
    if not pairs:
        return None
    path, keys = _pick(draw, pairs)
    a = draw(st.integers(0, len(keys) - 1))
    b = draw(st.integers(0, len(keys) - 2))
    b = b + 1 if b >= a else b
    return [Op("swap", "swap", path + (keys[a],), other=path + (keys[b],))]


APP_KEYS = {
    "tcp_bulk": ["bytes", "duration", "start", "start_jitter", "tcp"],
    "udp_cbr": ["payload", "interval", "count", "max_payload", "record_arrivals", "start", "start_jitter"],
    "udp": ["payload", "interval", "count", "bytes", "duration", "start", "start_jitter"],
    "onoff": ["peak", "on", "off", "period", "duty", "start", "start_jitter"],
    "piecewise": ["sources", "rates", "intervals", "cycle", "peak", "frame_cells", "start", "start_jitter"],
}


def m_known_key(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    tables = [(p, k) for p, v in [((), tree), *walk(tree)] if isinstance(v, dict) and (k := table_kind(p))]
    path, kind = _pick(draw, tables)
    keys = sorted(KNOWN[kind])
    app_kind = get(tree, path).get("kind") if kind == "app" else None
    if app_kind in APP_KEYS and draw(st.integers(0, 3)) > 0:  # mostly keys of the application's kind
        keys = APP_KEYS[app_kind]
    key = _pick(draw, keys)
    return [Op("known_key", "set", path + (key,), _pick(draw, KNOWN[kind][key]))]


def m_add_entry(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    """Appends a new entry, mostly well formed, to one of the arrays: the
    features the shipped scenarios do not use (probes, UDP and on/off
    sources, more VCs and hosts), with edge values."""
    nodes = ctx.hosts + ctx.switches
    interval = _pick(draw, ["100 us", "1 ms", "1 us", "10 ns", "1 ps", "0 s", "1e6 s", "0.2 ns", "1 s"])
    what = _pick(draw, ["probes", "apps", "vcs", "hosts", "probes", "apps", "links", "switches"])
    ops: list[Op] = []
    if what == "probes":
        abr = ctx.abr_vcs and draw(st.booleans())  # in a scenario with ABR, its probes half the time
        kind = _pick(draw, _pick(draw, PROBE_GROUPS[1:] if abr else PROBE_GROUPS))
        entry: dict[str, Any] = {"kind": kind, "interval": interval}
        target = "app" if kind in APP_PROBES else "vc" if kind in VC_PROBES else "port"
        if draw(st.integers(0, 4)) == 0:  # the wrong target, or none, or two
            target = _pick(draw, [t for t in ("app", "port", "vc") if t != target])
            if draw(st.booleans()):
                entry["port"] = _pick(draw, ctx.ports)
            if draw(st.integers(0, 3)) == 0:
                entry["direction"] = "backward"
        if target == "app":
            apps = ctx.cell_apps if kind == "cell_rate" and ctx.cell_apps and draw(st.integers(0, 3)) > 0 else ctx.apps
            entry["app"] = _pick(draw, apps + ["nosuch"]) if apps else "nosuch"
        elif target == "vc":
            entry["vc"] = _pick(draw, ctx.abr_vcs[:3] * 3 + ctx.vcs[-1:] + ["nosuch"])
            if draw(st.booleans()):
                entry["direction"] = _pick(draw, ["forward", "backward", "backward", "up", ""])
        else:
            ports = ctx.erica_ports if kind in ERICA_PROBES and ctx.erica_ports and draw(st.integers(0, 3)) > 0 \
                else ctx.ports
            entry["port"] = _pick(draw, ports + [["nosuch", nodes[0]], [nodes[0], nodes[0]], [nodes[0]]])
        if draw(st.booleans()):
            entry["name"] = _pick(draw, ["q", "", "cwnd:tcp0", "x" * 1000])
        ops.append(_append(tree, what, entry))
        if draw(st.integers(0, 3)) == 0:  # two probes, maybe of the same name
            ops.append(_append(tree, what, dict(entry, interval="1 ms"), 1))
    elif what == "apps":
        kind = _pick(draw, ["udp_cbr", "piecewise", "udp", "onoff", "tcp_bulk", "piecewise"])
        name = _pick(draw, ["fuzz", "fuzz", "fuzz", *ctx.apps[:1]])
        vcs = ctx.vcs
        if kind in ("onoff", "piecewise") and draw(st.integers(0, 3)) > 0:  # mostly a VC that carries cell sources
            vcs = [v for v in ctx.vcs if v not in ctx.abr_vcs] or ctx.vcs
        entry = {"kind": kind, "name": name, "vc": _pick(draw, vcs + vcs + ["nosuch"])}
        if kind in ("udp_cbr", "udp"):
            payloads = ["80 bytes", "0 bytes", "1 bytes", "65507 bytes", "65508 bytes", "9000 bytes", "20000 bytes"]
            entry["payload"] = _pick(draw, payloads + (PAYLOAD_DIST[:4] if kind == "udp" else []))
            entry["interval"] = _pick(draw, [interval] + (RATE_DIST[:4] if kind == "udp" else []))
            if draw(st.booleans()):
                entry["count"] = _pick(draw, [0, 1, 10, 2**64 - 1])
            if kind == "udp_cbr" and draw(st.integers(0, 3)) == 0:
                entry["record_arrivals"] = _pick(draw, KNOWN["app"]["record_arrivals"])
            if kind == "udp_cbr" and draw(st.integers(0, 3)) == 0:
                entry["max_payload"] = _pick(draw, ["9000 bytes", "0 bytes", "65507 bytes"])
            if kind == "udp" and draw(st.integers(0, 3)) == 0:
                entry[_pick(draw, ["bytes", "duration"])] = _pick(draw, ["1000 bytes", "1 ms", "0 s", "0 bytes"])
        elif kind == "piecewise":
            entry["rates"] = _pick(draw, [RATE_LISTS[0], RATE_LISTS[1], {"fgn": FGN}, {"fgn": FGN_TABLES[1]}] + RATES)
            entry["intervals"] = _pick(draw, INTERVALS[:4] + INTERVALS[8:10] + INTERVALS)
            if draw(st.booleans()):
                entry["sources"] = _pick(draw, [1, 2, 9, 100, 0, 10001])
            if draw(st.booleans()):
                entry["cycle"] = draw(st.booleans())
            if draw(st.integers(0, 3)) == 0:
                entry["frame_cells"] = _pick(draw, [8, 1, 0, 91])
            if draw(st.integers(0, 3)) == 0:
                entry["peak"] = _pick(draw, ["15 Mbit/s", "1 kbit/s", "155.52 Mbit/s", "1 Tbit/s"])
        elif kind == "onoff":
            entry["peak"] = _pick(draw, ["155.52 Mbit/s", "149.76 Mbit/s", "1 kbit/s", "1 Tbit/s", "1594 kbit/s"])
            if draw(st.booleans()):
                entry.update(on=interval, off=_pick(draw, ["1 ms", "0 s", "1 ps", "100 us"]))
            else:
                entry.update(period=interval, duty=_pick(draw, [0.5, 1, 0, 1e-12, 0.999999]))
        else:
            if draw(st.booleans()):
                entry["bytes"] = _pick(draw, ["1 bytes", "0 bytes", "inf", "1 GB", "100000 bytes"])
            if draw(st.booleans()):
                entry["tcp"] = _pick(draw, KNOWN["app"]["tcp"] + [{"variant": "sack", "window": "1 GB"}])
        if draw(st.booleans()):
            entry[_pick(draw, ["start", "start_jitter"])] = _pick(draw, ["0 s", "1 ms", "1 ps", "1e6 s", "1.999 ms"])
        ops.append(_append(tree, what, entry))
    elif what == "vcs":  # a second VC along (or against) an existing one
        path = list(_pick(draw, ctx.vc_paths))
        entry = {"name": _pick(draw, ["fuzz", "fuzz", *ctx.vcs[:1]]),
                 "path": _pick(draw, [path, path[::-1], path[::-1], [path[0]], [], path + path[:1]])}
        if draw(st.booleans()):
            entry["category"] = _pick(draw, ["cbr", "vbr", "abr", "ubr"])
        if draw(st.booleans()):
            entry["contract"] = _pick(draw, CONTRACTS[:6])
            if draw(st.booleans()):
                entry["upc"] = _pick(draw, [{}, {"action": "tag"}, {"at": path[1]}, {"at": path[-2], "action": "tag"}])
        if draw(st.booleans()):
            entry["simplex"] = True
        if draw(st.integers(0, 2)) == 0:  # an ABR VC: TM 4.0 sources and destinations
            entry["abr"] = _pick(draw, ABR_VCS[:9] + ABR_VCS)
        ops.append(_append(tree, what, entry))
        if draw(st.booleans()):
            app = {"kind": _pick(draw, ["tcp_bulk", "udp_cbr", "onoff", "piecewise"]), "name": "fuzz_app",
                   "vc": entry["name"]}
            if app["kind"] == "udp_cbr":
                app.update(payload=_pick(draw, ["80 bytes", "9000 bytes"]), interval=interval)
            elif app["kind"] == "onoff":
                app.update(peak=_pick(draw, ["10 Mbit/s", "155.52 Mbit/s"]), on=interval, off="1 ms")
            elif app["kind"] == "piecewise":
                app.update(rates=_pick(draw, RATE_LISTS[:3] + [{"fgn": FGN}]), intervals=_pick(draw, INTERVALS[:3]))
            ops.append(_append(tree, "apps", app))
    elif what == "hosts":  # a host on a new link to a switch
        name = _pick(draw, ["fuzz", "fuzz", *nodes[:1], ""])
        ops.append(_append(tree, "hosts", {"name": name}))
        if ctx.switches and draw(st.integers(0, 3)) > 0:
            ops.append(_append(tree, "links", {"between": [name, _pick(draw, ctx.switches)],
                                               "rate": _pick(draw, ["155.52 Mbit/s", "1 Tbit/s", "1 kbit/s"]),
                                               "delay": _pick(draw, ["5 us", "0 s", "1e6 s"])}))
    elif what == "links":
        a, b = _pick(draw, nodes), _pick(draw, nodes + ["nosuch"])
        ops.append(_append(tree, what, {"between": [a, b],
                                        "rate": _pick(draw, ["155.52 Mbit/s", "1 Tbit/s", "1 kbit/s"]),
                                        "delay": _pick(draw, ["5 us", "0 s", "1e6 s"])}))
    else:
        switches = [(j, e) for j, e in enumerate(tree.get("switches") or []) if isinstance(e, dict)] \
            if isinstance(tree.get("switches"), list) else []
        if switches and draw(st.integers(0, 3)) == 0:  # a virtual source / destination, or a bad value of it
            j, _ = _pick(draw, switches)
            ops.append(Op("add_entry", "set", ("switches", j, "vs_vd"), _pick(draw, [True, True, False, "yes", 1])))
            return ops
        if switches and draw(st.booleans()):  # an ABR controller on a switch's ports, or toward one neighbour
            j, sw = _pick(draw, switches)
            abr = _pick(draw, ABR_SWITCHES[:11] + ABR_SWITCHES)
            if draw(st.integers(0, 2)) == 0:
                to = _pick(draw, nodes + ["nosuch"])
                ops.append(Op("add_entry", "set", ("switches", j, "port_to"), {to: {"buffer": "1000 cells", "abr": abr}}))
            elif isinstance(sw.get("port"), dict):
                ops.append(Op("add_entry", "set", ("switches", j, "port", "abr"), abr))
            else:
                ops.append(Op("add_entry", "set", ("switches", j, "port"), {"buffer": "1000 cells", "abr": abr}))
            return ops
        entry = {"name": _pick(draw, ["fuzz", *nodes[:2], ""])}
        if draw(st.booleans()):
            entry["port"] = {"buffer": "10 cells"}
            if draw(st.booleans()):
                entry["port"]["abr"] = _pick(draw, ABR_SWITCHES[:5])
        ops.append(_append(tree, what, entry))
    return ops


def _append(tree: dict[str, Any], table: str, entry: Any, pending: int = 0) -> Op:
    """The op that appends `entry` to `tree[table]` (after `pending` entries
    appended by ops not applied yet); creates the array if need be."""
    current = tree.get(table)
    if not isinstance(current, list):
        return Op("add_entry", "set", (table,), [entry]) if not pending else \
            Op("add_entry", "insert", (table, pending), entry)
    return Op("add_entry", "insert", (table, len(current) + pending), entry)


REPEATABLE = ("hosts", "switches", "links", "vcs", "apps", "probes")
REPEATS = [0, 1, 2, 3, -1, 1.5, "2", "{n}", "{nosuch}", True, 2**31, 2**63, 10**4, [], {}]


def m_machinery(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    """[params], `repeat` and [sweep]."""
    params = tree.get("params") if isinstance(tree.get("params"), dict) else {}
    names = list(params) or ["n"]
    what = draw(st.integers(0, 5))
    if what == 0:  # repeat on an entry
        entries = [(t, j) for t in REPEATABLE if isinstance(tree.get(t), list) for j in range(len(tree[t]))
                   if isinstance(tree[t][j], dict)]
        if not entries:
            return None
        t, j = _pick(draw, entries)
        return [Op("machinery", "set", (t, j, "repeat"), _pick(draw, REPEATS))]
    if what == 1 and params:  # a parameter's value
        name = _pick(draw, names)
        value = _pick(draw, [*EXTREMES[:10], "", "x", [], {}, True, f"{{{name}}}", "{i}",
                             f"{{{_pick(draw, names)}}}", "1e30", "-5", "5 parsecs"])
        return [Op("machinery", "set", ("params", name), value)]
    if what == 2 and params:  # a parameter removed: its references dangle
        return [Op("machinery", "delete", ("params", _pick(draw, names)))]
    if what == 3:  # a parameter with a bad name
        bad = _pick(draw, ["i", "1x", "a-b", "", "n n", "é", "{n}"])
        if "params" in tree:
            return [Op("machinery", "set", ("params", bad), 1)]
        return [Op("machinery", "set", ("params",), _pick(draw, [{bad: 1}, [], "x", 5]))]
    # a [sweep]
    p = _pick(draw, names)
    q = _pick(draw, names)
    sweeps: list[Any] = [
        {}, [], "x", 5, {p: []}, {p: "x"}, {p: [1, 1]}, {p: [params.get(p, 1)]},
        {p: {"start": 0, "step": 1, "count": 2**31}}, {p: {"start": 1, "step": 0, "count": 3}},
        {p: {"start": NAN, "step": 1, "count": 2}}, {p: {"start": 1, "step": 1, "count": 0}},
        {p: {"start": 1, "step": 1, "count": 2, "unit": "cells", "x": 1}}, {p: {"start": 1, "count": 2}},
        {p: {"start": 1, "step": 1, "count": 10**5}}, {p: {"start": 1e308, "step": 1e308, "count": 3}},
        {"nosuch": [1, 2]}, {"i": [1, 2]}, {"switches[*].port.buffer": ["10 cells", "20 cells"]},
        {"hosts[99].mtu": ["1500 bytes"]}, {"simulation..x": [1]}, {"[0]": [1]}, {"apps[*]": [{}, {"a": 1}]},
        {"links[*].rate": ["1 Tbit/s", "1 kbit/s"]}, {"simulation.duration": ["1 ms", "1e7 s"]},
        {"simulation.seed": [1, -1]}, {"zip": {"g": {p: [1, 2], "simulation.seed": [1]}}}, {"zip": []},
        {"zip": {"g": {}}}, {"zip": {"g": {p: [1, 2]}}, p: [3]}, {p: [1, 2], q: [1, 2]},
        {"name": ["a", "b"]}, {"params.n": [1, 2]}, {"sweep.x": [1]}, {"hosts[0]": [[], {}]},
        {"hosts[-1].mtu": [1]}, {"hosts[*].name": ["same", "same2"]}, {p: [[1], {"a": 1}]},
        {"vcs[*].abr": [{}, {"nrm": 2}]}, {"vcs[*].abr.nrm": [2, 0]}, {"vcs[0].category": ["abr", "ubr"]},
        {"switches[*].port.abr": [{"algorithm": "erica"}, {"algorithm": "efci", "threshold": "10 cells"}]},
        {"switches[*].port.abr.algorithm": ["erica_plus", "none"]}, {"apps[*].rates": [["1 Mbit/s"], {"fgn": FGN}]},
        {"apps[*].intervals": ["1 ms", {"uniform": ["1 ms", "2 ms"]}]},
        {"metrics.efficiency_capacity": ["left_by_measured", "link"]},
    ]
    if "sweep" in tree and isinstance(tree["sweep"], dict) and tree["sweep"] and draw(st.booleans()):
        key = _pick(draw, list(tree["sweep"]))
        value = _pick(draw, [[], "x", [1, "x"], {"start": 0, "step": 1, "count": 2**31}, [NAN], [2**64], [""]])
        return [Op("machinery", "set", ("sweep", key), value)]
    return [Op("machinery", "set", ("sweep",), _pick(draw, sweeps))]


# Values at the edges of what the format accepts (docs/scenario-format.md),
# by key name: several of them together still make a valid scenario, so they
# reach the simulation itself (overflows, huge counts, degenerate timers).
T_EDGE = ["1 ps", "1e6 s", "1 ns"]
EDGE: dict[str, list[Any]] = {
    "seed": [0, 2**64 - 1], "slot_phase": ["aligned"], "clock_tolerance_ppm": [1000, 1e-9],
    "max_cells_held": ["1 cells", "18446744073709551615 cells", "1000 cells"],
    "variant": ["vanilla", "tahoe", "reno", "newreno", "sack"], "mss": ["1 bytes", "2 bytes", "100 bytes"],
    "window": ["1 bytes", "1073741824 bytes", "65536 bytes"], "window_scaling": ["on", "off"],
    "initial_cwnd": [0, 1, 2**32 - 1], "initial_ssthresh": ["1 bytes", "1073741824 bytes"],
    "timer_tick": T_EDGE, "initial_rto": T_EDGE, "min_rto": T_EDGE, "max_rto": T_EDGE,
    "rto_timer": ["exact", "host_ticks"], "dupack_threshold": [1, 2**32 - 1], "delayed_ack": [True],
    "rto_algorithm": ["bsd44_lite", "rfc6298"],
    "delayed_ack_timeout": T_EDGE, "delayed_ack_timer": ["exact", "host_ticks"], "max_sack_blocks": [1, 4],
    "stretch_ack": T_EDGE, "backoff_reset": ["new_ack"], "freeze_window_in_fast_recovery": [True],
    "keep_dupacks_on_timeout": [True],
    "mtu": ["28 bytes", "41 bytes", "48 bytes", "65527 bytes"], "encapsulation": ["null"],
    "fragmentation": ["berkeley"], "peak": ["1 kbit/s", "1 Tbit/s"],
    "buffer": ["1 cells", "2 cells", "18446744073709551615 cells"], "overflow": ["drop", "block"],
    "per_datagram": T_EDGE, "per_cell": T_EDGE, "receive_per_datagram": T_EDGE, "receive_queue": [0, 1, 2**64 - 1],
    "shape": ["1 kbit/s", "1 Tbit/s"], "clp_threshold": ["0 cells", "1 cells"],
    "rate": ["1 kbit/s", "1 Tbit/s"], "delay": ["0 s", "1 ps", "1e6 s"],
    "category": ["cbr", "vbr", "abr", "ubr"], "label": ["0/32", "255/65535"],
    "start": ["1 ps", "1e6 s", "1.999999999999 ms"], "start_jitter": ["1 ps", "1e6 s", "2 ms"],
    "bytes": ["1 bytes", "18446744073709551615 bytes"], "duration": ["1 ps", "1e6 s"],
    "payload": ["0 bytes", "1 bytes", "65507 bytes", {"exponential": "1 bytes"},
                {"bivalue": ["0 bytes", "65507 bytes"], "p": 1e-9}],
    "interval": ["1 ps", "1 ns", "1e6 s", {"exponential": "1 ps"}, {"bivalue": ["1 ps", "1e6 s"], "p": 0.5}],
    "count": [0, 1, 2**64 - 1], "max_payload": ["0 bytes", "65507 bytes"],
    "on": T_EDGE, "off": ["0 s", "1 ps", "1e6 s"], "period": T_EDGE, "duty": [1e-12, 1],
    "efficiency_capacity": ["left_by_onoff", "left_by_measured"],
    "drop_policy": [d for d in DROP_POLICIES[:22] if d.get("z", 0) >= 0 and d.get("excess_frames", 0) >= 0],
    "scheduler": SCHEDULERS[:7], "loss": LOSSES[:3] + LOSSES[6:8] + LOSSES[9:11], "contract": CONTRACTS[:6],
    "upc": [{"action": "tag"}, {}], "classes": CLASSES[:6],
    "adapter": [{"peak": "1 kbit/s", "buffer": "1 cells", "overflow": "drop"}, {"buffer": "1 cells"},
                {"peak": "1 Tbit/s", "buffer": "18446744073709551615 cells", "overflow": "block"}],
    "cpu": [{"per_datagram": "1e6 s"}, {"per_cell": "1 ps", "receive_per_datagram": "1 ps", "receive_queue": 0},
            {"per_cell": "1e6 s", "receive_queue": 2**64 - 1}],
    "record_arrivals": [{"from": "0 s", "count": 2**32 - 1}, {"from": "1e6 s", "count": 1}],
    # ABR VCs (TM 4.0 ranges) and switch ports
    "abr": [{}, {"nrm": 2, "mrm": 1, "trm": "781.25 us"}, {"nrm": 256, "tbe": "1 cells", "frtt": "16.777215 s"},
            {"pcr": "1 kbit/s", "rif": 1, "rdf": 1, "cdf": 1}, {"algorithm": "erica", "target_utilization": 1},
            {"algorithm": "efci", "threshold": "1 cells"}, {"algorithm": "none"}],
    "pcr": ["1 kbit/s", "1 Tbit/s"], "mcr": ["0 cells/s", "1 kbit/s"], "icr": ["1 cells/s", "1 kbit/s"],
    "tcr": ["1 cells/s", "1 Tbit/s"], "nrm": [2, 256], "mrm": [1, 2], "trm": ["781.25 us", "100 ms"],
    "rif": [1e-300, 1], "rdf": [1e-300, 1], "cdf": [0, 1], "adtf": ["10 ms", "10.23 s"],
    "tbe": ["1 cells", "16777215 cells"], "frtt": ["0 s", "1 ps", "16.777215 s"],
    "algorithm": ["erica_plus", "erica", "none"], "interval_cells": [0, 1, 2**32 - 1], "t0": T_EDGE,
    "underload_gain": [1, 1e308], "overload_gain": [1, 1e308], "qdlf": [0, 1], "target_utilization": [1e-9, 1],
    "delta": [0, 1e308], "max_min_fix": [False], "bidirectional_counting": [False], "immediate_fair_share": [True],
    "limit_sudden_increase": [False], "one_er_per_interval": [False], "cap_at_abr_capacity": [False],
    "active_vc_decay": [1e-9, 1], "load_averaging": [{"method": "ratio", "alpha": 1e-9}, {"method": "separate", "alpha": 1}],
    "threshold": ["0 cells", "1 cells", "4294967295 cells"], "alpha": [1e-9, 1],
    # piecewise applications, FGN rates
    "sources": [1, 10000], "cycle": [True], "frame_cells": [1, 2**32 - 1],
    "rates": [["0 bit/s"], ["1 bit/s"], ["0 bit/s", "149.76 Mbit/s"], {"fgn": FGN | {"hurst": 1e-9}},
              {"fgn": FGN | {"hurst": 0.999999, "method": "davies_harte"}}, {"fgn": FGN | {"length": 2}}],
    "intervals": ["1 ps", "1e6 s", {"uniform": ["1 ps", "1e6 s"]}, {"uniform": ["1 ps", "1 ps"]}],
    "hurst": [1e-9, 0.999999], "length": [2, 2**24], "mean": ["1 bit/s", "1 Tbit/s"], "std": ["1 bit/s", "1 Tbit/s"],
    "direction": ["backward", "forward"],
    "tcp": [{"window": "1 bytes", "mss": "1 bytes"}, {"variant": "sack", "window": "1073741824 bytes",
                                                       "window_scaling": "on", "max_sack_blocks": 4}],
}


def m_edge(draw: Any, tree: dict[str, Any], ctx: Context) -> list[Op] | None:
    tables = [(p, k) for p, v in [((), tree), *walk(tree)] if isinstance(v, dict) and (k := table_kind(p))]
    tables = [(p, k) for p, k in tables if set(KNOWN[k]) & set(EDGE)]
    path, kind = _pick(draw, tables)
    keys = sorted(set(KNOWN[kind]) & set(EDGE))
    app_kind = get(tree, path).get("kind") if kind == "app" else None
    if app_kind in APP_KEYS:
        keys = [k for k in APP_KEYS[app_kind] if k in EDGE]
    key = _pick(draw, keys)
    return [Op("edge", "set", path + (key,), _pick(draw, EDGE[key]))]


MUTATORS = {
    "delete": m_delete, "duplicate": m_duplicate, "unknown_key": m_unknown_key, "retype": m_retype,
    "extreme": m_extreme, "quantity": m_quantity, "dangling": m_dangling, "string": m_string, "swap": m_swap,
    "known_key": m_known_key, "add_entry": m_add_entry, "machinery": m_machinery, "edge": m_edge,
}
# Hypothesis draws small indices more often: the first kinds come up most.
WEIGHTS = {"known_key": 5, "add_entry": 4, "edge": 3, "quantity": 3, "machinery": 3, "extreme": 2, "dangling": 2,
           "duplicate": 2, "unknown_key": 2, "retype": 2, "string": 2, "delete": 2, "swap": 1}
KINDS = [k for k, w in WEIGHTS.items() for _ in range(w)]


@dataclass(frozen=True)
class Case:
    scenario: str  # relative to SCENARIO_DIR
    ops: tuple[Op, ...]

    @property
    def is_text(self) -> bool:
        return bool(self.ops) and self.ops[0].action == "text"

    def describe(self) -> str:
        return "; ".join(op.describe() for op in self.ops)


@st.composite
def cases(draw: Any, rel: str) -> Case:
    ctx = context(rel)
    if draw(st.integers(0, 9)) == 0:  # one change to the TOML text
        text = TEXTS[rel]
        what = _pick(draw, ["truncate", "insert", "duplicate_line", "delete_line"])
        n = len(text) if what in ("truncate", "insert") else len(text.splitlines())
        pos = draw(st.integers(0, max(n - 1, 0)))
        s = _pick(draw, ["[", "]", "\"", "=", "\x00", "{", "\n", "[[hosts]]\n", "x = 1\n", "'''", "#", "\\", "\ufeff"])
        return Case(rel, (Op("toml_text", "text", (), (what, pos, s if what == "insert" else "")),))
    tree = copy.deepcopy(TEMPLATES[rel])
    ops: list[Op] = []
    # Mostly 1 to 3 mutations of any kind; in one case out of five, 2 to 4
    # values at the edges of the valid range, which together still run.
    edges = draw(st.integers(0, 4)) == 0
    count = draw(st.integers(2, 4)) if edges else [1, 1, 1, 1, 1, 2, 2, 2, 3, 3][draw(st.integers(0, 9))]
    for _ in range(count):
        mutator = m_edge if edges else MUTATORS[_pick(draw, KINDS)]
        new = mutator(draw, tree, ctx) or m_retype(draw, tree, ctx) or []
        for op in new:
            try:
                apply(tree, op)
            except (Inapplicable, LookupError):  # its place was taken away by an earlier mutation
                continue
            ops.append(op)
    if not ops:
        ops.append(m_retype(draw, tree, ctx)[0])
    return Case(rel, tuple(ops))


# ----------------------------------------------------------------- worker

_TIME = re.compile(r"^\s*\+?([0-9_]*\.?[0-9_]*)(?:[eE]([+-]?[0-9]+))?\s*(ps|ns|us|µs|ms|s)\s*$")


def seconds(value: Any) -> Decimal | None:
    """A time quantity in seconds, or None if it is not one."""
    if not isinstance(value, str):
        return None
    m = _TIME.match(value)
    if not m or not m.group(1).replace("_", "").strip("."):
        return None
    try:
        num = Decimal(f"{m.group(1).replace('_', '')}e{m.group(2) or 0}")
    except InvalidOperation:
        return None
    shift = {"ps": -12, "ns": -9, "us": -6, "µs": -6, "ms": -3, "s": 0}[m.group(3)]
    try:
        return num.scaleb(shift)
    except ArithmeticError:  # beyond Decimal's exponent range: no valid time
        return None


def capped(loaded: Any) -> tuple[dict[str, Any] | None, str]:
    """The scenario with a valid duration above 2 ms capped at 2 ms (None
    if it needs no cap), and what the duration was."""
    import atmlab

    sim = loaded.data.get("simulation")
    duration = sim.get("duration") if isinstance(sim, dict) else None
    s = seconds(duration)
    if s is None or not CAP_S < s <= MAX_TIME_S:
        return None, repr(duration)
    template = copy.deepcopy(loaded.template)
    raw = template["simulation"]["duration"]
    m = re.fullmatch(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", raw) if isinstance(raw, str) else None
    params = template.get("params")
    if m and isinstance(params, dict) and m.group(1) in params:
        params[m.group(1)] = CAP
    else:
        template["simulation"]["duration"] = CAP
    try:
        ok = atmlab.load(template).data["simulation"]["duration"] == CAP
    except atmlab.ScenarioError:
        ok = False
    if not ok:  # the parameter is used elsewhere too: run the expanded base point
        template = copy.deepcopy(loaded.data)
        template["simulation"]["duration"] = CAP
    return template, repr(duration)


def execute(case: Case, workdir: str, note: Any = None) -> dict[str, Any]:
    """Runs one case: load, validate, expand the sweep, run the base point.
    `note` is given the scenario that will run (duration capped) before it
    runs, for the report of a case that hangs or kills its process."""
    import atmlab

    t0 = time.perf_counter()
    out: dict[str, Any] = {"stage": "mutate"}
    target: Any
    try:
        if case.is_text:
            target = Path(workdir) / Path(case.scenario).name
            target.write_text(mutated_text(case.scenario, case.ops[0]), encoding="utf-8")
        else:
            target = mutated_template(case.scenario, case.ops)
    except Inapplicable as e:
        return {"outcome": "inapplicable", "message": str(e), "elapsed": 0.0}
    final: Any = target
    try:
        out["stage"] = "load"
        loaded = atmlab.load(target)
        cap, out["duration"] = capped(loaded)
        if cap is not None:
            target = final = cap
        if note is not None:
            note(final if isinstance(final, dict) else {"toml_text": final.read_text(encoding="utf-8")})
        out["stage"] = "validate"
        atmlab.validate(target)
        out["stage"] = "sweep"
        atmlab.Sweep(target)
        out["stage"] = "run"
        atmlab.run(target)
        out["outcome"] = OK
    except atmlab.ScenarioError as e:
        out.update(type="ScenarioError", message=e.message, path=e.path)
        if e.path or WHOLE_FILE.match(e.message):
            out["outcome"] = SCENARIO_ERROR
        else:
            out["outcome"] = "failure"
            out["why"] = "ScenarioError without a key path"
    except atmlab.LimitError as e:
        out.update(outcome=LIMIT_ERROR, type="LimitError", message=str(e))
    except BaseException as e:  # noqa: BLE001 - every other exception is what the fuzz looks for
        name = type(e).__name__ if type(e).__module__ in ("builtins", "atmlab.errors") else \
            f"{type(e).__module__}.{type(e).__name__}"
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno} in {tb[-1].name}" if tb else ""
        out.update(outcome="failure", type=name, message=str(e), where=where,
                   traceback="".join(traceback.format_exception(e))[-3000:])
    out["elapsed"] = time.perf_counter() - t0
    if out["outcome"] == "failure" or out.get("path") == "":
        if isinstance(final, Path):
            out["final_text"] = final.read_text(encoding="utf-8")
        else:
            out["final"] = final
    return out


def _worker_main(conn: Any, memory_mb: int) -> None:
    import resource
    import tempfile
    import warnings

    import atmlab  # noqa: F401 - imported before the limits apply

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    warnings.simplefilter("error")  # as pytest.ini_options.filterwarnings
    with tempfile.TemporaryDirectory() as workdir:
        while True:
            try:
                case = conn.recv()
            except EOFError:
                return
            if case is None:
                return
            conn.send(execute(case, workdir, lambda final: conn.send({"note": final})))


class Pool:
    """Worker processes that run cases, each with a wall-time limit: a worker
    that hangs is killed and replaced, one that dies is replaced."""

    def __init__(self, jobs: int, timeout: float) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.timeout = timeout
        self.workers = [self._spawn() for _ in range(jobs)]

    def _spawn(self) -> list[Any]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, args=(child, MEMORY_MB), daemon=True)
        proc.start()
        child.close()
        return [proc, parent]

    def _replace(self, i: int) -> None:
        proc, conn = self.workers[i]
        if proc.is_alive():
            proc.kill()
        proc.join()
        conn.close()
        self.workers[i] = self._spawn()

    def map(self, items: list[Case]) -> list[dict[str, Any]]:
        results: list[dict[str, Any] | None] = [None] * len(items)
        todo = list(range(len(items)))[::-1]
        busy: dict[int, tuple[int, float]] = {}  # worker -> (item, started)
        notes: dict[int, dict[str, Any]] = {}  # item -> the scenario it runs, until its result comes
        while todo or busy:
            for w in range(len(self.workers)):
                if w not in busy and todo:
                    i = todo.pop()
                    try:
                        self.workers[w][1].send(items[i])
                    except OSError:  # the worker died between two cases: a new one gets it
                        self._replace(w)
                        self.workers[w][1].send(items[i])
                    busy[w] = (i, time.monotonic())
            conns = {self.workers[w][1]: w for w in busy}
            deadline = min(started for _, started in busy.values()) + self.timeout
            ready = wait(list(conns), timeout=max(0.0, deadline - time.monotonic()))
            for conn in ready:
                w = conns[conn]
                i, started = busy[w]
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    proc = self.workers[w][0]
                    proc.join(5)
                    busy.pop(w)
                    results[i] = {"outcome": "failure", "type": "crash", "why": "crash",
                                  "message": f"the worker process died (exit code {proc.exitcode})",
                                  "elapsed": time.monotonic() - started, **notes.pop(i, {})}
                    self._replace(w)
                    continue
                if "note" in message:  # the scenario about to run; the result follows
                    note = message["note"]
                    notes[i] = {"final_text": note["toml_text"]} if "toml_text" in note else {"final": note}
                    continue
                busy.pop(w)
                notes.pop(i, None)
                results[i] = message
            now = time.monotonic()
            for w, (i, started) in list(busy.items()):
                if now - started >= self.timeout:
                    busy.pop(w)
                    results[i] = {"outcome": "failure", "type": "hang", "why": "hang",
                                  "message": f"no result after {self.timeout:g} s of wall time",
                                  "elapsed": now - started, **notes.pop(i, {})}
                    self._replace(w)
        return [r for r in results if r is not None]

    def close(self) -> None:
        for proc, conn in self.workers:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc, conn in self.workers:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()
            conn.close()


# ------------------------------------------------------------------ report

def normalized(message: str) -> str:
    """A message with its numbers and quoted values blanked: the cause."""
    message = re.sub(r"^\S+\.toml: |^<dict>: ", "", message)
    where = re.search(r" at (\S+\.rs:\d+)", message)
    text = message[:where.start()] if where else message
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "N", text)
    return text[:300] + (f" at {where.group(1)}" if where else "")


def signature(result: dict[str, Any], ops: tuple[Op, ...]) -> tuple[str, str, tuple[str, ...]]:
    places = tuple(sorted({p for op in ops for p in op.places()}))
    return result.get("type", "?"), normalized(result.get("message", "")), places


# Failures the fuzz has found, run first on every run whatever Hypothesis
# draws (each was a hang, a panic or a key-less error).
PINNED: dict[str, list[tuple[Op, ...]]] = {
    "ubr-gr/lan.toml": [(Op("extreme", "set", ("switches", 0, "repeat"), 2**31 - 1),),
                         (Op("machinery", "set", ("params", "n"), 2**63 - 1),)],
    "examples/host_peak_rate.toml": [(Op("machinery", "set", ("sweep", "peak"),
                                         {"start": 0, "step": 1, "count": 2**31}),)],
    "expert/expert.toml": [(Op("add_entry", "insert", ("apps", 1), {
        "kind": "udp_cbr", "name": "fuzz", "vc": "vc3", "payload": "0 bytes", "interval": "1 ps"}),)],
    "nsource_lan.toml": [(Op("unknown_key", "set", ("",), 1),)],
}


def cases_for(rel: str, n: int) -> list[Case]:
    """The pinned cases and `n` distinct cases drawn by Hypothesis (which
    repeats some) for one scenario."""
    found: list[Case] = [Case(rel, ops) for ops in PINNED.get(rel, [])]
    known: set[str] = {repr(c) for c in found}
    n += len(found)

    def collect(case: Case) -> None:
        key = repr(case)
        if key not in known and len(found) < n:
            known.add(key)
            found.append(case)

    config = settings(
        max_examples=2 * n, database=None, deadline=None, phases=[Phase.generate], derandomize=FUZZ_SEED is None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.large_base_example],
    )
    test = given(cases(rel))(collect)
    if FUZZ_SEED is not None:
        test = seed(int(FUZZ_SEED) * 1000 + SCENARIO_FILES.index(rel))(test)
    config(test)()
    return found


def minimize(pool: Pool, failing: list[tuple[Case, dict[str, Any]]]) -> list[tuple[Case, dict[str, Any]]]:
    """Each failure reduced to the fewest of its mutations that still give
    the same exception and message."""
    trials: list[tuple[int, Case]] = []
    for k, (case, _) in enumerate(failing):
        if case.is_text or len(case.ops) == 1:
            continue
        sizes = [1] if failing[k][1].get("type") == "hang" else range(1, len(case.ops))
        for size in sizes:
            for subset in combinations(case.ops, size):
                trials.append((k, Case(case.scenario, subset)))
    trials = trials[:MINIMIZE_BUDGET]
    results = pool.map([c for _, c in trials]) if trials else []
    best = list(failing)
    for (k, case), result in zip(trials, results, strict=True):
        want = failing[k][1]
        same = result.get("type") == want.get("type") and normalized(result.get("message", "")) == \
            normalized(want.get("message", ""))
        if same and len(case.ops) < len(best[k][0].ops):
            best[k] = (case, result)
    return best


def suspicious(case: Case, result: dict[str, Any]) -> list[str]:
    """What an accepted one-mutation case did that the format says is an
    error, or that looks wrong."""
    if result["outcome"] != OK or case.is_text or len(case.ops) != 1:
        return []
    ctx = context(case.scenario)
    valid = set(ctx.hosts + ctx.switches + ctx.vcs + ctx.apps)
    out = []
    for op in case.ops:
        under = [p for p in op.path if isinstance(p, str)]
        if op.kind == "unknown_key" and not ({"params", "port_to", "classes"} & set(under[:-1])) \
                and not (under[-1] == "repeat" and len(op.path) == 3 and op.path[0] in REPEATABLE) \
                and op.path[:1] not in (("params",), ("sweep",)):
            out.append(f"unknown key accepted: {generic(op.path)}")
        elif op.kind == "duplicate" and isinstance(op.value, dict) and "name" in op.value:
            out.append(f"same name twice accepted: {generic(op.path[:-1])}")
        elif op.kind == "dangling" and op.value not in valid:
            out.append(f"dangling name accepted: {generic(op.path)} = {_short(op.value)}")
        elif op.kind == "string" and op.path[-1] == "name" and op.value in ("", " ", "\n", "a\x00b"):
            out.append(f"name {_short(op.value)} accepted: {generic(op.path)}")
    return out


@dataclass
class Tally:
    """What the module's tests found, for the summary at the end."""

    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    failures: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = field(default_factory=dict)
    no_path: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    slow: list[tuple[float, str, str, str]] = field(default_factory=list)
    by_mutator: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    seconds: Counter[str] = field(default_factory=Counter)


@pytest.fixture(scope="module")
def pool():
    p = Pool(JOBS, TIMEOUT)
    yield p
    p.close()


@pytest.fixture(scope="module")
def tally(tmp_path_factory):
    t = Tally()
    yield t
    total: Counter[str] = Counter()
    for counts in t.outcomes.values():
        total.update(counts)
    out = tmp_path_factory.mktemp("fuzz") / "fuzz_summary.json"
    summary = {
        "examples": EXAMPLES, "cases": sum(total.values()), "outcomes": dict(total),
        "per_scenario": {k: dict(v) for k, v in t.outcomes.items()},
        "per_mutator": {k: dict(v) for k, v in t.by_mutator.items()},
        "seconds_per_outcome": {k: round(v, 1) for k, v in t.seconds.items()},
        "failures": list(t.failures.values()),
        "scenario_errors_without_path": dict(t.no_path.most_common()),
        "accepted_suspicious": dict(t.accepted.most_common()),
        "slowest": [dict(zip(("seconds", "scenario", "outcome", "mutations"), s, strict=True))
                    for s in sorted(t.slow, reverse=True)[:50]],
    }
    out.write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=repr), encoding="utf-8")
    print(f"\nfuzz: {sum(total.values())} cases: "
          + ", ".join(f"{k} {v}" for k, v in sorted(total.items())) + f"; {len(t.failures)} distinct failures")
    print(f"fuzz: summary in {out}")


@pytest.mark.parametrize("rel", SCENARIO_FILES)
def test_fuzz_shipped_scenario(rel, pool, tally, tmp_path):
    n = max(1, math.ceil(EXAMPLES / len(SCENARIO_FILES)))
    found = cases_for(rel, n)
    results = pool.map(found)
    counts: Counter[str] = Counter()
    failing: dict[tuple[str, str, tuple[str, ...]], list[tuple[Case, dict[str, Any]]]] = defaultdict(list)
    for case, result in zip(found, results, strict=True):
        outcome = result["outcome"]
        counts[outcome if outcome != "failure" else f"failure:{result.get('why') or result['type']}"] += 1
        for op in case.ops:
            tally.by_mutator[op.kind][outcome] += 1
        if result.get("path") == "":
            message = result["message"] if result["message"].startswith("missing field") else \
                normalized(result["message"])
            tally.no_path[f"{result['outcome']}: {message}"] += 1
        for s in suspicious(case, result):
            tally.accepted[s] += 1
        tally.seconds[outcome] += result["elapsed"]
        if result["elapsed"] > SLOW_S:
            tally.slow.append((round(result["elapsed"], 2), rel, outcome, case.describe()))
        if outcome == "failure":
            failing[signature(result, case.ops)].append((case, result))
    tally.outcomes[rel].update(counts)

    firsts = [min(group, key=lambda cr: (len(cr[0].ops), len(repr(cr[0])))) for group in failing.values()]
    reduced = minimize(pool, firsts)
    distinct: dict[tuple[str, str, tuple[str, ...]], tuple[Case, dict[str, Any], int]] = {}
    for (case, result), group in zip(reduced, failing.values(), strict=True):
        key = signature(result, case.ops)
        if key in distinct:
            distinct[key] = (distinct[key][0], distinct[key][1], distinct[key][2] + len(group))
        else:
            distinct[key] = (case, result, len(group))

    lines = []
    for k, (key, (case, result, hits)) in enumerate(sorted(distinct.items(), key=lambda kv: -kv[1][2])):
        if k == 40:
            lines.append(f"... and {len(distinct) - k} more in fuzz_summary.json")
        if "final_text" in result:
            repro = tmp_path / f"failure{k}.toml"
            repro.write_text(result["final_text"], encoding="utf-8")
        else:
            repro = tmp_path / f"failure{k}.json"
            repro.write_text(json.dumps(result.get("final", mutated_template(rel, case.ops)), indent=1,
                                        ensure_ascii=False), encoding="utf-8")
        entry = {"scenario": rel, "type": result["type"], "message": result.get("message", "")[:2000],
                 "stage": result.get("stage"), "where": result.get("where"), "cases": hits,
                 "mutations": [op.describe() for op in case.ops], "places": list(key[2]), "repro": str(repro)}
        tally.failures[(rel, *key[:2], key[2])] = entry
        if k >= 40:
            continue
        lines.append(f"[{k}] {result['type']} ({hits} cases, stage {result.get('stage')}): "
                     f"{result.get('message', '')[:500]}\n"
                     f"    mutations: {case.describe()}\n"
                     + (f"    raised at: {result['where']}\n" if result.get("where") else "")
                     + f"    repro: {repro}")
    summary = f"{rel}: {sum(counts.values())} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"\n{summary}")
    if distinct:
        pytest.fail(f"{summary}\n{len(distinct)} distinct failures:\n" + "\n".join(lines), pytrace=False)
