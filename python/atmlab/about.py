"""What atmlab this is: the package version, the core's, how the core was
compiled and the git commit it was built from.

The commit is captured when the Rust extension is compiled
(``crates/atmlab-py/build.rs``), so an installed wheel knows it without git
or a source tree; a build outside a git checkout may be given one with the
environment variable ``ATMLAB_GIT_COMMIT``, else it is unknown.
"""

from __future__ import annotations

from . import __version__, _core


def commit() -> str | None:
    """The full git commit the core was built from, or None if unknown."""
    return _core.git_commit()


def text() -> str:
    """``atmlab 0.1.0 (core 0.1.0, release build, commit 1a2b3c4d5e6f)``:
    what ``atmlab --version`` prints; ``release build with profile
    llvm22.profdata`` when the build optimised the core by a profile
    (``pgo/``: docs/architecture.md, "The build")."""
    c = commit()
    profile = _core.core_profile()
    build = f"{_core.core_build()} build" + (f" with profile {profile}" if profile else "")
    return (f"atmlab {__version__} (core {_core.core_version()}, {build}, "
            f"commit {c[:12] if c else 'unknown'})")
