"""Swept values as numbers in their base unit.

A sweep's values are written as the scenario writes quantities (``"300
ms"``, ``"1000 cells"``) or as plain numbers and words. :func:`parse` is
the one place that turns them into a :class:`Quantity`: the number in the
base unit of its kind (seconds, bit/s, bytes, cells), read by the core's
own parser of the scenario format (``_core.quantity``), so ``"5 us"`` and
``"1 ms"`` in one column are 5e-06 and 0.001 seconds. The results store
keeps them typed, so tables, reports and reproductions read numbers, never
text to re-parse.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from . import _core


@dataclass(frozen=True)
class Quantity:
    """A number in the base unit of its kind: ``s``, ``bit/s``, ``bytes``
    or ``cells``."""

    value: float
    unit: str

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}"

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit}


def parse(v: Any) -> Any:
    """A swept value, typed: a text like ``"300 ms"`` becomes
    ``Quantity(0.3, "s")``; numbers, booleans and other text stay as they
    are."""
    return _parse_text(v) if isinstance(v, str) else v


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Any:
    try:
        unit, number = _core.quantity(text)
    except ValueError:
        return text
    return Quantity(number, unit)


def typed(params: dict[str, Any]) -> dict[str, Any]:
    """A point's parameters with their quantities parsed."""
    return {k: parse(v) for k, v in params.items()}


def to_json(params: dict[str, Any]) -> dict[str, Any]:
    """Typed parameters as JSON: a quantity is ``{"value": 300, "unit": "ms"}``."""
    return {k: v.to_json() if isinstance(v, Quantity) else v for k, v in typed(params).items()}


def from_json(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`to_json`."""
    return {k: Quantity(v["value"], v["unit"]) if isinstance(v, dict) and set(v) == {"value", "unit"} else v
            for k, v in data.items()}


def value(v: Any) -> Any:
    """The number of a quantity, or the value itself."""
    return v.value if isinstance(v, Quantity) else v
