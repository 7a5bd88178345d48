//! End-to-end runs of ABR: sources, destinations and ERICA switches in a
//! network (the state machines have their own tests in `abr/`).

use super::tests::switch_port;
use super::*;
use crate::aal5::Encapsulation;
use crate::abr::control::efci::EfciParams;
use crate::abr::control::{ControlConfig, EricaParams};
use crate::abr::source::AbrParams;
use crate::atm::{PortConfig, ServiceCategory};
use atmlab_engine::{BitRate, CELL_BITS, RngStreams};

/// 149.76 Mbit/s, the SONET STS-3c payload rate of 97-0177R2.
fn sts3c() -> BitRate {
    BitRate::from_bps(149_760_000).unwrap()
}

fn cell_rate(r: BitRate) -> f64 {
    r.bps() as f64 / CELL_BITS as f64
}

/// `n` ABR VCs src_i -> sw1 -> sw2 -> dst_i, each fed by a UDP source far
/// faster than its share (a persistent source: it always has cells), every
/// switch port running `control`.
fn greedy_abr(
    n: usize,
    delay: Duration,
    control: ControlConfig,
    seconds: u64,
    more: impl FnOnce(&mut NetworkBuilder),
) -> Simulation {
    abr_network(
        n,
        delay,
        control,
        seconds,
        |b, i, vc| {
            b.add_udp_cbr(&format!("u{i}"), vc, greedy()).unwrap();
        },
        more,
    )
}

/// `n` ABR VCs src_i -> sw1 -> sw2 -> dst_i, every link `delay` long, VC `i`
/// given its traffic by `source`, every switch port running `control`.
fn abr_network(
    n: usize,
    delay: Duration,
    control: ControlConfig,
    seconds: u64,
    source: impl Fn(&mut NetworkBuilder, usize, &VcHandle),
    more: impl FnOnce(&mut NetworkBuilder),
) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(3, 0));
    let sw1 = NodeRef::Switch(b.add_switch("sw1"));
    let sw2 = NodeRef::Switch(b.add_switch("sw2"));
    let host = PortConfig::host_adapter;
    b.add_link(sw1, sw2, sts3c(), delay, switch_port(1 << 22), switch_port(1 << 22)).unwrap();
    let params = AbrParams::new(cell_rate(sts3c()));
    for i in 0..n {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw1, sts3c(), delay, host(), switch_port(1 << 22)).unwrap();
        b.add_link(sw2, d, sts3c(), delay, switch_port(1 << 22), host()).unwrap();
        let vc = b.add_vc(&[s, sw1, sw2, d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        source(&mut b, i, &vc);
    }
    control_every_switch_port(&mut b, &control);
    more(&mut b);
    b.build(RunMeta::default(), Duration::from_secs(seconds))
}

/// 9140 bytes every 500 us: 146 Mbit/s offered, more than any share here.
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

/// Every switch output port of `b` gets `control`.
fn control_every_switch_port(b: &mut NetworkBuilder, control: &ControlConfig) {
    for p in 0..b.ports.len() {
        if matches!(b.port_owner[p], NodeRef::Switch(_)) {
            b.set_abr_control(crate::ids::PortId(p as u32), control.clone()).unwrap();
        }
    }
}

#[test]
fn test_three_persistent_abr_vcs_share_the_link_equally_at_the_target() {
    // ERICA with U = 0.9: each VC's ACR converges to 0.9 * link / 3.
    let link = cell_rate(sts3c());
    let sim = greedy_abr(3, Duration::from_us(50), ControlConfig::Erica(EricaParams::erica(0.9)), 1, |_| ());
    let r = sim.run().unwrap();
    let share = 0.9 * link / 3.0 * CELL_BITS as f64;
    for e in r.abr.iter().filter(|e| e.name.ends_with(":forward")) {
        assert!((e.acr_bps - share).abs() < 0.02 * share, "{}: ACR {} vs share {share}", e.name, e.acr_bps);
    }
    let bottleneck = r.ports.iter().find(|p| p.name == "sw1->sw2").unwrap();
    assert!((bottleneck.utilization - 0.9).abs() < 0.02, "utilization {}", bottleneck.utilization);
    assert_eq!(r.switch_cells_dropped, 0);
}

