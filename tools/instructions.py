"""Counts the instructions the event loop runs on a fixed set of cases, for
the working tree's core and, with ``--vs``, a commit's, side by side: the
measure that resolves a change of a few per cent, which this host's wall
clock does not (``docs/benchmark.md``, session of 2026-12-02).

    python tools/instructions.py                          # the working tree
    python tools/instructions.py --vs 742665d             # and a commit
    python tools/instructions.py --vs HEAD~2 --functions 12 --cases lan2 grwan5

Each build is the Python extension as ``pip install`` builds it (release,
``crates/atmlab-py`` with ``extension-module``, and with ``--pgo`` the
tree's own profile, as ``pgo/atmlab_backend.py`` adds it), run from a copy
of the working tree's Python package; a commit is built in a git worktree
under the scratch folder, all builds sharing one target folder. (Not the
example runner: an example builds with the dev-dependencies, whose
features change the crates' hashes and so every symbol's name, and a
profile trained on the extension then matches none of its functions.)
Each case is a bundled scenario with a short duration, written as JSON by
this package (``atmlab.load(...).to_json()``): a commit whose schema
differs may refuse it. Callgrind (valgrind) counts the instructions
inside ``Simulation::advance_events``, so the set-up (the video's FGN
sequences, say) is left out. ``--functions N`` prints, per case, the N
functions whose own instructions changed most between the two builds:
the way to see that LLVM stopped inlining something.

valgrind is a tool here, not a dependency (Debian: ``apt install valgrind``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "pgo"))
from atmlab_backend import profile_flag  # noqa: E402

# name: (bundled scenario, simulated duration); the set of docs/benchmark.md.
CASES = {
    "expert10": ("expert/expert.toml", "10 s"),
    "lan2": ("nsource_lan.toml", "2 s"),
    "abrwan2": ("tcp-abr/wan.toml", "2 s"),
    "grlan5": ("ubr-gr/lan.toml", "5 s"),
    "grwan5": ("ubr-gr/wan.toml", "5 s"),
    "satwan5": ("tcp-abr/sat_wan.toml", "5 s"),
    "satsat5": ("tcp-abr/sat_sat.toml", "5 s"),
}


def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    """Runs `cmd`, or exits with its output if it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if done.returncode != 0:
        sys.exit(f"tools/instructions.py: {' '.join(cmd)} failed:\n{done.stdout}{done.stderr}")
    return done


def build(tree: Path, target: Path, pgo: bool, scratch: Path) -> Path:
    """A copy of this tree's Python package with the extension of the core
    in `tree`, built into `target`: the folder to put on PYTHONPATH."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    env.pop("RUSTFLAGS", None)
    if pgo:
        # The flag the build backend adds, for the tree's own profile.
        env.pop("ATMLAB_PGO", None)
        flag = profile_flag(env, run(["rustc", "-vV"], cwd=tree).stdout, tree / "pgo")
        if flag is None:
            sys.exit(f"tools/instructions.py: {tree}/pgo has no profile for this rustc's LLVM")
        env["RUSTFLAGS"] = flag
    print(f"building the extension of {tree} ...", file=sys.stderr)
    run(["cargo", "build", "--release", "-p", "atmlab-py", "--features", "extension-module"], cwd=tree, env=env)
    package = scratch / f"py-{tree.name}{'-pgo' if pgo else ''}"
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(ROOT / "python" / "atmlab", package / "atmlab", ignore=shutil.ignore_patterns("_core*.so"))
    shutil.copy2(target / "release" / "lib_core.so", package / "atmlab" / "_core.abi3.so")
    return package


def worktree(commit: str, scratch: Path) -> Path:
    """A worktree of `commit` under `scratch` (made once, then reused)."""
    sha = run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=ROOT).stdout.strip()
    tree = scratch / f"wt-{sha[:12]}"
    if not tree.exists():
        run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT)
    return tree


def scenario_json(case: str, scratch: Path) -> Path:
    """The case's scenario as JSON, with its duration."""
    import atmlab

    path, duration = CASES[case]
    data = json.loads(atmlab.load(ROOT / "python" / "atmlab" / "scenarios" / path).to_json())
    data["simulation"]["duration"] = duration
    out = scratch / f"{case}.json"
    out.write_text(json.dumps(data))
    return out


# Runs one scenario through the extension, as `atmlab bench` does.
DRIVER = "import sys, atmlab._core as c; c.bench_scenario(open(sys.argv[1]).read(), None)"


def callgrind(package: Path, scenario: Path, out: Path) -> int:
    """Instructions inside the event loop for one run of `scenario`."""
    done = run(
        [
            "valgrind",
            "--tool=callgrind",
            "--toggle-collect=*advance_events*",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            DRIVER,
            str(scenario),
        ],
        env=dict(os.environ, PYTHONPATH=str(package)),
    )
    m = re.search(r"Collected : (\d+)", done.stderr)
    if m is None:
        sys.exit(f"tools/instructions.py: no count in valgrind's output:\n{done.stderr}")
    return int(m.group(1))


def own_instructions(profile: Path) -> collections.Counter[str]:
    """Each function's own instructions (inlined code counts where it lands)."""
    text = run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(profile)]).stdout
    counts: collections.Counter[str] = collections.Counter()
    listing = False
    for line in text.splitlines():
        if "file:function" in line:
            listing = True
            continue
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line) if listing else None
        if m:
            name = re.sub(r" \[.*", "", m.group(2))
            counts[name.split(":", 1)[-1]] += int(m.group(1).replace(",", ""))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vs", metavar="COMMIT", help="also build COMMIT and compare")
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES), metavar="CASE",
                    help=f"which cases (default all: {', '.join(CASES)})")
    ap.add_argument("--functions", type=int, default=0, metavar="N",
                    help="print the N functions whose own instructions changed most")
    ap.add_argument("--pgo", action="store_true", help="build each core with its committed profile")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/atmlab-instructions"),
                    help="worktrees, target folder and profiles (default /tmp/atmlab-instructions)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("tools/instructions.py: valgrind is not installed (Debian: apt install valgrind)")
    args.scratch.mkdir(parents=True, exist_ok=True)
    target = args.scratch / "target"
    builds = {"tree": build(ROOT, target, args.pgo, args.scratch)}
    if args.vs:
        builds = {args.vs: build(worktree(args.vs, args.scratch), target, args.pgo, args.scratch), **builds}
    names = list(builds)
    print(f"{'case':10s}" + "".join(f"{n:>16s}" for n in names) + ("      change" if args.vs else ""))
    for case in args.cases:
        scenario = scenario_json(case, args.scratch)
        counts = {n: callgrind(b, scenario, args.scratch / f"cg.{case}.{i}") for i, (n, b) in enumerate(builds.items())}
        row = f"{case:10s}" + "".join(f"{counts[n] / 1e6:14.1f} M" for n in names)
        if args.vs:
            a, b = counts[names[0]], counts[names[1]]
            row += f"  {100 * (b - a) / a:+8.2f} %"
        print(row, flush=True)
        if args.vs and args.functions:
            old = own_instructions(args.scratch / f"cg.{case}.0")
            new = own_instructions(args.scratch / f"cg.{case}.1")
            moved = sorted(set(old) | set(new), key=lambda k: -abs(new[k] - old[k]))[: args.functions]
            for k in moved:
                print(f"    {(new[k] - old[k]) / 1e6:+9.2f} M  {old[k] / 1e6:9.2f} -> {new[k] / 1e6:9.2f}  {k[:110]}")


if __name__ == "__main__":
    main()
