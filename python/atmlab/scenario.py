"""Loading scenarios: TOML files (or Python mappings) into the JSON text the
core validates and runs.

The schema itself lives in the Rust core (``atmlab-scenario``), the single
source of truth, which reports every problem with its key path; this module
adds the file name and turns TOML syntax errors into the same error type.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

from . import _core
from .errors import ScenarioError

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


@dataclass(frozen=True)
class LoadedScenario:
    """A scenario as data, with where it came from."""

    data: dict[str, Any]
    source: str

    @property
    def name(self) -> str:
        return str(self.data.get("name", "scenario"))

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)


def bundled(name: str) -> Path:
    """The path of a scenario shipped with atmlab (``nsource_lan``, ...)."""
    ref = resources.files("atmlab") / "scenarios" / f"{name.removesuffix('.toml')}.toml"
    return Path(str(ref))


def bundled_names() -> list[str]:
    """Names of the scenarios shipped with atmlab."""
    folder = resources.files("atmlab") / "scenarios"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def resolve(spec: str | os.PathLike[str]) -> Path:
    """A scenario path, or the name of a bundled scenario."""
    path = Path(spec)
    if path.exists():
        return path
    if not path.suffix and os.sep not in str(spec) and bundled(str(spec)).exists():
        return bundled(str(spec))
    raise ScenarioError(str(spec), "", "no such file (and no bundled scenario of that name: "
                        + ", ".join(bundled_names()) + ")")


def load(scenario: ScenarioLike) -> LoadedScenario:
    """Reads a scenario from a TOML file, a bundled scenario name, or a mapping."""
    if isinstance(scenario, Mapping):
        data = json.loads(json.dumps(dict(scenario)))  # a deep, JSON-clean copy
        data.setdefault("name", "scenario")
        return LoadedScenario(data, "<dict>")
    path = resolve(scenario)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(str(path), "", f"cannot read: {e}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(path), "", f"malformed TOML: {e}") from None
    data.setdefault("name", path.stem)
    return LoadedScenario(data, str(path))


def core_error(source: str, e: Exception) -> ScenarioError:
    """Turns the core's (path, message) error into a ScenarioError."""
    path, message = e.args if len(e.args) == 2 else ("", str(e))
    return ScenarioError(source, path, message)


def validate(scenario: ScenarioLike, *, seed: int | None = None) -> LoadedScenario:
    """Checks a scenario completely (schema, values, topology) without running it."""
    sc = load(scenario)
    try:
        _core.validate(sc.to_json(), seed)
    except _core.CoreScenarioError as e:
        raise core_error(sc.source, e) from None
    return sc
