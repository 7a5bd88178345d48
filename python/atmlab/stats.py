"""Statistics over replications: mean, standard deviation and a Student-t
confidence interval for every metric of a sweep point.

The Student-t quantile is computed exactly (to double precision) with
mpmath: the t distribution function through mpmath's regularized
incomplete beta function, inverted by mpmath's bracketing root finder at 40
significant digits, between the normal quantile and the Cauchy one (the t
quantiles of every degree of freedom lie between them). See
docs/architecture.md, "Dependencies", for why not scipy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

LEVEL = 0.95

# The run-level metrics summarized and plotted by default.
SUMMARY_METRICS = ("efficiency", "fairness", "tcp_goodput_bps", "cell_loss_ratio")


@dataclass(frozen=True)
class Summary:
    """Replications of one metric at one point."""

    n: int
    mean: float
    std: float
    ci: float  # half-width of the confidence interval

    @property
    def low(self) -> float:
        return self.mean - self.ci

    @property
    def high(self) -> float:
        return self.mean + self.ci


def t_halfwidth(std: float, n: int, level: float = LEVEL) -> float:
    """Half-width of the Student-t interval of a mean of `n` values."""
    if n < 2 or math.isnan(std):
        return math.nan
    return t_quantile(0.5 + level / 2, n - 1) * std / math.sqrt(n)


@functools.cache
def t_quantile(p: float, dof: int) -> float:
    """The `p` quantile (0.5 < p < 1) of Student's t distribution with
    `dof` degrees of freedom, exact to double precision."""
    if not 0.5 < p < 1 or dof < 1:
        raise ValueError(f"t_quantile needs 0.5 < p < 1 and dof >= 1, not p={p!r}, dof={dof!r}")
    import mpmath  # imported on first use
    from statistics import NormalDist  # here: statistics imports random, fractions, decimal (start-up)

    with mpmath.workdps(40):
        q, v, half = mpmath.mpf(p), mpmath.mpf(dof), mpmath.mpf(1) / 2

        def cdf_minus_q(t: mpmath.mpf) -> mpmath.mpf:
            return 1 - mpmath.betainc(v / 2, half, 0, v / (v + t * t), regularized=True) / 2 - q

        normal = mpmath.mpf(NormalDist().inv_cdf(p))  # below every t quantile of this p
        cauchy = mpmath.tan(mpmath.pi * (q - half))  # t with 1 degree of freedom: above every other
        return float(mpmath.findroot(cdf_minus_q, (normal * mpmath.mpf("0.999"), cauchy * mpmath.mpf("1.001")),
                                     solver="anderson"))


def summarize(values: Sequence[float], level: float = LEVEL) -> Summary:
    """Mean, sample standard deviation and CI half-width (NaNs ignored)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return Summary(0, math.nan, math.nan, math.nan)
    mean = math.fsum(xs) / n
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else math.nan
    return Summary(n, mean, std, t_halfwidth(std, n, level))


def summarize_frame(runs: pd.DataFrame, by: list[str], metrics: list[str], level: float = LEVEL) -> pd.DataFrame:
    """One row per group of `by` with ``runs`` (the group's size) and, per metric, ``<m>_mean``,
    ``<m>_std``, ``<m>_ci95`` (the half-width)."""
    import pandas as pd

    rows = []
    groups = runs.groupby(by, sort=False, dropna=False) if by else [((), runs)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        row["runs"] = len(group)
        for m in metrics:
            s = summarize(group[m].tolist() if m in group else [], level)
            row[f"{m}_mean"], row[f"{m}_std"], row[f"{m}_ci95"] = s.mean, s.std, s.ci
        rows.append(row)
    return pd.DataFrame(rows)
