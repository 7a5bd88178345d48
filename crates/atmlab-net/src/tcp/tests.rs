//! Hand-worked loss patterns for the TCP variants (docs/models/tcp.md, "Test vectors") and the
//! receiver's ACK policy. The network is a test-controlled list of segments:
//! nothing is delivered unless the test says so.

use super::*;
use atmlab_engine::{Duration, SimTime};

const MSS: u64 = 512;

fn cfg(variant: TcpVariant) -> TcpConfig {
    TcpConfig { variant, ..TcpConfig::classic() }
}

struct Pair {
    now: SimTime,
    tx: TcpSender,
    rx: TcpReceiver,
}

impl Pair {
    /// An established connection; returns it with the first data segment(s)
    /// the sender emitted after the handshake.
    fn established(cfg: TcpConfig) -> (Pair, Vec<TcpSegment>) {
        Pair::established_for(cfg, None)
    }

    /// [`established`](Self::established) for a transfer of `bytes` (`None`: greedy).
    fn established_for(cfg: TcpConfig, bytes: Option<u64>) -> (Pair, Vec<TcpSegment>) {
        let mut p = Pair { now: SimTime::ZERO, tx: TcpSender::new(cfg.clone(), bytes), rx: TcpReceiver::new(cfg) };
        let mut out = Vec::new();
        p.tx.connect(p.now, &mut out);
        let syn = out.pop().unwrap();
        p.tick(Duration::from_ms(1));
        p.rx.on_segment(p.now, &syn, &mut out);
        let syn_ack = out.pop().unwrap();
        assert!(syn_ack.flags.contains(TcpFlags::SYN_ACK));
        p.tick(Duration::from_ms(1));
        p.tx.on_segment(p.now, &syn_ack, &mut out);
        (p, out)
    }

    fn tick(&mut self, d: Duration) {
        self.now += d;
    }

    /// Delivers data segments to the receiver, returns its ACKs.
    fn deliver_to_rx(&mut self, segs: &[TcpSegment]) -> Vec<TcpSegment> {
        let mut acks = Vec::new();
        for s in segs {
            self.rx.on_segment(self.now, s, &mut acks);
        }
        acks
    }

    /// Delivers ACKs to the sender, returns what it sends.
    fn deliver_to_tx(&mut self, acks: &[TcpSegment]) -> Vec<TcpSegment> {
        let mut out = Vec::new();
        for a in acks {
            self.tx.on_segment(self.now, a, &mut out);
        }
        out
    }

    /// Loss-free rounds until cwnd reaches `segments`; returns the segments
    /// in flight.
    fn grow_to(&mut self, segments: u64, mut inflight: Vec<TcpSegment>) -> Vec<TcpSegment> {
        while self.tx.cwnd() < segments * MSS {
            self.tick(Duration::from_ms(1));
            let acks = self.deliver_to_rx(&inflight);
            self.tick(Duration::from_ms(1));
            inflight = self.deliver_to_tx(&acks);
        }
        inflight
    }
}

fn data(segs: &[TcpSegment]) -> Vec<TcpSegment> {
    segs.iter().copied().filter(|s| s.len > 0).collect()
}

#[test]
fn test_handshake_negotiates_mss_and_window_scale() {
    let c = TcpConfig { window: 600_000, ..cfg(TcpVariant::Reno) };
    assert_eq!(c.window_shift(), 4); // 600000 >> 4 = 37500 <= 65535
    let (p, first) = Pair::established(c);
    assert_eq!(p.tx.mss(), 512);
    assert_eq!(p.tx.snd_wnd(), 65_535, "the SYN-ACK window is not scaled");
    assert_eq!(data(&first).len(), 1, "initial window of one segment");
    assert_eq!(first[0].seq, 1, "data starts after the SYN");
    // The first ACK carries the scaled window: 37500 << 4 = 600000.
    let mut p = p;
    let acks = p.deliver_to_rx(&first);
    assert_eq!(acks[0].window, 37_500);
    p.deliver_to_tx(&acks);
    assert_eq!(p.tx.snd_wnd(), 600_000);
}

#[test]
fn test_slow_start_doubles_per_round() {
    let (mut p, first) = Pair::established(cfg(TcpVariant::Reno));
    let inflight = p.grow_to(16, first);
    assert_eq!(p.tx.cwnd(), 16 * MSS);
    assert_eq!(data(&inflight).len(), 16);
}

/// cwnd = 16 segments, the first of the window lost, the other 15 arrive.
fn lose_first_of_sixteen(variant: TcpVariant) -> (Pair, Vec<TcpSegment>, TcpSegment) {
    let (mut p, first) = Pair::established(cfg(variant));
    let inflight = p.grow_to(16, first);
    assert_eq!(inflight.len(), 16);
    let lost = inflight[0];
    p.tick(Duration::from_ms(1));
    let dupacks = p.deliver_to_rx(&inflight[1..]);
    assert_eq!(dupacks.len(), 15);
    assert!(dupacks.iter().all(|a| a.ack == lost.seq));
    (p, dupacks, lost)
}

#[test]
fn test_reno_single_loss_vector() {
    // docs/models/tcp.md, "Test vectors": after the 3rd dup ACK ssthresh = 8, window 8 + 3 =
    // 11; after the 15th, 23: seven new segments during fast recovery; the
    // new ACK sets cwnd = 8.
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Reno);
    p.tick(Duration::from_ms(1));
    let out = p.deliver_to_tx(&dupacks[..2]);
    assert!(out.is_empty());
    let out = p.deliver_to_tx(&dupacks[2..3]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, lost.seq, "fast retransmit of the lost segment");
    assert_eq!(p.tx.ssthresh(), 8 * MSS);
    assert!(p.tx.in_fast_recovery());
    let mut new_data = Vec::new();
    for a in &dupacks[3..] {
        new_data.extend(p.deliver_to_tx(std::slice::from_ref(a)));
    }
    assert_eq!(new_data.len(), 7);
    assert!(new_data.iter().all(|s| s.seq >= lost.seq + 16 * MSS), "only new data");
    // The retransmission arrives: one cumulative ACK for all 16 (+ the 7 new
    // ones are still in flight).
    p.tick(Duration::from_ms(1));
    let ack = p.deliver_to_rx(&out);
    assert_eq!(ack[0].ack, lost.seq + 16 * MSS);
    p.deliver_to_tx(&ack);
    assert_eq!(p.tx.cwnd(), 8 * MSS);
    assert!(!p.tx.in_fast_recovery());
    assert_eq!(p.tx.stats.fast_retransmits, 1);
    assert_eq!(p.tx.stats.timeouts, 0);
}

