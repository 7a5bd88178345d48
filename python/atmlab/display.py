"""Numbers and names as people read them: in the terminal, the HTML report,
the figures and the headers of exported tables.

* Rates and times get an SI prefix chosen once per column, so that a column
  reads ``125.1`` under ``Mbit/s`` rather than ``1.251e+08``; counts (cells,
  bytes, frames) are whole numbers with thousands separators (``50,000``,
  not ``5e+04``); other numbers have four significant digits.
* A metric's name becomes words with its unit: ``tcp_goodput_bps`` is "TCP
  goodput" in bit/s, ``connections.tcp0.goodput_bps`` "goodput of TCP
  connection tcp0".

The values stored and exported stay in base units (:mod:`atmlab.quantity`,
:mod:`atmlab.metrics`); only what is shown is scaled. No pandas here: the
command line uses it on every run. One value with a prefix of its own (a
run's summary, the notebook views) is :func:`atmlab.fmt.si`'s job; this
module scales whole columns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from . import metrics

# Units shown with an SI prefix (the scenario format's spelling: "us", not "µs").
# Bytes are "bytes" in a table (a count, with thousands separators) and "B"
# on a figure's axis (kB, MB: :func:`axis_unit`).
_PREFIXED = {"bit/s": ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")),
             "s": ((1.0, ""), (1e-3, "m"), (1e-6, "u"), (1e-9, "n")),
             "B": ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))}
_COUNTS = {"cells", "bytes", ""}

# The run-level metrics in words (the others are read from their names).
WORDS: dict[str, str] = {
    "efficiency": "efficiency",
    "fairness": "fairness",
    "tcp_goodput_bps": "TCP goodput",
    "cell_loss_ratio": "cell loss ratio",
    "switch_cells_offered": "cells offered to switch ports",
    "switch_cells_dropped": "cells dropped at switch ports",
    "link_cells_lost": "cells lost on links",
    "cell_hops": "cell-hops",
    "events": "events",
}

# What a probe samples, in words (its unit is the series' own).
SERIES: dict[str, str] = {
    "cwnd": "congestion window",
    "ssthresh": "slow-start threshold",
    "rto": "retransmission timeout",
    "srtt": "smoothed round-trip time",
    "goodput": "goodput",
    "queue": "queue",
    "drops": "cells dropped",
    "utilization": "utilization",
    "abr_queue": "ABR queue",
    "vbr_queue": "VBR queue",
    "hp_rate": "VBR and CBR rate",
    "load_factor": "load factor",
    "abr_capacity": "target ABR capacity",
    "fair_share": "fair share",
    "acr": "allowed cell rate",
    "er": "explicit rate",
    "cell_rate": "cell rate",
}

# What a row of each per-item table of a result is.
_TABLES = {"connections": "TCP connection", "udp_flows": "UDP flow", "cell_sources": "cell source",
           "abr": "ABR source", "abr_ports": "ABR port", "upc": "policed VC", "ports": "port", "hosts": "host"}

# Quantities with physical bounds, by unit: a confidence interval is clipped to them.
BOUNDS: dict[str, tuple[float, float]] = {"fraction": (0.0, 1.0), "bit/s": (0.0, math.inf), "s": (0.0, math.inf),
                                          "bytes": (0.0, math.inf), "cells": (0.0, math.inf)}


def bounds(metric: str) -> tuple[float, float]:
    """The range a metric's values lie in (``(0, 1)`` for a fraction, ``(0,
    inf)`` for rates, times and counts of cells, bytes or other things;
    unbounded for what may be negative)."""
    u = metrics.unit(metric)
    if u in BOUNDS:
        return BOUNDS[u]
    if u == "" and metrics.field(metric) is not None:  # plain counts and ratios: never negative
        return (0.0, math.inf)
    return (-math.inf, math.inf)


def words(metric: str) -> str:
    """A metric's name in words, without its unit."""
    if metric in WORDS:
        return WORDS[metric]
    parts = metric.split(".")
    field = _field_words(parts[-1])
    if len(parts) >= 3 and parts[0] in _TABLES:
        return f"{field} of {_TABLES[parts[0]]} {'.'.join(parts[1:-1])}"
    if len(parts) >= 2:  # a nested number: frames.lost is "frames lost"
        return f"{' '.join(p.replace('_', ' ') for p in parts[:-1])} {field}"
    return field


def series_words(kind: str) -> str:
    """What a probe of `kind` samples, in words: ``cwnd`` is "congestion
    window"."""
    return SERIES.get(kind, kind.replace("_", " "))


def series_title(name: str, kind: str, target: str) -> str:
    """A probe's series in words: ``cwnd:tcp0`` is "congestion window of
    tcp0", ``queue:sw0->sw1`` "queue at port sw0->sw1", ``acr:vc0:forward``
    "allowed cell rate of VC vc0"; a name of the user's own comes first
    ("tcp0 window: congestion window of tcp0")."""
    what = series_words(kind)
    if target and "->" in target:
        what += f" at port {target}"
    elif target and kind in ("acr", "er"):  # "vc0:forward"
        vc, _, direction = target.partition(":")
        what += f" of VC {vc}" + (f" ({direction})" if direction not in ("", "forward") else "")
    elif target:
        what += f" of {target}"
    return what if name in (f"{kind}:{target}", kind, "") else f"{name}: {what}"


def axis_unit(unit: str | None) -> str:
    """A unit as a figure's axis shows it (with :func:`scale`'s prefix):
    bytes as "B" (800 kB rather than 800,000 bytes), a fraction as none."""
    unit = unit or ""
    return {"bytes": "B", "fraction": ""}.get(unit, unit)


def _field_words(name: str) -> str:
    for suffix in ("_bps", "_bytes", "_s"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.replace("_", " ")


def scale(values: Iterable[Any], unit: str | None) -> tuple[float, str]:
    """The factor and the unit to show `values` (in base `unit`) with: one
    SI prefix for the whole column, chosen by its largest magnitude."""
    unit = unit or ""
    if unit not in _PREFIXED:
        return 1.0, "" if unit == "fraction" else unit
    finite = [abs(float(v)) for v in values if _is_number(v) and math.isfinite(float(v)) and float(v) != 0]
    if not finite:
        return 1.0, unit
    top = max(finite)
    for factor, prefix in _PREFIXED[unit]:
        if top >= factor * 0.9995:  # 999.96 kbit/s rounds to 1000: show it as 1 Mbit/s
            return 1 / factor, prefix + unit
    factor, prefix = _PREFIXED[unit][-1]
    return 1 / factor, prefix + unit


def number(v: Any, digits: int = 4) -> str:
    """One number: a whole number with thousands separators, else `digits`
    significant digits (no exponent above 1e-4); "" for a missing value."""
    if v is None or isinstance(v, str):
        return "" if v is None else v
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not _is_number(v):
        return str(v)
    x = float(v)
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def column(values: Sequence[Any], unit: str | None, digits: int = 4) -> tuple[list[str], str]:
    """A column's values as text, scaled to one SI prefix, and the unit shown."""
    factor, shown = scale(values, unit)
    return [number(float(v) * factor, digits) if _is_number(v) else number(v) for v in values], shown


def header(name: str, unit: str | None) -> str:
    """``name (unit)``, or just the name when the unit is a plain number's."""
    return f"{name} ({unit})" if unit and unit != "fraction" else name


def metric_header(metric: str, shown_unit: str) -> str:
    return header(words(metric), shown_unit)


def _is_number(v: Any) -> bool:
    if v is None or isinstance(v, bool | str):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True
