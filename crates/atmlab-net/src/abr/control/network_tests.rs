//! The controllers of EPRCA, APRC, CAPC, the OSU scheme and Charny's
//! algorithm in a network: each gives the same run with the event elision
//! on as with every cell-hop an event (their [`Timing`] is honest), and
//! each changes what the sources do. The network is that of
//! `sim::abr_tests::ahead_of_time`, built here through the public builder:
//! three switches in a row, the middle one fed by one link per port (it
//! takes every cell ahead of time), TCP and UDP over ABR both ways, a VBR
//! ON/OFF source, and small buffers at the last switch that drop cells.

use super::*;
use crate::aal5::Encapsulation;
use crate::abr::source::AbrParams;
use crate::atm::{DropPolicy, PortConfig, Queueing, SchedulerKind, ServiceCategory};
use crate::ids::PortId;
use crate::sim::{CbrParams, NetworkBuilder, NodeRef, OnOffParams, RunMeta, RunResult};
use atmlab_engine::{BitRate, CELL_BITS, Duration, RngStreams};

fn switch_port(buffer: u32) -> PortConfig {
    PortConfig {
        queueing: Queueing::PerCategory,
        buffer: Some(buffer),
        class_buffers: [None; 4],
        policies: [DropPolicy::default(); 4],
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    }
}

fn sts3c() -> BitRate {
    BitRate::from_bps(149_760_000).unwrap()
}

fn cells(r: BitRate) -> f64 {
    r.bps() as f64 / CELL_BITS as f64
}

fn greedy() -> CbrParams {
    CbrParams {
        payload: 9140 - 28,
        interval: Duration::from_us(500),
        start: SimTime::ZERO,
        count: None,
        max_payload: None,
        record: None,
    }
}

/// The network with `control` at every switch port, run for `ms`.
fn run(control: &ControlConfig, elide: bool, ms: u64) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(8, 0));
    b.set_event_elision(elide);
    let delay = Duration::from_ms(1);
    let mut switch_ports: Vec<PortId> = Vec::new();
    let mut link = |b: &mut NetworkBuilder, x: NodeRef, y: NodeRef, rate: BitRate, px: PortConfig, py: PortConfig| {
        let (f, r) = b.add_link(x, y, rate, delay, px, py).unwrap();
        for (node, port) in [(x, f), (y, r)] {
            if matches!(node, NodeRef::Switch(_)) {
                switch_ports.push(port);
            }
        }
    };
    let sw: Vec<NodeRef> = (1..=3).map(|i| NodeRef::Switch(b.add_switch(&format!("sw{i}")))).collect();
    let big = || switch_port(1 << 22);
    link(&mut b, sw[0], sw[1], sts3c(), big(), big());
    link(&mut b, sw[1], sw[2], sts3c(), big(), big());
    let quarter = BitRate::from_bps(sts3c().bps() / 4).unwrap();
    let params = AbrParams::new(cells(quarter));
    for i in 0..3 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        link(&mut b, s, sw[0], sts3c(), PortConfig::host_adapter(), big());
        link(&mut b, sw[2], d, quarter, switch_port(20), PortConfig::host_adapter());
        let vc = b.add_vc(&[s, sw[0], sw[1], sw[2], d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        if i < 2 {
            let tcp = crate::tcp::TcpConfig { mss: 9140, ..crate::tcp::TcpConfig::classic() };
            b.add_tcp(&format!("tcp{i}"), &vc, tcp, SimTime::ZERO, None).unwrap();
        } else {
            b.add_udp_cbr("udp", &vc, greedy()).unwrap();
        }
    }
    let ra = NodeRef::Host(b.add_host("ra", 9180, Encapsulation::LlcSnap));
    let rb = NodeRef::Host(b.add_host("rb", 9180, Encapsulation::LlcSnap));
    link(&mut b, sw[0], ra, sts3c(), big(), PortConfig::host_adapter());
    link(&mut b, rb, sw[2], sts3c(), PortConfig::host_adapter(), big());
    let back = b.add_vc(&[rb, sw[2], sw[1], sw[0], ra], ServiceCategory::Abr, None).unwrap();
    b.set_abr("back", &back, &AbrParams::new(cells(sts3c()))).unwrap();
    b.add_udp_cbr("back", &back, greedy()).unwrap();
    let v = NodeRef::Host(b.add_host("vbr", 9180, Encapsulation::LlcSnap));
    let w = NodeRef::Host(b.add_host("vbr_sink", 9180, Encapsulation::LlcSnap));
    link(&mut b, v, sw[0], sts3c(), PortConfig::host_adapter(), big());
    link(&mut b, sw[2], w, sts3c(), big(), PortConfig::host_adapter());
    let vc = b.add_simplex_vc(&[v, sw[0], sw[1], sw[2], w], ServiceCategory::Vbr, None).unwrap();
    let on = OnOffParams {
        peak: BitRate::from_bps(sts3c().bps() / 2).unwrap(),
        on: Duration::from_ms(20),
        off: Duration::from_ms(30),
        start: SimTime::ZERO,
    };
    b.add_onoff("vbr", &vc, on).unwrap();
    for p in switch_ports {
        b.set_abr_control(p, control.clone()).unwrap();
    }
    b.build(RunMeta::default(), Duration::from_ms(ms)).run().unwrap()
}

