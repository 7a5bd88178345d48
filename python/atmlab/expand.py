"""Templates and sweeps: from one scenario file to fully specified runs.

A scenario may carry, besides the network itself:

* ``[params]``: named values. Any string in the scenario that is exactly
  ``"{name}"`` is replaced by the value (keeping its type: ``repeat =
  "{n}"`` becomes an integer); a string that contains ``{name}`` among other
  text gets the value's text (``"{buffer} cells"``).
* ``repeat = N`` in an entry of ``hosts``, ``switches``, ``links``, ``vcs``,
  ``apps`` or ``probes``: the entry stands for ``N`` copies, in which ``{i}``
  is the copy's index (0 to N-1). ``repeat`` on an application is a
  *bundle*: N identical copies of one application class.
* ``[sweep]``: the values to run. A key is a parameter name or a key path
  into the scenario (``"switches[*].port.buffer"``); a value is a list, or a
  range ``{ start, step, count }`` (the CM Toolset's incremental
  measurement; ``unit = "cells"`` appends a unit). Keys inside a
  ``[sweep.zip.NAME]`` table advance together (their lists have equal
  lengths). The points of a sweep are the cross product of its dimensions,
  in the order they are written, the first varying slowest.

Expansion happens here, in Python; the core only ever sees fully specified
scenarios. Each has a stable hash (SHA-256 of its canonical JSON), so a run
is identified by ``(scenario_hash, seed, replication)``.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .errors import ScenarioError, out_of_range

REPEATABLE = ("hosts", "switches", "links", "vcs", "apps", "probes")
# What a template may expand to. Beyond, a slip (count = 10000000, repeat =
# 2147483647) would hang the expansion or exhaust memory before anything ran.
MAX_REPEAT = 100_000  # copies of one entry
MAX_POINTS = 10_000  # points of one sweep
RESERVED = {"i"}
_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\*|\d+)\]|\.")


@dataclass(frozen=True)
class Dimension:
    """One axis of a sweep: one or more (zipped) keys and their values."""

    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]  # per step, one value per key


@dataclass(frozen=True)
class Point:
    """One fully specified scenario of a sweep."""

    index: int
    params: dict[str, Any]
    scenario: dict[str, Any]
    scenario_hash: str
    origins: "Origins"

    def locate(self, path: str) -> str:
        """Maps a key path of the expanded scenario back to the file."""
        return locate(self.origins, path)


Origins = dict[str, list[tuple[int, int | None]]]


def locate(origins: Origins, path: str) -> str:
    """Maps a key path of an expanded scenario back to the entry written in
    the file (``hosts[7].mtu`` -> ``hosts[2].mtu (copy i=5)``)."""
    m = re.match(r"^(\w+)\[(\d+)\](.*)$", path)
    if not m or m.group(1) not in origins:
        return path
    table, index, rest = m.group(1), int(m.group(2)), m.group(3)
    origin = origins[table]
    if index >= len(origin):
        return path
    entry, copy_i = origin[index]
    where = f"{table}[{entry}]{rest}"
    return where if copy_i is None else f"{where} (copy i={copy_i})"


_PLAIN_KEY = re.compile(r"[\w-]+")


def key_path(where: str, key: str) -> str:
    """`where` and `key` joined as the core writes key paths: a key that is
    empty or would read as more than one is quoted (``a.""``, ``a."x.y"``)."""
    k = key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)
    return f"{where}.{k}" if where else k


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def scenario_hash(scenario: dict[str, Any]) -> str:
    """A stable 16-hex-digit hash of a fully specified scenario."""
    import hashlib  # here (and below, and decimal in _range): `atmlab run` starts without them

    return hashlib.sha256(canonical_json(scenario).encode()).hexdigest()[:16]


def sweep_hash(points: list[tuple[dict[str, Any], str]], seed: int) -> str:
    """The identity of a sweep: a stable 16-hex-digit hash of its points
    (each point's swept values and scenario hash, in order) and its master
    seed. Two sweeps are the same experiment exactly when it is equal,
    whatever their names or files say."""
    import hashlib

    doc = {"points": [[params, h] for params, h in points], "seed": seed}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:16]


def is_path(key: str) -> bool:
    return "." in key or "[" in key


# ---------------------------------------------------------------- sweeps

def _range(source: str, where: str, spec: dict[str, Any]) -> list[Any]:
    allowed = {"start", "step", "count", "unit"}
    unknown = set(spec) - allowed
    if unknown:
        raise ScenarioError(source, f"{where}.{sorted(unknown)[0]}", "unknown key of a range (start, step, count, unit)")
    try:
        start, step, count = spec["start"], spec["step"], spec["count"]
    except KeyError as e:
        raise ScenarioError(source, where, f"a range needs start, step and count (missing {e.args[0]})") from None
    problem = out_of_range(count, 1, MAX_POINTS)
    if problem:
        raise ScenarioError(source, f"{where}.count", problem)
    for k, v in (("start", start), ("step", step)):
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise ScenarioError(source, f"{where}.{k}", "must be a number")
    # Exact decimal steps: 0.1 + 0.2 stays 0.3.
    from decimal import Decimal, InvalidOperation

    try:
        d0, ds = Decimal(str(start)), Decimal(str(step))
    except InvalidOperation:
        raise ScenarioError(source, where, "start and step must be numbers") from None
    values: list[Any] = []
    for k in range(count):
        v = d0 + ds * k
        num: Any = int(v) if v == v.to_integral_value() and isinstance(start, int) and isinstance(step, int) else float(v)
        unit = spec.get("unit")
        values.append(f"{num} {unit}" if unit else num)
    return values


def _values(source: str, where: str, raw: Any) -> list[Any]:
    if isinstance(raw, list):
        if not raw:
            raise ScenarioError(source, where, "an empty list sweeps nothing")
        return raw
    if isinstance(raw, dict):
        return _range(source, where, raw)
    raise ScenarioError(source, where, "a sweep value is a list or a range { start, step, count }")


def dimensions(source: str, sweep: dict[str, Any], params: dict[str, Any]) -> list[Dimension]:
    """The dimensions of a ``[sweep]`` table, in the order written."""
    dims: list[Dimension] = []
    seen: set[str] = set()

    def check_key(key: str, where: str) -> None:
        if key in seen:
            raise ScenarioError(source, where, f"'{key}' is swept twice")
        seen.add(key)
        if not is_path(key) and key not in params:
            raise ScenarioError(source, where, f"'{key}' is neither a parameter of [params] nor a key path "
                                "(like \"switches[*].port.buffer\")")

    for key, raw in sweep.items():
        if key == "zip":
            groups = _table(source, "sweep.zip", raw, "must be a table of zip groups ([sweep.zip.NAME])")
            for group, table in groups.items():
                where = f"sweep.zip.{group}"
                if not _table(source, where, table, "a zip group must be a table of swept keys"):
                    raise ScenarioError(source, where, "a zip group needs at least one key")
                keys, columns = [], []
                for k, v in table.items():
                    check_key(k, f"{where}.{k}")
                    keys.append(k)
                    columns.append(_values(source, f"{where}.{k}", v))
                lengths = {len(c) for c in columns}
                if len(lengths) != 1:
                    raise ScenarioError(source, where, f"zipped keys need lists of equal length (got {sorted(lengths)})")
                dims.append(Dimension(tuple(keys), tuple(zip(*columns, strict=True))))
            continue
        where = f"sweep.{key}"
        check_key(key, where)
        dims.append(Dimension((key,), tuple((v,) for v in _values(source, where, raw))))
    return dims


# ------------------------------------------------------------- templating

def _parse_path(source: str, path: str) -> list[str | int]:
    parts: list[str | int] = []
    pos = 0
    for m in _PATH.finditer(path):
        if m.start() != pos:
            break
        pos = m.end()
        if m.group(1):
            parts.append(m.group(1))
        elif m.group(2):
            parts.append(-1 if m.group(2) == "*" else int(m.group(2)))
    if pos != len(path) or not parts or not isinstance(parts[0], str):
        raise ScenarioError(source, f"sweep.{path}", "is not a key path like \"switches[0].port.buffer\"")
    return parts


def set_path(source: str, data: Any, path: str, value: Any) -> None:
    """Sets every place `path` names (``[*]`` is every element)."""
    parts = _parse_path(source, path)

    def walk(node: Any, i: int, here: str) -> None:
        part = parts[i]
        last = i == len(parts) - 1
        if isinstance(part, str):
            if not isinstance(node, dict):
                raise ScenarioError(source, f"sweep.{path}", f"{here or 'the scenario'} is not a table")
            if last:
                node[part] = copy.deepcopy(value)
                return
            node = node.setdefault(part, {})
            walk(node, i + 1, f"{here}.{part}" if here else part)
            return
        if not isinstance(node, list):
            raise ScenarioError(source, f"sweep.{path}", f"{here} is not an array")
        indices = range(len(node)) if part == -1 else [part]
        if part != -1 and part >= len(node):
            raise ScenarioError(source, f"sweep.{path}", f"{here} has {len(node)} entries, no [{part}]")
        for j in indices:
            if last:
                node[j] = copy.deepcopy(value)
            else:
                walk(node[j], i + 1, f"{here}[{j}]")

    walk(data, 0, "")


def _substitute(source: str, node: Any, env: dict[str, Any], where: str, defer: frozenset[str] = frozenset()) -> Any:
    """Replaces ``{name}`` references by `env` values; names in `defer` are
    left for a later pass (the ``{i}`` of a repeated entry)."""
    if isinstance(node, dict):
        return {k: _substitute(source, v, env, key_path(where, k), defer) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(source, v, env, f"{where}[{j}]", defer) for j, v in enumerate(node)]
    if not isinstance(node, str) or "{" not in node:
        return node

    def unknown(name: str) -> ScenarioError:
        hint = " ({i} is only defined in an entry with repeat)" if name in RESERVED else ""
        return ScenarioError(source, where, f"refers to an unknown parameter '{name}'{hint}")

    whole = _REF.fullmatch(node)
    if whole:
        name = whole.group(1)
        if name in defer:
            return node
        if name not in env:
            raise unknown(name)
        return copy.deepcopy(env[name])

    def text(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in defer or (name not in env and where.endswith(".command")):
            # An exec app's {HOST} is a host's address, for `atmlab emulate`.
            return m.group(0)
        if name not in env:
            raise unknown(name)
        return str(env[name])

    return _REF.sub(text, node)


def _expand_repeats(
    source: str, data: dict[str, Any], env: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, list[tuple[int, int | None]]]]:
    out = dict(data)
    origins: dict[str, list[tuple[int, int | None]]] = {}
    for table in REPEATABLE:
        entries = data.get(table)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise ScenarioError(source, table, "must be an array of tables ([[" + table + "]])")
        expanded: list[Any] = []
        origin: list[tuple[int, int | None]] = []
        for j, entry in enumerate(entries):
            where = f"{table}[{j}]"
            if not isinstance(entry, dict) or "repeat" not in entry:
                expanded.append(_substitute(source, entry, env, where))
                origin.append((j, None))
                continue
            entry = _substitute(source, entry, env, where, defer=frozenset(RESERVED))
            n = entry.pop("repeat")
            problem = out_of_range(n, 0, MAX_REPEAT)
            if problem:
                raise ScenarioError(source, f"{where}.repeat", problem)
            for i in range(n):
                expanded.append(_substitute(source, entry, {**env, "i": i}, where))
                origin.append((j, i))
        out[table] = expanded
        origins[table] = origin
    for key, value in data.items():
        if key not in REPEATABLE:
            out[key] = _substitute(source, value, env, key_path("", key))
    return out, origins


def _table(source: str, where: str, value: Any, what: str) -> dict[str, Any]:
    """`value` if it is a table; else a ScenarioError at `where` saying `what` it must be."""
    if not isinstance(value, dict):
        raise ScenarioError(source, where, f"{what}, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
             type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _params(source: str, template: dict[str, Any]) -> dict[str, Any]:
    """The scenario's ``[params]`` (empty if none)."""
    return _table(source, "params", template.get("params", {}), "must be a table of named values ([params])")


def sweep_dimensions(source: str, template: dict[str, Any]) -> list[Dimension]:
    """The dimensions of the scenario's ``[sweep]`` (none if it has none)."""
    sweep = _table(source, "sweep", template.get("sweep", {}), "must be a table of swept keys ([sweep])")
    return dimensions(source, sweep, _params(source, template))


def _check_seed(source: str, data: dict[str, Any]) -> None:
    """The results database stores the seed as a signed 64-bit integer."""
    simulation = data.get("simulation")
    if isinstance(simulation, dict) and "seed" in simulation:
        problem = out_of_range(simulation["seed"], 0)
        if problem:
            raise ScenarioError(source, "simulation.seed", problem)


def instantiate(
    source: str, template: dict[str, Any], assignment: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, list[tuple[int, int | None]]]]:
    """The fully specified scenario of one sweep point."""
    data = copy.deepcopy({k: v for k, v in template.items() if k not in ("params", "sweep")})
    params = dict(_params(source, template))
    for name in params:
        if name in RESERVED:
            raise ScenarioError(source, f"params.{name}", f"'{name}' is reserved for the index of repeated entries")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ScenarioError(source, f"params.{name}", "a parameter name is a letter or _ followed by letters, digits or _")
    for key, value in assignment.items():
        if is_path(key):
            set_path(source, data, key, value)
        else:
            params[key] = value
    data, origins = _expand_repeats(source, data, params)
    _check_seed(source, data)
    return data, origins


