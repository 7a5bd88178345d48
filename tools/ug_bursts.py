"""97-0424 (ubr-gr), issue 34 item 4: what each TCP source's retransmission
timer holds when each VBR burst starts, and whether it times out in it.

    PYTHONPATH=python python tools/ug_bursts.py wan --buffer 12000 --policy tail_drop --vbr 300 \
        [--set tcp.rto_algorithm=bsd43_tahoe ...] [--replications 3]

Runs the study's template (`scenarios/ubr-gr/<family>.toml`, Table 1's
point: SACK, N = 5, GR = 0) with `rto` and `srtt` probes every 10 ms and a
`tcp` trace, then, for every burst k (VBR ON from 2kT to 2kT + T at the
source, which starts ON at t = 0, UG-10), prints per source the RTO 10 ms
before the burst and the RTO armed for it (read 50 ms in, after the last
ACK; ticks of 100 ms), and whether a timeout fired in the burst (after its
first instant, up to and with its end) or in the ACK gap just after it (up
to 40 ms past its end: the queued segments' ACKs take a round trip to come
back). Timeouts outside every burst are counted too. The first burst (the
SYNs wait it out, UG-10) is left out of the counts.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path

import atmlab
from atmlab.reproduce.ubr_gr import template

TICK = 0.1
GAP = 0.040


def one(family: str, buffer: int, policy: str, vbr_ms: int, sets: list[str], replication: int,
        seed: int | None, duration: str | None) -> dict:
    t = template(family)
    t["params"].update({"buffer": buffer, "policy": policy, "vbr": f"{vbr_ms} ms", "n": 5, "gr": 0.0,
                        "variant": "sack"})
    t["probes"] = [{"kind": k, "app": f"tcp{i}", "interval": "10 ms"} for k in ("rto", "srtt") for i in range(5)]
    t["trace"] = {"kinds": ["tcp"]}
    if duration:
        t["simulation"]["duration"] = duration
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        trace = Path(d) / "t.csv"
        r = atmlab.run(t, overrides=sets, replication=replication, seed=seed, trace=trace)
        tr = atmlab.read_trace(trace)
    to = tr[tr.event == "timeout"]
    w = r.series_wide()
    T = vbr_ms / 1000.0
    dur = r.duration_s
    bursts = []
    k = 0
    while 2 * k * T < dur - 1e-9:
        s, e = 2 * k * T, 2 * k * T + T
        row = {"k": k, "start": s, "rto": [], "rto_before": [], "srtt": [], "in_burst": [], "in_gap": []}
        for i in range(5):
            app = f"tcp{i}"
            before = w.index[abs(w.index - (s - 0.01)) < 1e-9]  # the last sample before the burst
            row["rto_before"].append(float(w.loc[before[0], f"rto:{app}"]) if len(before) else float("nan"))
            # The timer the ACK gap runs on: armed by the last ACK, which comes
            # back about 30 ms into the burst (the VBR cells reach sw0 5 ms
            # after they leave; the last UBR cells ahead of them take 25 ms
            # more to be ACKed); read 50 ms in (40 ms for 50 ms bursts), before
            # any timeout armed then can fire.
            at = w.index[abs(w.index - (s + min(0.05, T - 0.01))) < 1e-9]
            row["rto"].append(float(w.loc[at[0], f"rto:{app}"]) if len(at) else float("nan"))
            row["srtt"].append(float(w.loc[at[0], f"srtt:{app}"]) if len(at) else float("nan"))
            mine = to[to.conn == app].time_s
            row["in_burst"].append(int(((mine > s + 1e-9) & (mine < e + 1e-9)).sum()))
            row["in_gap"].append(int(((mine > e + 1e-9) & (mine < e + GAP)).sum()))
        bursts.append(row)
        k += 1
    # timeouts in no burst or gap
    outside = 0
    for x in to.time_s:
        k = int(x // (2 * T))
        ph = x - 2 * k * T
        if ph >= T + GAP or ph < 1e-9:
            outside += 1
    conns = r.connections
    return {"eff": r.efficiency, "fair": r.fairness, "bursts": bursts, "timeouts": len(to), "outside": outside,
            "goodput": [float(conns.loc[f"tcp{i}", "goodput_bps"]) / 1e6 if "goodput_bps" in conns else float("nan")
                        for i in range(5)],
            "timeout_times": sorted(to.time_s.round(3).tolist())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["lan", "wan"])
    ap.add_argument("--buffer", type=int, default=12000)
    ap.add_argument("--policy", default="tail_drop")
    ap.add_argument("--vbr", type=int, default=300, help="ON = OFF, ms")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--replications", type=int, default=1)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--duration", default=None)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    for rep in range(a.replications):
        o = one(a.family, a.buffer, a.policy, a.vbr, a.sets, rep, a.seed, a.duration)
        print(f"# {a.family} {a.buffer} {a.policy} {a.vbr} ms {' '.join(a.sets)} rep {rep}: "
              f"efficiency {o['eff']:.3f} fairness {o['fair']:.3f} timeouts {o['timeouts']} "
              f"(outside bursts {o['outside']})")
        hist = collections.Counter()
        hit = collections.Counter()
        before = collections.Counter()
        n_b = 0
        n_hit = 0
        for b in o["bursts"]:
            if a.verbose:
                rt = " ".join(f"{x / TICK:4.1f}" for x in b["rto_before"]) + " | " + \
                    " ".join(f"{x / TICK:4.1f}" for x in b["rto"])
                tb = "".join(str(x) for x in b["in_burst"])
                tg = "".join(str(x) for x in b["in_gap"])
                print(f"  burst {b['k']:2d} t={b['start']:6.2f}  rto(ticks) {rt}  timeout in burst {tb} gap {tg}")
            if b["k"] == 0:  # the first burst holds the SYNs (UG-10): no RTO yet
                continue
            for i in range(5):
                ticks = round(b["rto"][i] / TICK, 1)
                hist[ticks] += 1
                before[round(b["rto_before"][i] / TICK, 1)] += 1
                n_b += 1
                if b["in_burst"][i] or b["in_gap"][i]:
                    hit[ticks] += 1
                    n_hit += 1
        print("  RTO armed for the burst (ticks): source-bursts, of which timed out in the burst or its ACK gap")
        for ticks in sorted(hist):
            print(f"    {ticks:5.1f}: {hist[ticks]:4d}  {hit[ticks]:4d}")
        print("  RTO 10 ms before the burst (ticks): " + ", ".join(f"{k:g}: {v}" for k, v in sorted(before.items())))
        print(f"  all: {n_b} source-bursts, {n_hit} with a timeout ({n_hit / max(n_b, 1):.0%})")
        if a.verbose:
            print("  timeouts at", o["timeout_times"][:60])


if __name__ == "__main__":
    main()
