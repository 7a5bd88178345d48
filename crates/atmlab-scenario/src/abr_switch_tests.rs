//! The keys of EPRCA, APRC, CAPC, the OSU scheme and Charny's algorithm:
//! each algorithm built from TOML and run (two sources sharing one link),
//! every key reaching the core, and every mistake an error naming its key.

use super::*;
use crate::parse_toml;
use atmlab_net::abr::control::eprca::Congestion;
use atmlab_net::sim::RunResult;

/// Two greedy ABR sources s0, s1 -> sw0 -> sw1 -> d0, d1 sharing the
/// link sw0 -> sw1 (149.76 Mbit/s, 1 ms), for `duration`; every switch
/// port runs `abr`.
fn two_sources_for(abr: &str, duration: &str) -> String {
    let mut t = format!(
        r#"
[simulation]
duration = "{duration}"
[[switches]]
name = "sw0"
port = {{ buffer = "100000 cells", abr = {abr} }}
[[switches]]
name = "sw1"
port = {{ buffer = "100000 cells", abr = {abr} }}
[[links]]
between = ["sw0", "sw1"]
rate = "149.76 Mbit/s"
delay = "1 ms"
"#
    );
    for i in 0..2 {
        t += &format!(
            r#"
[[hosts]]
name = "s{i}"
[[hosts]]
name = "d{i}"
[[links]]
between = ["s{i}", "sw0"]
rate = "149.76 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw1", "d{i}"]
rate = "149.76 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v{i}"
path = ["s{i}", "sw0", "sw1", "d{i}"]
category = "abr"
[[apps]]
kind = "udp_cbr"
name = "u{i}"
vc = "v{i}"
payload = "9112 bytes"
interval = "500 us"
[[probes]]
kind = "acr"
vc = "v{i}"
interval = "1 ms"
"#
        );
    }
    t
}

/// [`two_sources_for`] 40 ms.
fn two_sources(abr: &str) -> String {
    two_sources_for(abr, "40 ms")
}

fn run_for(abr: &str, duration: &str) -> RunResult {
    let sc = parse_toml(&two_sources_for(abr, duration)).unwrap_or_else(|e| panic!("{abr}: {e}"));
    sc.build(1, 0).unwrap_or_else(|e| panic!("{abr}: {e}")).run().unwrap()
}

fn run(abr: &str) -> RunResult {
    run_for(abr, "40 ms")
}

/// The error a scenario with this `abr` table gives, when built.
fn error_of(abr: &str) -> ScenarioError {
    match parse_toml(&two_sources(abr)) {
        Err(e) => e,
        Ok(s) => match s.build(1, 0) {
            Err(e) => e,
            Ok(_) => panic!("{abr} was accepted"),
        },
    }
}

/// A reading of port `port` of a run.
fn reading(r: &RunResult, port: &str, name: &str) -> Option<f64> {
    let p = r.abr_ports.iter().find(|p| p.port == port).unwrap();
    p.readings.0.iter().find(|x| x.name == name).and_then(|x| x.value)
}

