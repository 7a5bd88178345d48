"""The documentation and the code comments send a reader nowhere outside
the project.

atmlab's models were designed from notes and reference files that are not
part of the repository (a research note on the algorithms, a model
specification, the seed texts of the studies). Users never see those
files, so every rule, default and test vector the project relies on is
stated in ``docs/`` with its primary source (``docs/references.md`` lists
them), and nothing may cite the outside files again. This test scans the
text files of the project (``.md``, ``.rs``, ``.py``, ``.toml``, ``.txt``
under ``docs/``, ``crates/``, ``python/``, ``tests/``, ``tools/``,
``validation/``, and ``README.md``) and fails, naming file and line, on:

* a name of an outside note: ``algorithms.md``, ``abr-algorithms.md``,
  ``design.md``, ``style.md``, ``emulation.md``, and ``models.md`` (none
  of them is a file of the project; a name that is the path of a file of
  the repository is accepted);
* a path into the shared folder beside the repository: ``../shared``,
  ``shared/docs``, ``shared/reference``, ``shared/seeds``;
* "research note" or "research notes";
* a citation of the per-study specifications kept beside the outside
  reference files: "spec s3 note 2", "spec s7 item 1", "spec A7", "spec
  A.4", "spec C.2", "spec B", "spec section 4", "spec 1.1", "the spec's ...",
  a table column headed "spec", a bare "s3 note 2" or "s7 item 1" (their
  numbering, not a study's), and the model specification's bracketed
  citations "[000 §6.1.3]". The word on its own is not matched: ``RunSpec``,
  ``spec.point``, ``for spec in specs`` and "specification" (the ATM Forum's
  Traffic Management Specification) are code or standards, not citations.

It also checks that every relative Markdown link in ``docs/`` and
``README.md`` points to a file (or folder) of the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

SCANNED_DIRS = ["docs", "crates", "python", "tests", "tools", "validation"]
SCANNED_FILES = ["README.md"]
SUFFIXES = {".md", ".rs", ".py", ".toml", ".txt"}
SKIPPED_PARTS = {"__pycache__", "target", ".venv", "node_modules", ".git"}
THIS_FILE = Path(__file__).resolve()

# Names of notes kept outside the repository. A match is accepted only if
# the path written before it names a file of the repository.
OUTSIDE_NOTE = re.compile(r"[\w./-]*\b(?:abr-algorithms|algorithms|design|style|emulation|models)\.md\b",
                          re.IGNORECASE)
# Paths into the shared folder, and the notes by description.
OUTSIDE_PATH = re.compile(r"\.\./shared\b|\bshared/(?:docs|reference|seeds)\b", re.IGNORECASE)
RESEARCH_NOTE = re.compile(r"\bresearch[\s*_]+notes?\b", re.IGNORECASE)
# Citations of the outside specifications: "spec" followed by one of their
# section marks, "the spec's", "the spec" as a noun, a table column "spec",
# their "sN note M" / "sN item M", and the model specification's "[000 §6.1.3]".
SPEC_CITATION = re.compile(
    r"\b[Ss]pec(?:'s\b|\s+(?:s\d|section\b|note\b|item\b|[A-Z]\.?\d|[A-Z]\b|\d))"
    r"|\b[Tt]he spec\b(?![.(_=:\w])"
    r"|\|\s*[Ss]pec\s*\|"
    r"|\bs\d+(?:\.\d+)*\s+(?:note|item)\s+\d"
    r"|\[\s*00[0-4]\s*§")

# [text](target) and [label]: target, outside code spans and fenced blocks.
INLINE_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.IGNORECASE)


def scanned_files() -> list[Path]:
    """Every text file the test reads, in a stable order."""
    files = [ROOT / f for f in SCANNED_FILES]
    for d in SCANNED_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.is_file() and p.suffix in SUFFIXES and not SKIPPED_PARTS & set(p.relative_to(ROOT).parts):
                files.append(p)
    return [p for p in files if p.resolve() != THIS_FILE]


def inside_repository(path: Path) -> bool:
    """Whether `path` exists and lies inside the repository."""
    try:
        path.resolve().relative_to(ROOT)
    except ValueError:
        return False
    return path.exists()


def names_a_project_file(written: str, source: Path) -> bool:
    """Whether a written file name is the path of a file of the repository,
    relative to the file that writes it or to the repository's root."""
    if "/" not in written:
        return False  # a bare name: which file of the project would it be?
    return any(inside_repository(base / written) for base in (source.parent, ROOT))


