"""The max-min oracle (atmlab.maxmin): progressive filling checked on hand
cases, on the max-min tables of the ATM Forum configurations
(docs/models/maxmin.md), on random networks (the bottleneck property of
Bertsekas & Gallager s6.5.2), and on the bundled scenarios/atmf files."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atmlab import _core
from atmlab.maxmin import (CELL_BITS, Link, OracleError, Vc, describe, max_min, parse_rate, parse_time,
                           scenario_max_min)
from atmlab.scenario import bundled_names, load

OC3 = F(149_760_000, CELL_BITS)  # 353,207.55 cells/s


def chain(capacities, groups, target=F(1)):
    """Links L1..Ln of `capacities`; `groups` maps a group to (count, first
    link, last link), 1-based."""
    links = [Link(f"L{k + 1}", F(c), target=target) for k, c in enumerate(capacities)]
    vcs = [Vc(f"{g}{i}", tuple(f"L{k}" for k in range(a, b + 1))) for g, (n, a, b) in groups.items()
           for i in range(n)]
    return links, vcs


def by_group(alloc):
    out: dict[str, set[F]] = {}
    for vc, r in alloc.rates.items():
        out.setdefault(vc.rstrip("0123456789"), set()).add(r)
    assert all(len(v) == 1 for v in out.values()), out
    return {g: v.pop() for g, v in out.items()}


# --- hand-checked cases ------------------------------------------------------

def test_two_vcs_on_one_link_share_it_equally():
    a = max_min([Link("L", F(10))], [Vc("x", ("L",)), Vc("y", ("L",))])
    assert a.rates == {"x": 5, "y": 5}
    assert a.bottleneck == {"x": "L", "y": "L"}
    assert a.saturated("L")


def test_a_source_limited_vc_gives_its_share_away():
    a = max_min([Link("L", F(10))], [Vc("x", ("L",), demand=F(2)), Vc("y", ("L",)), Vc("z", ("L",))])
    assert a.rates == {"x": 2, "y": 4, "z": 4}
    assert a.bottleneck["x"] is None and a.bottleneck["y"] == "L"


def test_a_demand_above_the_share_does_not_bind():
    a = max_min([Link("L", F(10))], [Vc("x", ("L",), demand=F(7)), Vc("y", ("L",))])
    assert a.rates == {"x": 5, "y": 5}


def test_a_vc_on_two_bottlenecks():
    # L1 = 90 (s0, s1), L2 = 45 (s1, s2): s1 and s2 split L2, s0 takes the rest of L1
    # (sim/abr_tests.rs's two-link case).
    a = max_min([Link("L1", F(90)), Link("L2", F(45))],
                [Vc("s0", ("L1",)), Vc("s1", ("L1", "L2")), Vc("s2", ("L2",))])
    assert a.rates == {"s0": F(135, 2), "s1": F(45, 2), "s2": F(45, 2)}
    assert a.bottleneck == {"s0": "L1", "s1": "L2", "s2": "L2"}
    # Both links full, s1 frozen first at L2.
    assert a.saturated("L1") and a.saturated("L2")
    assert a.order[0] == (F(45, 2), ("s1", "s2"))


def test_a_vc_limited_by_two_equal_links_names_the_first_on_its_path():
    a = max_min([Link("L1", F(10)), Link("L2", F(10))], [Vc("x", ("L1", "L2")), Vc("y", ("L1",)),
                                                         Vc("z", ("L2",))])
    assert a.rates == {"x": 5, "y": 5, "z": 5}
    assert a.bottleneck["x"] == "L1"


def test_higher_priority_load_and_the_target_lower_the_capacity():
    # ERICA's target ABR capacity: U x link - CBR/VBR.
    a = max_min([Link("L", F(100), hp_load=F(30), target=F(9, 10))], [Vc("x", ("L",)), Vc("y", ("L",))])
    assert a.rates == {"x": 30, "y": 30}
    assert a.available["L"] == 60
    b = max_min([Link("L", F(100), hp_load=F(120))], [Vc("x", ("L",))])
    assert b.rates == {"x": 0}


def test_no_vc_gets_more_than_a_link_with_no_vcs_left():
    a = max_min([Link("L1", F(10)), Link("idle", F(1))], [Vc("x", ("L1",))])
    assert a.rates == {"x": 10} and a.load["idle"] == 0


def test_a_vc_with_zero_demand_gets_nothing_and_frees_its_share():
    a = max_min([Link("L", F(10))], [Vc("x", ("L",), demand=F(0)), Vc("y", ("L",))])
    assert a.rates == {"x": 0, "y": 10}


def test_rates_in_bits_per_second_are_cells_of_53_bytes():
    a = max_min([Link("L", OC3)], [Vc("x", ("L",)), Vc("y", ("L",))])
    assert a.bps("x") == 74_880_000


@pytest.mark.parametrize("links, vcs, message", [
    ([Link("L", F(1)), Link("L", F(2))], [], "given twice"),
    ([Link("L", F(-1))], [], "negative"),
    ([Link("L", F(1))], [Vc("x", ("M",))], "no link"),
    ([Link("L", F(1))], [Vc("x", ())], "no bound"),
    ([Link("L", F(1))], [Vc("x", ("L",)), Vc("x", ("L",))], "twice"),
    ([Link("L", F(1))], [Vc("x", ("L", "L"))], "twice"),
    ([Link("L", F(1))], [Vc("x", ("L",), demand=F(-1))], "negative"),
])
def test_a_network_the_oracle_cannot_fill_is_an_error(links, vcs, message):
    with pytest.raises(OracleError, match=message):
        max_min(links, vcs)


# --- the tables of docs/models/maxmin.md --------------------------------------

GFC1 = {"A": (3, 1, 3), "B": (3, 2, 4), "C": (3, 3, 3), "D": (6, 1, 1), "E": (6, 4, 4), "F": (2, 2, 2)}
GFC2 = {"A1_": (1, 1, 5), "A2_": (1, 2, 5), "A3_": (1, 3, 5), "B1_": (1, 1, 6), "B2_": (1, 2, 6),
        "B3_": (1, 4, 6), "C": (3, 5, 5), "D": (1, 1, 1), "E": (2, 2, 2), "F": (1, 3, 3), "G": (7, 6, 6),
        "H": (2, 4, 4)}


def test_gfc1_in_simcoes_units():
    a = max_min(*chain([50, 150, 150, 100], GFC1))
    assert by_group(a) == {"A": F(50, 9), "D": F(50, 9), "B": F(100, 9), "E": F(100, 9), "C": F(100, 3),
                           "F": F(50)}
    assert all(a.saturated(f"L{k}") for k in range(1, 5))
    assert [len(vcs) for _, vcs in a.order] == [9, 9, 3, 2]


@pytest.mark.parametrize("u", [F(1), F(95, 100), F(9, 10)])
def test_gfc1_table_in_mbit_s_and_cells_s(u):
    # The table's columns: Mb/s with 150 = 155.52 Mbit/s; cells/s with 150 = 353,207.55 cells/s.
    rel = {"A": F(1, 27), "D": F(1, 27), "B": F(2, 27), "E": F(2, 27), "C": F(2, 9), "F": F(1, 3)}
    mbps = {"A": "5.760 5.472 5.184", "B": "11.520 10.944 10.368", "C": "34.560 32.832 31.104",
            "F": "51.840 49.248 46.656"}
    cells = {"A": "13081.76 12427.67 11773.58", "B": "26163.52 24855.35 23547.17",
             "C": "78490.57 74566.04 70641.51", "F": "117735.85 111849.06 105962.26"}
    col = [F(1), F(95, 100), F(9, 10)].index(u)
    for unit, table, digits in ((F(15552, 100), mbps, 3), (OC3, cells, 2)):
        got = by_group(max_min(*chain([unit / 3, unit, unit, unit * 2 / 3], GFC1, target=u)))
        for g, row in table.items():
            assert got[g] == rel[g] * unit * u
            assert round(float(got[g]), digits) == float(row.split()[col]), (g, u)


def test_gfc2_in_simcoes_units():
    a = max_min(*chain([50, 100, 50, 150, 150, 50], GFC2))
    got = by_group(a)
    want = {"B1_": 5, "B2_": 5, "B3_": 5, "G": 5, "A1_": 10, "A2_": 10, "A3_": 10, "F": 10,
            "C": 35, "D": 35, "E": 35, "H": F(105, 2)}
    assert got == want
    assert all(a.saturated(f"L{k}") for k in range(1, 7))


def test_gfc2_with_the_rates_of_nests_code_gives_other_rates():
    # The disagreement of docs/models/maxmin.md: NeST's code sets 50/150/150/100/100/100.
    got = by_group(max_min(*chain([50, 150, 150, 100, 100, 100], GFC2)))
    assert got["B1_"] == 10 and got["F"] == 95 and got["H"] == F(35, 2)
    assert got["A1_"] == F(35, 3) and got["D"] == F(85, 3) and got["E"] == F(160, 3)


@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_n_sources_share_one_link(n):
    assert set(by_group(max_min(*chain([OC3], {"S": (n, 1, 1)}))).values()) == {OC3 / n}


def test_two_sources_get_the_tables_cells_per_second():
    got = by_group(max_min(*chain([OC3], {"S": (2, 1, 1)})))["S"]
    assert round(float(got), 2) == 176603.77
    assert round(float(got * F(9, 10)), 2) == 158943.40


@pytest.mark.parametrize("u, rest", [(F(1), 70), (F(95, 100), F(6625, 100)), (F(9, 10), F(625, 10))])
def test_three_sources_with_a_source_bottleneck(u, rest):
    links = [Link("L", F(150), target=u)]
    a = max_min(links, [Vc("s1", ("L",), demand=F(10)), Vc("s2", ("L",)), Vc("s3", ("L",))])
    assert a.rates == {"s1": 10, "s2": rest, "s3": rest}


def test_theatre_parking_lot():
    # Four groups enter at successive switches, all leave by the last link.
    a = max_min(*chain([OC3] * 4, {"G1_": (1, 1, 4), "G2_": (1, 2, 4), "G3_": (1, 3, 4), "G4_": (1, 4, 4)}))
    assert set(a.rates.values()) == {OC3 / 4}
    assert round(float(OC3 / 4 * CELL_BITS) / 1e6, 2) == 37.44


@pytest.mark.parametrize("hops", [2, 3, 5, 8])
def test_linear_parking_lot(hops):
    groups = {"LONG": (1, 1, hops), **{f"S{k}_": (1, k, k) for k in range(1, hops + 1)}}
    a = max_min(*chain([OC3] * hops, groups))
    assert set(a.rates.values()) == {OC3 / 2}


def test_upstream():
    a = max_min(*chain([F(1), F(1)], {"A": (15, 1, 1), "B": (1, 1, 2), "C": (2, 2, 2)}))
    got = by_group(a)
    assert got == {"A": F(1, 16), "B": F(1, 16), "C": F(15, 32)}
    assert a.bottleneck["B0"] == "L1"


# --- properties (Bertsekas & Gallager s6.5.2) ----------------------------------

@st.composite
def networks(draw):
    n_links = draw(st.integers(1, 6))
    links = [Link(f"L{k}", F(draw(st.integers(0, 60))), hp_load=F(draw(st.integers(0, 20))),
                  target=F(draw(st.integers(5, 10)), 10)) for k in range(n_links)]
    vcs = []
    for i in range(draw(st.integers(1, 12))):
        first = draw(st.integers(0, n_links - 1))
        last = draw(st.integers(first, n_links - 1))
        demand = draw(st.one_of(st.none(), st.integers(0, 40).map(F)))
        vcs.append(Vc(f"v{i}", tuple(f"L{k}" for k in range(first, last + 1)), demand))
    return links, vcs


@settings(max_examples=400, deadline=None)
@given(networks())
def test_the_allocation_is_feasible_and_every_vc_has_a_bottleneck(net):
    links, vcs = net
    a = max_min(links, vcs)
    on = {link.name: [v for v in vcs if link.name in v.links] for link in links}
    for link in links:
        # Feasible: no link carries more than its available capacity.
        assert sum((a.rates[v.name] for v in on[link.name]), F(0)) <= link.available
    for v in vcs:
        r = a.rates[v.name]
        assert r >= 0
        if v.demand is not None:
            assert r <= v.demand  # never above demand
        # Max-min fair iff every VC is at its demand or has a bottleneck: a
        # saturated link on its path on which no VC has a larger rate.
        bottlenecks = [name for name in v.links
                       if sum((a.rates[w.name] for w in on[name]), F(0)) == a.available[name]
                       and all(a.rates[w.name] <= r for w in on[name])]
        assert r == v.demand or bottlenecks, (v, a.rates)
        if a.bottleneck[v.name] is not None:
            assert a.bottleneck[v.name] in bottlenecks
        else:
            assert r == v.demand


@settings(max_examples=200, deadline=None)
@given(networks())
def test_a_saturated_link_carries_exactly_its_capacity(net):
    links, vcs = net
    a = max_min(links, vcs)
    for name in set(a.bottleneck.values()) - {None}:
        assert a.load[name] == a.available[name]


@settings(max_examples=200, deadline=None)
@given(networks(), st.integers(1, 5))
def test_scaling_every_capacity_and_demand_scales_every_rate(net, k):
    links, vcs = net
    a = max_min(links, vcs)
    b = max_min([Link(x.name, x.capacity * k, x.hp_load * k, x.target) for x in links],
                [Vc(v.name, v.links, None if v.demand is None else v.demand * k) for v in vcs])
    assert {n: r * k for n, r in a.rates.items()} == b.rates


# --- quantities ----------------------------------------------------------------

@pytest.mark.parametrize("text", ["149.76 Mbit/s", "353207.55 cells/s", "49.92 Mbit/s", "1 kbps", "2.5 Gbit/s",
                                  "4717 cells/s", "10 Mbps"])
def test_rates_are_read_as_the_core_reads_them(text):
    unit, value = _core.quantity(text)
    assert unit == "bit/s" and parse_rate(text) == round(value)


def test_times_are_read_exactly():
    assert parse_time("8.1408 ms") == F(81408, 10**7)
    with pytest.raises(OracleError, match="unit"):
        parse_time("5 parsecs")


# --- scenarios -------------------------------------------------------------------

def mbit(a, vc):
    return a.bps(vc) / 10**6


ATMF = [n for n in bundled_names() if n.startswith("atmf/")]


def test_every_configuration_is_bundled():
    assert set(ATMF) == {f"atmf/{n}" for n in ("gfc1", "gfc1_tcp", "gfc2", "parking_lot", "parking_lot_tcp",
                                               "theatre_parking_lot", "upstream", "two_source", "nsource",
                                               "three_source")}


# The tables of docs/models/maxmin.md, as fractions of 150 = 149.76 Mbit/s: the
# files are tied to them here.
TABLES = {
    "atmf/gfc1": {"a": F(1, 27), "d": F(1, 27), "b": F(2, 27), "e": F(2, 27), "c": F(2, 9), "f": F(1, 3)},
    "atmf/gfc1_tcp": {"a": F(1, 27), "d": F(1, 27), "b": F(2, 27), "e": F(2, 27), "c": F(2, 9), "f": F(1, 3)},
    "atmf/gfc2": {"b1": F(1, 30), "b2": F(1, 30), "b3": F(1, 30), "g": F(1, 30), "a1": F(1, 15), "a2": F(1, 15),
                  "a3": F(1, 15), "f": F(1, 15), "c": F(7, 30), "d": F(7, 30), "e": F(7, 30), "h": F(7, 20)},
    "atmf/parking_lot": {"long": F(1, 2), "s": F(1, 2)},
    "atmf/parking_lot_tcp": {"long": F(1, 2), "s": F(1, 2)},
    "atmf/theatre_parking_lot": {"g1_": F(1, 4), "g2_": F(1, 4), "g3_": F(1, 4), "g4_": F(1, 4)},
    "atmf/upstream": {"a": F(1, 16), "b": F(1, 16), "c": F(15, 32)},
    "atmf/two_source": {"s": F(1, 2)},
    "atmf/nsource": {"s": F(1, 5)},
}
GROUP_COUNTS = {"atmf/gfc1": 23, "atmf/gfc1_tcp": 23, "atmf/gfc2": 22, "atmf/parking_lot": 4,
                "atmf/parking_lot_tcp": 4, "atmf/theatre_parking_lot": 4, "atmf/upstream": 18,
                "atmf/two_source": 2, "atmf/nsource": 5}


def group_of(vc: str, groups) -> str:
    for g in sorted(groups, key=len, reverse=True):
        if vc == g or (vc.startswith(g) and vc[len(g):].lstrip("_").isdigit()):
            return g
    raise AssertionError(vc)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_the_oracle_gives_each_bundled_configuration_its_table(name):
    a = scenario_max_min(name)
    assert len(a.rates) == GROUP_COUNTS[name]
    for vc, rate in a.rates.items():
        assert a.bps(vc) == TABLES[name][group_of(vc, TABLES[name])] * 149_760_000, (name, vc)
    # Every link direction the VCs cross and that some VC is bottlenecked on is full.
    for link in set(a.bottleneck.values()) - {None}:
        assert a.saturated(link)


def test_the_three_source_configuration_leaves_the_limited_sources_share_to_the_others():
    a = scenario_max_min("atmf/three_source")
    s0 = F(10**7) * F(32, 31)  # its application's 10 Mbit/s of cells, and one FRM in 32 in-rate cells
    assert a.bps("s0") == s0 and a.bottleneck["s0"] is None
    assert a.bps("s1") == a.bps("s2") == (149_760_000 - s0) / 2
    assert round(float(a.bps("s1")) / 1e6, 3) == 69.719


@pytest.mark.parametrize("name, key, value, group, scale", [
    ("atmf/nsource", "params.n", 8, "s", F(1, 8)),
    ("atmf/upstream", "params.a_vcs", 7, "a", F(1, 8)),
    ("atmf/theatre_parking_lot", "params.per_group", 3, "g4_", F(1, 12)),
])
def test_the_oracle_follows_the_parameters(name, key, value, group, scale):
    a = scenario_max_min(name, overrides=[f"{key}={value}"])
    assert {a.bps(v) for v in a.rates if group_of(v, TABLES[name]) == group} == {scale * 149_760_000}


def test_erica_targets_its_utilisation():
    a = scenario_max_min("atmf/gfc1", overrides=["switches[*].port.abr.algorithm=erica"])
    assert a.bps("f0") == F(9, 10) * F(1, 3) * 149_760_000
    b = scenario_max_min("atmf/two_source", overrides=["switches[*].port.abr.algorithm=erica",
                                                        "switches[*].port.abr.target_utilization=0.95"])
    assert b.bps("s0") == F(95, 100) * 74_880_000


def test_a_fixed_rate_port_caps_every_vc_through_it():
    a = scenario_max_min("atmf/nsource", overrides=["switches[*].port.abr.algorithm=fixed_rate",
                                                    'switches[*].port.abr.er="10 Mbit/s"'])
    assert {a.bps(v) for v in a.rates} == {10**7}
    assert set(a.bottleneck.values()) == {None}


def small(**more):
    """Two ABR VCs over one switch-to-switch link, and what `more` adds."""
    sc = {
        "name": "small", "simulation": {"duration": "10 ms"},
        "hosts": [{"name": n} for n in ("a", "b", "c", "d", "v", "w")],
        "switches": [{"name": "s1", "port": {"buffer": 1000, "abr": {"algorithm": "erica_plus"}}},
                     {"name": "s2", "port": {"buffer": 1000, "abr": {"algorithm": "erica_plus"}}}],
        "links": [{"between": ["s1", "s2"], "rate": "100 Mbit/s", "delay": "1 ms"}]
        + [{"between": [h, "s1"], "rate": "100 Mbit/s", "delay": "1 us"} for h in "acv"]
        + [{"between": ["s2", h], "rate": "100 Mbit/s", "delay": "1 us"} for h in "bdw"],
        "vcs": [{"name": "x", "path": ["a", "s1", "s2", "b"], "category": "abr"},
                {"name": "y", "path": ["c", "s1", "s2", "d"], "category": "abr"}],
        "apps": [{"kind": "tcp_bulk", "name": "tx", "vc": "x"}, {"kind": "tcp_bulk", "name": "ty", "vc": "y"}],
    }
    for key, value in more.items():
        if isinstance(value, list):
            sc[key] = sc.get(key, []) + value
        else:
            sc[key] = value
    return sc


def test_constant_cbr_load_is_taken_from_the_capacity():
    cbr = {"name": "voice", "path": ["v", "s1", "s2", "w"], "category": "cbr", "simplex": True}
    app = {"kind": "udp_cbr", "name": "u", "vc": "voice", "payload": "1000 bytes", "interval": "1 ms"}
    a = scenario_max_min(small(vcs=[cbr], apps=[app]))
    cbr_cells = F(22, 1) / F(1, 1000)  # 1000 + 28 + 8 + 8 bytes: 22 cells a millisecond
    assert a.rates["x"] == a.rates["y"] == (F(10**8, 424) - cbr_cells) / 2
    assert any("voice" in n for n in a.notes)


def test_a_pcr_and_a_host_peak_are_demands():
    sc = small()
    sc["vcs"][0]["abr"] = {"pcr": "20 Mbit/s"}
    sc["hosts"][2]["adapter"] = {"peak": "30 Mbit/s"}
    a = scenario_max_min(sc)
    assert a.bps("x") == 20 * 10**6 and a.bps("y") == 30 * 10**6


@pytest.mark.parametrize("change, key", [
    (lambda s: s["simulation"].update(clock_tolerance_ppm=10), "clock_tolerance_ppm"),
    (lambda s: [sw["port"].pop("abr") for sw in s["switches"]], "runs no ABR controller"),
    (lambda s: s["apps"].__setitem__(0, {"kind": "tcp_bulk", "name": "tx", "vc": "x", "bytes": "1 MB"}),
     "apps\\[0\\]"),
    (lambda s: s["apps"].__setitem__(0, {"kind": "udp_cbr", "name": "tx", "vc": "x", "payload": "60000 bytes",
                                         "interval": "1 ms"}), "fragmented"),
    (lambda s: (s["vcs"].append({"name": "vbr", "path": ["v", "s1", "s2", "w"], "category": "vbr",
                                 "simplex": True}),
                s["apps"].append({"kind": "onoff", "name": "o", "vc": "vbr", "peak": "10 Mbit/s",
                                  "on": "1 ms", "off": "1 ms"})), "no constant load"),
    (lambda s: s["vcs"].append({"name": "back", "path": ["w", "s2", "s1", "v"], "category": "abr"}) or None,
     None),
])
def test_what_the_oracle_cannot_describe_is_an_error_naming_the_key(change, key):
    sc = small()
    change(sc)
    if key is None:  # a VC the other way with no application: fine, it sends nothing
        a = scenario_max_min(sc)
        assert a.rates["back"] == 0
        return
    with pytest.raises(OracleError, match=key) as e:
        scenario_max_min(sc)
    assert "<dict>" in str(e.value)


def test_tcp_acks_against_the_forward_loops_are_an_error():
    sc = small()
    sc["vcs"].append({"name": "back", "path": ["w", "s2", "s1", "v"], "category": "abr"})
    sc["apps"].append({"kind": "tcp_bulk", "name": "tb", "vc": "back"})
    with pytest.raises(OracleError, match="TCP ACKs"):
        scenario_max_min(sc)


@pytest.mark.parametrize("name", ATMF)
def test_every_bundled_configuration_is_described(name):
    net = describe(load(name).data, name)
    assert net.vcs and all(v.links for v in net.vcs)
