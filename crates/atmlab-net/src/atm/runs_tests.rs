//! The round robin in horizons against the per-slot rule and against the
//! port itself: the same departures, cells sent, largest queue and queue
//! integral, wherever the horizons end.

use super::*;
use crate::atm::{Cell, NextHop};
use crate::atm::{DropPolicy, Offer, Port, PortConfig, PortVc, Pti, Queueing, SchedulerKind, ServiceCategory, VcLabel};
use crate::ids::HostId;
use crate::pdu::PduId;
use atmlab_engine::stats::TimeAverage;
use atmlab_engine::units::{BitRate, CELL_BITS};
use proptest::prelude::*;

/// A VC's runs: each `(gap, count)` starts `gap` of its link's slots after
/// the last cell of the one before.
#[derive(Clone, Debug)]
struct Source {
    rate: u64,
    epoch: u64,
    transit: u64,
    runs: Vec<(u64, u64)>,
}

impl Source {
    fn link(&self) -> SlotGrid {
        SlotGrid::new(BitRate::from_bps(self.rate).unwrap(), CELL_BITS, SimTime::from_ps(self.epoch))
    }

    fn arrival_runs(&self) -> Vec<ArrivalRun> {
        let mut slot = 0;
        self.runs
            .iter()
            .map(|&(gap, count)| {
                slot += gap;
                let run = ArrivalRun::new(self.link(), slot, Duration::from_ps(self.transit), count).unwrap();
                slot += count;
                run
            })
            .collect()
    }

    /// Every cell's arrival.
    fn arrivals(&self) -> Vec<SimTime> {
        self.arrival_runs().iter().flat_map(|r| (0..r.count).map(|i| r.arrival(i))).collect()
    }
}

/// What a port did up to `end`: each cell's (VC, departure), the cells sent,
/// the largest queue and the queue's integral.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    departures: Vec<(usize, SimTime)>,
    cells_out: u64,
    max: u64,
    area: u128,
}

/// The horizons, advanced to each of `stops` in turn (the last is the end).
fn by_horizons(port: SlotGrid, sources: &[Source], stops: &[SimTime]) -> Outcome {
    let mut rr = RoundRobinRuns::new(port, sources.len());
    for (v, s) in sources.iter().enumerate() {
        for run in s.arrival_runs() {
            rr.push(v, run);
        }
    }
    let mut runs = Vec::new();
    for &t in stops {
        rr.advance_to(t, &mut runs);
    }
    let mut departures: Vec<(u64, usize)> =
        runs.iter().flat_map(|d| (0..d.count).map(move |j| (d.first + j * d.step, d.vc))).collect();
    departures.sort_unstable();
    let end = *stops.last().unwrap();
    Outcome {
        departures: departures.into_iter().map(|(k, v)| (v, rr.slot_start(k))).collect(),
        cells_out: rr.cells_out(),
        max: rr.max_queue_at(end),
        area: rr.area_at(end),
    }
}

/// The per-slot rule, written plainly: at each slot the first VC from the
/// pointer with a cell that arrived by the slot's start sends it; an idle
/// port waits for the slot at or after the next arrival. The queue's
/// statistics from its changes in time order, arrivals before a departure
/// at the same instant.
fn by_slots(port: SlotGrid, sources: &[Source], end: SimTime) -> Outcome {
    let cells: Vec<Vec<SimTime>> = sources.iter().map(Source::arrivals).collect();
    let mut sent = vec![0usize; cells.len()];
    let (mut slot, mut next, mut departures) = (0u64, 0usize, Vec::new());
    loop {
        let start = port.start(slot);
        if start >= end {
            break;
        }
        let n = cells.len();
        let pick = (0..n).map(|k| (next + k) % n).find(|&v| cells[v].get(sent[v]).is_some_and(|a| *a <= start));
        match pick {
            Some(v) => {
                departures.push((v, start));
                sent[v] += 1;
                next = v + 1;
                slot += 1;
            }
            None => {
                let a = (0..n).filter_map(|v| cells[v].get(sent[v])).min();
                slot = a.map_or(u64::MAX, |a| port.slots_before(*a)).max(slot + 1);
            }
        }
    }
    // (time, 0 for an arrival or 1 for a departure)
    let mut changes: Vec<(SimTime, u8)> = cells.iter().flatten().filter(|a| **a <= end).map(|a| (*a, 0)).collect();
    changes.extend(departures.iter().map(|(_, t)| (*t, 1)));
    changes.sort_unstable();
    let (mut queue, mut avg) = (0u64, TimeAverage::new());
    for (t, kind) in changes {
        queue = if kind == 0 { queue + 1 } else { queue - 1 };
        avg.set(t, queue);
    }
    Outcome { cells_out: departures.len() as u64, departures, max: avg.max(), area: avg.area_until(end) }
}

