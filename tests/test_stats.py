"""Replication statistics against textbook values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from atmlab.stats import summarize, summarize_frame, t_halfwidth, t_quantile


def test_t_interval_matches_tables():
    # t(0.975, 1) = 12.706, t(0.975, 9) = 2.262
    assert t_halfwidth(1.0, 2) == pytest.approx(12.706 / math.sqrt(2), rel=1e-4)
    assert t_halfwidth(2.0, 10) == pytest.approx(2.262 * 2 / math.sqrt(10), rel=1e-3)
    assert math.isnan(t_halfwidth(1.0, 1))


# Student-t quantiles to 17 digits, from Boost.Math's students_t quantile
# through scipy 1.17 (scipy.stats.t.ppf), which atmlab used before mpmath:
# (p, degrees of freedom) -> quantile.
T_QUANTILES = {
    (0.975, 1): 12.706204736174694, (0.975, 2): 4.302652729749462, (0.975, 4): 2.7764451051977934,
    (0.975, 9): 2.262157162798205, (0.975, 29): 2.045229642132703, (0.995, 3): 5.840909309733355,
    (0.95, 5): 2.0150483733330233,
}


@pytest.mark.parametrize(("p", "dof"), sorted(T_QUANTILES))
def test_t_quantile_is_exact_to_double_precision(p, dof):
    assert t_quantile(p, dof) == pytest.approx(T_QUANTILES[p, dof], rel=1e-14)


def test_t_quantile_tends_to_the_normal_and_refuses_what_it_cannot_do():
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.975)
    assert z < t_quantile(0.975, 10**6) < z * (1 + 1e-5)
    qs = [t_quantile(0.975, d) for d in (1, 2, 3, 5, 10, 30, 100)]
    assert qs == sorted(qs, reverse=True)  # a quantile falls as the degrees of freedom grow
    for p, dof in ((0.5, 3), (1.0, 3), (0.975, 0)):
        with pytest.raises(ValueError, match="t_quantile needs"):
            t_quantile(p, dof)


def test_summary_of_known_values():
    s = summarize([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert s.n == 8 and s.mean == 5.0
    assert s.std == pytest.approx(math.sqrt(32 / 7))
    assert s.low < 5.0 < s.high
    assert summarize([]).n == 0
    assert summarize([3.0, float("nan")]).n == 1


def test_frame_summary_groups_by_parameters():
    df = pd.DataFrame({"buffer": ["a", "a", "b", "b"], "eff": [0.5, 0.7, 0.9, 0.9]})
    out = summarize_frame(df, ["buffer"], ["eff"])
    assert list(out.buffer) == ["a", "b"]
    assert list(out.runs) == [2, 2]
    assert out.eff_mean.tolist() == pytest.approx([0.6, 0.9])
    assert out.eff_std.iloc[1] == 0.0
