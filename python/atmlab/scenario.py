"""Loading scenarios: TOML files (or Python mappings) into the JSON text the
core validates and runs.

The schema itself lives in the Rust core (``atmlab-scenario``), the single
source of truth, which reports every problem with its key path; this module
adds the file name and turns TOML syntax errors into the same error type.

One thing the core never sees is a file: a ``piecewise`` application's
``rates = { file = "trace.txt", unit = "Mbit/s" }`` is read here, when the
scenario is loaded, and replaced by the list of rates it holds (see
:func:`read_rates`), so that the scenario the core runs, stores and hashes
holds the rates themselves.
"""

from __future__ import annotations

import io
import json
import math
import os
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from . import _core
from .errors import AtmlabError, ScenarioError, from_core
from .expand import Origins, instantiate, key_path, locate, sweep_dimensions
from .files import check_depth, check_text_depth, read_bytes, read_text
from .overrides import apply as apply_overrides

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any], "LoadedScenario"]


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario as data, with where it came from.

    ``template`` is the scenario as written (it may have ``[params]``,
    ``repeat`` and ``[sweep]``, see :mod:`atmlab.expand`); ``data`` is its
    base run: parameters at their defaults, repeated entries expanded, no
    sweep.
    """

    template: dict[str, Any]
    data: dict[str, Any]
    source: str
    origins: Origins
    overrides: tuple[str, ...] = ()  # the --set KEY=VALUE applied to the file, in order

    @property
    def name(self) -> str:
        return str(self.data.get("name", "scenario"))

    @property
    def is_sweep(self) -> bool:
        return bool(self.template.get("sweep"))

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)

    def error(self, e: BaseException) -> AtmlabError:
        """atmlab's error for an error of the core, at the place in the file."""
        return core_error(self.source, e, self.origins)


# The folder of the bundled scenarios: what importlib.resources.files() gives
# for it, as atmlab, which holds a compiled core, is never imported from a
# zip; without importing importlib.resources, 10 ms of every start.
_BUNDLED = Path(__file__).parent / "scenarios"


def bundled(name: str) -> Path:
    """The path of a scenario shipped with atmlab, by its name: the file's
    path under the bundled folder without ``.toml`` (``nsource_lan``,
    ``examples/voice_cbr``, ``tcp-abr/wan``)."""
    return _BUNDLED / f"{name.removesuffix('.toml')}.toml"


def bundled_names() -> list[str]:
    """Names of the scenarios shipped with atmlab, folders included
    (``examples/voice_cbr``): every one runs by that name."""
    return sorted(p.relative_to(_BUNDLED).with_suffix("").as_posix() for p in _BUNDLED.rglob("*.toml"))


def _bundled_name(spec: str) -> str | None:
    """`spec` as the name of a bundled scenario, if it can be one: a
    relative path of plain names, with or without ``.toml``."""
    parts = spec.removesuffix(".toml").replace(os.sep, "/").split("/")
    if not all(p and p not in (".", "..") for p in parts):
        return None
    return "/".join(parts)


def resolve(spec: str | os.PathLike[str]) -> Path:
    """A scenario path, or the name of a bundled scenario."""
    path = Path(spec)
    if path.exists():
        return path
    name = _bundled_name(str(spec))
    if name is not None and bundled(name).is_file():
        return bundled(name)
    raise ScenarioError(str(spec), "", "no such file, and no bundled scenario of that name (`atmlab scenarios` "
                        "lists them: " + ", ".join(bundled_names()) + ")")


def _loaded(template: dict[str, Any], source: str, overrides: Sequence[str] = ()) -> LoadedScenario:
    if overrides:
        template = apply_overrides(source, template, overrides)
    sweep_dimensions(source, template)  # a [sweep] that is no table of swept keys: an error for a run too
    _read_rate_files(source, template)
    data, origins = instantiate(source, template, {})
    return LoadedScenario(template, data, source, origins, tuple(overrides))


