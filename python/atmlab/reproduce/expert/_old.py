"""Study 002: Jaussi, Lorang, Nelissen, "A Detailed Experimental Performance
Evaluation on TCP over UBR" (ACTS EXPERT testbed, FORE ASX-200).

Four (or sixteen) greedy TCP connections share one VP-shaped port of the
ASX-200 (37.44 Mbit/s, a shared buffer of B cells with per-VC queues served
round robin), run on the template ``scenarios/expert/expert.toml`` with one
set of defaults (docs/reproductions/expert.md). The experiments:

* E1/E2/E3 (Figs 2-4, s4.1): efficiency and fairness against B, MTU 4352 and
  9180; plain UBR, PPD, EPD with b = 1, 2, 4; a loss-free reference buffer.
* E4 (Figs 5-6, s4.2): duplicate-ACK threshold 1, 3, 10; MTU 9180; EPD b = 1
  (PPD and plain UBR as sensitivity).
* E5 (Figs 7-10, s4.3): campaign II (Solaris 2.5.1 senders, Linux 2.0.25
  stretch-ACK receivers) as the four "modified TCP" switches of s5.3 at MTU
  1500, timer granularity 200 and 20 ms.
* E6 (Figs 11-13, s5.1): efficiency, FER, CLR and dead cells against b = 0..4
  (b = 0 is PPD) and plain UBR, B = 725, 1088, 1360, 2176, MTU 4352.
* E7 (Fig. 14, s5.2): 16 sources, B = 725 and 1088.
* E8 (Figs 15-16, s5.3): E6 with the modified TCP.

The study prints no tables; its prose numbers and statements (claims C1-C31,
``data/reference/expert/claims.csv``) are checked against the simulated
values in a claims table. Runs go through :class:`atmlab.Sweep`, so they are
stored in the results database and an interrupted reproduction resumes.
``--quick`` runs a few short configurations (for CI); its numbers are not
comparable with the study's.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import reference
from ..scenario import load
from ..stats import summarize
from ..store import Store
from ..sweep import Sweep
from . import Options, Progress, Reproduction, run_sweeps

STUDY = "expert"
CLAIMS = "expert/claims"

BUFFERS = (363, 544, 725, 906, 1088, 1360, 1632, 2176)  # spec C.1
LOSS_FREE = 8192  # > 4 windows of 1092 cells: no loss
SIM_BUFFERS = (725, 1088, 1360, 2176)  # spec C.13
CAMPAIGN2_BUFFERS = (725, 1088, 2176)  # spec C.12
SHAPED_RATE_BPS = 37.44e6  # the VP shaping rate, a cell rate (424-bit cells): 88302 cells/s
CELL_RATE = SHAPED_RATE_BPS / 424
BOTTLENECK = "sw0->sw1"
QUICK_DURATION = "5 s"

# The four switches of s5.3 (docs/models/tcp.md "Options of the measured stacks"),
# also used for campaign II's hosts (spec A.3).
MODIFIED_TCP = {
    "backoff_reset": "rtt_sample",  # (1) backoff held until every retransmission is acknowledged
    "stretch_ack": "4 ms",  # (2) ACK only when a 4 ms timer fires
    "freeze_window_in_fast_recovery": True,  # (3) no window growth until the fast retransmission is ACKed
    "keep_dupacks_on_timeout": True,  # (4) the duplicate-ACK count survives a timeout
}
POLICY_TABLES = {
    "ubr": {"kind": "tail_drop"},
    "ppd": {"kind": "ppd", "keep_end_of_frame": True},
    # "epd": the template's own (excess_frames = b, frame_cells = MTU*, ">", EOM kept)
}
POLICY_NAMES = {"ubr": "UBR", "ppd": "PPD", "epd": "EPD"}


def frame_cells(mtu: int) -> int:
    """MTU*: cells of a full-sized frame, IP datagram + LLC/SNAP (8) + AAL5
    trailer (8), padded to 48-byte payloads (spec A.4: 32, 91, 192)."""
    return math.ceil((mtu + 16) / 48)


def max_goodput_bps(mtu: int) -> float:
    """Loss-free goodput of the shaped VP (spec A.4): MSS bytes per frame of
    MTU* cells at 88302 cells/s."""
    return (mtu - 40) * 8 * CELL_RATE / frame_cells(mtu)


@dataclass(frozen=True)
class Config:
    """One configuration: the swept parameters and the two families (drop
    policy, TCP profile) that pick the template's overrides."""

    n: int = 4
    mtu: int = 4352
    buffer: int = 1088
    policy: str = "epd"  # ubr (tail drop), ppd, epd
    b: int = 1  # EPD excess capacity, frames (0 for UBR and PPD)
    dupack: int = 3
    timer_ms: int = 200
    tcp: str = "default"  # or "modified" (s5.3's four switches; campaign II)

    def canonical(self) -> Config:
        """b = 0 is PPD (s3.2; checked bit for bit by the tests); UBR and PPD carry b = 0."""
        if self.policy != "epd":
            return replace(self, b=0)
        return replace(self, policy="ppd") if self.b == 0 else self

    @property
    def threshold(self) -> int | None:
        """EPDth = B - b MTU* (cells), EPD only."""
        return self.buffer - self.b * frame_cells(self.mtu) if self.policy == "epd" else None

    @property
    def feasible(self) -> bool:
        """An EPD threshold below one cell cannot be set (spec C.2): such points are skipped."""
        t = self.threshold
        return t is None or t >= 1

    @property
    def label(self) -> str:
        return f"EPD b={self.b}" if self.policy == "epd" else POLICY_NAMES[self.policy]

    @property
    def family(self) -> tuple[str, str]:
        return (self.policy, self.tcp)

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"n": self.n, "mtu": self.mtu, "buffer": self.buffer, "dupack": self.dupack,
                             "timer": f"{self.timer_ms} ms"}
        if self.policy == "epd":
            p |= {"b": self.b}
        return p


UBR, PPD = {"policy": "ubr", "b": 0}, {"policy": "ppd", "b": 0}


def EPD(b: int) -> dict[str, Any]:  # noqa: N802 (reads like the study's "EPD b=1")
    return {"policy": "epd", "b": b}


POLICIES = (UBR, PPD, EPD(1), EPD(2), EPD(4))  # Figs 2-4
B_AXIS = (PPD, EPD(1), EPD(2), EPD(3), EPD(4))  # b = 0..4 (Figs 11, 14, 15)


