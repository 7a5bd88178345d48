"""The ABR switch algorithms of the core, as the studies and ``atmlab
bench`` put them in a scenario: which there are (read from the core's
scenario schema, so an algorithm added to the switch-control seam is
found by itself), what each needs beyond its defaults to run at all, and
a scenario with one algorithm at every switch port.

``atmlab reproduce atmf-fairness`` runs every algorithm on the ATM
Forum's configurations; ``atmlab reproduce tcp-abr --algorithm NAME``
runs 97-0177R2's networks with NAME in place of ERICA+; ``atmlab bench
--algorithms`` times each on 97-0177R2's WAN.
"""

from __future__ import annotations

import copy
import json
from typing import Any

# What an algorithm needs beyond its defaults to run at all. EFCI's queue
# threshold has no primary value (the literature's binary switches mark
# above a threshold it does not state); 100 cells is atmlab's choice, well
# under every configuration's buffer and over a few cells of jitter.
ALGORITHM_KEYS: dict[str, dict[str, Any]] = {"efci": {"threshold": 100}}
# Not switch algorithms to compare: no control, and a baseline that needs
# its rate.
NOT_RUN = ("none", "fixed_rate")
# Probes that read a controller's readings which only ERICA and ERICA+
# are sure to report (the core refuses a probe of a reading the port's
# controller does not have).
READING_PROBES = ("load_factor", "abr_capacity", "fair_share")
REPORTS_EVERY_READING = ("erica", "erica_plus")


def names() -> list[str]:
    """The switch algorithms of the core (its scenario schema's
    ``AbrSwitchSpec``), but those of :data:`NOT_RUN`."""
    from .. import _core

    spec = json.loads(_core.scenario_schema())["$defs"]["AbrSwitchSpec"]
    found = [alt["properties"]["algorithm"]["const"] for alt in spec["oneOf"]]
    return [n for n in found if n not in NOT_RUN]


def table(algorithm: str) -> dict[str, Any]:
    """A switch port's ``abr`` table for `algorithm` on its defaults."""
    return {"algorithm": algorithm, **ALGORITHM_KEYS.get(algorithm, {})}


def with_algorithm(template: dict[str, Any], algorithm: str) -> dict[str, Any]:
    """A copy of the scenario `template` with `algorithm` (on its defaults)
    at every switch port that had an ABR controller (every switch's
    ``port`` table, and each ``port_to`` table that had one), and without
    the probes of readings `algorithm` may not report."""
    t = copy.deepcopy(template)
    for sw in t.get("switches", []):
        port = sw.setdefault("port", {})
        port["abr"] = table(algorithm)
        for to in sw.get("port_to", {}).values():
            if "abr" in to:
                to["abr"] = table(algorithm)
    if algorithm not in REPORTS_EVERY_READING and "probes" in t:
        t["probes"] = [p for p in t["probes"] if p.get("kind") not in READING_PROBES]
    return t
