"""Memory stays flat in simulated time (docs/architecture.md, "Memory").

Checked on the simulation's own state, not on the process's RSS: the cells
held in queues and on links, the entries allocated for them, the PDU table,
the hosts' datagram queues and the event queue, reported by
``_core.footprints`` at 10 s and at 100 s of simulated time (the satellite
ABR runs: at 85 s and 170 s, see TIMES). A run whose
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


# The 97-0177R2 satellite runs (170 s) open 15 TCP windows of 8,704,000
# bytes over a 550 ms round trip: the segments in flight, and the PDUs and
# datagrams that hold them, grow for the first 30-40 s, up to the windows
# (255,000 segments of 512 bytes). Their memory is checked over the second
# half of the study's 170 s, and against that bound.
TIMES = {"tcp-abr/sat_wan": (85.0, 170.0), "tcp-abr/sat_sat": (85.0, 170.0)}


@pytest.mark.parametrize("name", SHIPPED)
def test_memory_is_flat_in_simulated_time(name):
    """From 10 to 100 simulated seconds (the satellite ABR runs: 85 to 170)."""
    times = TIMES.get(name, (10.0, 100.0))
    early, late = footprints(name, times)
    assert late["time_s"] > 0.9 * times[1], "the run went on to the end"
    for key in SIZES:
        # One doubling of a growable buffer, plus a little slack for tiny counts.
        assert late[key] <= 2 * early[key] + 64, (name, key, early[key], late[key])
    if name in TIMES:
        data = load(bundled(name)).data
        window, mss = (int(data["tcp"][k].split()[0]) for k in ("window", "mss"))
        segments = sum(1 for a in data["apps"] if a["kind"] == "tcp_bulk") * -(-window // mss)
        assert late["pdu_slots"] <= segments + 1024, (name, late["pdu_slots"], segments)


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