#[test]
fn test_erica_plus_fills_the_link_with_a_short_queue() {
    // ERICA+ aims at the whole capacity, with the queue near T0 = 500 us
    // (docs/models/abr.md, "Test vectors"): 177 cells at 353,208 cells/s.
    let sim =
        greedy_abr(3, Duration::from_us(50), ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()), 1, |_| {});
    let r = sim.run().unwrap();
    let bottleneck = r.ports.iter().find(|p| p.name == "sw1->sw2").unwrap();
    assert!(bottleneck.utilization > 0.97, "utilization {}", bottleneck.utilization);
    let abr = &bottleneck.categories["abr"];
    assert!(abr.mean_queue < 2.0 * 177.0, "mean ABR queue {}", abr.mean_queue);
    assert_eq!(r.switch_cells_dropped, 0);
}

#[test]
fn test_two_links_give_the_max_min_rates() {
    // The two-link case (docs/models/abr.md): L1 (target 90) and L2 (target 45); S1 uses
    // L1, S2 both, S3 L2. From a cold start (ICR = PCR/100) ERICA reaches
    // the max-min rates (67.5, 22.5, 22.5) in units of L1's target / 90.
    let mut b = NetworkBuilder::new(RngStreams::new(4, 0));
    let us = Duration::from_us(50);
    let sw: Vec<NodeRef> = (1..=3).map(|i| NodeRef::Switch(b.add_switch(&format!("sw{i}")))).collect();
    let half = BitRate::from_bps(sts3c().bps() / 2).unwrap();
    let big = || switch_port(1 << 22);
    b.add_link(sw[0], sw[1], sts3c(), us, big(), big()).unwrap();
    b.add_link(sw[1], sw[2], half, us, big(), big()).unwrap();
    let mut params = AbrParams::new(cell_rate(sts3c()));
    params.icr = params.pcr / 100.0;
    for (i, (from, to)) in [(0, 1), (0, 2), (1, 2)].into_iter().enumerate() {
        let s = NodeRef::Host(b.add_host(&format!("s{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("d{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw[from], sts3c(), us, PortConfig::host_adapter(), big()).unwrap();
        b.add_link(sw[to], d, sts3c(), us, big(), PortConfig::host_adapter()).unwrap();
        let path: Vec<NodeRef> = std::iter::once(s).chain(sw[from..=to].iter().copied()).chain([d]).collect();
        let vc = b.add_vc(&path, ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("s{i}"), &vc, &params).unwrap();
        b.add_udp_cbr(&format!("u{i}"), &vc, greedy()).unwrap();
    }
    control_every_switch_port(&mut b, &ControlConfig::Erica(EricaParams::erica(0.9)));
    let r = b.build(RunMeta::default(), Duration::from_secs(1)).run().unwrap();
    let unit = 0.9 * sts3c().bps() as f64 / 90.0;
    let acr = |name: &str| r.abr.iter().find(|e| e.name == name).unwrap().acr_bps / unit;
    for (name, want) in [("s0:forward", 67.5), ("s1:forward", 22.5), ("s2:forward", 22.5)] {
        assert!((acr(name) - want).abs() < 0.02 * want, "{name}: {} vs {want}", acr(name));
    }
}

#[test]
fn test_abr_tracks_a_square_wave_of_vbr_within_two_intervals() {
    // A VBR square wave (docs/models/abr.md): VBR takes half the link every other 50 ms;
    // the ABR sources' rates follow U * link - VBR within two averaging
    // intervals (plus the feedback delay) of each edge. Basic ERICA (no
    // max-min fix): with the fix, rates inside the band z <= 1 + delta keep
    // MaxAllocPrevious and may settle up to delta above the target
    // (docs/models/abr.md, "Known behaviour"; here 3.8 % above after VBR goes off).
    let link = cell_rate(sts3c()) * CELL_BITS as f64;
    let ms = Duration::from_ms(1);
    let basic = EricaParams { max_min_fix: false, ..EricaParams::erica(0.9) };
    let sim = greedy_abr(3, Duration::from_us(50), ControlConfig::Erica(basic), 1, |b| {
        let sw1 = NodeRef::Switch(crate::ids::SwitchId(0));
        let sw2 = NodeRef::Switch(crate::ids::SwitchId(1));
        let v = NodeRef::Host(b.add_host("vbr", 9180, Encapsulation::LlcSnap));
        let w = NodeRef::Host(b.add_host("vbr_sink", 9180, Encapsulation::LlcSnap));
        b.add_link(v, sw1, sts3c(), Duration::from_us(50), PortConfig::host_adapter(), switch_port(1 << 22)).unwrap();
        b.add_link(sw2, w, sts3c(), Duration::from_us(50), switch_port(1 << 22), PortConfig::host_adapter()).unwrap();
        let vc = b.add_simplex_vc(&[v, sw1, sw2, w], ServiceCategory::Vbr, None).unwrap();
        let on = OnOffParams {
            peak: BitRate::from_bps(sts3c().bps() / 2).unwrap(),
            on: Duration::from_ms(50),
            off: Duration::from_ms(50),
            start: SimTime::ZERO,
        };
        b.add_onoff("vbr", &vc, on).unwrap();
        for i in 0..3 {
            b.add_probe(ProbeSpec {
                name: format!("acr{i}"),
                target: ProbeTarget::Abr(2 * i, AbrQuantity::Acr),
                interval: ms,
            });
        }
    });
    let r = sim.run().unwrap();
    let t = &r.series[0].t_s;
    // Two intervals of at most 5 ms (500 cells take 1.4 ms at full rate)
    // and a round trip of 0.3 ms: 11 ms after each edge is settled.
    let mut checked = 0;
    for (k, &ts) in t.iter().enumerate() {
        let phase = ts % 0.1;
        let vbr_on = phase < 0.05;
        let since_edge = phase % 0.05;
        if ts < 0.1 || !(0.011..=0.049).contains(&since_edge) {
            continue;
        }
        let total: f64 = r.series.iter().map(|s| s.values[k]).sum();
        let want = if vbr_on { 0.9 * link - 0.5 * link } else { 0.9 * link };
        assert!((total - want).abs() < 0.03 * want, "t = {ts}: ABR rates {total} vs {want}");
        checked += 1;
    }
    assert!(checked > 500, "{checked} samples checked");
}

#[test]
fn test_abr_runs_conserve_cells_and_are_deterministic_and_match_the_reference() {
    // RM cells are counted like every other cell; the same seed gives the
    // same run; the optimised event plan gives the run of the reference
    // (every port slotted, every cell-hop an event).
    let run = |elide: bool| {
        greedy_abr(3, Duration::from_ms(1), ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()), 1, |b| {
            b.set_event_elision(elide);
        })
        .run()
        .unwrap()
    };
    let (a, b, reference) = (run(true), run(true), run(false));
    assert_eq!(a, b);
    assert_eq!(a.abr, reference.abr);
    assert_eq!(a.abr_ports, reference.abr_ports);
    assert!(a.abr.iter().all(|e| e.frms_in_rate > 0 && e.brms_received > 0));
}

/// One ABR VC a -> sw -> b with `params`, ERICA+ at the switch, and a UDP
/// source of `count` datagrams (`None`: greedy) of `payload` bytes.
fn one_vc(params: AbrParams, payload: u32, count: Option<u64>, seconds: u64) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(5, 0));
    let us = Duration::from_us(50);
    let a = NodeRef::Host(b.add_host("a", 9180, Encapsulation::LlcSnap));
    let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::LlcSnap));
    let sw = NodeRef::Switch(b.add_switch("sw"));
    b.add_link(a, sw, sts3c(), us, PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
    b.add_link(sw, z, sts3c(), us, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
    let vc = b.add_vc(&[a, sw, z], ServiceCategory::Abr, None).unwrap();
    b.set_abr("v", &vc, &params).unwrap();
    let udp = CbrParams { payload, count, ..greedy() };
    b.add_udp_cbr("u", &vc, udp).unwrap();
    control_every_switch_port(&mut b, &ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()));
    b.build(RunMeta::default(), Duration::from_secs(seconds)).run().unwrap()
}

