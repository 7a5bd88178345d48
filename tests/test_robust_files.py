"""Files atmlab reads and writes, under faults.

Scenario files that are not what a scenario file should be: nested too
deep for a recursive parser, not a regular file (a device, a FIFO, a
socket, a folder), or too large. Each is one ``error:`` line naming the
file, exit status 2, at once: never "internal error", a hang, or a read
until memory runs out.

Exports (``atmlab results --csv/--parquet``) onto a full disk: one line
naming the file, and no part of a file left behind (the old file, if
any, as it was)."""

from __future__ import annotations

import errno
import os
import resource
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import atmlab
from atmlab.cli import main
from atmlab.files import MAX_DEPTH, MAX_FILE_BYTES, text_depth

from conftest import ROOT, TWO_HOSTS, atmlab_cli, voice_sweep
from test_robust_db import in_mount_namespace, mount_namespace  # noqa: F401 (a fixture)


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


# --------------------------------------------------------- not a regular file

def bounded_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`atmlab ARGS` with 4 GiB of address space and a minute: what it
    would do unbounded (read /dev/zero until the machine's memory runs
    out, wait on a FIFO for ever) fails the test instead."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-m", "atmlab.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, preexec_fn=limit)


def test_a_device_is_refused_not_read_until_memory_runs_out():
    for device in ("/dev/zero", "/dev/null"):
        p = bounded_cli("validate", device)
        one_error_line(p, device, "cannot read it: a character device, not a regular file")


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    p = bounded_cli("validate", str(fifo))  # a hang fails here
    one_error_line(p, fifo, "cannot read it: a FIFO (named pipe), not a regular file")


def test_a_folder_and_a_socket_are_refused(tmp_path):
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(atmlab.ScenarioError, match=r"folder.toml: cannot read it: a folder, not a regular file$"):
        atmlab.load(folder)
    sock_path = tmp_path / "s.toml"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(atmlab.ScenarioError, match=r"s.toml: cannot read it: a socket, not a regular file$"):
            atmlab.load(sock_path)


def test_a_file_larger_than_the_limit_is_refused_after_reading_one_byte_more(tmp_path, monkeypatch):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    one_error_line(atmlab_cli("validate", str(big)), big, "cannot read it: larger than 64 MiB")
    # Reading stops at the limit, whatever the file's size says.
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with open(big, "r+b") as f:
        f.truncate(10 * MAX_FILE_BYTES)
    with pytest.raises(atmlab.ScenarioError, match="larger than 64 MiB"):
        atmlab.load(big)
    assert sum(reads) == MAX_FILE_BYTES + 1


def test_a_file_at_the_limit_is_read(tmp_path):
    path = tmp_path / "padded.toml"
    text = (ROOT / "python" / "atmlab" / "scenarios" / "nsource_lan.toml").read_text()
    path.write_text(text + "#" * (MAX_FILE_BYTES - len(text.encode()) - 1) + "\n")
    assert path.stat().st_size == MAX_FILE_BYTES
    assert atmlab.load(path).name == "nsource_lan"


def test_a_rates_file_is_bounded_too(tmp_path, two_hosts):
    fifo = tmp_path / "rates.txt"
    os.mkfifo(fifo)
    sc = {**two_hosts, "apps": [{"kind": "piecewise", "name": "p", "vc": "v", "interval": "1 ms",
                                  "rates": {"file": str(fifo), "unit": "Mbit/s"}}]}
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.load(sc)
    assert e.value.path == "apps[0].rates.file" and "not a file" in e.value.message
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    sc["apps"][0]["rates"]["file"] = str(big)
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.load(sc)
    assert e.value.path == "apps[0].rates.file" and "cannot read it: larger than 64 MiB" in e.value.message


# ---------------------------------------------------------------- exports onto a full disk

@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("export") / "r.sqlite"
    atmlab.Sweep(voice_sweep(TWO_HOSTS, n_values=(1, 2, 3)), replications=2).run(db, jobs=1)
    return db


def disk_full_after(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """DataFrame.`method` writes part of its file, then the disk is full."""

    def write(self: pd.DataFrame, path: Any, *args: Any, **kwargs: Any) -> None:
        Path(path).write_bytes(b"run_id,sweep,scen")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, method, write)


@pytest.mark.parametrize("option, method", [("--csv", "to_csv"), ("--parquet", "to_parquet")])
@pytest.mark.parametrize("existing", [False, True], ids=["new", "replaced"])
def test_an_export_onto_a_full_disk_leaves_no_part_of_a_file(small_db, tmp_path, monkeypatch, option, method,
                                                               existing):
    out = tmp_path / f"runs.{option[2:]}"
    if existing:
        out.write_text("the export of yesterday\n")
    disk_full_after(monkeypatch, method)
    r = CliRunner().invoke(main, ["results", "--db", str(small_db), option, str(out)])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    kept = "the file is as it was" if existing else "no file was written"
    assert r.stderr == f"error: {out}: cannot write it: No space left on device; {kept}\n"
    assert [p.name for p in tmp_path.iterdir()] == ([out.name] if existing else [])  # no temporary left
    if existing:
        assert out.read_text() == "the export of yesterday\n"


def test_an_export_is_whole_and_readable_like_any_new_file(small_db, tmp_path):
    out = tmp_path / "runs.csv"
    r = CliRunner().invoke(main, ["results", "--db", str(small_db), "--csv", str(out)])
    assert r.exit_code == 0, r.output
    assert len(pd.read_csv(out)) == 12 and [p.name for p in tmp_path.iterdir()] == ["runs.csv"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600


def test_an_export_onto_a_really_full_disk(small_db, tmp_path, mount_namespace):
    """A 16 KiB tmpfs filled up, in a private mount namespace."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = ('mount -t tmpfs -o size=16k tmpfs "$0" || exit 99\n'
              'cat /dev/zero > "$0/filler" 2> /dev/null\n'
              f'{sys.executable} -m atmlab.cli results --db {small_db} --csv "$0/runs.csv"\n'
              'echo "exit $?" >&2\n'
              'ls -A "$0"\n')
    p = in_mount_namespace(script, str(disk))
    error, status = p.stderr.strip().splitlines()
    assert status == "exit 2" and "Traceback" not in p.stderr, p.stderr
    assert error == f"error: {disk}/runs.csv: cannot write it: No space left on device; no file was written"
    assert p.stdout == "filler\n", "nothing of the export left on the disk"
