//! The driver with a fake clock and fake devices: exact times, no wall
//! clock anywhere.

use super::*;
use atmlab_engine::{BitRate, RngStreams};
use atmlab_net::aal5::Encapsulation;
use atmlab_net::atm::{DropPolicy, Epd, PortConfig, Queueing, SchedulerKind, ServiceCategory};
use atmlab_net::sim::{NetworkBuilder, NodeRef, RunMeta, SlotPhase};
use std::cell::Cell;
use std::net::Ipv4Addr;
use std::rc::Rc;

const A: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 2);

/// A clock that moves only when the fake devices wait.
#[derive(Clone, Default)]
struct FakeClock(Rc<Cell<Duration>>);

impl Clock for FakeClock {
    fn now(&mut self) -> Duration {
        self.0.get()
    }
}

/// Devices with packets arriving at scripted times; waiting moves the
/// clock to the deadline or the next arrival, plus a jump if one is due.
struct FakeIo {
    clock: FakeClock,
    /// (arrival, device, packet), by arrival.
    script: Vec<(Duration, usize, Vec<u8>)>,
    /// When the clock passes the first, it jumps by the second (a stall).
    jump: Option<(Duration, Duration)>,
    /// (clock at the write, device, packet).
    written: Vec<(Duration, usize, Vec<u8>)>,
}

impl FakeIo {
    fn new(clock: &FakeClock, script: Vec<(Duration, usize, Vec<u8>)>) -> FakeIo {
        FakeIo { clock: clock.clone(), script, jump: None, written: Vec::new() }
    }
}

impl PacketIo for FakeIo {
    fn wait(&mut self, watch: &[bool], deadline: Option<Duration>) -> std::io::Result<()> {
        let now = self.clock.0.get();
        let arrival = self.script.iter().filter(|(_, d, _)| watch[*d]).map(|(t, _, _)| *t).min();
        let mut to = [deadline, arrival].into_iter().flatten().min().unwrap_or(now).max(now);
        if let Some((at, by)) = self.jump
            && to >= at
        {
            to += by;
            self.jump = None;
        }
        self.clock.0.set(to);
        Ok(())
    }

    fn recv(&mut self, dev: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        let now = self.clock.0.get();
        let Some(i) = self.script.iter().position(|(t, d, _)| *d == dev && *t <= now) else { return Ok(None) };
        let (_, _, p) = self.script.remove(i);
        buf[..p.len()].copy_from_slice(&p);
        Ok(Some(p.len()))
    }

    fn send(&mut self, dev: usize, packet: &[u8]) -> std::io::Result<()> {
        self.written.push((self.clock.0.get(), dev, packet.to_vec()));
        Ok(())
    }
}

fn packet(src: Ipv4Addr, dst: Ipv4Addr, len: usize, tag: u32) -> Vec<u8> {
    let mut p = vec![0x45, 0, (len >> 8) as u8, len as u8, 0, 0, 0x40, 0, 64, 253, 0, 0];
    p.extend_from_slice(&src.octets());
    p.extend_from_slice(&dst.octets());
    p.extend_from_slice(&tag.to_be_bytes());
    p.resize(len, 0x5a);
    p
}

/// a -> sw -> b, both external: 42.4 Mbit/s links (10 us cells), 100 us
/// each, aligned slots; the port toward b holds `buffer` cells, EPD at
/// `epd`; a's link `a_rate`.
fn net(a_rate: u64, buffer: u32, epd: Option<u32>, seconds: u64) -> Simulation {
    net_elided(true, a_rate, buffer, epd, seconds)
}

/// [`net`], with the event elision on or off (the reference run).
fn net_elided(elide: bool, a_rate: u64, buffer: u32, epd: Option<u32>, seconds: u64) -> Simulation {
    let rate = BitRate::from_bps(42_400_000).unwrap();
    let mut b = NetworkBuilder::new(RngStreams::new(1, 0));
    b.set_event_elision(elide);
    b.set_slot_phase(SlotPhase::Aligned);
    let sw = NodeRef::Switch(b.add_switch("sw"));
    let ha = b.add_host("a", 9180, Encapsulation::LlcSnap);
    let hb = b.add_host("b", 9180, Encapsulation::LlcSnap);
    let port = |buffer: u32, epd: Option<u32>| {
        let mut policies = [DropPolicy::default(); 4];
        if let Some(t) = epd {
            policies[ServiceCategory::Ubr as usize] = DropPolicy::Epd(Epd::new(t));
        }
        PortConfig {
            queueing: Queueing::PerCategory,
            buffer: Some(buffer),
            class_buffers: [None; 4],
            policies,
            scheduler: SchedulerKind::default(),
            clp_threshold: None,
        }
    };
    let delay = atmlab_engine::Duration::from_us(100);
    let a_rate = BitRate::from_bps(a_rate).unwrap();
    b.add_link(NodeRef::Host(ha), sw, a_rate, delay, PortConfig::host_adapter(), port(1 << 20, None)).unwrap();
    b.add_link(sw, NodeRef::Host(hb), rate, delay, port(buffer, epd), PortConfig::host_adapter()).unwrap();
    b.add_vc(&[NodeRef::Host(ha), sw, NodeRef::Host(hb)], ServiceCategory::Ubr, None).unwrap();
    b.set_external(ha, A).unwrap();
    b.set_external(hb, B).unwrap();
    b.build(RunMeta::default(), atmlab_engine::Duration::from_secs(seconds))
}