#[test]
fn test_a_vc_whose_both_directions_start_below_tcr_gets_going() {
    // ICR below TCR: both sources start stopped and send only out-of-rate
    // FRMs. The destination's turned-around BRM must go out of rate too, or
    // neither direction would ever raise its rate (TM 4.0 s5.10.5).
    let mut params = AbrParams::new(cell_rate(sts3c()));
    params.tcr = 1000.0;
    params.icr = 500.0;
    let r = one_vc(params, 9112, None, 1);
    let fwd = &r.abr[0];
    assert!(fwd.frms_out_of_rate > 0, "{fwd:?}");
    assert!(fwd.data_cells > 100_000, "the forward direction got going: {fwd:?}");
    assert!(r.udp_flows[0].received > 0);
}

#[test]
fn test_an_idle_source_sends_one_trailing_frm() {
    // One datagram of 10 cells, then nothing: the first FRM leads it (rule
    // 2); Trm (100 ms) later, with at least Mrm = 2 cells since, rule 3a
    // makes a trailing FRM due, and after it nothing more.
    let r = one_vc(AbrParams::new(cell_rate(sts3c())), 400, Some(1), 1);
    let fwd = &r.abr[0];
    assert_eq!(fwd.data_cells, 10);
    assert_eq!(fwd.frms_in_rate, 2, "{fwd:?}");
}

