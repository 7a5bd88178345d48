"""Loading and validating scenarios: bundled names, files, errors."""

from __future__ import annotations

import pytest

import atmlab
from atmlab.scenario import bundled_names, load


def test_bundled_scenarios_are_listed_and_valid():
    names = bundled_names()
    assert {"nsource_lan", "nsource_wan"} <= set(names)
    for name in names:
        sc = atmlab.validate(name)
        assert sc.name == name


def test_file_name_is_the_default_scenario_name(tmp_path, two_hosts):
    import json

    two_hosts.pop("name")
    p = tmp_path / "my_net.toml"
    # TOML written by hand from the dict's JSON is not needed: load a dict.
    sc = load(two_hosts)
    assert sc.name == "scenario"
    p.write_text('[simulation]\nduration = "1 ms"\n')
    assert load(p).name == "my_net"
    assert json.loads(load(p).to_json())["simulation"]["duration"] == "1 ms"


def test_malformed_toml_names_the_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[simulation\nduration = 1\n")
    with pytest.raises(atmlab.ScenarioError) as e:
        load(p)
    assert str(p) in str(e.value)
    assert "malformed TOML" in str(e.value)


def test_missing_file():
    with pytest.raises(atmlab.ScenarioError, match="no such file"):
        load("does/not/exist.toml")


@pytest.mark.parametrize(
    "mutate, path, words",
    [
        (lambda s: s["switches"][0]["port"].update(bufer="10 cells"), "switches[0].port.bufer", "unknown field"),
        (lambda s: s["links"][1].update(rate="-1 Mbit/s"), "links[1].rate", "negative"),
        (lambda s: s["switches"][0]["port"].update(buffer="0 cells"), "switches[0].port.buffer", "at least 1 cell"),
        (lambda s: s["vcs"][0].update(path=["a", "sw", "nowhere"]), "vcs[0].path[2]", "nowhere"),
        (lambda s: s["vcs"][0].update(path=["a", "b"]), "vcs[0].path", "no link between a and b"),
        (lambda s: s["apps"][0].update(interval="10"), "apps[0].interval", "needs a unit"),
        (lambda s: s["simulation"].update(duration="0 s"), "simulation.duration", "longer than 0"),
    ],
)
def test_validation_errors_name_the_key(two_hosts, mutate, path, words):
    mutate(two_hosts)
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(two_hosts)
    assert e.value.path == path
    assert words in e.value.message


def test_every_shipped_scenario_file_is_valid(root):
    files = sorted((root / "scenarios").rglob("*.toml"))
    assert len(files) >= 3
    for f in files:
        sc = atmlab.validate(f)
        if sc.is_sweep:
            s = atmlab.Sweep(f)  # validates every point
            assert len(s.points) > 1, f
