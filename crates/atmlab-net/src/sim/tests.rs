//! End-to-end runs of small networks.

use super::*;
use crate::aal5::Encapsulation;
use crate::atm::{DropPolicy, PortConfig, Queueing, SchedulerKind, ServiceCategory};
use crate::ids::{ConnId, FlowId};
use crate::tcp::{TcpConfig, TcpVariant};
use atmlab_engine::BitRate;
use atmlab_engine::RngStreams;

pub(crate) fn oc3() -> BitRate {
    BitRate::from_bps(155_520_000).unwrap()
}

pub(crate) fn switch_port(buffer: u32) -> PortConfig {
    PortConfig {
        queueing: Queueing::PerCategory,
        buffer: Some(buffer),
        class_buffers: [None; 4],
        policies: [DropPolicy::default(); 4],
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    }
}

/// N sources -> sw1 -> sw2 -> N destinations, as in 97-0424 Fig. 3.
pub(crate) fn nsource(n: usize, delay: Duration, buffer: u32, tcp: &TcpConfig, seconds: u64) -> Simulation {
    nsource_with(n, delay, buffer, tcp, seconds, true)
}

fn nsource_with(n: usize, delay: Duration, buffer: u32, tcp: &TcpConfig, seconds: u64, pipelining: bool) -> Simulation {
    nsource_probed(n, delay, buffer, tcp, seconds, pipelining, |_| ())
}

fn nsource_probed(
    n: usize,
    delay: Duration,
    buffer: u32,
    tcp: &TcpConfig,
    seconds: u64,
    pipelining: bool,
    more: impl FnOnce(&mut NetworkBuilder),
) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(1, 0));
    b.set_event_elision(pipelining);
    let sw1 = NodeRef::Switch(b.add_switch("sw1"));
    let sw2 = NodeRef::Switch(b.add_switch("sw2"));
    let host = PortConfig::host_adapter;
    b.add_link(sw1, sw2, oc3(), delay, switch_port(buffer), switch_port(buffer)).unwrap();
    for i in 0..n {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw1, oc3(), delay, host(), switch_port(buffer)).unwrap();
        b.add_link(sw2, d, oc3(), delay, switch_port(buffer), host()).unwrap();
        let vc = b.add_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
        b.add_tcp(&format!("tcp{i}"), &vc, tcp.clone(), SimTime::ZERO, None).unwrap();
    }
    let p = b.port_toward(sw1, sw2).unwrap();
    b.set_efficiency_port(p);
    more(&mut b);
    b.build(RunMeta::default(), Duration::from_secs(seconds))
}

#[test]
fn test_single_connection_reaches_the_payload_ceiling() {
    // One TCP alone, window far above the bandwidth-delay product: the
    // bottleneck runs full and goodput is 99%+ of 125.2 Mbit/s.
    let tcp = TcpConfig { window: 1 << 20, ..TcpConfig::classic() };
    let r = nsource(1, Duration::from_us(5), 100_000, &tcp, 2).run().unwrap();
    let c = &r.connections[0];
    assert_eq!(c.timeouts + c.retransmitted_segments, 0, "{c:?}");
    let ceiling = 155.52e6 * 512.0 / 636.0;
    // Steady state: the whole run minus slow start (a few ms) is at the
    // ceiling; over 2 s that is well above 99%.
    assert!(c.goodput_bps > 0.99 * ceiling, "goodput {} vs ceiling {}", c.goodput_bps, ceiling);
    assert!(r.efficiency.unwrap() <= 1.0);
}

#[test]
fn test_window_limited_connection_gets_window_over_rtt() {
    // WAN: 3 links of 5 ms. A 64 KB window over a 30 ms RTT is far below the
    // link rate, so throughput = window / RTT (the RTT includes the
    // transmission of one window's first segment and of the ACK).
    let tcp = TcpConfig { window: 65_535, ..TcpConfig::classic() };
    let r = nsource(1, Duration::from_ms(5), 100_000, &tcp, 20).run().unwrap();
    let c = &r.connections[0];
    let window = (65_535 / 512 * 512) as f64; // full segments only
    let cell = 424.0 / 155.52e6;
    let rtt = 0.030 + 3.0 * 12.0 * cell + 3.0 * 2.0 * cell;
    let expected = window * 8.0 / rtt;
    // Slow start to 64 KB takes 7 RTTs of the 20 s run: excluded by
    // measuring the rate over the run minus the ramp.
    let ramp = 8.0 * rtt;
    let steady = c.bytes_delivered as f64 * 8.0 / (20.0 - ramp);
    assert!((steady / expected - 1.0).abs() < 0.02, "steady {steady} vs window/RTT {expected}");
}

#[test]
fn test_congested_run_conserves_cells_and_is_deterministic() {
    let tcp = TcpConfig { variant: TcpVariant::Reno, ..TcpConfig::classic() };
    let a = nsource(5, Duration::from_us(5), 1000, &tcp, 1).run().unwrap();
    let b = nsource(5, Duration::from_us(5), 1000, &tcp, 1).run().unwrap();
    assert_eq!(a, b);
    assert!(a.switch_cells_dropped > 0, "the 1000-cell buffer overflows");
    assert!(a.connections.iter().map(|c| c.retransmitted_segments).sum::<u64>() > 0);
    assert!(a.efficiency.unwrap() > 0.3 && a.efficiency.unwrap() <= 1.0);
}

#[test]
fn test_event_elision_gives_the_same_run_as_the_reference() {
    // The optimisations (pipelined ports, eager hops, frame-end events into
    // hosts) must not change a single number: same drops, queues, goodputs
    // and frame counts; only the number of events differs.
    for (delay, buffer, variant) in [
        (Duration::from_us(5), 1000, TcpVariant::Reno),
        (Duration::from_us(5), 300, TcpVariant::Tahoe),
        (Duration::from_ms(1), 2000, TcpVariant::Vanilla),
    ] {
        let tcp = TcpConfig { variant, ..TcpConfig::classic() };
        let fast = nsource_with(5, delay, buffer, &tcp, 1, true);
        let slow = nsource_with(5, delay, buffer, &tcp, 1, false);
        use crate::atm::PortMode;
        assert!(fast.ports().iter().all(|p| p.mode() == PortMode::Pipelined), "all ports are FIFOs here");
        assert!(slow.ports().iter().all(|p| p.mode() == PortMode::Slotted));
        let mut a = fast.run().unwrap();
        let mut b = slow.run().unwrap();
        assert!(a.events * 2 < b.events, "elision saves most events");
        a.events = 0;
        b.events = 0;
        assert_eq!(a, b, "{delay} {buffer} {variant:?}");
        assert!(a.switch_cells_dropped > 0, "the case exercises drops");
    }
}

fn probes(b: &mut NetworkBuilder) {
    let sw2 = NodeRef::Switch(crate::ids::SwitchId(1));
    let dst0 = NodeRef::Host(crate::ids::HostId(1));
    let q = b.port_toward(sw2, dst0).unwrap();
    let ms = Duration::from_ms(1);
    for kind in [ProbeKind::Queue, ProbeKind::Drops, ProbeKind::Utilization] {
        let target = ProbeTarget::Port(q, kind.of_port().unwrap());
        b.add_probe(ProbeSpec { name: kind.name().into(), target, interval: ms });
    }
    for kind in [ProbeKind::Cwnd, ProbeKind::Goodput, ProbeKind::Rto, ProbeKind::Srtt] {
        let target = ProbeTarget::Conn(crate::ids::ConnId(0), kind.of_connection().unwrap());
        b.add_probe(ProbeSpec { name: kind.name().into(), target, interval: ms });
    }
}

#[test]
fn test_probes_sample_exactly_and_agree_with_the_reference() {
    let tcp = TcpConfig::classic();
    let delay = Duration::from_us(5);
    let fast = nsource_probed(3, delay, 200, &tcp, 1, true, probes);
    // sw2->dst0 would be an eager target; being probed, it must not be.
    let mut a = fast.run().unwrap();
    let mut b = nsource_probed(3, delay, 200, &tcp, 1, false, probes).run().unwrap();
    assert_eq!(a.series.len(), 7);
    for s in &a.series {
        assert_eq!(s.t_s.len(), 1000, "{}: one sample per ms over 1 s", s.name);
        assert_eq!(s.t_s[0], 0.0);
        assert_eq!(s.t_s[999], 0.999);
    }
    let util = &a.series[2].values;
    assert!(util.iter().all(|u| (0.0..=1.0).contains(u)));
    let goodput = &a.series[4].values;
    let total: f64 = goodput.iter().sum::<f64>() * 1e-3 / 8.0;
    let delivered = a.connections[0].bytes_delivered as f64;
    assert!(total <= delivered && total > 0.95 * delivered, "{total} vs {delivered}");
    // Before the first RTT sample: the initial RTO (3 s) and no srtt; then
    // whole ticks (100 ms), never below two, times the backoff; srtt in
    // eighths of a tick (BSD's scaled integer).
    let (rto, srtt) = (&a.series[5].values, &a.series[6].values);
    assert_eq!((rto[0], srtt[0]), (3.0, 0.0));
    assert!(rto.iter().all(|&r| r >= 0.2 - 1e-12 && ((r * 10.0).round() - r * 10.0).abs() < 1e-9), "{rto:?}");
    assert!(srtt[1..].iter().all(|&s| s > 0.0 && ((s * 80.0).round() - s * 80.0).abs() < 1e-9), "{srtt:?}");
    a.events = 0;
    b.events = 0;
    assert_eq!(a, b, "probes see the same network in both modes");
}

fn lossy_voice(loss: LossModel, datagrams: u64) -> RunResult {
    lossy_voice_seeded(loss, datagrams, 5)
}

fn lossy_voice_seeded(loss: LossModel, datagrams: u64, seed: u64) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(seed, 0));
    let a = NodeRef::Host(b.add_host("a", 9180, Encapsulation::Null));
    let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::Null));
    let (az, _) =
        b.add_link(a, z, oc3(), Duration::from_us(5), PortConfig::host_adapter(), PortConfig::host_adapter()).unwrap();
    b.set_link_loss(az, loss);
    let vc = b.add_vc(&[a, z], ServiceCategory::Ubr, None).unwrap();
    // 8 bytes of data: 8 + 28 + 8 = 44 bytes, one cell per datagram.
    let params = CbrParams {
        payload: 8,
        interval: Duration::from_us(10),
        start: SimTime::ZERO,
        count: Some(datagrams),
        max_payload: None,
        record: None,
    };
    b.add_udp_cbr("u", &vc, params).unwrap();
    b.build(RunMeta::default(), Duration::from_us(10 * datagrams + 100)).run().unwrap()
}

