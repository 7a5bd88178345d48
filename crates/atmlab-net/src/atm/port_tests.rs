//! Port tests: acceptance policies, frame bookkeeping, priority and slots.

use super::*;
use crate::atm::{Epd, Ppd, Pti, TailDrop};
use crate::ids::HostId;
use crate::pdu::PduId;

fn oc3() -> BitRate {
    BitRate::from_bps(155_520_000).unwrap()
}

fn port(buffer: u32, ubr: DropPolicy) -> Port {
    port_queued(Queueing::PerCategory, buffer, ubr)
}

/// [`port`] with the given queueing.
fn port_queued(queueing: Queueing, buffer: u32, ubr: DropPolicy) -> Port {
    let mut policies = [DropPolicy::default(); 4];
    policies[ServiceCategory::Ubr.index()] = ubr;
    let cfg = PortConfig {
        queueing,
        buffer: Some(buffer),
        class_buffers: [None; 4],
        policies,
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    };
    let mut p = Port::new("sw1->sw2".into(), oc3(), Duration::from_us(5), cfg);
    let next = NextHop::Host { host: HostId(0), vc: 0 };
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next)); // slot 0
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next)); // slot 1
    p.add_vc(PortVc::new(ServiceCategory::Vbr, next)); // slot 2
    p
}

/// The five drop policies, frame-based ones at `threshold` cells
/// (Selective Drop and FBA with `z`).
fn five_policies(threshold: u32, z: f64) -> [DropPolicy; 5] {
    use crate::atm::{Fba, SelectiveDrop};
    [
        DropPolicy::TailDrop(TailDrop),
        DropPolicy::Ppd(Ppd { keep_end_of_frame: true }),
        DropPolicy::Epd(Epd::new(threshold)),
        DropPolicy::SelectiveDrop(SelectiveDrop { threshold, z, keep_end_of_frame: true }),
        DropPolicy::Fba(Fba { threshold, z, keep_end_of_frame: false }),
    ]
}

/// Runs port `p`'s slots that start before `now` (`slot`: its next, if
/// busy), its cells and their arrivals onto `out`.
fn send_before(p: &mut Port, slot: &mut Option<SimTime>, now: SimTime, out: &mut Vec<(SimTime, Cell)>) {
    while let Some(s) = slot.filter(|s| *s < now) {
        let tx = p.transmit(s);
        out.push((tx.arrival, tx.cell));
        *slot = tx.next_slot;
    }
}

/// The cells of one `n`-cell frame of VC `slot`.
fn frame(slot: u16, n: u32) -> Vec<Cell> {
    (0..n)
        .map(|i| {
            Cell::new(
                VcLabel::new(0, 32 + slot),
                PduId::NONE,
                if i + 1 == n { Pti::DATA_EOF } else { Pti::DATA },
                false,
                slot,
            )
        })
        .collect()
}

/// Offers cells at the time of the port's last event; returns which were
/// queued.
fn offer_all(p: &mut Port, cells: &[Cell]) -> Vec<bool> {
    let now = SimTime::from_ps(p.stats.cells_out * 2_726_338);
    cells.iter().map(|c| matches!(p.offer(now, *c), Offer::Queued { .. })).collect()
}

/// Sends the cell of the port's pending slot.
fn send_one(p: &mut Port) -> Transmission {
    let now = SimTime::from_ps(p.stats.cells_out * 2_726_338);
    p.transmit(now)
}

#[test]
fn test_tail_drop_drops_single_cells_and_accepts_the_rest_of_the_frame() {
    let mut p = port(3, DropPolicy::TailDrop(TailDrop));
    assert_eq!(offer_all(&mut p, &frame(0, 2)), [true, true]);
    // 4-cell frame: one cell fits, then full.
    assert_eq!(offer_all(&mut p, &frame(1, 4)), [true, false, false, false]);
    // Room again after one departure: tail drop accepts a later cell of the
    // cut frame (plain UBR sends the rest of a corrupted frame).
    let t = send_one(&mut p);
    assert!(t.next_slot.is_some());
    assert_eq!(offer_all(&mut p, &frame(1, 1)), [true]);
    assert_eq!(p.stats.dropped_overflow, 3);
    assert_eq!(p.stats.cells_in, p.stats.cells_out + p.stats.dropped_overflow + u64::from(p.queued()));
}

#[test]
fn test_tail_drop_ports_skip_the_policies_with_the_same_verdicts() {
    // The same cells into a port whose `finalize` found tail drop alone
    // (the short path) and into one that asks the policies: the same
    // verdicts. A CLP threshold or another policy turns the short path off.
    let cells: Vec<Cell> = [frame(0, 2), frame(1, 4), frame(2, 3), frame(1, 1), frame(0, 5)].concat();
    let run = |p: &mut Port| -> (Vec<bool>, u64) {
        let (mut out, mut now) = (Vec::new(), SimTime::ZERO);
        for (i, c) in cells.iter().enumerate() {
            out.push(matches!(p.offer(now, *c), Offer::Queued { .. }));
            if i % 4 == 3 && p.queued() > 0 {
                now = p.grid.boundary(&p.tail); // the pending slot
                p.transmit(now);
            }
        }
        (out, p.stats.dropped_overflow)
    };
    let mut fast = port(3, DropPolicy::TailDrop(TailDrop));
    fast.finalize(false);
    assert!(fast.tail_drop);
    let mut slow = port(3, DropPolicy::TailDrop(TailDrop));
    assert!(!slow.tail_drop);
    let (a, b) = (run(&mut fast), run(&mut slow));
    assert_eq!(a, b);
    assert!(a.1 > 0, "the buffer overflows");
    let mut epd = port(3, DropPolicy::Epd(Epd::new(2)));
    epd.finalize(false);
    assert!(!epd.tail_drop);
    let mut clp = port(3, DropPolicy::TailDrop(TailDrop));
    clp.clp_threshold = Some(2);
    clp.finalize(false);
    assert!(!clp.tail_drop);
}