def experiments(quick: bool = False) -> dict[str, list[Config]]:
    """The configurations of each experiment (spec B), infeasible ones included."""
    if quick:
        return {
            "E1": [Config(buffer=LOSS_FREE, **UBR)] + [Config(buffer=725, **p) for p in (UBR, PPD, EPD(1))]
                  + [Config(buffer=1088, **EPD(1))],
            "E3": [Config(mtu=9180, buffer=725, **EPD(4)), Config(mtu=9180, buffer=1088, **EPD(1))],
            "E4": [Config(mtu=9180, buffer=1088, dupack=d, **EPD(1)) for d in (1, 3, 10)],
            "E5": [Config(tcp="modified", mtu=1500, buffer=725, timer_ms=t, **EPD(1)) for t in (200, 20)],
            "E6": [Config(buffer=725, **p) for p in (UBR, PPD, EPD(2))],
            "E7": [Config(n=16, buffer=725, **p) for p in (PPD, EPD(2))],
            "E8": [Config(tcp="modified", buffer=725, **p) for p in (PPD, EPD(2))],
        }
    ref = [Config(mtu=m, buffer=LOSS_FREE, **UBR) for m in (4352, 9180)]
    out = {
        "E1": [Config(mtu=4352, buffer=bf, **p) for bf in BUFFERS for p in POLICIES[:3]] + ref[:1],
        "E2": [Config(mtu=9180, buffer=bf, **p) for bf in BUFFERS for p in POLICIES[:3]] + ref[1:],
        "E3": [Config(mtu=m, buffer=bf, **p) for m in (4352, 9180) for bf in BUFFERS for p in POLICIES] + ref,
        "E4": [Config(mtu=9180, buffer=bf, dupack=d, **p) for d in (1, 3, 10) for bf in BUFFERS
               for p in (EPD(1), PPD, UBR)],
        "E5": [Config(tcp="modified", mtu=1500, buffer=bf, timer_ms=t, **p) for t in (200, 20)
               for bf in CAMPAIGN2_BUFFERS for p in (UBR, PPD, EPD(1), EPD(2), EPD(4))]
              + [Config(tcp="modified", mtu=1500, buffer=bf, timer_ms=t, **EPD(1)) for t in (200, 20)
                 for bf in BUFFERS],
        "E6": [Config(buffer=bf, **p) for bf in SIM_BUFFERS for p in (UBR, *B_AXIS)],
        "E7": [Config(n=16, buffer=bf, **p) for bf in (725, 1088) for p in (UBR, *B_AXIS)],
        "E8": [Config(tcp="modified", buffer=bf, **p) for bf in SIM_BUFFERS for p in (UBR, *B_AXIS)],
    }
    return out


def configurations(quick: bool = False) -> dict[Config, list[str]]:
    """Every distinct (canonical) configuration and the experiments it belongs to, in order."""
    out: dict[Config, list[str]] = {}
    for exp, configs in experiments(quick).items():
        for c in configs:
            tags = out.setdefault(c.canonical(), [])
            if exp not in tags:
                tags.append(exp)
    return out


# ------------------------------------------------------------------ scenarios

def template() -> dict[str, Any]:
    ref = resources.files("atmlab") / "scenarios" / STUDY / "expert.toml"
    return copy.deepcopy(load(Path(str(ref))).template)


def family_template(policy: str, tcp: str, duration: str | None = None) -> dict[str, Any]:
    """The template with the family's drop policy and TCP profile."""
    t = template()
    if policy in POLICY_TABLES:
        t["switches"][0]["port_to"]["sw1"]["drop_policy"] = copy.deepcopy(POLICY_TABLES[policy])
    if tcp == "modified":
        t["tcp"].update(MODIFIED_TCP)
    if duration:
        t["simulation"]["duration"] = duration
    return t


def scenario(config: Config, duration: str | None = None) -> dict[str, Any]:
    """A single configuration as a runnable template (``atmlab.run(scenario(c), seed=1)``).
    Not canonicalised: ``Config(policy="epd", b=0)`` gives EPD with EPDth = B."""
    t = family_template(config.policy, config.tcp, duration)
    t["params"].update(config.params())
    return t


def sweeps(configs: Iterable[Config], options: Options) -> list[tuple[tuple[str, str], Sweep, list[Config]]]:
    """One sweep per family over the feasible configurations (a zip of all swept keys)."""
    families: dict[tuple[str, str], list[Config]] = {}
    for c in configs:
        if c.feasible:
            families.setdefault(c.family, []).append(c)
    out = []
    duration = QUICK_DURATION if options.quick else None
    for fam, members in families.items():
        t = family_template(*fam, duration)
        keys = list(members[0].params())
        t["sweep"] = {"zip": {"configuration": {k: [m.params()[k] for m in members] for k in keys}}}
        out.append((fam, Sweep(t, replications=options.replications, seed=options.seed), members))
    return out


# ------------------------------------------------------------------ metrics

def run_metrics(raw: dict[str, Any], config: Config) -> dict[str, Any]:
    """The study's metrics (s3.2, spec A.7) of one run."""
    ports = {p["name"]: p for p in raw["ports"]}
    bott = ports[BOTTLENECK]
    conns = raw["connections"]
    goodputs = [float(c["goodput_bps"]) for c in conns]
    frames = raw["frames"]
    receivers = [h for h in raw.get("hosts", []) if str(h.get("name", "")).startswith("dst")]
    if receivers and all("frames_received" in h for h in receivers):
        # Per-host AAL5 counters, when the core reports them.
        good = sum(h["frames_received"] for h in receivers)
        bad = sum(h["frames_discarded"] for h in receivers)
        cells = sum(h["cells_received"] for h in receivers)
        dead = sum(h["dead_cells"] for h in receivers)
    else:
        # From the run's frame counts: the reverse (ACK) path is lossless, so
        # every lost or corrupt frame is a data frame; a good data frame is a
        # data segment sent and neither lost nor still in flight.
        bad = int(frames["discarded_by_receivers"])
        good = sum(int(c["segments_sent"]) for c in conns) - int(frames["lost"]) - int(frames["in_flight"])
        cells = sum(int(p["cells_out"]) for name, p in ports.items() if name.startswith("sw1->dst"))
        dead = int(frames["dead_cells"])
    timeouts = sum(int(c["timeouts"]) for c in conns)
    fast = sum(int(c["fast_retransmits"]) for c in conns)
    return {
        "efficiency": sum(goodputs) / max_goodput_bps(config.mtu),
        "fairness": raw["fairness"],
        "goodput_mbps": sum(goodputs) / 1e6,
        "clr": bott["dropped"] / bott["cells_in"] if bott["cells_in"] else 0.0,
        "fer": bad / (good + bad) if good + bad else 0.0,
        "dead_cell_ratio": dead / cells if cells else 0.0,
        "idle_cell_ratio": 1.0 - float(bott["utilization"]),
        "timeouts": timeouts / len(conns),
        "fast_retransmits": fast / len(conns),
        "timeout_share": timeouts / (timeouts + fast) if timeouts + fast else math.nan,
        "goodputs": goodputs,
    }


def jain(xs: list[float]) -> float:
    s2 = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * s2) if s2 > 0 else math.nan


SCALARS = ("goodput_mbps", "clr", "fer", "dead_cell_ratio", "idle_cell_ratio", "timeouts", "fast_retransmits",
           "timeout_share")


