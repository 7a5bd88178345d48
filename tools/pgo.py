"""Writes the profile that atmlab's build optimises the Rust core by
(``pgo/llvm<N>.profdata``, used by ``pgo/atmlab_backend.py``).

    python tools/pgo.py                  # about 5 minutes on 2 cores, the check included
    python tools/pgo.py --profdata /usr/lib/llvm-22/bin/llvm-profdata

Steps: an instrumented build of atmlab (``RUSTFLAGS=-Cprofile-generate``)
into a scratch virtualenv and target folder; in it, every study's quick
reproduction in one process (``atmlab reproduce all --quick -j 1``: the
profile is written when the process exits, which worker processes do not
do normally); the counts merged by ``llvm-profdata`` of the LLVM major
version of ``rustc -vV`` (rustup's ``llvm-tools`` component, found in
rustc's sysroot; or Debian's ``apt install llvm-<N>``). Run it again
after changing the core: a profile older than the code still builds and
runs the same results, but the functions that changed are no longer
optimised by it. Last, unless
``--no-check``, the extension is built with the new profile as ``pip
install`` builds it, and the tool fails if a function of the hot path
finds no counts in it (a codegen split unlike the instrumented build's:
``docs/architecture.md``, "The build").
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "pgo"))
from atmlab_backend import llvm_major  # noqa: E402


def find_profdata(major: int, given: str | None) -> str:
    """An ``llvm-profdata`` of LLVM ``major``, or exit saying how to get one."""
    # rustup's llvm-tools component puts rustc's own LLVM tools in the
    # sysroot: the surest match, tried first.
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True).stdout.strip()
    host = subprocess.run(["rustc", "--print", "host-tuple"], capture_output=True, text=True).stdout.strip()
    candidates = [given] if given else [
        f"{sysroot}/lib/rustlib/{host}/bin/llvm-profdata",
        f"llvm-profdata-{major}",
        f"/usr/lib/llvm-{major}/bin/llvm-profdata",
        "llvm-profdata",
    ]
    for c in candidates:
        path = shutil.which(c) if c else None
        if path is None:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        if f"LLVM version {major}." in out:
            return path
        if given:
            sys.exit(f"tools/pgo.py: {given} is not LLVM {major}'s llvm-profdata (rustc's LLVM): {out.strip()}")
    sys.exit(
        f"tools/pgo.py: no llvm-profdata of LLVM {major} (rustc's) found; install it "
        f"(rustup component add llvm-tools, or Debian: apt install llvm-{major}) "
        f"or name it with --profdata"
    )


# Functions on every run's path, as their mangled names spell them (each
# segment's length, then its name): each must find its counts.
HOT = ("13offer_to_port17h", "11put_on_link17h", "12enter_switch17h", "14advance_events17h",
       "4Port8transmit17h", "4Port5offer17h")


def check(profile: Path, target: Path) -> None:
    """Builds the extension with `profile` as `pip install` does and exits
    if LLVM finds no counts for a function of the hot path: the profile's
    names for internal functions carry their codegen unit, and a build
    whose units differ from the instrumented one's (several units per
    crate) reads none for them (docs/architecture.md, "The build")."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(target), "ATMLAB_PGO": "0",
           "RUSTFLAGS": f"-Cprofile-use={profile} -Cllvm-args=-pgo-warn-missing-function"}
    print("tools/pgo.py: building with the profile to check that the hot path finds its counts ...", flush=True)
    done = subprocess.run(
        ["cargo", "build", "--release", "-p", "atmlab-py", "--features", "extension-module"],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"tools/pgo.py: the build with the profile failed:\n{done.stderr[-3000:]}")
    missing = [
        line for line in done.stderr.splitlines()
        if "no profile data available" in line and "atmlab_net" in line
        and any(h in line for h in HOT)
    ]
    if missing:
        sys.exit("tools/pgo.py: functions of the hot path found no counts in the profile:\n" + "\n".join(missing[:10]))
    print("tools/pgo.py: every function of the hot path finds its counts")


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profdata", help="the llvm-profdata to merge with (default: found by rustc's LLVM version)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (its path is printed)")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the build that checks the hot path finds its counts (2 minutes)")
    args = ap.parse_args()

    version = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    major = llvm_major(version)
    if major is None:
        sys.exit("tools/pgo.py: rustc -vV names no LLVM version")
    profdata = find_profdata(major, args.profdata)
    scratch = Path(tempfile.mkdtemp(prefix="atmlab-pgo-"))
    started = time.monotonic()
    try:
        raw = scratch / "raw"
        env = {
            **os.environ,
            "RUSTFLAGS": f"-Cprofile-generate={raw}",
            "CARGO_TARGET_DIR": str(scratch / "target"),
            "ATMLAB_PGO": "0",
        }
        venv = scratch / "venv"
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)], env=env)
        # The build scripts ran instrumented too: their counts are not the core's.
        shutil.rmtree(raw, ignore_errors=True)
        run(
            [str(venv / "bin" / "atmlab"), "reproduce", "all", "--quick", "-j", "1", "--out", str(scratch / "results")],
            env=env,
            cwd=scratch,
            stdout=subprocess.DEVNULL,
        )
        out = ROOT / "pgo" / f"llvm{major}.profdata"
        run([profdata, "merge", "--sparse", "-o", str(out), *map(str, sorted(raw.glob("*.profraw")))])
        print(f"tools/pgo.py: wrote {out.relative_to(ROOT)} ({out.stat().st_size / 1e6:.1f} MB) "
              f"in {(time.monotonic() - started) / 60:.1f} min")
        if not args.no_check:
            check(out, scratch / "target")
    finally:
        if args.keep:
            print(f"tools/pgo.py: scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
