"""The scenario format as JSON, and its JSON Schema (`atmlab schema`)."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import atmlab
from atmlab import _core
from atmlab.schema import core_schema, scenario_schema

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted((ROOT / "scenarios").rglob("*.toml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    s = scenario_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def _errors(validator, data) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def test_there_are_bundled_scenarios_of_every_family():
    names = {p.relative_to(ROOT / "scenarios").parts[0] for p in BUNDLED}
    assert {"examples", "expert", "tcp-abr", "ubr-gr", "bundling", "nsource_lan.toml"} <= names


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT / "scenarios")))
def test_every_bundled_scenario_validates_against_the_schema(validator, path):
    assert _errors(validator, tomllib.loads(path.read_text())) == []


MINIMAL = {
    "simulation": {"duration": "1 s"},
    "hosts": [{"name": "a"}],
    "switches": [{"name": "s", "port": {"buffer": "10 cells", "classes": {"ubr": {"buffer": 5}}}}],
    "tcp": {"variant": "reno"},
    "apps": [{"kind": "udp", "name": "x", "vc": "v", "payload": {"exponential": "80 bytes"}, "interval": "1 ms"}],
}

REFUSED = {
    "an unknown top-level key": (lambda d: d.update(colour="red"), "", "colour"),
    "an unknown key in a table": (lambda d: d["switches"][0]["port"].update(bufer=3), "switches.0.port", "bufer"),
    "an unknown key in a repeated entry": (lambda d: d["hosts"][0].update(repeat=2, mtv=9180), "hosts.0", "mtv"),
    "repeat outside the repeatable tables": (lambda d: d["simulation"].update(repeat=2), "simulation", "repeat"),
    "an unknown distribution": (lambda d: d["apps"][0].update(payload={"uniform": 1}), "apps.0.payload", ""),
    "a time without its unit": (lambda d: d["simulation"].update(duration=5), "simulation.duration", ""),
    "an unknown unit": (lambda d: d["simulation"].update(duration="5 parsecs"), "simulation.duration", ""),
    "the ambiguous KB": (lambda d: d["tcp"].update(window="64 KB"), "tcp.window", ""),
    "an unknown TCP variant": (lambda d: d["tcp"].update(variant="cubic"), "tcp.variant", ""),
    "a category that is none": (lambda d: d["switches"][0]["port"]["classes"].update(xbr={}),
                                "switches.0.port.classes", ""),
    "a range with a typo": (lambda d: d.update(sweep={"n": {"start": 1, "stp": 1, "count": 3}}), "sweep.n", ""),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_schema_refuses(validator, case):
    mutate, where, key = REFUSED[case]
    assert _errors(validator, MINIMAL) == []
    data = copy.deepcopy(MINIMAL)
    mutate(data)
    errors = _errors(validator, data)
    assert errors, case
    assert any(e.startswith(f"{where}: ") and key in e for e in errors), errors


ACCEPTED = {
    "a reference for an enum": lambda d: d["tcp"].update(variant="{v}"),
    "a reference for a number": lambda d: d["tcp"].update(initial_cwnd="{n}"),
    "a reference inside a quantity": lambda d: d["simulation"].update(duration="{t} ms"),
    "repeat": lambda d: d["hosts"][0].update(repeat=3, name="h{i}"),
    "repeat as a reference": lambda d: d["hosts"][0].update(repeat="{n}"),
    "params and a sweep": lambda d: d.update(params={"n": 1}, sweep={"n": [1, 2], "zip": {"g": {"a": [1], "b": [2]}}}),
    "a range": lambda d: d.update(sweep={"n": {"start": 1, "step": 1, "count": 3, "unit": "cells"}}),
    "rates from a file": lambda d: d["apps"][0].update(rates={"file": "trace.txt", "unit": "Mbit/s"}),
    "µs": lambda d: d["simulation"].update(duration="5 µs"),
    "an exponent": lambda d: d["simulation"].update(duration="1e-6 s"),
    "$schema": lambda d: d.update({"$schema": "./scenario.schema.json"}),
}


@pytest.mark.parametrize("case", ACCEPTED)
def test_the_schema_accepts_templates(validator, case):
    data = copy.deepcopy(MINIMAL)
    ACCEPTED[case](data)
    assert _errors(validator, data) == []


_NUMBER = st.builds(
    lambda i, f, e: i + f + e,
    st.from_regex(r"[0-9]{1,4}", fullmatch=True),
    st.sampled_from(["", ".", ".5", ".25", ".125"]),
    st.sampled_from(["", "e3", "e-6", "E+2"]),
)
_TIME_UNITS = ["ps", "ns", "us", "µs", "ms", "s"]
_RATE_UNITS = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "bps", "kbps", "Mbps", "Gbps", "Tbps", "b/s",
               "kb/s", "Mb/s", "Gb/s", "Tb/s", "cells/s", "cell/s"]
_OTHER = ["", "m", "sec", "S", "Ms", "mbit/s", "Kbit/s", "bytes", "cells", "KB", "x"]


def _kind(text: str) -> str | None:
    try:
        return _core.quantity(text)[0]
    except ValueError:
        return None


@settings(max_examples=300, deadline=None)
@given(number=_NUMBER, space=st.sampled_from(["", " ", "  "]),
       unit=st.sampled_from(_TIME_UNITS + _RATE_UNITS + _OTHER))
def test_quantity_patterns_agree_with_the_parser(number, space, unit):
    """What the schema takes as a time or a rate is what the core's parser
    reads as one. The number's form is checked on times; a rate's unit
    with the number 1 (a tiny rate rounds to 0 bit/s, which `rate` refuses:
    a matter of range, left to the core as the other ranges are)."""
    defs = core_schema()["$defs"]
    text = f"{number}{space}{unit}"
    assert bool(re.search(defs["Time"]["pattern"], text)) == (_kind(text) == "s"), text
    one = f"1{space}{unit}"
    assert bool(re.search(defs["Rate"]["pattern"], one)) == (_kind(one) == "bit/s"), one
    assert defs["RateOrZero"]["pattern"] == defs["Rate"]["pattern"]


def test_cli_schema_prints_and_writes_it(cli, tmp_path):
    p = cli("schema")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc == scenario_schema()
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "the address" in doc["properties"]["$schema"]["description"]
    out = tmp_path / "scenario.schema.json"
    p = cli("schema", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text()) == doc


def _as_json(root: Path, tmp_path: Path, name: str) -> Path:
    data = tomllib.loads((root / "scenarios" / f"{name}.toml").read_text())
    path = tmp_path / f"{Path(name).name}.json"
    path.write_text(json.dumps({"$schema": "./scenario.schema.json", **data}, indent=2))
    return path


def test_validate_and_run_a_json_scenario(cli, root, tmp_path):
    path = _as_json(root, tmp_path, "nsource_lan")
    p = cli("validate", str(path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"ok {path}: 10 hosts")
    a = cli("run", str(path), "--json", "--seed", "3")
    b = cli("run", "nsource_lan", "--json", "--seed", "3")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout  # the same scenario, the same run


def test_a_json_sweep_runs_its_points(root, tmp_path):
    path = _as_json(root, tmp_path, "examples/sweep_buffer")
    s = atmlab.Sweep(path)
    assert len(s.points) > 1 and s.name == "sweep_buffer"


JSON_ERRORS = {
    "an unknown key": ('{"simulation": {"duration": "1 s", "colour": 1}}', "simulation.colour: unknown field `colour`"),
    "a bad value": ('{"simulation": {"duration": "1 parsec"}}', "simulation.duration: '1 parsec'"),
    "a key in a list": ('{"simulation": {"duration": "1 s"}, "hosts": [{"name": "a", "mtv": 1}]}',
                        "hosts[0].mtv: unknown field `mtv`"),
    "malformed JSON": ('{"simulation": {"duration": "1 s"', "malformed JSON: Expecting"),
    "a key twice": ('{"simulation": {"duration": "1 s"}, "simulation": {}}',
                    'malformed JSON: the key "simulation" appears twice'),
    "not an object": ('["simulation"]', "a scenario is a JSON object"),
    "NaN": ('{"simulation": {"duration": "1 s", "clock_tolerance_ppm": NaN}}', "malformed JSON: NaN is not JSON"),
    "a $schema that is no string": ('{"$schema": 1, "simulation": {"duration": "1 s"}}', '"$schema": must be a string'),
}


@pytest.mark.parametrize("case", JSON_ERRORS)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_json_errors_name_the_file_and_key(cli, tmp_path, case, command):
    text, expected = JSON_ERRORS[case]
    path = tmp_path / "bad.json"
    path.write_text(text)
    p = cli(command, str(path))
    assert p.returncode == 2
    assert p.stderr.startswith(f"error: {path}: "), p.stderr
    assert expected in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_docs_tables_are_not_split():
    """A table broken by a blank line renders as a table and a paragraph of
    pipes (the hosts table of scenario-format.md was)."""
    for doc in (ROOT / "docs").rglob("*.md"):
        lines = doc.read_text().splitlines()
        for i, line in enumerate(lines):
            starts_table = line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|"))
            if starts_table:
                assert i + 1 < len(lines) and re.match(r"^\|\s*:?-+", lines[i + 1]), \
                    f"{doc.relative_to(ROOT)}:{i + 1}: a table row without a header (a table split by a blank line?)"