#[test]
fn test_every_new_algorithm_runs_two_sources_from_toml() {
    for (abr, algorithm) in [
        (r#"{ algorithm = "eprca" }"#, Algorithm::Eprca),
        (r#"{ algorithm = "eprca", queue_threshold = "20 cells", reduction = "fair_share" }"#, Algorithm::Eprca),
        (r#"{ algorithm = "aprc" }"#, Algorithm::Aprc),
        (r#"{ algorithm = "capc" }"#, Algorithm::Capc),
        (r#"{ algorithm = "osu" }"#, Algorithm::Osu),
        (r#"{ algorithm = "osu", fairness = "aggressive" }"#, Algorithm::Osu),
        (r#"{ algorithm = "charny" }"#, Algorithm::Charny),
        (r#"{ algorithm = "charny", iteration = "two_pass", target_utilization = 0.9 }"#, Algorithm::Charny),
    ] {
        let r = run(abr);
        // Both switches' three ports, each reporting its algorithm's readings.
        assert_eq!(r.abr_ports.len(), 6, "{abr}");
        for p in &r.abr_ports {
            assert_eq!(p.algorithm, algorithm.name(), "{abr}");
            let names: Vec<&str> = p.readings.0.iter().map(|x| x.name).collect();
            let expected: Vec<&str> = algorithm.readings().iter().map(|x| x.name).collect();
            assert_eq!(names, expected, "{abr}");
        }
        // Both loops closed; the shared link's port gave feedback.
        let forward: Vec<_> = r.abr.iter().filter(|e| e.name.ends_with(":forward")).collect();
        assert_eq!(forward.len(), 2);
        assert!(forward.iter().all(|e| e.brms_received > 0 && e.acr_bps > 0.0), "{abr}: {forward:?}");
        let written = reading(&r, "sw0->sw1", "brms_lowered").unwrap_or(0.0)
            + reading(&r, "sw0->sw1", "brms_ci_set").unwrap_or(0.0);
        assert!(written > 0.0, "{abr}: the bottleneck wrote no feedback");
    }
}

#[test]
fn test_capc_overreacts_to_the_first_round_trip_then_holds_the_target() {
    // Known behaviour (docs/models/abr.md, "CAPC"): the sources start at
    // PCR, twice the link together; for the first round trip every 100-cell
    // interval halves ERS, which falls near its floor, so the sources
    // nearly stop; ERS then grows by 1 + Rup per idle 1 ms interval and
    // settles where the input is the target, 0.95 x link, shared equally.
    let r = run_for(r#"{ algorithm = "capc" }"#, "300 ms");
    let share = 0.95 * 149.76e6 / 2.0;
    for s in r.series.iter().filter(|s| s.kind == "acr") {
        let low = s.values.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(low < 0.01 * share, "{}: least ACR {low}", s.target);
        let last = *s.values.last().unwrap();
        assert!((last / share - 1.0).abs() < 0.02, "{}: {last} vs {share}", s.target);
    }
    let z = reading(&r, "sw0->sw1", "load_factor").unwrap();
    assert!((z - 1.0).abs() < 0.02, "z {z}");
}

#[test]
fn test_charny_gives_two_equal_sources_half_the_link_each() {
    // With U = 1 the advertised rate of the shared link is half its cell
    // rate as soon as both VCs are in its table; the sources' ACR reach it
    // within a few round trips (2 ms each here).
    let r = run(r#"{ algorithm = "charny" }"#);
    let half = 149.76e6 / 2.0;
    for e in r.abr.iter().filter(|e| e.name.ends_with(":forward")) {
        assert!((e.acr_bps / half - 1.0).abs() < 0.01, "{}: {} vs {half}", e.name, e.acr_bps);
    }
    assert_eq!(reading(&r, "sw0->sw1", "fair_share_bps"), Some(half));
    assert_eq!(reading(&r, "sw0->sw1", "active_vcs"), Some(2.0));
}

/// The controller an `abr` table (as TOML) gives.
fn config(abr: &str) -> ControlConfig {
    let value: toml::Value = toml::from_str(&format!("abr = {abr}")).unwrap();
    let json = serde_json::to_value(&value["abr"]).unwrap();
    let Value::Object(map) = json else { panic!("a table") };
    controller("p", &AbrSwitchSpec(map)).unwrap().unwrap()
}

#[test]
fn test_every_key_reaches_the_core() {
    let ControlConfig::Eprca(p) = config(
        r#"{ algorithm = "eprca", averaging_weight = 0.125, down_pressure_factor = 0.75,
             explicit_reduction_factor = 0.5, major_reduction_factor = 0.125, queue_threshold = "7 cells",
             high_queue_threshold = 70, reduction = "fair_share", explicit_rate = false,
             ci_marking = "congested", efci_marking = true, macr_update = "always" }"#,
    ) else {
        panic!("eprca")
    };
    assert_eq!(p.congestion, Congestion::QueueLength { queue_threshold: 7 });
    assert_eq!(
        (p.averaging_weight, p.down_pressure_factor, p.explicit_reduction_factor, p.major_reduction_factor),
        (0.125, 0.75, 0.5, 0.125)
    );
    assert_eq!(p.high_queue_threshold, 70);
    assert_eq!(p.reduction, Reduction::FairShare);
    assert!(!p.explicit_rate && p.efci_marking);
    assert_eq!((p.ci_marking, p.macr_update), (CiMarking::Congested, MacrUpdate::Always));
    let ControlConfig::Eprca(p) = config(r#"{ algorithm = "aprc", growth_cells = 8 }"#) else { panic!("aprc") };
    assert_eq!(p.congestion, Congestion::QueueGrowth { every: 8 });
    assert_eq!(config(r#"{ algorithm = "aprc" }"#), ControlConfig::Eprca(APRC_DEFAULTS));
    assert_eq!(config(r#"{ algorithm = "eprca" }"#), ControlConfig::Eprca(EPRCA_DEFAULTS));

    let c = config(
        r#"{ algorithm = "capc", target_utilization = 0.9, increase_slope = 0.1, decrease_slope = 0.8,
             increase_cap = 2.0, decrease_floor = 0.25, ci_threshold = "300 cells", interval = "2 ms",
             interval_cells = 0 }"#,
    );
    let expected = CapcParams {
        target_utilization: 0.9,
        increase_slope: 0.1,
        decrease_slope: 0.8,
        increase_cap: 2.0,
        decrease_floor: 0.25,
        ci_threshold: 300,
        interval: AveragingInterval { time: atmlab_engine::Duration::from_ms(2), cells: None },
    };
    assert_eq!(c, ControlConfig::Capc(expected));
    assert_eq!(config(r#"{ algorithm = "capc" }"#), ControlConfig::Capc(CAPC_DEFAULTS));

    let c = config(
        r#"{ algorithm = "osu", target_utilization = 0.8, half_width = 0.2, fairness = "aggressive",
             interval_cells = 100, offered_rate = "ccr" }"#,
    );
    let mut expected = OSU_DEFAULTS;
    (expected.target_utilization, expected.half_width, expected.fairness) = (0.8, 0.2, Fairness::Aggressive);
    expected.offered_rate = OfferedRate::Ccr;
    expected.interval.cells = Some(100);
    assert_eq!(c, ControlConfig::Osu(expected));

    let c = config(
        r#"{ algorithm = "charny", target_utilization = 0.95, iteration = "two_pass", vc_timeout = "1 s",
             interval = "10 ms" }"#,
    );
    let expected = CharnyParams {
        target_utilization: 0.95,
        iteration: Iteration::TwoPass,
        vc_timeout: atmlab_engine::Duration::from_secs(1),
        interval: atmlab_engine::Duration::from_ms(10),
    };
    assert_eq!(c, ControlConfig::Charny(expected));
    assert_eq!(config(r#"{ algorithm = "charny" }"#), ControlConfig::Charny(CHARNY_DEFAULTS));
}

#[test]
fn test_mistakes_name_their_key() {
    let at = "switches[0].port.abr";
    for (abr, key) in [
        // unknown keys, and a sibling's key
        (r#"{ algorithm = "eprca", colour = 1 }"#, "colour"),
        (r#"{ algorithm = "eprca", growth_cells = 8 }"#, "growth_cells"),
        (r#"{ algorithm = "aprc", queue_threshold = 8 }"#, "queue_threshold"),
        (r#"{ algorithm = "capc", half_width = 0.1 }"#, "half_width"),
        (r#"{ algorithm = "osu", t0 = "1 ms" }"#, "t0"),
        (r#"{ algorithm = "charny", interval_cells = 10 }"#, "interval_cells"),
        // values of the wrong kind
        (r#"{ algorithm = "eprca", reduction = "halve" }"#, "reduction"),
        (r#"{ algorithm = "eprca", ci_marking = true }"#, "ci_marking"),
        (r#"{ algorithm = "eprca", queue_threshold = "many" }"#, "queue_threshold"),
        (r#"{ algorithm = "osu", fairness = "kind" }"#, "fairness"),
        (r#"{ algorithm = "osu", offered_rate = "acr" }"#, "offered_rate"),
        (r#"{ algorithm = "charny", iteration = 2 }"#, "iteration"),
        (r#"{ algorithm = "charny", vc_timeout = "soon" }"#, "vc_timeout"),
        // values out of range, found where the port is known
        (r#"{ algorithm = "eprca", averaging_weight = 0 }"#, "averaging_weight"),
        (r#"{ algorithm = "eprca", down_pressure_factor = 1.5 }"#, "down_pressure_factor"),
        (r#"{ algorithm = "eprca", explicit_reduction_factor = -1 }"#, "explicit_reduction_factor"),
        (r#"{ algorithm = "eprca", major_reduction_factor = 2 }"#, "major_reduction_factor"),
        (r#"{ algorithm = "eprca", high_queue_threshold = 10 }"#, "high_queue_threshold"),
        (r#"{ algorithm = "eprca", explicit_rate = false, ci_marking = "off" }"#, "explicit_rate"),
        (r#"{ algorithm = "aprc", growth_cells = 0 }"#, "growth_cells"),
        (r#"{ algorithm = "capc", target_utilization = 1.2 }"#, "target_utilization"),
        (r#"{ algorithm = "capc", increase_slope = 0 }"#, "increase_slope"),
        (r#"{ algorithm = "capc", decrease_slope = -0.5 }"#, "decrease_slope"),
        (r#"{ algorithm = "capc", increase_cap = 0.5 }"#, "increase_cap"),
        (r#"{ algorithm = "capc", decrease_floor = 1.5 }"#, "decrease_floor"),
        (r#"{ algorithm = "capc", interval = "1 ns" }"#, "interval"),
        (r#"{ algorithm = "osu", target_utilization = 0 }"#, "target_utilization"),
        (r#"{ algorithm = "osu", half_width = 1 }"#, "half_width"),
        (r#"{ algorithm = "osu", interval = "0 s" }"#, "interval"),
        (r#"{ algorithm = "charny", target_utilization = 2 }"#, "target_utilization"),
        (r#"{ algorithm = "charny", vc_timeout = "0 s" }"#, "vc_timeout"),
        (r#"{ algorithm = "charny", interval = "1 ps" }"#, "interval"),
    ] {
        let e = error_of(abr);
        assert_eq!(e.path, format!("{at}.{key}"), "{abr}: {e}");
    }
}

/// The two-source scenario with its UDP applications made `app` (TOML
/// keys after `kind`), on VCs of `category`.
fn with_app(app: &str, category: &str) -> Result<RunResult, ScenarioError> {
    let t = two_sources(r#"{ algorithm = "erica" }"#)
        .replace("kind = \"udp_cbr\"", app)
        .replace("payload = \"9112 bytes\"\ninterval = \"500 us\"\n", "")
        .replace("category = \"abr\"", &format!("category = \"{category}\""));
    let sc = parse_toml(&t)?;
    Ok(sc.build(1, 0)?.run().unwrap())
}

#[test]
fn test_persistent_sources_run_from_toml_and_refuse_what_they_cannot_be() {
    let r = with_app(r#"kind = "abr_persistent""#, "abr").unwrap();
    assert_eq!(r.cell_sources.len(), 2);
    for s in &r.cell_sources {
        // ERICA at U = 0.9 shares the link: each sends about 0.45 of it.
        let share = s.cells_sent as f64 * 424.0 / 0.040 / 149.76e6;
        assert!(s.cells_received > 0 && share > 0.3 && share < 1.0, "{s:?}");
    }
    let e = with_app(r#"kind = "abr_persistent""#, "ubr").unwrap_err();
    assert!(e.to_string().contains("apps[0].vc") && e.to_string().contains("ABR VC"), "{e}");
    let e = with_app("kind = \"abr_persistent\"\npeak = \"1 Mbit/s\"", "abr").unwrap_err();
    assert!(e.to_string().contains("apps[0].peak"), "{e}");
    // A cell source on an ABR VC names the kind that sends at its rate.
    let e = with_app("kind = \"onoff\"\npeak = \"1 Mbit/s\"\non = \"1 ms\"\noff = \"1 ms\"", "abr").unwrap_err();
    assert!(e.to_string().contains("abr_persistent"), "{e}");
}