#[test]
fn test_tahoe_single_loss_goes_back_n_from_one_segment() {
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Tahoe);
    let out = p.deliver_to_tx(&dupacks[..3]);
    assert_eq!(p.tx.cwnd(), MSS);
    assert_eq!(p.tx.ssthresh(), 8 * MSS);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, lost.seq);
    assert_eq!(p.tx.snd_nxt(), lost.seq + MSS, "go-back-N restarts at the loss");
    // Further dup ACKs do nothing.
    assert!(p.deliver_to_tx(&dupacks[3..]).is_empty());
}

#[test]
fn test_vanilla_ignores_dupacks_and_recovers_by_timeout() {
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Vanilla);
    assert!(p.deliver_to_tx(&dupacks).is_empty());
    assert_eq!(p.tx.cwnd(), 16 * MSS);
    let deadline = p.tx.rto_deadline().expect("timer runs");
    p.now = deadline;
    let mut out = Vec::new();
    p.tx.on_timeout(p.now, &mut out);
    assert_eq!(p.tx.stats.timeouts, 1);
    assert_eq!(p.tx.cwnd(), MSS);
    assert_eq!(p.tx.ssthresh(), 8 * MSS);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, lost.seq);
}

#[test]
fn test_recovery_states_reno_fast_then_open_and_timeout_loss_until_recover() {
    // Reno: the third duplicate ACK enters fast recovery with the inflation
    // of three segments; the new ACK leaves it.
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Reno);
    assert_eq!(p.tx.recovery(), Recovery::Open);
    let out = p.deliver_to_tx(&dupacks[..3]);
    assert_eq!(p.tx.recovery(), Recovery::Fast { dupwnd: 3 * MSS, partial_acked: false });
    p.deliver_to_tx(&dupacks[3..4]);
    assert_eq!(p.tx.recovery(), Recovery::Fast { dupwnd: 4 * MSS, partial_acked: false });
    let ack = p.deliver_to_rx(&out);
    p.deliver_to_tx(&ack);
    assert_eq!(p.tx.recovery(), Recovery::Open);

    // Vanilla: a timeout goes back N in the Loss state, which ends only when
    // everything sent before the timeout is acknowledged.
    let (mut p, dupacks, lost2) = lose_first_of_sixteen(TcpVariant::Vanilla);
    p.deliver_to_tx(&dupacks);
    p.now = p.tx.rto_deadline().expect("timer runs");
    let mut rexmit = Vec::new();
    p.tx.on_timeout(p.now, &mut rexmit);
    assert_eq!(p.tx.recovery(), Recovery::Loss);
    assert_eq!(rexmit[0].seq, lost2.seq);
    let ack = p.deliver_to_rx(&rexmit);
    assert_eq!(ack[0].ack, lost2.seq + 16 * MSS, "the retransmission fills the only hole");
    p.deliver_to_tx(&ack);
    assert_eq!(p.tx.recovery(), Recovery::Open);
    let _ = lost;
}

#[test]
fn test_sack_recovery_tracks_pipe_and_retransmitted_holes() {
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Sack);
    p.deliver_to_tx(&dupacks[..3]);
    // sack1 (Fall & Floyd 1996; ns-2.35 tcp-sack1.cc): pipe = 16 outstanding - 3 reported by the
    // duplicate ACKs = 13 segments (the fast retransmission is not counted);
    // the lost segment was retransmitted, so no hole below it is left.
    match p.tx.recovery() {
        Recovery::Sack { pipe, high_rxt } => {
            assert_eq!(pipe, 13 * MSS as i64);
            assert_eq!(high_rxt, lost.seq + MSS);
        }
        other => panic!("expected SACK recovery, got {other:?}"),
    }
    // Each further duplicate ACK takes one segment out of the pipe; with 12
    // segments estimated in the network and cwnd = 8 nothing may be sent.
    let sent = p.deliver_to_tx(&dupacks[3..4]);
    assert_eq!(p.tx.pipe(), 12 * MSS as i64);
    assert!(sent.is_empty());
}

#[test]
fn test_timer_is_tick_aligned_two_to_three_ticks() {
    // One segment on a LAN path: RTO = 3 ticks, armed mid-tick it fires at
    // the third tick boundary after it was set.
    let (mut p, first) = Pair::established(cfg(TcpVariant::Reno));
    let acks = p.deliver_to_rx(&first);
    p.deliver_to_tx(&acks);
    let set_at = p.now;
    let d = p.tx.rto_deadline().unwrap() - set_at;
    assert!(d > Duration::from_ms(200) && d <= Duration::from_ms(300), "{d}");
    assert_eq!(p.tx.rto_deadline().unwrap().as_ps() % Duration::from_ms(100).as_ps(), 0);
}

#[test]
fn test_karn_ack_of_retransmission_neither_samples_nor_resets_backoff() {
    let (mut p, first) = Pair::established(cfg(TcpVariant::Reno));
    let samples = p.tx.rtt().samples();
    p.now = p.tx.rto_deadline().unwrap();
    let mut out = Vec::new();
    p.tx.on_timeout(p.now, &mut out);
    assert_eq!(p.tx.rtt().backoff(), 2);
    assert_eq!(out[0].seq, first[0].seq);
    p.tick(Duration::from_ms(1));
    let acks = p.deliver_to_rx(&out);
    let more = p.deliver_to_tx(&acks);
    assert_eq!(p.tx.rtt().samples(), samples, "no sample from a retransmission");
    assert_eq!(p.tx.rtt().backoff(), 2, "backoff kept");
    // New data is timed; its ACK resets the backoff.
    p.tick(Duration::from_ms(1));
    let acks = p.deliver_to_rx(&more);
    p.deliver_to_tx(&acks);
    assert_eq!(p.tx.rtt().samples(), samples + 1);
    assert_eq!(p.tx.rtt().backoff(), 1);
}

#[test]
fn test_cwnd_never_below_one_segment_nor_ssthresh_below_two() {
    let (mut p, _) = Pair::established(cfg(TcpVariant::Reno));
    for _ in 0..5 {
        p.now = p.tx.rto_deadline().unwrap();
        let mut out = Vec::new();
        p.tx.on_timeout(p.now, &mut out);
        assert!(p.tx.cwnd() >= MSS);
        assert!(p.tx.ssthresh() >= 2 * MSS);
    }
}

#[test]
fn test_delayed_ack_every_second_segment() {
    let c = TcpConfig { delayed_ack: true, ..cfg(TcpVariant::Reno) };
    let (mut p, first) = Pair::established(c);
    let mut acks = p.deliver_to_rx(&first);
    assert!(acks.is_empty(), "a lone segment waits");
    // The delayed-ACK timer fires at the next 200 ms boundary (BSD fast timer).
    let d = p.rx.delack_deadline().unwrap();
    assert_eq!(d.as_ps() % Duration::from_ms(200).as_ps(), 0);
    assert!(d > p.now && d - p.now <= Duration::from_ms(200));
    p.now = d;
    p.rx.on_delack_timeout(&mut acks);
    assert_eq!(acks.len(), 1);
    // Ten back-to-back in-order segments: five ACKs, each on the even one.
    let segs: Vec<_> = (0..10).map(|i| TcpSegment { seq: 1 + MSS * (1 + i), len: MSS as u32, ..first[0] }).collect();
    let mut acks = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let before = acks.len();
        p.rx.on_segment(p.now, s, &mut acks);
        assert_eq!(acks.len() - before, i % 2, "segment {i}");
    }
    assert_eq!(acks.len(), 5);
}