/// 3 greedy ABR VCs over a long first hop: src_i -(`access`)-> sw0 -> sw1 ->
/// dst_i, ERICA+ everywhere, sw0 a VS/VD switch or not.
fn long_feedback(vs_vd: bool, elide: bool) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(6, 0));
    b.set_event_elision(elide);
    let us = Duration::from_us(5);
    let access = Duration::from_ms(20);
    let sw0 = b.add_switch("sw0");
    if vs_vd {
        b.set_vs_vd(sw0);
    }
    let (sw0, sw1) = (NodeRef::Switch(sw0), NodeRef::Switch(b.add_switch("sw1")));
    let big = || switch_port(1 << 22);
    b.add_link(sw0, sw1, sts3c(), us, big(), big()).unwrap();
    let params = AbrParams::new(cell_rate(sts3c()));
    for i in 0..3 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw0, sts3c(), access, PortConfig::host_adapter(), big()).unwrap();
        b.add_link(sw1, d, sts3c(), us, big(), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, sw0, sw1, d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        b.add_udp_cbr(&format!("u{i}"), &vc, greedy()).unwrap();
    }
    control_every_switch_port(&mut b, &ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()));
    b.build(RunMeta::default(), Duration::from_secs(1)).run().unwrap()
}

#[test]
fn test_a_vs_vd_switch_keeps_the_long_loops_queue_off_the_next_port() {
    // Without VS/VD the sources start at PCR and hear from sw0 only after
    // 40 ms: the overload piles up at sw0's output port. With VS/VD at sw0
    // it piles up in sw0's per-VC queues instead, and the port, controlled
    // by the short loop sw0 -> dst, stays near ERICA+'s target.
    let plain = long_feedback(false, true);
    let split = long_feedback(true, true);
    let port_queue = |r: &RunResult| r.ports.iter().find(|p| p.name == "sw0->sw1").unwrap().max_queue;
    assert!(port_queue(&plain) > 20_000, "{}", port_queue(&plain));
    assert!(port_queue(&split) < port_queue(&plain) / 10, "{} vs {}", port_queue(&split), port_queue(&plain));
    let vs: Vec<&AbrResult> = split.abr.iter().filter(|e| e.name.ends_with("@sw0")).collect();
    assert_eq!(vs.len(), 6, "a pair of ends per VC at sw0");
    // The start-up overload now waits in the per-VC queues, about as much.
    let held: u64 = vs.iter().map(|e| e.max_cells_waiting).sum();
    assert!(held > port_queue(&plain) / 2, "{held} vs {}", port_queue(&plain));
    // Every loop works: each end hears back from its segment.
    assert!(split.abr.iter().all(|e| e.frms_in_rate > 0 && e.brms_received > 0), "{:?}", split.abr);
    assert!(split.udp_flows.iter().all(|u| u.received > 0));
    assert_eq!(split.switch_cells_dropped, 0);
    // The same run with every cell-hop an event.
    assert_eq!(split.abr, long_feedback(true, false).abr);
}