#[test]
fn test_ppd_drops_the_rest_of_the_frame_and_keeps_its_end() {
    let mut p = port(3, DropPolicy::Ppd(Ppd { keep_end_of_frame: true }));
    assert_eq!(offer_all(&mut p, &frame(0, 2)), [true, true]);
    // Frame of 5 on VC 1: cell 0 fits, cell 1 overflows, then PPD.
    let f = frame(1, 5);
    assert_eq!(offer_all(&mut p, &f[..3]), [true, false, false]);
    send_one(&mut p); // room for one
    assert_eq!(offer_all(&mut p, &f[3..4]), [false], "PPD drops the rest even with room");
    assert_eq!(offer_all(&mut p, &f[4..]), [true], "the end-of-frame cell is kept");
    // The next frame starts afresh.
    send_one(&mut p);
    assert_eq!(offer_all(&mut p, &frame(1, 1)), [true]);
    assert_eq!(p.stats.dropped_overflow, 1);
    assert_eq!(p.stats.dropped_frame, 2);
}

#[test]
fn test_ppd_without_keep_drops_the_end_of_frame_too() {
    let mut p = port(1, DropPolicy::Ppd(Ppd { keep_end_of_frame: false }));
    let f = frame(0, 3);
    assert_eq!(offer_all(&mut p, &f[..2]), [true, false]);
    send_one(&mut p);
    assert_eq!(offer_all(&mut p, &f[2..]), [false]);
    // Frame boundary found even though the end was dropped.
    assert_eq!(offer_all(&mut p, &frame(0, 1)), [true]);
}

#[test]
fn test_epd_refuses_whole_frames_at_the_threshold() {
    let mut p = port(10, DropPolicy::Epd(Epd::new(4)));
    assert_eq!(offer_all(&mut p, &frame(0, 3)), [true; 3]);
    // Occupancy 3 < 4: a frame starting now is admitted entirely, even past
    // the threshold.
    assert_eq!(offer_all(&mut p, &frame(1, 3)), [true; 3]);
    // Occupancy 6 >= 4: the whole next frame is refused, its end included.
    assert_eq!(offer_all(&mut p, &frame(0, 3)), [false; 3]);
    assert_eq!(p.stats.dropped_frame, 3);
    assert_eq!(p.stats.dropped_overflow, 0);
}

#[test]
fn test_asx200_epd_compares_strictly_and_keeps_the_refused_frames_end() {
    // 002 s3.1: refused "if the fill level is greater than EPDth", and the
    // refused frame's last cell is still queued to delimit frames.
    let epd = Epd { strict: true, keep_end_of_refused_frame: true, ..Epd::new(4) };
    let mut p = port(10, DropPolicy::Epd(epd));
    assert_eq!(offer_all(&mut p, &frame(0, 4)), [true; 4]);
    // Occupancy 4, not > 4: admitted.
    assert_eq!(offer_all(&mut p, &frame(1, 2)), [true; 2]);
    // Occupancy 6 > 4: refused, but its end cell is queued.
    assert_eq!(offer_all(&mut p, &frame(0, 3)), [false, false, true]);
    assert_eq!(p.stats.dropped_frame, 2);
    // With the threshold at the buffer size, strict EPD never refuses: PPD.
    let mut p = port(4, DropPolicy::Epd(Epd { strict: true, ..Epd::new(4) }));
    assert_eq!(offer_all(&mut p, &frame(0, 4)), [true; 4]);
    assert_eq!(offer_all(&mut p, &frame(1, 2)), [false, false], "overflow, not a refusal");
    assert_eq!((p.stats.dropped_frame, p.stats.dropped_overflow), (1, 1), "the cut frame's end finds no room");
}

#[test]
fn test_epd_falls_back_to_ppd_on_overflow() {
    let mut p = port(4, DropPolicy::Epd(Epd::new(3)));
    assert_eq!(offer_all(&mut p, &frame(0, 2)), [true, true]);
    // Admitted at occupancy 2 < 3; overflows at the 3rd cell.
    let f = frame(1, 4);
    assert_eq!(offer_all(&mut p, &f[..3]), [true, true, false]);
    send_one(&mut p);
    assert_eq!(offer_all(&mut p, &f[3..]), [true], "end kept after the partial discard");
}

#[test]
fn test_strict_priority_serves_vbr_before_ubr() {
    let mut p = port(100, DropPolicy::TailDrop(TailDrop));
    offer_all(&mut p, &frame(0, 2)); // UBR
    offer_all(&mut p, &frame(2, 2)); // VBR
    let mut now = SimTime::ZERO;
    let mut order = Vec::new();
    loop {
        let t = p.transmit(now);
        order.push(t.cell.vc());
        match t.next_slot {
            Some(s) => now = s,
            None => break,
        }
    }
    assert_eq!(order, [2, 2, 0, 0]);
}

