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
axes and reports, and a unit (:func:`unit`): ``"bit/s"``, ``"s"``,
``"bytes"`` or ``"cells"`` (the base units of :mod:`atmlab.quantity`, so
that swept values and metrics read alike), ``"fraction"`` for a share
between 0 and 1 (as the probes' series say), ``""`` for any other plain
number (a load factor, counts of frames, datagrams, segments or events).

A row's key may hold dots (a node named ``10.0.0.1``): a name is read as
``table.<key>.field``, the field being the last part, since rows have no
nested numbers.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Iterator
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


def _find(name: str) -> Field | None:
    """The field of the result schema that `name` refers to: a number, or
    another value (a name, a list), identity fields included."""
    parts = name.split(".")
    definition: str | None = None
    i = 0
    while i < len(parts):
        f = next((x for x in fields(definition) if x.name == parts[i]), None)
        if f is None:
            return None
        if f.kind in ("number", "other"):
            return f if i == len(parts) - 1 else None
        if f.kind == "table":
            if len(parts) - i < 3:  # the table, a row's key (dots and all), the row's field
                return None
            return next((x for x in fields(f.ref) if x.name == parts[-1]), None)
        definition = f.ref
        i += 1
    return None


def field(name: str) -> Field | None:
    """The field of the result schema a metric name (``efficiency``,
    ``frames.lost``, ``ports.sw0->sw1.max_queue``) refers to; None if the
    name is not one of the numbers :func:`flatten` gives."""
    f = _find(name)
    return f if f is not None and f.kind == "number" and not f.identity else None


def describe(name: str) -> str:
    """The description of a metric (``efficiency``, ``ports.X.max_queue``),
    from the Rust doc comment; "" if unknown."""
    f = _find(name)
    return f.description if f is not None else ""


# The units of the result's numbers, by field name, where the name's suffix
# does not say it (``_bps``: bit/s, ``_s``: seconds, ``_bytes``: bytes).
# test_metrics_store checks that every number of the schema has one: a new
# field of the core needs its unit here.
_UNITS: dict[str, str] = {
    # cells, including RM cells (a count of cells, or a queue in cells)
    **dict.fromkeys((
        "switch_cells_offered", "switch_cells_dropped", "link_cells_lost", "cell_hops", "dead_cells",
        "cells_sent", "cells_received", "data_cells", "frms_in_rate", "frms_out_of_rate", "brms_received",
        "brms_sent", "brms_overwritten", "brms_lowered", "brms_ci_set", "cells_waiting", "max_cells_waiting",
        "efci_marked", "cells", "tagged", "discarded",
        "cells_in", "cells_out", "dropped", "dropped_overflow", "dropped_frame", "dropped_clp", "lost_on_link",
        "max_queue", "mean_queue"), "cells"),
    "mss": "bytes",
    "bytes_delivered": "bytes",
    # shares between 0 and 1
    **dict.fromkeys(("efficiency", "fairness", "cell_loss_ratio", "payload_fraction", "utilization",
                     "frame_error_ratio", "dead_cell_ratio"), "fraction"),
    # plain numbers: a ratio above 1 is possible, or a count of something else than cells
    **dict.fromkeys((
        "load_factor", "active_vcs", "intervals", "adtf_cuts", "crm_cuts", "sources", "events",
        "sent", "delivered", "lost", "in_flight", "discarded_by_receivers", "segments_sent",
        "retransmitted_segments", "timeouts", "fast_retransmits", "dupacks_received", "received", "fragments_sent",
        "arrivals_recorded", "frames_received", "frames_discarded", "datagrams_sent", "adapter_dropped",
        "receive_dropped"), ""),
}
_SUFFIXES = (("_bps", "bit/s"), ("_bytes", "bytes"), ("_s", "s"))


def unit(name: str) -> str | None:
    """The unit of a metric: ``"bit/s"``, ``"s"``, ``"bytes"``, ``"cells"``,
    ``"fraction"`` or ``""`` (see the module's docs), for ``efficiency``,
    ``abr.vc0:forward.mean_acr_bps`` (bit/s), ``abr_ports.sw0->sw1.load_factor``
    (""); None if `name` is not a metric, or a number whose unit this module
    does not know yet."""
    f = field(name)
    if f is None:
        return None
    if f.name in _UNITS:
        return _UNITS[f.name]
    return next((u for suffix, u in _SUFFIXES if f.name.endswith(suffix)), None)


def units(names: Iterable[str]) -> dict[str, str]:
    """The units of those of `names` that are metrics with a known unit."""
    out = {}
    for name in names:
        u = unit(name)
        if u is not None:
            out[name] = u
    return out
