//! Packets from outside across the network (`sim/external.rs`): their
//! cells and exact delivery times, losses of whole frames, real bytes in
//! captures, and the event elision unchanged by them.

use super::tests::switch_port;
use super::*;
use crate::aal5::Encapsulation;
use crate::abr::control::{ControlConfig, EricaParams};
use crate::abr::source::AbrParams;
use crate::atm::{DropPolicy, PortConfig, ServiceCategory};
use crate::ids::HostId;
use atmlab_engine::{BitRate, CELL_BITS, RngStreams};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

const A: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 2);

/// 42.4 Mbit/s: a cell time of exactly 10 us.
fn rate() -> BitRate {
    BitRate::from_bps(42_400_000).unwrap()
}

/// An IPv4 packet of `len` bytes from `src` to `dst` (protocol 253, for
/// experiments), its payload `tag` then a count.
pub(crate) fn packet(src: Ipv4Addr, dst: Ipv4Addr, len: usize, tag: u32) -> Vec<u8> {
    let mut p = vec![0x45, 0, (len >> 8) as u8, len as u8, 0, 0, 0x40, 0, 64, 253, 0, 0];
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&tag.to_be_bytes());
    while p.len() < len {
        p.push(p.len() as u8);
    }
    p.truncate(len);
    p
}

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The records of a pcap file: (nanoseconds, original length, bytes).
fn records(file: &[u8]) -> Vec<(u128, u32, Vec<u8>)> {
    let mut r = pcap_file::pcap::PcapReader::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        out.push((p.timestamp.as_nanos(), p.orig_len, p.data.into_owned()));
    }
    out
}

