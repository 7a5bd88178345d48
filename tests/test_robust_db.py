"""The results database under faults (issue: hardening).

Every fault gives one ``error:`` line, a non-zero exit and no traceback, and
leaves the file byte for byte as it was: a file that is not a database, an
SQLite file that is not atmlab's, a damaged one, a read-only file or folder
(for a sweep), a missing one. Readers (``atmlab results``, ``atmlab report``,
``atmlab.results``) open the database read-only: they work on a read-only
file, folder and medium, and never create or change anything. A disk that
fills up while a sweep stores its runs stops the sweep with one line; the
runs stored before stay usable and the same command resumes.

Root ignores permission bits; for the read-only cases the command then runs
without the capabilities that let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH),
or as user 65534. A read-only medium is a read-only bind mount in a private
mount namespace (``unshare``); a full disk, a small tmpfs there, and in this
process SQLite's ``max_page_count``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

import atmlab
from atmlab.cli import main
from atmlab.store import APPLICATION_ID, Store

from conftest import ROOT, TWO_HOSTS, voice_sweep

SWEEP = "scenarios/examples/sweep_buffer.toml"

VOICE = """
name = "voice"
[params]
delay = "5 us"
[sweep]
delay = ["5 us", "1 ms", "2 ms"]
[simulation]
duration = "100 ms"
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
delay = "{delay}"
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


