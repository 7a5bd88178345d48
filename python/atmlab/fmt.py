"""Numbers for people: SI prefixes and a sensible precision.

One small formatter for the run summary (:mod:`atmlab.summary`), the
notebook views and ``atmlab run --all-metrics``: ``si(40_700_000,
"bit/s")`` is ``"40.7 Mbit/s"``, ``si(0.00893, "s")`` is ``"8.93 ms"``.
It knows the units of :mod:`atmlab.metrics` (``bit/s``, ``s``, ``bytes``,
``cells``, ``fraction``, ``""``) through :func:`metric`. Tables, whose
columns share one prefix, are :mod:`atmlab.display`'s.
"""

from __future__ import annotations

import math

# Prefixes from pico to tera; "µ" as the scenario format writes it.
_PREFIXES = {-12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T"}

NA = "n/a"


def _digits(x: float, digits: int) -> str:
    """`x` (0 < |x| < 1000 after scaling) to `digits` significant digits,
    trailing zeros kept (they say how precise the number is)."""
    if x == 0:
        return "0"
    exp = math.floor(math.log10(abs(x)))
    text = f"{x:.{max(0, digits - 1 - exp)}f}"
    if abs(float(text)) >= 10.0 ** (exp + 1):  # 0.99996 rounded up to 1.000: one decimal fewer
        text = f"{x:.{max(0, digits - 2 - exp)}f}"
    return text


def si(value: float | None, unit: str = "", digits: int = 3, trim: bool = False) -> str:
    """`value` with an SI prefix chosen so that the number is in [1, 1000),
    to `digits` significant digits: ``si(8.93e6, "bit/s")`` is ``"8.93
    Mbit/s"``, ``si(2.5e-5, "s")`` ``"25.0 µs"``, ``si(0)`` ``"0"``. None
    (and NaN) is ``"n/a"``. Values beyond the prefixes keep the largest or
    smallest one. With `trim`, trailing zeros go (for values as a scenario
    states them: ``si(155.52e6, "bit/s", 6, trim=True)`` is ``"155.52
    Mbit/s"``, ``si(1e8, "bit/s", 6, trim=True)`` ``"100 Mbit/s"``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    x = float(value)
    if math.isinf(x):
        return ("-" if x < 0 else "") + "inf" + (f" {unit}" if unit else "")
    if x == 0:
        return "0" + (f" {unit}" if unit else "")
    exp3 = 3 * math.floor(math.log10(abs(x)) / 3)
    exp3 = min(max(exp3, min(_PREFIXES)), max(_PREFIXES))
    scaled = x / 10.0**exp3
    text = _digits(scaled, digits)
    if abs(float(text)) >= 1000 and exp3 < max(_PREFIXES):  # 999.96 rounds up to 1000
        exp3 += 3
        text = _digits(x / 10.0**exp3, digits)
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    sep = " " if unit or _PREFIXES[exp3] else ""
    return f"{text}{sep}{_PREFIXES[exp3]}{unit}"


def stated(value: float | None, unit: str = "") -> str:
    """A value as a scenario states it (a link rate, a duration): all its
    digits, up to six, without trailing zeros: ``"155.52 Mbit/s"``."""
    return si(value, unit, 6, trim=True)


def count(value: float | None) -> str:
    """A count with thousands separators: ``"1,262,592"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


def percent(value: float | None, digits: int = 3) -> str:
    """A fraction as a percentage: ``percent(0.0893)`` is ``"8.93 %"``;
    tiny non-zero fractions keep their digits (``"0.00120 %"``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    if value == 0:
        return "0 %"
    return f"{_digits(100 * value, digits)} %"


def ratio(value: float | None, digits: int = 3) -> str:
    """A plain number without a unit (a load factor, an index):
    `digits` significant digits, ``"1.02e-05"`` style below 0.0001."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    if value == 0:
        return "0"
    if abs(value) < 1e-4 or abs(value) >= 1e6:
        return f"{value:.{digits - 1}e}"
    return _digits(value, digits)


def metric(value: float | None, unit: str | None) -> str:
    """A metric's value in its unit as :func:`atmlab.metrics.unit` names it."""
    if unit == "bit/s":
        return si(value, "bit/s")
    if unit == "s":
        return si(value, "s")
    if unit == "bytes":
        return si(value, "B")
    if unit == "cells":
        return count(value) + ("" if value is None else " cells")
    if unit == "fraction":
        return ratio(value)
    if value is not None and float(value).is_integer():
        return count(value)
    return ratio(value)
