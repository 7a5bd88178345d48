"""The template keys of a scenario file ([params], [sweep], repeat) are
checked for their type by every command that reads the file, not only by
a sweep: a string where a table belongs is one error naming the key, for
`validate` and `run` too (issue 29, item 8)."""

from __future__ import annotations

import pytest

import atmlab

from conftest import TWO_HOSTS, atmlab_cli

BASE = """
[simulation]
duration = "1 ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
port = { buffer = "1000 cells" }
[[links]]
between = ["a", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "b"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v"
path = ["a", "sw", "b"]
[[apps]]
kind = "udp_cbr"
name = "voice"
vc = "v"
payload = "80 bytes"
interval = "10 ms"
"""

BAD = {
    "sweep-string": ('sweep = "x"', "sweep", "must be a table of swept keys ([sweep]), not a string"),
    "sweep-number": ("sweep = 3", "sweep", "must be a table of swept keys ([sweep]), not a number"),
    "sweep-value": ("sweep = { n = 3 }", "sweep.n",
                    "'n' is neither a parameter of [params] nor a key path (like \"switches[*].port.buffer\")"),
    "sweep-value-of-a-param": ("params = { n = 1 }\nsweep = { n = 3 }", "sweep.n",
                               "a sweep value is a list or a range { start, step, count }"),
    "zip-number": ("sweep = { zip = 3 }", "sweep.zip", "must be a table of zip groups ([sweep.zip.NAME]), not a number"),
    "params-string": ('params = "x"', "params", "must be a table of named values ([params]), not a string"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_template_key_of_the_wrong_type_is_refused_by_every_command(tmp_path, case, command):
    line, path, says = BAD[case]
    scenario = tmp_path / "bad.toml"
    scenario.write_text(line + "\n" + BASE)
    with pytest.raises(atmlab.ScenarioError) as e:
        getattr(atmlab, command)(scenario)
    assert (e.value.path, e.value.message) == (path, says)
    p = atmlab_cli(command, str(scenario))
    assert p.returncode == 2 and p.stderr == f"error: {scenario}: {path}: {says}\n", p.stderr


@pytest.mark.parametrize("repeat", ['"x"', "2.5", "true", "[1]", "-1"])
def test_a_repeat_that_is_not_a_count_is_refused(tmp_path, repeat):
    scenario = tmp_path / "bad.toml"
    scenario.write_text(BASE.replace('name = "a"', f'name = "a{{i}}"\nrepeat = {repeat}', 1))
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(scenario)
    assert e.value.path == "hosts[0].repeat" and e.value.message.startswith("must be a whole number from 0 to ")


def test_a_sweep_of_a_dict_is_checked_for_a_run_too():
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.run({**TWO_HOSTS, "sweep": "buffer"})
    assert (e.value.source, e.value.path) == ("<dict>", "sweep")