#[test]
fn test_slots_are_exact_and_arrival_adds_cell_time_and_delay() {
    let mut p = port(100, DropPolicy::TailDrop(TailDrop));
    // A cell arriving mid-slot waits for the next boundary.
    let t0 = SimTime::from_ps(1_000_000);
    let Offer::Queued { wake: Some(start) } = p.offer(t0, frame(0, 1)[0]) else { panic!() };
    assert_eq!(start, SimTime::from_ps(2_726_338)); // boundary of slot 1
    let tx = p.transmit(start);
    assert_eq!(tx.arrival, start + oc3().cell_time() + Duration::from_us(5));
    assert_eq!(tx.next_slot, None);
    // The port is idle; the next cell may not reuse slot 1.
    let Offer::Queued { wake: Some(s2) } = p.offer(start, frame(0, 1)[0]) else { panic!() };
    assert_eq!(s2, SimTime::from_ps(5_452_675)); // ceil(2 * 2726337.448)
}

#[test]
fn test_separate_class_pools() {
    let mut policies = [DropPolicy::default(); 4];
    policies[3] = DropPolicy::TailDrop(TailDrop);
    let cfg = PortConfig {
        queueing: Queueing::PerCategory,
        buffer: Some(2),
        class_buffers: [None, Some(100), None, None],
        policies,
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    };
    let mut p = Port::new("x".into(), oc3(), Duration::ZERO, cfg);
    let next = NextHop::Host { host: HostId(0), vc: 0 };
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
    p.add_vc(PortVc::new(ServiceCategory::Vbr, next));
    assert_eq!(offer_all(&mut p, &frame(1, 10)), [true; 10], "VBR has its own 100-cell pool");
    assert_eq!(offer_all(&mut p, &frame(0, 3)), [true, true, false], "UBR keeps the shared 2");
}

#[test]
fn test_a_pipelined_port_counts_its_queue_across_idle_gaps() {
    // One VC, so the port computes departures at arrival. Slot k starts at
    // ceil(k * 2,726,337.448) ps; a slot starting exactly at `now` counts
    // as waiting.
    let mut p = port(100, DropPolicy::TailDrop(TailDrop));
    let next = NextHop::Host { host: HostId(0), vc: 0 };
    p.vcs.truncate(0);
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
    p.finalize(true);
    assert_eq!(p.mode(), PortMode::Pipelined);
    let slot = |k: u64| SimTime::from_ps((k as f64 * 2_726_337.448_559_670_7).ceil() as u64);
    let departs = |o: Offer| match o {
        Offer::Departs { arrival, .. } => {
            SimTime::from_ps(arrival.as_ps() - (oc3().cell_time() + Duration::from_us(5)).as_ps())
        }
        other => panic!("{other:?}"),
    };
    // A burst of three at t = 0 takes slots 0, 1 and 2.
    for k in 0..3 {
        assert_eq!(departs(p.offer(SimTime::ZERO, frame(0, 1)[0])), slot(k));
    }
    assert_eq!(p.queued_at(SimTime::ZERO), 3);
    assert_eq!(p.queued_at(slot(1)), 2, "slot 1 starts now: its cell still waits");
    assert_eq!(p.queued_at(SimTime::from_ps(slot(2).as_ps() + 1)), 0, "all three have started");
    // Idle since slot 2: the next cell takes the first slot at or after its
    // arrival, even the one starting exactly then.
    assert_eq!(departs(p.offer(slot(7), frame(0, 1)[0])), slot(7));
    assert_eq!(p.queued_at(slot(7)), 1);
    assert_eq!(departs(p.offer(SimTime::from_ps(slot(9).as_ps() - 1), frame(0, 1)[0])), slot(9));
    assert_eq!(departs(p.offer(slot(9), frame(0, 1)[0])), slot(10), "slot 9 is taken");
    assert_eq!(p.queued_at(slot(9)), 2);
    assert_eq!(p.queued_at(slot(10)), 1);
    assert_eq!(p.queued_at(slot(11)), 0);
    assert_eq!(p.max_queue(), 3);
}

/// A pipelined tail-drop port of `buffer` cells with two UBR VCs, one FIFO.
fn pipelined_port(buffer: u32) -> Port {
    let mut p = port(buffer, DropPolicy::TailDrop(TailDrop));
    let next = NextHop::Host { host: HostId(0), vc: 0 };
    p.vcs.truncate(0);
    p.queueing = Queueing::Fifo;
    p.queue_of = [0; 4];
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
    p.add_vc(PortVc::new(ServiceCategory::Ubr, next));
    p.finalize(true);
    assert!(p.takes_frames());
    p
}