/// The port itself: a slotted port with a queue per VC (the round robin)
/// and room for every cell, its cells offered at their arrivals and its
/// slots run in time order, an arrival before a slot at the same instant.
fn by_port(rate: u64, sources: &[Source], end: SimTime) -> Outcome {
    let cfg = PortConfig {
        queueing: Queueing::PerVc,
        buffer: Some(u32::MAX),
        class_buffers: [None; 4],
        policies: [DropPolicy::default(); 4],
        scheduler: SchedulerKind::default(),
        clp_threshold: None,
    };
    let mut p = Port::new("rr".into(), BitRate::from_bps(rate).unwrap(), Duration::from_us(1), cfg);
    for _ in sources {
        p.add_vc(PortVc::new(ServiceCategory::Ubr, NextHop::Host { host: HostId(0), vc: 0 }));
    }
    p.finalize(false);
    let mut arrivals: Vec<(SimTime, usize)> =
        sources.iter().enumerate().flat_map(|(v, s)| s.arrivals().into_iter().map(move |a| (a, v))).collect();
    arrivals.sort_unstable();
    let (mut slot, mut departures) = (None::<SimTime>, Vec::new());
    let mut run_slots_before = |p: &mut Port, slot: &mut Option<SimTime>, t: SimTime| {
        while let Some(s) = slot.filter(|s| *s < t) {
            let tx = p.transmit(s);
            departures.push((usize::from(tx.cell.vc()), s));
            *slot = tx.next_slot;
        }
    };
    for (a, v) in arrivals.into_iter().filter(|(a, _)| *a <= end) {
        run_slots_before(&mut p, &mut slot, a);
        let cell = Cell::new(VcLabel::new(0, 32), PduId::NONE, Pti::DATA, false, v as u16);
        match p.offer(a, cell) {
            Offer::Queued { wake: Some(w) } => slot = Some(w),
            Offer::Queued { wake: None } => {}
            other => panic!("a port with room queues every cell: {other:?}"),
        }
    }
    run_slots_before(&mut p, &mut slot, end);
    let area = (p.mean_queue(end) * end.as_ps() as f64).round() as u128;
    Outcome { cells_out: p.stats.cells_out, departures, max: p.max_queue(), area }
}

/// The port's grid: slot 0 at 0 ps.
fn grid(rate: u64) -> SlotGrid {
    SlotGrid::new(BitRate::from_bps(rate).unwrap(), CELL_BITS, SimTime::ZERO)
}

fn source() -> impl Strategy<Value = Source> {
    (
        // Links from as fast as the port to a tenth of it, and slow ones;
        // and whole multiples of 100 Mbit/s (a cell in 4.24 us), whose
        // cells then arrive at the very start of a 100 Mbit/s port's slots.
        prop_oneof![
            4 => 150_000_000u64..1_600_000_000,
            1 => 5_000_000u64..150_000_000,
            2 => (1u64..5).prop_map(|k| k * 100_000_000),
        ],
        prop_oneof![0u64..10_000_000, Just(0)],
        prop_oneof![0u64..20_000_000, (0u64..20).prop_map(|k| k * 1_060_000)],
        proptest::collection::vec((prop_oneof![Just(0u64), 0u64..40, 0u64..4_000], 1u64..120), 0..8),
    )
        .prop_map(|(rate, epoch, transit, runs)| Source { rate, epoch, transit, runs })
}

/// EXPERT's shape: frames of 91 cells from links four times the port's rate.
fn expert_like() -> Vec<Source> {
    (0..4)
        .map(|v| Source {
            rate: 622_080_000,
            epoch: 1_000 * v,
            transit: 5_000_000,
            runs: (0..12).map(|k| (if k % 3 == 0 { 2_000 * v + 300 } else { 5 * v }, 91)).collect(),
        })
        .collect()
}