#[test]
fn test_periodic_link_loss_drops_one_cell_in_n() {
    let r = lossy_voice(LossModel::Periodic(500), 10_000);
    assert_eq!(r.link_cells_lost, 20);
    assert_eq!(r.udp_flows[0].lost, 20);
    assert_eq!(r.udp_flows[0].received, 9_980);
}

#[test]
fn test_bernoulli_link_loss_has_the_set_probability() {
    let r = lossy_voice(LossModel::Bernoulli(0.01), 100_000);
    let lost = r.udp_flows[0].lost as f64;
    // Binomial(100000, 0.01): mean 1000, sd 31.5; 4 sd either side.
    assert!((lost - 1000.0).abs() < 126.0, "{lost}");
    assert_eq!(r.link_cells_lost, r.udp_flows[0].lost);
}

/// 97-0424's N-source configuration with its end-to-end ON/OFF VBR source
/// (100% of the link while ON) sharing the bottleneck.
fn with_vbr(gr: Option<(u64, u64)>, on: Duration, seconds: u64) -> Simulation {
    with_vbr_mode(gr, on, seconds, true, crate::atm::DropPolicy::default())
}

fn with_vbr_mode(
    gr: Option<(u64, u64)>,
    on: Duration,
    seconds: u64,
    elide: bool,
    ubr_policy: crate::atm::DropPolicy,
) -> Simulation {
    with_vbr_on(gr, on, seconds, elide, ubr_policy, oc3(), Duration::from_us(5), |_| ())
}

/// [`with_vbr_mode`] on links of `rate` and `delay` (the VBR source's
/// peak), with `more` added to the network.
#[allow(clippy::too_many_arguments)]
fn with_vbr_on(
    gr: Option<(u64, u64)>,
    on: Duration,
    seconds: u64,
    elide: bool,
    ubr_policy: crate::atm::DropPolicy,
    rate: BitRate,
    delay: Duration,
    more: impl FnOnce(&mut NetworkBuilder),
) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(3, 0));
    b.set_event_elision(elide);
    let sw1 = NodeRef::Switch(b.add_switch("sw1"));
    let sw2 = NodeRef::Switch(b.add_switch("sw2"));
    let mut port = switch_port(1000);
    port.class_buffers[ServiceCategory::Vbr.index()] = Some(1_000_000);
    port.policies[ServiceCategory::Ubr.index()] = ubr_policy;
    if let Some((n, d)) = gr {
        port.scheduler = SchedulerKind::GuaranteedRate(crate::atm::GuaranteedRate::new(n, d, 3));
    }
    b.add_link(sw1, sw2, rate, delay, port.clone(), port.clone()).unwrap();
    let tcp = TcpConfig { variant: TcpVariant::Sack, ..TcpConfig::classic() };
    for i in 0..3 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw1, rate, delay, PortConfig::host_adapter(), port.clone()).unwrap();
        b.add_link(sw2, d, rate, delay, port.clone(), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
        b.add_tcp(&format!("tcp{i}"), &vc, tcp.clone(), SimTime::ZERO, None).unwrap();
    }
    let vs = NodeRef::Host(b.add_host("vbr_src", 9180, Encapsulation::Null));
    let vd = NodeRef::Host(b.add_host("vbr_dst", 9180, Encapsulation::Null));
    b.add_link(vs, sw1, rate, delay, PortConfig::host_adapter(), port.clone()).unwrap();
    b.add_link(sw2, vd, rate, delay, port.clone(), PortConfig::host_adapter()).unwrap();
    let vc = b.add_simplex_vc(&[vs, sw1, sw2, vd], ServiceCategory::Vbr, None).unwrap();
    assert!(b.add_tcp("no", &vc, tcp, SimTime::ZERO, None).is_err(), "TCP needs a duplex VC");
    b.add_onoff("vbr", &vc, OnOffParams { peak: rate, on, off: on, start: SimTime::ZERO }).unwrap();
    let p = b.port_toward(sw1, sw2).unwrap();
    b.set_efficiency_port(p);
    b.set_efficiency_capacity(EfficiencyCapacity::LeftByOnoff);
    more(&mut b);
    b.build(RunMeta::default(), Duration::from_secs(seconds))
}

#[test]
fn test_onoff_source_sends_exact_bursts_at_its_peak_rate() {
    let sim = with_vbr(None, Duration::from_ms(1), 1);
    use crate::atm::PortMode;
    let modes: Vec<_> = sim.ports().iter().map(|p| (p.name.clone(), p.mode())).collect();
    let mode = |n: &str| modes.iter().find(|(m, _)| m == n).unwrap().1;
    assert_eq!(mode("sw1->sw2"), PortMode::Slotted, "VBR and UBR share it");
    assert_eq!(mode("sw2->sw1"), PortMode::Pipelined, "the simplex VBR VC is not registered backwards");
    let r = sim.run().unwrap();
    let v = &r.cell_sources[0];
    // ON 1 ms at 155.52 Mbit/s: cells at k * 2.7263 us for k = 0..366 -> 367
    // per period; 500 periods in 1 s.
    assert_eq!(v.cells_sent, 367 * 500);
    assert_eq!(v.cells_received, v.cells_sent, "VBR has its own large buffer");
    assert!((v.mean_bps - 77.76e6).abs() < 1.0);
    let basis = r.efficiency_basis.unwrap();
    assert!((basis.background_bps - 77.76e6).abs() < 1.0);
    assert!((basis.max_goodput_bps - 77.76e6 * 512.0 / 636.0).abs() < 1.0, "80.5% of 50% of 155.52");
}

#[test]
fn test_guaranteed_rate_shares_the_bottleneck_during_vbr_bursts() {
    // 300 ms bursts at 100% of the link: with GR = 0 UBR is starved while VBR
    // is on; with GR = 0.5 VBR is smoothed to half the link and UBR gets the
    // rest. Both carry all of VBR's cells (its buffer is large).
    let strict = with_vbr(None, Duration::from_ms(300), 2).run().unwrap();
    let half = with_vbr(Some((1, 2)), Duration::from_ms(300), 2).run().unwrap();
    let bottleneck = |r: &RunResult| r.ports.iter().find(|p| p.name == "sw1->sw2").unwrap().clone();
    for r in [&strict, &half] {
        let vbr = bottleneck(r).categories["vbr"];
        assert_eq!(vbr.dropped, 0, "VBR loses nothing");
        assert!(r.cell_sources[0].cells_sent - vbr.cells_in <= 4, "all but the last few cells on the access link");
    }
    let v = &strict.cell_sources[0];
    assert!(
        v.cells_sent - v.cells_received <= 12,
        "strict priority never queues VBR: only the last cells are on links"
    );
    assert!(
        half.cell_sources[0].cells_received < half.cell_sources[0].cells_sent,
        "GR 0.5: the last burst is still queued"
    );
    assert!(bottleneck(&half).max_queue > bottleneck(&strict).max_queue, "GR queues VBR bursts");
    assert!(half.tcp_goodput_bps > 0.0 && strict.tcp_goodput_bps > 0.0);
}

#[test]
fn test_event_elision_with_vbr_gr_and_selective_drop_matches_the_reference() {
    use crate::atm::{DropPolicy, SelectiveDrop};
    let sd = DropPolicy::SelectiveDrop(SelectiveDrop { threshold: 900, z: 0.8, keep_end_of_frame: true });
    for (gr, policy) in [(None, DropPolicy::default()), (Some((1, 10)), sd)] {
        let mut a = with_vbr_mode(gr, Duration::from_ms(50), 1, true, policy).run().unwrap();
        let mut b = with_vbr_mode(gr, Duration::from_ms(50), 1, false, policy).run().unwrap();
        assert!(a.events * 2 < b.events, "{} vs {}", a.events, b.events);
        a.events = 0;
        b.events = 0;
        assert_eq!(a, b, "{gr:?}");
        assert!(a.switch_cells_dropped > 0);
    }
}

