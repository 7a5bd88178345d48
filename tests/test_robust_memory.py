"""The memory guard bounds memory as documented (issue 29, item 8).

`simulation.max_cells_held` counts what a run holds in the memory of
cells (16 bytes each): the cells in queues and on links, and the records
held beside them, each as the cells its memory would hold: an AAL5 frame's
entry in the PDU table 9, a datagram waiting for a host's sending or
receiving CPU (or held at an ABR source) 8. Counting cells alone let a
flood of 3-cell frames take 3.7 GB at the default limit, and a host's CPU
queues grow without bound (the receiving one was not counted; the sending
one was looked at only when cells were created, which a slow CPU does
rarely)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import atmlab
from atmlab import _core

FRAME_CELLS, DATAGRAM_CELLS = 9, 8  # crates/atmlab-net/src/sim/guard.rs
STEP = 1 << 16  # the guard looks every 65,536 cells' worth made


def flood(payload: str, interval: str, limit: str, duration: str = "1000 s", **host_a: object) -> dict:
    """UDP from a to b, over a 10 Mbit/s adapter (unlimited, the default),
    or with `host_a`'s CPU settings."""
    a = {"name": "a", "adapter": {"peak": "10 Mbit/s"}} if not host_a else {"name": "a", **host_a}
    return {
        "name": "flood",
        "simulation": {"duration": duration, "max_cells_held": limit},
        "hosts": [a, {"name": "b"}],
        "links": [{"between": ["a", "b"], "rate": "155.52 Mbit/s", "delay": "5 us"}],
        "vcs": [{"name": "v", "path": ["a", "b"]}],
        "apps": [{"kind": "udp_cbr", "name": "u", "vc": "v", "payload": payload, "interval": interval}],
    }


def stopped_at(e: pytest.ExceptionInfo[atmlab.LimitError]) -> float:
    return float(re.search(r"stopped at t = ([0-9.]+) s", str(e.value)).group(1))


def test_the_frames_of_held_cells_count_with_them():
    """3-cell frames (80 bytes of UDP): each frame's entry in the PDU table
    counts 9 cells beside its 3, so the run stops with a quarter of the
    cells that counting cells alone would hold."""
    limit = 1_000_000
    sc = flood("80 bytes", "10 us", f"{limit} cells")
    (fp,) = [json.loads(f) for f in _core.footprints(json.dumps(sc), [1000.0])]
    held = fp["cells_held"] + FRAME_CELLS * fp["pdus_live"]
    assert limit < held <= limit + STEP + FRAME_CELLS, fp
    assert fp["cells_held"] < limit / 3, fp
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(sc)
    assert f"take the memory of {held} cells, more than simulation.max_cells_held ({limit} cells)" in str(e.value)
    assert "AAL5 frames they belong to" in str(e.value) and "at port a->b (its queue and link)" in str(e.value)


def test_the_receiving_cpu_queue_is_counted():
    """A receiver that takes 1 ms per datagram behind an unlimited input
    queue: before, the guard never saw it (200 s of this took 8 GB)."""
    sc = flood("0 bytes", "3 us", "1000000 cells", duration="10 s")
    sc["hosts"] = [{"name": "a"}, {"name": "b", "cpu": {"receive_per_datagram": "1 ms"}}]
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(sc)
    assert "at host b's receiving CPU (datagrams waiting)" in str(e.value)
    # About 10^6 / 8 datagrams of 3 us: 0.4 s.
    assert stopped_at(e) < 0.45


def test_the_sending_cpu_queue_is_looked_at_as_it_grows():
    """A sending CPU that takes 1 ms per datagram creates a cell a
    millisecond: before, the guard looked every 65,536 cells created, a
    minute of simulated time, while the queue grew by 10^6 datagrams a
    second (100 s of this took 8 GB)."""
    sc = flood("0 bytes", "1 us", "1000000 cells", duration="10 s", cpu={"per_datagram": "1 ms"})
    with pytest.raises(atmlab.LimitError) as e:
        atmlab.run(sc)
    assert "at host a's sending CPU (datagrams waiting)" in str(e.value)
    # (8 + 1) cells' worth per datagram of 1 us: 0.11 s.
    assert stopped_at(e) < 0.15


PEAK = """
import json, sys, atmlab
sc = json.loads(sys.argv[1])
def status(key):
    return int([l.split()[1] for l in open("/proc/self/status") if l.startswith(key)][0]) * 1024
atmlab.validate(sc)  # the core loaded, the scenario built once
before = status("VmRSS")
try:
    atmlab.run(sc)
except atmlab.LimitError:
    pass
print(status("VmHWM") - before)
"""


@pytest.mark.parametrize("payload, interval", [("9000 bytes", "100 us"), ("80 bytes", "10 us")],
                         ids=["192-cell-frames", "3-cell-frames"])
def test_memory_at_the_limit_is_at_most_32_bytes_a_cell(payload, interval):
    """What docs/architecture.md ("Memory") says: 16 bytes per cell of
    the limit, up to twice that while the queues grow (3.7 GB at the
    default limit was 74 bytes a cell, with 3-cell frames)."""
    limit = 10_000_000
    sc = flood(payload, interval, f"{limit} cells")
    p = subprocess.run([sys.executable, "-c", PEAK, json.dumps(sc)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    grew = int(p.stdout)
    assert grew / limit <= 32, f"{grew / limit:.1f} bytes a cell"
