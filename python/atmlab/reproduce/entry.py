"""A study in the registry of :mod:`atmlab.reproduce` (no pandas: the
command line reads the registry at start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kit import Study


@dataclass(frozen=True)
class Entry:
    """A study in the registry: its id (the command-line name, the module
    ``atmlab.reproduce.<id with _>``, the docs page
    ``docs/reproductions/<id>.md``, the reference tables'
    ``data/reference/<id>/``), other names it answers to (the document
    number), a one-line title, the source document, and the replications
    per configuration when the command line gives none."""

    id: str
    title: str
    document: str
    aliases: tuple[str, ...] = ()
    default_replications: int = 1

    @property
    def module(self) -> str:
        return f"atmlab.reproduce.{self.id.replace('-', '_')}"

    def load(self) -> Study:
        import importlib

        return importlib.import_module(self.module).STUDY  # type: ignore[no-any-return]