#[test]
fn test_slotted_ports_running_their_slots_late_give_the_reference_run() {
    // On long links the two-category bottleneck runs its slots when it is
    // next touched (one wake-up per ~1000 slots here, `atm/port.rs`): cells
    // offered, probes of its queues and utilization (which come after slots
    // at an instant, arrivals before), random loss on its link and the end
    // of the run must all see the port as with an event per slot. At 160
    // Mbit/s a cell takes 2.65 us exactly; with every slot grid at t = 0,
    // links of 1000 cell times and probes every 1000 cell times, cells
    // arrive and probes sample at the very instants slots start, so the
    // order of simultaneous events is tested too.
    use crate::atm::{DropPolicy, SelectiveDrop};
    let rate = BitRate::from_bps(160_000_000).unwrap();
    let cells = |n: u64| Duration::from_ps(2_650_000 * n);
    assert_eq!(rate.cell_time(), cells(1));
    let sd = DropPolicy::SelectiveDrop(SelectiveDrop { threshold: 900, z: 0.8, keep_end_of_frame: true });
    let probed = |b: &mut NetworkBuilder| {
        b.set_slot_phase(SlotPhase::Aligned);
        let (sw1, sw2) = (NodeRef::Switch(crate::ids::SwitchId(0)), NodeRef::Switch(crate::ids::SwitchId(1)));
        let q = b.port_toward(sw1, sw2).unwrap();
        b.set_link_loss(q, LossModel::Bernoulli(1e-4));
        let kinds = [ProbeKind::Queue, ProbeKind::VbrQueue, ProbeKind::Drops, ProbeKind::Utilization];
        for kind in kinds {
            let target = ProbeTarget::Port(q, kind.of_port().unwrap());
            b.add_probe(ProbeSpec { name: kind.name().into(), target, interval: cells(1000) });
        }
        // A probed port takes no cell ahead of time: the bottleneck's TCP
        // cells reach sw2 by arrival events, which a slot run late must
        // still schedule before their time (the queue refuses an event of
        // an earlier class at the instant it has reached).
        for i in 0..3 {
            let dst = NodeRef::Host(crate::ids::HostId(2 * i + 1));
            let target = ProbeTarget::Port(b.port_toward(sw2, dst).unwrap(), PortQuantity::Queue);
            b.add_probe(ProbeSpec { name: format!("dst{i}"), target, interval: cells(1000) });
        }
    };
    // Links of 100 cell times too: the TCP sources then fall silent while
    // the bottleneck still holds a link's worth of cells, so wake-ups, not
    // offers, run slots whose cells find their link empty (with a wake-up
    // at the cells' very arrival instant the queue refuses the arrival).
    let cases = [(None, DropPolicy::default(), 1000), (Some((1, 10)), sd, 1000), (None, DropPolicy::default(), 100)];
    for (gr, policy, links) in cases {
        let run = |elide| with_vbr_on(gr, Duration::from_ms(50), 1, elide, policy, rate, cells(links), probed);
        let fast = run(true);
        let lazy: Vec<_> = fast.ports().iter().filter(|p| p.is_lazy()).map(|p| p.name.clone()).collect();
        // (Selective Drop counts per-VC queues: every switch port with more than
        // one VC is slotted.)
        assert!(lazy.iter().any(|p| p == "sw1->sw2"), "the bottleneck runs its slots late: {lazy:?}");
        // It pulls the arrivals of its host links too (`sim/network/pull.rs`).
        let pulling: Vec<_> = fast.pulling_ports().iter().map(|p| fast.ports()[p.idx()].name.clone()).collect();
        assert!(pulling.iter().any(|p| p == "sw1->sw2"), "{pulling:?}");
        let mut a = fast.run().unwrap();
        let mut b = run(false).run().unwrap();
        if links == 1000 {
            // With an event per slot at the bottleneck the run takes about
            // 0.68 events per cell-hop (measured); with its slots run late,
            // 0.36.
            assert!(a.events * 2 < a.cell_hops, "{} events, {} cell-hops", a.events, a.cell_hops);
        }
        a.events = 0;
        b.events = 0;
        assert_eq!(a, b, "{gr:?} {links}");
        assert!(a.switch_cells_dropped > 0 && a.link_cells_lost > 0, "the case exercises drops and loss");
        assert!(a.series[3].values.iter().any(|u| *u > 0.9), "the bottleneck is busy");
    }
}

#[test]
fn test_a_top_category_passed_through_gives_the_reference_run() {
    // The bottleneck with strict priority or GR 0 passes its VBR cells
    // through at their arrival (`Port::pass_top_through`): each goes on the
    // link at once, holding its slot, and counts as queued until the slot
    // runs. On a lossless link, with every slot grid at t = 0 (the VBR
    // source sends at the links' rate, so its cells reach the bottleneck at
    // the very instants its slots start) and probes of its queues and
    // utilization at those instants, every number must be the reference's:
    // drops of UBR behind VBR bursts, queues, the UBR and VBR queues'
    // integrals and largest values, utilization.
    use crate::atm::{DropPolicy, SelectiveDrop};
    let rate = BitRate::from_bps(160_000_000).unwrap();
    let cells = |n: u64| Duration::from_ps(2_650_000 * n);
    let sd = DropPolicy::SelectiveDrop(SelectiveDrop { threshold: 900, z: 0.8, keep_end_of_frame: true });
    // Aligned grids, or the default random phases, under which VBR cells
    // wait for their slots.
    let probed = |aligned: bool| {
        move |b: &mut NetworkBuilder| {
            if aligned {
                b.set_slot_phase(SlotPhase::Aligned);
            }
            let (sw1, sw2) = (NodeRef::Switch(crate::ids::SwitchId(0)), NodeRef::Switch(crate::ids::SwitchId(1)));
            let q = b.port_toward(sw1, sw2).unwrap();
            let kinds = [ProbeKind::Queue, ProbeKind::VbrQueue, ProbeKind::Drops, ProbeKind::Utilization];
            for kind in kinds {
                let target = ProbeTarget::Port(q, kind.of_port().unwrap());
                b.add_probe(ProbeSpec { name: kind.name().into(), target, interval: cells(1000) });
            }
        }
    };
    let cases = [
        (None, DropPolicy::default(), 1000, true),
        (Some((0, 1)), sd, 1000, true),
        (None, sd, 100, false),
        (Some((0, 1)), DropPolicy::default(), 3, false),
        (None, DropPolicy::default(), 1000, false),
    ];
    for (gr, policy, links, aligned) in cases {
        let run = |elide| with_vbr_on(gr, Duration::from_ms(30), 1, elide, policy, rate, cells(links), probed(aligned));
        let fast = run(true);
        let passing: Vec<_> = fast.ports().iter().filter(|p| p.passes_top()).map(|p| p.name.clone()).collect();
        assert!(passing.iter().any(|p| p == "sw1->sw2"), "the bottleneck passes VBR through: {passing:?}");
        let mut a = fast.run().unwrap();
        let mut b = run(false).run().unwrap();
        a.events = 0;
        b.events = 0;
        assert_eq!(a, b, "{gr:?} {links}");
        let bottleneck = a.ports.iter().find(|p| p.name == "sw1->sw2").unwrap();
        assert!(bottleneck.categories["ubr"].dropped > 0, "UBR overflows behind VBR bursts");
        let vbr = bottleneck.categories["vbr"];
        assert!(vbr.max_queue >= 1 && (aligned || vbr.mean_queue > 0.0), "VBR cells wait for their slots: {vbr:?}");
        assert!(a.series[3].values.iter().any(|u| *u > 0.9), "the bottleneck is busy");
    }
    // GR 0.1 gives UBR slots while VBR waits: VBR is not passed through.
    let gr = with_vbr_on(Some((1, 10)), Duration::from_ms(30), 1, true, sd, rate, cells(1000), probed(true));
    assert!(gr.ports().iter().all(|p| !p.passes_top()));
}

#[test]
fn test_clock_tolerance_gives_each_link_its_own_rate() {
    let tcp = TcpConfig::classic();
    let run = |ppm: Option<f64>, elide: bool| {
        nsource_probed(3, Duration::from_us(5), 1000, &tcp, 1, elide, |b| {
            if let Some(ppm) = ppm {
                b.set_clock_tolerance(ppm).unwrap();
            }
        })
        .run()
        .unwrap()
    };
    // Zero tolerance is the exact model, bit for bit.
    assert_eq!(run(Some(0.0), true), run(None, true));
    let exact = run(None, true);
    assert!(exact.ports.iter().all(|p| p.rate_bps == 155_520_000));
    // 50 ppm: every direction within +/-50 ppm (+/-7776 bit/s), each its own.
    let drift = run(Some(50.0), true);
    let rates: std::collections::BTreeSet<u64> = drift.ports.iter().map(|p| p.rate_bps).collect();
    assert_eq!(rates.len(), drift.ports.len(), "independent streams: all different");
    assert!(rates.iter().all(|&r| r.abs_diff(155_520_000) <= 7_776), "{rates:?}");
    assert!(drift.ports.iter().all(|p| p.utilization <= 1.0));
    // The fast paths follow the drifted clocks exactly.
    let mut slow = run(Some(50.0), false);
    let mut fast = drift;
    (slow.events, fast.events) = (0, 0);
    assert_eq!(fast, slow);
    let mut b = NetworkBuilder::new(RngStreams::new(1, 0));
    for bad in [-1.0, 1000.5, f64::NAN] {
        assert!(b.set_clock_tolerance(bad).is_err(), "{bad}");
    }
}

fn fragmenting_udp(payload: u32, mtu: u32, rule: crate::ip::Fragmentation, loss: Option<LossModel>) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(5, 0));
    let a = b.add_host("a", mtu, Encapsulation::Null);
    b.set_fragmentation(a, rule);
    let (a, z) = (NodeRef::Host(a), NodeRef::Host(b.add_host("z", mtu, Encapsulation::Null)));
    let (az, _) =
        b.add_link(a, z, oc3(), Duration::from_us(5), PortConfig::host_adapter(), PortConfig::host_adapter()).unwrap();
    if let Some(loss) = loss {
        b.set_link_loss(az, loss);
    }
    let vc = b.add_vc(&[a, z], ServiceCategory::Ubr, None).unwrap();
    let params = CbrParams {
        payload,
        interval: Duration::from_ms(10),
        start: SimTime::ZERO,
        count: Some(100),
        max_payload: None,
        record: None,
    };
    b.add_udp_cbr("u", &vc, params).unwrap();
    b.build(RunMeta::default(), Duration::from_secs(2)).run().unwrap()
}

#[test]
fn test_udp_datagrams_larger_than_the_mtu_are_fragmented_and_reassembled() {
    use crate::ip::{Fragmentation, Proto, wire};
    // 9000 bytes at MTU 48, Berkeley: 376 fragments and 751 cells each
    // (van den Bergh Table 6), all delivered.
    let r = fragmenting_udp(9000, 48, Fragmentation::Berkeley, None);
    let f = &r.udp_flows[0];
    assert_eq!((f.sent, f.received, f.fragments_sent, f.lost), (100, 100, 37_600, 0));
    assert_eq!(r.ports[0].cells_out, 75_100);
    assert_eq!(r.frames.delivered, 37_600);
    let w = wire(9000, Proto::Udp, 48, Encapsulation::Null, Fragmentation::Berkeley);
    assert_eq!((w.datagrams, w.cells), (376, 751));
    // RFC 791 at MTU 1500: 8 fragments.
    let r = fragmenting_udp(9000, 1500, Fragmentation::Rfc791, None);
    assert_eq!((r.udp_flows[0].received, r.udp_flows[0].fragments_sent), (100, 700));
    // One cell in 1000 lost: every datagram (751 cells) loses a fragment in
    // some of its frames; a lost cell kills its frame and so the datagram.
    let r = fragmenting_udp(9000, 48, Fragmentation::Berkeley, Some(LossModel::Periodic(1000)));
    let f = &r.udp_flows[0];
    assert_eq!(r.link_cells_lost, 75);
    assert!(f.received <= 25, "each lost cell is in a different datagram: {f:?}");
    assert_eq!(f.received + f.lost, 100);
}

