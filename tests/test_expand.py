"""Templates and sweep expansion: grid, range, zip, bundles, paths, hashes."""

from __future__ import annotations

import copy

import pytest

import atmlab
from atmlab import expand
from atmlab.expand import points, scenario_hash


def base(two_hosts):
    sc = copy.deepcopy(two_hosts)
    sc["params"] = {"payload": "80 bytes", "n": 1}
    sc["apps"] = [{"repeat": "{n}", "kind": "udp_cbr", "name": "voice{i}", "vc": "v",
                   "payload": "{payload}", "interval": "10 ms"}]
    return sc


def test_no_sweep_is_one_point(two_hosts):
    ps = points("<dict>", two_hosts)
    assert len(ps) == 1 and ps[0].params == {}
    assert ps[0].scenario == {k: v for k, v in two_hosts.items()}


def test_grid_is_the_cross_product_first_key_slowest(two_hosts):
    sc = base(two_hosts)
    sc["sweep"] = {"payload": ["40 bytes", "80 bytes"], "n": [1, 2, 3]}
    ps = points("<dict>", sc)
    assert [(p.params["payload"], p.params["n"]) for p in ps] == [
        ("40 bytes", 1), ("40 bytes", 2), ("40 bytes", 3), ("80 bytes", 1), ("80 bytes", 2), ("80 bytes", 3)]
    assert [len(p.scenario["apps"]) for p in ps] == [1, 2, 3, 1, 2, 3]


def test_range_is_an_incremental_measurement(two_hosts):
    sc = base(two_hosts)
    sc["sweep"] = {"n": {"start": 1, "step": 3, "count": 4}, "payload": {"start": 0.5, "step": 0.25, "count": 3,
                                                                          "unit": "kB"}}
    ps = points("<dict>", sc)
    assert sorted({p.params["n"] for p in ps}) == [1, 4, 7, 10]
    assert sorted({p.params["payload"] for p in ps}) == ["0.5 kB", "0.75 kB", "1.0 kB"]


def test_zip_advances_keys_together(two_hosts):
    sc = base(two_hosts)
    sc["sweep"] = {"zip": {"size": {"payload": ["40 bytes", "80 bytes"], "n": [2, 4]}}}
    ps = points("<dict>", sc)
    assert [p.params for p in ps] == [{"payload": "40 bytes", "n": 2}, {"payload": "80 bytes", "n": 4}]


def test_bundle_copies_an_application_class(two_hosts):
    sc = base(two_hosts)
    sc["params"]["n"] = 4
    data, origins = expand.instantiate("<dict>", sc, {})
    assert [a["name"] for a in data["apps"]] == ["voice0", "voice1", "voice2", "voice3"]
    assert all("repeat" not in a for a in data["apps"])
    assert origins["apps"][3] == (0, 3)
    r = atmlab.run(sc)  # four voice streams on one VC
    assert list(r.udp_flows.index) == ["voice0", "voice1", "voice2", "voice3"]
    assert r.ports.loc["a->sw", "cells_out"] == 4 * 300


def test_typed_and_embedded_references(two_hosts):
    sc = base(two_hosts)
    sc["params"]["ms"] = 10
    sc["apps"][0]["interval"] = "{ms} ms"
    data, _ = expand.instantiate("<dict>", sc, {})
    assert data["apps"][0]["interval"] == "10 ms"
    assert data["apps"][0]["payload"] == "80 bytes"


def test_key_paths_with_wildcards(two_hosts):
    sc = copy.deepcopy(two_hosts)
    sc["sweep"] = {"links[*].delay": ["1 ms", "2 ms"], "switches[0].port.drop_policy.kind": ["tail_drop", "epd"]}
    ps = points("<dict>", sc)
    assert len(ps) == 4
    last = ps[-1].scenario
    assert [link["delay"] for link in last["links"]] == ["2 ms", "2 ms"]
    assert last["switches"][0]["port"]["drop_policy"] == {"kind": "epd"}


def test_hash_is_stable_and_order_independent(two_hosts):
    a = copy.deepcopy(two_hosts)
    b = dict(reversed(list(copy.deepcopy(two_hosts).items())))
    assert scenario_hash(a) == scenario_hash(b)
    a["simulation"]["duration"] = "2 s"
    assert scenario_hash(a) != scenario_hash(b)


def test_hash_is_pinned():
    # SHA-256 of the canonical JSON: changing the form orphans stored results.
    assert scenario_hash({}) == "44136fa355b3678a"
    assert scenario_hash({"c": {"d": "5 us"}, "b": [1, "x"], "a": 1}) == "faec10c9cb84684f"


@pytest.mark.parametrize("mutate, path, words", [
    (lambda s: s.update(sweep={"nope": [1, 2]}), "sweep.nope", "neither a parameter"),
    (lambda s: s.update(sweep={"n": []}), "sweep.n", "empty list"),
    (lambda s: s.update(sweep={"n": {"start": 1, "count": 2}}), "sweep.n", "missing step"),
    (lambda s: s.update(sweep={"n": {"start": 1, "step": 1, "count": 0}}), "sweep.n.count", "from 1 to 10000, not 0"),
    (lambda s: s.update(sweep={"n": {"start": 1, "step": 1, "count": 2**31}}), "sweep.n.count", "from 1 to 10000"),
    (lambda s: s.update(sweep={"n": list(range(1, 101)), "payload": {"start": 1, "step": 1, "count": 101}}), "sweep",
     "10100 points, more than the 10000 a sweep may have"),
    (lambda s: s.update(sweep={"zip": {"g": {"n": [1, 2], "payload": ["1 bytes"]}}}), "sweep.zip.g", "equal length"),
    (lambda s: s["apps"][0].update(payload="{pay}"), "apps[0].payload", "unknown parameter 'pay'"),
    (lambda s: s["apps"][0].update(repeat=-1), "apps[0].repeat", "from 0 to 100000, not -1"),
    (lambda s: s["apps"][0].update(repeat=2**31 - 1), "apps[0].repeat", "from 0 to 100000, not 2147483647"),
    (lambda s: s["links"][0].update(rate="{i} Mbit/s"), "links[0].rate", "only defined in an entry with repeat"),
    (lambda s: s["params"].update(i=3), "params.i", "reserved"),
    (lambda s: s.update(sweep={"links[9].delay": ["1 ms"]}), "sweep.links[9].delay", "no [9]"),
])
def test_template_errors_name_their_key(two_hosts, mutate, path, words):
    sc = base(two_hosts)
    mutate(sc)
    with pytest.raises(atmlab.ScenarioError) as e:
        points("<dict>", sc)
    assert e.value.path == path
    assert words in e.value.message


def test_unused_swept_parameter_is_refused(two_hosts):
    sc = base(two_hosts)
    sc["params"]["unused"] = 1
    sc["sweep"] = {"unused": [1, 2]}
    with pytest.raises(atmlab.ScenarioError, match="same scenario"):
        points("<dict>", sc)


def test_core_errors_point_at_the_written_entry(two_hosts):
    sc = base(two_hosts)
    sc["params"]["n"] = 3
    sc["apps"][0]["interval"] = "0 s"
    with pytest.raises(atmlab.ScenarioError) as e:
        atmlab.validate(sc)
    assert e.value.path == "apps[0].interval (copy i=0)"