#[test]
fn test_receiver_acks_out_of_order_at_once_and_fills_gaps() {
    let (mut p, first) = Pair::established(cfg(TcpVariant::Reno));
    let seg = |i: u64| TcpSegment { seq: 1 + MSS * i, len: MSS as u32, ..first[0] };
    let acks = p.deliver_to_rx(&[seg(1), seg(3), seg(2)]);
    let nums: Vec<_> = acks.iter().map(|a| a.ack).collect();
    assert_eq!(nums, vec![1, 1, 1], "segment 0 missing: three duplicate ACKs");
    assert_eq!(p.rx.out_of_order(), &[(1 + MSS, 1 + 4 * MSS)]);
    let acks = p.deliver_to_rx(&[seg(0)]);
    assert_eq!(acks[0].ack, 1 + 4 * MSS, "the gap filled: everything acknowledged");
    assert_eq!(p.rx.stats.bytes_delivered, 4 * MSS);
    let acks = p.deliver_to_rx(&[seg(2)]);
    assert_eq!(acks[0].ack, 1 + 4 * MSS);
    assert_eq!(p.rx.stats.duplicate_segments, 1);
}

#[test]
fn test_lost_syn_is_retransmitted_with_backoff() {
    let c = cfg(TcpVariant::Reno);
    let mut tx = TcpSender::new(c, None);
    let mut out = Vec::new();
    tx.connect(SimTime::ZERO, &mut out);
    let d1 = tx.rto_deadline().unwrap();
    assert_eq!(d1, SimTime::ZERO + Duration::from_secs(3));
    tx.on_timeout(d1, &mut out);
    assert_eq!(out.len(), 2);
    assert!(out[1].flags.contains(TcpFlags::SYN));
    assert_eq!(tx.rto_deadline().unwrap() - d1, Duration::from_secs(6));
}

#[test]
fn test_finite_transfer_stops_at_its_end() {
    let c = cfg(TcpVariant::Reno);
    let mut p = Pair { now: SimTime::ZERO, tx: TcpSender::new(c.clone(), Some(1000)), rx: TcpReceiver::new(c) };
    let mut out = Vec::new();
    p.tx.connect(p.now, &mut out);
    let mut segs = out;
    for _ in 0..10 {
        let replies = p.deliver_to_rx(&segs);
        segs = p.deliver_to_tx(&replies);
    }
    assert!(p.tx.is_done());
    assert_eq!(p.rx.stats.bytes_delivered, 1000);
    assert_eq!(p.tx.stats.bytes_sent, 1000);
}

// ---------------------------------------------------------------------------
// Loss patterns through a wave-by-wave network: every segment in flight is
// delivered (in order), then every ACK; the segments listed in `lose` are
// dropped the first time they are sent. When nothing is in flight the clock
// jumps to the retransmission timer.

struct Trace {
    tx: TcpSender,
    rx: TcpReceiver,
    /// Every data segment sent, in order: (wave, seq, retransmission?).
    sent: Vec<(usize, u64, bool)>,
}

/// Grows cwnd to 16 loss-free, then loses the segments of the next window
/// with the given indices (0..16) once, and runs `waves` more waves.
fn run_losses(variant: TcpVariant, lose: &[u64], waves: usize) -> Trace {
    let (mut p, first) = Pair::established(cfg(variant));
    let mut inflight = p.grow_to(16, first);
    let base = inflight[0].seq;
    let lost_seqs: Vec<u64> = lose.iter().map(|i| base + i * MSS).collect();
    let mut dropped: Vec<u64> = Vec::new();
    let mut sent: Vec<(usize, u64, bool)> = inflight.iter().map(|s| (0, s.seq, false)).collect();
    let mut max_seen = inflight.iter().map(|s| s.seq).max().unwrap();
    for wave in 1..=waves {
        let delivered: Vec<TcpSegment> = inflight
            .iter()
            .copied()
            .filter(|s| {
                let lose = lost_seqs.contains(&s.seq) && !dropped.contains(&s.seq);
                if lose {
                    dropped.push(s.seq);
                }
                !lose
            })
            .collect();
        p.tick(Duration::from_ms(1));
        let acks = p.deliver_to_rx(&delivered);
        p.tick(Duration::from_ms(1));
        let mut next = p.deliver_to_tx(&acks);
        if next.is_empty() && p.tx.snd_una() < p.tx.snd_max() {
            p.now = p.tx.rto_deadline().expect("outstanding data has a timer");
            p.tx.on_timeout(p.now, &mut next);
        }
        for s in next.iter().filter(|s| s.len > 0) {
            sent.push((wave, s.seq, s.seq <= max_seen));
            max_seen = max_seen.max(s.seq);
        }
        inflight = next.into_iter().filter(|s| s.len > 0).collect();
    }
    Trace { tx: p.tx, rx: p.rx, sent }
}

#[test]
fn test_one_loss_every_variant() {
    for variant in [TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
        let t = run_losses(variant, &[0], 8);
        assert_eq!(t.tx.stats.fast_retransmits, 1, "{variant:?}");
        assert_eq!(t.tx.stats.timeouts, 0, "{variant:?}");
        assert!(!t.tx.in_fast_recovery(), "{variant:?} recovered");
    }
    let t = run_losses(TcpVariant::Vanilla, &[0], 8);
    assert_eq!((t.tx.stats.fast_retransmits, t.tx.stats.timeouts), (0, 1));
    assert_eq!(t.tx.stats.retransmitted_segments, 1, "then go back N: the others were acknowledged");
}

#[test]
fn test_sack_single_loss_vector() {
    // As the Reno vector: 7 new segments during recovery, cwnd 8 after.
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::Sack);
    assert!(p.tx.sack_enabled());
    assert_eq!(dupacks[0].options.sack.as_slice(), &[(lost.seq + MSS, lost.seq + 2 * MSS)]);
    let out = p.deliver_to_tx(&dupacks[..3]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, lost.seq);
    assert_eq!(p.tx.pipe(), 13 * MSS as i64, "16 outstanding - 3 duplicate ACKs");
    let mut new_data = Vec::new();
    for a in &dupacks[3..] {
        new_data.extend(p.deliver_to_tx(std::slice::from_ref(a)));
    }
    assert_eq!(new_data.len(), 7);
    assert!(new_data.iter().all(|s| s.seq >= lost.seq + 16 * MSS));
    let ack = p.deliver_to_rx(&out);
    p.deliver_to_tx(&ack);
    assert_eq!(p.tx.cwnd(), 8 * MSS);
    assert!(!p.tx.in_fast_recovery());
}