/// UDP a -> sw -> b: 4000-byte datagrams (85 cells with LLC/SNAP) every
/// 10 ms, 3.6 Mbit/s of cells, offered at the 155.52 Mbit/s line rate.
fn policed_udp(
    shape: Option<BitRate>,
    contract: crate::atm::Contract,
    clp_threshold: Option<u32>,
    elide: bool,
) -> RunResult {
    use crate::atm::UpcAction;
    let mut b = NetworkBuilder::new(RngStreams::new(3, 0));
    b.set_event_elision(elide);
    let a = b.add_host("a", 9180, Encapsulation::LlcSnap);
    let z = b.add_host("z", 9180, Encapsulation::LlcSnap);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let (a, z) = (NodeRef::Host(a), NodeRef::Host(z));
    let port = PortConfig { clp_threshold, ..switch_port(1000) };
    b.add_link(a, sw, oc3(), Duration::from_us(5), PortConfig::host_adapter(), port.clone()).unwrap();
    b.add_link(sw, z, oc3(), Duration::from_us(5), port, PortConfig::host_adapter()).unwrap();
    if let Some(peak) = shape {
        b.set_adapter_peak(crate::ids::HostId(0), peak).unwrap();
    }
    let vc = b.add_vc(&[a, sw, z], ServiceCategory::Vbr, None).unwrap();
    b.add_upc("pvc", &vc, 1, contract, UpcAction::Discard).unwrap();
    let params = CbrParams {
        payload: 4000,
        interval: Duration::from_ms(10),
        start: SimTime::ZERO,
        count: None,
        max_payload: None,
        record: None,
    };
    b.add_udp_cbr("u", &vc, params).unwrap();
    b.build(RunMeta::default(), Duration::from_secs(1)).run().unwrap()
}

/// Hosts `a` and `b` send UDP to `z` through a switch port with a queue
/// per VC and a CLP threshold; `a`'s VC is policed where it enters the
/// switch (tagging, or discarding, what breaks a 10 Mbit/s PCR).
fn policed_udp_per_vc(action: crate::atm::UpcAction, elide: bool) -> RunResult {
    use crate::atm::{Conformance, Contract};
    let mut b = NetworkBuilder::new(RngStreams::new(3, 0));
    b.set_event_elision(elide);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::LlcSnap));
    let port = PortConfig { queueing: Queueing::PerVc, clp_threshold: Some(20), ..switch_port(1000) };
    let (out, _) = b.add_link(sw, z, oc3(), Duration::from_us(5), port.clone(), PortConfig::host_adapter()).unwrap();
    b.shape_port(out, BitRate::from_bps(50_000_000).unwrap()).unwrap();
    let pcr = BitRate::from_bps(10_000_000).unwrap();
    for name in ["a", "b"] {
        let h = NodeRef::Host(b.add_host(name, 9180, Encapsulation::LlcSnap));
        b.add_link(h, sw, oc3(), Duration::from_us(5), PortConfig::host_adapter(), port.clone()).unwrap();
        let vc = b.add_vc(&[h, sw, z], ServiceCategory::Ubr, None).unwrap();
        if name == "a" {
            let cbr = Contract { conformance: Conformance::Cbr1, pcr, cdvt: Duration::ZERO, scr: None };
            b.add_upc("pvc", &vc, 1, cbr, action).unwrap();
        }
        let interval = Duration::from_us(if name == "a" { 700 } else { 1100 });
        let params =
            CbrParams { payload: 4000, interval, start: SimTime::ZERO, count: None, max_payload: None, record: None };
        b.add_udp_cbr(name, &vc, params).unwrap();
    }
    b.build(RunMeta::default(), Duration::from_ms(300)).run().unwrap()
}

#[test]
fn test_policed_frames_into_a_port_with_a_queue_per_vc_give_the_reference_run() {
    // The port offers a frame's later cells the short way
    // (`Port::offer_later`), but not those of a VC policed where the link
    // ends: the policer must see, tag or discard each of them.
    use crate::atm::UpcAction;
    for action in [UpcAction::Tag, UpcAction::Discard] {
        let (mut fast, mut slow) = (policed_udp_per_vc(action, true), policed_udp_per_vc(action, false));
        let u = &fast.upc[0];
        assert!(u.tagged + u.discarded > 0, "{action:?}: {u:?}");
        let sw = fast.ports.iter().find(|p| p.name == "sw->z").unwrap();
        assert!(action == UpcAction::Discard || sw.dropped_clp > 0, "{sw:?}");
        (fast.events, slow.events) = (0, 0);
        assert_eq!(fast, slow, "{action:?}");
    }
}

#[test]
fn test_upc_discards_an_unshaped_source_and_passes_a_shaped_one() {
    use crate::atm::{Conformance, Contract};
    let pcr = BitRate::from_bps(10_000_000).unwrap();
    let cbr = Contract { conformance: Conformance::Cbr1, pcr, cdvt: Duration::ZERO, scr: None };
    // At line rate, 85-cell bursts break a 10 Mbit/s PCR: most cells go,
    // and with them every datagram.
    let r = policed_udp(None, cbr, None, true);
    let u = &r.upc[0];
    assert_eq!((u.vc.as_str(), u.at.as_str(), u.conformance), ("pvc", "sw", "cbr.1"));
    assert_eq!(u.cells, 100 * 85);
    assert!(u.discarded > u.cells / 2, "{u:?}");
    assert_eq!(r.udp_flows[0].received, 0);
    // Shaped to the PCR by the adapter: every cell conforms.
    let r = policed_udp(Some(pcr), cbr, None, true);
    assert_eq!((r.upc[0].discarded, r.udp_flows[0].received), (0, 100));
    let host = r.ports.iter().find(|p| p.name == "a->sw").unwrap();
    assert_eq!(host.rate_bps, 10_000_000);
    // VBR.1 with SCR 2 Mbit/s and MBS 32: an 85-cell burst at the PCR
    // exceeds the burst size, so datagrams lose cells again.
    let scr = BitRate::from_bps(2_000_000).unwrap();
    let vbr = Contract {
        conformance: Conformance::Vbr1,
        pcr,
        cdvt: Duration::ZERO,
        scr: Some((scr, Contract::burst_tolerance(pcr, scr, 32))),
    };
    let r = policed_udp(Some(pcr), vbr, None, true);
    assert!(r.upc[0].discarded > 0 && r.udp_flows[0].received == 0);
    // The fast paths police the same cells.
    let (mut fast, mut slow) = (policed_udp(None, cbr, None, true), policed_udp(None, cbr, None, false));
    (fast.events, slow.events) = (0, 0);
    assert_eq!(fast, slow);
}

#[test]
fn test_vbr3_tags_and_clp_selective_discard_drops_the_tagged_cells() {
    use crate::atm::{Conformance, Contract};
    let pcr = BitRate::from_bps(10_000_000).unwrap();
    let scr = BitRate::from_bps(2_000_000).unwrap();
    let bt = Contract::burst_tolerance(pcr, scr, 32);
    let vbr3 = Contract { conformance: Conformance::Vbr3, pcr, cdvt: Duration::ZERO, scr: Some((scr, bt)) };
    // No CLP threshold: tagged cells are carried, nothing is lost.
    let r = policed_udp(Some(pcr), vbr3, None, true);
    let u = &r.upc[0];
    assert!(u.tagged > 0 && u.discarded == 0, "{u:?}");
    assert_eq!(r.udp_flows[0].received, 100);
    // A CLP threshold of 0 cells: every tagged cell is dropped at the port.
    let r = policed_udp(Some(pcr), vbr3, Some(0), true);
    let sw = r.ports.iter().find(|p| p.name == "sw->z").unwrap();
    assert_eq!(sw.dropped_clp, r.upc[0].tagged);
    assert_eq!(r.udp_flows[0].received, 0);
}

/// Two cell sources at 6 and 9 Mbit/s share a port shaped to 10 Mbit/s
/// with a `buffer`-cell tail-drop buffer; returns the cells each delivered.
fn two_sources_through_a_shaped_port(queueing: Queueing, buffer: u32, elide: bool) -> (u64, u64) {
    let mut b = NetworkBuilder::new(RngStreams::new(9, 0));
    b.set_event_elision(elide);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::LlcSnap));
    let port = PortConfig { queueing, ..switch_port(buffer) };
    let (out, _) = b.add_link(sw, z, oc3(), Duration::from_us(5), port.clone(), PortConfig::host_adapter()).unwrap();
    b.shape_port(out, BitRate::from_bps(10_000_000).unwrap()).unwrap();
    for (name, mbps) in [("a", 6), ("b", 9)] {
        let h = NodeRef::Host(b.add_host(name, 9180, Encapsulation::LlcSnap));
        b.add_link(h, sw, oc3(), Duration::from_us(5), PortConfig::host_adapter(), port.clone()).unwrap();
        let vc = b.add_simplex_vc(&[h, sw, z], ServiceCategory::Ubr, None).unwrap();
        let peak = BitRate::from_bps(mbps * 1_000_000).unwrap();
        let on = OnOffParams { peak, on: Duration::from_secs(2), off: Duration::from_secs(1), start: SimTime::ZERO };
        b.add_onoff(name, &vc, on).unwrap();
    }
    let r = b.build(RunMeta::default(), Duration::from_secs(1)).run().unwrap();
    (r.cell_sources[0].cells_received, r.cell_sources[1].cells_received)
}

#[test]
fn test_per_vc_round_robin_shares_a_port_equally() {
    // 10 Mbit/s = 23585 cells/s, both queues always backlogged (a buffer
    // larger than the run's excess). FIFO: shares follow the offered loads,
    // 6 : 9; round robin: half each.
    let (a, b) = two_sources_through_a_shaped_port(Queueing::PerCategory, 100_000, true);
    assert!((a as f64 / (a + b) as f64 - 0.4).abs() < 0.02, "FIFO {a} {b}");
    let (a, b) = two_sources_through_a_shaped_port(Queueing::PerVc, 100_000, true);
    assert!(a.abs_diff(b) <= 2, "round robin {a} {b}");
    assert!((a + b).abs_diff(23_585) < 150, "the shaped port runs full: {}", a + b);
    assert_eq!(two_sources_through_a_shaped_port(Queueing::PerVc, 100_000, false), (a, b));
    // With a small shared buffer, the faster source takes more of the
    // buffer, so more of the turns: round robin alone does not make the
    // shares equal (002 s5.2's per-VC queues share one buffer).
    let (a, b) = two_sources_through_a_shaped_port(Queueing::PerVc, 100, true);
    assert!(a < b && a as f64 / (a + b) as f64 > 0.4, "{a} {b}");
}