def aggregate(config: Config, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean over replications (fairness per run then averaged, spec C.6, and
    also the index of the mean goodputs)."""
    row: dict[str, Any] = {"replications": len(runs)}
    for m in ("efficiency", "fairness"):
        s = summarize([r[m] if r[m] is not None else math.nan for r in runs])
        row[m], row[f"{m}_ci95"] = s.mean, s.ci
    means = [sum(g) / len(runs) for g in zip(*(r["goodputs"] for r in runs), strict=True)] if runs else []
    row["fairness_of_means"] = jain(means) if means else math.nan
    for m in SCALARS:
        row[m] = summarize([r[m] for r in runs]).mean
    return row


def describe(config: Config, experiments_of: list[str]) -> dict[str, Any]:
    return {
        "experiments": " ".join(experiments_of),
        "tcp": config.tcp,
        "n_sources": config.n,
        "mtu_bytes": config.mtu,
        "frame_cells": frame_cells(config.mtu),
        "buffer_cells": config.buffer,
        "policy": POLICY_NAMES[config.policy],
        "b": config.b if config.policy == "epd" else (0 if config.policy == "ppd" else math.nan),
        "epd_threshold_cells": config.threshold if config.policy == "epd" else math.nan,
        "dupack_threshold": config.dupack,
        "timer_ms": config.timer_ms,
        "feasible": config.feasible,
    }


METRIC_COLUMNS = ("replications", "efficiency", "efficiency_ci95", "fairness", "fairness_ci95", "fairness_of_means",
                  *SCALARS)


# ------------------------------------------------------------------ the run

def run(options: Options, progress: Progress) -> Reproduction:
    folder = options.folder
    folder.mkdir(parents=True, exist_ok=True)
    configs = configurations(options.quick)
    plan = sweeps(configs, options)
    labels = [f"{STUDY} {POLICY_NAMES[fam[0]]}, {fam[1]} TCP" for fam, _, _ in plan]
    ran = run_sweeps([(label, sweep) for label, (_, sweep, _) in zip(labels, plan, strict=True)], options, progress)
    if ran.interrupted:
        return Reproduction.stopped(STUDY)
    per_run: dict[Config, list[dict[str, Any]]] = {}
    timing: list[tuple[int, float]] = []
    for _, sweep, members in plan:
        # The sweep zips the members' parameters: point i is members[i].
        by_hash = {p.scenario_hash: members[p.index] for p in sweep.points}
        runs = sweep.results(options.db, status="ok")
        runs = runs[runs.replication < sweep.replications]  # what this command asked for, not older extras
        with Store(options.db) as store:
            for r in runs.itertuples(index=False):
                config = by_hash[r.scenario_hash]
                raw = store.result(int(r.run_id)).raw
                per_run.setdefault(config, []).append(run_metrics(raw, config))
                timing.append((int(raw["cell_hops"]), float(r.wall_s)))
    rows = []
    for config, tags in configs.items():
        row = describe(config, tags)
        row |= aggregate(config, per_run[config]) if config in per_run else dict.fromkeys(METRIC_COLUMNS, math.nan)
        rows.append(row)
    df = pd.DataFrame(rows)
    csv = options.csv_path(f"{STUDY}.csv")
    csv.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(csv, index=False)
    table = claims(df)
    claims_csv = csv.with_name(f"{STUDY}_claims.csv")
    table.to_csv(claims_csv, index=False)
    files = [csv, claims_csv, *figures(df, folder)]
    evaluated = table[table["holds"].notna()]
    held = int((evaluated["holds"] == True).sum())  # noqa: E712 (object column)
    lines = [f"claims that hold: {held} of {len(evaluated)} evaluated ({len(table) - len(evaluated)} not evaluable)"]
    if options.quick:
        lines.insert(0, f"--quick: {QUICK_DURATION} runs on a subset; not comparable with the study.")
    hops, wall = sum(h for h, _ in timing), sum(w for _, w in timing)
    if wall > 0:
        lines.append(f"{len(timing)} runs, {hops:.3g} cell-hops in {wall:.0f} s of run time: "
                     f"{hops / wall / 1e6:.1f} M cell-hops per second per core")
    lines.append(f"{len(df)} configurations ({int((~df['feasible']).sum())} infeasible, skipped) in {csv}")
    printed = table[["claim", "statement", "published", "simulated", "holds"]].copy()
    printed["holds"] = printed["holds"].map(lambda v: "n/a" if v is None or v != v else v)
    return Reproduction(
        title="002 EXPERT (Jaussi, Lorang, Nelissen): the study's claims, published vs simulated",
        table=printed,
        files=files,
        summary="\n".join(lines),
        extra=[("E1/E3 efficiency, MTU 4352 (rows: buffer, cells)", pivot(df, 4352)),
               ("E6 (Fig. 11) efficiency against b, MTU 4352 (rows: buffer, cells)", b_pivot(df))],
        failures=ran.failures,
    )


def _key(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A point's parameters as written (4352, "200 ms"), whatever pandas made of them (4352.0)."""
    def norm(v: Any) -> str:
        v = v.item() if hasattr(v, "item") else v
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)

    return tuple(sorted((k, norm(v)) for k, v in params.items()))


def pivot(df: pd.DataFrame, mtu: int) -> pd.DataFrame:
    part = df[(df.mtu_bytes == mtu) & (df.tcp == "default") & (df.n_sources == 4) & (df.dupack_threshold == 3)
              & df.feasible]
    if part.empty:
        return pd.DataFrame()
    part = part.assign(label=[_label(r) for r in part.itertuples()])
    out = part.pivot_table(index="buffer_cells", columns="label", values="efficiency", sort=False)
    order = ["UBR", "PPD", *(f"EPD b={b}" for b in range(1, 5))]
    out = out[[c for c in order if c in out.columns]]
    return out.reset_index().rename(columns={"buffer_cells": "buffer"}).round(3)


def b_pivot(df: pd.DataFrame) -> pd.DataFrame:
    part = df[(df.mtu_bytes == 4352) & (df.tcp == "default") & (df.n_sources == 4) & (df.dupack_threshold == 3)
              & df.buffer_cells.isin(SIM_BUFFERS) & df.feasible & df.policy.isin(["PPD", "EPD"])]
    if part.empty:
        return pd.DataFrame()
    out = part.pivot_table(index="buffer_cells", columns="b", values="efficiency")
    out.columns = [f"b={int(c)}" for c in out.columns]
    return out.reset_index().rename(columns={"buffer_cells": "buffer"}).round(3)


def _label(r: Any) -> str:
    return f"EPD b={int(r.b)}" if r.policy == "EPD" else r.policy


# ------------------------------------------------------------------ claims

# How atmlab decides the study's qualitative words (one set for every claim).
SIGNIFICANT = 0.03  # an efficiency difference that is "significant" / "noticeable"
MARGINAL = 0.03  # a spread that is "marginal" / "saturated" / "robust"
HARDLY = 0.02  # "hardly improves", "ineffective": a gain of at most this
GOOD_FAIRNESS = 0.9  # s4.1's own "good (index larger than 0.9)"
PERFECT_FAIRNESS = 0.98
VERY_LOW_FAIRNESS = 0.8
ORDERS = 10.0  # "orders of magnitude": at least one
NEAR_ZERO = 0.1  # a dead cell ratio "approaching 0": at most this fraction of PPD's
FEW = 0.5  # "only a few" dead cells: at most half of the default TCP's