#[test]
fn test_two_losses_in_a_window() {
    // Segments 0 and 5 of a 16-segment window are lost.
    let reno = run_losses(TcpVariant::Reno, &[0, 5], 12);
    assert_eq!(reno.tx.stats.fast_retransmits, 1);
    assert_eq!(reno.tx.stats.timeouts, 1, "Reno leaves recovery on the partial ACK and waits for the timer");

    let newreno = run_losses(TcpVariant::NewReno, &[0, 5], 12);
    assert_eq!((newreno.tx.stats.fast_retransmits, newreno.tx.stats.timeouts), (1, 0));
    assert_eq!(newreno.tx.stats.retransmitted_segments, 2, "the partial ACK retransmits segment 5");

    let sack = run_losses(TcpVariant::Sack, &[0, 5], 12);
    assert_eq!((sack.tx.stats.fast_retransmits, sack.tx.stats.timeouts), (1, 0));
    assert_eq!(sack.tx.stats.retransmitted_segments, 2);
    // sack1 retransmits segment 5 from the scoreboard in the same wave as
    // segment 0, before any partial ACK: one round trip earlier than NewReno.
    let rexmit_wave = |t: &Trace| t.sent.iter().filter(|s| s.2).map(|s| s.0).collect::<Vec<_>>();
    let (sw, nw) = (rexmit_wave(&sack), rexmit_wave(&newreno));
    assert_eq!(sw[0], sw[1], "SACK: both holes in one wave");
    assert!(nw[1] > nw[0], "NewReno: the second hole a round trip later");

    let vanilla = run_losses(TcpVariant::Vanilla, &[0, 5], 12);
    assert_eq!((vanilla.tx.stats.fast_retransmits, vanilla.tx.stats.timeouts), (0, 1));

    // Everyone ends with every byte delivered in order.
    for t in [&reno, &newreno, &sack, &vanilla] {
        assert!(t.rx.out_of_order().is_empty());
        assert_eq!(t.rx.rcv_nxt(), t.tx.snd_una());
    }
}

#[test]
fn test_whole_window_lost_is_a_timeout_for_every_variant() {
    let all: Vec<u64> = (0..16).collect();
    for variant in [TcpVariant::Vanilla, TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
        let t = run_losses(variant, &all, 1);
        assert_eq!((t.tx.stats.timeouts, t.tx.stats.fast_retransmits), (1, 0), "{variant:?}");
        assert_eq!(t.tx.cwnd(), MSS, "{variant:?}: one segment after the timeout");
        assert_eq!(t.tx.ssthresh(), 8 * MSS, "{variant:?}");
        assert!(t.tx.scoreboard().ranges().is_empty());
    }
}

#[test]
fn test_newreno_full_ack_sets_cwnd_to_min_ssthresh_flight_plus_one() {
    let (mut p, dupacks, lost) = lose_first_of_sixteen(TcpVariant::NewReno);
    let rexmit = p.deliver_to_tx(&dupacks[..3]);
    let _new = p.deliver_to_tx(&dupacks[3..]); // seven new segments go out
    let ack = p.deliver_to_rx(&rexmit);
    assert_eq!(ack[0].ack, lost.seq + 16 * MSS, "a full ACK");
    p.deliver_to_tx(&ack);
    // 7 segments still in flight: min(ssthresh 8, 7 + 1) = 8 segments.
    assert_eq!(p.tx.cwnd(), 8 * MSS);
    assert!(!p.tx.in_fast_recovery());
}

#[test]
fn test_receiver_sack_blocks_follow_rfc2018_order() {
    let c = cfg(TcpVariant::Sack);
    let (mut p, first) = Pair::established(c);
    let seg = |i: u64| TcpSegment { seq: 1 + MSS * i, len: MSS as u32, ..first[0] };
    let acks = p.deliver_to_rx(&[seg(2), seg(5), seg(3), seg(8)]);
    let blocks: Vec<Vec<(u64, u64)>> = acks.iter().map(|a| a.options.sack.as_slice().to_vec()).collect();
    let r = |a: u64, b: u64| (1 + MSS * a, 1 + MSS * b);
    assert_eq!(blocks[0], vec![r(2, 3)]);
    assert_eq!(blocks[1], vec![r(5, 6), r(2, 3)], "the newest block first");
    assert_eq!(blocks[2], vec![r(2, 4), r(5, 6)], "merged block first");
    assert_eq!(blocks[3], vec![r(8, 9), r(2, 4), r(5, 6)], "at most three blocks");
    // Filling the gap below 2..4 drops that block.
    let acks = p.deliver_to_rx(&[seg(0), seg(1)]);
    assert_eq!(acks[1].ack, 1 + 4 * MSS);
    assert_eq!(acks[1].options.sack.as_slice(), &[r(8, 9), r(5, 6)]);
}

#[test]
fn test_stretch_ack_timer_merges_acks_and_duplicates() {
    // 002 s4.3: Linux 2.0 ACKs on a ~4 ms timer, one cumulative ACK for all
    // that arrived, duplicates merged too.
    let c = TcpConfig { stretch_ack: Some(Duration::from_ms(4)), ..cfg(TcpVariant::Reno) };
    let (mut p, first) = Pair::established(c);
    let seg = |i: u64| TcpSegment { seq: 1 + MSS * i, len: MSS as u32, ..first[0] };
    let start = p.now;
    let acks = p.deliver_to_rx(&[seg(0), seg(1), seg(2), seg(4), seg(5)]);
    assert!(acks.is_empty(), "nothing before the timer, out-of-order data included");
    assert_eq!(p.rx.delack_deadline(), Some(start + Duration::from_ms(4)));
    p.tick(Duration::from_ms(1));
    p.deliver_to_rx(&[seg(6)]);
    assert_eq!(p.rx.delack_deadline(), Some(start + Duration::from_ms(4)), "the first segment started it");
    p.now = start + Duration::from_ms(4);
    let mut acks = Vec::new();
    p.rx.on_delack_timeout(&mut acks);
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].ack, 1 + 3 * MSS, "one cumulative ACK");
    assert_eq!(p.rx.delack_deadline(), None);
}

#[test]
fn test_frozen_fast_recovery_sends_no_new_data_until_the_retransmission_is_acked() {
    // 002 s5.3 (3): no window growth while a fast-retransmitted segment is
    // outstanding. The classic Reno vector sends 7 new segments; frozen, 0.
    let c = TcpConfig { freeze_window_in_fast_recovery: true, ..cfg(TcpVariant::Reno) };
    let (mut p, first) = Pair::established(c);
    let inflight = p.grow_to(16, first);
    let lost = inflight[0];
    let dupacks = p.deliver_to_rx(&inflight[1..]);
    let out = p.deliver_to_tx(&dupacks[..3]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, lost.seq);
    let mut more = Vec::new();
    for a in &dupacks[3..] {
        more.extend(p.deliver_to_tx(std::slice::from_ref(a)));
    }
    assert!(more.is_empty(), "{} segments sent", more.len());
    let ack = p.deliver_to_rx(&out);
    p.deliver_to_tx(&ack);
    assert_eq!(p.tx.cwnd(), 8 * MSS);
}

