"""The classic ABR switch algorithms (EPRCA, APRC, CAPC, the OSU scheme,
Charny's algorithm; docs/models/abr.md) selected as the ATM Forum
configurations select any controller, by the key path
``switches[*].port.abr.algorithm``: each runs the two-source configuration,
reports its own readings, and is known to the max-min oracle; a bad key or
an out-of-range value is an error naming the file and the key."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import atmlab
from atmlab.errors import ScenarioError
from atmlab.maxmin import scenario_max_min

NEW = ["eprca", "aprc", "capc", "osu", "charny"]

# Each algorithm's readings, as the core reports them (abr/control/*.rs).
READINGS = {
    "eprca": ["macr_bps", "fair_share_bps", "efci_marked", "brms_lowered", "brms_ci_set"],
    "capc": ["intervals", "load_factor", "abr_capacity_bps", "high_priority_bps", "fair_share_bps", "brms_lowered",
             "brms_ci_set"],
    "osu": ["intervals", "load_factor", "abr_capacity_bps", "high_priority_bps", "fair_share_bps", "active_vcs",
            "brms_lowered"],
    "charny": ["intervals", "abr_capacity_bps", "high_priority_bps", "fair_share_bps", "active_vcs", "brms_lowered"],
}
READINGS["aprc"] = READINGS["eprca"]


@pytest.mark.parametrize("algorithm", NEW)
def test_each_algorithm_runs_the_two_source_configuration(algorithm):
    overrides = ["simulation.duration=60 ms", f"switches[*].port.abr.algorithm={algorithm}"]
    r = atmlab.run("atmf/two_source", overrides=overrides)
    ports = r.abr_ports
    assert set(ports.algorithm) == {algorithm}
    for name in READINGS[algorithm]:
        assert name in ports.columns, name
    # The first source (the second starts at 300 ms) got its feedback.
    forward = r.abr.loc["s0:forward"]
    assert forward.brms_received > 0 and forward.acr_bps > 0
    assert (r.series.kind == "acr").any()


def test_charny_holds_the_lone_source_to_the_link():
    # Alone on the shared link, s0 is advertised the whole of it (U = 1).
    r = atmlab.run("atmf/two_source", overrides=["simulation.duration=60 ms", "switches[*].port.abr.algorithm=charny"])
    port = r.abr_ports.loc["sw0->sw1"]
    assert port.fair_share_bps == pytest.approx(149.76e6, rel=1e-9)
    assert port.active_vcs == 1


@pytest.mark.parametrize("algorithm, u", [("eprca", 1), ("aprc", 1), ("capc", Fraction(95, 100)),
                                          ("osu", Fraction(9, 10)), ("charny", 1)])
def test_the_oracle_knows_each_algorithms_target(algorithm, u):
    full = scenario_max_min("atmf/two_source")
    target = scenario_max_min("atmf/two_source", overrides=[f"switches[*].port.abr.algorithm={algorithm}"])
    for vc in full.rates:
        assert target.rates[vc] == full.rates[vc] * u
    if algorithm in ("capc", "osu", "charny"):
        half = scenario_max_min("atmf/two_source", overrides=[f"switches[*].port.abr.algorithm={algorithm}",
                                                              "switches[*].port.abr.target_utilization=0.5"])
        assert half.rates["s0"] == full.rates["s0"] / 2


SCENARIO = """
[simulation]
duration = "10 ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
port = {{ buffer = "1000 cells", abr = {abr} }}
[[links]]
between = ["a", "sw"]
rate = "149.76 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "b"]
rate = "149.76 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v"
path = ["a", "sw", "b"]
category = "abr"
[[apps]]
kind = "tcp_bulk"
name = "ftp"
vc = "v"
"""


@pytest.mark.parametrize("abr, key", [
    ('{ algorithm = "eprca", down_pressure_factor = 2 }', "down_pressure_factor"),
    ('{ algorithm = "eprca", growth_cells = 4 }', "growth_cells"),
    ('{ algorithm = "aprc", growth_cells = 0 }', "growth_cells"),
    ('{ algorithm = "capc", decrease_floor = 0 }', "decrease_floor"),
    ('{ algorithm = "capc", interval = "1 ps" }', "interval"),
    ('{ algorithm = "osu", fairness = "kind" }', "fairness"),
    ('{ algorithm = "osu", half_width = 1.5 }', "half_width"),
    ('{ algorithm = "charny", iteration = "three" }', "iteration"),
    ('{ algorithm = "charny", vc_timeout = "0 s" }', "vc_timeout"),
    ('{ algorithm = "charny", colour = 1 }', "colour"),
])
def test_a_bad_key_names_the_file_and_the_key(tmp_path: Path, abr, key):
    f = tmp_path / "bad.toml"
    f.write_text(SCENARIO.format(abr=abr))
    with pytest.raises(ScenarioError) as e:
        atmlab.run(f)
    assert e.value.path == f"switches[0].port.abr.{key}", str(e.value)
    assert "bad.toml" in str(e.value)


def test_a_bad_value_set_on_the_command_line_names_its_key():
    with pytest.raises(ScenarioError) as e:
        atmlab.run("atmf/two_source", overrides=["switches[*].port.abr.algorithm=osu",
                                                 "switches[*].port.abr.target_utilization=1.5"])
    assert e.value.path.startswith("switches[0].port.abr.target_utilization"), str(e.value)