proptest::proptest! {
    /// Frames of random sizes at random gaps, some overflowing the buffer:
    /// taken at once (`offer_frame`) they leave the port as one offer per
    /// cell does, and each accepted cell reaches the far end at the same
    /// time; taken and put on the link at once (`offer_frame_onto_link`),
    /// the link holds what one `put_on_link` per accepted cell puts there,
    /// and the link's head is due when that says.
    #[test]
    fn prop_a_frame_taken_at_once_is_its_cells_offered_one_by_one(
        buffer in 1u32..400,
        frames in proptest::collection::vec((0u64..600_000_000, 0u16..2, 1u32..300), 1..40),
        late in proptest::bool::ANY,
    ) {
        let (mut whole, mut onto_link, mut cells) = (pipelined_port(buffer), pipelined_port(buffer), pipelined_port(buffer));
        // Late, the slots run past 2^64 ps ("never") within a few frames.
        let mut now = if late { SimTime::from_ps(u64::MAX - 200_000_000) } else { SimTime::ZERO };
        let mut arrivals = Vec::new();
        for (gap, vc, n) in frames {
            now = now.saturating_add(Duration::from_ps(gap));
            arrivals.clear();
            let taken = whole.offer_frame(now, vc, n, &mut arrivals);
            let this_frame = frame(vc, n);
            let (taken_onto_link, head, _) = onto_link.offer_frame_onto_link(now, vc, n, |i| this_frame[i as usize - 1]);
            let mut heads = Vec::new();
            let one_by_one: Vec<Option<SimTime>> = this_frame
                .iter()
                .map(|&c| match cells.offer(now, c) {
                    Offer::Departs { arrival, cell } => {
                        heads.extend(cells.put_on_link(arrival, cell));
                        Some(arrival)
                    }
                    Offer::Dropped(DropReason::Overflow) => None,
                    other => panic!("{other:?}"),
                })
                .collect();
            let expected: Vec<SimTime> = one_by_one.iter().map_while(|a| *a).collect();
            proptest::prop_assert!(one_by_one[expected.len()..].iter().all(Option::is_none));
            proptest::prop_assert_eq!(taken as usize, expected.len());
            proptest::prop_assert_eq!(taken_onto_link, taken);
            proptest::prop_assert_eq!(&arrivals, &expected);
            proptest::prop_assert_eq!(head, heads.first().copied());
            // The links are emptied of the cells that have arrived by the
            // next frame, as arrival events would.
            let next = now.saturating_add(Duration::from_ps(300_000_000));
            while onto_link.next_arrival().is_some_and(|t| t < next) {
                proptest::prop_assert_eq!(onto_link.take_arrival(), cells.take_arrival());
            }
            proptest::prop_assert_eq!(onto_link.next_arrival(), cells.next_arrival());
        }
        while cells.next_arrival().is_some() {
            proptest::prop_assert_eq!(onto_link.take_arrival(), cells.take_arrival());
        }
        proptest::prop_assert_eq!(onto_link.next_arrival(), None);
        let end = now.saturating_add(Duration::from_ms(1));
        for p in [&mut whole, &mut onto_link, &mut cells] {
            p.settle(end);
        }
        let counts = |p: &Port| {
            (p.stats.cells_in, p.stats.cells_out, p.stats.dropped_overflow, p.stats.per_category, p.accepted,
             p.queued(), p.max_queue(), p.mean_queue(end).to_bits(), p.vcs.iter().map(|v| (v.dropped, v.frame_start)).collect::<Vec<_>>())
        };
        proptest::prop_assert_eq!(counts(&whole), counts(&cells));
        proptest::prop_assert_eq!(counts(&onto_link), counts(&cells));
    }
}

proptest::proptest! {
    /// Cells of two VCs, frame ends among them, at random gaps into a
    /// small buffer: `offer_pipelined` answers as `offer` does and leaves
    /// the same state.
    #[test]
    fn prop_offer_pipelined_is_offer(
        buffer in 1u32..40,
        cells in proptest::collection::vec((0u64..4_000_000, 0u16..2, proptest::bool::ANY), 1..300),
    ) {
        let (mut fast, mut reference) = (pipelined_port(buffer), pipelined_port(buffer));
        let mut now = SimTime::ZERO;
        for (gap, vc, eof) in cells {
            now = now.saturating_add(Duration::from_ps(gap));
            let pti = if eof { Pti::DATA_EOF } else { Pti::DATA };
            let cell = Cell::new(VcLabel::new(0, 1), PduId::NONE, pti, false, vc);
            let want = match reference.offer(now, cell) {
                Offer::Departs { arrival, .. } => Some(arrival),
                Offer::Dropped(DropReason::Overflow) => None,
                other => panic!("{other:?}"),
            };
            proptest::prop_assert_eq!(fast.offer_pipelined(now, cell), want);
        }
        let end = now.saturating_add(Duration::from_ms(1));
        fast.settle(end);
        reference.settle(end);
        let counts = |p: &Port| {
            (p.stats.cells_in, p.stats.cells_out, p.stats.dropped_overflow, p.stats.per_category, p.accepted,
             p.queued(), p.max_queue(), p.mean_queue(end).to_bits(),
             p.vcs.iter().map(|v| (v.dropped, v.frame_start, v.discard)).collect::<Vec<_>>())
        };
        proptest::prop_assert_eq!(counts(&fast), counts(&reference));
    }
}

/// A switch port with one UBR VC and `policy` (a shared pool of `buffer`
/// cells), pipelined if `pipelined`.
fn one_vc_port(buffer: u32, policy: DropPolicy, pipelined: bool) -> Port {
    let mut p = port(buffer, policy);
    p.vcs.truncate(1);
    p.finalize(pipelined);
    p
}

