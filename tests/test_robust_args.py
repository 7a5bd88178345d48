"""Whole-number arguments and scenario tables outside their ranges are clean
errors that state the range, never tracebacks (issue: hardening).

Seeds and replication indices are stored as SQLite INTEGER (signed 64-bit),
so they run from 0 to 2^63 - 1 everywhere: on the command line (a usage
error), in the API (:class:`atmlab.ArgumentError`, a ``ValueError``) and in a
scenario's ``simulation.seed`` (:class:`atmlab.ScenarioError` at that key).
``atmlab cells`` takes what the core takes: a 64-bit payload, a 32-bit MTU.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import atmlab
from atmlab.cli import main

BIG = 2**63  # one more than SQLite's largest INTEGER
TOP = 2**63 - 1
SEED_RANGE = f"from 0 to {TOP}"


def invoke(*args: str) -> Any:
    """The command line, in this process (click's runner)."""
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize(("args", "option", "allowed"), [
    (["run", "nsource_lan", "--seed", str(BIG)], "--seed", SEED_RANGE),
    (["run", "nsource_lan", "--seed", "-1"], "--seed", SEED_RANGE),
    (["run", "nsource_lan", "--seed", "1.5"], "--seed", SEED_RANGE),
    (["run", "nsource_lan", "--replication", str(BIG)], "--replication", SEED_RANGE),
    (["run", "nsource_lan", "--replication", "-1"], "--replication", SEED_RANGE),
    (["sweep", "nsource_lan", "--dry-run", "--seed", str(BIG)], "--seed", SEED_RANGE),
    (["sweep", "nsource_lan", "--dry-run", "--replications", "0"], "--replications", f"from 1 to {TOP}"),
    (["sweep", "nsource_lan", "--dry-run", "--replications", str(BIG)], "--replications", f"from 1 to {TOP}"),
    (["sweep", "nsource_lan", "--dry-run", "--max-replications", "0"], "--max-replications", f"from 1 to {TOP}"),
    (["reproduce", "kpn", "--seed", str(BIG)], "--seed", SEED_RANGE),
    (["reproduce", "kpn", "--replications", "0"], "--replications", f"from 1 to {TOP}"),
    (["reproduce", "kpn", "--ci-target", "0"], "--ci-target", "0<x<=1"),
    (["reproduce", "kpn", "--ci-target", "1.5"], "--ci-target", "0<x<=1"),
    (["reproduce", "kpn", "--max-replications", "0"], "--max-replications", f"from 1 to {TOP}"),
    (["cells", "--payload", str(2**64)], "--payload", f"from 0 to {2**64 - 1}"),
    (["cells", "--payload", "-1"], "--payload", f"from 0 to {2**64 - 1}"),
    (["cells", "--payload", "100", "--mtu", str(2**32)], "--mtu", f"from 1 to {2**32 - 1}"),
    (["cells", "--payload", "100", "--mtu", "0"], "--mtu", f"from 1 to {2**32 - 1}"),
])
def test_out_of_range_options_are_usage_errors_stating_the_range(args, option, allowed):
    r = invoke(*args)
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output
    assert "Invalid value for " in r.output and f"'{option}'" in r.output and allowed in r.output, r.output


def test_report_run_id_is_range_checked(tmp_path):
    db = tmp_path / "r.sqlite"
    db.write_bytes(b"")
    r = invoke("report", "--db", str(db), "--out", str(tmp_path / "o"), "--run", str(BIG))
    assert r.exit_code == 2 and f"from 1 to {TOP}" in r.output, r.output


def test_the_largest_values_are_accepted(tmp_path):
    r = invoke("sweep", "nsource_lan", "--dry-run", "--seed", str(TOP))
    assert r.exit_code == 0, r.output
    assert f"(seed {TOP})" in r.output
    r = invoke("cells", "--payload", str(2**64 - 1), "--proto", "tcp", "--json")
    assert r.exit_code == 0, r.output


def test_a_seed_of_2_63_is_refused_by_the_cli_as_a_user_runs_it(cli):
    p = cli("sweep", "nsource_lan", "--dry-run", "--seed", str(BIG))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert SEED_RANGE in p.stderr


@pytest.mark.parametrize("value", [BIG, -1, True, 1.5, "3"], ids=["2^63", "negative", "bool", "float", "text"])
def test_api_seed_and_replication_out_of_range(two_hosts, value):
    with pytest.raises(atmlab.ArgumentError, match=f"seed must be a whole number {SEED_RANGE}, not"):
        atmlab.run(two_hosts, seed=value)
    with pytest.raises(ValueError, match=f"replication must be a whole number {SEED_RANGE}, not"):
        atmlab.run(two_hosts, replication=value)
    with pytest.raises(atmlab.ArgumentError, match=f"seed must be a whole number {SEED_RANGE}"):
        atmlab.Sweep(two_hosts, seed=value)


@pytest.mark.parametrize("kwargs, says", [
    ({"replications": 0}, f"replications must be a whole number from 1 to {TOP}, not 0"),
    ({"replications": True}, f"replications must be a whole number from 1 to {TOP}, not True"),
    ({"replications": BIG}, f"replications must be a whole number from 1 to {TOP}"),
    ({"max_replications": 0}, f"max_replications must be a whole number from 1 to {TOP}"),
    ({"replications": 5, "max_replications": 4, "ci_target": 0.1}, "max_replications (4) is below replications (5)"),
    ({"ci_target": 0}, "ci_target must be a positive number"),
    ({"ci_target": True}, "ci_target must be a positive number"),
])
def test_api_sweep_arguments_out_of_range(two_hosts, kwargs, says):
    with pytest.raises(atmlab.ArgumentError) as e:
        atmlab.Sweep(two_hosts, **kwargs)
    assert says in str(e.value)


def test_api_sweep_jobs_out_of_range(two_hosts, tmp_path):
    with pytest.raises(atmlab.ArgumentError, match=f"jobs must be a whole number from 1 to {TOP}, not 0"):
        atmlab.Sweep(two_hosts).run(tmp_path / "r.sqlite", jobs=0)
    assert not (tmp_path / "r.sqlite").exists()


def test_the_largest_seed_and_replication_run_and_are_stored(two_hosts, tmp_path):
    two_hosts["simulation"]["duration"] = "50 ms"
    r = atmlab.run(two_hosts, seed=TOP, replication=TOP)
    assert (r.seed, r.replication) == (TOP, TOP)
    assert atmlab.run(two_hosts, seed=np.int64(7)).seed == 7  # a number from a table is a number
    out = atmlab.Sweep(two_hosts, seed=TOP).run(tmp_path / "r.sqlite", jobs=1)
    assert (out.ran, out.failed) == (1, 0)
    assert atmlab.results(tmp_path / "r.sqlite").seed.tolist() == [TOP]


@pytest.mark.parametrize("seed", [BIG, -1, True, "7", 1.5], ids=["2^63", "negative", "bool", "text", "float"])
def test_scenario_seed_out_of_range_is_a_scenario_error_at_the_key(two_hosts, seed):
    two_hosts["simulation"]["seed"] = seed
    for call in (atmlab.validate, atmlab.run, atmlab.Sweep):
        with pytest.raises(atmlab.ScenarioError) as e:
            call(two_hosts)
        assert (e.value.source, e.value.path) == ("<dict>", "simulation.seed")
        assert f"must be a whole number {SEED_RANGE}" in e.value.message


def test_scenario_seed_from_a_parameter_or_a_sweep_is_checked(two_hosts):
    sc = copy.deepcopy(two_hosts)
    sc["params"] = {"s": BIG}
    sc["simulation"]["seed"] = "{s}"
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.run(sc)
    assert e.value.path == "simulation.seed" and str(BIG) in e.value.message
    sc = copy.deepcopy(two_hosts)
    sc["sweep"] = {"simulation.seed": [1, BIG]}
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.Sweep(sc)
    assert e.value.path == "simulation.seed" and SEED_RANGE in e.value.message


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_scenario_seed_in_a_file_is_one_error_line(cli, tmp_path, command):
    path = tmp_path / "seed.toml"
    path.write_text('[simulation]\nduration = "1 ms"\nseed = 9223372036854775808\n')
    p = cli(command, str(path), *(["--dry-run"] if command == "sweep" else []))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().startswith("error:") and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"{path}: simulation.seed: must be a whole number {SEED_RANGE}" in p.stderr


@pytest.mark.parametrize("change, path, says", [
    ({"params": 3}, "params", "must be a table of named values ([params]), not a number"),
    ({"params": ["n"]}, "params", "must be a table of named values ([params]), not an array"),
    ({"sweep": 3}, "sweep", "must be a table of swept keys ([sweep]), not a number"),
    ({"sweep": ["n"]}, "sweep", "must be a table of swept keys ([sweep]), not an array"),
    ({"sweep": {"zip": 3}}, "sweep.zip", "must be a table of zip groups ([sweep.zip.NAME]), not a number"),
    ({"sweep": {"zip": ["n"]}}, "sweep.zip", "must be a table of zip groups ([sweep.zip.NAME]), not an array"),
    ({"sweep": {"zip": {"g": [1, 2]}}}, "sweep.zip.g", "a zip group must be a table of swept keys, not an array"),
    ({"sweep": {"zip": {"g": "n"}}}, "sweep.zip.g", "a zip group must be a table of swept keys, not a string"),
    ({"sweep": {"zip": {"g": {}}}}, "sweep.zip.g", "a zip group needs at least one key"),
], ids=["params-number", "params-array", "sweep-number", "sweep-array", "zip-number", "zip-array",
        "group-array", "group-string", "group-empty"])
def test_tables_that_are_not_tables_are_scenario_errors(two_hosts, change, path, says):
    sc = {**two_hosts, "params": {"n": 1}, **change}
    for call in (atmlab.Sweep, lambda s: atmlab.expand.points("<dict>", s)):
        with pytest.raises(atmlab.ScenarioError) as e:
            call(sc)
        assert (e.value.path, e.value.message) == (path, says)
    if "params" in change:  # the base run expands [params] too
        with pytest.raises(atmlab.ScenarioError, match=r"params: must be a table"):
            atmlab.run(sc)


def test_a_sweep_that_is_not_a_table_is_one_error_line(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('sweep = "buffer"\n[simulation]\nduration = "1 ms"\n')
    p = cli("sweep", str(path), "--dry-run")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip() == f"error: {path}: sweep: must be a table of swept keys ([sweep]), not a string"


def test_an_unexpected_error_is_one_line_too(monkeypatch, tmp_path):
    """The last resort of the CLI: a bug shows as one line saying so; the
    traceback is there for the asking (ATMLAB_TRACEBACK=1)."""
    import atmlab.cli

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a bug")

    monkeypatch.setattr(atmlab.cli, "_which_sweep", broken)  # the first thing `results` does
    r = invoke("results", "--db", str(tmp_path / "r.sqlite"))
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.stderr.strip() == ("error: internal error (a bug in atmlab; please report it, with ATMLAB_TRACEBACK=1 "
                                "for the traceback): TypeError: a bug")
    r = CliRunner(env={"ATMLAB_TRACEBACK": "1"}).invoke(main, ["results", "--db", str(tmp_path / "r.sqlite")])
    assert isinstance(r.exception, TypeError)


def test_a_file_the_cli_cannot_write_is_one_line(tmp_path, two_hosts):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(two_hosts).run(db, jobs=1)
    r = invoke("results", "--db", str(db), "--csv", str(tmp_path / "no" / "such" / "folder.csv"))
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.stderr.startswith("error: ") and "non-existent directory" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
