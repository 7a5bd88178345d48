"""Files atmlab reads, under faults.

Scenario files nested too deep for a recursive parser: one ``error:``
line naming the file, exit status 2; never "internal error"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import atmlab
from atmlab.files import MAX_DEPTH, text_depth

from conftest import ROOT, atmlab_cli


def one_error_line(p: subprocess.CompletedProcess[str], path: Path | str, says: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), p.stderr
    assert says in lines[0], p.stderr


# ------------------------------------------------------------------ depth

DEEP_TEXTS = {
    "toml-arrays": ("deep.toml", "x = " + "[" * 500 + "]" * 500 + "\n", 501),
    "toml-inline-tables": ("deep.toml", "x = " + "{a = " * 500 + "1" + "}" * 500 + "\n", 501),
    "json-arrays": ("deep.json", '{"x": ' + "[" * 1000 + "]" * 1000 + "}", 1001),
    "json-objects": ("deep.json", '{"x": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}", 1001),
}


@pytest.mark.parametrize("case", DEEP_TEXTS, ids=list(DEEP_TEXTS))
def test_a_scenario_nested_too_deep_for_its_parser_is_refused_before_it(tmp_path, case):
    name, text, depth = DEEP_TEXTS[case]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(path)
    assert (e.value.source, e.value.path) == (str(path), "")
    assert e.value.message.startswith(f"too deep: arrays and tables nest {depth} levels deep; a scenario may nest "
                                      f"at most {MAX_DEPTH}")
    one_error_line(atmlab_cli("validate", str(path)), path, f"at most {MAX_DEPTH}")


@pytest.mark.parametrize("text", ["a" + ".a" * 2000 + " = 1\n", "[a" + ".a" * 2000 + "]\nx = 1\n"],
                         ids=["dotted-key", "table-header"])
def test_toml_that_nests_without_brackets_is_refused_before_the_expansion(tmp_path, text):
    """tomllib reads dotted keys without recursing; atmlab's expansion
    (and the copy of the data) would recurse into what it made."""
    path = tmp_path / "dotted.toml"
    path.write_text(text)
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(path)
    assert e.value.path == "a" and e.value.message.startswith("too deep:")
    one_error_line(atmlab_cli("run", str(path)), path, "a: too deep")


def test_a_mapping_nested_too_deep_is_a_scenario_error(two_hosts):
    deep: dict = {"a": 1}
    for _ in range(5000):
        deep = {"x": deep}
    for call in (atmlab.run, atmlab.validate, atmlab.Sweep):
        with pytest.raises(atmlab.ScenarioError) as e:
            call({**two_hosts, "description": deep})
        assert (e.value.source, e.value.path) == ("<dict>", "description")
        assert e.value.message.startswith("too deep:")


@pytest.mark.parametrize("suffix, text", [
    (".toml", "description = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"),
    (".json", '{"description": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"),
])
def test_the_depth_limit_itself_is_allowed(tmp_path, suffix, text):
    """At the limit the scenario reaches the core, which says what is wrong
    with it (a description is a string)."""
    path = tmp_path / f"limit{suffix}"
    path.write_text(text)
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(path)
    assert e.value.path == "description" and "too deep" not in e.value.message


def test_brackets_in_strings_and_comments_are_not_nesting():
    text = ('x = "[[[[{{" # [[[[[\n'
            "y = '[[[['\n"
            'z = """\n[[[[\n\\"""[[[ """\n'
            "w = '''[[[\n''''\n"
            'v = ["""a""""]\n')
    assert text_depth(text, toml=True) == 2
    assert text_depth('{"a": "[[[\\"[[", "b": [[1]]}', toml=False) == 3
    for rel in ("nsource_lan.toml", "tcp-abr/wan.toml", "expert/expert.toml"):
        text = (ROOT / "python" / "atmlab" / "scenarios" / rel).read_text()
        assert 2 <= text_depth(text, toml=True) <= 6