proptest::proptest! {
    /// A port with one VC is a FIFO whatever its policy: Selective Drop
    /// and FBA read the VC's queue and the active VCs, which there are the
    /// port's queue and whether it holds a cell. Pipelined (`finalize`),
    /// it drops the cells that the slotted port, with an event per slot,
    /// drops, sends the rest at the same times and keeps the same counts.
    /// Frames of random sizes arrive as cell trains at random gaps.
    #[test]
    fn prop_a_one_vc_port_with_a_per_vc_policy_is_pipelined_exactly(
        buffer in 8u32..300,
        threshold in 0.1f64..0.95,
        z in 0.3f64..1.5,
        fba in proptest::bool::ANY,
        frames in proptest::collection::vec((0u64..40_000_000, 1u32..120, 1u64..4), 1..60),
    ) {
        use crate::atm::{Fba, SelectiveDrop};
        let threshold = (f64::from(buffer) * threshold) as u32;
        let policy = if fba {
            DropPolicy::Fba(Fba { threshold, z, keep_end_of_frame: true })
        } else {
            DropPolicy::SelectiveDrop(SelectiveDrop { threshold, z, keep_end_of_frame: true })
        };
        let (mut fast, mut slow) = (one_vc_port(buffer, policy, true), one_vc_port(buffer, policy, false));
        proptest::prop_assert_eq!(fast.mode(), PortMode::Pipelined);
        proptest::prop_assert_eq!(slow.mode(), PortMode::Slotted);
        let (mut fast_out, mut slow_out) = (Vec::new(), Vec::new());
        let mut next_slot: Option<SimTime> = None;
        // Slots before `t` (arrivals at an instant come before its slot).
        let run = |p: &mut Port, next: &mut Option<SimTime>, out: &mut Vec<SimTime>, t: SimTime| {
            while let Some(s) = next.filter(|s| *s < t) {
                let tx = p.transmit(s);
                out.push(tx.arrival);
                *next = tx.next_slot;
            }
        };
        let mut now = SimTime::ZERO;
        for (gap, n, spacing) in frames {
            now = now.saturating_add(Duration::from_ps(gap));
            for (i, cell) in frame(0, n).into_iter().enumerate() {
                // The frame's cells come `spacing` cell times apart (faster
                // than the port sends, or as fast).
                let t = now.saturating_add(Duration::from_ps(2_726_338 * spacing * i as u64 / 2));
                run(&mut slow, &mut next_slot, &mut slow_out, t);
                let a = match fast.offer(t, cell) {
                    Offer::Departs { arrival, .. } => {
                        fast_out.push(arrival);
                        None
                    }
                    Offer::Dropped(why) => Some(why),
                    other => panic!("{other:?}"),
                };
                let b = match slow.offer(t, cell) {
                    Offer::Queued { wake } => {
                        if let Some(w) = wake {
                            next_slot = Some(w);
                        }
                        None
                    }
                    Offer::Dropped(why) => Some(why),
                    other => panic!("{other:?}"),
                };
                proptest::prop_assert_eq!(a, b, "cell {} of a {}-cell frame at {}", i, n, t);
            }
            now = now.saturating_add(Duration::from_ps(2_726_338 * spacing * n as u64 / 2));
        }
        let end = now.saturating_add(Duration::from_ms(1));
        run(&mut slow, &mut next_slot, &mut slow_out, SimTime::MAX);
        proptest::prop_assert_eq!(&fast_out, &slow_out);
        fast.settle(end);
        let counts = |p: &Port| {
            (p.stats.cells_in, p.stats.cells_out, p.stats.dropped_overflow, p.stats.dropped_frame, p.accepted,
             p.max_queue(), p.vcs[0].dropped)
        };
        proptest::prop_assert_eq!(counts(&fast), counts(&slow));
    }
}