/// Three ABR VCs (two carrying greedy TCP, one greedy UDP) src_i -> sw1
/// -> sw2 -> sw3 -> dst_i, a VBR ON/OFF source on the same path, and a
/// greedy UDP VC the other way (ra <- sw1 <- sw2 <- sw3 <- rb); every
/// switch port runs `control`. The destinations' links run at a quarter of
/// the rate (the VCs' PCR) behind 20-cell buffers at sw3: a VC's cells
/// leave sw1's queue in clumps faster than that, so ports that take their
/// cells ahead of time drop some. sw2's ports are each fed by one link, so
/// sw2 takes every cell ahead of time, and the ERICA of its port toward
/// sw1 (loaded by the reverse VC) both counts cells later and writes the ER
/// of the backward RM cells of the reverse loops that sw2 took early.
fn ahead_of_time(control: &ControlConfig, elide: bool) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(8, 0));
    b.set_event_elision(elide);
    let ms = Duration::from_ms(1);
    let sw: Vec<NodeRef> = (1..=3).map(|i| NodeRef::Switch(b.add_switch(&format!("sw{i}")))).collect();
    let big = || switch_port(1 << 22);
    b.add_link(sw[0], sw[1], sts3c(), ms, big(), big()).unwrap();
    b.add_link(sw[1], sw[2], sts3c(), ms, big(), big()).unwrap();
    let quarter = BitRate::from_bps(sts3c().bps() / 4).unwrap();
    let params = AbrParams::new(cell_rate(quarter));
    for i in 0..3 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw[0], sts3c(), ms, PortConfig::host_adapter(), big()).unwrap();
        b.add_link(sw[2], d, quarter, ms, switch_port(20), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, sw[0], sw[1], sw[2], d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        if i < 2 {
            let tcp = crate::tcp::TcpConfig { mss: 9140, ..crate::tcp::TcpConfig::classic() };
            b.add_tcp(&format!("tcp{i}"), &vc, tcp, SimTime::ZERO, None).unwrap();
        } else {
            b.add_udp_cbr("udp", &vc, greedy()).unwrap();
        }
    }
    let (ra, rb) = (
        NodeRef::Host(b.add_host("ra", 9180, Encapsulation::LlcSnap)),
        NodeRef::Host(b.add_host("rb", 9180, Encapsulation::LlcSnap)),
    );
    b.add_link(sw[0], ra, sts3c(), ms, big(), PortConfig::host_adapter()).unwrap();
    b.add_link(rb, sw[2], sts3c(), ms, PortConfig::host_adapter(), big()).unwrap();
    let back = b.add_vc(&[rb, sw[2], sw[1], sw[0], ra], ServiceCategory::Abr, None).unwrap();
    b.set_abr("back", &back, &AbrParams::new(cell_rate(sts3c()))).unwrap();
    b.add_udp_cbr("back", &back, greedy()).unwrap();
    let v = NodeRef::Host(b.add_host("vbr", 9180, Encapsulation::LlcSnap));
    let w = NodeRef::Host(b.add_host("vbr_sink", 9180, Encapsulation::LlcSnap));
    b.add_link(v, sw[0], sts3c(), ms, PortConfig::host_adapter(), big()).unwrap();
    b.add_link(sw[2], w, sts3c(), ms, big(), PortConfig::host_adapter()).unwrap();
    let vc = b.add_simplex_vc(&[v, sw[0], sw[1], sw[2], w], ServiceCategory::Vbr, None).unwrap();
    let on = OnOffParams {
        peak: BitRate::from_bps(sts3c().bps() / 2).unwrap(),
        on: Duration::from_ms(20),
        off: Duration::from_ms(30),
        start: SimTime::ZERO,
    };
    b.add_onoff("vbr", &vc, on).unwrap();
    // The sink's cell rate, counted as cells arrive (the last hop counts a
    // cell source's cells when they are put on the link).
    b.add_probe(ProbeSpec { name: "vbr".into(), target: ProbeTarget::CellApp(0), interval: ms });
    control_every_switch_port(&mut b, control);
    // The run ends while the video is on (20 ms in every 50), so that the
    // last interval of sw3's port to its sink, which the results show,
    // counted some of its cells (from their arrival times alone: the port
    // carries no ABR VC, `Deferred::hp_only`).
    b.build(RunMeta::default(), Duration::from_ms(360)).run().unwrap()
}

