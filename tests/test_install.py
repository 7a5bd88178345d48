"""A light install and a fast start: what ``atmlab`` imports, and what it
says when an extra is missing.

The fast tests run the command line in a fresh interpreter with the heavy
modules watched (or hidden, as if their extra were not installed); the slow
one installs atmlab without extras into a new virtualenv and uses it
(``pytest -m slow tests/test_install.py``; ``.ci/run`` runs it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

DRIVER = textwrap.dedent("""
    import sys
    for name in {hidden!r}:
        sys.modules[name] = None  # as if not installed: importing it raises ImportError
    from atmlab.cli import main
    try:
        main({argv!r})
    except SystemExit as e:
        code = e.code
    else:
        code = 0
    heavy = [m for m in ("pandas", "numpy", "matplotlib", "mpmath", "scipy", "dask", "pyarrow") if m in sys.modules
             and sys.modules[m] is not None]
    print("IMPORTED", ",".join(heavy), file=sys.stderr)
    sys.exit(code)
""")

def cli_watched(tmp_path: Path, *argv: str, hidden: tuple[str, ...] = ()) -> tuple[int, str, str, set[str]]:
    p = subprocess.run([sys.executable, "-c", DRIVER.format(argv=list(argv), hidden=list(hidden))], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    lines = p.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("IMPORTED"), p.stderr
    imported = set(filter(None, lines[-1].removeprefix("IMPORTED").strip().split(",")))
    return p.returncode, p.stdout, "\n".join(lines[:-1]), imported

@pytest.fixture
def small(tmp_path: Path) -> Path:
    from atmlab.bench import SMALL_SCENARIO

    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO, encoding="utf-8")
    return path

def test_start_up_and_a_run_import_no_pandas_matplotlib_or_mpmath(tmp_path, small):
    for argv in (["--version"], ["run", str(small)], ["validate", str(small)], ["cells", "--payload", "80"]):
        code, _, err, imported = cli_watched(tmp_path, *argv)
        assert code == 0, err
        assert not imported, f"atmlab {' '.join(argv)} imported {imported}"

def test_a_missing_extra_is_one_line_naming_it(tmp_path, small):
    code, out, err, _ = cli_watched(tmp_path, "sweep", str(small), "--db", "r.sqlite", "--dask", "local",
                                    hidden=("dask", "distributed"))
    assert code == 2 and err == "error: the Dask executor (--dask) needs atmlab's dask extra: pip install 'atmlab[dask]'"
    assert not (tmp_path / "r.sqlite").exists(), "checked before the database is created"
    code, _, err, _ = cli_watched(tmp_path, "sweep", str(small), "--db", "r.sqlite", "-j", "1")
    assert code == 0, err
    code, _, err, _ = cli_watched(tmp_path, "results", "--db", "r.sqlite", "--parquet", "r.parquet",
                                  hidden=("pyarrow", "fastparquet"))
    assert code == 2 and err == "error: --parquet needs atmlab's parquet extra: pip install 'atmlab[parquet]'"
    assert not (tmp_path / "r.parquet").exists()

@pytest.mark.slow
def test_a_fresh_install_without_extras_runs_and_sweeps(tmp_path, small):
    """``pip install .`` into a new virtualenv: no scipy, dask or pyarrow;
    ``atmlab run`` and ``sweep`` work, ``--dask`` and ``--parquet`` name
    their extras."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    p = subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(ROOT)], capture_output=True, text=True,
                       timeout=3000)
    assert p.returncode == 0, p.stderr[-3000:]
    missing = subprocess.run([str(py), "-c", "import importlib.util as u; print([m for m in ('scipy', 'dask', "
                              "'pyarrow') if u.find_spec(m)])"], capture_output=True, text=True, check=True)
    assert missing.stdout.strip() == "[]", "no extra installed"
    atmlab = str(venv / "bin" / "atmlab")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([atmlab, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=600)

    p = run("run", str(small))
    assert p.returncode == 0 and "bench_small" in p.stdout, p.stderr
    p = run("sweep", str(ROOT / "scenarios" / "examples" / "sweep_buffer.toml"), "--db", "r.sqlite")
    assert p.returncode == 0 and "8 runs done (0 failed)" in p.stdout, p.stderr
    p = run("report", "--db", "r.sqlite", "--out", "report")
    assert p.returncode == 0 and "5 figures" in p.stdout, p.stderr
    p = run("sweep", str(small), "--db", "r.sqlite", "--dask", "local")
    assert p.returncode == 2
    assert p.stderr.strip() == "error: the Dask executor (--dask) needs atmlab's dask extra: pip install 'atmlab[dask]'"
    p = run("results", "--db", "r.sqlite", "--parquet", "r.parquet")
    assert p.returncode == 2 and "pip install 'atmlab[parquet]'" in p.stderr
