"""97-0424 (ubr-gr), issue 34 item 4: per-source throughput shares of a
Table 1-2 point, over several replications, with overrides.

    PYTHONPATH=python python tools/ug_shares.py lan --buffer 1000 --policy epd --vbr 300 \
        [--set apps.0.start_jitter=0s ...] --replications 5

Prints per replication: efficiency, Jain's fairness, each source's share
of the TCP goodput (%) and its timeouts (a locked-out source has a share
near 0 and few timeouts: its backoff carried it past the run's end); then
the means and ranges over the replications.
"""

from __future__ import annotations

import argparse
import statistics

import atmlab
from atmlab.reproduce.ubr_gr import template


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("family", choices=["lan", "wan"])
    ap.add_argument("--buffer", type=int, default=1000)
    ap.add_argument("--policy", default="epd")
    ap.add_argument("--vbr", type=int, default=300, help="ON = OFF, ms")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--first", type=int, default=0, help="first replication")
    a = ap.parse_args()
    t = template(a.family)
    t["params"].update({"buffer": a.buffer, "policy": a.policy, "vbr": f"{a.vbr} ms", "n": 5, "gr": 0.0,
                        "variant": "sack"})
    effs, fairs = [], []
    print(f"# {a.family} {a.buffer} {a.policy} {a.vbr} ms {' '.join(a.sets)}")
    for rep in range(a.first, a.first + a.replications):
        r = atmlab.run(t, overrides=a.sets, replication=rep)
        c = r.connections
        g = [float(c.loc[f"tcp{i}", "goodput_bps"]) for i in range(5)]
        tot = sum(g) or 1.0
        to = [int(c.loc[f"tcp{i}", "timeouts"]) for i in range(5)]
        effs.append(r.efficiency)
        fairs.append(r.fairness)
        print(f"  rep {rep}: efficiency {r.efficiency:.3f} fairness {r.fairness:.3f}  shares % "
              + " ".join(f"{100 * x / tot:5.1f}" for x in g) + "  timeouts " + " ".join(str(x) for x in to))
    if len(effs) > 1:
        print(f"  mean efficiency {statistics.mean(effs):.3f} (range {min(effs):.2f}-{max(effs):.2f}), "
              f"fairness {statistics.mean(fairs):.3f} (range {min(fairs):.2f}-{max(fairs):.2f})")


if __name__ == "__main__":
    main()
