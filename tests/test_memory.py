"""Memory stays flat in simulated time (docs/architecture.md, "Memory").

Checked on the simulation's own state, not on the process's RSS: the cells
held in queues and on links, the entries allocated for them, the PDU table,
the hosts' datagram queues and the event queue, reported by
``_core.footprints`` at 10 s and at 100 s of simulated time. A run whose
memory grows with time (cells left on a link for the whole run, as the ON/OFF
sources' cells once were: 24 bytes per cell, 1.8 GB at 400 s) shows ten times
more at 100 s than at 10 s; a flat one shows the same, give or take one
doubling of a queue that found a new high-water mark.
"""

from __future__ import annotations

import json

import pytest

from atmlab import _core
from atmlab.scenario import bundled, load

SHIPPED = sorted(str(p.relative_to(bundled("x").parent)).removesuffix(".toml")
                 for p in bundled("x").parent.rglob("*.toml"))

# What memory is made of: the entries allocated for cells (queues, links,
# frame ends), for datagrams at hosts, for PDUs and for events. (The cells
# held at an instant go up and down with TCP's windows, within those
# allocations; probe samples grow by design and the base points have none.)
SIZES = ("cell_capacity", "datagram_capacity", "pdu_slots", "event_capacity")


def footprints(name: str, times: tuple[float, ...]) -> list[dict[str, float]]:
    data = load(bundled(name)).data
    data["simulation"]["duration"] = f"{max(times):g} s"
    data.pop("probes", None)
    return [json.loads(f) for f in _core.footprints(json.dumps(data), list(times))]


def test_every_shipped_scenario_is_checked():
    assert {"ubr-gr/wan", "ubr-gr/satellite", "bundling/bundle", "expert/expert"} <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_memory_is_flat_from_10_to_100_simulated_seconds(name):
    early, late = footprints(name, (10.0, 100.0))
    assert late["time_s"] > 90, "the run went on to 100 s"
    for key in SIZES:
        # One doubling of a growable buffer, plus a little slack for tiny counts.
        assert late[key] <= 2 * early[key] + 64, (name, key, early[key], late[key])


def test_a_growing_queue_would_be_caught():
    """The footprint does see memory that grows: an unlimited adapter fed
    faster than its link holds ten times more cells at 10 s than at 1 s."""
    sc = {
        "name": "flood",
        "simulation": {"duration": "10 s", "max_cells_held": "100000000 cells"},
        "hosts": [{"name": "a", "adapter": {"peak": "10 Mbit/s"}}, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "155.52 Mbit/s", "delay": "5 us"}],
        "vcs": [{"name": "v", "path": ["a", "b"]}],
        "apps": [{"kind": "udp_cbr", "name": "u", "vc": "v", "payload": "9000 bytes", "interval": "1 ms"}],
    }
    early, late = (json.loads(f) for f in _core.footprints(json.dumps(sc), [1.0, 10.0]))
    assert late["cells_held"] > 8 * early["cells_held"] > 0
    assert late["cell_capacity"] > 2 * early["cell_capacity"] + 64