#[test]
fn test_switches_with_abr_controllers_taking_cells_ahead_of_time_give_the_reference_run() {
    // Cells taken by a controlled switch when they are put on the link are
    // queued or dropped at once but counted by ERICA, and backward RM cells
    // get their ER, at their true arrival: every number of the run is that
    // of the reference, where every cell reaches every switch by an event.
    let controls = [
        ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()),
        ControlConfig::Erica(EricaParams::erica(0.9)),
        ControlConfig::Efci(EfciParams { threshold: 50 }),
    ];
    for control in &controls {
        let mut a = ahead_of_time(control, true);
        let mut reference = ahead_of_time(control, false);
        assert!(a.events * 2 < reference.events, "{control:?}: {} vs {} events", a.events, reference.events);
        a.events = 0;
        reference.events = 0;
        assert_eq!(a, reference, "{control:?}");
        // The case exercises what it is for: drops at ports that take
        // cells ahead of time, ERICA intervals, RM cells both ways.
        let dropped: u64 = a.ports.iter().filter(|p| p.name.starts_with("sw3->dst")).map(|p| p.dropped).sum();
        assert!(dropped > 0, "{control:?}: no drops at sw3's ports");
        assert!(a.abr.iter().all(|e| e.brms_received > 0), "{control:?}: {:?}", a.abr);
        assert!(a.series[0].values.iter().any(|v| *v > 0.0));
        if matches!(control, ControlConfig::Erica(_)) {
            let intervals = |p: &AbrPortResult| p.readings.0.iter().find(|r| r.name == "intervals").unwrap().value;
            assert!(a.abr_ports.iter().all(|p| intervals(p) > Some(10.0)), "{:?}", a.abr_ports);
        }
    }
}