/// Host `a` sends UDP to `z` over one 100 Mbit/s link (TAXI), with the
/// given host model at `a` (and at `z`) and adapter peak rate.
fn hosted_udp(
    sender: HostModel,
    receiver: HostModel,
    peak: Option<BitRate>,
    flows: &[(u32, Duration, u64)],
    record: Option<(SimTime, u32)>,
    seconds: u64,
) -> RunResult {
    let taxi = BitRate::from_bps(100_000_000).unwrap();
    let mut b = NetworkBuilder::new(RngStreams::new(9, 0));
    b.set_slot_phase(SlotPhase::Aligned);
    let ha = b.add_host("a", 9188, Encapsulation::Null);
    let hz = b.add_host("z", 9188, Encapsulation::Null);
    let (a, z) = (NodeRef::Host(ha), NodeRef::Host(hz));
    b.add_link(a, z, taxi, Duration::from_us(5), PortConfig::host_adapter(), PortConfig::host_adapter()).unwrap();
    b.set_host_model(ha, sender).unwrap();
    b.set_host_model(hz, receiver).unwrap();
    if let Some(p) = peak {
        b.set_adapter_peak(ha, p).unwrap();
    }
    let vc = b.add_vc(&[a, z], ServiceCategory::Ubr, None).unwrap();
    for (i, &(payload, interval, count)) in flows.iter().enumerate() {
        let params = CbrParams {
            payload,
            interval,
            start: SimTime::ZERO,
            count: Some(count),
            max_payload: None,
            record: if i == 0 { record } else { None },
        };
        b.add_udp_cbr(&format!("u{i}"), &vc, params).unwrap();
    }
    b.build(RunMeta::default(), Duration::from_secs(seconds)).run().unwrap()
}

#[test]
fn test_serial_sending_cpu_spaces_datagrams_by_its_costs() {
    // 004 Annex A: T = dg * T_d + cells * (cell time + T_c). 8192-byte
    // bursts (8200 + 28 + 8 bytes = 172 cells) written as fast as the CPU
    // can: each costs 90 us + 172 * 4.30 us = 829.6 us, more than the
    // 729.3 us the link needs, so the CPU sets the pace.
    let cpu =
        HostModel { per_datagram: Duration::from_us(90), per_cell: Duration::from_ns(4300), ..Default::default() };
    let r = hosted_udp(
        cpu,
        HostModel::default(),
        None,
        &[(8192, Duration::from_ns(1), 200)],
        Some((SimTime::ZERO, 200)),
        1,
    );
    let f = &r.udp_flows[0];
    assert_eq!((f.sent, f.received, f.lost), (200, 200, 0));
    let gap = f.interarrival_mean_s.unwrap();
    // Frames arrive at cell-slot boundaries: the mean over 199 gaps is off
    // by at most one cell time / 199.
    assert!((gap - 829.6e-6).abs() < 4.24e-6 / 199.0 + 1e-12, "{gap}");
    assert!(f.interarrival_std_s.unwrap() < 4.24e-6);
    assert_eq!(r.hosts[0].datagrams_sent, 200);
    // Without the CPU model the link sets the pace: 172 cells * 4.24 us.
    let r = hosted_udp(
        HostModel::default(),
        HostModel::default(),
        None,
        &[(8192, Duration::from_ns(1), 200)],
        Some((SimTime::ZERO, 200)),
        1,
    );
    let gap = r.udp_flows[0].interarrival_mean_s.unwrap();
    assert!((gap - 172.0 * 4.24e-6).abs() < 1e-9, "{gap}");
}

#[test]
fn test_full_adapter_buffer_drops_or_blocks_whole_datagrams() {
    // 004 s7.4.5: a 10 Mbit/s peak setting drains 23585 cells/s = 137.1
    // bursts/s of 172 cells; udpt writes one every 100 us into a buffer of
    // 7 bursts. With `drop` the rest vanish before the wire; with `block`
    // the writer waits and nothing is lost.
    let peak = BitRate::from_bps(10_000_000).unwrap();
    let base = HostModel { per_datagram: Duration::from_us(90), adapter_buffer: Some(7 * 172), ..Default::default() };
    let dropping = HostModel { overflow: Overflow::Drop, ..base };
    let r = hosted_udp(dropping, HostModel::default(), Some(peak), &[(8192, Duration::from_us(100), 10_000)], None, 1);
    let (f, h) = (&r.udp_flows[0], &r.hosts[0]);
    assert!(h.adapter_dropped > 9000, "{h:?}");
    assert_eq!(f.sent, f.received + h.adapter_dropped + (f.sent - f.received - f.lost), "{f:?}");
    assert_eq!(f.lost, h.adapter_dropped);
    // Delivered: what 1 s of 23585 cells/s carries, whole bursts only.
    let per_s = 10e6 / 424.0 / 172.0;
    assert!((f.received as f64) <= per_s + 1.0 && (f.received as f64) >= per_s - 2.0, "{}", f.received);
    let blocking = HostModel { overflow: Overflow::Block, ..base };
    let r = hosted_udp(blocking, HostModel::default(), Some(peak), &[(8192, Duration::from_us(100), 10_000)], None, 1);
    let (f, h) = (&r.udp_flows[0], &r.hosts[0]);
    assert_eq!((h.adapter_dropped, f.lost), (0, 0));
    assert!((f.received as f64) >= per_s - 2.0, "{}", f.received);
    // The adapter never held more than its buffer.
    assert!(r.ports[0].max_queue <= 7 * 172, "{}", r.ports[0].max_queue);
}

#[test]
fn test_receiver_drops_what_its_cpu_cannot_serve() {
    // One datagram per 100 us into a receiver that needs 1 ms each and
    // holds 2: it serves 1000 per second and drops the rest.
    let rx = HostModel { receive_per_datagram: Duration::from_ms(1), receive_queue: Some(2), ..Default::default() };
    let r = hosted_udp(HostModel::default(), rx, None, &[(8, Duration::from_us(100), 10_000)], None, 2);
    let (f, h) = (&r.udp_flows[0], &r.hosts[1]);
    assert_eq!(f.sent, 10_000);
    // 1 s of arrivals, served one per ms until the queue empties.
    assert!((1000..=1003).contains(&f.received), "{f:?}");
    assert_eq!(h.receive_dropped, f.sent - f.received);
    assert_eq!(f.lost, h.receive_dropped);
}

#[test]
fn test_voice_bundle_keeps_full_rate_up_to_twelve_streams_on_the_fore_adapter() {
    // 000 s6.1.3: 80-byte voice TSDUs every 10 ms take 3 cells each (80 + 8
    // UDP + 20 IP + 8 LLC/SNAP + 8 AAL5 = 124 bytes), 300 cells/s per
    // stream; the 1594 kbit/s adapter sends 3759.4 cells/s, so 12 streams
    // (3600) keep their rate and 13 or more (3900, 4200) cannot.
    let peak = BitRate::from_bps(1_594_000).unwrap();
    let full = 80.0 * 8.0 / 0.010;
    let session = |n: usize| -> f64 {
        let mut b = NetworkBuilder::new(RngStreams::new(2, 0));
        let ha = b.add_host("endor", 9180, Encapsulation::LlcSnap);
        let hz = b.add_host("fred", 9180, Encapsulation::LlcSnap);
        let (a, z) = (NodeRef::Host(ha), NodeRef::Host(hz));
        b.add_link(a, z, oc3(), Duration::from_us(51_500), PortConfig::host_adapter(), PortConfig::host_adapter())
            .unwrap();
        b.set_adapter_peak(ha, peak).unwrap();
        let vc = b.add_vc(&[a, z], ServiceCategory::Vbr, None).unwrap();
        for i in 0..n {
            let p = CbrParams {
                payload: 80,
                interval: Duration::from_ms(10),
                start: SimTime::ZERO,
                count: Some(2000),
                max_payload: None,
                record: None,
            };
            b.add_udp_cbr(&format!("voice{i}"), &vc, p).unwrap();
        }
        let r = b.build(RunMeta::default(), Duration::from_secs(30)).run().unwrap();
        assert!(r.udp_flows.iter().all(|f| f.lost == 0 && f.received == 2000));
        r.udp_flows.iter().map(|f| f.session_throughput_bps.unwrap()).sum::<f64>() / n as f64
    };
    for n in [1, 4, 12] {
        let t = session(n);
        // The session is 20 s plus one delay: within 0.5 % of full rate.
        assert!(t > 0.995 * full && t < full * 1.001, "{n} streams: {t}");
    }
    for (n, bound) in [(13, 0.98), (14, 0.92)] {
        let t = session(n);
        assert!(t < bound * full, "{n} streams: {t}");
    }
}

#[test]
fn test_window_below_one_mss_sends_window_sized_segments() {
    // 000's 8 KB windows with a 9140-byte MSS: BSD sends a segment as large
    // as the window (it is more than half the largest window offered), one
    // per round trip; a transfer stopped after 2 s ends with the data
    // written by then.
    let tcp = TcpConfig { window: 8192, mss: 9140, ..TcpConfig::classic() };
    let sim = nsource_probed(1, Duration::from_ms(5), 100_000, &tcp, 4, true, |b| {
        b.set_tcp_stop(ConnId(0), SimTime::ZERO + Duration::from_secs(2))
    });
    let r = sim.run().unwrap();
    let c = &r.connections[0];
    assert_eq!(c.bytes_delivered % 8192, 0, "{c:?}");
    let cell: f64 = 424.0 / 155.52e6;
    // RTT: 30 ms of propagation, a 172-cell segment and a 2-cell ACK sent
    // once (cells cut through the switches) plus a cell time per later hop.
    let rtt = 0.030 + (172.0 + 2.0 + 4.0) * cell;
    let expected = (2.0 / rtt).floor() * 8192.0;
    assert!((c.bytes_delivered as f64 - expected).abs() <= 8192.0, "{} vs {expected}", c.bytes_delivered);
    let done = c.completed_at_s.unwrap();
    assert!((2.0..2.0 + rtt).contains(&done), "{done}");
    assert!(c.transfer_throughput_bps.unwrap() > 0.9 * 8192.0 * 8.0 / rtt);
}

