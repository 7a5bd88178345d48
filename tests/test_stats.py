"""Replication statistics against textbook values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from atmlab.stats import summarize, summarize_frame, t_halfwidth


def test_t_interval_matches_tables():
    # t(0.975, 1) = 12.706, t(0.975, 9) = 2.262
    assert t_halfwidth(1.0, 2) == pytest.approx(12.706 / math.sqrt(2), rel=1e-4)
    assert t_halfwidth(2.0, 10) == pytest.approx(2.262 * 2 / math.sqrt(10), rel=1e-3)
    assert math.isnan(t_halfwidth(1.0, 1))


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