#[test]
fn test_backoff_reset_rules_and_dupacks_surviving_a_timeout() {
    // Default (BSD, Karn): the ACK of a retransmission keeps the backoff
    // (test_karn_...). With backoff_reset = new_ack it resets it.
    let c = TcpConfig { backoff_reset: BackoffReset::NewAck, keep_dupacks_on_timeout: true, ..cfg(TcpVariant::Reno) };
    let (mut p, first) = Pair::established(c);
    let inflight = p.grow_to(4, first);
    // Two duplicate ACKs (segment 0 lost), then a timeout.
    let dupacks = p.deliver_to_rx(&inflight[1..3]);
    p.deliver_to_tx(&dupacks);
    p.now = p.tx.rto_deadline().unwrap();
    let mut out = Vec::new();
    p.tx.on_timeout(p.now, &mut out);
    assert_eq!(p.tx.rtt().backoff(), 2);
    assert_eq!(p.tx.dupacks(), 2, "002 s5.3 (4): the counter survives the timeout");
    p.tick(Duration::from_ms(1));
    let acks = p.deliver_to_rx(&out);
    p.deliver_to_tx(&acks);
    assert_eq!(p.tx.rtt().backoff(), 1, "any new ACK resets it");
}

#[test]
fn test_host_ticks_fire_on_the_hosts_own_tick_boundaries() {
    let (tick, delay) = (Duration::from_ms(500), Duration::from_ms(1000));
    let at = |ms: u64| SimTime::ZERO + Duration::from_ms(ms);
    // Aligned: 2 ticks set at 700 ms fire at the 2nd boundary after it, 1.5 s.
    assert_eq!(TimerModel::TickAligned.expiry(at(700), delay, tick, 0.9), at(1500));
    // Phase 0 is the aligned clock.
    assert_eq!(TimerModel::HostTicks.expiry(at(700), delay, tick, 0.0), at(1500));
    // Phase 0.4: ticks at 200, 700, 1200, 1700 ms; set at 700 (on a tick),
    // the 2nd boundary after it is 1700 ms.
    assert_eq!(TimerModel::HostTicks.expiry(at(700), delay, tick, 0.4), at(1700));
    // Set just after a tick: between 1 and 2 ticks later.
    assert_eq!(TimerModel::HostTicks.expiry(at(701), delay, tick, 0.4), at(1700));
    assert_eq!(TimerModel::HostTicks.expiry(at(100), delay, tick, 0.4), at(700));
    assert_eq!(TimerModel::Exact.expiry(at(701), delay, tick, 0.4), at(1701));
}

// --- The socket send path (4.4BSD sosend / tcp_output, Nagle) ---

fn socket_cfg(send_buffer: u32, write_size: u32, write_cost: Duration) -> TcpConfig {
    TcpConfig {
        initial_cwnd: 16,
        socket: Some(SocketConfig { send_buffer, write_size, write_cost }),
        ..cfg(TcpVariant::Reno)
    }
}

/// Runs the sender's write timer until `until`, returns what it sent.
fn run_writes(p: &mut Pair, until: SimTime) -> Vec<TcpSegment> {
    let mut out = Vec::new();
    while let Some(t) = p.tx.write_deadline() {
        if t > until {
            break;
        }
        p.now = t;
        p.tx.on_write_timer(p.now, &mut out);
    }
    out
}

#[test]
fn test_nagle_holds_a_sub_mss_write_while_data_is_outstanding() {
    // 100-byte writes 1 ms apart, window 65535 (half of it is far above a
    // write), MSS 512: the first write goes out at once (the connection is
    // idle), the next ones wait while it is unacknowledged.
    let (mut p, first) = Pair::established(socket_cfg(65_535, 100, Duration::from_ms(1)));
    assert!(data(&first).is_empty(), "the first write call is still spending its cost");
    let start = p.now;
    let sent = run_writes(&mut p, start + Duration::from_ms(1));
    assert_eq!(data(&sent).iter().map(|s| s.len).collect::<Vec<_>>(), vec![100]);
    let held = run_writes(&mut p, start + Duration::from_ms(3));
    assert!(data(&held).is_empty(), "two more 100-byte writes are held while 100 bytes are outstanding");
    assert_eq!(p.tx.buffered(), 300);
    // The ACK of the first segment makes the connection idle: the 200 held
    // bytes go out as one segment.
    let acks = p.deliver_to_rx(&sent);
    let out = p.deliver_to_tx(&acks);
    assert_eq!(data(&out).iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(), vec![(101, 200)]);
    // Without Nagle's hold (no socket path) a greedy sender would have sent
    // full segments at once; here full segments still go out while data is
    // outstanding: 6 more writes make 600 bytes, 512 of them a full segment.
    let until = p.now + Duration::from_ms(6);
    let out = run_writes(&mut p, until);
    assert_eq!(data(&out).iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(), vec![(301, 512)]);
}

/// Segment lengths of a loss-free transfer: every round delivers what is
/// in flight and returns the ACKs, the application writing back to back.
fn segment_stream(write_size: u32, rounds: usize) -> Vec<u32> {
    let c = TcpConfig {
        mss: 9140,
        window: 16_384,
        initial_cwnd: 1,
        socket: Some(SocketConfig { send_buffer: 16_384, write_size, write_cost: Duration::ZERO }),
        ..cfg(TcpVariant::Reno)
    };
    let (mut p, mut inflight) = Pair::established(c);
    let mut lens = Vec::new();
    for _ in 0..rounds {
        lens.extend(data(&inflight).iter().map(|s| s.len));
        // ACK one segment at a time, as the receiver does.
        let mut next = Vec::new();
        for s in data(&inflight) {
            p.tick(Duration::from_ms(1));
            let acks = p.deliver_to_rx(&[s]);
            next.extend(p.deliver_to_tx(&acks));
        }
        inflight = next;
    }
    lens
}

