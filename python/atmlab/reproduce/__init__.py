"""Reproductions of published experiments: ``atmlab reproduce STUDY``.

Every study stands on the reproduction kit (:mod:`.kit`): its module,
``atmlab.reproduce.<id>``, provides a ``STUDY`` (the grids it runs, how to
measure a run, the published values, the claims, the figures), and
:func:`run` does the rest the same way for all. This module is the one
registry of studies: their ids (the command-line name, the module, the docs
page ``docs/reproductions/<id>.md`` and the reference tables'
``data/reference/<id>/``), the other names they answer to, their titles.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .entry import Entry

if TYPE_CHECKING:
    from .kit import Agreement, Options, Progress, Reproduction, SweepsRun, run_sweeps

# Default replications (docs/experiments.md, "Replications of a reproduction"):
# the runs at which 90 % of a study's compared values have a 95 % interval
# within half their tolerance, from the spread of a 2-3 replication pilot;
# the study's own 10 for EXPERT; 1 where the pilot's runs did not differ
# (KPN) or differed by a few per cent of the tolerance at most (bundling).
REGISTRY: tuple[Entry, ...] = (
    Entry("kpn", "van den Bergh 1995 (KPN ATM pilot): TCP/IP and UDP over an operational ATM network",
          "J.W. van den Bergh, The performance of TCP/IP over an operational ATM network, KPN Research / TU "
          "Eindhoven, 1995"),
    Entry("ubr-gr", "Goyal, Jain et al. 1997: TCP over UBR+ with a Guaranteed Rate, LAN, WAN and satellite",
          "R. Goyal, R. Jain, S. Kalyanaraman, S. Fahmy, B. Vandalore, X. Cai, S.-C. Kim, S. Kota, Guaranteed "
          "Rate for Improving TCP Performance on UBR+ over Terrestrial and Satellite Networks, ATM Forum 97-0424",
          aliases=("97-0424",), default_replications=6),
    Entry("expert", "Jaussi, Lorang, Nelissen 1998 (ACTS EXPERT, FORE ASX-200): TCP over UBR, PPD and EPD",
          "S. Jaussi, F. Lorang, J. Nelissen, A Detailed Experimental Performance Evaluation on TCP over UBR, "
          "ACTS EXPERT, 1998", default_replications=10),
    Entry("bundling", "Lamont, Villasenor et al. 1998 (DREO/CRC): IP telephony and TCP on one policed VBR PVC",
          "L. Lamont, J. Villasenor, H. Chefai, I. Miloucheva, Bundling Internet Traffic over VBR ATM Networks, "
          "DREO TR 1999-020 / CRC Report 98-007, 1998"),
    Entry("tcp-abr", "Kalyanaraman, Vandalore, Jain et al. 1997: TCP over ABR (ERICA+) with long-range dependent "
          "VBR video, WAN and satellite",
          "S. Kalyanaraman, B. Vandalore, R. Jain, R. Goyal, S. Fahmy, S.-C. Kim, S. Kota, Performance of TCP over "
          "ABR with Long-Range Dependent VBR Background Traffic over Terrestrial and Satellite ATM networks, ATM "
          "Forum 97-0177R2, 1997", aliases=("97-0177",), default_replications=5),
    Entry("atmf-fairness", "The ATM Forum's fairness configurations (GFC-1, GFC-2, parking lots, upstream, two, "
          "three and N sources): every ABR switch algorithm against the exact max-min rates",
          "ATM Forum test configurations (Simcoe, Test configurations for fairness and other tests, ATM Forum "
          "94-0557, 1994, and the OSU group's contributions); max-min rates by progressive filling (Bertsekas and "
          "Gallager, Data Networks, 1992, s6.5.2)"),
)

__all__ = ["REGISTRY", "Agreement", "Entry", "Options", "Progress", "Reproduction", "SweepsRun", "default_replications",
           "entry", "names", "run", "run_sweeps", "studies"]


_KIT = {"Agreement", "Options", "Progress", "Reproduction", "SweepsRun", "run_sweeps"}


def __getattr__(name: str) -> Any:
    """The kit's names, imported when first used (the kit needs pandas,
    which the command line imports only when a command uses it)."""
    if name in _KIT:
        from . import kit

        return getattr(kit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def entry(name: str) -> Entry:
    """The study named `name` (its id or an alias); KeyError if none."""
    for e in REGISTRY:
        if name == e.id or name in e.aliases:
            return e
    raise KeyError(name)


def studies() -> dict[str, str]:
    """Study id -> one-line title, in the registry's order."""
    return {e.id: e.title for e in REGISTRY}


def names() -> list[str]:
    """Every name ``atmlab reproduce`` accepts: ids and aliases."""
    return [n for e in REGISTRY for n in (e.id, *e.aliases)]


def default_replications(name: str, quick: bool = False) -> int:
    """How many runs per configuration ``atmlab reproduce STUDY`` makes by default."""
    return 1 if quick else entry(name).default_replications


def switch_algorithm_studies() -> list[str]:
    """The studies ``--algorithm`` applies to."""
    return [e.id for e in REGISTRY
            if getattr(getattr(importlib.import_module(e.module), "STUDY", None), "switch_algorithms", False)]


def check_algorithm(study_id: str, study: Any, options: Options) -> None:
    """Refuses ``options.algorithm`` where it cannot apply, naming why."""
    from ..errors import ArgumentError
    from .algorithms import names

    known = names()
    if options.algorithm not in known:
        raise ArgumentError(f"--algorithm {options.algorithm!r}: not a switch algorithm of the core "
                            f"(one of {', '.join(known)})")
    if not getattr(study, "switch_algorithms", False):
        raise ArgumentError(f"--algorithm: {study_id} has no ABR switch algorithm to replace (it applies to "
                            f"{', '.join(switch_algorithm_studies())}; atmf-fairness runs every algorithm)")
    if options.open_choices:
        raise ArgumentError("--algorithm and --open-choices: the open choices are those of the study's own "
                            "algorithm; give one or the other")


def run(name: str, options: Options, progress: Progress) -> Reproduction:
    """Reproduces study `name` (an id or an alias)."""
    from .kit import reproduce

    e = entry(name)
    module = importlib.import_module(e.module)
    study = getattr(module, "STUDY", None)
    if options.algorithm is not None:
        check_algorithm(e.id, study, options)
    if study is not None and not isinstance(study, str):
        return reproduce(e, study, options, progress)
    return module.run(options, progress)  # type: ignore[no-any-return]  # a study not yet on the kit