#[test]
fn test_application_classes_draw_sizes_and_intervals_from_their_distributions() {
    use super::apps::Dist;
    // CM Toolset classes (000 s5.2): exponential interarrivals with a 1 ms
    // mean and bivalue TSDUs (80 bytes, or 1000 with probability 0.25), for
    // 20 s or 2 MB, whichever comes first.
    let run = |seed: u64, bytes: Option<u64>| {
        let mut b = NetworkBuilder::new(RngStreams::new(seed, 0));
        let a = NodeRef::Host(b.add_host("a", 9180, Encapsulation::LlcSnap));
        let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::LlcSnap));
        b.add_link(a, z, oc3(), Duration::from_us(5), PortConfig::host_adapter(), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[a, z], ServiceCategory::Ubr, None).unwrap();
        let p = CbrParams {
            payload: 80,
            interval: Duration::from_ms(1),
            start: SimTime::ZERO,
            count: None,
            max_payload: None,
            record: Some((SimTime::ZERO, 100_000)),
        };
        let f = b.add_udp_cbr("class", &vc, p).unwrap();
        let payload = Dist::Bivalue { values: [80, 1000], p: 0.25 };
        let interval = Dist::Exponential { mean: 1e9 };
        b.vary_udp(f, payload, interval, bytes, Some(SimTime::ZERO + Duration::from_secs(20))).unwrap();
        b.build(RunMeta::default(), Duration::from_secs(21)).run().unwrap()
    };
    let r = run(1, None);
    let f = &r.udp_flows[0];
    // 20 s at a 1 ms mean: ~20000 datagrams (sd ~141).
    assert!((19_400..=20_600).contains(&f.sent), "{}", f.sent);
    assert_eq!(f.received, f.sent);
    let mean_payload = f.throughput_bps * 21.0 / 8.0 / f.received as f64;
    assert!((mean_payload - 310.0).abs() < 10.0, "{mean_payload}");
    // Exponential gaps: the standard deviation equals the mean.
    let (m, sd) = (f.interarrival_mean_s.unwrap(), f.interarrival_std_s.unwrap());
    assert!((m - 1e-3).abs() < 3e-5 && (sd / m - 1.0).abs() < 0.05, "{m} {sd}");
    // The same seed gives the same run; another seed another one.
    assert_eq!(run(1, None), r);
    assert_ne!(run(2, None).udp_flows[0].sent, f.sent);
    // An amount in bytes stops the source once it has sent that much.
    let r = run(1, Some(100_000));
    let f = &r.udp_flows[0];
    assert!(f.sent < 1000 && f.throughput_bps * 21.0 / 8.0 >= 100_000.0, "{f:?}");
    assert!(
        NetworkBuilder::new(RngStreams::new(1, 0))
            .vary_udp(FlowId(0), Dist::Exponential { mean: 0.5 }, Dist::Constant(1), None, None)
            .is_err()
    );
}

#[test]
fn test_periodic_loss_with_a_random_phase_starts_anywhere_in_its_cycle() {
    // 300 one-cell datagrams through a 1-in-500 dropper: counting from the
    // start nothing is lost; from a random point of the cycle a cell is lost
    // when the counter started in its last 300 cells (p = 0.6), the same way
    // for the same seed.
    let lost = |model, seed| lossy_voice_seeded(model, 300, seed).udp_flows[0].lost;
    assert!((1..=20).all(|seed| lost(LossModel::Periodic(500), seed) == 0));
    let random: Vec<u64> = (1..=20).map(|seed| lost(LossModel::PeriodicRandomPhase(500), seed)).collect();
    assert!(random.iter().all(|&l| l <= 1), "{random:?}");
    let hits = random.iter().sum::<u64>();
    assert!((5..=18).contains(&hits), "{random:?}");
    assert_eq!(random, (1..=20).map(|seed| lost(LossModel::PeriodicRandomPhase(500), seed)).collect::<Vec<_>>());
}

/// Four ON/OFF sources on one host, two on each of two VCs, into a switch
/// port shaped below their sum with a small buffer: with elision the host's
/// sources are one group that hands its adapter their cells ahead of time,
/// merged in time order, 64 per event.
fn four_sources_on_one_host(elide: bool) -> RunResult {
    let mut b = NetworkBuilder::new(RngStreams::new(5, 0));
    b.set_event_elision(elide);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let h = NodeRef::Host(b.add_host("h", 9180, Encapsulation::LlcSnap));
    let z = NodeRef::Host(b.add_host("z", 9180, Encapsulation::LlcSnap));
    let (out, _) =
        b.add_link(sw, z, oc3(), Duration::from_us(5), switch_port(200), PortConfig::host_adapter()).unwrap();
    b.shape_port(out, BitRate::from_bps(60_000_000).unwrap()).unwrap();
    b.add_link(h, sw, oc3(), Duration::from_us(5), PortConfig::host_adapter(), switch_port(200)).unwrap();
    let vcs = [
        b.add_simplex_vc(&[h, sw, z], ServiceCategory::Ubr, None).unwrap(),
        b.add_simplex_vc(&[h, sw, z], ServiceCategory::Ubr, None).unwrap(),
    ];
    for (i, (mbps, on_us, off_us)) in
        [(40, 700, 300), (25, 1300, 900), (30, 450, 450), (17, 3000, 1000)].into_iter().enumerate()
    {
        let peak = BitRate::from_bps(mbps * 1_000_000).unwrap();
        let on = OnOffParams {
            peak,
            on: Duration::from_us(on_us),
            off: Duration::from_us(off_us),
            start: SimTime::from_ps(i as u64 * 1_234_567),
        };
        b.add_onoff(&format!("s{i}"), &vcs[i % 2], on).unwrap();
    }
    b.build(RunMeta::default(), Duration::from_ms(200)).run().unwrap()
}

#[test]
fn test_sources_sharing_a_host_merged_ahead_of_time_match_the_reference() {
    let (mut a, mut b) = (four_sources_on_one_host(true), four_sources_on_one_host(false));
    assert!(a.events * 3 < b.events, "{} vs {}", a.events, b.events);
    assert!(a.switch_cells_dropped > 1000, "the shaped port drops: {}", a.switch_cells_dropped);
    assert!(a.cell_sources.iter().all(|s| s.cells_sent > 1000));
    (a.events, b.events) = (0, 0);
    assert_eq!(a, b);
}

/// A writer into a buffer the test keeps a handle to.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn test_capture_is_the_same_with_and_without_event_elision_and_changes_nothing() {
    // Every link direction captured: the files must not depend on how the
    // run is simulated (eager hops put cells on links ahead of time, a
    // slotted run one slot event at a time), and the results must be those
    // of a run without capture.
    let tcp = TcpConfig { variant: TcpVariant::Reno, ..TcpConfig::classic() };
    let run = |elide: bool, capture: bool| {
        let files: std::rc::Rc<std::cell::RefCell<Vec<Shared>>> = Default::default();
        let keep = files.clone();
        let mut sim = nsource_probed(3, Duration::from_us(5), 300, &tcp, 1, elide, move |b| {
            if capture {
                for p in 0..b.ports.len() {
                    let out = Shared::default();
                    keep.borrow_mut().push(out.clone());
                    b.capture(PortId(p as u32), format!("port {p}"), Box::new(out));
                }
            }
        });
        sim.advance(sim.end());
        let counts = sim.finish_capture().unwrap();
        assert_eq!(counts.len(), files.borrow().len());
        assert!(counts.iter().all(|(_, c)| c.frames > 0), "every direction carries frames: {counts:?}");
        // Tail drop cuts frames: their remains cross the next link and are
        // left out there.
        assert!(!capture || counts.iter().any(|(_, c)| c.left_out > 0), "{counts:?}");
        let mut r = sim.run().unwrap();
        r.events = 0;
        let bytes: Vec<Vec<u8>> = files.borrow().iter().map(|f| f.0.lock().unwrap().clone()).collect();
        (r, bytes)
    };
    let (plain, none) = run(true, false);
    assert!(none.is_empty());
    let (fast, fast_files) = run(true, true);
    let (slow, slow_files) = run(false, true);
    assert_eq!(plain, fast, "capturing changed the result");
    assert_eq!(fast, slow);
    assert!(fast.switch_cells_dropped > 0, "the case exercises drops");
    assert!(fast_files == slow_files, "the captures differ with event elision");
}

#[test]
fn test_the_memory_guard_counts_records_as_the_docs_say() {
    // docs/architecture.md ("Memory"), docs/scenario-format.md and
    // tests/test_robust_memory.py state these: a frame's PDU entry counts
    // as 9 cells, a waiting datagram as 8.
    assert_eq!((super::guard::FRAME_CELLS, super::guard::DATAGRAM_CELLS), (9, 8));
}

/// EXPERT's shape: four TCP sources and an on/off cell source share a
/// switch port with a queue per VC, EPD and a shaped rate; past it, each VC
/// crosses the next switch into its own host. `lossy`: random loss on the
/// bottleneck's link and on one host's link. Every link has `delay`.
fn per_vc_bottleneck(elide: bool, lossy: bool, delay: Duration, seconds: u64) -> Simulation {
    per_vc_bottleneck_into(elide, lossy, delay, seconds, (oc3(), 100_000))
}

/// EXPERT's bottleneck port: a queue per VC, EPD at 800 of 1088 cells.
fn expert_bottleneck() -> PortConfig {
    use crate::atm::Epd;
    let epd = Epd { strict: true, keep_end_of_refused_frame: true, ..Epd::new(800) };
    PortConfig { queueing: Queueing::PerVc, policies: [DropPolicy::Epd(epd); 4], ..switch_port(1088) }
}

/// [`per_vc_bottleneck`] with the last hop's rate and its ports' buffer
/// (`last`): slower than the bottleneck's shaped rate, that port queues
/// and drops.
fn per_vc_bottleneck_into(elide: bool, lossy: bool, delay: Duration, seconds: u64, last: (BitRate, u32)) -> Simulation {
    per_vc_bottleneck_as(elide, lossy, delay, seconds, last, expert_bottleneck())
}