#[test]
fn test_tsdu_size_changes_the_segment_stream() {
    // 16 KiB window and send buffer, MSS 9140 (000's W = 16 on Classical IP).
    // 4 KiB writes: the first write is sent alone (idle); then segments
    // gather while data is outstanding until half the window (8192).
    let small = segment_stream(4096, 4);
    // 4 KiB writes: the first write goes alone (idle, it empties the
    // buffer); the buffer then fills (16384) while cwnd (1 MSS) leaves 5044
    // usable, held; the ACK makes the connection idle: a full 9140 and the
    // 3148 rest (idle, empties the buffer); from then on each ACK frees two
    // writes and a segment goes when 8192 (half the window) has gathered.
    assert_eq!(small, vec![4096, 9140, 3148, 8192, 8192, 8192, 8192]);
    // 20 KiB writes: the buffer fills at once, the first segment is a full
    // MSS and the rest (7244) goes when the connection is idle again; then
    // the same half-window segments.
    let large = segment_stream(20_480, 4);
    assert_eq!(large, vec![9140, 7244, 9140, 7244, 8192, 8192, 8192]);
    // Without the socket path the write size is not a parameter at all:
    // the greedy sender sends 9140, then holds the 7244 rest (< 8192).
    let greedy = TcpConfig { mss: 9140, window: 16_384, ..cfg(TcpVariant::Reno) };
    let (_, first) = Pair::established(greedy);
    assert_eq!(data(&first).iter().map(|s| s.len).collect::<Vec<_>>(), vec![9140]);
}

#[test]
fn test_send_buffer_bounds_what_is_outstanding_and_blocks_the_writer() {
    // A 2048-byte buffer with a large window: never more than 2048 bytes
    // unacknowledged; the writer copies again once ACKs free the low-water
    // mark (min(MCLBYTES, buffer) = the whole buffer here).
    let (mut p, first) = Pair::established(socket_cfg(2048, 4096, Duration::ZERO));
    let lens: Vec<u32> = data(&first).iter().map(|s| s.len).collect();
    assert_eq!(lens, vec![512, 512, 512, 512]);
    assert_eq!(p.tx.buffered(), 2048);
    // ACK of one segment: 512 bytes free, less than the low-water mark and
    // than the 2048 left of the write: the writer stays blocked.
    let acks = p.deliver_to_rx(&first[..1]);
    let out = p.deliver_to_tx(&acks);
    assert!(data(&out).is_empty());
    assert_eq!(p.tx.buffered(), 1536);
    let acks = p.deliver_to_rx(&first[1..]);
    let out = p.deliver_to_tx(&acks);
    // All acknowledged: the rest of the write (2048) is copied and sent.
    assert_eq!(data(&out).iter().map(|s| s.len).sum::<u32>(), 2048);
    assert!(p.tx.snd_max() - p.tx.snd_una() <= 2048);
}

#[test]
fn test_stop_writing_ends_the_transfer_with_the_buffered_data() {
    let (mut p, first) = Pair::established(socket_cfg(2048, 4096, Duration::ZERO));
    assert_eq!(data(&first).len(), 4);
    let bytes = p.tx.stop_writing();
    assert_eq!(bytes, 2048, "what was copied into the buffer, all of it already sent");
    let acks = p.deliver_to_rx(&first);
    let out = p.deliver_to_tx(&acks);
    assert!(data(&out).is_empty());
    assert!(p.tx.is_done());
}

#[test]
fn test_a_finite_transfer_through_the_socket_ends_its_writes_and_completes() {
    // 3000 bytes in 1000-byte writes into a 2048-byte buffer: the last
    // write is the transfer's last byte, after which the application makes
    // no more write calls (they used to spin, copying nothing, as soon as
    // the buffer had room again), and the transfer completes.
    let (mut p, mut inflight) = Pair::established_for(socket_cfg(2048, 1000, Duration::ZERO), Some(3000));
    for _ in 0..20 {
        if p.tx.is_done() {
            break;
        }
        let acks = p.deliver_to_rx(&inflight);
        inflight = p.deliver_to_tx(&acks);
        if inflight.is_empty() && !p.tx.is_done() {
            // The receiver's delayed ACK: run its timer.
            p.tick(Duration::from_ms(500));
            let mut acks = Vec::new();
            p.rx.on_delack_timeout(&mut acks);
            inflight = p.deliver_to_tx(&acks);
        }
    }
    assert!(p.tx.is_done(), "the transfer completes");
    let sent: u64 = p.tx.snd_max() - 1;
    assert_eq!(sent, 3000, "no byte beyond the transfer's end was written");
    assert_eq!(p.tx.buffered(), 0);
}

#[test]
fn test_a_zero_write_size_from_the_api_still_makes_progress() {
    // The scenario format refuses 0; a sender built directly must not spin.
    let (p, first) = Pair::established(socket_cfg(1024, 0, Duration::ZERO));
    // One-byte writes: the first goes alone (idle), the next gather to a
    // full MSS, the other 511 are held (Nagle); the buffer is full.
    assert_eq!(data(&first).iter().map(|s| s.len).collect::<Vec<_>>(), vec![1, 512]);
    assert_eq!(p.tx.buffered(), 1024);
}

// --- Solaris 2.x delayed ACKs (counted in bytes, in units of the MSS) ---

/// A receiver with Solaris's rule and a 50 ms timer, past the handshake at
/// `t = 0`; returns it with a data segment to copy (`seq` 1 is the first byte).
fn solaris_rx(mss: u32, window: u32, cap: Option<u32>) -> (TcpReceiver, TcpSegment) {
    established_rx(TcpConfig {
        mss,
        window,
        delayed_ack: true,
        delayed_ack_rule: DelayedAckRule::Solaris,
        delayed_ack_max: cap,
        delayed_ack_timeout: Duration::from_ms(50),
        delayed_ack_timer: TimerModel::Exact,
        ..cfg(TcpVariant::Reno)
    })
}

fn established_rx(c: TcpConfig) -> (TcpReceiver, TcpSegment) {
    let mss = c.mss;
    let mut rx = TcpReceiver::new(c);
    let syn =
        TcpSegment { seq: 0, ack: 0, len: 0, flags: TcpFlags::SYN, window: 65_535, options: TcpOptions::default() };
    let mut out = Vec::new();
    rx.on_segment(SimTime::ZERO, &syn, &mut out);
    assert_eq!(out.len(), 1, "the SYN-ACK");
    let ack = TcpSegment { seq: 1, ack: 1, flags: TcpFlags::ACK, ..syn };
    out.clear();
    rx.on_segment(SimTime::ZERO, &ack, &mut out);
    assert!(out.is_empty());
    (rx, TcpSegment { seq: 1, ack: 1, len: mss, flags: TcpFlags::ACK, ..syn })
}

/// Feeds segments `[seq, seq + len)` at `now`; returns, per segment, the ACK
/// number it drew at once (`None`: deferred).
fn feed(rx: &mut TcpReceiver, now: SimTime, data: &TcpSegment, segs: &[(u64, u32)]) -> Vec<Option<u64>> {
    segs.iter()
        .map(|&(seq, len)| {
            let mut out = Vec::new();
            rx.on_segment(now, &TcpSegment { seq, len, ..*data }, &mut out);
            assert!(out.len() <= 1);
            out.first().map(|a| a.ack)
        })
        .collect()
}

