"""The README's examples, run in order in a fresh folder, give the counts
the README states: step 1 (``atmlab reproduce kpn``) and the sweep of the
quick tour (``sweep``, ``results --csv``, ``report``). The counts are read
from the README's own comments, so the README and this test cannot drift
apart."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pandas as pd

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def commands() -> list[tuple[list[str], str]]:
    """The README's atmlab commands of step 1 and of the sweep block, in
    order, each with its comment."""
    step1 = re.search(r"&& \.venv/bin/atmlab (reproduce kpn)\n", README)
    assert step1, "step 1 reproduces kpn"
    found = [(shlex.split(step1.group(1)), "")]
    block = re.search(r"```sh\n(\.venv/bin/atmlab sweep scenarios/examples/sweep_buffer\.toml.*?)```", README,
                      re.DOTALL)
    assert block, "the quick tour's sweep block"
    for line in block.group(1).strip().splitlines():
        command, _, comment = line.partition("#")
        found.append((shlex.split(command)[1:], comment.strip()))
    assert [c[0][0] for c in found] == ["reproduce", "sweep", "results", "report"]
    return found


def number(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} in {text!r}"
    return int(m.group(1))


def test_the_readmes_examples_give_the_counts_it_states(tmp_path):
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")  # a fresh folder, as in a fresh checkout
    outputs = []
    for argv, comment in commands():
        p = subprocess.run([sys.executable, "-m", "atmlab.cli", *argv], cwd=tmp_path, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, (argv, p.stdout[-2000:], p.stderr[-2000:])
        outputs.append((argv, comment, p.stdout))

    (_, _, kpn), (_, sweep_says, sweep), (results_argv, results_says, results), (report_argv, report_says, rep) = outputs
    # Step 1 keeps its runs in its own folder, apart from the user's sweeps.
    assert (tmp_path / "results" / "kpn" / "atmlab.sqlite").exists()
    assert "results/kpn/atmlab.sqlite" in kpn

    runs = number(r"= (\d+) runs", sweep_says)
    points, reps = number(r"(\d+) points", sweep_says), number(r"x (\d+)", sweep_says)
    assert runs == points * reps
    assert f"{runs} runs done (0 failed)" in sweep

    assert number(r"(\d+) runs", results_says) == runs
    csv = tmp_path / results_argv[results_argv.index("--csv") + 1]
    assert f"wrote {runs} runs to" in results
    table = pd.read_csv(csv)
    assert len(table) == runs and set(table["sweep"]) == {"sweep_buffer"}
    assert list(table["point"]) == sorted(table["point"]), "in point order"
    assert table["buffer (cells)"].dtype.kind == "f", "swept quantities as numbers, their unit in the header"

    figures = number(r"(\d+) figures", report_says)
    assert f"and {figures} figures" in rep
    folder = tmp_path / report_argv[report_argv.index("--out") + 1]
    assert len(list(folder.glob("*.png"))) == figures
    assert (folder / "index.html").exists()
