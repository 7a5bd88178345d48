"""atmlab's TCP against ns-3's on the same packet-level cases (docs/validation.md).

    .venv/bin/python validation/ns3_crosscheck.py --ns3-python /tmp/ns3venv/bin/python

(ns-3 once: ``python3 -m venv /tmp/ns3venv && /tmp/ns3venv/bin/pip install ns3``.)
For each scenario of ``validation/scenarios/`` and each of Reno, NewReno and
SACK, runs the scenario in atmlab (this Python) and the same dumbbell in
ns-3 (``validation/ns3_side.py`` in the ns-3 Python, as a subprocess that
reads the case as JSON and prints the traces as JSON). The ns-3 case is
derived from the atmlab file, so the two cannot drift apart: link delays
as written, link rates scaled so that one full segment (a 192-cell AAL5
frame in atmlab, a 9182-byte PPP frame in ns-3) takes the same time, the
bottleneck buffer in whole packets, the same frame numbers dropped.

Writes to ``--out`` (default validation/out/): ``summary.csv`` and
``summary.md`` (goodput, retransmissions, timeouts, fast recoveries, time
the loss was detected, time to deliver the first 15 MB, agreement),
``traces/<scenario>_<variant>.csv`` (both congestion windows on a 5 ms
grid) and ``<scenario>.png`` (both windows, one panel per variant).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import atmlab  # noqa: E402
from atmlab.quantity import parse  # noqa: E402

HERE = Path(__file__).resolve().parent
SCENARIOS = ["no_loss", "drop1", "drop3", "overflow"]
VARIANTS = ["reno", "newreno", "sack"]
GRID_S = 0.005  # the traces' grid in the CSV files
MARK_BYTES = 15_000_000  # "time to deliver": the first 15 MB
PPP_HEADER = 2
CELL_BITS = 424
CA_RECOVERY, CA_LOSS = 3, 4  # ns-3 TcpSocketState::TcpCongState_t

# Tolerances (docs/validation.md, "Tolerance"): with chosen drops the two
# simulators must agree on every count and within 2 % on goodput (ATM
# switches forward cells as they arrive, ns-3's router whole packets: the
# RTT differs by one packet time on the access link, 1.2 %; and the halved
# window by up to one segment); with buffer overflow, which packets are lost
# depends on queue timing at that scale, so only goodput (within 10 %) is
# compared.
GOODPUT_TOL = {"no_loss": 0.02, "drop1": 0.02, "drop3": 0.02, "overflow": 0.10}


def value(q: object) -> float:
    """A scenario quantity in its base unit (s, bit/s, bytes, cells)."""
    v = parse(q)
    return float(getattr(v, "value", v))


def ns3_case(sc: dict, variant: str) -> dict:
    """The ns-3 twin of an atmlab scenario."""
    tcp = sc["tcp"]
    mtu = 9180
    mss = int(value(tcp["mss"]))
    cells = atmlab.cells(mss, proto="tcp", mtu=mtu).cells  # one full segment
    scale = (mtu + PPP_HEADER) * 8 / (cells * CELL_BITS)
    access, bottleneck = sc["links"]
    port = sc["switches"][0]
    bn_port = port.get("port_to", {}).get("rcv", port["port"])
    policy = bn_port.get("drop_policy", {"kind": "tail_drop"})
    if policy["kind"] == "epd":
        queue = (int(value(policy["threshold"])) - 1) // cells
    else:
        queue = int(value(bn_port["buffer"])) // cells
    loss = bottleneck.get("loss")
    # atmlab's frame n on router -> rcv is data segment n - 1 (frame 1 is
    # the SYN); ns-3's packet with 0-based index n at the receiver is too
    # (0: SYN, 1: the handshake's ACK, 2: segment 1): the same numbers.
    drop = list(loss["frames"]) if loss else []
    return {
        "variant": variant,
        "access_rate": value(access["rate"]) * scale,
        "access_delay": value(access["delay"]),
        "bottleneck_rate": value(bottleneck["rate"]) * scale,
        "bottleneck_delay": value(bottleneck["delay"]),
        "mtu": mtu,
        "mss": mss,
        "window": int(value(tcp["window"])),
        "initial_cwnd": int(tcp["initial_cwnd"]),
        "initial_ssthresh": int(value(tcp["initial_ssthresh"])),
        "queue_packets": queue,
        "drop": drop,
        "min_rto": value(tcp["min_rto"]),
        "clock_granularity": value(tcp["timer_tick"]),
        "duration": value(sc["simulation"]["duration"]),
    }


def run_ns3(python: str, case: dict) -> dict:
    p = subprocess.run([python, str(HERE / "ns3_side.py")], input=json.dumps(case), capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        tail = "\n".join(line for line in p.stderr.splitlines() if "NS_" in line or "Error" in line)
        sys.exit(f"ns-3 failed on {case['variant']}: {tail or p.stderr[-2000:]}")
    return json.loads(p.stdout)


def step(t: np.ndarray, v: np.ndarray, grid: np.ndarray, before: float) -> np.ndarray:
    """A trace of events (value v[i] from t[i] on) sampled on ``grid``."""
    i = np.searchsorted(t, grid, side="right") - 1
    return np.where(i >= 0, v[np.clip(i, 0, None)], before)


def first_cut(t: np.ndarray, v: np.ndarray, initial: float) -> float | None:
    """When the slow-start threshold first falls below its initial value."""
    below = np.nonzero(v < initial)[0]
    return float(t[below[0]]) if below.size else None


def time_to(t: np.ndarray, cum: np.ndarray, mark: float) -> float | None:
    i = np.searchsorted(cum, mark, side="left")
    return float(t[i]) if i < len(t) else None


def atmlab_side(sc: dict) -> dict:
    r = atmlab.run(sc)
    series = {s["kind"]: s for s in r.raw["series"]}
    c = r.connections.iloc[0]
    t = np.asarray(series["cwnd"]["t_s"])
    gp = np.asarray(series["goodput"]["values"])  # bit/s over each interval
    dt = float(t[1] - t[0])
    cum = np.cumsum(gp * dt / 8)  # delivered by the end of each interval
    ss_t, ss = np.asarray(series["ssthresh"]["t_s"]), np.asarray(series["ssthresh"]["values"])
    port = r.ports.loc["router->rcv"]
    return {
        "cwnd_t": t, "cwnd": np.asarray(series["cwnd"]["values"]),
        "goodput_bps": float(c.goodput_bps),
        "retransmissions": int(c.retransmitted_segments),
        "timeouts": int(c.timeouts),
        "fast_recoveries": int(c.fast_retransmits),
        "detected_s": first_cut(ss_t, ss, value(sc["tcp"]["initial_ssthresh"])),
        "t_mark_s": time_to(t + dt, cum, MARK_BYTES),
        "lost_packets": int(port.lost_on_link // 192 + port.dropped // 192),
    }


def ns3_side(d: dict, case: dict) -> dict:
    seqs, retx, top = d["tx_seq"], 0, -1
    for s in seqs:
        if s < top:
            retx += 1
        top = max(top, s)
    states = d["state"]
    rx_t, rx = np.asarray(d["rx_t"]), np.asarray(d["rx_bytes"])
    return {
        "cwnd_t": np.asarray(d["cwnd_t"]), "cwnd": np.asarray(d["cwnd"]),
        "goodput_bps": (rx[-1] if rx.size else 0) * 8 / case["duration"],
        "retransmissions": retx,
        "timeouts": sum(1 for s in states if s == CA_LOSS),
        "fast_recoveries": sum(1 for s in states if s == CA_RECOVERY),
        "detected_s": first_cut(np.asarray(d["ssth_t"]), np.asarray(d["ssth"]), case["initial_ssthresh"]),
        "t_mark_s": time_to(rx_t, rx, MARK_BYTES),
        "lost_packets": len(d["drop_t"]) + len(d["qdrop_t"]),
    }


def agree(name: str, a: dict, n: dict) -> tuple[bool, str]:
    tol = GOODPUT_TOL[name]
    gap = abs(a["goodput_bps"] - n["goodput_bps"]) / n["goodput_bps"]
    why = []
    if gap > tol:
        why.append(f"goodput {gap:.1%} > {tol:.0%}")
    if name != "overflow":
        for k in ("retransmissions", "timeouts", "fast_recoveries"):
            if a[k] != n[k]:
                why.append(f"{k} {a[k]} vs {n[k]}")
    return not why, "; ".join(why)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns3-python", default="/tmp/ns3venv/bin/python",
                    help="a Python with ns-3's bindings (pip install ns3)")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--scenarios", nargs="*", default=SCENARIOS, choices=SCENARIOS)
    args = ap.parse_args()
    (args.out / "traces").mkdir(parents=True, exist_ok=True)

    rows = []
    for name in args.scenarios:
        base = tomllib.loads((HERE / "scenarios" / f"{name}.toml").read_text())
        fig, axes = plt.subplots(len(VARIANTS), 1, figsize=(7, 2.2 * len(VARIANTS)), sharex=True)
        for ax, variant in zip(axes, VARIANTS, strict=True):
            sc = json.loads(json.dumps(base))
            sc["tcp"]["variant"] = variant
            case = ns3_case(sc, variant)
            a = atmlab_side(sc)
            n = ns3_side(run_ns3(args.ns3_python, case), case)
            grid = np.round(np.arange(0, case["duration"] + 1e-9, GRID_S), 6)
            mss = case["mss"]
            trace = pd.DataFrame({
                "t_s": grid,
                "atmlab_cwnd_segments": step(a["cwnd_t"], a["cwnd"], grid, np.nan) / mss,
                "ns3_cwnd_segments": step(n["cwnd_t"], n["cwnd"], grid, case["initial_cwnd"] * mss) / mss,
            })
            trace.round(4).to_csv(args.out / "traces" / f"{name}_{variant}.csv", index=False)
            ax.plot(trace.t_s, trace.ns3_cwnd_segments, drawstyle="steps-post", lw=1.6, color="tab:orange",
                    label="ns-3")
            ax.plot(trace.t_s, trace.atmlab_cwnd_segments, drawstyle="steps-post", lw=0.9, color="tab:blue",
                    label="atmlab")
            ax.set_ylabel(f"{variant}\ncwnd (segments)")
            ax.grid(alpha=0.3)
            ok, why = agree(name, a, n)
            row = {"scenario": name, "variant": variant}
            for k in ("goodput_bps", "retransmissions", "timeouts", "fast_recoveries", "detected_s", "t_mark_s",
                      "lost_packets"):
                row[f"atmlab_{k}"] = a[k]
                row[f"ns3_{k}"] = n[k]
            row["agree"] = ok
            row["differs"] = why
            rows.append(row)
            print(f"{name:9s} {variant:8s} goodput {a['goodput_bps'] / 1e6:7.3f} vs {n['goodput_bps'] / 1e6:7.3f}"
                  f" Mbit/s  retx {a['retransmissions']:3d} vs {n['retransmissions']:3d}"
                  f"  RTO {a['timeouts']} vs {n['timeouts']}  FR {a['fast_recoveries']} vs {n['fast_recoveries']}"
                  f"  {'agree' if ok else 'DIFFER: ' + why}", flush=True)
        axes[0].legend(loc="upper left")
        axes[0].set_title(f"{name}: congestion window, atmlab vs ns-3")
        axes[-1].set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(args.out / f"{name}.png", dpi=80)
        plt.close(fig)

    table = pd.DataFrame(rows)
    table.to_csv(args.out / "summary.csv", index=False, float_format="%.6g")
    md = pd.DataFrame({
        "scenario": table.scenario,
        "variant": table.variant,
        "goodput Mbit/s (atmlab / ns-3)": [f"{a / 1e6:.3f} / {n / 1e6:.3f}" for a, n in
                                           zip(table.atmlab_goodput_bps, table.ns3_goodput_bps, strict=True)],
        "retx": [f"{a} / {n}" for a, n in zip(table.atmlab_retransmissions, table.ns3_retransmissions,
                                               strict=True)],
        "timeouts": [f"{a} / {n}" for a, n in zip(table.atmlab_timeouts, table.ns3_timeouts, strict=True)],
        "fast rec.": [f"{a} / {n}" for a, n in zip(table.atmlab_fast_recoveries, table.ns3_fast_recoveries,
                                                    strict=True)],
        "loss detected s": [_pair(a, n, 3) for a, n in zip(table.atmlab_detected_s, table.ns3_detected_s,
                                                           strict=True)],
        "15 MB at s": [_pair(a, n, 3) for a, n in zip(table.atmlab_t_mark_s, table.ns3_t_mark_s, strict=True)],
        "lost pkts": [f"{a} / {n}" for a, n in zip(table.atmlab_lost_packets, table.ns3_lost_packets,
                                                    strict=True)],
        "agree": ["yes" if ok else f"no: {why}" for ok, why in zip(table.agree, table.differs, strict=True)],
    })
    lines = ["| " + " | ".join(md.columns) + " |", "|" + "---|" * len(md.columns)]
    lines += ["| " + " | ".join(map(str, r)) + " |" for r in md.itertuples(index=False)]
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"\nwrote {args.out}/summary.csv, summary.md, traces/, *.png")


def _pair(a: float | None, n: float | None, digits: int) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"
    return f"{f(a)} / {f(n)}"


if __name__ == "__main__":
    main()