def outside_references(path: Path) -> list[str]:
    """`file:line: what` for each reference to something outside the project."""
    found = []
    rel = path.relative_to(ROOT)
    text = path.read_text(encoding="utf-8", errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        for m in OUTSIDE_NOTE.finditer(line):
            if not names_a_project_file(m.group(0), path):
                found.append(f"{rel}:{n}: names the outside note {m.group(0)!r}: {line.strip()[:160]}")
        for m in OUTSIDE_PATH.finditer(line):
            found.append(f"{rel}:{n}: points outside the repository ({m.group(0)!r}): {line.strip()[:160]}")
        for m in RESEARCH_NOTE.finditer(line):
            found.append(f"{rel}:{n}: refers to {m.group(0)!r}: {line.strip()[:160]}")
        for m in SPEC_CITATION.finditer(line):
            found.append(f"{rel}:{n}: cites an outside specification ({m.group(0)!r}): {line.strip()[:160]}")
    return found


def markdown_links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link, skipping fenced code blocks
    and inline code spans."""
    links, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = re.sub(r"`[^`]*`", "", line)
        links += [(n, m.group(1)) for m in INLINE_LINK.finditer(prose)]
        m = REFERENCE_LINK.match(prose)
        if m:
            links.append((n, m.group(1)))
    return links


def broken_links(path: Path) -> list[str]:
    """`file:line: target` for each relative link that names no file of the
    repository."""
    rel = path.relative_to(ROOT)
    bad = []
    for n, target in markdown_links(path.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue  # a URL or an anchor of this page
        file_part = target.split("#", 1)[0].split("?", 1)[0]
        if not file_part:
            continue
        if not inside_repository(path.parent / file_part):
            bad.append(f"{rel}:{n}: link to {target!r}, which is not a file of the repository")
    return bad


def test_the_scan_sees_the_documentation_and_the_code():
    files = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    for expected in ["README.md", "docs/models/abr.md", "docs/reproductions/tcp-abr.md",
                     "crates/atmlab-net/src/abr/control/erica.rs", "python/atmlab/cli.py"]:
        assert expected in files
    assert THIS_FILE.relative_to(ROOT).as_posix() not in files


def test_nothing_refers_to_files_outside_the_project():
    found = [f for p in scanned_files() for f in outside_references(p)]
    assert not found, (f"{len(found)} references to files outside the project (state the substance in docs/ "
                       "with its primary source, docs/references.md):\n" + "\n".join(found))


def test_every_relative_markdown_link_names_a_file_of_the_repository():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    bad = [b for p in pages for b in broken_links(p)]
    assert not bad, f"{len(bad)} broken links:\n" + "\n".join(bad)


# Types the docs cite that are not atmlab's: ns-2's TCP agent, the Rust
# standard library's clocks; and a file of another project (NeST's GFC-1).
FOREIGN_TYPES = {"TcpAgent", "Instant", "SystemTime"}
FOREIGN_FILES = {"nest/topology/topology_helpers/gfc1.py"}


def _docs_of_the_code_as_it_is() -> list[Path]:
    """The README and docs/, less benchmark.md: a log of the sessions that
    names the code as it was then."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "benchmark.md")]


def test_docs_name_only_code_that_exists():
    """`Type::member` in the docs names a type and a function or field of
    the Rust core, and a cited source file (`.rs`, `.py`) is one of the
    repository's: a renamed function or a moved file leaves no stale name
    behind (`Port::put_run_on_link` outlived its function once, and
    `abr/erica.rs` its move to `abr/control/`)."""
    source = "\n".join(p.read_text() for p in (ROOT / "crates").rglob("*.rs"))
    types = set(re.findall(r"\b(?:struct|enum|trait|type)\s+([A-Z]\w*)", source))
    members = set(re.findall(r"\bfn\s+([a-z_]\w*)", source))
    members |= set(re.findall(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?([a-z_]\w*)\s*:[^:]", source))
    files = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
             if p.suffix in (".rs", ".py") and not SKIPPED_PARTS & set(p.relative_to(ROOT).parts)}
    stale = []
    for doc in _docs_of_the_code_as_it_is():
        text = doc.read_text()
        for m in re.finditer(r"`([A-Z]\w*)::([a-z_]\w*)(?:\([^`]*\))?`", text):
            ty, member = m.groups()
            if ty not in FOREIGN_TYPES and (ty not in types or member not in members):
                stale.append(f"{doc.relative_to(ROOT)}: {m.group(0)}")
        for m in re.finditer(r"`([\w./-]+\.(?:rs|py))`", text):
            path = m.group(1)
            if path not in FOREIGN_FILES and not any(f == path or f.endswith("/" + path) for f in files):
                stale.append(f"{doc.relative_to(ROOT)}: {m.group(0)}")
    assert not stale, stale


def test_the_checks_catch_what_they_are_for(tmp_path):
    # The patterns themselves, on lines written for the purpose.
    fake = ROOT / "docs" / "models" / "x.md"
    lines = {
        "see algorithms.md s1.9": True,
        "abr-algorithms.md §2": True,
        "`../shared/docs/algorithms.md` §1.9": True,
        "(models.md s7.3)": True,
        "the project's research note": True,
        "research notes (unpublished)": True,
        "design.md and style.md and emulation.md": True,
        "docs/models/abr.md, \"Source\"": False,
        "[the ABR page](abr.md)": False,
        # The outside specifications' section marks, and the word in code.
        "(spec s3 note 2: 132 % of the adapter rate)": True,
        "the mechanism of spec s7 item 1": True,
        "How BT is read (spec A7).": True,
        "# 32, 91 and 192 cells (spec A.4)": True,
        "are skipped, not clamped (spec C.2)": True,
        "Each claim of the study (spec B) with a number": True,
        "hand timing (spec section 4)": True,
        "(a cell rate: spec 1.1)": True,
        "anomalous, not fitted (spec 4)": True,
        "the spec's suggestion to run >= 80 Mb unshaped": True,
        "which the spec says not to fit": True,
        "| item | model | spec |": True,
        "UDP overhead 36 bytes [004 §7.4.2]": True,
        "a host effect (s3 note 5)": True,
        "RunSpec, ProbeSpec, DropPolicySpec": False,
        "spec = importlib.util.spec_from_file_location(\"x\", path)": False,
        "for spec in specs: yield execute(spec)": False,
        "err.print(f\"failed point {spec.point} {spec.params}\")": False,
        "#### `Sweep.spec(point: expand.Point, replication: int) -> RunSpec`": False,
        "def _range(source: str, where: str, spec: dict[str, Any]) -> list[Any]:": False,
        "assert value == pytest.approx(spec, rel=1e-12)": False,
        "the ATM Forum's Traffic Management Specification (TM 4.0)": False,
        "specifications [15] and [12] (the BSD algorithms)": False,
        "97-0177R2 §6: \"a = 1.15 and b = 1.05\"; 004 s7.5.6": False,
        "Issue 12, item 4: the same packet-level cases": False,
    }
    for line, outside in lines.items():
        path = tmp_path / "page.md"
        path.write_text(line + "\n", encoding="utf-8")
        hits = []
        for m in OUTSIDE_NOTE.finditer(line):
            if not names_a_project_file(m.group(0), fake):
                hits.append(m.group(0))
        hits += [m.group(0) for m in OUTSIDE_PATH.finditer(line)]
        hits += [m.group(0) for m in RESEARCH_NOTE.finditer(line)]
        hits += [m.group(0) for m in SPEC_CITATION.finditer(line)]
        assert bool(hits) == outside, (line, hits)
    # A link to a missing page is found; a link to an existing one, a URL
    # and an anchor are not.
    text = "[a](missing.md) [b](abr.md#source) [c](https://example.org/x.md) [d](#top)\n```\n[e](gone.md)\n```\n"
    targets = [t for _, t in markdown_links(text)]
    assert targets == ["missing.md", "abr.md#source", "https://example.org/x.md", "#top"]
    assert not inside_repository(ROOT / "docs" / "models" / "missing.md")
    assert inside_repository(ROOT / "docs" / "models" / "abr.md")