class Missing(Exception):
    """A configuration a claim needs was not run (--quick) or is infeasible."""


class Lookup:
    """Mean metrics by configuration."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.rows: dict[Config, dict[str, Any]] = {}
        for r in df.to_dict("records"):
            policy = {"UBR": "ubr", "PPD": "ppd", "EPD": "epd"}[r["policy"]]
            c = Config(n=int(r["n_sources"]), mtu=int(r["mtu_bytes"]), buffer=int(r["buffer_cells"]), policy=policy,
                       b=int(r["b"]) if policy == "epd" else 0, dupack=int(r["dupack_threshold"]),
                       timer_ms=int(r["timer_ms"]), tcp=str(r["tcp"]))
            self.rows[c] = r

    def __call__(self, metric: str, **kw: Any) -> float:
        c = Config(**kw).canonical()
        r = self.rows.get(c)
        if r is None or r.get(metric) is None or (isinstance(r[metric], float) and math.isnan(r[metric])):
            raise Missing(f"{c.label} B={c.buffer}")
        return float(r[metric])

    def many(self, metric: str, items: Iterable[dict[str, Any]]) -> list[float]:
        return [self(metric, **kw) for kw in items]


@dataclass
class Verdict:
    simulated: str
    holds: bool | None
    criterion: str = ""


def _f(x: float, spec: str = ".3f") -> str:
    return format(x, spec)


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _claim_checks(ref: pd.DataFrame) -> dict[str, Callable[[Lookup], Verdict]]:
    pub = ref.set_index("claim")

    def val(claim: str, col: str = "value") -> float:
        return float(pub.loc[claim, col])

    small = [bf for bf in BUFFERS if bf < 1088]
    large = [bf for bf in BUFFERS if bf > 1088]
    m4 = {"mtu": 4352}
    m9 = {"mtu": 9180}

    def c1(q: Lookup) -> Verdict:
        ubr = q.many("efficiency", [{**m4, "buffer": bf, **UBR} for bf in small])
        gains = {name: _mean([x - u for x, u in zip(q.many("efficiency", [{**m4, "buffer": bf, **p} for bf in small]),
                                                     ubr, strict=True)])
                 for name, p in (("PPD", PPD), ("EPD b=1", EPD(1)))}
        return Verdict(", ".join(f"{k} {v:+.3f}" for k, v in gains.items()) + " over UBR (mean, B < 1088)",
                       all(g >= SIGNIFICANT for g in gains.values()),
                       f"mean gain over plain UBR at B < 1088 >= {SIGNIFICANT} for both")

    def c2(q: Lookup) -> Verdict:
        b0 = int(val("C2"))
        spreads = {}
        for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=1", EPD(1))):
            xs = q.many("efficiency", [{**m4, "buffer": bf, **p} for bf in BUFFERS if bf >= b0])
            spreads[name] = max(xs) - min(xs)
        return Verdict("spread over B >= 1088: " + ", ".join(f"{k} {v:.3f}" for k, v in spreads.items()),
                       all(s <= MARGINAL for s in spreads.values()),
                       f"each curve varies by <= {MARGINAL} over B >= {b0}")

    def c3(claim: str, p: dict[str, Any]) -> Callable[[Lookup], Verdict]:
        def check(q: Lookup) -> Verdict:
            x = q("efficiency", **m4, buffer=1088, **p)
            row = q.rows[Config(**m4, buffer=1088, **p).canonical()]
            ci, n = row["efficiency_ci95"], int(row["replications"])
            pv, tol = val(claim), val(claim, "tolerance")
            ci_txt = f" (95% CI +/- {ci:.3f}, {n} runs)" if ci == ci else f" ({n} run{'s' if n > 1 else ''})"
            return Verdict(f"{x:.3f}{ci_txt}", abs(x - pv) <= tol + 1e-12, f"abs(simulated - published) <= {tol}")
        return check

    def c3d(q: Lookup) -> Verdict:
        u, p, e = (q("efficiency", **m4, buffer=1088, **x) for x in (UBR, PPD, EPD(1)))
        return Verdict(f"UBR {u:.3f}, PPD {p:.3f}, EPD b=1 {e:.3f}", u < p < e, "strict order of the means")

    def fair_over(q: Lookup, p: dict[str, Any], mtu: dict[str, Any], bufs: Iterable[int]) -> dict[int, float]:
        return {bf: q("fairness", **mtu, buffer=bf, **p) for bf in bufs}

    def c4(q: Lookup) -> Verdict:
        f = fair_over(q, EPD(1), m4, BUFFERS)
        lo = val("C4", "low")
        worst = min(f, key=f.__getitem__)
        return Verdict(f"min {f[worst]:.3f} (B={worst}); mean {_mean(list(f.values())):.3f}",
                       f[worst] > lo, f"every buffer > {lo}")

    def c5(q: Lookup) -> Verdict:
        f = fair_over(q, PPD, m4, BUFFERS)
        lo, hi = val("C5", "low"), val("C5", "high")
        above = sum(v > hi for v in f.values())
        return Verdict(f"{above} of {len(f)} buffers > {hi}; min {min(f.values()):.3f}",
                       above > len(f) / 2 and min(f.values()) >= lo,
                       f"most buffers > {hi}, none below {lo}")

    def c6(q: Lookup) -> Verdict:
        f = fair_over(q, UBR, m4, BUFFERS)
        b0, lo = int(val("C6")), val("C6", "low")
        below = {bf: v for bf, v in f.items() if bf < b0}
        above = {bf: v for bf, v in f.items() if bf >= b0}
        return Verdict(f"B < {b0}: min {min(below.values()):.3f}; B >= {b0}: min {min(above.values()):.3f}",
                       min(below.values()) < lo and min(above.values()) > lo,
                       f"some B < {b0} below {lo}, every B >= {b0} above {lo}")

    def c7(q: Lookup) -> Verdict:
        free = q("efficiency", **m4, buffer=LOSS_FREE, **UBR)
        ratios = {name: q("efficiency", **m4, buffer=2176, **p) / free
                  for name, p in (("EPD b=1", EPD(1)), ("PPD", PPD), ("UBR", UBR))}
        pv, tol = val("C7"), val("C7", "tolerance")
        return Verdict(", ".join(f"{k} {v:.3f}" for k, v in ratios.items()) + f" (loss-free {free:.3f})",
                       abs(ratios["EPD b=1"] - pv) <= tol, f"EPD b=1 ratio within {pv} +/- {tol}")

    def c8(claim: str, bf: int) -> Callable[[Lookup], Verdict]:
        def check(q: Lookup) -> Verdict:
            x = q("fer", **m4, buffer=bf, **EPD(1))
            pv, tol = val(claim), val(claim, "tolerance")
            return Verdict(f"{x:.4f} (switch CLR {q('clr', **m4, buffer=bf, **EPD(1)):.4f})", abs(x - pv) <= tol,
                           f"abs(simulated - published) <= {tol}")
        return check

    def c8c(q: Lookup) -> Verdict:
        free = q("efficiency", **m4, buffer=LOSS_FREE, **UBR)
        fer = {bf: q("fer", **m4, buffer=bf, **EPD(1)) for bf in (1088, 2176)}
        eff = {bf: q("efficiency", **m4, buffer=bf, **EPD(1)) for bf in (1088, 2176)}
        ok = all(fer[bf] > 0 and eff[bf] >= free - SIGNIFICANT for bf in fer) and fer[2176] < fer[1088]
        return Verdict(f"EPD b=1: FER {fer[1088]:.4f} -> {fer[2176]:.4f}, efficiency {eff[1088]:.3f} -> "
                       f"{eff[2176]:.3f} (loss-free {free:.3f})", ok,
                       f"FER > 0 and falling, efficiency within {SIGNIFICANT} of loss-free")

    def c9(q: Lookup) -> Verdict:
        e, f = q("efficiency", **m4, buffer=1360, **EPD(1)), q("fairness", **m4, buffer=1360, **EPD(1))
        lo = val("C4", "low")
        return Verdict(f"EPD b=1, B=1360: efficiency {e:.3f}, fairness {f:.3f}", e >= GOOD_FAIRNESS and f > lo,
                       f"efficiency >= {GOOD_FAIRNESS} and fairness > {lo} at 1.25 windows")

    def spread(q: Lookup, bf: int, mtu: dict[str, Any]) -> float:
        xs = [q("efficiency", **mtu, buffer=bf, **p) for p in (UBR, PPD, EPD(1))]
        return max(xs) - min(xs)

    def c10(q: Lookup) -> Verdict:
        hi = max(spread(q, bf, m4) for bf in large)
        lo = max(spread(q, bf, m4) for bf in small)
        return Verdict(f"largest spread of UBR/PPD/EPD b=1: B > 1088 {hi:.3f}, B < 1088 {lo:.3f}",
                       hi <= MARGINAL and lo > MARGINAL, f"<= {MARGINAL} above one window, > {MARGINAL} below")

    def c11(q: Lookup) -> Verdict:
        m = {name: _mean(q.many("efficiency", [{**m9, "buffer": bf, **p} for bf in BUFFERS]))
             for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=1", EPD(1)))}
        return Verdict(", ".join(f"{k} {v:.3f}" for k, v in m.items()) + " (mean over B)",
                       m["EPD b=1"] > m["PPD"] > m["UBR"], "strict order of the means over the buffers")

    def c12(q: Lookup) -> Verdict:
        b0 = int(val("C12"))
        pols = (UBR, PPD, EPD(1))
        low_part = min(q("fairness", **m9, buffer=bf, **p) for bf in BUFFERS if bf <= b0 for p in pols)
        high_f = min(q("fairness", **m9, buffer=bf, **p) for bf in BUFFERS if bf > b0 for p in pols)
        high_e = min(q("efficiency", **m9, buffer=bf, **p) for bf in BUFFERS if bf > b0 for p in pols)
        return Verdict(f"UBR/PPD/EPD b=1: min fairness B <= {b0} {low_part:.3f}; B > {b0} fairness >= "
                       f"{high_f:.3f}, efficiency >= {high_e:.3f}",
                       low_part < GOOD_FAIRNESS <= min(high_f, high_e),
                       f"some B <= {b0} below {GOOD_FAIRNESS}; every B > {b0} at least {GOOD_FAIRNESS} in both")

    def feasible_all(mtu: int) -> list[int]:
        return [bf for bf in BUFFERS if all(Config(mtu=mtu, buffer=bf, **p).feasible for p in POLICIES)]

    def c13(q: Lookup) -> Verdict:
        parts, ok = [], True
        for mtu in (4352, 9180):
            bufs = feasible_all(mtu)
            m = {Config(**p).label: _mean(q.many("efficiency", [{"mtu": mtu, "buffer": bf, **p} for bf in bufs]))
                 for p in POLICIES}
            best = max(m, key=m.__getitem__)
            ok &= best == "EPD b=1"
            parts.append(f"MTU {mtu}: best {best} {m[best]:.3f} (EPD b=1 {m['EPD b=1']:.3f})")
        return Verdict("; ".join(parts), ok, "EPD b=1 has the highest mean over buffers where all five run")

    def c14(q: Lookup) -> Verdict:
        drop = {mtu: _mean([q("efficiency", mtu=mtu, buffer=bf, **EPD(1)) - q("efficiency", mtu=mtu, buffer=bf,
                                                                                **EPD(4)) for bf in (906, 1088)])
                for mtu in (4352, 9180)}
        return Verdict(f"eff(b=1) - eff(b=4), B 906/1088: MTU 4352 {drop[4352]:+.3f}, MTU 9180 {drop[9180]:+.3f}",
                       drop[4352] > 0 and drop[9180] > drop[4352], "positive at both MTUs, larger at 9180")

    def c15(q: Lookup) -> Verdict:
        d = {mtu: q("efficiency", mtu=mtu, buffer=2176, **EPD(4)) - q("efficiency", mtu=mtu, buffer=2176, **EPD(1))
             for mtu in (4352, 9180)}
        return Verdict(f"B=2176 eff(b=4) - eff(b=1): MTU 4352 {d[4352]:+.3f}, MTU 9180 {d[9180]:+.3f}",
                       all(v >= -HARDLY for v in d.values()), f"no loss of more than {HARDLY}")

    def dup(q: Lookup, metric: str, d: int, bufs: Iterable[int] = BUFFERS, p: dict[str, Any] = EPD(1)) -> list[float]:
        return q.many(metric, [{**m9, "buffer": bf, "dupack": d, **p} for bf in bufs])

    def c16(q: Lookup) -> Verdict:
        m = {d: _mean(dup(q, "efficiency", d)) for d in (1, 3, 10)}
        return Verdict("EPD b=1 mean efficiency: " + ", ".join(f"{d}: {v:.3f}" for d, v in m.items()),
                       m[1] > m[3] and m[1] > m[10], "threshold 1 highest")

    def c17(q: Lookup) -> Verdict:
        s = _mean(dup(q, "timeout_share", 3, [bf for bf in BUFFERS if bf <= 725]))
        lg = _mean(dup(q, "timeout_share", 3, [bf for bf in BUFFERS if bf >= 1632]))
        return Verdict(f"EPD b=1, threshold 3: timeouts / (timeouts + fast retransmits) {s:.2f} at B <= 725, "
                       f"{lg:.2f} at B >= 1632", s > lg, "more timeout recoveries with small buffers")

    def c18(q: Lookup) -> Verdict:
        f = {d: dup(q, "fairness", d) for d in (1, 3, 10)}
        e = {d: _mean(dup(q, "efficiency", d)) for d in (1, 10)}
        ok = (_mean(f[1]) >= GOOD_FAIRNESS and min(f[3]) < VERY_LOW_FAIRNESS and _mean(f[10]) >= GOOD_FAIRNESS
              and e[10] < e[1])
        return Verdict(f"EPD b=1 fairness: 1 mean {_mean(f[1]):.3f}; 3 min {min(f[3]):.3f}; 10 mean "
                       f"{_mean(f[10]):.3f} (efficiency {e[10]:.3f} vs {e[1]:.3f} at 1)", ok,
                       f"mean >= {GOOD_FAIRNESS} at 1 and 10, some value < {VERY_LOW_FAIRNESS} at 3, "
                       "efficiency at 10 below 1")

    c2b = {"tcp": "modified", "mtu": 1500}

    def epd_gain(q: Lookup, timer: int) -> dict[int, float]:
        return {bf: max(q("efficiency", **c2b, timer_ms=timer, buffer=bf, **EPD(b)) for b in (1, 2, 4))
                - q("efficiency", **c2b, timer_ms=timer, buffer=bf, **PPD) for bf in CAMPAIGN2_BUFFERS}

    def c20(timer: int) -> Callable[[Lookup], Verdict]:
        def check(q: Lookup) -> Verdict:
            g = epd_gain(q, timer)
            return Verdict("best EPD - PPD: " + ", ".join(f"B={bf} {v:+.3f}" for bf, v in g.items()),
                           all(v <= HARDLY for v in g.values()), f"gain <= {HARDLY} at every buffer")
        return check

    def c21(q: Lookup) -> Verdict:
        bufs = [bf for bf in BUFFERS if bf <= 725]
        g = _mean([q("efficiency", **c2b, timer_ms=20, buffer=bf, **EPD(1))
                   - q("efficiency", **c2b, timer_ms=200, buffer=bf, **EPD(1)) for bf in bufs])
        big = _mean([q("efficiency", **c2b, timer_ms=20, buffer=bf, **EPD(1))
                     - q("efficiency", **c2b, timer_ms=200, buffer=bf, **EPD(1)) for bf in BUFFERS if bf >= 1632])
        return Verdict(f"EPD b=1, 20 ms - 200 ms: {g:+.3f} at B <= 725, {big:+.3f} at B >= 1632",
                       g >= SIGNIFICANT, f"gain >= {SIGNIFICANT} at B <= 725")

    def c23(q: Lookup) -> Verdict:
        ratios = []
        for timer in (200, 20):
            for p in (PPD, EPD(1), EPD(2), EPD(4)):
                idle, fer = (q(m, **c2b, timer_ms=timer, buffer=725, **p) for m in ("idle_cell_ratio", "fer"))
                ratios.append(idle / fer if fer > 0 else math.inf)
        return Verdict(f"idle cell ratio / FER at B=725: {min(ratios):.3g} to {max(ratios):.3g}",
                       min(ratios) >= ORDERS, f"at least {ORDERS:g} for every b and granularity")

    def sim(q: Lookup, metric: str, bf: int, p: dict[str, Any], **kw: Any) -> float:
        return q(metric, buffer=bf, **p, **kw)

    def c24(q: Lookup) -> Verdict:
        g = {bf: max(sim(q, "efficiency", bf, EPD(b)) for b in (1, 2, 3, 4)) - sim(q, "efficiency", bf, PPD)
             for bf in (725, 1088)}
        return Verdict("best EPD - PPD: " + ", ".join(f"B={bf} {v:+.3f}" for bf, v in g.items()),
                       all(v >= SIGNIFICANT for v in g.values()), f"gain >= {SIGNIFICANT} at 725 and 1088")

    def argmax_b(q: Lookup, bf: int, metric: str = "efficiency", **kw: Any) -> tuple[int, list[float]]:
        xs = [sim(q, metric, bf, p, **kw) for p in B_AXIS]
        return max(range(5), key=xs.__getitem__), xs

    def c25(q: Lookup) -> Verdict:
        target = int(val("C25"))
        best = {bf: argmax_b(q, bf) for bf in (725, 1088)}
        return Verdict("; ".join(f"B={bf}: best b={b} (" + " ".join(f"{x:.3f}" for x in xs) + ")"
                                 for bf, (b, xs) in best.items()),
                       all(b == target for b, _ in best.values()), f"efficiency highest at b = {target}, b = 0..4")

    def c26(q: Lookup) -> Verdict:
        b2 = int(val("C26"))
        parts, ok = [], True
        for bf in (725, 1088):
            dead0, dead2 = sim(q, "dead_cell_ratio", bf, PPD), sim(q, "dead_cell_ratio", bf, EPD(b2))
            fer2, fer4 = sim(q, "fer", bf, EPD(b2)), sim(q, "fer", bf, EPD(4))
            clr2 = sim(q, "clr", bf, EPD(b2))
            ok &= dead2 <= NEAR_ZERO * dead0 and fer4 > fer2
            parts.append(f"B={bf}: dead cells b=0 {dead0:.4f} -> b=2 {dead2:.4f}; CLR {clr2:.4f} / FER {fer2:.4f} "
                         f"at b=2; FER b=4 {fer4:.4f}")
        return Verdict("; ".join(parts), ok, f"dead cell ratio at b=2 <= {NEAR_ZERO} x PPD's; FER(b=4) > FER(b=2)")

    def c27(q: Lookup) -> Verdict:
        parts, ok = [], True
        for bf in (725, 1088):
            i = {name: sim(q, "idle_cell_ratio", bf, p)
                 for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=2", EPD(2)))}
            ok &= i["EPD b=2"] < min(i["UBR"], i["PPD"])
            parts.append(f"B={bf}: idle " + ", ".join(f"{k} {v:.3f}" for k, v in i.items()))
        return Verdict("; ".join(parts), ok, "idle cell ratio lower with EPD b=2 than with UBR and PPD")

    def c28(q: Lookup) -> Verdict:
        e = [sim(q, "efficiency", 1088, p, n=16) for p in B_AXIS]
        f = [sim(q, "fairness", 1088, p, n=16) for p in B_AXIS]
        return Verdict(f"efficiency {min(e):.3f}-{max(e):.3f} over b = 0..4; fairness >= {min(f):.3f}",
                       max(e) - min(e) <= MARGINAL and min(f) >= PERFECT_FAIRNESS,
                       f"efficiency spread <= {MARGINAL}; fairness >= {PERFECT_FAIRNESS} for every b")

    def c29(q: Lookup) -> Verdict:
        e = [sim(q, "efficiency", 725, p, n=16) for p in B_AXIS]
        f = [sim(q, "fairness", 725, p, n=16) for p in B_AXIS]
        prod = [x * y for x, y in zip(e, f, strict=True)]
        best = max(range(5), key=prod.__getitem__)
        return Verdict(f"fairness {min(f):.3f}-{max(f):.3f}; efficiency x fairness best at b={best}",
                       min(f) < GOOD_FAIRNESS and best in (0, 4),
                       f"some fairness < {GOOD_FAIRNESS}; efficiency x fairness highest at b = 0 or 4")

    def c30(q: Lookup) -> Verdict:
        parts, ok = [], True
        for bf in (725, 1088):
            xs = [sim(q, "efficiency", bf, p, tcp="modified") for p in B_AXIS]
            ok &= max(xs[1:]) <= xs[0] + HARDLY and xs[4] < xs[1]
            parts.append(f"B={bf}: " + " ".join(f"{x:.3f}" for x in xs))
        return Verdict("; ".join(parts) + " (b = 0..4)", ok,
                       f"no EPD above PPD + {HARDLY}; b=4 below b=1, at 725 and 1088")

    def c31(q: Lookup) -> Verdict:
        parts, ok = [], True
        for bf in (725, 1088):
            mod, dflt = sim(q, "dead_cell_ratio", bf, PPD, tcp="modified"), sim(q, "dead_cell_ratio", bf, PPD)
            ok &= mod <= FEW * dflt
            parts.append(f"B={bf}: {mod:.4f} vs {dflt:.4f}")
        return Verdict("PPD dead cell ratio, modified vs default TCP: " + "; ".join(parts), ok,
                       f"modified at most {FEW} x default")

    def not_run(reason: str) -> Callable[[Lookup], Verdict]:
        return lambda q: Verdict(reason, None, "")

    return {
        "C1": c1, "C2": c2, "C3a": c3("C3a", UBR), "C3b": c3("C3b", PPD), "C3c": c3("C3c", EPD(1)), "C3d": c3d,
        "C4": c4, "C5": c5, "C6": c6, "C7": c7, "C8a": c8("C8a", 1088), "C8b": c8("C8b", 2176), "C8c": c8c,
        "C9": c9, "C10": c10, "C11": c11, "C12": c12, "C13": c13, "C14": c14, "C15": c15, "C16": c16, "C17": c17,
        "C18": c18, "C19": not_run("not run: E4 is run at MTU 9180 only"), "C20": c20(200), "C21": c21,
        "C22": c20(20), "C23": c23, "C24": c24, "C25": c25, "C26": c26, "C27": c27, "C28": c28, "C29": c29,
        "C30": c30, "C31": c31,
    }


def published_text(r: pd.Series) -> str:
    """The published value or bound of a claim, as the study states it."""
    def num(x: Any) -> bool:
        return isinstance(x, int | float) and not math.isnan(x)

    parts = []
    if num(r["value"]):
        tol = f" +/- {r['tolerance']:g}" if num(r["tolerance"]) else ""
        parts.append(f"{r['value']:g}{tol} ({r['unit']})" if isinstance(r["unit"], str) else f"{r['value']:g}{tol}")
    if num(r["low"]) and num(r["high"]):
        parts.append(f"{r['low']:g}-{r['high']:g}")
    elif num(r["low"]):
        parts.append(f"> {r['low']:g}")
    return "; ".join(parts) if parts else "qualitative"


def claims(df: pd.DataFrame) -> pd.DataFrame:
    """The claims table: every claim of ``expert/claims.csv`` with the published
    statement and value, the simulated value and whether the claim holds
    (``None``: not evaluable, e.g. not run with --quick)."""
    ref = reference.table(CLAIMS)
    checks = _claim_checks(ref)
    q = Lookup(df[df["replications"].notna()] if "replications" in df else df)
    out = []
    for _, r in ref.iterrows():
        check = checks.get(r["claim"])
        try:
            v = check(q) if check else Verdict("no check", None)
        except Missing as e:
            v = Verdict(f"not run ({e})", None)
        except ZeroDivisionError:
            v = Verdict("undefined (division by zero)", None)
        out.append({"claim": r["claim"], "experiment": r["experiment"], "section": r["section"],
                    "statement": r["statement"], "published": published_text(r), "simulated": v.simulated,
                    "criterion": v.criterion, "holds": v.holds})
    return pd.DataFrame(out)


# ------------------------------------------------------------------ figures

def figures(df: pd.DataFrame, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = df[df.feasible & df.efficiency.notna()]
    base = ok[(ok.tcp == "default") & (ok.n_sources == 4) & (ok.dupack_threshold == 3)]
    style = {"UBR": ("C0", "o", "-"), "PPD": ("C1", "s", "-"), "EPD b=1": ("C2", "^", "-"),
             "EPD b=2": ("C3", "v", "--"), "EPD b=3": ("C5", "D", "--"), "EPD b=4": ("C4", "D", ":")}
    paths: list[Path] = []

    def save(fig: Any, name: str, note: str) -> None:
        fig.text(0.01, 0.01, note, fontsize=7, color="0.4")
        fig.tight_layout(rect=(0, 0.03, 1, 0.95))
        p = folder / f"{STUDY}_{name}.png"
        fig.savefig(p)
        plt.close(fig)
        paths.append(p)

    def curves(ax: Any, part: pd.DataFrame, metric: str, x: str = "buffer_cells", labels: Iterable[str] = ()) -> None:
        part = part.assign(label=[_label(r) for r in part.itertuples()])
        for label in labels or style:
            g = part[part.label == label].sort_values(x)
            if g.empty:
                continue
            color, marker, ls = style.get(label, ("k", "o", "-"))
            ax.plot(g[x], g[metric], marker=marker, ls=ls, color=color, ms=4, label=label)

    note = "atmlab simulation; mean over replications; published figures are not digitised (the study gives prose only)"
    # Figs 2-4: efficiency against the buffer, both MTUs; the loss-free reference dashed.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110, sharey=True)
    for ax, mtu in zip(axes, (4352, 9180), strict=True):
        part = base[(base.mtu_bytes == mtu) & (base.buffer_cells != LOSS_FREE)]
        curves(ax, part, "efficiency", labels=["UBR", "PPD", "EPD b=1", "EPD b=2", "EPD b=4"])
        free = base[(base.mtu_bytes == mtu) & (base.buffer_cells == LOSS_FREE)]
        if not free.empty:
            ax.axhline(float(free.efficiency.iloc[0]), color="0.5", ls="--", lw=1, label=f"loss-free ({LOSS_FREE})")
        ax.axvline(1088, color="0.8", lw=0.8)
        ax.set_title(f"MTU {mtu} bytes", fontsize=10)
        ax.set_xlabel("switch buffer B (cells)")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("efficiency (goodput / loss-free goodput of the VP)")
    fig.suptitle("002 Figs 2-4: efficiency against the buffer, 4 TCP sources (grey line: one window)", fontsize=10)
    save(fig, "fig2-4_efficiency_vs_buffer", note)

    # Fairness against the buffer (s4.1, not plotted in the study).
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110, sharey=True)
    for ax, mtu in zip(axes, (4352, 9180), strict=True):
        part = base[(base.mtu_bytes == mtu) & (base.buffer_cells != LOSS_FREE)]
        curves(ax, part, "fairness", labels=["UBR", "PPD", "EPD b=1"])
        ax.axhline(0.95, color="0.6", ls=":", lw=1)
        ax.set_title(f"MTU {mtu} bytes", fontsize=10)
        ax.set_xlabel("switch buffer B (cells)")
        ax.set_ylim(0.2, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("fairness (Jain's index per run, averaged)")
    fig.suptitle("002 s4.1: fairness against the buffer, 4 TCP sources (dotted: 0.95)", fontsize=10)
    save(fig, "fairness_vs_buffer", note)

    # Figs 5-6: duplicate-ACK threshold, MTU 9180.
    dup = ok[(ok.tcp == "default") & (ok.n_sources == 4) & (ok.mtu_bytes == 9180) & (ok.buffer_cells != LOSS_FREE)]
    if dup.dupack_threshold.nunique() > 1:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110)
        for ax, metric in zip(axes, ("efficiency", "fairness"), strict=True):
            for k, d in enumerate((1, 3, 10)):
                for pol, ls, alpha in (("EPD", "-", 1.0), ("PPD", ":", 0.6)):
                    g = dup[(dup.dupack_threshold == d) & (dup.policy == pol) & ((dup.b == 1) | (pol != "EPD"))]
                    g = g.sort_values("buffer_cells")
                    if not g.empty:
                        ax.plot(g.buffer_cells, g[metric], marker="o", ms=4, ls=ls, alpha=alpha, color=f"C{k}",
                                label=f"threshold {d}, {'EPD b=1' if pol == 'EPD' else 'PPD'}")
            ax.set_xlabel("switch buffer B (cells)")
            ax.set_ylabel(metric)
            ax.set_ylim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower right")
        fig.suptitle("002 Figs 5-6: duplicate-ACK threshold 1 / 3 / 10, MTU 9180, 4 TCP sources", fontsize=10)
        save(fig, "fig5-6_dupack", note)

    # Figs 11-16: against b (0 = PPD), plain UBR as a marker at b = -1.
    def against_b(ax: Any, part: pd.DataFrame, metric: str, buffers: Iterable[int], prefix: str = "",
                  ls: str = "-") -> None:
        for k, bf in enumerate(buffers):
            g = part[(part.buffer_cells == bf) & part.policy.isin(["PPD", "EPD"])].sort_values("b")
            u = part[(part.buffer_cells == bf) & (part.policy == "UBR")]
            if g.empty:
                continue
            ax.plot(g.b, g[metric], marker="o", ms=4, ls=ls, color=f"C{k}", label=f"{prefix}B = {bf}")
            if not u.empty:
                ax.plot([-1], u[metric], marker="x", ms=7, color=f"C{k}")
        ax.set_xticks(range(-1, 5), ["UBR", "0\nPPD", "1", "2", "3", "4"])
        ax.set_xlabel("normalised excess capacity b (frames)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)

    sim4 = ok[(ok.tcp == "default") & (ok.n_sources == 4) & (ok.mtu_bytes == 4352) & (ok.dupack_threshold == 3)]
    sim16 = ok[(ok.tcp == "default") & (ok.n_sources == 16)]
    mod = ok[(ok.tcp == "modified") & (ok.mtu_bytes == 4352)]
    fig, axes = plt.subplots(2, 3, figsize=(14, 8), dpi=100)
    against_b(axes[0, 0], sim4, "efficiency", SIM_BUFFERS)
    axes[0, 0].set_title("Fig. 11: efficiency, default TCP", fontsize=9)
    against_b(axes[0, 1], sim4, "fer", (725, 1088))
    for k, bf in enumerate((725, 1088)):
        g = sim4[(sim4.buffer_cells == bf) & sim4.policy.isin(["PPD", "EPD"])].sort_values("b")
        axes[0, 1].plot(g.b, g.clr, ls="--", color=f"C{k}", alpha=0.7, label=f"CLR B = {bf}")
    axes[0, 1].legend(fontsize=7)
    axes[0, 1].set_title("Fig. 12: FER at the receivers (solid), CLR at the switch (dashed)", fontsize=9)
    against_b(axes[0, 2], sim4, "dead_cell_ratio", (725, 1088))
    axes[0, 2].set_title("Fig. 13: dead cell ratio, default TCP", fontsize=9)
    against_b(axes[1, 0], sim16, "efficiency", (725, 1088), "efficiency, ")
    against_b(axes[1, 0], sim16, "fairness", (725, 1088), "fairness, ", ls="--")
    axes[1, 0].set_title("Fig. 14: 16 sources, efficiency (solid) and fairness (dashed)", fontsize=9)
    against_b(axes[1, 1], mod, "efficiency", SIM_BUFFERS)
    axes[1, 1].set_title("Fig. 15: efficiency, modified TCP (s5.3)", fontsize=9)
    against_b(axes[1, 2], mod, "dead_cell_ratio", (725, 1088))
    axes[1, 2].set_title("Fig. 16: dead cell ratio, modified TCP", fontsize=9)
    for ax in (axes[0, 0], axes[1, 0], axes[1, 1]):
        ax.set_ylim(0, 1.05)
    fig.suptitle("002 Figs 11-16: simulation, MTU 4352, against b (x: plain UBR)", fontsize=10)
    save(fig, "fig11-16_vs_b", note)

    # Figs 7-10: campaign II.
    c2 = ok[(ok.tcp == "modified") & (ok.mtu_bytes == 1500)]
    if not c2.empty:
        fig, axes = plt.subplots(1, 4, figsize=(17, 4.2), dpi=100)
        for ax, timer in zip(axes[:2], (200, 20), strict=True):
            against_b(ax, c2[c2.timer_ms == timer], "goodput_mbps", CAMPAIGN2_BUFFERS)
            ax.set_ylabel("aggregate goodput (Mbit/s)")
            ax.set_title(f"Fig. {7 if timer == 200 else 9}: goodput, timer {timer} ms", fontsize=9)
        for k, timer in enumerate((200, 20)):
            g = c2[(c2.timer_ms == timer) & (c2.policy == "EPD") & (c2.b == 1)].sort_values("buffer_cells")
            axes[2].plot(g.buffer_cells, g.efficiency, marker="o", ms=4, color=f"C{k}", label=f"{timer} ms")
        axes[2].set_xlabel("switch buffer B (cells)")
        axes[2].set_ylim(0, 1.05)
        axes[2].grid(alpha=0.3)
        axes[2].legend(fontsize=7)
        axes[2].set_title("Fig. 8: efficiency, EPD b=1", fontsize=9)
        for k, timer in enumerate((200, 20)):
            g = c2[(c2.timer_ms == timer) & (c2.buffer_cells == 725) & c2.policy.isin(["PPD", "EPD"])].sort_values("b")
            axes[3].plot(g.b, g.idle_cell_ratio, marker="o", ms=4, color=f"C{k}", label=f"idle, {timer} ms")
            axes[3].plot(g.b, g.fer, marker="s", ms=4, ls="--", color=f"C{k}", label=f"FER, {timer} ms")
        axes[3].set_yscale("log")
        axes[3].set_xlabel("normalised excess capacity b (0 = PPD)")
        axes[3].grid(alpha=0.3)
        axes[3].legend(fontsize=7)
        axes[3].set_title("Fig. 10: idle cell ratio and FER, B = 725", fontsize=9)
        fig.suptitle("002 Figs 7-10: campaign II (modified TCP as Solaris 2.5.1 / Linux 2.0.25), MTU 1500",
                     fontsize=10)
        save(fig, "fig7-10_campaign2", note)
    return paths