#[test]
fn test_expert_like_frames_go_in_long_horizons_and_as_the_port_sends_them() {
    let port = grid(155_520_000);
    let sources = expert_like();
    let end = SimTime::ZERO + Duration::from_ms(20);
    let mut rr = RoundRobinRuns::new(port, sources.len());
    for (v, s) in sources.iter().enumerate() {
        for run in s.arrival_runs() {
            rr.push(v, run);
        }
    }
    let mut runs = Vec::new();
    rr.advance_to(end, &mut runs);
    let cells = 4 * 12 * 91;
    assert_eq!(rr.cells_out(), cells, "every cell leaves within 20 ms");
    // The point of the horizons: far fewer steps than cells.
    assert!(runs.len() * 100 < cells as usize, "{} departure runs for {cells} cells", runs.len());
    let expected = by_port(155_520_000, &sources, end);
    assert_eq!(by_horizons(port, &sources, &[end]), expected);
    assert!(expected.max > 91, "the frames overlap at the port (largest queue {})", expected.max);
}

#[test]
fn test_a_slow_link_and_a_late_run_still_give_the_port_s_outcome() {
    // One VC on a link slower than the port (its queue falls between its
    // cells), one whose second run starts long after its first.
    let sources = vec![
        Source { rate: 50_000_000, epoch: 0, transit: 1_000, runs: vec![(0, 30), (10, 20)] },
        Source { rate: 600_000_000, epoch: 7, transit: 3_000_000, runs: vec![(3, 40), (5_000, 40)] },
    ];
    let end = SimTime::ZERO + Duration::from_ms(5);
    let port = grid(155_520_000);
    let expected = by_port(155_520_000, &sources, end);
    assert_eq!(expected.cells_out, 130);
    assert_eq!(by_horizons(port, &sources, &[end]), expected);
    assert_eq!(by_slots(port, &sources, end), expected);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn prop_horizons_give_what_the_slots_give_wherever_they_stop(
        rate in prop_oneof![Just(155_520_000u64), Just(149_760_000), Just(100_000_000), 10_000_000u64..622_080_000],
        sources in proptest::collection::vec(source(), 1..6),
        end_us in 1u64..4_000,
        stops in proptest::collection::vec(0u64..4_000, 0..4),
    ) {
        let port = grid(rate);
        let end = SimTime::ZERO + Duration::from_us(end_us);
        // Advanced in pieces: the horizons end at other slots, the outcome
        // is the same.
        let mut stops: Vec<SimTime> = stops.into_iter().filter(|s| *s < end_us).map(|s| SimTime::ZERO + Duration::from_us(s)).collect();
        stops.sort_unstable();
        stops.push(end);
        let expected = by_slots(port, &sources, end);
        prop_assert_eq!(by_horizons(port, &sources, &[end]), by_slots(port, &sources, end));
        prop_assert_eq!(by_horizons(port, &sources, &stops), expected);
    }

    #[test]
    fn prop_the_per_slot_rule_is_the_port_s(
        rate in prop_oneof![Just(155_520_000u64), Just(100_000_000), 10_000_000u64..622_080_000],
        sources in proptest::collection::vec(source(), 1..5),
        end_us in 1u64..2_000,
    ) {
        // The reference above is the port's rule (so the horizons are too).
        let end = SimTime::ZERO + Duration::from_us(end_us);
        prop_assert_eq!(by_slots(grid(rate), &sources, end), by_port(rate, &sources, end));
    }
}

#[test]
fn test_a_cell_a_picosecond_after_its_turn_misses_it() {
    // A 100 Mbit/s port (a slot every 4.24 us) and a 400 Mbit/s link (a
    // cell every 1.06 us), 1 ps of transit: the first run's two cells are
    // sent in slots 1 and 2; the second run's first cell (link slot 12)
    // arrives 1 ps after slot 3 starts, so slot 3 is idle and it leaves
    // in slot 4.
    let sources = vec![Source { rate: 400_000_000, epoch: 0, transit: 1, runs: vec![(0, 2), (10, 3)] }];
    let end = SimTime::ZERO + Duration::from_us(40);
    let expected = by_port(100_000_000, &sources, end);
    let slots: Vec<u64> = expected.departures.iter().map(|(_, t)| t.as_ps() / 4_240_000).collect();
    assert_eq!(slots, [1, 2, 4, 5, 6]);
    assert_eq!(by_horizons(grid(100_000_000), &sources, &[end]), expected);
    assert_eq!(by_slots(grid(100_000_000), &sources, end), expected);
}
