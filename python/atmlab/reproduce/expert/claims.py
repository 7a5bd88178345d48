"""The study's 31 prose claims (C1-C31, 36 rows with their parts), checked on
the points.

The statements, the numbers the study prints and the tolerances are in
``data/reference/expert/claims.csv``. Each claim here says what atmlab
computes (``measure``), the bound it must meet (``threshold``) and where that
bound comes from (``basis``): the study's own number or ordering, or
atmlab's reading of one of its qualitative words, one reading for every
claim (the constants below, fixed before the full run). The five claims that
print a number at one configuration (C3a-c, C8a-b) are also published values
of the kit's comparison (:func:`published`); their claim verdict is the same
tolerance.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ... import reference
from ..kit import Claim, Published, Tolerance
from .configurations import (
    B_AXIS,
    BUFFERS,
    CAMPAIGN2_BUFFERS,
    EPD,
    LOSS_FREE,
    POLICIES,
    PPD,
    UBR,
    Config,
    config_of,
    describe,
)

CLAIMS = "expert/claims"

# How atmlab reads the study's qualitative words (one reading for every claim).
SIGNIFICANT = 0.03  # an efficiency difference that is "significant" / "noticeable"
MARGINAL = 0.03  # a spread that is "marginal" / "saturated" / "robust"
HARDLY = 0.02  # "hardly improves", "ineffective", "improves nothing": a gain of at most this
GOOD_FAIRNESS = 0.9  # s4.1's own "good (index larger than 0.9)"; also "good" efficiency
PERFECT_FAIRNESS = 0.98
VERY_LOW_FAIRNESS = 0.8
ORDERS = 10.0  # "orders of magnitude": at least one
NEAR_ZERO = 0.1  # a dead cell ratio "approaching 0": at most this fraction of PPD's
FEW = 0.5  # "only a few" dead cells: at most half of the default TCP's


def reading(words: str, name: str, value: float) -> str:
    """The basis of a threshold that reads a qualitative word of the study."""
    return f"atmlab's reading of {words}: {name} = {value:g} (one reading for every claim)"


ORDERING = "the study's own ordering (no margin)"

# The claims that print a number at one configuration: published values of the comparison.
PUBLISHED_AT = {
    "C3a": ("efficiency", Config(mtu=4352, buffer=1088, **UBR)),
    "C3b": ("efficiency", Config(mtu=4352, buffer=1088, **PPD)),
    "C3c": ("efficiency", Config(mtu=4352, buffer=1088, **EPD(1))),
    "C8a": ("fer", Config(mtu=4352, buffer=1088, **EPD(1))),
    "C8b": ("fer", Config(mtu=4352, buffer=2176, **EPD(1))),
}
KEY_COLUMNS = ("tcp", "n_sources", "mtu_bytes", "buffer_cells", "policy", "b", "dupack_threshold", "timer_ms")


@functools.cache
def table() -> pd.DataFrame:
    """``claims.csv``, indexed by claim."""
    return reference.table(CLAIMS).set_index("claim", drop=False)


def val(claim: str, col: str = "value") -> float:
    return float(table().loc[claim, col])


def published() -> list[Published]:
    """C3a-c (efficiency at 1088 cells) and C8a-b (frame loss ratio of EPD b=1)."""
    out = []
    for claim, (q, config) in PUBLISHED_AT.items():
        r = table().loc[claim]
        cols = describe(config)
        key = {k: cols[k] for k in KEY_COLUMNS if not _nan(cols[k])}
        out.append(Published(q, float(r["value"]), key, Tolerance.absolute(float(r["tolerance"])), unit=r["unit"],
                             source=f"{claim} (s{r['section']})"))
    return out


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


class Missing(Exception):
    """A configuration a claim needs was not run (--quick) or is infeasible."""


class Lookup:
    """Mean quantities by configuration."""

    def __init__(self, points: pd.DataFrame) -> None:
        self.rows: dict[Config, dict[str, Any]] = {config_of(r): r for r in points.to_dict("records")}

    def row(self, **kw: Any) -> dict[str, Any]:
        c = Config(**kw).canonical()
        r = self.rows.get(c)
        if r is None:
            raise Missing(f"{c.label} B={c.buffer}")
        return r

    def __call__(self, metric: str, **kw: Any) -> float:
        v = self.row(**kw).get(metric)
        if _nan(v):
            c = Config(**kw).canonical()
            raise Missing(f"{c.label} B={c.buffer}")
        return float(v)  # type: ignore[arg-type]

    def many(self, metric: str, items: Iterable[dict[str, Any]]) -> list[float]:
        return [self(metric, **kw) for kw in items]


@dataclass(frozen=True)
class Check:
    """How one claim is checked: what is computed, the bound, where the bound
    comes from, and the evaluation (the value as text, and whether it holds;
    ``None``: the claim is not evaluated)."""

    measure: str
    threshold: str
    basis: str
    evaluate: Callable[[Lookup], tuple[str, bool]] | None
    note: str = ""


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def published_text(claim: str) -> str:
    """The published value or bound of a claim, as the study states it."""
    r = table().loc[claim]

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


def claims(points: pd.DataFrame) -> list[Claim]:
    """Every claim of ``claims.csv``, in its order, evaluated on the points (a
    claim whose configurations were not run has no verdict)."""
    q = Lookup(points)
    checks = _checks()
    out = []
    for r in table().itertuples(index=False):
        check = checks[r.claim]
        where = f"{r.experiment}, s{r.section}; published: {published_text(r.claim)}"
        value: str | None = None
        holds: bool | None = None
        note = check.note
        if check.evaluate is not None:
            try:
                value, holds = check.evaluate(q)
            except Missing as e:
                note = f"not run ({e})"
            except ZeroDivisionError:
                note = "undefined (division by zero)"
        out.append(Claim(r.claim, r.statement, check.measure, check.threshold, value,
                         None if holds is None else bool(holds), check.basis,
                         f"{where}; {note}" if note else where))
    return out


def _checks() -> dict[str, Check]:  # noqa: C901, PLR0915 (one closure per claim, in the study's order)
    """Every claim's check, keyed by claim."""
    small = [bf for bf in BUFFERS if bf < 1088]
    large = [bf for bf in BUFFERS if bf > 1088]
    m4 = {"mtu": 4352}
    m9 = {"mtu": 9180}
    c2b = {"tcp": "modified", "mtu": 1500}
    pub = dict(zip(PUBLISHED_AT, published(), strict=True))
    out: dict[str, Check] = {}

    def check(claim: str, measure: str, threshold: str, basis: str) -> Callable[[Callable[[Lookup], tuple[str, bool]]],
                                                                                  None]:
        def add(f: Callable[[Lookup], tuple[str, bool]]) -> None:
            out[claim] = Check(measure, threshold, basis, f)
        return add

    @check("C1", "MTU 4352: mean efficiency gain of PPD and of EPD b=1 over plain UBR at B < 1088",
           f"mean gain over plain UBR at B < 1088 >= {SIGNIFICANT} for both",
           reading("'significantly improve'", "SIGNIFICANT", SIGNIFICANT))
    def c1(q: Lookup) -> tuple[str, bool]:
        ubr = q.many("efficiency", [{**m4, "buffer": bf, **UBR} for bf in small])
        gains = {name: _mean([x - u for x, u in zip(q.many("efficiency", [{**m4, "buffer": bf, **p} for bf in small]),
                                                     ubr, strict=True)])
                 for name, p in (("PPD", PPD), ("EPD b=1", EPD(1)))}
        return (", ".join(f"{k} {v:+.3f}" for k, v in gains.items()) + " over UBR (mean, B < 1088)",
                all(g >= SIGNIFICANT for g in gains.values()))

    b0 = int(val("C2"))

    @check("C2", f"MTU 4352: spread (max - min) of the efficiency of UBR, PPD and EPD b=1 over B >= {b0}",
           f"each curve varies by <= {MARGINAL} over B >= {b0}",
           f"the study's buffer ({b0} cells); " + reading("'saturate'", "MARGINAL", MARGINAL))
    def c2(q: Lookup) -> tuple[str, bool]:
        spreads = {}
        for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=1", EPD(1))):
            xs = q.many("efficiency", [{**m4, "buffer": bf, **p} for bf in BUFFERS if bf >= b0])
            spreads[name] = max(xs) - min(xs)
        return ("spread over B >= 1088: " + ", ".join(f"{k} {v:.3f}" for k, v in spreads.items()),
                all(s <= MARGINAL for s in spreads.values()))

    for claim in ("C3a", "C3b", "C3c", "C8a", "C8b"):
        _published_check(out, claim, pub[claim])

    @check("C3d", "MTU 4352, B = 1088: mean efficiency of UBR, PPD and EPD b=1", "strict order of the means",
           ORDERING)
    def c3d(q: Lookup) -> tuple[str, bool]:
        u, p, e = (q("efficiency", **m4, buffer=1088, **x) for x in (UBR, PPD, EPD(1)))
        return f"UBR {u:.3f}, PPD {p:.3f}, EPD b=1 {e:.3f}", u < p < e

    def fair_over(q: Lookup, p: dict[str, Any], mtu: dict[str, Any], bufs: Iterable[int]) -> dict[int, float]:
        return {bf: q("fairness", **mtu, buffer=bf, **p) for bf in bufs}

    lo4 = val("C4", "low")

    @check("C4", "EPD b=1, MTU 4352: fairness (Jain's index per run, averaged) at every buffer",
           f"every buffer > {lo4}", f"the study's bound ({lo4})")
    def c4(q: Lookup) -> tuple[str, bool]:
        f = fair_over(q, EPD(1), m4, BUFFERS)
        worst = min(f, key=f.__getitem__)
        return f"min {f[worst]:.3f} (B={worst}); mean {_mean(list(f.values())):.3f}", f[worst] > lo4

    lo5, hi5 = val("C5", "low"), val("C5", "high")

    @check("C5", "PPD, MTU 4352: fairness at every buffer", f"most buffers > {hi5}, none below {lo5}",
           f"the study's bounds ({lo5}, {hi5}); 'usually' read as more than half of the buffers")
    def c5(q: Lookup) -> tuple[str, bool]:
        f = fair_over(q, PPD, m4, BUFFERS)
        above = sum(v > hi5 for v in f.values())
        return (f"{above} of {len(f)} buffers > {hi5}; min {min(f.values()):.3f}",
                above > len(f) / 2 and min(f.values()) >= lo5)

    b6, lo6 = int(val("C6")), val("C6", "low")

    @check("C6", f"plain UBR, MTU 4352: least fairness below and from {b6} cells",
           f"some B < {b6} below {lo6}, every B >= {b6} above {lo6}", f"the study's buffer ({b6}) and bound ({lo6})")
    def c6(q: Lookup) -> tuple[str, bool]:
        f = fair_over(q, UBR, m4, BUFFERS)
        below = {bf: v for bf, v in f.items() if bf < b6}
        above = {bf: v for bf, v in f.items() if bf >= b6}
        return (f"B < {b6}: min {min(below.values()):.3f}; B >= {b6}: min {min(above.values()):.3f}",
                min(below.values()) < lo6 and min(above.values()) > lo6)

    tol7 = Tolerance.absolute(val("C7", "tolerance"))
    pv7 = val("C7")

    @check("C7", f"MTU 4352: efficiency at B = 2176 over the loss-free efficiency (B = {LOSS_FREE}, plain UBR)",
           f"EPD b=1 ratio within {pv7} +/- {tol7.value:g}",
           f"the study's number ({pv7}); tolerance {tol7} (it is quoted to 0.5 %)")
    def c7(q: Lookup) -> tuple[str, bool]:
        free = q("efficiency", **m4, buffer=LOSS_FREE, **UBR)
        ratios = {name: q("efficiency", **m4, buffer=2176, **p) / free
                  for name, p in (("EPD b=1", EPD(1)), ("PPD", PPD), ("UBR", UBR))}
        return (", ".join(f"{k} {v:.3f}" for k, v in ratios.items()) + f" (loss-free {free:.3f})",
                bool(tol7.holds(pv7, ratios["EPD b=1"])))

    @check("C8c", "EPD b=1, MTU 4352, B = 1088 and 2176: FER and efficiency against the loss-free efficiency",
           f"FER > 0 and falling, efficiency within {SIGNIFICANT} of loss-free",
           reading("'near-maximum'", "SIGNIFICANT", SIGNIFICANT))
    def c8c(q: Lookup) -> tuple[str, bool]:
        free = q("efficiency", **m4, buffer=LOSS_FREE, **UBR)
        fer = {bf: q("fer", **m4, buffer=bf, **EPD(1)) for bf in (1088, 2176)}
        eff = {bf: q("efficiency", **m4, buffer=bf, **EPD(1)) for bf in (1088, 2176)}
        ok = all(fer[bf] > 0 and eff[bf] >= free - SIGNIFICANT for bf in fer) and fer[2176] < fer[1088]
        return (f"EPD b=1: FER {fer[1088]:.4f} -> {fer[2176]:.4f}, efficiency {eff[1088]:.3f} -> "
                f"{eff[2176]:.3f} (loss-free {free:.3f})", ok)

    @check("C9", "EPD b=1, MTU 4352, B = 1360 (1.25 windows): efficiency and fairness",
           f"efficiency >= {GOOD_FAIRNESS} and fairness > {lo4} at 1.25 windows",
           f"{reading(repr('good performance'), 'GOOD_FAIRNESS', GOOD_FAIRNESS)}; fairness: C4's bound ({lo4})")
    def c9(q: Lookup) -> tuple[str, bool]:
        e, f = q("efficiency", **m4, buffer=1360, **EPD(1)), q("fairness", **m4, buffer=1360, **EPD(1))
        return f"EPD b=1, B=1360: efficiency {e:.3f}, fairness {f:.3f}", e >= GOOD_FAIRNESS and f > lo4

    def spread(q: Lookup, bf: int, mtu: dict[str, Any]) -> float:
        xs = [q("efficiency", **mtu, buffer=bf, **p) for p in (UBR, PPD, EPD(1))]
        return max(xs) - min(xs)

    @check("C10", "MTU 4352: largest spread of the efficiency of UBR, PPD and EPD b=1 at one buffer, above and "
           "below 1088 cells", f"<= {MARGINAL} above one window, > {MARGINAL} below",
           reading("'only marginal'", "MARGINAL", MARGINAL))
    def c10(q: Lookup) -> tuple[str, bool]:
        hi = max(spread(q, bf, m4) for bf in large)
        lo = max(spread(q, bf, m4) for bf in small)
        return (f"largest spread of UBR/PPD/EPD b=1: B > 1088 {hi:.3f}, B < 1088 {lo:.3f}",
                hi <= MARGINAL and lo > MARGINAL)

    @check("C11", "MTU 9180: mean efficiency over the buffers of UBR, PPD and EPD b=1",
           "strict order of the means over the buffers", ORDERING)
    def c11(q: Lookup) -> tuple[str, bool]:
        m = {name: _mean(q.many("efficiency", [{**m9, "buffer": bf, **p} for bf in BUFFERS]))
             for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=1", EPD(1)))}
        return (", ".join(f"{k} {v:.3f}" for k, v in m.items()) + " (mean over B)",
                m["EPD b=1"] > m["PPD"] > m["UBR"])

    b12 = int(val("C12"))

    @check("C12", f"MTU 9180, UBR/PPD/EPD b=1: least fairness up to {b12} cells; least fairness and efficiency above",
           f"some B <= {b12} below {GOOD_FAIRNESS}; every B > {b12} at least {GOOD_FAIRNESS} in both",
           f"the study's buffer ({b12}); " + reading("'satisfactory' / 'good'", "GOOD_FAIRNESS", GOOD_FAIRNESS)
           + ", s4.1's own 'good'")
    def c12(q: Lookup) -> tuple[str, bool]:
        pols = (UBR, PPD, EPD(1))
        low_part = min(q("fairness", **m9, buffer=bf, **p) for bf in BUFFERS if bf <= b12 for p in pols)
        high_f = min(q("fairness", **m9, buffer=bf, **p) for bf in BUFFERS if bf > b12 for p in pols)
        high_e = min(q("efficiency", **m9, buffer=bf, **p) for bf in BUFFERS if bf > b12 for p in pols)
        return (f"UBR/PPD/EPD b=1: min fairness B <= {b12} {low_part:.3f}; B > {b12} fairness >= "
                f"{high_f:.3f}, efficiency >= {high_e:.3f}", low_part < GOOD_FAIRNESS <= min(high_f, high_e))

    def feasible_all(mtu: int) -> list[int]:
        return [bf for bf in BUFFERS if all(Config(mtu=mtu, buffer=bf, **p).feasible for p in POLICIES)]

    @check("C13", "MTU 4352 and 9180: mean efficiency of UBR, PPD, EPD b=1, 2, 4 over the buffers where all five "
           "run", "EPD b=1 has the highest mean over buffers where all five run", ORDERING)
    def c13(q: Lookup) -> tuple[str, bool]:
        parts, ok = [], True
        for mtu in (4352, 9180):
            bufs = feasible_all(mtu)
            m = {Config(**p).label: _mean(q.many("efficiency", [{"mtu": mtu, "buffer": bf, **p} for bf in bufs]))
                 for p in POLICIES}
            best = max(m, key=m.__getitem__)
            ok &= best == "EPD b=1"
            parts.append(f"MTU {mtu}: best {best} {m[best]:.3f} (EPD b=1 {m['EPD b=1']:.3f})")
        return "; ".join(parts), ok

    @check("C14", "efficiency of EPD b=1 minus that of EPD b=4, mean over B = 906 and 1088, per MTU",
           "positive at both MTUs, larger at 9180", ORDERING)
    def c14(q: Lookup) -> tuple[str, bool]:
        drop = {mtu: _mean([q("efficiency", mtu=mtu, buffer=bf, **EPD(1)) - q("efficiency", mtu=mtu, buffer=bf,
                                                                                **EPD(4)) for bf in (906, 1088)])
                for mtu in (4352, 9180)}
        return (f"eff(b=1) - eff(b=4), B 906/1088: MTU 4352 {drop[4352]:+.3f}, MTU 9180 {drop[9180]:+.3f}",
                drop[4352] > 0 and drop[9180] > drop[4352])

    @check("C15", "B = 2176: efficiency of EPD b=4 minus that of EPD b=1, per MTU", f"no loss of more than {HARDLY}",
           reading("'does not decrease'", "HARDLY", HARDLY))
    def c15(q: Lookup) -> tuple[str, bool]:
        d = {mtu: q("efficiency", mtu=mtu, buffer=2176, **EPD(4)) - q("efficiency", mtu=mtu, buffer=2176, **EPD(1))
             for mtu in (4352, 9180)}
        return (f"B=2176 eff(b=4) - eff(b=1): MTU 4352 {d[4352]:+.3f}, MTU 9180 {d[9180]:+.3f}",
                all(v >= -HARDLY for v in d.values()))

    def dup(q: Lookup, metric: str, d: int, bufs: Iterable[int] = BUFFERS) -> list[float]:
        return q.many(metric, [{**m9, "buffer": bf, "dupack": d, **EPD(1)} for bf in bufs])

    @check("C16", "EPD b=1, MTU 9180: mean efficiency over the buffers per duplicate-ACK threshold",
           "threshold 1 highest", ORDERING)
    def c16(q: Lookup) -> tuple[str, bool]:
        m = {d: _mean(dup(q, "efficiency", d)) for d in (1, 3, 10)}
        return "EPD b=1 mean efficiency: " + ", ".join(f"{d}: {v:.3f}" for d, v in m.items()), m[1] > m[3] and m[1] > m[10]

    @check("C17", "EPD b=1, MTU 9180, threshold 3: timeouts / (timeouts + fast retransmits), B <= 725 and B >= 1632",
           "more timeout recoveries with small buffers", ORDERING)
    def c17(q: Lookup) -> tuple[str, bool]:
        s = _mean(dup(q, "timeout_share", 3, [bf for bf in BUFFERS if bf <= 725]))
        lg = _mean(dup(q, "timeout_share", 3, [bf for bf in BUFFERS if bf >= 1632]))
        return (f"EPD b=1, threshold 3: timeouts / (timeouts + fast retransmits) {s:.2f} at B <= 725, "
                f"{lg:.2f} at B >= 1632", s > lg)

    @check("C18", "EPD b=1, MTU 9180: fairness per threshold (mean, or least at 3); efficiency at 10 and at 1",
           f"mean >= {GOOD_FAIRNESS} at 1 and 10, some value < {VERY_LOW_FAIRNESS} at 3, efficiency at 10 below 1",
           reading("'high' / 'generally good'", "GOOD_FAIRNESS", GOOD_FAIRNESS) + "; "
           + reading("'very low'", "VERY_LOW_FAIRNESS", VERY_LOW_FAIRNESS))
    def c18(q: Lookup) -> tuple[str, bool]:
        f = {d: dup(q, "fairness", d) for d in (1, 3, 10)}
        e = {d: _mean(dup(q, "efficiency", d)) for d in (1, 10)}
        ok = (_mean(f[1]) >= GOOD_FAIRNESS and min(f[3]) < VERY_LOW_FAIRNESS and _mean(f[10]) >= GOOD_FAIRNESS
              and e[10] < e[1])
        return (f"EPD b=1 fairness: 1 mean {_mean(f[1]):.3f}; 3 min {min(f[3]):.3f}; 10 mean "
                f"{_mean(f[10]):.3f} (efficiency {e[10]:.3f} vs {e[1]:.3f} at 1)", ok)

    out["C19"] = Check("the duplicate-ACK thresholds at MTU 4352 (E4 at a smaller MTU)", "none",
                       "none: the claim is not evaluated", None, "not run: E4 is run at MTU 9180 only")

    def epd_gain(q: Lookup, timer: int) -> dict[int, float]:
        return {bf: max(q("efficiency", **c2b, timer_ms=timer, buffer=bf, **EPD(b)) for b in (1, 2, 4))
                - q("efficiency", **c2b, timer_ms=timer, buffer=bf, **PPD) for bf in CAMPAIGN2_BUFFERS}

    for claim, timer, words in (("C20", 200, "'hardly improves'"), ("C22", 20, "'does not improve anything'")):
        @check(claim, f"campaign II, timer {timer} ms: best efficiency of EPD b = 1, 2, 4 minus that of PPD, "
               "per buffer", f"gain <= {HARDLY} at every buffer", reading(words, "HARDLY", HARDLY))
        def c20(q: Lookup, timer: int = timer) -> tuple[str, bool]:
            g = epd_gain(q, timer)
            return ("best EPD - PPD: " + ", ".join(f"B={bf} {v:+.3f}" for bf, v in g.items()),
                    all(v <= HARDLY for v in g.values()))

    def timer_gain(q: Lookup, bufs: Iterable[int]) -> float:
        return _mean([q("efficiency", **c2b, timer_ms=20, buffer=bf, **EPD(1))
                      - q("efficiency", **c2b, timer_ms=200, buffer=bf, **EPD(1)) for bf in bufs])

    @check("C21", "campaign II, EPD b=1: efficiency at 20 ms minus at 200 ms, mean over B <= 725 (and B >= 1632)",
           f"gain >= {SIGNIFICANT} at B <= 725", reading("'noticeable'", "SIGNIFICANT", SIGNIFICANT))
    def c21(q: Lookup) -> tuple[str, bool]:
        g = timer_gain(q, [bf for bf in BUFFERS if bf <= 725])
        big = timer_gain(q, [bf for bf in BUFFERS if bf >= 1632])
        return f"EPD b=1, 20 ms - 200 ms: {g:+.3f} at B <= 725, {big:+.3f} at B >= 1632", g >= SIGNIFICANT

    @check("C23", "campaign II, B = 725: idle cell ratio of the bottleneck over the receivers' FER, PPD and EPD "
           "b = 1, 2, 4, both timers", f"at least {ORDERS:g} for every b and granularity",
           reading("'orders of magnitude'", "ORDERS", ORDERS))
    def c23(q: Lookup) -> tuple[str, bool]:
        ratios = []
        for timer in (200, 20):
            for p in (PPD, EPD(1), EPD(2), EPD(4)):
                idle, fer = (q(m, **c2b, timer_ms=timer, buffer=725, **p) for m in ("idle_cell_ratio", "fer"))
                ratios.append(idle / fer if fer > 0 else math.inf)
        return f"idle cell ratio / FER at B=725: {min(ratios):.3g} to {max(ratios):.3g}", min(ratios) >= ORDERS

    def sim(q: Lookup, metric: str, bf: int, p: dict[str, Any], **kw: Any) -> float:
        return q(metric, buffer=bf, **p, **kw)

    @check("C24", "MTU 4352, 4 sources: best efficiency of EPD b = 1..4 minus that of PPD, B = 725 and 1088",
           f"gain >= {SIGNIFICANT} at 725 and 1088", reading("'benefit'", "SIGNIFICANT", SIGNIFICANT))
    def c24(q: Lookup) -> tuple[str, bool]:
        g = {bf: max(sim(q, "efficiency", bf, EPD(b)) for b in (1, 2, 3, 4)) - sim(q, "efficiency", bf, PPD)
             for bf in (725, 1088)}
        return ("best EPD - PPD: " + ", ".join(f"B={bf} {v:+.3f}" for bf, v in g.items()),
                all(v >= SIGNIFICANT for v in g.values()))

    target = int(val("C25"))

    @check("C25", "MTU 4352, 4 sources, B = 725 and 1088: the b (0..4) of the highest efficiency",
           f"efficiency highest at b = {target}, b = 0..4", f"the study's number (b = {target})")
    def c25(q: Lookup) -> tuple[str, bool]:
        best = {}
        for bf in (725, 1088):
            xs = [sim(q, "efficiency", bf, p) for p in B_AXIS]
            best[bf] = (max(range(5), key=xs.__getitem__), xs)
        return ("; ".join(f"B={bf}: best b={b} (" + " ".join(f"{x:.3f}" for x in xs) + ")"
                          for bf, (b, xs) in best.items()), all(b == target for b, _ in best.values()))

    b2 = int(val("C26"))

    @check("C26", f"MTU 4352, B = 725 and 1088: dead cell ratio at b = 0 and {b2}; CLR and FER at b = {b2}; FER at "
           "b = 4", f"dead cell ratio at b={b2} <= {NEAR_ZERO} x PPD's; FER(b=4) > FER(b={b2})",
           f"the study's number (b = {b2}); " + reading("'approaches 0'", "NEAR_ZERO", NEAR_ZERO))
    def c26(q: Lookup) -> tuple[str, bool]:
        parts, ok = [], True
        for bf in (725, 1088):
            dead0, dead2 = sim(q, "dead_cell_ratio", bf, PPD), sim(q, "dead_cell_ratio", bf, EPD(b2))
            fer2, fer4 = sim(q, "fer", bf, EPD(b2)), sim(q, "fer", bf, EPD(4))
            clr2 = sim(q, "clr", bf, EPD(b2))
            ok &= dead2 <= NEAR_ZERO * dead0 and fer4 > fer2
            parts.append(f"B={bf}: dead cells b=0 {dead0:.4f} -> b=2 {dead2:.4f}; CLR {clr2:.4f} / FER {fer2:.4f} "
                         f"at b=2; FER b=4 {fer4:.4f}")
        return "; ".join(parts), ok

    @check("C27", "MTU 4352, B = 725 and 1088: idle cell ratio of the bottleneck with UBR, PPD and EPD b=2",
           "idle cell ratio lower with EPD b=2 than with UBR and PPD", ORDERING)
    def c27(q: Lookup) -> tuple[str, bool]:
        parts, ok = [], True
        for bf in (725, 1088):
            i = {name: sim(q, "idle_cell_ratio", bf, p) for name, p in (("UBR", UBR), ("PPD", PPD), ("EPD b=2", EPD(2)))}
            ok &= i["EPD b=2"] < min(i["UBR"], i["PPD"])
            parts.append(f"B={bf}: idle " + ", ".join(f"{k} {v:.3f}" for k, v in i.items()))
        return "; ".join(parts), ok

    @check("C28", "16 sources, B = 1088: spread of the efficiency over b = 0..4; least fairness",
           f"efficiency spread <= {MARGINAL}; fairness >= {PERFECT_FAIRNESS} for every b",
           reading("'quite robust'", "MARGINAL", MARGINAL) + "; "
           + reading("'perfect fairness'", "PERFECT_FAIRNESS", PERFECT_FAIRNESS))
    def c28(q: Lookup) -> tuple[str, bool]:
        e = [sim(q, "efficiency", 1088, p, n=16) for p in B_AXIS]
        f = [sim(q, "fairness", 1088, p, n=16) for p in B_AXIS]
        return (f"efficiency {min(e):.3f}-{max(e):.3f} over b = 0..4; fairness >= {min(f):.3f}",
                max(e) - min(e) <= MARGINAL and min(f) >= PERFECT_FAIRNESS)

    @check("C29", "16 sources, B = 725: fairness over b = 0..4; the b of the highest efficiency x fairness",
           f"some fairness < {GOOD_FAIRNESS}; efficiency x fairness highest at b = 0 or 4",
           reading("'rather unfair'", "GOOD_FAIRNESS", GOOD_FAIRNESS) + "; the study's b (0 or 4)")
    def c29(q: Lookup) -> tuple[str, bool]:
        e = [sim(q, "efficiency", 725, p, n=16) for p in B_AXIS]
        f = [sim(q, "fairness", 725, p, n=16) for p in B_AXIS]
        prod = [x * y for x, y in zip(e, f, strict=True)]
        best = max(range(5), key=prod.__getitem__)
        return (f"fairness {min(f):.3f}-{max(f):.3f}; efficiency x fairness best at b={best}",
                min(f) < GOOD_FAIRNESS and best in (0, 4))

    @check("C30", "modified TCP, MTU 4352, B = 725 and 1088: efficiency over b = 0..4",
           f"no EPD above PPD + {HARDLY}; b=4 below b=1, at 725 and 1088", reading("'ineffective'", "HARDLY", HARDLY))
    def c30(q: Lookup) -> tuple[str, bool]:
        parts, ok = [], True
        for bf in (725, 1088):
            xs = [sim(q, "efficiency", bf, p, tcp="modified") for p in B_AXIS]
            ok &= max(xs[1:]) <= xs[0] + HARDLY and xs[4] < xs[1]
            parts.append(f"B={bf}: " + " ".join(f"{x:.3f}" for x in xs))
        return "; ".join(parts) + " (b = 0..4)", ok

    @check("C31", "PPD, MTU 4352, B = 725 and 1088: dead cell ratio of the modified and of the default TCP",
           f"modified at most {FEW} x default", reading("'only a few'", "FEW", FEW))
    def c31(q: Lookup) -> tuple[str, bool]:
        parts, ok = [], True
        for bf in (725, 1088):
            mod, dflt = sim(q, "dead_cell_ratio", bf, PPD, tcp="modified"), sim(q, "dead_cell_ratio", bf, PPD)
            ok &= mod <= FEW * dflt
            parts.append(f"B={bf}: {mod:.4f} vs {dflt:.4f}")
        return "PPD dead cell ratio, modified vs default TCP: " + "; ".join(parts), ok

    return out


def _published_check(out: dict[str, Check], claim: str, p: Published) -> None:
    """A claim that is a published value: the comparison's tolerance decides."""
    q_name, config = PUBLISHED_AT[claim]
    kw = {"n": config.n, "mtu": config.mtu, "buffer": config.buffer, "policy": config.policy, "b": config.b}

    def evaluate(q: Lookup) -> tuple[str, bool]:
        x = q(q_name, **kw)
        if q_name != "efficiency":  # C8: the frame loss ratio, with the switch's CLR beside it
            return f"{x:.4f} (switch CLR {q('clr', **kw):.4f})", bool(p.tolerance.holds(p.value, x))
        row = q.row(**kw)
        ci, n = row["efficiency_ci95"], int(row["replications"])
        ci_txt = f" (95% CI +/- {ci:.3f}, {n} runs)" if ci == ci else f" ({n} run{'s' if n > 1 else ''})"
        return f"{x:.3f}{ci_txt}", bool(p.tolerance.holds(p.value, x))

    out[claim] = Check(f"{q_name} at {config.label}, B = {config.buffer}, MTU {config.mtu} (mean over the runs)",
                       f"abs(simulated - {p.value:g}) <= {p.tolerance.value:g}",
                       f"the study's number ({p.value:g}); tolerance {p.tolerance}: docs/reproductions/expert.md",
                       evaluate)