#[test]
fn test_solaris_cap_is_half_the_receive_window_in_whole_mss_at_least_four() {
    let cap = |mss: u32, window: u32, max: Option<u32>| {
        TcpConfig { mss, window, delayed_ack_max: max, ..TcpConfig::classic() }.deferred_ack_cap()
    };
    // Study 000's MSS of 9140: 8, 16 and 32 KiB round up to 1, 2 and 4 MSS,
    // raised to Solaris's minimum of 4: a cap of 2 MSS; 50 KiB is 6 MSS: 3.
    assert_eq!(cap(9140, 8 * 1024, None), 2);
    assert_eq!(cap(9140, 16 * 1024, None), 2);
    assert_eq!(cap(9140, 32 * 1024, None), 2);
    assert_eq!(cap(9140, 50 * 1024, None), 3);
    // 65535 bytes of 512-byte MSS: 128 MSS, a cap of 64; a set cap wins.
    assert_eq!(cap(512, 65_535, None), 64);
    assert_eq!(cap(512, 65_535, Some(2)), 2);
}

#[test]
fn test_solaris_limit_grows_by_one_mss_per_forced_ack_up_to_the_cap() {
    // MSS 1000, window 8000: cap 4 MSS. The limit starts at 1000 bytes, so
    // full segments are acknowledged after segments 1, 3 (2000 bytes), 6
    // (3000), 10 and 14 (4000, the cap): worked by hand from tcp_rput.
    let (mut rx, data) = solaris_rx(1000, 8000, None);
    assert_eq!(rx.deferred_ack_limits(), (1000, 4000));
    let segs: Vec<(u64, u32)> = (0..14).map(|i| (1 + 1000 * i, 1000)).collect();
    let acks = feed(&mut rx, SimTime::ZERO, &data, &segs);
    let acked: Vec<usize> = acks.iter().enumerate().filter(|(_, a)| a.is_some()).map(|(i, _)| i + 1).collect();
    assert_eq!(acked, vec![1, 3, 6, 10, 14]);
    assert_eq!(acks[13], Some(14_001), "a cumulative ACK of everything");
    assert_eq!(rx.deferred_ack_limits(), (4000, 4000));
    assert_eq!(rx.delack_deadline(), None, "nothing is waiting");
    // Under BSD's rule the same segments are acknowledged every second one.
    let (mut bsd, data) =
        established_rx(TcpConfig { mss: 1000, window: 8000, delayed_ack: true, ..cfg(TcpVariant::Reno) });
    let acks = feed(&mut bsd, SimTime::ZERO, &data, &segs);
    let acked: Vec<usize> = acks.iter().enumerate().filter(|(_, a)| a.is_some()).map(|(i, _)| i + 1).collect();
    assert_eq!(acked, vec![2, 4, 6, 8, 10, 12, 14]);
}

#[test]
fn test_solaris_timer_restarts_per_deferred_segment_and_falls_back_to_one_mss() {
    let (mut rx, data) = solaris_rx(1000, 8000, None);
    let t = |ms: u64| SimTime::ZERO + Duration::from_ms(ms);
    // Grow the limit to the cap (ACKs at 1, 3, 6, 10).
    let segs: Vec<(u64, u32)> = (0..10).map(|i| (1 + 1000 * i, 1000)).collect();
    feed(&mut rx, t(0), &data, &segs);
    assert_eq!(rx.deferred_ack_limits(), (4000, 4000));
    // Three more wait; each restarts the 50 ms timer.
    assert_eq!(feed(&mut rx, t(10), &data, &[(10_001, 1000)]), vec![None]);
    assert_eq!(rx.delack_deadline(), Some(t(60)));
    assert_eq!(feed(&mut rx, t(20), &data, &[(11_001, 1000), (12_001, 1000)]), vec![None, None]);
    assert_eq!(rx.delack_deadline(), Some(t(70)));
    // The timer fires with 3000 bytes waiting (more than one MSS): the limit
    // falls back to one MSS, the cap by one MSS (4000 > 2 MSS).
    let mut out = Vec::new();
    rx.on_delack_timeout(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 13_001);
    assert_eq!(rx.deferred_ack_limits(), (1000, 3000));
    // The next segment reaches the one-MSS limit: an ACK, the limit grows.
    assert_eq!(feed(&mut rx, t(80), &data, &[(13_001, 1000)]), vec![Some(14_001)]);
    assert_eq!(rx.deferred_ack_limits(), (2000, 3000));
    // One MSS waiting when the timer fires is no sign of trouble: no change.
    assert_eq!(feed(&mut rx, t(90), &data, &[(14_001, 1000)]), vec![None]);
    out.clear();
    rx.on_delack_timeout(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(rx.deferred_ack_limits(), (2000, 3000));
    // A timer with nothing waiting sends nothing.
    out.clear();
    rx.on_delack_timeout(&mut out);
    assert!(out.is_empty());
}

#[test]
fn test_solaris_segments_shorter_than_the_mss_as_in_study_000() {
    // MSS 9140, 8 KiB window: the limit is one MSS (9140 bytes), the cap 2.
    let (mut rx, data) = solaris_rx(9140, 8192, None);
    assert_eq!(rx.deferred_ack_limits(), (9140, 18_280));
    let t = |ms: u64| SimTime::ZERO + Duration::from_ms(ms);
    // A window-sized 8 KiB segment with nothing unacknowledged before it
    // waits for the timer: 50 ms, round after round.
    assert_eq!(feed(&mut rx, t(0), &data, &[(1, 8192)]), vec![None]);
    assert_eq!(rx.delack_deadline(), Some(t(50)));
    let mut out = Vec::new();
    rx.on_delack_timeout(&mut out);
    assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), vec![8193]);
    assert_eq!(rx.deferred_ack_limits(), (9140, 18_280), "8192 bytes are not more than one MSS");
    assert_eq!(feed(&mut rx, t(200), &data, &[(8193, 8192)]), vec![None]);
    assert_eq!(rx.delack_deadline(), Some(t(250)));
    out.clear();
    rx.on_delack_timeout(&mut out);
    assert_eq!(out.len(), 1);
    // Two 4 KiB halves: the first waits; the second follows 4096
    // unacknowledged bytes, not a whole number of MSS: an ACK at once.
    assert_eq!(feed(&mut rx, t(400), &data, &[(16_385, 4096), (20_481, 4096)]), vec![None, Some(24_577)]);
    // Two 8 KiB segments: 16384 bytes reach the limit at the second one,
    // which is acknowledged and raises the limit to the cap.
    assert_eq!(feed(&mut rx, t(600), &data, &[(24_577, 8192), (32_769, 8192)]), vec![None, Some(40_961)]);
    assert_eq!(rx.deferred_ack_limits(), (18_280, 18_280));
    // A short segment after a whole MSS waiting: 9140 % 9140 == 0, it waits.
    assert_eq!(feed(&mut rx, t(700), &data, &[(40_961, 9140), (50_101, 100)]), vec![None, None]);
}