proptest::proptest! {
    /// Where every policy judges frames at their first cells alone, `offer`
    /// skips the policy for a frame's later cells: the port drops, sends
    /// and counts as the port that asks the policy for every cell. Frames
    /// of two UBR VCs and a VBR VC (tail drop) interleave at random,
    /// some cells tagged, into a small buffer with a CLP threshold or none.
    #[test]
    fn prop_a_frames_later_cells_need_no_policy(
        buffer in 4u32..200,
        kind in 0usize..5,
        threshold in 0.0f64..1.0,
        z in 0.3f64..1.5,
        clp_threshold in proptest::option::of(0.0f64..1.0),
        cells in proptest::collection::vec((0u64..6_000_000, 0u16..3, 0u32..6, proptest::bool::ANY), 1..400),
    ) {
        let policy = five_policies((f64::from(buffer) * threshold) as u32, z)[kind];
        let build = || {
            let mut p = port(buffer, policy);
            p.clp_threshold = clp_threshold.map(|f| (f64::from(buffer) * f) as u32);
            p.finalize(false);
            p
        };
        let (mut fast, mut reference) = (build(), build());
        proptest::prop_assert!(fast.judged_at_first);
        reference.judged_at_first = false;
        let mut slots: [Option<SimTime>; 2] = [None, None];
        let mut out: [Vec<(SimTime, Cell)>; 2] = [Vec::new(), Vec::new()];
        let mut now = SimTime::ZERO;
        for (gap, vc, ends, clp) in cells {
            now = now.saturating_add(Duration::from_ps(gap));
            // A frame ends with about one cell in six.
            let pti = if ends == 0 { Pti::DATA_EOF } else { Pti::DATA };
            let cell = Cell::new(VcLabel::new(0, 32 + vc), PduId::NONE, pti, clp, vc);
            let mut verdicts = Vec::new();
            for (i, p) in [&mut fast, &mut reference].into_iter().enumerate() {
                send_before(p, &mut slots[i], now, &mut out[i]);
                verdicts.push(match p.offer(now, cell) {
                    Offer::Queued { wake } => {
                        slots[i] = slots[i].or(wake);
                        None
                    }
                    Offer::Dropped(why) => Some(why),
                    other => panic!("{other:?}"),
                });
            }
            proptest::prop_assert_eq!(verdicts[0], verdicts[1], "{:?} at {}", cell, now);
        }
        let counts = |p: &Port| {
            (p.stats.cells_in, p.stats.cells_out, p.stats.dropped_overflow, p.stats.dropped_frame, p.stats.dropped_clp,
             p.accepted, p.max_queue(), p.vcs.iter().map(|v| (v.dropped, v.frame_start, v.discard)).collect::<Vec<_>>())
        };
        proptest::prop_assert_eq!(&out[0], &out[1]);
        proptest::prop_assert_eq!(counts(&fast), counts(&reference));
    }

    /// `Port::offer_later`, given what the simulation gives it (a cell
    /// alike to the one before it on its VC, not a frame's end), is
    /// `offer`: every verdict, departure, count and queue statistic, with
    /// every policy, a CLP threshold or none, tagged cells, each kind of
    /// queueing, slotted or pipelined, into buffers small enough that
    /// frames overflow in the middle.
    #[test]
    fn prop_a_later_cell_offered_the_short_way_is_offered(
        buffer in 4u32..200,
        kind in 0usize..5,
        queueing in 0usize..3,
        elide in proptest::bool::ANY,
        threshold in 0.0f64..1.0,
        clp_threshold in proptest::option::of(0.0f64..1.0),
        cells in proptest::collection::vec((0u64..6_000_000, 0u16..3, 0u32..8, 0u32..8), 1..400),
    ) {
        let policy = five_policies((f64::from(buffer) * threshold) as u32, 0.8)[kind];
        let queueing = [Queueing::Fifo, Queueing::PerCategory, Queueing::PerVc][queueing];
        let build = || {
            let mut p = port_queued(queueing, buffer, policy);
            p.clp_threshold = clp_threshold.map(|f| (f64::from(buffer) * f) as u32);
            p.finalize(elide);
            p
        };
        let (mut fast, mut reference) = (build(), build());
        let mut slots: [Option<SimTime>; 2] = [None, None];
        let mut out: [Vec<(SimTime, Cell)>; 2] = [Vec::new(), Vec::new()];
        let mut before: [Option<Cell>; 3] = [None; 3];
        let mut now = SimTime::ZERO;
        for (gap, vc, ends, tagged) in cells {
            now = now.saturating_add(Duration::from_ps(gap));
            // A frame ends with about one cell in eight, and a cell is
            // tagged with one in eight (so that alike cells run on).
            let pti = if ends == 0 { Pti::DATA_EOF } else { Pti::DATA };
            let cell = Cell::new(VcLabel::new(0, 32 + vc), PduId::NONE, pti, tagged == 0, vc);
            let later = before[usize::from(vc)] == Some(cell) && !cell.needs_host_event();
            before[usize::from(vc)] = Some(cell);
            let mut verdicts = Vec::new();
            for (i, p) in [&mut fast, &mut reference].into_iter().enumerate() {
                send_before(p, &mut slots[i], now, &mut out[i]);
                let offer = if later && i == 0 { p.offer_later(now, cell) } else { p.offer(now, cell) };
                verdicts.push(match offer {
                    Offer::Queued { wake } => {
                        slots[i] = slots[i].or(wake);
                        (None, None)
                    }
                    Offer::Departs { arrival, .. } => (Some(arrival), None),
                    Offer::Dropped(why) => (None, Some(why)),
                });
            }
            proptest::prop_assert_eq!(verdicts[0], verdicts[1], "{:?} at {}", cell, now);
        }
        let counts = |p: &Port| {
            (p.stats.cells_in, p.stats.cells_out, p.stats.dropped_overflow, p.stats.dropped_frame, p.stats.dropped_clp,
             p.stats.per_category.iter().map(|c| (c.cells_in, c.dropped)).collect::<Vec<_>>(),
             p.accepted, p.max_queue(), p.mean_queue(now).to_bits(),
             p.vcs.iter().map(|v| (v.dropped, v.frame_start, v.discard, v.occupancy)).collect::<Vec<_>>())
        };
        proptest::prop_assert_eq!(&out[0], &out[1]);
        proptest::prop_assert_eq!(counts(&fast), counts(&reference));
    }
}