@pytest.fixture(scope="module")
def results_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real results database with 24 runs, made once."""
    db = tmp_path_factory.mktemp("made") / "r.sqlite"
    out = atmlab.Sweep(voice_sweep(TWO_HOSTS, n_values=(1, 2, 3, 4)), replications=3).run(db, jobs=1)
    assert out.runs == 24
    return db


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder every user may enter (pytest's tmp_path is root's only)."""
    folder = Path(tempfile.mkdtemp(prefix="atmlab-db-"))
    folder.chmod(0o755)
    yield folder
    for p in folder.rglob("*"):
        if p.is_dir():
            p.chmod(0o755)
    shutil.rmtree(folder)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def run_cli(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPLCONFIGDIR": tempfile.gettempdir()}
    return subprocess.run([sys.executable, "-m", "atmlab.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env, **kwargs)


def assert_one_error_line(p: subprocess.CompletedProcess[str], *words: str) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def command(name: str, db: Path, tmp: Path) -> list[str]:
    return {
        "sweep": ["sweep", SWEEP, "--jobs", "1", "--db", str(db)],
        "results": ["results", "--db", str(db)],
        "report": ["report", "--db", str(db), "--out", str(tmp / "report")],
    }[name]


# ---------------------------------------------------------------- files that are not results databases

def random_bytes(folder: Path, _: Path) -> Path:
    path = folder / "random.sqlite"
    path.write_bytes(random.Random(1).randbytes(64 * 1024))
    return path


def text_file(folder: Path, _: Path) -> Path:
    path = folder / "runs.csv"
    path.write_text("run_id,efficiency\n" + "".join(f"{i},0.9\n" for i in range(1000)))
    return path


def foreign_tables(folder: Path, _: Path) -> Path:
    path = folder / "contacts.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (name TEXT, phone TEXT)")
        con.executemany("INSERT INTO people VALUES (?, ?)", [(f"p{i}", str(i)) for i in range(100)])
    con.close()
    return path


def foreign_application(folder: Path, _: Path) -> Path:
    """Another application's database, with a table named like atmlab's."""
    path = folder / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA application_id = 1598903374")  # Fossil's
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.close()
    return path


def corrupted(folder: Path, results_db: Path) -> Path:
    """A real results database with garbage over three pages in its middle."""
    path = folder / "damaged.sqlite"
    shutil.copy(results_db, path)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        pages, size = con.execute("PRAGMA page_count").fetchone()[0], con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    assert pages >= 20, "a database with many pages"
    garbage = random.Random(2)
    with open(path, "r+b") as f:
        for page in (pages // 2 - 1, pages // 2, pages // 2 + 1):
            f.seek(page * size)
            f.write(garbage.randbytes(size))
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        try:
            verdict = [r[0] for r in con.execute("PRAGMA integrity_check")]
        except sqlite3.DatabaseError as e:
            verdict = [str(e)]
    con.close()
    assert verdict != ["ok"], "the damage is one SQLite finds"
    return path


FAULTS = {
    "random bytes": (random_bytes, "not an SQLite database"),
    "text file": (text_file, "not an SQLite database"),
    "foreign SQLite file": (foreign_tables, "not an atmlab results database"),
    "another application's database": (foreign_application, "not an atmlab results database"),
    "corrupted pages": (corrupted, "damaged"),
}


@pytest.mark.parametrize("name", ["sweep", "results", "report"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_file_that_is_not_a_sound_results_database_is_refused_and_left_alone(tmp_path, results_db, fault, name):
    make, says = FAULTS[fault]
    folder = tmp_path / "db"
    folder.mkdir()
    path = make(folder, results_db)
    before, files = sha(path), listing(folder)
    p = run_cli(*command(name, path, tmp_path))
    line = assert_one_error_line(p, str(path), says)
    assert "--db" in line, "says what to do"
    assert sha(path) == before and listing(folder) == files


def test_a_damaged_database_is_refused_by_the_api_too(tmp_path, results_db):
    path = corrupted(tmp_path, results_db)
    before = sha(path)
    with pytest.raises(atmlab.ResultsDatabaseError, match="damaged"):
        atmlab.results(path)
    with pytest.raises(atmlab.ResultsDatabaseError, match="damaged"):
        atmlab.Sweep(voice_sweep(TWO_HOSTS)).run(path, jobs=1)
    assert sha(path) == before


def test_readers_never_create_a_database(tmp_path):
    missing = tmp_path / "nothing" / "r.sqlite"
    assert_one_error_line(run_cli("results", "--db", str(missing)), "no results database")
    with pytest.raises(atmlab.ResultsDatabaseError, match="no results database"):
        atmlab.results(missing)
    with pytest.raises(atmlab.ResultsDatabaseError, match="no results database"):
        atmlab.Sweep(voice_sweep(TWO_HOSTS)).summary(missing)
    assert not missing.parent.exists()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    assert_one_error_line(run_cli("results", "--db", str(empty)), "an empty database")
    assert empty.read_bytes() == b""


def test_a_sweep_stamps_its_database_and_leaves_it_whole(tmp_path):
    db = tmp_path / "r.sqlite"
    atmlab.Sweep(voice_sweep(TWO_HOSTS, n_values=(1,))).run(db, jobs=1)
    assert listing(tmp_path) == ["r.sqlite"], "no -wal or -shm file: the file is the whole database"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()


def test_a_database_written_before_the_stamp_is_accepted_and_stamped(tmp_path, results_db):
    db = tmp_path / "old.sqlite"
    shutil.copy(results_db, db)
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA application_id = 0")
        con.execute("PRAGMA journal_mode = WAL")  # as the earlier atmlab left it
    con.close()
    assert len(atmlab.results(db)) == 24
    out = atmlab.Sweep(voice_sweep(TWO_HOSTS, n_values=(1, 2, 3, 4)), replications=4).run(db, jobs=1)
    assert (out.skipped, out.ran, out.runs) == (24, 8, 32)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    con.close()


# ---------------------------------------------------------------- read-only files, folders and media

def _without_dac_capabilities() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
    from the bounding set, so that root, after exec, obeys permission bits."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, ctypes.c_ulong(cap), 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def unprivileged(shared_tmp: Path) -> dict[str, Any]:
    """subprocess keyword arguments under which permission bits apply: none
    for an ordinary user; for root, no DAC capabilities, or else user 65534."""
    if os.geteuid() != 0:
        return {}
    probe = shared_tmp / "probe"
    probe.write_text("")
    probe.chmod(0o444)
    check = [sys.executable, "-c", "import os, sys; sys.exit(os.access(sys.argv[1], os.W_OK))", str(probe)]
    for kwargs in ({"preexec_fn": _without_dac_capabilities}, {"user": 65534, "group": 65534, "extra_groups": []}):
        try:
            if subprocess.run(check, timeout=60, **kwargs).returncode == 0:
                probe.unlink()
                return kwargs
        except (OSError, subprocess.SubprocessError):
            continue
    pytest.skip("running as root, and neither dropping CAP_DAC_OVERRIDE nor running as user 65534 works here")


def read_only_copy(results_db: Path, folder: Path, *, file_ro: bool, folder_ro: bool, wal: bool = False) -> Path:
    folder.mkdir(mode=0o755)
    db = folder / "r.sqlite"
    shutil.copy(results_db, db)
    if wal:  # as a database written by an earlier atmlab: its header says WAL
        with sqlite3.connect(db) as con:
            con.execute("PRAGMA journal_mode = WAL")
        con.close()
    db.chmod(0o444 if file_ro else 0o666)
    if folder_ro:
        folder.chmod(0o555)
    return db


def assert_readers_work(db: Path, out: Path, expected_runs: int = 24, **kwargs: Any) -> None:
    p = run_cli("results", "--db", str(db), "--csv", str(out / "runs.csv"), **kwargs)
    assert p.returncode == 0, p.stderr
    assert len(pd.read_csv(out / "runs.csv")) == expected_runs
    p = run_cli("report", "--db", str(db), "--out", str(out / "report"), **kwargs)
    assert p.returncode == 0, p.stderr
    assert (out / "report" / "index.html").exists()


@pytest.mark.parametrize("case, says", [
    ({"file_ro": True, "folder_ro": False}, "the file is read-only"),
    ({"file_ro": False, "folder_ro": True}, "its folder is read-only"),
    ({"file_ro": False, "folder_ro": True, "wal": True}, "its folder is read-only"),
], ids=["read-only file", "read-only folder", "read-only folder, WAL-mode database"])
def test_read_only_database_refuses_a_sweep_and_serves_readers(results_db, shared_tmp, unprivileged, case, says):
    folder = shared_tmp / "db"
    db = read_only_copy(results_db, folder, **case)
    out = shared_tmp / "out"
    out.mkdir()
    out.chmod(0o777)  # for user 65534 too
    before, files = sha(db), listing(folder)
    assert_one_error_line(run_cli("sweep", SWEEP, "--jobs", "1", "--db", str(db), **unprivileged), str(db), says)
    assert_readers_work(db, out, **unprivileged)
    assert sha(db) == before and listing(folder) == files


def in_mount_namespace(script: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`script` (sh) with `args` in a private mount namespace, where it may
    mount file systems (in a user namespace too, for an ordinary user)."""
    unshare = ["unshare", "--mount", "--propagation", "private"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    return subprocess.run([*unshare, "sh", "-c", script, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MPLCONFIGDIR": tempfile.gettempdir()}, **kwargs)


@pytest.fixture
def mount_namespace(tmp_path: Path) -> None:
    """Skips unless this machine lets a test mount file systems in a namespace of its own."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to mount a file system")
    p = in_mount_namespace('mount -t tmpfs -o size=64k tmpfs "$0" && mount -o remount,ro "$0" && touch "$0/x"',
                           str(tmp_path))
    if "Read-only file system" not in p.stderr:
        pytest.skip(f"cannot mount file systems in a namespace here: {p.stderr.strip()}")


def on_read_only_medium(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with `folder` mounted read-only (a read-only bind mount)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return in_mount_namespace(script, str(folder), sys.executable, "-m", "atmlab.cli", *args)


def killed_writer(results_db: Path, folder: Path) -> Path:
    """A database whose writer was killed: 4 runs deleted, in its -wal file only."""
    folder.mkdir()
    db = folder / "r.sqlite"
    shutil.copy(results_db, db)
    code = ("import os, sqlite3, sys\n"
            "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "con.execute('PRAGMA journal_mode = WAL'); con.execute('PRAGMA wal_autocheckpoint = 0')\n"
            "con.execute('DELETE FROM metrics WHERE run_id > 20'); con.execute('DELETE FROM runs WHERE run_id > 20')\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(db)], check=True, timeout=60)
    assert sorted(listing(folder)) == ["r.sqlite", "r.sqlite-shm", "r.sqlite-wal"]
    return db


@pytest.mark.parametrize("kind", ["written by a sweep", "WAL mode", "killed writer"])
def test_readers_work_on_a_read_only_medium(results_db, tmp_path, mount_namespace, kind):
    folder = tmp_path / "medium"
    if kind == "killed writer":
        db, runs = killed_writer(results_db, folder), 20  # the runs in the WAL count
    else:
        db, runs = read_only_copy(results_db, folder, file_ro=False, folder_ro=False, wal=kind == "WAL mode"), 24
    before = {name: sha(folder / name) for name in listing(folder)}
    p = on_read_only_medium(folder, "results", "--db", str(db), "--csv", str(tmp_path / "runs.csv"))
    assert p.returncode == 0, p.stderr
    assert len(pd.read_csv(tmp_path / "runs.csv")) == runs
    p = on_read_only_medium(folder, "report", "--db", str(db), "--out", str(tmp_path / "report"))
    assert p.returncode == 0, p.stderr
    p = on_read_only_medium(folder, "sweep", SWEEP, "--jobs", "1", "--db", str(db))
    assert_one_error_line(p, "read-only file system")
    assert {name: sha(folder / name) for name in listing(folder)} == before


# ---------------------------------------------------------------- a full disk

def test_a_full_disk_stops_the_sweep_with_one_line_and_keeps_what_was_stored(tmp_path, monkeypatch):
    scenario, db = tmp_path / "voice.toml", tmp_path / "r.sqlite"
    scenario.write_text(VOICE)
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--jobs", "1", "--db", str(db)])
    assert r.exit_code == 0, r.output
    set_up = Store._set_up

    def small_disk(self: Store, con: sqlite3.Connection) -> None:
        """The writer's database may grow by a few pages only, as on a nearly full disk."""
        set_up(self, con)
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages + 12}")

    monkeypatch.setattr(Store, "_set_up", small_disk)
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--replications", "20", "--jobs", "1", "--db", str(db)])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "the disk is full" in lines[0] and "every run stored before is kept" in lines[0]
    monkeypatch.undo()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    stored = atmlab.results(db)
    assert 3 < len(stored) < 60 and (stored.status == "ok").all(), "some runs were stored before the disk filled"
    # Space again: the same command resumes and completes every run once.
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--replications", "20", "--jobs", "1", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert f"{len(stored)} already in" in r.stdout
    done = atmlab.results(db)
    assert len(done) == 60 and not done.duplicated(["scenario_hash", "seed", "replication"]).any()


FILL = """
name = "fill"
[params]
buffer = 100
[sweep]
buffer = {{ start = 100, step = 100, count = 60 }}
[simulation]
duration = "50 ms"
[[switches]]
name = "sw"
port = {{ buffer = "{{buffer}}" }}
[[hosts]]
repeat = 3
name = "h{{i}}"
[[hosts]]
name = "sink"
[[links]]
repeat = 3
between = ["h{{i}}", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "sink"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
repeat = 3
name = "v{{i}}"
path = ["h{{i}}", "sw", "sink"]
[[apps]]
repeat = 3
kind = "tcp_bulk"
name = "t{{i}}"
vc = "v{{i}}"
[[probes]]
kind = "queue"
port = ["sw", "sink"]
interval = "100 us"
""".format()


def test_a_really_full_disk(tmp_path, mount_namespace):
    """A 400 kB tmpfs as the database's file system, in a private mount
    namespace: the sweep stops with one line, what it stored stays sound."""
    scenario, disk = tmp_path / "fill.toml", tmp_path / "disk"
    scenario.write_text(FILL)
    disk.mkdir()
    db = disk / "r.sqlite"
    check = ("import sqlite3, sys, atmlab\n"
             "con = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True)\n"
             "print(con.execute('PRAGMA integrity_check').fetchone()[0], len(atmlab.results(sys.argv[1])))\n")
    script = ('mount -t tmpfs -o size=400k tmpfs "$0" || exit 99\n'
              f'{sys.executable} -m atmlab.cli sweep {scenario} --jobs 1 --db {db} > /dev/null\n'
              'echo "exit $?" >&2\n'
              f'{sys.executable} -c "$1" {db}\n')
    p = in_mount_namespace(script, str(disk), check)
    error, status = p.stderr.strip().splitlines()
    assert status == "exit 2", p.stderr
    assert error.startswith("error: ") and "the disk is full" in error and "Traceback" not in p.stderr
    verdict, runs = p.stdout.split()
    assert verdict == "ok" and 0 < int(runs) < 60, p.stdout
