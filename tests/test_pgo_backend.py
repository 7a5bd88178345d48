"""The build backend (pgo/atmlab_backend.py): when it builds the core with
the profile in pgo/, and that the profile there is one LLVM can read."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

RUSTC_VV = """rustc 1.95.0 (59807616e 2026-04-14)
binary: rustc
commit-hash: 59807616e1fa2540724bfbac14d7976d7e4a3860
host: x86_64-unknown-linux-gnu
release: 1.95.0
LLVM version: 22.1.2
"""

# An LLVM indexed profile begins with this magic number (little-endian
# 0x8169666f72706cff: "\xfflprofi\x81"); a raw profile (.profraw) or the
# text format does not.
INDEXED_MAGIC = bytes.fromhex("ff6c70726f666981")


@pytest.fixture(scope="module")
def backend():
    spec = importlib.util.spec_from_file_location("atmlab_backend", ROOT / "pgo" / "atmlab_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "llvm22.profdata").write_bytes(INDEXED_MAGIC)
    return tmp_path


def test_pyproject_builds_through_the_backend():
    system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    assert system["build-backend"] == "atmlab_backend" and system["backend-path"] == ["pgo"]


def test_the_llvm_major_version_is_read_from_rustc(backend):
    assert backend.llvm_major(RUSTC_VV) == 22
    assert backend.llvm_major(RUSTC_VV.replace("22.1.2", "19.1.7")) == 19
    assert backend.llvm_major("rustc 1.95.0\nrelease: 1.95.0\n") is None


def test_the_profile_is_used_when_its_llvm_version_is_the_compilers(backend, folder):
    flag = backend.profile_flag({}, RUSTC_VV, folder)
    assert flag == f"-Cprofile-use={folder / 'llvm22.profdata'} -Cllvm-args=-no-pgo-warn-mismatch"
    # Other flags the user set stay (the backend adds to them).
    assert backend.profile_flag({"RUSTFLAGS": "-Ctarget-cpu=native"}, RUSTC_VV, folder) == flag


@pytest.mark.parametrize("env, version", [
    ({"ATMLAB_PGO": "0"}, RUSTC_VV),                                  # the reference build, asked for
    ({"RUSTFLAGS": "-Cprofile-generate=/tmp/raw"}, RUSTC_VV),         # tools/pgo.py's instrumented build
    ({}, RUSTC_VV.replace("LLVM version: 22.1.2", "LLVM version: 21.1.0")),  # a compiler that cannot read it
    ({}, None),                                                       # no rustc answered
])
def test_no_profile_when_it_cannot_or_must_not_be_used(backend, folder, env, version):
    assert backend.profile_flag(env, version, folder) is None


def test_no_profile_from_a_path_with_a_space(backend, tmp_path):
    spaced = tmp_path / "a folder"
    spaced.mkdir()
    (spaced / "llvm22.profdata").write_bytes(INDEXED_MAGIC)
    assert backend.profile_flag({}, RUSTC_VV, spaced) is None


def test_the_hooks_that_compile_are_the_backends_and_the_rest_maturins(backend):
    assert callable(backend.build_wheel) and callable(backend.build_editable)
    with pytest.raises(AttributeError):
        backend.__path__  # not a package, whatever maturin is
    if importlib.util.find_spec("maturin") is not None:
        import maturin

        assert backend.build_sdist is maturin.build_sdist


def test_every_committed_profile_is_an_indexed_llvm_profile():
    profiles = sorted((ROOT / "pgo").glob("*.profdata"))
    assert profiles, "pgo/ holds no profile (python tools/pgo.py writes one)"
    for p in profiles:
        assert p.name.startswith("llvm") and p.stem[4:].isdigit(), p.name
        assert p.read_bytes()[:8] == INDEXED_MAGIC, f"{p.name} is not an indexed LLVM profile"


def test_the_backend_imports_without_maturin(backend, monkeypatch):
    # pytest's environment need not have maturin (only pip's build does).
    monkeypatch.setitem(sys.modules, "maturin", None)
    spec = importlib.util.spec_from_file_location("atmlab_backend_again", ROOT / "pgo" / "atmlab_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.llvm_major(RUSTC_VV) == 22
