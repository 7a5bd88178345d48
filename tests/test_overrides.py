"""``--set KEY=VALUE``: the scenario changed at a key path of the file, with
the file's own errors, recorded with the sweep (atmlab.overrides)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import atmlab
import atmlab.store
from atmlab.overrides import parse, parse_key, parse_value

from conftest import voice_sweep


def test_values_are_toml_or_text():
    assert parse_value('"2000 cells"') == "2000 cells"
    assert parse_value("2000 cells") == "2000 cells"
    assert parse_value("ubr") == "ubr"
    assert parse_value("5") == 5 and parse_value("2.5") == 2.5 and parse_value("true") is True
    assert parse_value("[512, 9140]") == [512, 9140]
    assert parse_value("{ start = 1, step = 1, count = 3 }") == {"start": 1, "step": 1, "count": 3}
    with pytest.raises(atmlab.ScenarioError, match="starts like a TOML string"):
        parse_value('"unterminated')


def test_key_paths():
    assert parse_key("switches[0].port.buffer") == ["switches", 0, "port", "buffer"]
    assert parse_key('sweep."switches[*].port.buffer"') == ["sweep", "switches[*].port.buffer"]
    assert parse_key("hosts[*].mtu") == ["hosts", -1, "mtu"]
    for bad in ("[0].x", ".a", "a..b", "a b", "a[x]", "a]"):
        with pytest.raises(atmlab.ScenarioError, match="key path"):
            parse_key(bad)
    with pytest.raises(atmlab.ScenarioError, match="not KEY=VALUE"):
        parse("simulation.duration")


def test_overrides_change_the_scenario_as_written(two_hosts):
    sc = atmlab.load(two_hosts, overrides=["simulation.duration=300 ms", 'switches[0].port.buffer="2000 cells"',
                                           "hosts[*].mtu=1500", "simulation.seed=7"])
    assert sc.data["simulation"] == {"duration": "300 ms", "seed": 7}
    assert sc.data["switches"][0]["port"]["buffer"] == "2000 cells"
    assert [h["mtu"] for h in sc.data["hosts"]] == [1500, 1500]
    assert sc.overrides == ("simulation.duration=300 ms", 'switches[0].port.buffer="2000 cells"',
                            "hosts[*].mtu=1500", "simulation.seed=7")
    r = atmlab.run(two_hosts, overrides=["simulation.duration=300 ms"])
    assert r.raw["duration_s"] == pytest.approx(0.3)


def test_overrides_of_params_and_sweep(two_hosts):
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    only_n = dict(sc, sweep={"n": [1, 2]})
    s = atmlab.Sweep(only_n, overrides=["sweep.n=[3]", "params.delay=2 ms"])
    assert [p.params for p in s.points] == [{"n": 3}]
    assert s.points[0].scenario["links"][0]["delay"] == "2 ms"
    s = atmlab.Sweep(sc, overrides=['sweep.delay=["2 ms"]'])
    assert [p.params["delay"] for p in s.points] == ["2 ms", "2 ms"]
    base = atmlab.load(sc, overrides=["sweep.n=[2]", "params.n=2"])
    assert len([a for a in base.data["apps"]]) == 2  # the base run's n


def test_override_errors_name_the_key(two_hosts):
    cases = {
        "simulation.colour=red": "simulation.colour: unknown field `colour`",
        "switches[3].port.buffer=10": "switches[3].port.buffer (--set): switches has 1 entries, no [3]",
        "name.x=1": "name.x (--set): name is not a table",
        "links[0].rate=fast": "links[0].rate",
        "params.nope=1": "params.nope (--set): no parameter 'nope' in [params] (it has: none)",
    }
    for text, expected in cases.items():
        with pytest.raises(atmlab.ScenarioError) as e:
            atmlab.validate(two_hosts, overrides=[text])
        assert expected in str(e.value), (text, str(e.value))
    sc = voice_sweep(two_hosts, n_values=(1, 2))
    with pytest.raises(atmlab.ScenarioError, match="'n' is swept, so its \\[params\\] value sets no point of the sweep: set sweep.n="):
        atmlab.Sweep(sc, overrides=["params.n=5"])
    with pytest.raises(atmlab.ScenarioError, match="a list of KEY=VALUE strings"):
        atmlab.load(two_hosts, overrides="simulation.duration=1 s")  # type: ignore[arg-type]


def test_cli_set_on_run_validate_and_sweep_is_recorded(tmp_path, two_hosts, cli):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(voice_sweep(two_hosts, n_values=(1, 2))))
    # `run` runs the base point, whose n is [params].n: settable, though the sweep sweeps it.
    p = cli("run", str(path), "--set", "simulation.duration=50 ms", "--set", "params.n=2", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["duration_s"] == pytest.approx(0.05) and len(doc["udp_flows"]) == 2
    p = cli("validate", str(path), "--set", "switches[0].port.buffer=0 cells")
    assert p.returncode == 2 and "switches[0].port.buffer" in p.stderr
    p = cli("validate", str(path), "--set", "bogus")
    assert p.returncode == 2 and "'bogus' is not KEY=VALUE" in p.stderr
    db = tmp_path / "r.sqlite"
    p = cli("sweep", str(path), "--db", str(db), "-j", "1", "--set", "simulation.duration=50 ms",
            "--set", "sweep.n=[2]")
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(db) as con:
        (overrides,) = con.execute("SELECT overrides FROM sweeps").fetchone()
        durations = {json.loads(s)["simulation"]["duration"] for (s,) in con.execute("SELECT scenario FROM scenarios")}
    assert json.loads(overrides) == ["simulation.duration=50 ms", "sweep.n=[2]"]
    assert durations == {"50 ms"}
    with atmlab.store.Store(db) as store:
        (info,) = store.sweep_info()
    assert info.overrides == ["simulation.duration=50 ms", "sweep.n=[2]"]
    listed = cli("results", "--db", str(db), "--list")
    assert listed.returncode == 0 and "with --set" in listed.stdout