/// a -> sw -> b, both external, links of 10 us cells and 100 us delay,
/// slots aligned; the port toward b holds `buffer` cells with EPD at
/// `epd`, and is captured.
fn two_hosts(a_rate: BitRate, buffer: u32, epd: Option<u32>, capture: &Shared) -> Simulation {
    let mut b = NetworkBuilder::new(RngStreams::new(1, 0));
    b.set_slot_phase(SlotPhase::Aligned);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let ha = b.add_host("a", 9180, Encapsulation::LlcSnap);
    let hb = b.add_host("b", 9180, Encapsulation::LlcSnap);
    let (a, bb) = (NodeRef::Host(ha), NodeRef::Host(hb));
    let delay = Duration::from_us(100);
    let mut port = switch_port(buffer);
    if let Some(t) = epd {
        port.policies[ServiceCategory::Ubr as usize] = DropPolicy::Epd(crate::atm::Epd::new(t));
    }
    b.add_link(a, sw, a_rate, delay, PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
    let (to_b, _) = b.add_link(sw, bb, rate(), delay, port, PortConfig::host_adapter()).unwrap();
    b.add_vc(&[a, sw, bb], ServiceCategory::Ubr, None).unwrap();
    b.set_external(ha, A).unwrap();
    b.set_external(hb, B).unwrap();
    b.capture(to_b, "sw-b".into(), Box::new(capture.clone()));
    b.build(RunMeta::default(), Duration::from_secs(1))
}

#[test]
fn test_a_packet_arrives_after_its_cells_and_the_delays_exactly() {
    let cap = Shared::default();
    let mut sim = two_hosts(rate(), 1 << 20, None, &cap);
    assert_eq!(sim.external_hosts(), [(HostId(0), "a".to_owned(), A), (HostId(1), "b".to_owned(), B)]);
    let t0 = SimTime::ZERO + Duration::from_ms(1);
    let big = packet(A, B, 9180, 1);
    sim.inject(HostId(0), t0, &big).unwrap();
    // The answer, an ACK-sized packet, 10 ms later.
    let ack = packet(B, A, 40, 2);
    let t1 = SimTime::ZERO + Duration::from_ms(11);
    sim.advance(t1);
    let out = sim.drain();
    // 9180 + 8 (LLC/SNAP) + 8 (AAL5 trailer) bytes in 48-byte cells: 192.
    // The last leaves a at 191 cell times after t0, reaches the switch one
    // cell time and 100 us later, leaves it in the slot it arrives in and
    // reaches b one cell time and 100 us later.
    let cell = Duration::from_us(10);
    let at = t0 + cell.saturating_mul(192) + Duration::from_us(200) + cell;
    assert_eq!(out, [Delivered { host: HostId(1), at, bytes: big.clone() }]);
    assert_eq!(sim.next_event_time(), None);
    sim.inject(HostId(1), t1, &ack).unwrap();
    sim.advance(t1 + Duration::from_ms(10));
    // 40 + 16 bytes: 2 cells.
    let at = t1 + cell.saturating_mul(2) + Duration::from_us(200) + cell;
    assert_eq!(sim.drain(), [Delivered { host: HostId(0), at, bytes: ack }]);
    let counts = sim.external_counts();
    assert_eq!((counts.injected, counts.delivered, counts.lost), (2, 2, 0));
    let r = sim.run().unwrap();
    assert_eq!(r.ports.iter().map(|p| p.cells_out).sum::<u64>(), 2 * (192 + 2));
    // The capture holds the real bytes behind the SunATM header and LLC/SNAP.
    let recs = records(&cap.0.lock().unwrap());
    assert_eq!(recs.len(), 1);
    let (ns, orig, data) = &recs[0];
    assert_eq!(*ns, (t0 + cell.saturating_mul(192) + Duration::from_us(200) + cell).as_ps() as u128 / 1000);
    assert_eq!(*orig, 4 + 8 + 9180);
    assert_eq!(&data[4..12], &[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
    assert_eq!(&data[12..], &big[..]);
}

#[test]
fn test_bad_packets_are_refused_with_why_and_change_nothing() {
    let cap = Shared::default();
    let mut sim = two_hosts(rate(), 1 << 20, None, &cap);
    let t = SimTime::ZERO + Duration::from_ms(1);
    let other = Ipv4Addr::new(10, 9, 9, 9);
    assert!(matches!(sim.inject(HostId(0), t, &packet(A, other, 100, 0)), Err(InjectError::NoRoute { .. })));
    assert!(matches!(sim.inject(HostId(0), t, &packet(A, A, 100, 0)), Err(InjectError::NoRoute { .. })));
    assert_eq!(sim.inject(HostId(0), t, &[0x60; 40]), Err(InjectError::NotIpv4 { len: 40, version: 6 }));
    assert_eq!(sim.inject(HostId(0), t, &[0x45; 12]), Err(InjectError::NotIpv4 { len: 12, version: 4 }));
    assert_eq!(
        sim.inject(HostId(0), t, &[0x60; 48]).unwrap_err().to_string(),
        "not an IPv4 packet (48 bytes, IP version 6)"
    );
    let e = sim.inject(HostId(0), t, &packet(A, B, 9181, 0)).unwrap_err();
    assert_eq!(e.to_string(), "a packet of 9181 bytes exceeds host a's MTU of 9180 bytes");
    assert!(matches!(sim.inject(HostId(5), t, &packet(A, B, 100, 0)), Err(InjectError::NotExternal(_))));
    assert!(matches!(sim.inject(HostId(0), sim.end(), &packet(A, B, 100, 0)), Err(InjectError::AfterEnd(_))));
    sim.advance(t);
    let e = sim.inject(HostId(0), SimTime::ZERO, &packet(A, B, 100, 0)).unwrap_err();
    assert!(matches!(e, InjectError::InPast { .. }), "{e}");
    assert_eq!(sim.external_counts(), ExternalCounts::default());
    let r = sim.run().unwrap();
    assert_eq!(r.ports.iter().map(|p| p.cells_out).sum::<u64>(), 0);
}

#[test]
fn test_epd_drops_whole_frames_and_the_rest_arrive_intact() {
    // a's link is twice as fast as b's: 20 frames of 192 cells at once
    // fill the 1000-cell port toward b; EPD at 600 refuses whole frames.
    let cap = Shared::default();
    let fast = BitRate::from_bps(84_800_000).unwrap();
    let mut sim = two_hosts(fast, 1000, Some(600), &cap);
    let t0 = SimTime::ZERO + Duration::from_ms(1);
    let sent: Vec<Vec<u8>> = (0..20).map(|i| packet(A, B, 9180, i)).collect();
    for p in &sent {
        sim.inject(HostId(0), t0, p).unwrap();
    }
    sim.advance(SimTime::ZERO + Duration::from_ms(500));
    let out = sim.drain();
    assert!(!out.is_empty() && out.len() < sent.len(), "{} delivered", out.len());
    // Every packet delivered is one sent, whole, in order.
    let mut next = sent.iter();
    for d in &out {
        assert!(next.any(|p| *p == d.bytes), "a delivered packet was never sent whole");
    }
    let counts = sim.external_counts();
    assert_eq!(counts.injected, 20);
    assert_eq!(counts.delivered, out.len() as u64);
    assert_eq!(counts.lost, 20 - out.len() as u64);
    let r = sim.run().unwrap(); // conservation checked
    assert!(r.switch_cells_dropped > 0);
    assert_eq!(r.switch_cells_dropped % 192, 0, "EPD drops whole frames: {}", r.switch_cells_dropped);
    // The capture of the link into b holds exactly the frames delivered.
    let recs = records(&cap.0.lock().unwrap());
    let captured: Vec<&[u8]> = recs.iter().map(|(_, _, d)| &d[12..]).collect();
    let delivered: Vec<&[u8]> = out.iter().map(|d| &d.bytes[..]).collect();
    assert_eq!(captured, delivered);
}

#[test]
fn test_lost_packets_do_not_stay_in_the_arena() {
    // Far more packets than the port holds, over many rounds: the sweep
    // frees the lost ones, and the arena stays within twice what is live.
    let cap = Shared::default();
    let fast = BitRate::from_bps(84_800_000).unwrap();
    let mut sim = two_hosts(fast, 1000, Some(600), &cap);
    let mut t = SimTime::ZERO;
    for round in 0..400u32 {
        t += Duration::from_ms(2);
        for i in 0..10 {
            sim.inject(HostId(0), t, &packet(A, B, 1500, round * 10 + i)).unwrap();
        }
        sim.advance(t);
        sim.drain();
    }
    let counts = sim.external_counts();
    assert_eq!(counts.injected, 4000);
    assert!(counts.lost > 1000, "{counts:?}");
    assert!(sim.external.entries() <= 2048, "{} entries", sim.external.entries());
}

/// Three TCP connections over ABR with ERICA+, an ON/OFF VBR source and
/// probes (as `abr_tests::tcp_over_abr`), and two external hosts on an
/// ABR VC of their own through the same bottleneck.
fn with_outside(elide: bool) -> (Simulation, HostId, HostId) {
    let sts3c = BitRate::from_bps(149_760_000).unwrap();
    let mut b = NetworkBuilder::new(RngStreams::new(11, 0));
    b.set_event_elision(elide);
    let ms = Duration::from_ms(1);
    let (sw0, sw1) = (NodeRef::Switch(b.add_switch("sw0")), NodeRef::Switch(b.add_switch("sw1")));
    b.add_link(sw0, sw1, sts3c, ms, switch_port(1000), switch_port(1 << 20)).unwrap();
    let params = AbrParams::new(sts3c.bps() as f64 / CELL_BITS as f64);
    for i in 0..2 {
        let s = NodeRef::Host(b.add_host(&format!("src{i}"), 9180, Encapsulation::LlcSnap));
        let d = NodeRef::Host(b.add_host(&format!("dst{i}"), 9180, Encapsulation::LlcSnap));
        b.add_link(s, sw0, sts3c, Duration::from_ms(5), PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
        b.add_link(sw1, d, sts3c, ms, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
        let vc = b.add_vc(&[s, sw0, sw1, d], ServiceCategory::Abr, None).unwrap();
        b.set_abr(&format!("vc{i}"), &vc, &params).unwrap();
        let tcp = crate::tcp::TcpConfig { window: 1 << 20, ..crate::tcp::TcpConfig::classic() };
        b.add_tcp(&format!("tcp{i}"), &vc, tcp, SimTime::ZERO + Duration::from_ms(i), None).unwrap();
    }
    let ha = b.add_host("ext_a", 9180, Encapsulation::LlcSnap);
    let hb = b.add_host("ext_b", 9180, Encapsulation::LlcSnap);
    let (a, bb) = (NodeRef::Host(ha), NodeRef::Host(hb));
    b.add_link(a, sw0, sts3c, Duration::from_ms(5), PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
    b.add_link(sw1, bb, sts3c, ms, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
    let vc = b.add_vc(&[a, sw0, sw1, bb], ServiceCategory::Abr, None).unwrap();
    b.set_abr("ext", &vc, &params).unwrap();
    b.set_external(ha, A).unwrap();
    b.set_external(hb, B).unwrap();
    let v = NodeRef::Host(b.add_host("vbr", 9180, Encapsulation::LlcSnap));
    let w = NodeRef::Host(b.add_host("vbr_sink", 9180, Encapsulation::LlcSnap));
    b.add_link(v, sw0, sts3c, ms, PortConfig::host_adapter(), switch_port(1 << 20)).unwrap();
    b.add_link(sw1, w, sts3c, ms, switch_port(1 << 20), PortConfig::host_adapter()).unwrap();
    let vc = b.add_simplex_vc(&[v, sw0, sw1, w], ServiceCategory::Vbr, None).unwrap();
    let peak = BitRate::from_bps(sts3c.bps() / 2).unwrap();
    let onoff = OnOffParams { peak, on: Duration::from_ms(20), off: Duration::from_ms(30), start: SimTime::ZERO };
    b.add_onoff("vbr", &vc, onoff).unwrap();
    let every = Duration::from_us(700);
    b.add_probe(ProbeSpec { name: "acr".into(), target: ProbeTarget::Abr(0, AbrQuantity::Acr), interval: every });
    for p in 0..b.ports.len() {
        if matches!(b.port_owner[p], NodeRef::Switch(_)) {
            let erica = ControlConfig::Erica(EricaParams::erica_plus_97_0177r2());
            b.set_abr_control(crate::ids::PortId(p as u32), erica).unwrap();
        }
    }
    (b.build(RunMeta::default(), Duration::from_secs(1)), ha, hb)
}

/// Runs [`with_outside`] as a driver would, in steps of 0.7 ms: a sends
/// a 9180-byte packet every step for the first 0.6 s, b answers each it
/// receives with 40 bytes at the end of the step it arrived in.
fn drive(elide: bool) -> (RunResult, Vec<Delivered>, u64) {
    let (mut sim, a, b) = with_outside(elide);
    let step = Duration::from_us(700);
    let mut t = SimTime::ZERO;
    let mut all = Vec::new();
    let mut n = 0u32;
    while t + step < sim.end() {
        t += step;
        sim.advance(t);
        let out = sim.drain();
        for d in &out {
            if d.host == b {
                sim.inject(b, t, &packet(B, A, 40, n)).unwrap();
            }
        }
        all.extend(out);
        if t < SimTime::ZERO + Duration::from_ms(600) {
            n += 1;
            sim.inject(a, t, &packet(A, B, 9180, n)).unwrap();
        }
    }
    let ahead = sim.abr_slots_ahead();
    (sim.run().unwrap(), all, ahead)
}

#[test]
fn test_traffic_from_outside_gives_the_reference_run_with_elision() {
    let (mut a, out_a, ahead) = drive(true);
    let (mut reference, out_ref, _) = drive(false);
    assert!(ahead > 1000, "other sources still send ahead: {ahead}");
    assert!(a.events * 2 < reference.events, "{} vs {} events", a.events, reference.events);
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference);
    assert_eq!(out_a, out_ref);
    // It exercises what it is for: both ways, with losses at the bottleneck.
    assert!(out_a.iter().any(|d| d.bytes.len() == 40) && out_a.len() > 800, "{} delivered", out_a.len());
    assert!(a.switch_cells_dropped > 0);
}

/// Runs [`with_outside`] with traffic from outside until 300 ms, then
/// (as `atmlab emulate` does when its commands are done) the rest of the
/// run without it.
fn done_early(elide: bool) -> RunResult {
    let (mut sim, a, _b) = with_outside(elide);
    let step = Duration::from_us(700);
    let mut t = SimTime::ZERO;
    let mut n = 0u32;
    while t < SimTime::ZERO + Duration::from_ms(300) {
        t += step;
        sim.advance(t);
        sim.drain();
        n += 1;
        sim.inject(a, t, &packet(A, B, 9180, n)).unwrap();
    }
    sim.run().unwrap()
}

#[test]
fn test_a_run_whose_outside_traffic_stops_balances_its_cells_and_gives_the_reference_run() {
    let mut a = done_early(true);
    let mut reference = done_early(false);
    assert_eq!(a.duration_s, 1.0);
    (a.events, reference.events) = (0, 0);
    assert_eq!(a, reference);
}