def load(scenario: ScenarioLike, *, overrides: Sequence[str] = ()) -> LoadedScenario:
    """Reads a scenario from a TOML file, a JSON file (``.json``: the same
    structure), a bundled scenario name, or a mapping; then applies the
    `overrides` (``"KEY=VALUE"`` strings, what ``--set`` gives: see
    :mod:`atmlab.overrides`) in order."""
    if isinstance(overrides, str):
        raise ScenarioError("--set", "", "overrides are a list of KEY=VALUE strings, not one string")
    if isinstance(scenario, LoadedScenario):
        return _loaded(scenario.template, scenario.source, (*scenario.overrides, *overrides)) if overrides \
            else scenario
    if isinstance(scenario, Mapping):
        check_depth("<dict>", scenario)  # before anything walks it recursively
        try:
            template = json.loads(json.dumps(dict(scenario)))  # a deep, JSON-clean copy
        except (TypeError, ValueError) as e:
            raise ScenarioError("<dict>", "", f"not plain data: {e}") from None
        template.setdefault("name", "scenario")
        return _loaded(template, "<dict>", overrides)
    path = resolve(scenario)
    text = read_text(str(path), path)  # a regular file of bounded size
    data = _parse_json(str(path), text) if path.suffix.lower() == ".json" else _parse_toml(str(path), text)
    data.setdefault("name", path.stem)
    return _loaded(data, str(path), overrides)


def _parse_toml(source: str, text: str) -> dict[str, Any]:
    check_text_depth(source, text, toml=True)  # tomllib recurses into arrays and inline tables
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(source, "", f"malformed TOML: {e}") from None
    check_depth(source, data)  # dotted keys and [a.b.c] headers nest without brackets
    return data


def _parse_json(source: str, text: str) -> dict[str, Any]:
    """A scenario written as JSON (a ``.json`` file): the same structure as
    the TOML form. A top-level ``"$schema"`` (the address of the scenario
    schema, for editors: ``atmlab schema``) is allowed and ignored."""
    check_text_depth(source, text, toml=False)  # json.loads recurses
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except ValueError as e:
        raise ScenarioError(source, "", f"malformed JSON: {e}") from None
    if not isinstance(data, dict):
        raise ScenarioError(source, "", f"a scenario is a JSON object ({{...}}), not {type(data).__name__}")
    schema = data.pop("$schema", None)
    if schema is not None and not isinstance(schema, str):
        raise ScenarioError(source, '"$schema"', "must be a string: the address of the scenario's JSON Schema")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refusing a key written twice (as TOML does), which JSON
    parsers otherwise settle silently by keeping the last."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {json.dumps(k)} appears twice in one object")
        out[k] = v
    return out


def core_error(source: str, e: BaseException, origins: Origins | None = None) -> AtmlabError:
    """atmlab's error for an error of the core, its key path mapped back to
    the entry written in the file."""
    return from_core(e, source, lambda path: locate(origins or {}, path))


def validate(scenario: ScenarioLike, *, seed: int | None = None, overrides: Sequence[str] = ()) -> LoadedScenario:
    """Checks a scenario's base run completely (schema, values, topology)
    without running it; :func:`check_points` checks every point of a sweep."""
    sc = load(scenario, overrides=overrides)
    try:
        _core.validate(sc.to_json(), seed)
    except _core.CoreScenarioError as e:
        raise sc.error(e) from None
    return sc


# ------------------------------------------------------ rates from a file

RATES_FILE_KEYS = ("file", "unit")
_RATE_UNITS_HINT = "bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s or cells/s"


def _read_rate_files(source: str, template: dict[str, Any]) -> None:
    """Replaces, in place, every ``apps[j].rates`` written as a table with a
    ``file`` (or a ``unit``) by the rates the file holds.

    This runs on the template as written, before ``[params]``, ``repeat``
    and ``[sweep]`` are expanded: every copy of a repeated application and
    every point of a sweep get the same rates, and errors name the entry as
    written (``apps[3].rates.file``). Anything else (a list, ``{ fgn = ...
    }``, a value of the wrong type) is left to the core to check.
    """
    apps = template.get("apps")
    if not isinstance(apps, list):
        return
    for j, app in enumerate(apps):
        rates = app.get("rates") if isinstance(app, dict) else None
        if isinstance(rates, dict) and ("file" in rates or "unit" in rates):
            app["rates"] = read_rates(source, f"apps[{j}].rates", rates)