fn exact() -> Config {
    Config { spin: Duration::ZERO, ..Config::default() }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn test_packets_are_written_at_ingress_plus_cells_plus_delays_exactly() {
    let clock = FakeClock::default();
    let big = packet(A, B, 9180, 1);
    let ack = packet(B, A, 40, 2);
    let io = FakeIo::new(&clock, vec![(ms(1), 0, big.clone()), (ms(10), 1, ack.clone())]);
    let mut d = Driver::new(net(42_400_000, 1 << 20, None, 1), clock, io, exact());
    d.run().unwrap();
    // 9180 bytes + LLC/SNAP + AAL5 trailer = 192 cells of 10 us; two
    // 100 us links; the last cell waits one cell time at the switch.
    // 40 bytes: 2 cells.
    assert_eq!(
        d.io.written,
        [(ms(1) + us(1920) + us(200) + us(10), 1, big), (ms(10) + us(20) + us(200) + us(10), 0, ack)]
    );
    let r = d.report();
    assert_eq!((r.packets_in, r.packets_out, r.packets_refused, r.late_packets), (2, 2, 0, 0));
    assert_eq!((r.lag_max_s, r.delivery_max_s, r.behind_s), (0.0, 0.0, 0.0));
    let (result, _) = d.finish();
    let result = result.unwrap();
    assert_eq!(result.ports.iter().map(|p| p.cells_out).sum::<u64>(), 2 * (192 + 2));
}

#[test]
fn test_epd_drops_whole_frames_and_back_pressure_holds_the_rest() {
    // 30 frames at once into a 2x faster link: the 1000-cell port toward
    // b refuses whole frames at 600 cells. The driver reads at most 400
    // cells ahead of a's adapter: the rest wait in the device.
    let clock = FakeClock::default();
    let sent: Vec<Vec<u8>> = (0..30).map(|i| packet(A, B, 9180, i)).collect();
    let script = sent.iter().map(|p| (ms(1), 0, p.clone())).collect();
    let io = FakeIo::new(&clock, script);
    let cfg = Config { backlog_cells: 400, ..exact() };
    let mut d = Driver::new(net(84_800_000, 1000, Some(600), 1), clock, io, cfg);
    d.run().unwrap();
    let r = d.report();
    assert_eq!(r.packets_in, 30);
    assert!(r.blocked_turns > 0, "{r:?}");
    let got: Vec<&Vec<u8>> = d.io.written.iter().map(|(_, _, p)| p).collect();
    assert!(!got.is_empty() && got.len() < 30, "{} written", got.len());
    let mut rest = sent.iter();
    assert!(got.iter().all(|p| rest.any(|s| s == *p)), "whole packets, in order");
    let (result, _) = d.finish();
    let result = result.unwrap(); // cell conservation checked
    assert!(result.switch_cells_dropped > 0 && result.switch_cells_dropped % 192 == 0);
}

#[test]
fn test_a_stalled_clock_is_reported_and_events_keep_their_order() {
    let script = || {
        (0..50)
            .map(|i| {
                (ms(1 + i), (i % 2) as usize, packet([A, B][i as usize % 2], [B, A][i as usize % 2], 1500, i as u32))
            })
            .collect::<Vec<_>>()
    };
    // Reference: no stall.
    let clock = FakeClock::default();
    let mut d = Driver::new(net(42_400_000, 1 << 20, None, 1), clock.clone(), FakeIo::new(&clock, script()), exact());
    d.run().unwrap();
    let reference: Vec<Vec<u8>> = d.io.written.iter().map(|(_, _, p)| p.clone()).collect();
    assert_eq!(d.report().lag_max_s, 0.0);
    // The clock jumps by 30 ms at 20.2 ms, while a packet is in flight: the
    // events due meanwhile run late,
    // back to back, in order; nothing is skipped.
    let clock = FakeClock::default();
    let mut io = FakeIo::new(&clock, script());
    io.jump = Some((us(20_200), ms(30)));
    let mut d = Driver::new(net(42_400_000, 1 << 20, None, 1), clock, io, exact());
    d.run().unwrap();
    let r = d.report();
    assert!(r.lag_max_s >= 0.029 && r.lag_max_s <= 0.031, "{r:?}");
    assert!(r.late_packets > 0 && r.delivery_max_s >= 0.02, "{r:?}");
    let late: Vec<Vec<u8>> = d.io.written.iter().map(|(_, _, p)| p.clone()).collect();
    assert_eq!(late.len(), reference.len());
    // Packets read late enter late, so the order may differ only by when
    // they entered; every packet arrives once.
    let mut a = late.clone();
    let mut b = reference.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // With max_lag, the same stall aborts with a clear error.
    let clock = FakeClock::default();
    let mut io = FakeIo::new(&clock, script());
    io.jump = Some((us(20_200), ms(30)));
    let cfg = Config { max_lag: Some(ms(20)), ..exact() };
    let mut d = Driver::new(net(42_400_000, 1 << 20, None, 1), clock, io, cfg);
    let e = d.run().unwrap_err();
    assert!(matches!(e, DriverError::Lag { .. }), "{e}");
    assert!(e.to_string().contains("realtime.max_lag = 20.000 ms"), "{e}");
}

#[test]
fn test_histogram_quantiles() {
    let mut h = Histogram::new();
    for i in 1..=100 {
        h.add(us(i));
    }
    assert_eq!((h.quantile(0.5), h.quantile(0.99), h.max), (us(50), us(99), us(100)));
    h.add(Duration::from_secs(3));
    assert_eq!(h.quantile(1.0), Duration::from_secs(3));
}

#[test]
fn test_replay_gives_the_same_bytes_and_results_with_and_without_elision() {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    // A trace: 200 packets both ways, raw IP link type.
    let mut file = Vec::new();
    let header = PcapHeader { datalink: pcap_file::DataLink::RAW, ..PcapHeader::default() };
    let mut w = PcapWriter::with_header(&mut file, header).unwrap();
    let mut sent = Vec::new();
    for i in 0..200u32 {
        let (s, d, len) = if i % 3 == 0 { (B, A, 40) } else { (A, B, 100 + 45 * i as usize) };
        let p = packet(s, d, len, i);
        let ts = Duration::from_secs(1_700_000_000) + us(137 * u64::from(i));
        w.write_packet(&PcapPacket::new(ts, p.len() as u32, &p)).unwrap();
        sent.push(p);
    }
    let _ = w.into_writer();
    let run = |elide: bool| {
        let mut sim = net_elided(elide, 42_400_000, 2000, Some(1500), 1);
        let (out, counts) = replay::replay(&mut sim, &file[..]).unwrap();
        (out, counts, sim.run().unwrap())
    };
    let (out, counts, mut r) = run(true);
    let (out_ref, _, mut r_ref) = run(false);
    assert_eq!(counts, replay::ReplayCounts { records: 200, injected: 200, skipped: 0, refused: 0 });
    assert_eq!(out, out_ref);
    (r.events, r_ref.events) = (0, 0);
    assert_eq!(r, r_ref);
    // Every packet came out byte for byte (the buffer is large enough).
    let mut got: Vec<Vec<u8>> = out.into_iter().map(|d| d.bytes).collect();
    let mut want = sent;
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn test_refused_packets_are_counted_with_their_reason() {
    // A multicast report (as a kernel sends when its interface comes up)
    // and a packet to an address no host has are refused, each counted
    // with why; the packet to b goes through.
    let clock = FakeClock::default();
    let igmp = packet(A, Ipv4Addr::new(224, 0, 0, 22), 40, 1);
    let stray = packet(A, Ipv4Addr::new(10, 9, 9, 9), 40, 2);
    let io = FakeIo::new(
        &clock,
        vec![(ms(1), 0, igmp.clone()), (ms(2), 0, igmp), (ms(3), 0, stray), (ms(4), 0, packet(A, B, 40, 3))],
    );
    let mut d = Driver::new(net(42_400_000, 1 << 20, None, 1), clock, io, exact());
    d.run().unwrap();
    let r = d.report();
    assert_eq!((r.packets_in, r.packets_refused, r.packets_out), (1, 3, 1));
    let reasons: Vec<(&str, u64)> = r.refused.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons.iter().any(|(k, n)| k.contains("224.0.0.22") && *n == 2), "{reasons:?}");
    assert!(reasons.iter().any(|(k, n)| k.contains("10.9.9.9") && *n == 1), "{reasons:?}");
}
