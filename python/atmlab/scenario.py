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
from .errors import AtmlabError, ScenarioError, from_core
from .expand import Origins, instantiate, locate

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]


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


def _loaded(template: dict[str, Any], source: str) -> LoadedScenario:
    data, origins = instantiate(source, template, {})
    return LoadedScenario(template, data, source, origins)


def load(scenario: ScenarioLike) -> LoadedScenario:
    """Reads a scenario from a TOML file, a bundled scenario name, or a mapping."""
    if isinstance(scenario, Mapping):
        try:
            template = json.loads(json.dumps(dict(scenario)))  # a deep, JSON-clean copy
        except (TypeError, ValueError) as e:
            raise ScenarioError("<dict>", "", f"not plain data: {e}") from None
        template.setdefault("name", "scenario")
        return _loaded(template, "<dict>")
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
    return _loaded(data, str(path))


def core_error(source: str, e: BaseException, origins: Origins | None = None) -> AtmlabError:
    """atmlab's error for an error of the core, its key path mapped back to
    the entry written in the file."""
    return from_core(e, source, lambda path: locate(origins or {}, path))


def validate(scenario: ScenarioLike, *, seed: int | None = None) -> LoadedScenario:
    """Checks a scenario completely (schema, values, topology) without running it."""
    sc = load(scenario)
    try:
        _core.validate(sc.to_json(), seed)
    except _core.CoreScenarioError as e:
        raise sc.error(e) from None
    return sc
