"""Statistics over replications: mean, standard deviation and a Student-t
confidence interval for every metric of a sweep point."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

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
    return _t_quantile(0.5 + level / 2, n - 1) * std / math.sqrt(n)


@functools.cache
def _t_quantile(p: float, dof: int) -> float:
    from scipy import stats  # imported on first use: it takes most of a second

    return float(stats.t.ppf(p, dof))


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
