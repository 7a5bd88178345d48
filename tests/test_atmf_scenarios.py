"""The ATM Forum configurations (scenarios/atmf) run, and ERICA+ on them
against the max-min oracle (atmlab.maxmin; docs/models/maxmin.md, "A first
check").

Tolerance: each VC's ACR, averaged over the second half of a run long
enough to settle, within 2 % of its max-min rate. ERICA+ aims at the whole
capacity (its target ABR capacity is f(Tq) x (link - CBR/VBR), f = 1 with
the queue at T0), so in steady state the rates it gives are the max-min
rates of the full links; what remains is the oscillation of its feedback
(one ER per VC per averaging interval, the max-min band delta, the rates
moving while the queue is drained towards T0), 0.7 % at most on GFC-1 and
0.01 % on the two-source run when this was written. 2 % is the bound the
core's own network tests use for ERICA (sim/abr_tests.rs).
"""

from __future__ import annotations

import pytest

import atmlab
from atmlab.maxmin import scenario_max_min
from atmlab.scenario import bundled_names

TOLERANCE = 0.02


def check(name: str, duration: str):
    overrides = [f"simulation.duration={duration}"]
    result = atmlab.run(name, overrides=overrides)
    oracle = scenario_max_min(name, overrides=overrides)
    series = result.series
    half = series[(series.kind == "acr") & (series.t_s >= result.duration_s / 2)]
    errors = {}
    for vc in oracle.rates:
        acr = half[half.target == f"{vc}:forward"].value
        assert len(acr) > 10, vc
        errors[vc] = acr.mean() / float(oracle.bps(vc)) - 1
    return result, oracle, errors


@pytest.mark.parametrize("name, duration", [("atmf/two_source", "4 s"), ("atmf/gfc1", "4 s")])
def test_erica_plus_reaches_the_max_min_rates(name, duration):
    result, oracle, errors = check(name, duration)
    worst = max(errors, key=lambda vc: abs(errors[vc]))
    assert abs(errors[worst]) < TOLERANCE, (worst, errors)
    # The sources were persistent: each sent at its ACR (what it sent is
    # its mean ACR over the run, less one in-rate cell in Nrm = 32 for its
    # FRMs; the late starter of the two-source run sends for less than the
    # run), and nothing was lost.
    forward = result.abr[result.abr.index.str.endswith(":forward")]
    assert len(forward) == len(oracle.rates)
    sources = result.cell_sources
    assert set(sources.index) == set(oracle.rates)
    for vc in oracle.rates:
        sent = sources.loc[vc, "cells_sent"] / result.duration_s
        at_acr = forward.loc[f"{vc}:forward", "mean_acr_bps"] / 424 * 31 / 32
        assert sent <= at_acr * 1.001 and (sent > 0.98 * at_acr or vc == "s1"), (vc, sent, at_acr)
    assert result.raw["switch_cells_dropped"] == 0


def test_the_check_would_see_a_switch_that_misses_max_min():
    # ERICA with U = 0.9 aims at 90 % of each link: the same comparison
    # against the oracle of full links fails by about 10 %, and passes
    # against the oracle that reads ERICA's target.
    overrides = ["simulation.duration=2 s", "switches[*].port.abr.algorithm=erica"]
    result = atmlab.run("atmf/two_source", overrides=overrides)
    full = scenario_max_min("atmf/two_source")
    target = scenario_max_min("atmf/two_source", overrides=overrides)
    s = result.series
    acr = s[(s.kind == "acr") & (s.target == "s0:forward") & (s.t_s >= 1.0)].value.mean()
    assert abs(acr / float(full.bps("s0")) - 1) > 0.05
    assert abs(acr / float(target.bps("s0")) - 1) < TOLERANCE


@pytest.mark.parametrize("name", [n for n in bundled_names() if n.startswith("atmf/")])
def test_every_configuration_runs_and_probes_every_vc(name):
    result = atmlab.run(name, overrides=["simulation.duration=100 ms"])
    oracle = scenario_max_min(name)
    probed = set(result.series[result.series.kind == "acr"].target)
    assert probed == {f"{vc}:forward" for vc in oracle.rates}
    assert set(result.series[result.series.kind == "abr_queue"].target)