#[test]
fn test_solaris_duplicates_and_out_of_order_segments_are_acknowledged_at_once() {
    let (mut rx, data) = solaris_rx(1000, 8000, None);
    // ACKs at 1 and 3: the limit is 3000; segment 4 waits.
    let segs: Vec<(u64, u32)> = (0..4).map(|i| (1 + 1000 * i, 1000)).collect();
    assert_eq!(feed(&mut rx, SimTime::ZERO, &data, &segs), vec![Some(1001), None, Some(3001), None]);
    assert_eq!(rx.deferred_ack_limits(), (3000, 4000));
    // Segment 4 again (its ACK came too late for the sender): ACK at once,
    // the limit back to one MSS and the cap down by one.
    assert_eq!(feed(&mut rx, SimTime::ZERO, &data, &[(3001, 1000)]), vec![Some(4001)]);
    assert_eq!(rx.deferred_ack_limits(), (1000, 3000));
    // A duplicate of data already acknowledged leaves the cap alone.
    assert_eq!(feed(&mut rx, SimTime::ZERO, &data, &[(1, 1000)]), vec![Some(4001)]);
    assert_eq!(rx.deferred_ack_limits(), (1000, 3000));
    // Out of order: a duplicate ACK at once; the segment that fills the gap
    // is acknowledged at once too.
    assert_eq!(feed(&mut rx, SimTime::ZERO, &data, &[(5001, 1000)]), vec![Some(4001)]);
    assert_eq!(feed(&mut rx, SimTime::ZERO, &data, &[(4001, 1000)]), vec![Some(6001)]);
    assert_eq!(rx.delack_deadline(), None);
}

#[test]
fn test_solaris_cap_of_zero_or_one_mss() {
    // Cap 0: every segment is acknowledged at once.
    let (mut rx, data) = solaris_rx(1000, 8000, Some(0));
    assert_eq!(
        feed(&mut rx, SimTime::ZERO, &data, &[(1, 1000), (1001, 500), (1501, 1000)]),
        vec![Some(1001), Some(1501), Some(2501)]
    );
    // Cap 1: full segments are acknowledged at once, a short one waits.
    let (mut rx, data) = solaris_rx(1000, 8000, Some(1));
    assert_eq!(
        feed(&mut rx, SimTime::ZERO, &data, &[(1, 1000), (1001, 1000), (2001, 500)]),
        vec![Some(1001), Some(2001), None]
    );
}

/// Solaris 2.5's timer (`rto_algorithm = "solaris25"`) with its ndd defaults.
fn solaris25() -> TcpConfig {
    TcpConfig {
        rto: RtoConfig {
            tick: Duration::from_ms(10),
            initial_rto: Duration::from_ms(500),
            min_rto: Duration::from_ms(200),
            max_rto: Duration::from_secs(60),
            algorithm: RtoAlgorithm::Solaris25,
        },
        ..cfg(TcpVariant::Reno)
    }
}

#[test]
fn test_solaris25_timeout_resends_one_segment_and_doubles_the_interval() {
    // The first segment goes at 2 ms (lbolt 0) and restarts the timer with
    // tcp_rto = 500 ms: MS_TO_TICKS(500) = 47 ticks, so it fires at 470 ms,
    // when the segment is 47 ticks old: a timeout. ssthresh = cwnd >> 1 =
    // half an MSS (no two-segment floor), cwnd = 1 MSS; the interval
    // becomes 2 x max(500, 500) = 1000 ms = 94 ticks: 470 + 940 = 1410 ms.
    let (mut p, first) = Pair::established(solaris25());
    assert_eq!(p.tx.rto_deadline(), Some(SimTime::ZERO + Duration::from_ms(470)));
    p.now = p.tx.rto_deadline().unwrap();
    let mut out = Vec::new();
    p.tx.on_timeout(p.now, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, u64::from(out[0].len)), (first[0].seq, MSS));
    assert_eq!((p.tx.ssthresh(), p.tx.cwnd()), (MSS / 2, MSS));
    assert_eq!(p.tx.rto_deadline(), Some(SimTime::ZERO + Duration::from_ms(1410)));
    assert_eq!(p.tx.stats.timeouts, 1);
    // The ACK of the retransmission does not pass tcp_csuna: no sample.
    p.tick(Duration::from_ms(1));
    let acks = p.deliver_to_rx(&out);
    p.deliver_to_tx(&acks);
    assert_eq!(p.tx.rtt().samples(), 0);
}

#[test]
fn test_solaris25_timer_runs_from_the_oldest_segment_and_does_not_go_back_n() {
    // ACKs at 1-2 ms round trips (0 ticks: rto = 200 ms, the minimum) grow
    // the window; each round leaves the connection idle, and sending from
    // idle restarts the timer: 19 ticks (MS_TO_TICKS(200)) from the last
    // round, due at D. 45 ms before D the window's ACKs arrive one by one:
    // the first makes the sender send new segments, so the connection is
    // never idle and the timer is not restarted; the oldest unacknowledged
    // segment is now 5 ticks old at D. The timer "fired too early" there
    // and waits 19 - 5 = 14 ticks: 140 ms, MS_TO_TICKS(140) = 13 ticks, to
    // D + 130 ms; there 1 tick is left (MS_TO_TICKS(10) = 1): D + 140 ms,
    // where the head is 19 ticks old. The timeout resends that one
    // segment; snd_nxt stays (no go-back-N); the interval is 2 x max(10,
    // 200) = 400 ms = 38 ticks: D + 520 ms.
    let (mut p, first) = Pair::established(solaris25());
    let inflight = p.grow_to(4, first);
    assert_eq!(p.tx.rtt().solaris_rto_ms(), 200);
    let d = p.tx.rto_deadline().unwrap();
    assert_eq!(d.as_ps() % Duration::from_ms(10).as_ps(), 0, "at a tick");
    let at = |ms: u64| d + Duration::from_ms(ms);
    p.now = SimTime::from_ps(d.as_ps() - Duration::from_ms(45).as_ps());
    let acks = p.deliver_to_rx(&inflight);
    let lost = data(&p.deliver_to_tx(&acks));
    assert!(lost.len() >= 2, "{} segments", lost.len());
    assert_eq!(p.tx.rto_deadline(), Some(d), "not restarted by the ACKs");
    let (una, nxt) = (p.tx.snd_una(), p.tx.snd_nxt());
    assert_eq!(lost[0].seq, una);
    let mut out = Vec::new();
    for (now, next) in [(d, at(130)), (at(130), at(140))] {
        p.now = now;
        p.tx.on_timeout(p.now, &mut out);
        assert!(out.is_empty(), "fired too early at {now}");
        assert_eq!(p.tx.rto_deadline(), Some(next));
    }
    p.now = at(140);
    p.tx.on_timeout(p.now, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seq, una);
    assert_eq!((p.tx.snd_una(), p.tx.snd_nxt()), (una, nxt), "no go-back-N");
    assert_eq!(p.tx.rto_deadline(), Some(at(520)));
    assert_eq!(p.tx.stats.timeouts, 1);
}