/// Three TCP connections over ABR VCs src_i -(5 ms)-> sw0 -> sw1 -> dst_i
/// with ERICA+ at every switch port and a VBR ON/OFF source into the
/// bottleneck, whose ABR buffer is small enough to lose cells (TCP then
/// times out and retransmits); the third connection's transfer ends, so
/// its source goes idle and sends a trailing FRM. Probes sample the first
/// source's ACR and its adapter's queue (the ends send ahead, `sim/abr.rs`).
fn tcp_over_abr(elide: bool) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(11, 0));
    b.set_event_elision(elide);
    let ms = Duration::from_ms(1);
    let (sw0, sw1) = (NodeRef::Switch(b.add_switch("sw0")), NodeRef::Switch(b.add_switch("sw1")));
    b.add_link(sw0, sw1, sts3c(), ms, switch_port(1000), switch_port(1 << 20)).unwrap();
    let params = AbrParams::new(cell_rate(sts3c()));
    let mut adapter = None;
    for i in 0..3 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        let (out, _) = b
            .add_link(s, sw0, sts3c(), Duration::from_ms(5), PortConfig::host_adapter(), switch_port(1 << 20))
            .unwrap();
        adapter.get_or_insert(out);
        b.add_link(sw1, d, sts3c(), ms, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, sw0, sw1, d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        let mut tcp = crate::tcp::TcpConfig { window: 1 << 20, ..crate::tcp::TcpConfig::classic() };
        if i == 0 {
            // An application slower than its share: the source's queue
            // drains between writes, and each write (a TCP timer) refills it.
            let write_cost = Duration::from_us(150);
            tcp.socket = Some(crate::tcp::SocketConfig { send_buffer: 1 << 16, write_size: 1024, write_cost });
        }
        let bytes = (i == 2).then_some(20_000);
        b.add_tcp(&format!("tcp{i}"), &vc, tcp, SimTime::ZERO + Duration::from_ms(i), bytes).unwrap();
    }
    let v = NodeRef::Host(b.add_host("vbr", 9180, Encapsulation::LlcSnap));
    let w = NodeRef::Host(b.add_host("vbr_sink", 9180, Encapsulation::LlcSnap));
    b.add_link(v, sw0, sts3c(), ms, PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
    b.add_link(sw1, w, sts3c(), ms, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
    let vc = b.add_simplex_vc(&[v, sw0, sw1, w], ServiceCategory::Vbr, None).unwrap();
    let peak = BitRate::from_bps(sts3c().bps() / 2).unwrap();
    b.add_onoff(
        "vbr",
        &vc,
        OnOffParams { peak, on: Duration::from_ms(20), off: Duration::from_ms(30), start: SimTime::ZERO },
    )
    .unwrap();
    let every = Duration::from_us(700);
    b.add_probe(ProbeSpec { name: "acr".into(), target: ProbeTarget::Abr(0, AbrQuantity::Acr), interval: every });
    let queue = ProbeTarget::Port(adapter.unwrap(), PortQuantity::Queue);
    b.add_probe(ProbeSpec { name: "adapter".into(), target: queue, interval: every });
    // The way back, a pipelined port that pulls its host links' cells.
    let back = ProbeTarget::Port(b.port_toward(sw1, sw0).unwrap(), PortQuantity::Queue);
    b.add_probe(ProbeSpec { name: "back".into(), target: back, interval: every });
    control_every_switch_port(&mut b, &ControlConfig::Erica(EricaParams::erica_plus_97_0177r2()));
    b.build(RunMeta::default(), Duration::from_secs(2))
}

#[test]
fn test_abr_sources_sending_ahead_give_the_reference_run() {
    // A source sends its in-rate cells without an event each up to the
    // first thing that could reach it or look at it, and the switch ports
    // take the cells of their host links when someone must see them: the
    // run must be the reference's (every cell-hop an event, every slot an
    // event), also when it is run in uneven stretches, whose ends bound
    // the sending.
    let mut sim = tcp_over_abr(true);
    let pulling: Vec<_> = sim.pulling_ports().iter().map(|p| sim.ports()[p.idx()].name.clone()).collect();
    // The bottleneck (slotted, two categories) and the way back (pipelined)
    // pull the cells of their host links (`sim/network/pull.rs`).
    assert_eq!(pulling, ["sw0->sw1", "sw1->sw0"]);
    // The bottleneck, VBR over ABR by strict priority, passes its VBR
    // cells through at their arrival (`Port::pass_top_through`).
    let passing: Vec<_> = sim.ports().iter().filter(|p| p.passes_top()).map(|p| p.name.clone()).collect();
    assert_eq!(passing, ["sw0->sw1"]);
    let step = Duration::from_us(7_300);
    let mut t = SimTime::ZERO;
    while t < sim.end() {
        t = t.saturating_add(step);
        sim.advance_to(t);
    }
    let ahead = sim.abr_slots_ahead();
    let mut a = sim.run().unwrap();
    let mut reference = tcp_over_abr(false).run().unwrap();
    assert!(ahead > 20_000, "{ahead} slots run ahead");
    assert!(a.events * 2 < reference.events, "{} vs {} events", a.events, reference.events);
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference);
    // The case exercises what it is for: losses and TCP's timeouts, an
    // idle source, feedback both ways, samples of a sending end.
    assert!(a.switch_cells_dropped > 0 && a.connections.iter().any(|c| c.timeouts > 0), "{:?}", a.connections);
    assert!(a.connections[2].completed_at_s.is_some());
    assert!(a.abr.iter().all(|e| e.brms_received > 0 && e.brms_sent > 0), "{:?}", a.abr);
    assert!(a.series[1].values.iter().any(|v| *v > 0.0), "the adapter queues at times");
    assert!(a.series[2].values.iter().any(|v| *v > 0.0), "so does the way back");
}

#[test]
fn test_advancing_a_few_events_at_a_time_gives_the_same_run_event_for_event() {
    // The Python binding advances in counts of events between looks at
    // Ctrl-C: wherever the counts end (inside a stretch an ABR source
    // sends ahead, among simultaneous events), the run must be the one
    // run of a single advance, with the same number of events.
    let reference = tcp_over_abr(true).run().unwrap();
    for step in [1, 7, 1000] {
        let mut sim = tcp_over_abr(true);
        let mut steps = 0u64;
        while !sim.advance_events(sim.end(), step) {
            steps += 1;
        }
        assert!(reference.events - steps * step < step, "{steps} steps of {step}: each stopped at the count");
        assert!(sim.advance_events(sim.end(), step), "nothing is left");
        assert_eq!(sim.run().unwrap(), reference, "in steps of {step} events");
    }
}

