"""Reading and writing the files atmlab is given, with bounds and no
half-written results.

* A scenario (or a file of rates it names) must be a regular file of at
  most :data:`MAX_FILE_BYTES`: a FIFO, a device (``/dev/zero``), a socket
  or a folder is refused before it is read, never read until memory runs
  out or waited on for ever.
* Its text may nest tables and arrays at most :data:`MAX_DEPTH` deep
  (checked before the TOML or JSON parser, which recurse, and again on the
  parsed data, which atmlab's own expansion walks recursively); Python's
  recursion limit is then never what stops a scenario.
* An exported table is written to a temporary file in the destination's
  folder and renamed into place (:func:`write_atomically`): a full disk
  leaves the old file, or none, never a truncated one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any

from .errors import AtmlabError, ScenarioError

# The largest scenario (or rates) file atmlab reads. The largest shipped
# scenario is a few KiB; a scenario holding a long trace of rates inline
# is a few MiB. Reading stops one byte beyond the limit.
MAX_FILE_BYTES = 64 * 1024 * 1024
# How deep tables and arrays may nest in a scenario, the file's top level
# being 1. The format needs about 6 (apps[3].rates.fgn...); the core's JSON
# reader stops at 128, Python's parsers at several hundred (the interpreter's
# recursion limit, less what the caller's stack already uses).
MAX_DEPTH = 64


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, or None for a regular one."""
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse(what: str | None) -> None:
    if what is not None:
        raise ValueError(f"{what}, not a regular file")


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """The contents of the regular file `path`, of at most `limit` bytes.

    Raises ``ValueError`` saying what is wrong (a FIFO, a device, a socket,
    a folder; larger than `limit`), ``OSError`` if it cannot be opened or
    read. The file is opened without blocking, so that a FIFO is refused
    rather than waited on, and checked on the open descriptor (no race
    with a file replaced between a check and the open); at most
    ``limit + 1`` bytes are read, whatever the file claims its size is."""
    _refuse(_kind(os.stat(path).st_mode))  # a socket cannot even be opened
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse(_kind(os.fstat(fd).st_mode))  # what was opened, if it changed since
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ValueError(f"larger than {limit // (1024 * 1024)} MiB, the most atmlab reads from one file")
    return data


def read_text(source: str, path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """The text of the scenario file `path`; any problem is a
    :class:`ScenarioError` naming `source` (the file) and saying what."""
    try:
        return read_bytes(path).decode(encoding)
    except ValueError as e:  # UnicodeDecodeError is one too
        raise ScenarioError(source, "", f"cannot read it: {e}") from None
    except OSError as e:
        raise ScenarioError(source, "", f"cannot read it: {e.strerror or e}") from None


# ------------------------------------------------------------------ depth

# What the nesting scan skips: strings (TOML's four kinds, with up to two
# quotes more before a multi-line string's closing delimiter, which are
# part of it) and comments. An unterminated string runs to the end of its
# line (its parser reports it).
_TOML_SKIP = re.compile(r'"""(?:[^\\]|\\.)*?"""(?:"{0,2})|\'\'\'.*?\'\'\'(?:\'{0,2})'
                        r'|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?|#[^\n]*', re.DOTALL)
_JSON_SKIP = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def text_depth(text: str, toml: bool) -> int:
    """How deep arrays and tables nest in the TOML or JSON `text`, the top
    level being 1 (a TOML document is a table without braces), read from
    its brackets outside strings and comments: an upper bound of how deep
    its parser will recurse. Tables of dotted keys and ``[a.b.c]`` headers
    nest the data without nesting the parser; :func:`check_depth` counts
    those on the parsed data."""
    bare = (_TOML_SKIP if toml else _JSON_SKIP).sub(" ", text)
    brackets = _NOT_BRACKET.sub("", bare)
    return max(accumulate(_STEP[c] for c in brackets), default=0) + (1 if toml else 0)


def check_text_depth(source: str, text: str, toml: bool) -> None:
    """A :class:`ScenarioError` naming `source` if `text` nests deeper than
    :data:`MAX_DEPTH`: checked before its parser, which recurses, runs."""
    depth = text_depth(text, toml)
    if depth > MAX_DEPTH:
        raise ScenarioError(source, "", _too_deep(f"{depth} levels deep"))


def _too_deep(how: str) -> str:
    return f"too deep: arrays and tables nest {how}; a scenario may nest at most {MAX_DEPTH} (the format needs about 6)"


def check_depth(source: str, data: Any) -> None:
    """A :class:`ScenarioError` naming `source` and the top-level key if
    the tables (mappings) and arrays (lists, tuples) of `data` nest deeper
    than :data:`MAX_DEPTH`, `data` itself being level 1. Iterative: it
    never recurses, whatever the depth."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        node, depth, top = stack.pop()
        if depth > MAX_DEPTH:
            raise ScenarioError(source, top, _too_deep(f"more than {MAX_DEPTH} levels deep"))
        if isinstance(node, Mapping):
            items = node.items()
        elif isinstance(node, list | tuple):
            items = enumerate(node)
        else:
            continue
        for key, value in items:
            if isinstance(value, Mapping | list | tuple):
                stack.append((value, depth + 1, top or (str(key) if depth == 1 else "")))


# ---------------------------------------------------------------- writing

def write_atomically(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """Calls ``write(tmp)`` to write a temporary file in `path`'s folder,
    then renames it to `path`: readers see the old file or the whole new
    one, never a part. If writing fails (a full disk), the temporary file
    is removed, `path` is left as it was, and the error is an
    :class:`AtmlabError` naming `path`."""
    import tempfile  # here: it imports random and shutil (start-up time)

    target = Path(path)
    folder = target.parent
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        why = f"non-existent directory {folder}" if not folder.is_dir() else (e.strerror or str(e))
        raise AtmlabError(f"{target}: cannot write it: {why}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:  # on the disk before the rename makes it the file
            os.fsync(f.fileno())
        _keep_mode(tmp, target)
        os.replace(tmp, target)
    except BaseException as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(e, OSError):
            kept = "the file is as it was" if target.exists() else "no file was written"
            raise AtmlabError(f"{target}: cannot write it: {e.strerror or e}; {kept}") from None
        raise


def _keep_mode(tmp: Path, target: Path) -> None:
    """Gives the new file the permissions an ordinary new file (or the file
    it replaces) would have: mkstemp makes it readable by its owner only."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
