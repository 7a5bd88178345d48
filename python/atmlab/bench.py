"""``atmlab bench``: speed of the core in cell-hops per wall-clock second.

A cell-hop is one cell crossing one link. The benchmark runs, in one process
on one core (the simulation is single-threaded), the bare event loop of
``atmlab-engine`` (a heap of cell events through one FIFO port, no protocol
logic) before and after the scenarios, so that the machine's speed and noise
are measured in the same run, and the bundled scenarios of :data:`SCENARIOS`
with TCP and every metric on: the ``nsource_lan`` and ``nsource_wan``
dumbbells, ``tcp-abr/wan`` (97-0177R2's WAN: 15 TCP over ABR with ERICA+ at
every switch port and 9 video sources; docs/benchmark.md says which events
its run elides), 97-0424's WAN with a guaranteed rate under ON/OFF VBR,
EXPERT's bottleneck and 97-0177R2's satellite case.
Only the run itself is timed (not parsing or building the network).

The ratios depend on the machine more than the bare loop's correction
suggests (the same build measured the ABR WAN at 0.41x and, hours later on
the same virtual machine, 0.35x: docs/benchmark.md), so the result names
the machine it was measured on (:func:`machine`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core
from .errors import checked_int

# statistics, platform, the result and scenario modules are imported where
# used: the command line imports this module (MAX_ROUNDS) at start-up.

@dataclass(frozen=True)
class Case:
    """A bundled scenario as the benchmark runs it: its name and the
    overrides (``--set``) that shorten it or pick the configuration."""

    scenario: str
    overrides: tuple[str, ...] = ()

    def label(self) -> str:
        return " ".join((self.scenario, *self.overrides))


# Each port kind and each study's costliest configuration (issue 31): the
# LAN and WAN dumbbells (pipelined FIFO ports), 97-0177R2's WAN (ABR end
# systems, ERICA+ at every port, video), 97-0424's WAN with a guaranteed
# rate for UBR under strict-priority ON/OFF VBR (slotted ports, the GR
# scheduler, Selective Drop), EXPERT's bottleneck (per-VC round robin in a
# VP-shaped port, EPD) and 97-0177R2's satellite-to-satellite case (ABR
# over two 275 ms hops).
SCENARIOS: dict[str, Case] = {
    "lan": Case("nsource_lan"),
    "wan": Case("nsource_wan"),
    "abr": Case("tcp-abr/wan"),
    "gr": Case("ubr-gr/wan", ("params.gr=0.5", "simulation.duration=10 s")),
    "expert": Case("expert/expert", ("simulation.duration=30 s",)),
    "sat": Case("tcp-abr/sat_sat", ("simulation.duration=20 s",)),
}
# `atmlab bench --algorithms`: 97-0177R2's WAN with each switch algorithm of
# the core at every switch port in place of ERICA+ (issue 32: none may be
# more than 20 % slower per cell-hop than ERICA+ on the same scenario),
# without probes (some read readings only ERICA has), so that every case
# differs from the others only in its controllers.
ALGORITHM_SCENARIO = "tcp-abr/wan"
REFERENCE_ALGORITHM = "erica_plus"


def algorithm_cases() -> dict[str, Case]:
    """One case per switch algorithm of the core (the reference first)."""
    from .reproduce.algorithms import ALGORITHM_KEYS, names

    algs = sorted(names(), key=lambda a: a != REFERENCE_ALGORITHM)
    cases = {}
    for alg in algs:
        keys = tuple(f"switches[*].port.abr.{k}={v}" for k, v in ALGORITHM_KEYS.get(alg, {}).items())
        cases[f"abr:{alg}"] = Case(ALGORITHM_SCENARIO,
                                   (f'switches[*].port.abr.algorithm="{alg}"', *keys, "probes=[]"))
    return cases


BASELINE_CELLS = 4_000_000
MAX_ROUNDS = 100  # `atmlab bench --rounds`: 100 rounds are some 5 minutes


@dataclass
class Measurement:
    sim_s: float
    wall_s: float
    cell_hops: int

    @property
    def cell_hops_per_s(self) -> float:
        return self.cell_hops / self.wall_s if self.wall_s > 0 else float("nan")


def baseline(cells: int = BASELINE_CELLS) -> Measurement:
    hops, _events, sim_s, wall_s = _core.bench_baseline(cells)
    return Measurement(sim_s, wall_s, hops)


def scenario(case: Case) -> Measurement:
    from .result import Result
    from .scenario import bundled, load

    sc = load(bundled(case.scenario), overrides=list(case.overrides))
    raw, wall_s = _core.bench_scenario(sc.to_json(), None)
    r = Result(raw)
    return Measurement(r.duration_s, wall_s, int(r.cell_hops))


def machine(proc: Path = Path("/proc/cpuinfo"),
            caches: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> dict[str, Any]:
    """The machine the figures were measured on: the CPU's model name (from
    ``/proc/cpuinfo`` where there is one, else what :mod:`platform` says),
    its logical CPUs, and the data caches the first CPU sees, by level
    (``{"L1d": "48K", "L2": "2048K", "L3": "491520K"}``, as Linux's sysfs
    writes them; empty where it has none)."""
    import platform
    cpu = ""
    try:
        for line in proc.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                cpu = value.strip()
                break
    except OSError:
        pass
    sizes: dict[str, str] = {}
    try:
        for index in sorted(caches.glob("index*")):
            kind = (index / "type").read_text().strip()
            if kind == "Instruction":
                continue
            level = (index / "level").read_text().strip()
            sizes[f"L{level}" + ("d" if kind == "Data" else "")] = (index / "size").read_text().strip()
    except OSError:
        pass
    return {
        "cpu": cpu or platform.processor() or platform.machine(),
        "logical_cpus": os.cpu_count(),
        "caches": sizes,
        "system": f"{platform.system()} {platform.release()}".strip(),
    }


def run(quick: bool = False, rounds: int = 1, algorithms: bool = False) -> dict[str, Any]:
    """Measures, `rounds` times over, the baseline, each scenario once and
    the baseline again; a scenario's ratio is to the mean of its round's
    two baseline runs. With several rounds each figure is the median over
    them (the lists keep every round): on a shared machine a single run
    of the ABR WAN moves by 5 % from one run to the next. With
    `algorithms`, the cases of :func:`algorithm_cases` too, each also with
    its ratio to the reference algorithm's rate in the same round
    (``vs_reference``)."""
    import statistics

    rounds = checked_int("rounds", rounds, 1, MAX_ROUNDS)
    cells = BASELINE_CELLS // 8 if quick else BASELINE_CELLS
    cases = {**SCENARIOS, **(algorithm_cases() if algorithms else {})}
    bases: list[float] = []
    baseline_runs: list[float] = []
    measured: dict[str, list[Measurement]] = {key: [] for key in cases}
    for _ in range(rounds):
        before = baseline(cells)
        for key, case in cases.items():
            measured[key].append(scenario(case))
        after = baseline(cells)
        baseline_runs += [before.cell_hops_per_s, after.cell_hops_per_s]
        bases.append(statistics.fmean([before.cell_hops_per_s, after.cell_hops_per_s]))
    base = statistics.median(bases)

    def figures(key: str) -> dict[str, Any]:
        ms = measured[key]
        ratios = [m.cell_hops_per_s / b for m, b in zip(ms, bases, strict=True)]
        out = {
            "scenario": cases[key].label(),
            "cell_hops_per_s": statistics.median(m.cell_hops_per_s for m in ms),
            "sim_s": ms[0].sim_s,
            "wall_s": statistics.median(m.wall_s for m in ms),
            "cell_hops": ms[0].cell_hops,
            "vs_baseline": statistics.median(ratios),
            "runs_cell_hops_per_s": [m.cell_hops_per_s for m in ms],
            "runs_vs_baseline": ratios,
        }
        reference = measured.get(f"abr:{REFERENCE_ALGORITHM}")
        if key.startswith("abr:") and reference:
            out["vs_reference"] = statistics.median(
                m.cell_hops_per_s / r.cell_hops_per_s for m, r in zip(ms, reference, strict=True))
        return out

    return {
        "build": _core.core_build(),
        "pgo_profile": _core.core_profile(),
        "machine": machine(),
        "rounds": rounds,
        "baseline": {
            "cell_hops_per_s": base,
            "runs_cell_hops_per_s": baseline_runs,
            "spread": (max(baseline_runs) - min(baseline_runs)) / base,
        },
        "scenarios": {key: figures(key) for key in cases},
    }


# ------------------------------------------------------------ start-up and small-run overhead

# A scenario small enough that its run is nothing next to the command around it:
# one voice stream (80 bytes every 10 ms) through one switch, for 1 s.
SMALL_SCENARIO = """\
name = "bench_small"
description = "one voice stream through one switch, 1 s (atmlab bench's small run)"
[simulation]
duration = "1 s"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
port = { buffer = "1000 cells" }
[[links]]
between = ["a", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "b"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v"
path = ["a", "sw", "b"]
[[apps]]
kind = "udp_cbr"
name = "voice"
vc = "v"
payload = "80 bytes"
interval = "10 ms"
"""

# The same for 1 ms: a run whose every cost is the command's (issue 29: within
# 0.3 s on the 2-core machine of docs/benchmark.md).
TINY_SCENARIO = SMALL_SCENARIO.replace('name = "bench_small"', 'name = "bench_tiny"').replace(
    'description = "one voice stream through one switch, 1 s', 'description = "one voice stream through one switch, 1 ms'
).replace('duration = "1 s"', 'duration = "1 ms"')

# (label, command-line arguments, repetitions); "{small}" and "{tiny}" are the scenarios' files.
OVERHEAD: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("atmlab --version", ("--version",), 5),
    ("atmlab run TINY", ("run", "{tiny}"), 5),
    ("atmlab run SMALL", ("run", "{small}"), 5),
    ("atmlab sweep SMALL (1 run)", ("sweep", "{small}"), 5),
    ("atmlab reproduce kpn --quick -j1", ("reproduce", "kpn", "--quick", "-j1"), 1),
    ("atmlab reproduce kpn --quick -j2", ("reproduce", "kpn", "--quick", "-j2"), 1),
)


def overhead(quick: bool = False) -> dict[str, Any]:
    """Wall time of whole commands as a user types them (the ``atmlab``
    script beside this Python, else ``python -m atmlab``), each in a new
    process in a fresh folder (so a sweep or reproduction runs, none is
    skipped): the start-up (``--version``), a run of a 1-millisecond
    scenario, a run and a 1-run sweep of a 1-second one, and ``reproduce
    kpn --quick`` with one and two workers. The median of the repetitions
    (one with `quick`)."""
    import statistics
    import subprocess
    import sys
    import tempfile
    import time

    out: dict[str, Any] = {}
    env = {**os.environ, "ATMLAB_TRACEBACK": "1"}
    with tempfile.TemporaryDirectory(prefix="atmlab-bench-") as tmp:
        small, tiny = Path(tmp) / "small.toml", Path(tmp) / "tiny.toml"
        small.write_text(SMALL_SCENARIO, encoding="utf-8")
        tiny.write_text(TINY_SCENARIO, encoding="utf-8")
        script = Path(sys.executable).with_name("atmlab")
        command = [str(script)] if script.is_file() else [sys.executable, "-m", "atmlab"]
        for label, args, reps in OVERHEAD:
            times = []
            for _ in range(1 if quick else reps):
                with tempfile.TemporaryDirectory(dir=tmp) as cwd:
                    argv = [*command, *(a.format(small=small, tiny=tiny) for a in args)]
                    t0 = time.perf_counter()
                    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
                    times.append(time.perf_counter() - t0)
                    if p.returncode != 0:
                        raise RuntimeError(f"{label} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
            out[label] = {"wall_s": statistics.median(times), "runs_wall_s": times}
    return out
