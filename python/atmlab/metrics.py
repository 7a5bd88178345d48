"""The metrics a run reports, as the core defines them.

The Rust result type (``atmlab_net::sim::RunResult``) derives a JSON Schema,
exported once by ``_core.result_schema()``; this module reads it and is the
only place that knows what a result's numbers are called:

* run-level metrics: the top-level numbers of a result (``efficiency``,
  ``cell_loss_ratio``, ``cell_hops``, ...), without the fields that identify
  the run (marked ``x-identity``: scenario, seed, replication, duration);
* nested numbers, flattened with dots: ``frames.lost``,
  ``efficiency_basis.max_goodput_bps``;
* the numbers of each row of a per-item table, under the row's key (the
  field marked ``x-key``): ``connections.tcp0.goodput_bps``,
  ``ports.sw0->sw1.max_queue``, ``upc.pvc.discarded``.

Each name has the description written in the Rust doc comment, for tables,
axes and reports.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import _core

_NUMBER = {"number", "integer"}


@dataclass(frozen=True)
class Field:
    """One field of the result schema."""

    name: str
    kind: str  # "number", "object" (nested), "table" (rows with a key), "other"
    description: str
    ref: str | None = None  # the definition of a nested object or a table's rows
    identity: bool = False
    key: bool = False


@functools.cache
def schema() -> dict[str, Any]:
    """The JSON Schema of a run's result."""
    return dict(json.loads(_core.result_schema()))


def _types(prop: dict[str, Any]) -> set[str]:
    t = prop.get("type", [])
    return set(t) if isinstance(t, list) else {t}


def _ref(prop: dict[str, Any]) -> str | None:
    ref = prop.get("$ref") or next((p.get("$ref") for p in prop.get("anyOf", []) if "$ref" in p), None)
    return ref.rsplit("/", 1)[-1] if ref else None


def fields(definition: str | None = None) -> list[Field]:
    """The fields of the result (or of one of its definitions), in order."""
    s = schema()
    node = s if definition is None else s["$defs"][definition]
    out = []
    for name, prop in node.get("properties", {}).items():
        types, ref = _types(prop), _ref(prop)
        items_ref = _ref(prop.get("items", {})) if "array" in types else None
        if types and types - {"null"} <= _NUMBER:
            kind = "number"
        elif items_ref and any(f.key for f in fields(items_ref)):
            kind, ref = "table", items_ref
        elif ref:
            kind = "object"
        else:
            kind = "other"
        out.append(Field(name, kind, prop.get("description", ""), ref, bool(prop.get("x-identity")),
                         bool(prop.get("x-key"))))
    return out


@functools.cache
def run_metrics() -> tuple[str, ...]:
    """The run-level metrics, in the order the result declares them."""
    return tuple(f.name for f in fields() if f.kind == "number" and not f.identity)


@functools.cache
def identity() -> tuple[str, ...]:
    """The fields that identify a run (scenario, seed, replication, duration)."""
    return tuple(f.name for f in fields() if f.identity)


def flatten(result: dict[str, Any]) -> dict[str, float | None]:
    """Every scalar number of a result, under its dotted name (see the
    module's docs). Identity fields, booleans, strings and lists of values
    (time series) are left out."""
    return dict(_flatten(result, None, ""))


def _flatten(node: dict[str, Any], definition: str | None, prefix: str) -> Iterator[tuple[str, float | None]]:
    for f in fields(definition):
        if f.identity or f.name not in node:
            continue
        value = node[f.name]
        if f.kind == "number":
            yield prefix + f.name, _number(value)
        elif f.kind == "object" and isinstance(value, dict):
            yield from _flatten(value, f.ref, f"{prefix}{f.name}.")
        elif f.kind == "table" and isinstance(value, list):
            key = next(k.name for k in fields(f.ref) if k.key)
            for row in value:
                yield from _flatten(row, f.ref, f"{prefix}{f.name}.{row[key]}.")


def _number(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    x = float(v)
    return None if math.isnan(x) else x


def describe(name: str) -> str:
    """The description of a metric (``efficiency``, ``ports.X.max_queue``),
    from the Rust doc comment; "" if unknown."""
    parts = name.split(".")
    definition: str | None = None
    i = 0
    while i < len(parts):
        f = next((x for x in fields(definition) if x.name == parts[i]), None)
        if f is None:
            return ""
        if f.kind in ("number", "other"):
            return f.description
        definition = f.ref
        i += 2 if f.kind == "table" else 1  # a table's next part is the row's key
    return ""