/// EXPERT's shaped rate, 37.44 Mbit/s: on the tests' 155.52 Mbit/s links
/// a shaped slot is not a whole number of the link's (in the study, on
/// 149.76 Mbit/s links, it is four).
const EXPERT_SHAPE: u64 = 37_440_000;

/// [`per_vc_bottleneck_into`] with the bottleneck port's configuration.
fn per_vc_bottleneck_as(
    elide: bool,
    lossy: bool,
    delay: Duration,
    seconds: u64,
    last: (BitRate, u32),
    bottleneck: PortConfig,
) -> Simulation {
    per_vc_bottleneck_shaped(elide, lossy, (delay, seconds), last, (bottleneck, EXPERT_SHAPE))
}

/// [`per_vc_bottleneck_as`] with the bottleneck's shaped rate (bits a
/// second).
fn per_vc_bottleneck_shaped(
    elide: bool,
    lossy: bool,
    (delay, seconds): (Duration, u64),
    last: (BitRate, u32),
    (bottleneck, shape): (PortConfig, u64),
) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(11, 0));
    b.set_event_elision(elide);
    let sw1 = NodeRef::Switch(b.add_switch("sw1"));
    let sw2 = NodeRef::Switch(b.add_switch("sw2"));
    let (q, _) = b.add_link(sw1, sw2, oc3(), delay, bottleneck, switch_port(100_000)).unwrap();
    b.shape_port(q, BitRate::from_bps(shape).unwrap()).unwrap();
    let tcp = TcpConfig { variant: TcpVariant::Reno, window: 52_224, ..TcpConfig::classic() };
    let mut host_links = Vec::new();
    for i in 0..5 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 4352, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 4352, Encapsulation::LlcSnap));
        b.add_link(s, sw1, oc3(), delay, PortConfig::host_adapter(), switch_port(100_000)).unwrap();
        let (out, _) = b.add_link(sw2, d, last.0, delay, switch_port(last.1), PortConfig::host_adapter()).unwrap();
        host_links.push(out);
        if i < 4 {
            let vc = b.add_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
            b.add_tcp(&format!("tcp{i}"), &vc, tcp.clone(), SimTime::from_ps(i * 1_000_000_000), None).unwrap();
        } else {
            let vc = b.add_simplex_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
            let peak = BitRate::from_bps(5_000_000).unwrap();
            let on = OnOffParams { peak, on: Duration::from_ms(3), off: Duration::from_ms(7), start: SimTime::ZERO };
            b.add_onoff("cells", &vc, on).unwrap();
        }
    }
    if lossy {
        b.set_link_loss(q, LossModel::Bernoulli(1e-4));
        b.set_link_loss(host_links[1], LossModel::Bernoulli(1e-3));
    }
    let ms = Duration::from_ms(1);
    b.add_probe(ProbeSpec { name: "cells".into(), target: ProbeTarget::CellApp(0), interval: ms });
    b.add_probe(ProbeSpec {
        name: "cwnd".into(),
        target: ProbeTarget::Conn(ConnId(0), ProbeKind::Cwnd.of_connection().unwrap()),
        interval: ms,
    });
    b.set_efficiency_port(q);
    b.build(RunMeta::default(), Duration::from_ms(seconds * 1000 + 37))
}

#[test]
fn test_a_bottleneck_waking_for_frame_ends_gives_the_reference_run() {
    // The shaped port's slot (11.3 us) is longer than its cell's transit
    // (3.8 us): without the frame wake it has an event per slot. With it,
    // it runs its slots when an arrival or a probe touches it, or before a
    // frame end or a cell source's cell could reach a host (`atm/port.rs`,
    // `Port::set_frame_reach`). Every number must be the reference's:
    // goodputs, drops (EPD, overflow), losses on the links, the cell
    // source's counts and probe, the end of the run in mid-frame.
    // On 2 ms links the bottleneck also pulls its arrivals (`pull.rs`):
    // a pulled cell's offer may set a sooner wake-up.
    for (lossy, delay) in [(false, Duration::from_us(1)), (true, Duration::from_us(1)), (true, Duration::from_ms(2))] {
        let fast = per_vc_bottleneck(true, lossy, delay, 2);
        let waking: Vec<_> = fast.ports().iter().filter(|p| p.has_frame_wake()).map(|p| p.name.clone()).collect();
        assert_eq!(waking, ["sw1->sw2"], "only the bottleneck's cells all go on into hosts by eager hops");
        let pulling: Vec<_> = fast.pulling_ports().iter().map(|p| fast.ports()[p.idx()].name.clone()).collect();
        assert_eq!(pulling.contains(&"sw1->sw2".to_string()), delay > Duration::from_us(1), "{pulling:?}");
        let mut a = fast.run().unwrap();
        let mut b = per_vc_bottleneck(false, lossy, delay, 2).run().unwrap();
        assert!(a.events * 5 < b.events * 2, "{} events against {}", a.events, b.events);
        a.events = 0;
        b.events = 0;
        assert_eq!(a, b, "lossy {lossy}, links of {delay}");
        let dropped = |r: &RunResult| r.ports.iter().find(|p| p.name == "sw1->sw2").unwrap().dropped;
        assert!(dropped(&a) > 0, "EPD and the buffer drop cells");
        assert!(a.cell_sources[0].cells_received > 0);
        if lossy {
            assert!(a.link_cells_lost > 0);
        }
    }
}

#[test]
fn test_a_bottleneck_holding_runs_gives_the_reference_run() {
    // EXPERT's bottleneck on a link that loses nothing holds its cells as
    // runs (`atm/port_runs.rs`): the round robin run in horizons, each
    // arriving cell a run of one on its link's grid, joined into runs per
    // frame in the queue. With each policy the port judges frames by (EPD
    // refusing whole frames, PPD and tail drop cutting them, Selective
    // Drop reading each VC's queue), on 1 us links and on 2 ms ones (where
    // the port also pulls its arrivals), every number must be the
    // reference's: goodputs, every drop, the cell source's counts and
    // probe, the queue's largest value and mean. Shaped to 37.44 Mbit/s
    // (EXPERT's rate, not a whole number of the 155.52 Mbit/s links'
    // slots) and to a quarter of the link (four whole slots, as EXPERT's
    // on its 149.76 Mbit/s links: a frame's piece then follows into its
    // host's port without a test a cell, `Port::offer_piece_into_host`).
    use crate::atm::{Epd, Ppd, SelectiveDrop, TailDrop};
    let policies = [
        expert_bottleneck(),
        PortConfig { queueing: Queueing::PerVc, policies: [DropPolicy::TailDrop(TailDrop); 4], ..switch_port(150) },
        PortConfig {
            queueing: Queueing::PerVc,
            policies: [DropPolicy::Ppd(Ppd { keep_end_of_frame: true }); 4],
            ..switch_port(200)
        },
        PortConfig { queueing: Queueing::PerVc, policies: [DropPolicy::Epd(Epd::new(60)); 4], ..switch_port(100) },
        PortConfig {
            queueing: Queueing::PerVc,
            policies: [DropPolicy::SelectiveDrop(SelectiveDrop { threshold: 100, z: 0.8, keep_end_of_frame: true }); 4],
            ..switch_port(250)
        },
    ];
    let shapes = [EXPERT_SHAPE, 155_520_000 / 4];
    let delays = [Duration::from_us(1), Duration::from_ms(2)];
    for (i, port) in policies.into_iter().enumerate() {
        for (delay, shape) in delays.into_iter().flat_map(|d| shapes.map(|s| (d, s))) {
            let sim =
                |elide| per_vc_bottleneck_shaped(elide, false, (delay, 1), (oc3(), 100_000), (port.clone(), shape));
            let fast = sim(true);
            let held: Vec<_> = fast.ports().iter().filter(|p| p.holds_runs()).map(|p| p.name.clone()).collect();
            assert_eq!(held, ["sw1->sw2"], "the frame-wake bottleneck holds runs");
            let (mut a, mut b) = (fast.run().unwrap(), sim(false).run().unwrap());
            a.events = 0;
            b.events = 0;
            assert_eq!(a, b, "policy {i}, links of {delay}, shaped to {shape} bit/s");
            let bottleneck = a.ports.iter().find(|p| p.name == "sw1->sw2").unwrap();
            assert!(bottleneck.dropped > 0 && bottleneck.max_queue > 50, "policy {i}: {bottleneck:?}");
        }
    }
}

#[test]
fn test_a_frames_later_cells_taken_the_short_way_give_the_reference_run() {
    // A frame's later cells reach a port that judges frames at their first
    // cells by `Port::offer_later` (`Simulation::on_link_arrival`), which
    // falls back on `offer` when the cell cannot simply be queued. Small
    // buffers make frames overflow in the middle (PPD then drops the rest,
    // tail drop each cell), EPD and Selective Drop refuse whole frames,
    // per VC and shared queues: every number must be the reference's.
    use crate::atm::{Epd, Ppd, SelectiveDrop, TailDrop};
    let policies = [
        (Queueing::PerVc, DropPolicy::TailDrop(TailDrop), 150),
        (Queueing::PerVc, DropPolicy::Ppd(Ppd { keep_end_of_frame: true }), 200),
        (Queueing::PerCategory, DropPolicy::TailDrop(TailDrop), 100),
        (Queueing::PerVc, DropPolicy::Epd(Epd::new(60)), 100),
        (
            Queueing::PerVc,
            DropPolicy::SelectiveDrop(SelectiveDrop { threshold: 100, z: 0.8, keep_end_of_frame: true }),
            250,
        ),
    ];
    for (queueing, policy, buffer) in policies {
        let port = PortConfig { queueing, policies: [policy; 4], ..switch_port(buffer) };
        let run = |elide| {
            per_vc_bottleneck_as(elide, true, Duration::from_us(1), 1, (oc3(), 100_000), port.clone()).run().unwrap()
        };
        let (mut a, mut b) = (run(true), run(false));
        let port = |r: &RunResult| r.ports.iter().find(|p| p.name == "sw1->sw2").unwrap().clone();
        // EPD and Selective Drop refuse frames whole (their later cells
        // meet a discard under way); the others overflow in the middle of
        // frames.
        let whole = matches!(policy, DropPolicy::Epd(_) | DropPolicy::SelectiveDrop(_));
        assert!(port(&a).dropped > port(&a).dropped_overflow || !whole, "{policy:?}: frames are refused");
        assert!(port(&a).dropped_overflow > 0 || whole, "{policy:?}: frames overflow the buffer");
        (a.events, b.events) = (0, 0);
        assert_eq!(a, b, "{policy:?}, {buffer} cells");
    }
}