/// EPRCA with thresholds the 20-cell buffers toward the destinations
/// reach (those ports take their cells ahead of time).
fn low_thresholds() -> EprcaParams {
    EprcaParams {
        congestion: eprca::Congestion::QueueLength { queue_threshold: 4 },
        high_queue_threshold: 12,
        ..eprca::EPRCA_DEFAULTS
    }
}

/// Every new algorithm with its defaults and its main options.
fn configs() -> Vec<ControlConfig> {
    use eprca::{APRC_DEFAULTS, CiMarking, EPRCA_DEFAULTS, Reduction};
    let mut survey = low_thresholds();
    survey.reduction = Reduction::FairShare;
    let mut binary = low_thresholds();
    (binary.explicit_rate, binary.ci_marking) = (false, CiMarking::Congested);
    let aggressive = OsuParams { fairness: osu::Fairness::Aggressive, ..osu::OSU_DEFAULTS };
    let two_pass = CharnyParams { iteration: charny::Iteration::TwoPass, ..charny::CHARNY_DEFAULTS };
    vec![
        ControlConfig::Eprca(EPRCA_DEFAULTS),
        ControlConfig::Eprca(low_thresholds()),
        ControlConfig::Eprca(survey),
        ControlConfig::Eprca(binary),
        ControlConfig::Eprca(APRC_DEFAULTS),
        ControlConfig::Capc(capc::CAPC_DEFAULTS),
        ControlConfig::Osu(osu::OSU_DEFAULTS),
        ControlConfig::Osu(aggressive),
        ControlConfig::Charny(charny::CHARNY_DEFAULTS),
        ControlConfig::Charny(two_pass),
    ]
}

/// The run with the elision on and off: the same but for the event count.
fn same_both_ways(control: &ControlConfig) -> RunResult {
    let mut a = run(control, true, 240);
    let mut reference = run(control, false, 240);
    assert!(a.events * 2 < reference.events, "{control:?}: {} vs {} events", a.events, reference.events);
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference, "{control:?}");
    a
}

#[test]
fn test_each_counting_controller_gives_the_reference_run_with_cells_taken_ahead_of_time() {
    let mut dropped = 0;
    for control in configs() {
        assert_eq!(control.timing(), Timing::Counted, "{control:?}");
        let r = same_both_ways(&control);
        // The case exercises what it is for: feedback written (each port's
        // readings its algorithm's), RM cells both ways, and (with most
        // algorithms: CAPC starts slow) drops at ports that take cells
        // ahead of time.
        assert!(r.abr.iter().all(|e| e.brms_received > 0), "{control:?}: {:?}", r.abr);
        dropped += usize::from(r.switch_cells_dropped > 0);
        let algorithm = control.algorithm();
        assert!(r.abr_ports.iter().all(|p| p.algorithm == algorithm.name()));
        let names: Vec<&str> = r.abr_ports[0].readings.0.iter().map(|x| x.name).collect();
        let expected: Vec<&str> = algorithm.readings().iter().map(|x| x.name).collect();
        assert_eq!(names, expected);
        let written = |p: &crate::sim::AbrPortResult| -> f64 {
            let count = |x: &Reading| matches!(x.name, "brms_lowered" | "brms_ci_set");
            p.readings.0.iter().filter(|x| count(x)).filter_map(|x| x.value).sum()
        };
        assert!(r.abr_ports.iter().any(|p| written(p) > 0.0), "{control:?}: no feedback written");
    }
    assert!(dropped >= 5, "drops in only {dropped} runs");
}

#[test]
fn test_eprca_marking_efci_gives_the_reference_run() {
    let mut p = low_thresholds();
    p.efci_marking = true;
    let control = ControlConfig::Eprca(p);
    assert_eq!(control.timing(), Timing::Exact);
    let mut a = run(&control, true, 240);
    let mut reference = run(&control, false, 240);
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference);
}