proptest::proptest! {
    /// A port that passes its top category through at arrival
    /// (`Port::pass_top_through`) puts the same cells on the link in the
    /// same order at the same times as one that queues them, and every
    /// verdict, count, queue integral and probe's reading is the same.
    /// Two UBR VCs and a VBR VC send at random, the VBR in bursts faster
    /// than the link (its cells then wait for each other), into a buffer
    /// the two categories share or one of VBR's own, small enough to drop;
    /// strict priority or GR 0; probes read the port after the slots of
    /// their instant, as the simulation's do.
    #[test]
    fn prop_a_top_category_passed_through_leaves_as_if_queued(
        buffer in 4u32..200,
        kind in 0usize..5,
        own_vbr_pool in proptest::bool::ANY,
        gr0 in proptest::bool::ANY,
        cells in proptest::collection::vec((0u64..4_000_000, 0u16..5, 0u32..6, proptest::bool::ANY), 1..400),
    ) {
        let policy = five_policies(buffer * 3 / 4, 0.8)[kind];
        let build = || {
            let mut p = port(buffer, policy);
            if own_vbr_pool {
                p.pool_of[ServiceCategory::Vbr.index()] = 2;
                p.pool_limit[2] = buffer / 2 + 1;
            }
            if gr0 {
                p.scheduler = SchedulerKind::GuaranteedRate(super::super::GuaranteedRate::new(0, 1, 3));
            }
            p.finalize(false);
            p.set_lazy(true);
            p
        };
        let (mut fast, mut reference) = (build(), build());
        proptest::prop_assert!(fast.is_lazy());
        proptest::prop_assert!(fast.pass_top_through());
        let mut out: [Vec<(SimTime, Cell)>; 2] = [Vec::new(), Vec::new()];
        let run = |p: &mut Port, t: SimTime, inclusive: bool, out: &mut Vec<(SimTime, Cell)>| {
            while let Some(s) = p.slot_due(t, inclusive) {
                if let Some(tx) = p.send_slot(s) {
                    out.push((tx.arrival, tx.cell));
                }
            }
        };
        let mut now = SimTime::ZERO;
        for (gap, vc, ends, probe) in cells {
            now = now.saturating_add(Duration::from_ps(gap));
            // Three cells in five are VBR's: about 1.2 times the link's rate.
            let vc = vc.min(2);
            let pti = if ends == 0 { Pti::DATA_EOF } else { Pti::DATA };
            let cell = Cell::new(VcLabel::new(0, 32 + vc), PduId::NONE, pti, false, vc);
            let mut verdicts = Vec::new();
            for (i, p) in [&mut fast, &mut reference].into_iter().enumerate() {
                run(p, now, false, &mut out[i]);
                verdicts.push(match p.offer(now, cell) {
                    Offer::Queued { .. } => None,
                    Offer::Departs { arrival, cell } => {
                        out[i].push((arrival, cell));
                        None
                    }
                    Offer::Dropped(why) => Some(why),
                });
            }
            proptest::prop_assert_eq!(verdicts[0], verdicts[1], "{:?} at {}", cell, now);
            if probe {
                // After the slots of the instant; the next arrival is later.
                let mut seen = Vec::new();
                for (i, p) in [&mut fast, &mut reference].into_iter().enumerate() {
                    run(p, now, true, &mut out[i]);
                    seen.push((
                        p.queued_at(now),
                        p.category_queued_at(ServiceCategory::Vbr, now),
                        p.category_queued_at(ServiceCategory::Ubr, now),
                        p.sent_by(now),
                    ));
                }
                proptest::prop_assert_eq!(seen[0], seen[1], "at {}", now);
                now = now.saturating_add(Duration::from_ps(1));
            }
        }
        let end = now.saturating_add(Duration::from_us(30));
        for (i, p) in [&mut fast, &mut reference].into_iter().enumerate() {
            run(p, end, false, &mut out[i]);
        }
        // The passed cells whose slots start at or after the end are on the
        // link already, still counted as queued.
        let (sent, passed) = out[0].split_at(out[1].len());
        proptest::prop_assert_eq!(sent, &out[1][..]);
        proptest::prop_assert_eq!(passed.len() as u64, fast.reserved());
        proptest::prop_assert!(passed.iter().all(|(_, c)| c.vc() == 2));
        let counts = |p: &Port| {
            (
                (p.stats.cells_in, p.stats.cells_out, p.dropped(), p.accepted, p.queued(), p.max_queue()),
                p.mean_queue(end).to_bits(),
                [ServiceCategory::Vbr, ServiceCategory::Ubr].map(|c| {
                    let (max, mean) = p.category_queue(c, end);
                    (max, mean.to_bits())
                }),
                (p.pool_occ, p.active_vcs),
                p.vcs.iter().map(|v| (v.dropped, v.occupancy, v.frame_start, v.discard)).collect::<Vec<_>>(),
            )
        };
        proptest::prop_assert_eq!(counts(&fast), counts(&reference));
    }
}