#[test]
fn test_arrivals_run_ahead_as_the_loop_would_take_them() {
    // A link's next cell is handled at once when it is the loop's next
    // event (`Simulation::run_ahead`): with it off, the same run must give
    // the same result, events included (a cell taken at once counts as an
    // event), however the run is advanced: to the end at once, or in
    // stretches that end between a link's cells and stop after a few
    // events (as the Python binding advances), with probes every
    // millisecond and random loss on two links. (Without loss the
    // bottleneck holds runs, and the hosts' links hand their cells to it
    // with no arrival events, `atm/port_runs.rs`: the run must still be
    // the same however it is advanced, but only the sw2 side runs ahead.)
    for (lossy, delay) in [(false, Duration::from_us(1)), (true, Duration::from_us(1)), (true, Duration::from_us(300))]
    {
        let held = per_vc_bottleneck(true, lossy, delay, 1).ports().iter().any(|p| p.holds_runs());
        assert_eq!(held, !lossy, "a bottleneck that loses nothing on its link holds runs");
        let run = |ahead: bool, step: Option<(Duration, u64)>| {
            let mut sim = per_vc_bottleneck(true, lossy, delay, 1);
            sim.k.run_ahead = ahead;
            match step {
                None => sim.advance(sim.end()),
                Some((stretch, events)) => {
                    let mut until = SimTime::ZERO;
                    while until < sim.end() {
                        until += stretch;
                        while !sim.advance_events(until, events) {}
                        // Nothing at or after the stretch's end was handled.
                        assert!(sim.k.now < until.min(sim.end()));
                    }
                }
            }
            let ran_ahead = sim.k.counts.ran_ahead;
            (sim.run().unwrap(), ran_ahead)
        };
        let (reference, none) = run(false, None);
        assert_eq!(none, 0);
        for step in [None, Some((Duration::from_us(337), 7)), Some((Duration::from_ms(3), 1000))] {
            let (fast, ran_ahead) = run(true, step);
            let share = if held { 10 } else { 4 };
            assert!(ran_ahead * share > fast.events, "{ran_ahead} of {} events taken at once", fast.events);
            assert_eq!(fast, reference, "lossy {lossy}, links of {delay}, advanced by {step:?}");
        }
    }
}

#[test]
fn test_cells_passing_through_a_port_into_a_host_give_the_reference_run() {
    // Behind the frame-wake bottleneck, `sw2`'s ports into the hosts only
    // pass cells on: a cell goes through such a port in one step
    // (`PortVc::into_host`, `pass_into_host`). Every number must be the
    // reference's: with the hosts' links slower than the bottleneck and
    // small buffers, those ports queue and drop for overflow; the cell
    // source's cells take the general way; on a lossy link into a host the
    // hop takes the general way too.
    let last = (BitRate::from_bps(25_000_000).unwrap(), 60);
    for lossy in [false, true] {
        let fast = per_vc_bottleneck_into(true, lossy, Duration::from_us(1), 1, last);
        let passing = |sim: &Simulation| -> Vec<bool> {
            let q = sim.ports().iter().find(|p| p.name == "sw1->sw2").unwrap();
            q.vcs.iter().map(|v| v.into_host).collect()
        };
        let expected: Vec<bool> = (0..5).map(|i| !(lossy && i == 1)).collect();
        assert_eq!(passing(&fast), expected, "lossy {lossy}");
        let a = fast.run().unwrap();
        let b = per_vc_bottleneck_into(false, lossy, Duration::from_us(1), 1, last).run().unwrap();
        assert!(passing(&per_vc_bottleneck_into(false, lossy, Duration::from_us(1), 1, last)).iter().all(|p| !p));
        let dropped = |r: &RunResult| -> u64 {
            r.ports.iter().filter(|p| p.name.starts_with("sw2->dst")).map(|p| p.dropped).sum()
        };
        assert!(dropped(&a) > 0, "the ports into the hosts drop cells");
        assert!(a.cell_sources[0].cells_received > 0);
        let (mut a, mut b) = (a, b);
        (a.events, b.events) = (0, 0);
        assert_eq!(a, b, "lossy {lossy}");
    }
}

/// A bottleneck `sw1->sw2` (a queue per VC, the round robin, `policy` and
/// `buffer`, shaped to 40 Mbit/s if `shaped`) fed by one host link per
/// source (at 320 Mbit/s if `fast_hosts`, else 160), each source's VC
/// going on to a host of its own: TCP where `tcp[i]`, else an on/off cell
/// source. Every slot grid starts at 0 and the rates are whole
/// picoseconds a cell, so cells of different links arrive at the same
/// instants, and the probes of the bottleneck (every 1000 of its cell
/// times) fall on its slots' starts. `reversed`: the VCs are set up in the
/// reverse order of their links.
#[derive(Clone, Debug)]
struct RunsGuard {
    policy: DropPolicy,
    buffer: u32,
    shaped: bool,
    fast_hosts: bool,
    delay: Duration,
    tcp: Vec<bool>,
    reversed: bool,
}

fn runs_guard_network(elide: bool, g: &RunsGuard) -> Simulation {
    let RunsGuard { policy, buffer, shaped, fast_hosts, delay, ref tcp, reversed } = *g;
    let rate = BitRate::from_bps(160_000_000).unwrap();
    let host_rate = BitRate::from_bps(if fast_hosts { 320_000_000 } else { 160_000_000 }).unwrap();
    let mut b = NetworkBuilder::new(RngStreams::new(5, 0));
    b.set_event_elision(elide);
    b.set_slot_phase(SlotPhase::Aligned);
    let sw1 = NodeRef::Switch(b.add_switch("sw1"));
    let sw2 = NodeRef::Switch(b.add_switch("sw2"));
    let bottleneck = PortConfig { queueing: Queueing::PerVc, policies: [policy; 4], ..switch_port(buffer) };
    let (q, _) = b.add_link(sw1, sw2, rate, delay, bottleneck, switch_port(100_000)).unwrap();
    if shaped {
        b.shape_port(q, BitRate::from_bps(40_000_000).unwrap()).unwrap();
    }
    let mut ends = Vec::new();
    for i in 0..tcp.len() {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw1, host_rate, delay, PortConfig::host_adapter(), switch_port(100_000)).unwrap();
        b.add_link(sw2, d, rate, delay, switch_port(100_000), PortConfig::host_adapter()).unwrap();
        ends.push((s, d));
    }
    let mut order: Vec<usize> = (0..tcp.len()).collect();
    if reversed {
        order.reverse();
    }
    let reno = TcpConfig { variant: TcpVariant::Reno, window: 65_535, ..TcpConfig::classic() };
    for i in order {
        let (s, d) = ends[i];
        if tcp[i] {
            let vc = b.add_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
            b.add_tcp(&format!("tcp{i}"), &vc, reno.clone(), SimTime::from_ps(i as u64 * 300_000_000), None).unwrap();
        } else {
            let vc = b.add_simplex_vc(&[s, sw1, sw2, d], ServiceCategory::Ubr, None).unwrap();
            let on = OnOffParams {
                peak: BitRate::from_bps(60_000_000).unwrap(),
                on: Duration::from_ms(2),
                off: Duration::from_ms(3),
                start: SimTime::ZERO,
            };
            b.add_onoff(&format!("cells{i}"), &vc, on).unwrap();
        }
    }
    let slot = if shaped { 10_600_000 } else { 2_650_000 };
    for kind in [ProbeKind::Queue, ProbeKind::Drops, ProbeKind::Utilization] {
        let target = ProbeTarget::Port(q, kind.of_port().unwrap());
        b.add_probe(ProbeSpec { name: kind.name().into(), target, interval: Duration::from_ps(1000 * slot) });
    }
    b.build(RunMeta::default(), Duration::from_ms(300))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, failure_persistence: None, ..Default::default() })]

    /// Randomised networks into a bottleneck that holds runs (or, where
    /// its VCs come in out of their links' order, one that does not): the
    /// reference's run, to every number, with cells of different links
    /// arriving at one instant, probes at slot starts, each policy.
    #[test]
    fn prop_a_bottleneck_holding_runs_gives_the_reference_run(
        policy in 0usize..5,
        buffer in 40u32..400,
        shaped in proptest::bool::ANY,
        fast_hosts in proptest::bool::ANY,
        long in proptest::bool::ANY,
        tcp in proptest::collection::vec(proptest::bool::ANY, 1..5),
        reversed in proptest::bool::ANY,
    ) {
        use crate::atm::{Epd, Ppd, SelectiveDrop, TailDrop};
        let policy = [
            DropPolicy::TailDrop(TailDrop),
            DropPolicy::Ppd(Ppd { keep_end_of_frame: true }),
            DropPolicy::Epd(Epd::new(buffer * 3 / 4)),
            DropPolicy::Epd(Epd { strict: true, keep_end_of_refused_frame: true, ..Epd::new(buffer / 2) }),
            DropPolicy::SelectiveDrop(SelectiveDrop { threshold: buffer / 2, z: 0.8, keep_end_of_frame: true }),
        ][policy];
        let delay = if long { Duration::from_us(500) } else { Duration::from_us(1) };
        let guard = RunsGuard { policy, buffer, shaped, fast_hosts, delay, tcp: tcp.clone(), reversed };
        let net = |elide| runs_guard_network(elide, &guard);
        let fast = net(true);
        let bottleneck = &fast.ports()[0];
        proptest::prop_assert_eq!(bottleneck.name.as_str(), "sw1->sw2");
        // (A port of one VC is a FIFO in effect: pipelined, no frame wake.)
        proptest::prop_assert_eq!(bottleneck.has_frame_wake(), tcp.len() > 1);
        let held = fast.ports().iter().any(|p| p.holds_runs());
        proptest::prop_assert_eq!(held, tcp.len() > 1 && !reversed, "held where the VCs come in their links' order");
        let (mut a, mut b) = (fast.run().unwrap(), net(false).run().unwrap());
        a.events = 0;
        b.events = 0;
        proptest::prop_assert_eq!(a, b);
    }
}