#[test]
fn test_frames_waiting_at_abr_sources_are_held_without_a_pdu_entry_and_counted_in_flight() {
    // Greedy UDP offers each VC three times its share: frames pile up at
    // the ABR sources, with no PDU entry until their first cell goes
    // (`sim/abr.rs`, "Frames held"). The results still count them as sent
    // and in flight, UDP counts none of them lost, and the cells balance.
    let erica = ControlConfig::Erica(EricaParams::erica_plus_97_0177r2());
    let mut sim = greedy_abr(3, Duration::from_ms(1), erica, 1, |_| {});
    sim.advance_to(SimTime::ZERO + Duration::from_ms(900));
    let fp = sim.footprint();
    assert!(fp.datagrams_waiting > 1000 && fp.pdus_live * 10 < fp.datagrams_waiting, "{fp:?}");
    let r = sim.run().unwrap();
    assert_eq!(r.switch_cells_dropped, 0);
    assert!(r.frames.in_flight > 1000, "{:?}", r.frames);
    assert_eq!(r.frames.sent, r.frames.delivered + r.frames.lost + r.frames.in_flight, "{:?}", r.frames);
    assert_eq!(r.frames.lost, 0);
    for u in &r.udp_flows {
        assert!(u.received > 0 && u.lost == 0, "{u:?}");
    }
}

/// `n` persistent ABR sources src_i -> sw1 -> sw2 -> dst_i, the i-th from
/// `i` x 100 ms, every switch port running `control`.
fn persistent_abr(n: usize, control: ControlConfig, elide: bool) -> Simulation {
    let source = |b: &mut NetworkBuilder, i: usize, vc: &VcHandle| {
        let start = SimTime::ZERO + Duration::from_ms(100 * i as u64);
        b.add_abr_persistent(&format!("p{i}"), vc, start).unwrap();
    };
    abr_network(n, Duration::from_us(500), control, 1, source, |b| b.set_event_elision(elide))
}

#[test]
fn test_persistent_sources_send_at_their_acr_and_match_the_reference() {
    // Two persistent sources under ERICA (U = 0.9): each gets half the
    // target, the first sends at its ACR (what it sent is its mean ACR
    // over the run, less one cell in Nrm for its FRMs), and its sink gets what
    // was sent but the cells still in flight. The run is the reference's.
    let control = ControlConfig::Erica(EricaParams::erica(0.9));
    let mut a = persistent_abr(2, control.clone(), true).run().unwrap();
    let mut reference = persistent_abr(2, control, false).run().unwrap();
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference);
    let link = cell_rate(sts3c());
    for (i, app) in a.cell_sources.iter().enumerate() {
        let e = a.abr.iter().find(|e| e.name == format!("vc{i}:forward")).unwrap();
        assert!((e.acr_bps / CELL_BITS as f64 / (0.9 * link / 2.0) - 1.0).abs() < 0.05, "{e:?}");
        assert_eq!(app.cells_sent, e.data_cells, "{app:?}");
        if i == 0 {
            // (The second's mean ACR counts its ICR before it started.)
            let offered = e.mean_acr_bps / CELL_BITS as f64 * 31.0 / 32.0;
            let sent = app.cells_sent as f64;
            assert!((sent / offered - 1.0).abs() < 0.02, "{sent} cells/s sent against {offered} at its ACR");
        }
        assert!(app.cells_received <= app.cells_sent && app.cells_received + 2_000 > app.cells_sent, "{app:?}");
        assert_eq!(app.sources, 1);
    }
    // The second starts at 100 ms: it sent for 0.9 s, the first for 1 s.
    assert!(a.cell_sources[1].cells_sent < a.cell_sources[0].cells_sent);
}

#[test]
fn test_a_persistent_source_hears_efci_through_its_raw_cells() {
    // Binary feedback: the destination sets CI in the BRMs from the EFCI
    // of the data cells before each FRM, so the raw cells of a persistent
    // source must reach it in order with the RM cells. Two sources on an
    // EFCI switch: the queue rises past the threshold, the sources are
    // told so, and their ACRs fall below PCR.
    let control = ControlConfig::Efci(EfciParams { threshold: 100 });
    let r = persistent_abr(2, control, true).run().unwrap();
    let pcr = cell_rate(sts3c()) * CELL_BITS as f64;
    assert!(r.abr.iter().filter(|e| e.name.ends_with(":forward")).all(|e| e.mean_acr_bps < 0.9 * pcr), "{:?}", r.abr);
}
