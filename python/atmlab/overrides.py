"""Overrides: ``--set KEY=VALUE`` on the command line, ``overrides=`` in the API.

An override changes the scenario *as written*, before ``[params]``,
``repeat`` and ``[sweep]`` are expanded, at a key path of the file:

* ``simulation.duration="3 s"``, ``switches[0].port.buffer="2000 cells"``
  (``[*]`` is every entry of an array: ``hosts[*].mtu=1500``);
* ``params.cat=ubr``: a parameter's value in the base run (it must be a
  parameter of ``[params]``; in a sweep that sweeps it, ``sweep.cat=[ubr]``);
* ``sweep.mss=[512, 9140]``, ``sweep."switches[*].port.buffer"=[1000]``: a
  swept key's values (a key that is itself a key path is quoted).

VALUE is read as a TOML value (``5``, ``2.5``, ``true``, ``"2000 cells"``,
``[512, 1024]``, ``{ start = 1, step = 1, count = 3 }``); text that is no
TOML value is a string, so ``params.cat=ubr`` and
``switches[0].port.buffer=2000 cells`` need no quotes. The scenario is then
checked as if the file said it, with the same errors and key paths; the
overrides are recorded with a sweep in the results database.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Iterable
from typing import Any

from .errors import ScenarioError

# One step of a key path: a bare key, a quoted key, or an index ([3], [*]).
_STEP = re.compile(r'\.?(?:(?P<bare>[A-Za-z0-9_-]+)|"(?P<quoted>(?:[^"\\]|\\.)*)"|\[(?P<index>\*|\d+)\])')


def parse(text: str) -> tuple[str, list[str | int], Any]:
    """``KEY=VALUE`` as (the key as written, its steps, the value); a
    :class:`ScenarioError` (source ``--set``) if it is not one."""
    key, eq, raw = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise ScenarioError("--set", key or text, f"'{text}' is not KEY=VALUE (e.g. simulation.duration=\"3 s\")")
    return key, parse_key(key), parse_value(raw.strip())


def parse_key(key: str) -> list[str | int]:
    """A key path as its steps: names, and indices (-1 for ``[*]``)."""
    steps: list[str | int] = []
    pos = 0
    while pos < len(key):
        m = _STEP.match(key, pos)
        if m is None or (m.group(0).startswith(".") and pos == 0) or (pos > 0 and m.group("index") is None
                                                                       and not m.group(0).startswith(".")):
            raise ScenarioError("--set", key, 'is not a key path like switches[0].port.buffer or '
                                'sweep."hosts[*].mtu"')
        pos = m.end()
        if m.group("bare") is not None:
            steps.append(m.group("bare"))
        elif m.group("quoted") is not None:
            steps.append(json.loads(f'"{m.group("quoted")}"'))
        else:
            steps.append(-1 if m.group("index") == "*" else int(m.group("index")))
    if not steps or not isinstance(steps[0], str):
        raise ScenarioError("--set", key, "a key path starts with a key (simulation, switches, params, sweep, ...)")
    return steps


def parse_value(raw: str) -> Any:
    """A TOML value; text that is none (``ubr``, ``2000 cells``) as a string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        if raw[:1] in "\"'[{":
            raise ScenarioError("--set", raw, "starts like a TOML string, array or table but is not one") from None
        return raw


def apply(source: str, template: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """A copy of `template` with every override set, in order. A key
    path that cannot be set (an index past the end, a key under a value
    that is no table) is a :class:`ScenarioError` at that key; what the
    value means is checked later, with the rest of the scenario."""
    out = copy.deepcopy(template)
    for text in overrides:
        key, steps, value = parse(text)
        where = f"{key} (--set)"
        if steps[0] == "params" and len(steps) == 2:
            params = out.get("params")
            if not isinstance(params, dict) or steps[1] not in params:
                have = ", ".join(params) if isinstance(params, dict) and params else "none"
                raise ScenarioError(source, where, f"no parameter '{steps[1]}' in [params] (it has: {have})")
        _set(source, where, out, steps, value)
    return out


def _set(source: str, where: str, node: Any, steps: list[str | int], value: Any) -> None:
    here = ""
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        if isinstance(step, str):
            if not isinstance(node, dict):
                raise ScenarioError(source, where, f"{here or 'the scenario'} is not a table")
            if last:
                node[step] = copy.deepcopy(value)
                return
            node = node.setdefault(step, {})
            here = f"{here}.{step}" if here else step
            continue
        if not isinstance(node, list):
            raise ScenarioError(source, where, f"{here} is not an array")
        if step >= len(node):
            raise ScenarioError(source, where, f"{here} has {len(node)} entries, no [{step}]")
        targets = range(len(node)) if step == -1 else [step]
        if last:
            for j in targets:
                node[j] = copy.deepcopy(value)
            return
        for j in targets:
            _set(source, where, node[j], steps[i + 1:], value)
        return


def check_swept(source: str, overrides: Iterable[str], swept: Iterable[str]) -> None:
    """For a sweep: an override of a parameter the sweep sets changes no
    point, so it is an error that says what to write instead."""
    names = set(swept)
    for text in overrides:
        _, steps, _ = parse(text)
        if steps[0] == "params" and len(steps) == 2 and steps[1] in names:
            raise ScenarioError(source, f"params.{steps[1]} (--set)", f"'{steps[1]}' is swept, so its [params] "
                                f"value sets no point of the sweep: set sweep.{steps[1]}=[...] instead")