def read_rates(source: str, where: str, table: dict[str, Any]) -> list[str]:
    """The rates of ``{ file = "trace.txt", unit = "Mbit/s" }`` at key path
    `where` of the scenario `source`, as rate strings (``"12.5 Mbit/s"``).

    The file name is relative to the scenario file's folder (to the current
    folder for a scenario given as a mapping). The file holds one rate per
    line, or is a CSV whose first column holds the rates; blank lines and
    ``#`` comments are ignored, and the first line of a ``.csv`` file is a
    header if its first field is not a number. A rate is a number, at least
    0, in `unit`: one of the units the core takes for rates (bit/s, kbit/s,
    Mbit/s, Gbit/s, Tbit/s, their ``bps`` spellings, cells/s). Every problem
    is a :class:`ScenarioError` at ``where.file`` (``where.unit``, or the
    unknown key) naming the file, and the line for a bad value.
    """
    for key in table:
        if key not in RATES_FILE_KEYS:
            raise ScenarioError(source, key_path(where, key),
                                "unknown key of a rates table read from a file (file, unit)")
    fwhere, uwhere = f"{where}.file", f"{where}.unit"
    name = table.get("file")
    if name is None:
        raise ScenarioError(source, fwhere, "rates with a unit need the file that holds them: "
                            "rates = { file = \"trace.txt\", unit = \"Mbit/s\" }")
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(source, fwhere, f"must be the name of a file, not {json.dumps(name)}")
    if "{" in name:
        raise ScenarioError(source, fwhere, f"'{name}': the file is read when the scenario is loaded, before "
                            "[params] and repeat are expanded: write its name out")
    unit = _rate_unit(source, uwhere, table.get("unit"))
    base = Path.cwd() if source == "<dict>" else Path(source).parent
    path = base / name
    shown = f"'{name}'" if str(path) == name else f"'{name}' ({path})"
    try:
        if not path.exists():
            raise ScenarioError(source, fwhere, f"{shown}: no such file")
        if not path.is_file():
            raise ScenarioError(source, fwhere, f"{shown}: not a file")
        text = read_bytes(path).decode("utf-8-sig")  # at most MAX_FILE_BYTES
    except (OSError, ValueError) as e:  # UnicodeDecodeError, a file too large
        raise ScenarioError(source, fwhere, f"{shown}: cannot read it: {e}") from None
    rates = [_rate_text(v, unit) for v in _rate_values(source, fwhere, shown, text, path.suffix.lower() == ".csv")]
    if not rates:
        raise ScenarioError(source, fwhere, f"{shown} holds no rates")
    return rates


def _rate_unit(source: str, where: str, unit: Any) -> str:
    if unit is None:
        raise ScenarioError(source, where, f"the rates of a file need a unit ({_RATE_UNITS_HINT})")
    if not isinstance(unit, str):
        raise ScenarioError(source, where, f"must be a rate unit ({_RATE_UNITS_HINT}), not {json.dumps(unit)}")
    try:
        known = _core.quantity(f"1 {unit}")[0] == "bit/s"  # the core's own parser of rates
    except ValueError:
        known = False
    if not known or not unit.strip():
        raise ScenarioError(source, where, f"unknown rate unit '{unit}' (use {_RATE_UNITS_HINT})")
    return unit.strip()


def _rate_values(source: str, where: str, shown: str, text: str, csv: bool) -> list[float]:
    """The numbers of the first column, checked, with the file's line of
    each for the messages."""
    import numpy as np

    # Read as text: numpy then gives the rows as written, which keeps a
    # bad value's line for the message (a float read would only say which
    # row failed, counted without the blank and comment lines).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "input contained no data", the max_rows note on blank lines
        try:
            rows = np.loadtxt(io.StringIO(text), dtype=str, delimiter=",", usecols=0, comments="#",
                              quotechar='"', ndmin=1)
        except ValueError as e:
            raise ScenarioError(source, where, f"{shown}: not one rate per line or a CSV: {e}") from None
    # numpy skips the lines that are empty once their comment is cut off;
    # the others are its rows, in order.
    lines = [n for n, line in enumerate(text.split("\n"), 1) if line.split("#", 1)[0] != ""]
    if len(lines) != len(rows):  # pragma: no cover - numpy counted otherwise (a quoted "#")
        lines = []
    values: list[float] = []
    header = not csv  # a CSV may start with a header
    for k, raw in enumerate(rows.tolist()):
        at = f"line {lines[k]}" if lines else f"rate {len(values) + 1}"
        cell = raw.strip()
        if not cell:
            if raw:  # spaces only: a blank line
                continue
            raise ScenarioError(source, where, f"{shown} {at}: no rate in the first column")
        try:
            v = float(cell)
        except ValueError:
            if not header:  # the first row of a CSV: its header
                header = True
                continue
            raise ScenarioError(source, where, f"{shown} {at}: '{cell}' is not a number") from None
        header = True
        if not math.isfinite(v):
            raise ScenarioError(source, where, f"{shown} {at}: '{cell}' is not a finite number")
        if v < 0:
            raise ScenarioError(source, where, f"{shown} {at}: {cell} is negative (a rate is at least 0)")
        values.append(v)
    return values


def _rate_text(v: float, unit: str) -> str:
    """A rate as the scenario writes it: ``"12.5 Mbit/s"``, ``"10 Mbit/s"``."""
    if v == 0:
        return f"0 {unit}"  # (not "-0.0")
    number = str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)
    return f"{number} {unit}"
