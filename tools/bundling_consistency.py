"""How far study 000's published tables agree with themselves and with the
adapter they were measured through (docs/reproductions/bundling.md, "What
the published tables allow"). Reads only the published values the
reproduction compares with (``atmlab.reproduce.bundling``); runs nothing.

    python tools/bundling_consistency.py          # the two checks, summarised
    python tools/bundling_consistency.py --rows   # and every row they flag

1. **Twice-measured configurations.** One TCP with one voice stream appears
   in both experiments: as the first row of Tables 5-12 (1 TCP + n UDP, n =
   1) and of Tables 17-24 (n TCP + 1 UDP, n = 1), same TSDU L and window W.
   The two published values of one quantity should agree within the
   tolerance the reproduction compares with; where they do not, no single
   model can match both.
2. **More than the adapter carries.** In experiments A and B every session
   shares the sender's adapter, shaped to 1594 kbit/s (3759.4 cells/s). The
   cells of the published throughputs (192 cells per 9140-byte segment, 3
   per 80-byte voice datagram, the core's `atmlab.cells`) are added up; a
   configuration above the adapter's rate by more than ``--margin`` (5 %:
   the study's KB and rates are rounded) cannot have had its sessions
   running side by side for their whole length, which is what the model
   simulates.

The reproduction notes every such value in the `note` column of
`bundling_comparison.csv` (`atmlab.reproduce.bundling.annotate_reach`);
this command prints the two checks.
"""

from __future__ import annotations

import argparse
from typing import Any

from atmlab.reproduce import bundling as B

TCP = "tcp_throughput_kbytes_per_s"
UDP = "udp_throughput_kbytes_per_s"


def twice_measured() -> list[dict[str, Any]]:
    """The throughputs published twice for one configuration."""
    return [{"quantity": a.quantity, "L": a.config["tcp_tsdu_kbytes"], "W": a.config["tcp_window_kbytes"],
             "first": f"{a.source}: {a.value:g}", "second": f"{b.source}: {b.value:g}", "agree": agree}
            for a, b, agree in B.twice_measured(B.STUDY.published())]


def over_capacity(margin: float) -> list[dict[str, Any]]:
    """Configurations of experiments A and B with both throughputs
    published, their load on the adapter and whether it is over 1 + margin."""
    published = B.STUDY.published()
    value = {(p.quantity, tuple(p.config.get(k) for k in B.KEY)): p.value for p in published}
    rows = []
    for key, load in sorted(B.adapter_load(published).items()):
        exp, n_tcp, n_udp, tsdu, window = key
        rows.append({"experiment": exp, "n_tcp": n_tcp, "n_udp": n_udp, "L": tsdu, "W": window,
                     "tcp": value[(TCP, key)], "udp": value[(UDP, key)], "load": load, "over": load > 1 + margin})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="print every row a check flags")
    ap.add_argument("--margin", type=float, default=B.CAPACITY_MARGIN,
                    help=f"load above 1 + MARGIN counts as over (default {B.CAPACITY_MARGIN})")
    args = ap.parse_args()
    if not 0 <= args.margin < 1:
        ap.error(f"--margin: {args.margin} is not in [0, 1)")

    twice = twice_measured()
    for quantity in (TCP, UDP):
        rows = [r for r in twice if r["quantity"] == quantity]
        print(f"measured twice, {quantity}: {sum(r['agree'] for r in rows)} of {len(rows)} pairs agree "
              "within the reproduction's tolerance")
        for r in rows:
            if args.rows and not r["agree"]:
                print(f"    L {r['L']:>2} KB, W {r['W']:>2} KB: {r['first']} / {r['second']}")
    caps = over_capacity(args.margin)
    for exp in ("A", "B"):
        rows = [r for r in caps if r["experiment"] == exp]
        over = [r for r in rows if r["over"]]
        print(f"experiment {exp}: {len(over)} of {len(rows)} configurations publish more than the adapter "
              f"carries (load above {1 + args.margin:.2f}; highest {max(r['load'] for r in rows):.2f})")
        for r in over if args.rows else []:
            print(f"    {r['n_tcp']} TCP + {r['n_udp']:>2} UDP, L {r['L']:>2}, W {r['W']:>2}: TCP {r['tcp']:g}, "
                  f"UDP {r['udp']:g} KB/s -> load {r['load']:.2f}")


if __name__ == "__main__":
    main()
