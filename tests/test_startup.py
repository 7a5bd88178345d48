"""Start-up time (issue 29, item 9): what `atmlab --version` and `atmlab
run` import. Times on a shared machine are noise; what is imported is not,
and it is what made them slow: importlib.metadata was a third of `import
atmlab`, and every command imported rich, the sweep machinery (sqlite3,
multiprocessing, asyncio) and statistics. `atmlab bench` times the
commands (docs/benchmark.md, "Start-up")."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import atmlab

from conftest import ROOT

WATCH = textwrap.dedent("""
    import io, json, sys
    from contextlib import redirect_stdout
    sys.argv = ["atmlab", *json.loads(sys.argv[1])]
    out = io.StringIO()
    with redirect_stdout(out):
        try:
            from atmlab.__main__ import main  # what the `atmlab` script runs
            main()
        except SystemExit as e:
            assert not e.code, e.code
    print(json.dumps({"out": out.getvalue(), "modules": sorted(sys.modules)}))
""")


def imported(*argv: str, cwd: Path = ROOT) -> tuple[str, set[str]]:
    p = subprocess.run([sys.executable, "-c", WATCH, json.dumps(argv)], capture_output=True, text=True, cwd=cwd,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    return doc["out"], set(doc["modules"])


def test_version_imports_the_core_and_nothing_of_the_command_line():
    out, modules = imported("--version")
    assert out == atmlab.about.text() + "\n"
    ours = {m for m in modules if m.startswith("atmlab")}
    assert ours == {"atmlab", "atmlab.__main__", "atmlab._core", "atmlab.about", "atmlab.errors"}
    assert not {m for m in modules if m.split(".")[0] in ("click", "rich", "pandas", "numpy")}
    assert "importlib.metadata" not in modules


def test_version_says_what_the_command_line_says():
    """The script's quick answer and click's --version are one line."""
    quick = subprocess.run([sys.executable, "-m", "atmlab", "--version"], capture_output=True, text=True, cwd=ROOT)
    full = subprocess.run([sys.executable, "-m", "atmlab.cli", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert quick.returncode == full.returncode == 0
    assert quick.stdout == full.stdout == atmlab.about.text() + "\n"


SLOW = ("importlib.metadata", "importlib.resources", "tempfile", "sqlite3", "multiprocessing", "concurrent.futures",
        "asyncio", "statistics", "hashlib", "atmlab.store", "atmlab.sweep", "atmlab.executors", "rich.progress")


def test_a_run_imports_neither_the_sweep_machinery_nor_package_metadata(tmp_path):
    from atmlab.bench import TINY_SCENARIO

    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SCENARIO, encoding="utf-8")
    out, modules = imported("run", str(path), cwd=tmp_path)
    assert "bench_tiny" in out and "1 ms simulated" in out
    assert not modules & set(SLOW), sorted(modules & set(SLOW))


def test_the_command_line_names_the_store_s_default_database():
    from atmlab import cli, store

    assert cli.DEFAULT_DB == store.DEFAULT_DB


def test_the_version_is_the_installed_package_s():
    """__version__ is the core's (maturin gives the package the crates'
    version); the metadata of an installed atmlab says the same."""
    try:
        installed = importlib.metadata.version("atmlab")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a source tree without install
        pytest.skip("atmlab is not installed")
    assert atmlab.__version__ == installed == atmlab._core.core_version()


def test_the_package_s_names_and_modules_are_there_when_asked_for():
    code = ("import atmlab, sys\n"
            "assert 'atmlab.sweep' not in sys.modules and 'atmlab.expand' not in sys.modules\n"
            "assert atmlab.expand.MAX_POINTS == 10_000  # a submodule, imported on first use\n"
            "assert atmlab.Sweep.__module__ == 'atmlab.sweep' and callable(atmlab.run)\n"
            "from atmlab import Result, __version__, validate\n"
            "assert set(atmlab.__all__) <= set(dir(atmlab))\n"
            "try:\n"
            "    atmlab.no_such_name\n"
            "except AttributeError as e:\n"
            "    assert 'no_such_name' in str(e)\n"
            "else:\n"
            "    raise SystemExit('no AttributeError')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
