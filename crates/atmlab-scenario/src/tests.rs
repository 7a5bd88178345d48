//! Scenario parsing and validation: every mistake names its key.

use super::*;

const MINIMAL: &str = r#"
[simulation]
duration = "20 ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
port = { buffer = "100 cells" }
[[links]]
between = ["a", "sw"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[links]]
between = ["sw", "b"]
rate = "155.52 Mbit/s"
delay = "5 us"
[[vcs]]
name = "v"
path = ["a", "sw", "b"]
[[apps]]
kind = "tcp_bulk"
name = "ftp"
vc = "v"
"#;

fn error_of(text: &str) -> ScenarioError {
    match parse_toml(text) {
        Err(e) => e,
        Ok(s) => match s.build(1, 0) {
            Err(e) => e,
            Ok(_) => panic!("scenario was accepted"),
        },
    }
}

#[test]
fn test_minimal_scenario_runs() {
    let r = parse_toml(MINIMAL).unwrap().build(1, 0).unwrap().run().unwrap();
    assert!(r.connections[0].bytes_delivered > 0);
    assert_eq!(r.connections[0].mss, 9140, "MSS defaults to MTU 9180 - 40");
    // All links are equally fast: the first on the path is the reference.
    assert_eq!(r.efficiency_basis.unwrap().link, "a->sw");
}

#[test]
fn test_malformed_toml() {
    let e = error_of("[simulation\nduration = 1");
    assert!(e.message.starts_with("malformed TOML"), "{e}");
}

#[test]
fn test_unknown_key_names_its_path() {
    let e = error_of(&MINIMAL.replace("port = { buffer", "port = { bufer"));
    assert_eq!(e.path, "switches[0].port.bufer");
    assert!(e.message.contains("unknown field `bufer`"), "{e}");
}

#[test]
fn test_negative_rate() {
    let e = error_of(&MINIMAL.replacen("155.52 Mbit/s", "-155.52 Mbit/s", 1));
    assert_eq!(e.path, "links[0].rate");
    assert!(e.message.contains("negative"), "{e}");
}

#[test]
fn test_zero_cell_buffer() {
    let e = error_of(&MINIMAL.replace("100 cells", "0 cells"));
    assert_eq!(e.path, "switches[0].port.buffer");
    assert!(e.message.contains("at least 1 cell"), "{e}");
}

