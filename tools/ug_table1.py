"""97-0424 (ubr-gr), issue 34 item 4: Table 1-2 points of one family under
model alternatives (`--set` overrides), replications 0..R-1, untraced.

    PYTHONPATH=python python tools/ug_table1.py wan --vbr 300 --replications 2 \
        --alt ns2= --alt tahoe=tcp.rto_algorithm=bsd43_tahoe

Prints efficiency and fairness per buffer, policy and alternative (mean over
the replications, and the range), next to the published values.
"""

from __future__ import annotations

import argparse
import statistics

import atmlab
from atmlab import reference
from atmlab.reproduce.ubr_gr import BUFFERS, POLICIES, template


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["lan", "wan"])
    ap.add_argument("--vbr", type=int, action="append", default=[])
    ap.add_argument("--buffer", type=int, action="append", default=[])
    ap.add_argument("--policy", action="append", default=[])
    ap.add_argument("--replications", type=int, default=1)
    ap.add_argument("--alt", action="append", default=[], help="NAME=KEY=VALUE[,KEY=VALUE]")
    a = ap.parse_args()
    alts = []
    for s in a.alt or ["default="]:
        name, _, rest = s.partition("=")
        alts.append((name, [x for x in rest.split(",") if x]))
    for vbr in a.vbr or [300]:
        for buf in a.buffer or BUFFERS[a.family]:
            for pol in a.policy or POLICIES:
                t = template(a.family)
                t["params"].update({"buffer": buf, "policy": pol, "vbr": f"{vbr} ms", "n": 5, "gr": 0.0,
                                    "variant": "sack"})
                for name, sets in alts:
                    e, f, to = [], [], []
                    for rep in range(a.replications):
                        r = atmlab.run(t, overrides=sets, replication=rep)
                        e.append(r.efficiency)
                        f.append(r.fairness)
                        to.append(int(r.connections["timeouts"].sum()))
                    print(f"{a.family} {buf:6d} {vbr:3d} {pol:15s} {name:12s} eff {statistics.mean(e):.2f} "
                          f"({min(e):.2f}-{max(e):.2f}) fair {statistics.mean(f):.2f} ({min(f):.2f}-{max(f):.2f}) "
                          f"timeouts {statistics.mean(to):.0f}", flush=True)


if __name__ == "__main__":
    main()
