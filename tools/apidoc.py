"""Writes docs/api.md, the reference of atmlab's Python API, from the
docstrings and signatures of the package.

    python tools/apidoc.py            # write docs/api.md
    python tools/apidoc.py --check    # exit 1 if docs/api.md is out of date

``tests/test_apidoc.py`` runs the check, so the reference never drifts from
the code. Plain ``inspect``, no documentation tool: the output is Markdown
beside the other docs, and the same on every machine.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from pathlib import Path, PurePath
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api.md"

# What a notebook user works with: the package's public names, then the
# modules a user reaches for directly.
MODULES = [
    "atmlab.metrics",
    "atmlab.store",
    "atmlab.stats",
    "atmlab.summary",
    "atmlab.fmt",
    "atmlab.schema",
    "atmlab.about",
]

HEADER = """# API reference

The Python API of atmlab, generated from the docstrings by
`tools/apidoc.py` (do not edit: run `python tools/apidoc.py` after changing
a public docstring or signature; `tests/test_apidoc.py` fails while this
file is out of date). The command line is described in the README and
`experiments.md`, the scenario format in `scenario-format.md`.
"""


def _doc(obj: Any) -> str:
    """The docstring, its ``>>>`` examples fenced as Python."""
    out: list[str] = []
    fenced = False
    for line in (inspect.getdoc(obj) or "").strip().splitlines():
        example = line.startswith(">>>") or (fenced and line.startswith("..."))
        if example and not fenced:
            out.append("```python")
        elif not example and fenced:
            out.append("```")
        fenced = example
        out.append(line)
    if fenced:
        out.append("```")
    return "\n".join(out)


class _Raw:
    """Shown as its text: annotations as written (they are strings, with
    ``from __future__ import annotations``), paths without their class."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _signature(obj: Any, *, drop_first: bool = False, returns: bool = True) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    params = list(sig.parameters.values())[1 if drop_first else 0:]

    def clean(p: inspect.Parameter) -> inspect.Parameter:
        if isinstance(p.annotation, str):
            p = p.replace(annotation=_Raw(p.annotation))
        if isinstance(p.default, PurePath):
            p = p.replace(default=_Raw(repr(str(p.default))))
        return p

    ret = sig.return_annotation
    ret = _Raw(ret) if isinstance(ret, str) else ret
    return str(sig.replace(parameters=[clean(p) for p in params],
                           return_annotation=ret if returns else inspect.Signature.empty))


def _own_public(cls: type) -> list[tuple[str, Any]]:
    out = []
    for name, member in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        out.append((name, member))
    return out


def _class(qual: str, cls: type, lines: list[str]) -> None:
    init = vars(cls).get("__init__")
    if dataclasses.is_dataclass(cls):
        sig = "(" + ", ".join(f.name for f in dataclasses.fields(cls)) + ")"
    else:
        sig = _signature(init, drop_first=True, returns=False) if init else ""
    lines += [f"### class `{qual}{sig}`", ""]
    if _doc(cls):
        lines += [_doc(cls), ""]
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            lines.append(f"- `{f.name}: {f.type}`")
        lines.append("")
    for name, member in _own_public(cls):
        if name == "__init__":
            continue
        short = f"{cls.__name__}.{name}"
        if isinstance(member, property | functools.cached_property):
            fget = member.fget if isinstance(member, property) else member.func
            lines += [f"#### `{short}` (property)", ""]
            doc = _doc(fget)
        elif isinstance(member, staticmethod | classmethod):
            fn = member.__func__
            sig = _signature(fn, drop_first=isinstance(member, classmethod))
            lines += [f"#### `{short}{sig}`", ""]
            doc = _doc(fn)
        elif inspect.isfunction(member):
            sig = _signature(member, drop_first=True)
            lines += [f"#### `{short}{sig}`", ""]
            doc = _doc(member)
        else:
            continue
        if doc:
            lines += [doc, ""]


def _function(qual: str, fn: Any, lines: list[str]) -> None:
    lines += [f"### `{qual}{_signature(fn)}`", ""]
    if _doc(fn):
        lines += [_doc(fn), ""]


def _members(module: ModuleType) -> list[tuple[str, Any]]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return [(n, getattr(module, n)) for n in names if not n.startswith("_")]
    return [(n, v) for n, v in vars(module).items()
            if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
            and getattr(v, "__module__", None) == module.__name__]


def _module(module: ModuleType, lines: list[str], prefix: str) -> None:
    lines += [f"## `{module.__name__}`", ""]
    if _doc(module):
        lines += [_doc(module), ""]
    for name, obj in _members(module):
        qual = f"{prefix}{name}"
        if inspect.isclass(obj):
            _class(qual, obj, lines)
        elif callable(obj):
            _function(qual, obj, lines)


def render() -> str:
    import importlib

    import atmlab

    lines = [HEADER]
    _module(atmlab, lines, "atmlab.")
    for name in MODULES:
        module = importlib.import_module(name)
        _module(module, lines, f"{name}.")
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python tools/apidoc.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
