"""atmlab's build backend: maturin's, with the Rust core optimised by the
profile in this folder when the compiler can read it.

Profile-guided optimisation (PGO) lets the compiler lay out and inline the
core by where a recorded run spent its time. The profile
(``llvm<N>.profdata``) is written by ``tools/pgo.py`` from an instrumented
build running every study's quick reproduction. A compiler on an older
LLVM cannot read it (the build would fail) and one on another version
lowers the code differently (few functions would match it), so it is used
only when ``rustc -vV`` reports the LLVM major version it is named after. Otherwise, or with ``ATMLAB_PGO=0`` (the
reference build), or when ``RUSTFLAGS`` already asks for a profile, the
build is maturin's own. PGO changes no result: it only moves and inlines
code (docs/architecture.md, "The build"; figures in docs/benchmark.md).

Every PEP 517 hook is maturin's (this module hands on what it does not
define); the two that compile set ``RUSTFLAGS`` first (maturin passes the
environment to cargo).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Mapping

HERE = Path(__file__).resolve().parent


def llvm_major(version_text: str) -> int | None:
    """The LLVM major version in ``rustc -vV``'s output, if it says one."""
    m = re.search(r"^LLVM version: (\d+)", version_text, re.MULTILINE)
    return int(m.group(1)) if m else None


def profile_flag(env: Mapping[str, str], version_text: str | None, folder: Path = HERE) -> str | None:
    """The ``-Cprofile-use`` flag to add, or None (see the module's doc)."""
    if env.get("ATMLAB_PGO", "1") == "0" or "profile-" in env.get("RUSTFLAGS", ""):
        return None
    major = llvm_major(version_text) if version_text else None
    profile = folder / f"llvm{major}.profdata"
    # RUSTFLAGS is split at spaces: a path with one cannot be passed.
    if major is None or not profile.is_file() or any(c.isspace() for c in str(profile)):
        return None
    # A profile older than the code is used where it still matches; LLVM
    # need not warn about each function that changed since (a build says
    # nothing either way: tools/pgo.py writes a new one).
    return f"-Cprofile-use={profile} -Cllvm-args=-no-pgo-warn-mismatch"


def _rustc_version() -> str | None:
    rustc = os.environ.get("RUSTC", "rustc")
    try:
        out = subprocess.run([rustc, "-vV"], capture_output=True, text=True, timeout=60, cwd=HERE.parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _use_profile() -> None:
    flag = profile_flag(os.environ, _rustc_version())
    if flag:
        os.environ["RUSTFLAGS"] = f"{os.environ.get('RUSTFLAGS', '')} {flag}".strip()
        # For `atmlab --version` and the bench's record (`core_profile`).
        os.environ["ATMLAB_PGO_PROFILE"] = flag.split()[0].rsplit("/", 1)[-1]
        print(f"atmlab: the Rust core is built with the profile in {HERE.name}/ (RUSTFLAGS: {flag})")


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    import maturin

    _use_profile()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    import maturin

    _use_profile()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def __getattr__(name: str) -> Any:
    """maturin's other hooks (metadata, sdist, requirements), as they are."""
    if name.startswith("__"):  # a module's own attributes are not maturin's
        raise AttributeError(name)
    import maturin

    return getattr(maturin, name)