#[test]
fn test_vc_through_a_missing_node() {
    let e = error_of(&MINIMAL.replace(r#"path = ["a", "sw", "b"]"#, r#"path = ["a", "sw9", "b"]"#));
    assert_eq!(e.path, "vcs[0].path[1]");
    assert!(e.message.contains("sw9"), "{e}");
}

#[test]
fn test_vc_over_a_missing_link() {
    let text = MINIMAL.replace(r#"path = ["a", "sw", "b"]"#, r#"path = ["a", "b"]"#);
    let e = error_of(&text);
    assert_eq!(e.path, "vcs[0].path");
    assert!(e.message.contains("no link between a and b"), "{e}");
}

#[test]
fn test_missing_units_and_wrong_units() {
    let e = error_of(&MINIMAL.replace(r#"duration = "20 ms""#, "duration = 20"));
    assert_eq!(e.path, "simulation.duration");
    assert!(e.message.contains("no unit"), "{e}");
    let e = error_of(&MINIMAL.replace("100 cells", "100 bytes"));
    assert!(e.message.contains("cells"), "{e}");
}

#[test]
fn test_duplicate_names_and_dangling_references() {
    let e = error_of(&MINIMAL.replace(r#"name = "b""#, r#"name = "a""#));
    assert_eq!(e.path, "hosts[1].name");
    let e = error_of(&MINIMAL.replace(r#"vc = "v""#, r#"vc = "w""#));
    assert_eq!(e.path, "apps[0].vc");
}

#[test]
fn test_epd_threshold_beyond_buffer() {
    let text = MINIMAL.replace(
        r#"port = { buffer = "100 cells" }"#,
        r#"port = { buffer = "100 cells", drop_policy = { kind = "epd", threshold = "200 cells" } }"#,
    );
    let e = error_of(&text);
    assert_eq!(e.path, "switches[0].port.drop_policy.threshold");
}

#[test]
fn test_mss_too_large_for_the_mtu() {
    let text = MINIMAL.replace(r#"vc = "v""#, "vc = \"v\"\ntcp = { mss = 9500 }");
    let e = error_of(&text);
    assert_eq!(e.path, "apps[0].tcp.mss");
    assert!(e.message.contains("MTU"), "{e}");
}

#[test]
fn test_unknown_app_kind_and_policy_kind() {
    let e = error_of(&MINIMAL.replace(r#"kind = "tcp_bulk""#, r#"kind = "ftp""#));
    assert_eq!(e.path, "apps[0].kind");
    let e = error_of(&MINIMAL.replace(r#"vc = "v""#, "vc = \"v\"\npayload = \"80 bytes\""));
    assert_eq!(e.path, "apps[0].payload");
    assert!(e.message.contains("not a key of a tcp_bulk application"), "{e}");
    let text = MINIMAL.replace(
        r#"port = { buffer = "100 cells" }"#,
        r#"port = { buffer = "100 cells", drop_policy = { kind = "red" } }"#,
    );
    let e = error_of(&text);
    assert_eq!(e.path, "switches[0].port.drop_policy.kind");
    assert!(e.message.contains("unknown variant `red`"), "{e}");
    let text = MINIMAL.replace(
        r#"port = { buffer = "100 cells" }"#,
        r#"port = { buffer = "100 cells", drop_policy = { kind = "epd", threshold = "many" } }"#,
    );
    assert_eq!(error_of(&text).path, "switches[0].port.drop_policy.threshold");
}

#[test]
fn test_json_errors_have_no_json_positions() {
    let e = parse_json(r#"{"simulation": {"duration": "1 s", "sed": 3}}"#).unwrap_err();
    assert_eq!(e.path, "simulation.sed");
    assert!(!e.message.contains("line"), "{e}");
}

#[test]
fn test_jitter_draws_from_the_seed() {
    let text = MINIMAL.replace(r#"vc = "v""#, "vc = \"v\"\nstart_jitter = \"5 ms\"");
    let s = parse_toml(&text).unwrap();
    let r1 = s.build(1, 0).unwrap().run().unwrap();
    let r1b = s.build(1, 0).unwrap().run().unwrap();
    let r2 = s.build(2, 0).unwrap().run().unwrap();
    assert_eq!(r1, r1b);
    assert_ne!(r1.connections[0].bytes_delivered, r2.connections[0].bytes_delivered);
}

#[test]
fn test_shipped_scenarios_parse_and_build() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let s = parse_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            s.build(1, 0).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 2, "nsource_lan and nsource_wan are shipped");
}

#[test]
fn test_probes_and_link_loss() {
    let text = format!(
        "{MINIMAL}\n[[probes]]\nkind = \"cwnd\"\napp = \"ftp\"\ninterval = \"1 ms\"\n\
         [[probes]]\nkind = \"queue\"\nport = [\"a\", \"sw\"]\ninterval = \"2 ms\"\n"
    )
    .replace(
        "delay = \"5 us\"\n[[links]]",
        "delay = \"5 us\"\nloss = { kind = \"periodic\", one_in = 100, direction = \"forward\" }\n[[links]]",
    );
    let r = parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap();
    assert_eq!(r.series.len(), 2);
    assert_eq!(r.series[0].name, "cwnd:ftp");
    assert_eq!(r.series[0].t_s.len(), 20);
    assert_eq!(r.series[1].name, "queue:a->sw");
    assert_eq!(r.series[1].t_s.len(), 10);
    assert!(r.link_cells_lost > 0);
    assert_eq!(r.ports.iter().find(|p| p.name == "sw->a").unwrap().lost_on_link, 0, "forward only");
}

#[test]
fn test_probe_and_loss_errors_name_their_keys() {
    let with = |extra: &str| format!("{MINIMAL}\n{extra}");
    let e = error_of(&with("[[probes]]\nkind = \"queue\"\napp = \"ftp\"\ninterval = \"1 ms\""));
    assert_eq!(e.path, "probes[0].app");
    let e = error_of(&with("[[probes]]\nkind = \"cwnd\"\napp = \"nope\"\ninterval = \"1 ms\""));
    assert_eq!(e.path, "probes[0].app");
    let e = error_of(&with("[[probes]]\nkind = \"cwnd\"\napp = \"ftp\"\ninterval = \"1 ps\""));
    assert_eq!(e.path, "probes[0].interval");
    let e = error_of(&MINIMAL.replacen(
        "delay = \"5 us\"",
        "delay = \"5 us\"\nloss = { kind = \"bernoulli\", clr = 1.5 }",
        1,
    ));
    assert_eq!(e.path, "links[0].loss.clr");
}

#[test]
fn test_epd_frame_cells_auto_is_the_largest_frame_through_the_port() {
    use atmlab_net::atm::{DropPolicy, ServiceCategory};
    // 002's MTU*: a full frame of MTU 1500, 4352 and 9180 with LLC/SNAP is
    // 32, 91 and 192 cells ((MTU + 16) / 48, rounded up); the threshold is
    // B - b MTU* (002 s3.2).
    for (mtu, frame) in [(1500, 32), (4352, 91), (9180, 192)] {
        let text = MINIMAL
            .replace("name = \"a\"", &format!("name = \"a\"\nmtu = \"{mtu} bytes\""))
            .replace("name = \"b\"", &format!("name = \"b\"\nmtu = \"{mtu} bytes\""))
            .replace(
                "port = { buffer = \"100 cells\" }",
                "port = { buffer = \"1088 cells\", drop_policy = { kind = \"epd\", excess_frames = 2, frame_cells = \"auto\" } }",
            );
        let sim = parse_toml(&text).unwrap().build(1, 0).unwrap();
        let port = sim.ports().iter().find(|p| p.name == "sw->b").unwrap();
        let DropPolicy::Epd(epd) = *port.drop_policy(ServiceCategory::Ubr) else { panic!("EPD") };
        assert_eq!(epd.threshold, 1088 - 2 * frame, "MTU {mtu}");
    }
    // A port no VC crosses has no frame to take; a threshold below one
    // cell is refused naming the largest frame.
    let with_c = MINIMAL.replacen("[[links]]", "[[hosts]]\nname = \"c\"\n[[links]]\nbetween = [\"sw\", \"c\"]\nrate = \"1 Mbit/s\"\ndelay = \"1 us\"\n[[links]]", 1);
    let auto = |to: &str, b: u32| {
        format!(
            "port = {{ buffer = \"1000 cells\" }}\nport_to.{to} = {{ drop_policy = {{ kind = \"epd\", excess_frames = {b}, frame_cells = \"auto\" }} }}"
        )
    };
    let e = error_of(&with_c.replace("port = { buffer = \"100 cells\" }", &auto("c", 1)));
    assert_eq!(e.path, "switches[0].port_to.c.drop_policy.frame_cells");
    assert!(e.message.contains("needs a VC through the port"), "{}", e.message);
    let e = error_of(&with_c.replace("port = { buffer = \"100 cells\" }", &auto("a", 6)));
    assert_eq!(e.path, "switches[0].port_to.a.drop_policy.excess_frames");
    assert!(e.message.contains("the largest frame here"), "{}", e.message);
}

/// MINIMAL with an ABR VC, ERICA+ on the switch and a video source.
fn abr_scenario() -> String {
    MINIMAL
        .replace(
            "port = { buffer = \"100 cells\" }",
            "port = { buffer = \"100000 cells\", abr = { algorithm = \"erica_plus\" } }",
        )
        .replace("path = [\"a\", \"sw\", \"b\"]", "path = [\"a\", \"sw\", \"b\"]\nabr = {}")
        + r#"
[[vcs]]
name = "vbr"
path = ["a", "sw", "b"]
category = "vbr"
simplex = true
[[apps]]
kind = "piecewise"
name = "video"
vc = "vbr"
sources = 3
rates = { fgn = { mean = "5 Mbit/s", std = "5 Mbit/s", peak = "15 Mbit/s", hurst = 0.8 } }
intervals = { uniform = ["20 ms", "100 ms"] }
frame_cells = 8
[[probes]]
kind = "acr"
vc = "v"
interval = "1 ms"
[[probes]]
kind = "load_factor"
port = ["sw", "b"]
interval = "1 ms"
[[probes]]
kind = "cell_rate"
app = "video"
interval = "5 ms"
"#
}

#[test]
fn test_abr_scenario_runs_its_loops_and_video() {
    let r = parse_toml(&abr_scenario()).unwrap().build(1, 0).unwrap().run().unwrap();
    assert_eq!(r.abr.len(), 2, "one source per direction");
    assert!(r.abr[0].frms_in_rate > 0 && r.abr[0].brms_received > 0, "{:?}", r.abr[0]);
    assert_eq!(r.abr_ports.len(), 2, "both switch ports run ERICA+");
    assert_eq!(r.cell_sources[0].sources, 3);
    assert!(r.cell_sources[0].cells_received > 0);
    assert_eq!(r.series.len(), 3);
    assert_eq!(r.series[0].target, "v:forward");
}

#[test]
fn test_a_fixed_rate_switch_brings_every_source_to_its_rate() {
    // The smallest controller (abr/control/fixed.rs): every BRM's ER lowered
    // to 20 Mbit/s, so each direction's ACR ends there, and the port
    // reports its own readings (no ERICA fields).
    let sc = abr_scenario()
        .replace("abr = { algorithm = \"erica_plus\" }", "abr = { algorithm = \"fixed_rate\", er = \"20 Mbit/s\" }")
        .replace("kind = \"load_factor\"\nport = [\"sw\", \"b\"]", "kind = \"queue\"\nport = [\"sw\", \"b\"]");
    let r = parse_toml(&sc).unwrap().build(1, 0).unwrap().run().unwrap();
    for a in &r.abr {
        assert!((a.acr_bps - 20e6).abs() < 1e3, "{}: ACR {}", a.name, a.acr_bps);
    }
    let p = &r.abr_ports[0];
    assert_eq!(p.algorithm, "fixed_rate");
    let names: Vec<&str> = p.readings.0.iter().map(|r| r.name).collect();
    assert_eq!(names, ["er_bps", "brms_lowered"]);
    assert!(p.readings.0[1].value > Some(0.0));
    let json = serde_json::to_value(&r.abr_ports[0]).unwrap();
    assert_eq!(json["er_bps"], serde_json::json!(20e6));
    assert!(json.get("load_factor").is_none());
}

#[test]
fn test_a_probe_of_a_reading_needs_a_controller_that_reports_it() {
    let sc = abr_scenario()
        .replace("abr = { algorithm = \"erica_plus\" }", "abr = { algorithm = \"efci\", threshold = \"10 cells\" }");
    let e = error_of(&sc);
    assert_eq!(e.path, "probes[1].port");
    assert!(e.message.contains("load_factor") && e.message.contains("efci"), "{e}");
}

#[test]
fn test_video_rates_are_the_same_for_the_same_seed_and_differ_for_another() {
    let received = |seed| {
        parse_toml(&abr_scenario()).unwrap().build(seed, 0).unwrap().run().unwrap().cell_sources[0].cells_received
    };
    assert_eq!(received(1), received(1));
    assert_ne!(received(1), received(2));
}

#[test]
fn test_abr_mistakes_name_their_keys() {
    let base = abr_scenario();
    let cases = [
        ("abr = {}", "abr = { nrm = 1 }", "vcs[0].abr.nrm"),
        ("abr = {}", "abr = { icr = \"200 Mbit/s\" }", "vcs[0].abr.icr"),
        ("abr = {}", "abr = { pcr = \"1 Gbit/s\" }", "vcs[0].abr.pcr"),
        ("abr = {}", "abr = {}\ncategory = \"ubr\"", "vcs[0].category"),
        ("algorithm = \"erica_plus\" }", "algorithm = \"erica\", t0 = \"1 ms\" }", "switches[0].port.abr.t0"),
        ("algorithm = \"erica_plus\" }", "algorithm = \"efci\" }", "switches[0].port.abr.threshold"),
        ("algorithm = \"erica_plus\" }", "algorithm = \"erica_plus\", qdlf = 2.0 }", "switches[0].port.abr.qdlf"),
        (
            "algorithm = \"erica_plus\" }",
            "algorithm = \"erica_plus\", interval = \"0 s\" }",
            "switches[0].port.abr.interval",
        ),
        ("algorithm = \"erica_plus\" }", "algorithm = \"erica_plus\", colour = 1 }", "switches[0].port.abr.colour"),
        (
            "algorithm = \"erica_plus\" }",
            "algorithm = \"erica_plus\", target_utilization = 0.9 }",
            "switches[0].port.abr.target_utilization",
        ),
        ("algorithm = \"erica_plus\" }", "algorithm = \"phantom\" }", "switches[0].port.abr.algorithm"),
        ("algorithm = \"erica_plus\" }", "algorithm = 3 }", "switches[0].port.abr.algorithm"),
        ("algorithm = \"erica_plus\" }", "algorithm = \"fixed_rate\" }", "switches[0].port.abr.er"),
        ("algorithm = \"erica_plus\" }", "algorithm = \"fixed_rate\", er = \"fast\" }", "switches[0].port.abr.er"),
        (
            "algorithm = \"erica_plus\" }",
            "algorithm = \"efci\", threshold = \"5 cells\", t0 = \"1 ms\" }",
            "switches[0].port.abr.t0",
        ),
        ("algorithm = \"erica_plus\" }", "algorithm = \"none\", t0 = \"1 ms\" }", "switches[0].port.abr.t0"),
        (
            "algorithm = \"erica_plus\" }",
            "algorithm = \"erica_plus\", load_averaging = { method = \"median\", alpha = 0.5 } }",
            "switches[0].port.abr.load_averaging.method",
        ),
        ("hurst = 0.8", "hurst = 1.2", "apps[1].rates.fgn.hurst"),
        ("hurst = 0.8", "hurst = 0.8, length = 3", "apps[1].rates.fgn.length"),
        ("sources = 3", "sources = 0", "apps[1].sources"),
        ("[\"20 ms\", \"100 ms\"]", "[\"200 ms\", \"100 ms\"]", "apps[1].intervals.uniform"),
        ("frame_cells = 8", "frame_cells = 0", "apps[1].frame_cells"),
        ("frame_cells = 8", "frame_cells = 8\nperiod = \"1 s\"", "apps[1].period"),
        ("vc = \"v\"\ninterval = \"1 ms\"", "vc = \"vbr\"\ninterval = \"1 ms\"", "probes[0].vc"),
        ("port = [\"sw\", \"b\"]", "port = [\"b\", \"sw\"]", "probes[1].port"),
        ("app = \"video\"", "app = \"ftp\"", "probes[2].app"),
    ];
    for (from, to, path) in cases {
        assert!(base.contains(from), "{from}");
        let e = error_of(&base.replacen(from, to, 1));
        assert_eq!(e.path, path, "{to}: {e}");
    }
    // A block too short for the run: 20 s holds up to 1001 intervals.
    let long = base.replacen("duration = \"20 ms\"", "duration = \"20 s\"", 1);
    let e = error_of(&long.replacen("hurst = 0.8", "hurst = 0.8, length = 64", 1));
    assert_eq!(e.path, "apps[1].rates.fgn.length", "{e}");
    assert!(e.message.contains("1001 intervals"), "{e}");
}

#[test]
fn test_fgn_blocks_beyond_the_runs_budget_are_refused_before_any_is_generated() {
    // 3 sources of 2^23 values hold 3 x 2^23 values, over the run's 2^24:
    // refused at once, naming the
    // sources' FGN table, not after generating two blocks (a fuzz case with
    // 1 ns intervals once spent 8 s building, then as long again to run).
    let base = abr_scenario();
    let huge = base.replacen("hurst = 0.8", "hurst = 0.8, length = 8388608", 1);
    let e = error_of(&huge);
    assert_eq!(e.path, "apps[1].rates.fgn", "{e}");
    // "3 sources": refused at the first source, before generating any block.
    assert!(e.message.contains("3 sources of 8388608"), "{e}");
    // Two of them fit.
    let two = huge.replacen("sources = 3", "sources = 2", 1);
    assert!(parse_toml(&two).unwrap().build(1, 0).is_ok());
}

#[test]
fn test_a_source_stopped_from_the_start_sends_its_first_out_of_rate_frm_when_it_has_data() {
    // TBE / FRTT = 1 cell / 16.8 s puts ICR (rule 1) below TCR: the source is
    // stopped from t = 0 with an out-of-rate FRM due at 0. The TCP starting
    // at 5 ms must not schedule that FRM in the past (found by the fuzz: the
    // clock went back and a SYN-ACK "arrived" before its SYN was sent).
    let text = abr_scenario().replacen("abr = {}", "abr = { tbe = \"1 cells\", frtt = \"16.777215 s\" }", 1).replacen(
        "kind = \"tcp_bulk\"",
        "kind = \"tcp_bulk\"\nstart = \"5 ms\"",
        1,
    );
    assert!(text.contains("start = \"5 ms\"") && text.contains("frtt"));
    let r = parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap();
    let fwd = &r.abr[0];
    assert!(fwd.frms_out_of_rate > 0, "{fwd:?}");
}

/// MINIMAL with `loss` on the link sw -> b.
fn with_receiver_link_loss(loss: &str) -> String {
    let text = MINIMAL.replace("delay = \"5 us\"\n[[vcs]]", &format!("delay = \"5 us\"\nloss = {loss}\n[[vcs]]"));
    assert_ne!(text, MINIMAL);
    text
}

#[test]
fn test_frames_loss_loses_exactly_the_chosen_frames() {
    // TCP: frame 1 on sw -> b is the SYN, frame 12 the 11th data segment;
    // it is lost whole (192 cells of a 9140-byte segment) and
    // retransmitted once; the ACKs (backward) lose nothing.
    let text = with_receiver_link_loss("{ kind = \"frames\", frames = [12], direction = \"forward\" }");
    let r = parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap();
    let port = |name: &str| r.ports.iter().find(|p| p.name == name).unwrap();
    assert_eq!(port("sw->b").lost_on_link, 192);
    assert_eq!(port("b->sw").lost_on_link, 0);
    assert_eq!(r.link_cells_lost, 192);
    let c = &r.connections[0];
    assert_eq!((c.retransmitted_segments, c.fast_retransmits, c.timeouts), (1, 1, 0));
    // UDP: datagrams 3 and 7 of 20 are lost, the other 18 delivered.
    let udp = MINIMAL.replace(
        "kind = \"tcp_bulk\"\nname = \"ftp\"\nvc = \"v\"",
        "kind = \"udp_cbr\"\nname = \"cbr\"\nvc = \"v\"\npayload = \"1000 bytes\"\ninterval = \"100 us\"\ncount = 20",
    );
    let udp = udp.replace(
        "delay = \"5 us\"\n[[vcs]]",
        "delay = \"5 us\"\nloss = { kind = \"frames\", frames = [3, 7] }\n[[vcs]]",
    );
    let r = parse_toml(&udp).unwrap().build(1, 0).unwrap().run().unwrap();
    let f = &r.udp_flows[0];
    assert_eq!((f.sent, f.received, f.lost), (20, 18, 2));
    assert_eq!(r.link_cells_lost, 2 * 22, "1000 + 8 + 20 + 8 bytes + trailer: 22 cells each");
}

#[test]
fn test_frames_loss_errors_name_their_keys() {
    let path_of = |loss: &str| {
        let e = error_of(&with_receiver_link_loss(loss));
        assert!(!e.message.is_empty());
        (e.path, e.message)
    };
    let (p, m) = path_of("{ kind = \"frames\", frames = 3 }");
    assert_eq!(p, "links[1].loss.frames", "not a list: {m}");
    let (p, m) = path_of("{ kind = \"frames\", frames = [2, -1] }");
    assert!(p.starts_with("links[1].loss.frames"), "negative: {p}: {m}");
    let (p, m) = path_of("{ kind = \"frames\", frames = [\"2\"] }");
    assert!(p.starts_with("links[1].loss.frames"), "not an integer: {p}: {m}");
    let (p, m) = path_of("{ kind = \"frames\", frames = [0, 4] }");
    assert_eq!((p.as_str(), m.as_str()), ("links[1].loss.frames[0]", "frame numbers count from 1"));
    let (p, m) = path_of("{ kind = \"frames\", frames = [4, 3] }");
    assert_eq!(p, "links[1].loss.frames[1]");
    assert!(m.contains("strictly increasing"), "{m}");
    let (p, _) = path_of("{ kind = \"frames\", frames = [4, 4] }");
    assert_eq!(p, "links[1].loss.frames[1]", "duplicate");
    let (p, m) = path_of("{ kind = \"frames\", frames = [] }");
    assert_eq!(p, "links[1].loss.frames", "{m}");
    let (p, m) = path_of("{ kind = \"frames\" }");
    assert_eq!(p, "links[1].loss.frames", "{m}");
    let (p, _) = path_of("{ kind = \"frames\", frame = [3] }");
    assert_eq!(p, "links[1].loss.frame", "unknown key");
    let (p, _) = path_of("{ kind = \"frames\", frames = [3], one_in = 5 }");
    assert_eq!(p, "links[1].loss.one_in");
    let (p, _) = path_of("{ kind = \"periodic\", one_in = 5, frames = [3] }");
    assert_eq!(p, "links[1].loss.frames");
    let (p, _) = path_of("{ kind = \"frame\", frames = [3] }");
    assert_eq!(p, "links[1].loss.kind");
}

#[test]
fn test_a_ports_drop_policy_covers_the_categories_it_names() {
    use atmlab_net::atm::{DropPolicy, ServiceCategory};
    let kinds = |port_line: &str| {
        let text = MINIMAL.replace("port = { buffer = \"100 cells\" }", port_line);
        let sim = parse_toml(&text).unwrap().build(1, 0).unwrap();
        let port = sim.ports().iter().find(|p| p.name == "sw->b").unwrap();
        ServiceCategory::ALL.map(|c| matches!(port.drop_policy(c), DropPolicy::Epd(_)))
    };
    // UBR alone by default: EPD must not refuse a CBR voice frame.
    let [cbr, vbr, abr, ubr] = kinds("port = { buffer = \"100 cells\", drop_policy = { kind = \"epd\" } }");
    assert!(ubr && !cbr && !vbr && !abr);
    let [cbr, vbr, abr, ubr] =
        kinds("port = { buffer = \"100 cells\", drop_policy = { kind = \"epd\", categories = [\"abr\", \"ubr\"] } }");
    assert!(ubr && abr && !cbr && !vbr);
    // A class's own policy holds whatever the port's names.
    let [cbr, _, _, ubr] = kinds(
        "port = { buffer = \"100 cells\", drop_policy = { kind = \"tail_drop\" }, classes = { cbr = { drop_policy = { kind = \"epd\" } } } }",
    );
    assert!(cbr && !ubr);
    let e = error_of(&MINIMAL.replace(
        "port = { buffer = \"100 cells\" }",
        "port = { buffer = \"100 cells\", classes = { cbr = { drop_policy = { kind = \"epd\", categories = [\"ubr\"] } } } }",
    ));
    assert_eq!(e.path, "switches[0].port.classes.cbr.drop_policy.categories", "{e}");
    let e = error_of(&MINIMAL.replace(
        "port = { buffer = \"100 cells\" }",
        "port = { buffer = \"100 cells\", drop_policy = { kind = \"epd\", categories = [] } }",
    ));
    assert_eq!(e.path, "switches[0].port.drop_policy.categories", "{e}");
    let e = error_of(&MINIMAL.replace(
        "port = { buffer = \"100 cells\" }",
        "port = { buffer = \"100 cells\", drop_policy = { kind = \"epd\", categories = [\"gold\"] } }",
    ));
    assert!(e.path.starts_with("switches[0].port.drop_policy"), "{e}");
}

/// Every table of the JSON Schema refuses unknown keys, as the structs do
/// (`deny_unknown_fields`), and every definition it refers to exists.
#[test]
fn test_json_schema_refuses_unknown_keys_everywhere() {
    let schema = schema::json_schema();
    let defs = schema["$defs"].as_object().expect("definitions");
    let mut tables = vec![("Scenario".to_owned(), &schema)];
    tables.extend(defs.iter().map(|(k, v)| (k.clone(), v)));
    let mut checked = 0;
    for (name, def) in tables {
        if def.get("properties").is_some() {
            assert_eq!(def["additionalProperties"], serde_json::json!(false), "{name} takes unknown keys");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} tables");
    let text = schema.to_string();
    for (i, _) in text.match_indices("\"#/$defs/") {
        let rest = &text[i + 9..];
        let name = &rest[..rest.find('"').unwrap()];
        assert!(defs.contains_key(name), "a reference to a missing definition {name}");
    }
    for key in ["simulation", "hosts", "switches", "links", "vcs", "apps", "metrics", "probes", "tcp"] {
        assert!(schema["properties"].get(key).is_some(), "no {key}");
    }
    assert_eq!(schema["required"], serde_json::json!(["simulation"]));
}

/// A quantity's pattern is built from the parser's own unit lists: it takes
/// every unit the parser takes, and a text it refuses for its unit.
#[test]
fn test_json_schema_quantities_take_the_parsers_units() {
    let schema = schema::json_schema();
    let time = schema["$defs"]["Time"]["pattern"].as_str().expect("a pattern");
    for (unit, _) in units::TIME_UNITS {
        assert!(
            time.contains(&format!("|{unit}|"))
                || time.contains(&format!("({unit}|"))
                || time.contains(&format!("|{unit})")),
            "{unit}"
        );
        assert!(units::duration(&format!("5 {unit}")).is_ok());
    }
    let bytes = &schema["$defs"]["Bytes"]["anyOf"];
    assert_eq!(bytes[1], serde_json::json!({ "type": "integer", "minimum": 0 }));
    assert!(bytes[0]["pattern"].as_str().unwrap().contains("|KiB|"));
    assert!(!bytes[0]["pattern"].as_str().unwrap().contains("|KB|"));
    assert_eq!(schema["$defs"]["Amount"]["anyOf"][2], serde_json::json!({ "enum": ["inf"] }));
}

/// A voice flow alone on idle links: its delays differ only by where each
/// datagram falls in the slot grids (less than a cell time per hop); the
/// variation is the largest less the smallest delay.
#[test]
fn test_udp_delay_variation_is_max_less_min() {
    let text = MINIMAL.replace("duration = \"20 ms\"", "duration = \"100 ms\"").replace(
        "kind = \"tcp_bulk\"\nname = \"ftp\"\nvc = \"v\"",
        "kind = \"udp_cbr\"\nname = \"voice\"\nvc = \"v\"\npayload = \"80 bytes\"\ninterval = \"1 ms\"",
    );
    let r = parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap();
    let f = &r.udp_flows[0];
    let (min, mean, max) = (f.min_delay_s.unwrap(), f.mean_delay_s.unwrap(), f.max_delay_s.unwrap());
    assert!(min <= mean && mean <= max, "{min} {mean} {max}");
    assert!(min >= 10e-6, "two 5 us links: {min}");
    assert!((f.delay_variation_s.unwrap() - (max - min)).abs() < 1e-15);
    assert!(max > min, "the slot grids spread the delays");
    assert!(max - min < 2.0 * 424.0 / 155.52e6, "{}", max - min);
}

/// A fresh directory for one test's capture files.
fn capture_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("atmlab-capture-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The records of a pcap file: (timestamp in ns, original length, captured bytes).
fn pcap_records(path: &std::path::Path) -> Vec<(u128, u32, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
    assert_eq!(reader.header().datalink, pcap_file::DataLink::SUNATM);
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        out.push((p.timestamp.as_nanos(), p.orig_len, p.data.into_owned()));
    }
    out
}

#[test]
fn test_capture_holds_every_segment_sent_and_changes_no_result() {
    // A 100-cell buffer in front of a slower link to b: the sender loses
    // segments there and retransmits them.
    let text = MINIMAL
        .replace(
            "between = [\"sw\", \"b\"]\nrate = \"155.52 Mbit/s\"",
            "between = [\"sw\", \"b\"]\nrate = \"50 Mbit/s\"",
        )
        .replace("duration = \"20 ms\"", "duration = \"1 s\"");
    assert_ne!(text, MINIMAL);
    let sc = parse_toml(&text).unwrap();
    let plain = sc.build(1, 0).unwrap().run().unwrap();
    let dir = capture_dir("segments");
    let captured = sc.build_with_capture(1, 0, Some(&dir)).unwrap().run().unwrap();
    assert_eq!(format!("{plain:?}"), format!("{captured:?}"), "capturing changed the result");
    let c = &plain.connections[0];
    assert!(c.retransmitted_segments > 0, "the scenario must lose segments");
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["a-sw.pcap", "b-sw.pcap", "sw-a.pcap", "sw-b.pcap"]);

    // On a -> sw every frame a sent: its data segments (SunATM 4, LLC/SNAP
    // 8, IPv4 20, TCP 20 captured; the payload counted in the original
    // length), retransmissions found as sequence numbers seen before.
    let records = pcap_records(&dir.join("a-sw.pcap"));
    let (mut data, mut retransmitted, mut next) = (0u64, 0u64, 0u32);
    let mut last_ts = 0;
    for (ts, orig, bytes) in &records {
        assert!(*ts >= last_ts, "records in time order");
        last_ts = *ts;
        let ip = &bytes[12..32];
        let total = u32::from(u16::from_be_bytes([ip[2], ip[3]]));
        assert_eq!(*orig, 4 + 8 + total);
        let tcp = &bytes[32..];
        let payload = total - 20 - u32::from(tcp[12] >> 4) * 4;
        if payload > 0 {
            data += 1;
            let seq = u32::from_be_bytes(tcp[4..8].try_into().unwrap());
            if seq < next {
                retransmitted += 1;
            }
            next = next.max(seq + payload);
        }
    }
    assert_eq!(data, c.segments_sent);
    assert_eq!(retransmitted, c.retransmitted_segments);
    // sw -> b carries only whole frames: fewer than were sent.
    let delivered = pcap_records(&dir.join("sw-b.pcap")).len() as u64;
    assert!(delivered < records.len() as u64 && delivered > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn test_capture_names_its_key_and_links() {
    let with =
        |capture: &str| MINIMAL.replace("duration = \"20 ms\"", &format!("duration = \"20 ms\"\ncapture = {capture}"));
    let e = error_of(&with(r#"[["a", "nowhere"]]"#));
    assert_eq!(e.path, "simulation.capture[0][1]", "{}", e.message);
    let e = error_of(&with(r#"[["sw", "a"], ["a", "b"]]"#));
    assert_eq!((e.path.as_str(), e.message.as_str()), ("simulation.capture[1]", "no link between a and b"));
    // Only the named link, both directions, in the order of travel.
    let dir = capture_dir("named");
    parse_toml(&with(r#"[["sw", "b"]]"#)).unwrap().build_with_capture(1, 0, Some(&dir)).unwrap().run().unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["b-sw.pcap", "sw-b.pcap"]);
    std::fs::remove_dir_all(&dir).unwrap();
    // A directory that cannot be made is an error naming it.
    let blocked = capture_dir("blocked");
    std::fs::write(&blocked, "a file").unwrap();
    let e = match parse_toml(MINIMAL).unwrap().build_with_capture(1, 0, Some(&blocked.join("sub"))) {
        Err(e) => e,
        Ok(_) => panic!("a capture directory under a file was accepted"),
    };
    assert_eq!(e.path, "simulation.capture");
    assert!(e.message.contains("capture directory"), "{}", e.message);
    std::fs::remove_file(&blocked).unwrap();
}

#[test]
fn test_socket_send_path_keys_name_themselves_in_errors() {
    let with = |tcp: &str| format!("{MINIMAL}tcp = {{ {tcp} }}\n");
    let e = error_of(&with(r#"send_buffer = "0 bytes""#));
    assert_eq!(e.path, "apps[0].tcp.send_buffer");
    let e = error_of(&with(r#"send_buffer = "2 GiB""#));
    assert_eq!(e.path, "apps[0].tcp.send_buffer");
    let e = error_of(&with(r#"send_buffer = "8 KiB", write_size = "0 bytes""#));
    assert_eq!(e.path, "apps[0].tcp.write_size");
    let e = error_of(&with(r#"write_size = "4 KiB""#));
    assert_eq!(e.path, "apps[0].tcp.write_size");
    assert!(e.message.contains("send_buffer"), "{}", e.message);
    let e = error_of(&with(r#"write_cost = "1 ms""#));
    assert_eq!(e.path, "apps[0].tcp.write_cost");
    let e = error_of(&with(r#"send_buffer = "8 KiB", write_cost = "-1 ms""#));
    assert!(e.path.starts_with("apps[0].tcp.write_cost"), "{}", e.path);
    // In [tcp] the path is the scenario's key.
    let text = MINIMAL.replace("[simulation]", "[tcp]\nwrite_size = \"4 KiB\"\n[simulation]");
    assert_eq!(error_of(&text).path, "tcp.write_size");
}

#[test]
fn test_solaris_delayed_ack_keys_name_themselves_in_errors() {
    let with = |tcp: &str| format!("{MINIMAL}tcp = {{ {tcp} }}\n");
    // The rule needs delayed ACKs on, and is not stretch ACKs.
    let e = error_of(&with(r#"delayed_ack_rule = "solaris""#));
    assert_eq!(e.path, "apps[0].tcp.delayed_ack_rule");
    assert!(e.message.contains("delayed_ack = true"), "{}", e.message);
    let e = error_of(&with(r#"delayed_ack = true, delayed_ack_rule = "solaris", stretch_ack = "4 ms""#));
    assert_eq!(e.path, "apps[0].tcp.stretch_ack");
    // The cap belongs to the Solaris rule and to Solaris's range.
    let e = error_of(&with(r#"delayed_ack = true, delayed_ack_max = 2"#));
    assert_eq!(e.path, "apps[0].tcp.delayed_ack_max");
    assert!(e.message.contains("solaris"), "{}", e.message);
    let e = error_of(&with(r#"delayed_ack = true, delayed_ack_rule = "solaris", delayed_ack_max = 17"#));
    assert_eq!(e.path, "apps[0].tcp.delayed_ack_max");
    assert!(e.message.contains("0 to 16"), "{}", e.message);
    let e = error_of(&with(r#"delayed_ack = true, delayed_ack_rule = "sun""#));
    assert!(e.path.starts_with("apps[0].tcp"), "{}", e.path);
    // In [tcp] the path is the scenario's key.
    let text = MINIMAL.replace("[simulation]", "[tcp]\ndelayed_ack_rule = \"solaris\"\n[simulation]");
    assert_eq!(error_of(&text).path, "tcp.delayed_ack_rule");
}

#[test]
fn test_solaris_delayed_acks_run_and_send_fewer_acks_than_bsd() {
    // The minimal LAN with 9140-byte segments for 2 s: BSD acknowledges
    // every second segment; under Solaris's rule the limit grows from one
    // MSS towards the cap (the 65535-byte window is 8 MSS: 4), so fewer ACKs
    // per segment (the timer, and short segments at the window's edge, keep
    // it from one in four). The ACKs are the cells host b sends, 2 each.
    let run = |tcp: &str| {
        let text = format!("{MINIMAL}tcp = {{ mss = \"9140 bytes\", {tcp} }}\n").replace("\"20 ms\"", "\"2 s\"");
        let r = parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap();
        let acks = r.ports.iter().find(|p| p.name == "b->sw").unwrap().cells_out / 2;
        (acks, r.connections[0].segments_sent)
    };
    let (none, none_segs) = run("delayed_ack = false");
    let (bsd, bsd_segs) = run("delayed_ack = true");
    let (solaris, solaris_segs) = run(r#"delayed_ack = true, delayed_ack_rule = "solaris""#);
    assert!(none_segs > 100 && bsd_segs > 100 && solaris_segs > 100);
    // One ACK per segment (and the SYN-ACK), one per two, one per about four.
    assert!(none + 10 > none_segs && none <= none_segs + 1, "{none} ACKs for {none_segs} segments");
    assert!(2 * bsd + 10 > bsd_segs && 2 * bsd < bsd_segs + 10, "{bsd} ACKs for {bsd_segs} segments");
    assert!(100 * solaris < 45 * solaris_segs, "{solaris} ACKs for {solaris_segs} segments");
    assert_eq!(run(r#"delayed_ack = true, delayed_ack_rule = "bsd""#), (bsd, bsd_segs), "bsd is the default rule");
}

#[test]
fn test_socket_send_path_runs_and_the_write_size_matters() {
    // A 20 ms transfer on the minimal LAN: 100-byte writes with Nagle make
    // fewer, larger segments than the writes; different write sizes make
    // different segment streams.
    let run = |tcp: &str| {
        let text = format!("{MINIMAL}tcp = {{ {tcp} }}\n");
        parse_toml(&text).unwrap().build(1, 0).unwrap().run().unwrap()
    };
    let small = run(r#"send_buffer = "16 KiB", write_size = "100 bytes", write_cost = "10 us""#);
    let large = run(r#"send_buffer = "16 KiB", write_size = "16 KiB""#);
    let greedy = run("");
    let segs = |r: &atmlab_net::sim::RunResult| r.connections[0].segments_sent;
    assert!(segs(&small) > 0 && segs(&large) > 0);
    assert_ne!(segs(&small), segs(&large));
    assert_ne!(segs(&large), segs(&greedy));
}

#[test]
fn test_solaris25_rto_keys_name_themselves_in_errors() {
    let with = |tcp: &str| format!("{MINIMAL}tcp = {{ {tcp} }}\n");
    // Solaris 2.5's millisecond arithmetic assumes its 100 Hz lbolt.
    let e = error_of(&with(r#"rto_algorithm = "solaris25", timer_tick = "100 ms""#));
    assert_eq!(e.path, "apps[0].tcp.timer_tick");
    assert!(e.message.contains("10 ms") && e.message.contains("solaris25"), "{}", e.message);
    let e = error_of(&with(r#"rto_algorithm = "solaris25", min_rto = "2 s", max_rto = "1 s""#));
    assert_eq!(e.path, "apps[0].tcp.max_rto");
    let e = error_of(&with(r#"rto_algorithm = "solaris2""#));
    assert!(e.path.starts_with("apps[0].tcp"), "{}", e.path);
    let text =
        MINIMAL.replace("[simulation]", "[tcp]\nrto_algorithm = \"solaris25\"\ntimer_tick = \"20 ms\"\n[simulation]");
    assert_eq!(error_of(&text).path, "tcp.timer_tick");
}

#[test]
fn test_solaris25_takes_solaris_defaults_and_runs() {
    let text = format!("{MINIMAL}tcp = {{ rto_algorithm = \"solaris25\" }}\n").replace("\"20 ms\"", "\"1 s\"");
    let s = parse_toml(&text).unwrap().build(1, 0).unwrap();
    let r = s.run().unwrap();
    assert!(r.connections[0].bytes_delivered > 0);
    // A 10 us LAN: the RTO sits at tcp_rexmit_interval_min; no timeout.
    assert_eq!(r.connections[0].timeouts, 0);
}

/// MINIMAL with both hosts external and an exec app on `a`.
fn external(a: &str, b: &str, exec: &str) -> String {
    MINIMAL
        .replace("name = \"a\"\n", &format!("name = \"a\"\n{a}\n"))
        .replace("name = \"b\"\n", &format!("name = \"b\"\n{b}\n"))
        + exec
}

#[test]
fn test_external_hosts_route_packets_and_exec_apps_are_checked() {
    let (a, b) =
        (r#"external = { address = "10.200.0.1", congestion = "cubic" }"#, r#"external = { address = "10.200.0.2" }"#);
    let exec = "[[apps]]\nkind = \"exec\"\nname = \"ping\"\nhost = \"a\"\ncommand = \"ping -c 3 {b}\"\nwait = true\n";
    let mut sim = parse_toml(&external(a, b, exec)).unwrap().build(1, 0).unwrap();
    let hosts = sim.external_hosts();
    assert_eq!(
        hosts.iter().map(|h| (h.1.as_str(), h.2.to_string())).collect::<Vec<_>>(),
        [("a", "10.200.0.1".to_owned()), ("b", "10.200.0.2".to_owned())]
    );
    let mut p = vec![0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 200, 0, 1, 10, 200, 0, 2];
    p.resize(40, 0);
    use atmlab_engine::{Duration, SimTime};
    sim.inject(hosts[0].0, SimTime::ZERO, &p).unwrap();
    sim.advance(SimTime::ZERO + Duration::from_ms(10));
    assert_eq!(sim.drain()[0].bytes, p);
    let cases = [
        (r#"external = { address = "10.200.0" }"#, b, "", "hosts[0].external.address", "is not an IPv4 address"),
        (r#"external = { address = "224.0.0.1" }"#, b, "", "hosts[0].external.address", "unicast"),
        (r#"external = { address = "10.200.0.2" }"#, b, "", "hosts[1].external.address", "another host"),
        (
            r#"external = { address = "10.200.0.1", congestion = "Cubic!" }"#,
            b,
            "",
            "hosts[0].external.congestion",
            "congestion",
        ),
        (r#"external = { adress = "10.200.0.1" }"#, b, "", "hosts[0].external.adress", "unknown field"),
        (a, "", exec, "apps[1].command", "{b} names no external host"),
        (
            a,
            b,
            "[[apps]]\nkind = \"exec\"\nname = \"x\"\nhost = \"sw\"\ncommand = \"true\"\n",
            "apps[1].host",
            "no external host",
        ),
        (a, b, "[[apps]]\nkind = \"exec\"\nname = \"x\"\nhost = \"a\"\n", "apps[1].command", "needs a command"),
        (
            a,
            b,
            "[[apps]]\nkind = \"exec\"\nname = \"x\"\nhost = \"a\"\ncommand = \"x\"\nvc = \"v\"\n",
            "apps[1].vc",
            "not a key",
        ),
        (
            a,
            b,
            "[[apps]]\nkind = \"exec\"\nname = \"x\"\nhost = \"a\"\ncommand = \"x\"\nbytes = 5\n",
            "apps[1].bytes",
            "not a key",
        ),
        (
            a,
            b,
            "[[apps]]\nkind = \"tcp_bulk\"\nname = \"x\"\nvc = \"v\"\ncommand = \"x\"\n",
            "apps[1].command",
            "not a key",
        ),
        (a, b, "[[apps]]\nkind = \"tcp_bulk\"\nname = \"x\"\n", "apps[1].vc", "missing field"),
    ];
    for (a, b, exec, path, msg) in cases {
        let e = error_of(&external(a, b, exec));
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(msg), "{e}");
    }
    let e = error_of(&(MINIMAL.to_owned() + "[realtime]\nmax_lag = 20\n"));
    assert_eq!(e.path, "realtime.max_lag", "{e}");
}