def points(source: str, template: dict[str, Any]) -> list[Point]:
    """Every point of the scenario's sweep (one point if it has none)."""
    dims = sweep_dimensions(source, template)
    n_points = math.prod(len(d.values) for d in dims)
    if n_points > MAX_POINTS:
        raise ScenarioError(source, "sweep", f"{n_points} points, more than the {MAX_POINTS} a sweep may have")
    result: list[Point] = []
    for index, combo in enumerate(itertools.product(*(d.values for d in dims))):
        assignment: dict[str, Any] = {}
        for dim, values in zip(dims, combo, strict=True):
            assignment.update(zip(dim.keys, values, strict=True))
        scenario, origins = instantiate(source, template, assignment)
        result.append(Point(index, assignment, scenario, scenario_hash(scenario), origins))
    hashes = [p.scenario_hash for p in result]
    if len(set(hashes)) != len(hashes):
        dup = next(h for h in hashes if hashes.count(h) > 1)
        same = [p.params for p in result if p.scenario_hash == dup]
        raise ScenarioError(source, "sweep", f"two points give the same scenario: {same[0]} and {same[1]} "
                            "(is a swept parameter unused?)")
    return result


def iter_param_names(template: dict[str, Any], source: str = "<dict>") -> Iterator[str]:
    """The swept keys, in order (zip groups flattened); a ScenarioError if
    the ``[sweep]`` is malformed."""
    for dim in sweep_dimensions(source, template):
        yield from dim.keys