proptest::proptest! {
    /// Pieces of frames leaving an upstream port's slots `step` apart (an
    /// upstream link as fast as the port, or slower, or faster) into a
    /// pipelined port into a host with a small buffer: taken at once
    /// (`offer_piece_into_host`) they leave the port and the link as one
    /// `offer_pipelined` and `put_on_link` per cell do, drops, the frame
    /// ends' events and every count alike.
    #[test]
    fn prop_a_piece_into_a_host_is_its_cells_offered_one_by_one(
        buffer in 1u32..12,
        upstream in proptest::prop_oneof![
            proptest::strategy::Just(155_520_000u64),
            proptest::strategy::Just(149_760_000),
            // Shaped to a half and a quarter of the port's rate: each
            // upstream slot lasts two or four of the port's.
            proptest::strategy::Just(77_760_000),
            proptest::strategy::Just(38_880_000),
            10_000_000u64..1_000_000_000,
        ],
        // Epoch 0 and no transit, at the port's rate: every cell arrives
        // at the start of one of the port's slots.
        epoch in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..3_000_000],
        transit in proptest::prop_oneof![proptest::strategy::Just(0u64), proptest::strategy::Just(3_000_000)],
        // The port's own slot phase: 0, or a later epoch than the
        // upstream's (where its slots cannot follow the upstream's by a
        // fixed shift), or, with epoch 0 and transit, a picosecond either
        // side of an arrival, or a whole 155.52 Mbit/s slot period (2.726337
        // us) before one (a cell then leaves up to a period after its
        // arrival, when cells a slot apart find the port busy).
        phase in proptest::prop_oneof![
            proptest::strategy::Just(0u64),
            0u64..6_000_000,
            proptest::strategy::Strategy::prop_map(0u64..3, |d| d + 2_999_999),
            proptest::strategy::Strategy::prop_map(0u64..4, |d| d + 3_000_000 - 2_726_338),
        ],
        pieces in proptest::collection::vec((0u64..2_000, 1u64..6, 1u64..60, proptest::bool::ANY), 1..30),
    ) {
        check_pieces(buffer, (upstream, epoch), transit, phase, &pieces)?;
    }

    /// The same where cells a slot apart may find the port busy: the
    /// upstream grid's slots as long as the port's, epoch 0 and a transit,
    /// the port's slots starting a picosecond either side of an arrival,
    /// or a whole period (2.726337 us at 155.52 Mbit/s) before one, so
    /// that a cell leaves a period after it arrives, when the next one
    /// comes (rare among the cases above: `offer_piece_into_host` follows
    /// the piece without testing the port only where cells are two or more
    /// slots apart).
    #[test]
    fn prop_a_piece_at_the_edges_of_a_slot_is_its_cells_offered_one_by_one(
        buffer in 1u32..4,
        phase in proptest::prop_oneof![0u64..3, 0u64..4],
        past in proptest::bool::ANY,
        pieces in proptest::collection::vec((0u64..300, 1u64..4, 1u64..40, proptest::bool::ANY), 1..30),
    ) {
        let phase = if past { phase + 2_999_999 } else { phase + 3_000_000 - 2_726_338 };
        check_pieces(buffer, (155_520_000, 0), 3_000_000, phase, &pieces)?;
    }
}

/// What [`prop_a_piece_into_a_host_is_its_cells_offered_one_by_one`]
/// checks: `pieces` (gap before, step, cells, whether the last ends the
/// frame), from a grid at `upstream` bits a second and its `epoch`, `transit`
/// ps from slot to arrival, into a pipelined port into a host whose slots
/// start at `phase`.
fn check_pieces(
    buffer: u32,
    (upstream, epoch): (u64, u64),
    transit: u64,
    phase: u64,
    pieces: &[(u64, u64, u64, bool)],
) -> Result<(), proptest::test_runner::TestCaseError> {
    let grid = SlotGrid::new(BitRate::from_bps(upstream).unwrap(), CELL_BITS, SimTime::from_ps(epoch));
    let transit = Duration::from_ps(transit);
    let (mut fast, mut cells) = (pipelined_port(buffer), pipelined_port(buffer));
    for p in [&mut fast, &mut cells] {
        p.set_to_host(true);
        p.set_slot_phase(SimTime::from_ps(phase));
    }
    let mut first = 0;
    for (n, &(gap, step, count, ends)) in pieces.iter().enumerate() {
        first += gap;
        let vc = (n % 2) as u16;
        let data = Cell::new(VcLabel::new(0, 1), PduId::NONE, Pti::DATA, false, vc);
        let last = if ends { data.ending_frame() } else { data };
        let cell = |j: u64| if j + 1 == count { last } else { data };
        let from = PieceFrom { grid: &grid, first: grid.position(first), step, transit };
        let taken = fast.offer_piece_into_host(count, from, data, last);
        let (mut dropped, mut last_dropped, mut due) = (0, false, None);
        for j in 0..count {
            let at = grid.start(first + j * step).saturating_add(transit);
            match cells.offer_pipelined(at, cell(j)) {
                Some(arrival) => {
                    if let Some(t) = cells.put_on_link(arrival, cell(j)) {
                        due.get_or_insert(t);
                    }
                }
                None => {
                    dropped += 1;
                    last_dropped = j + 1 == count;
                }
            }
        }
        proptest::prop_assert_eq!(taken, PieceTaken { dropped, last_dropped, due });
        first += (count - 1) * step + 1;
    }
    let end = grid.start(first).saturating_add(Duration::from_ms(1));
    // The same cells on the link, at the same times.
    while cells.next_arrival().is_some() {
        proptest::prop_assert_eq!(fast.next_arrival(), cells.next_arrival());
        proptest::prop_assert_eq!(fast.take_arrival(), cells.take_arrival());
    }
    proptest::prop_assert_eq!(fast.next_arrival(), None);
    for p in [&mut fast, &mut cells] {
        p.settle(end);
    }
    let counts = |p: &mut Port| {
        let due = std::iter::from_fn(|| p.next_due()).collect::<Vec<_>>();
        (
            p.stats.cells_in,
            p.stats.dropped_overflow,
            p.stats.per_category,
            p.accepted,
            p.queued(),
            p.max_queue(),
            p.mean_queue(end).to_bits(),
            p.vcs.iter().map(|v| (v.dropped, v.frame_start, v.discard)).collect::<Vec<_>>(),
            due,
        )
    };
    proptest::prop_assert_eq!(counts(&mut fast), counts(&mut cells));
    Ok(())
}
