//! The bare event loop: the yardstick `atmlab bench` runs beside the model.
//!
//! It is what a cell-level simulator costs with no protocol logic at all: 16
//! periodic sources send cells over their access links into one FIFO output
//! port of a 155.52 Mbit/s link (offered load 95%); every cell is one
//! arrival event and one departure event in a `std` binary heap keyed by
//! `(time, seq)`, plus one arrival event at the sink. A cell crosses two
//! links (its access link and the output link), so the loop reports two
//! cell-hops per cell. Nothing here is tuned: it is the straightforward loop
//! a textbook would write, so its speed tells how fast and how noisy the
//! machine is.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A cell from source `i` arrives at the port.
    Arrival(u32),
    /// The port finishes sending its head cell.
    Departure,
    /// A cell reaches the sink at the far end of the output link.
    SinkArrival,
}

/// What the bare loop did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaselineReport {
    /// Cells that crossed a link (two per delivered cell).
    pub cell_hops: u64,
    /// Events processed.
    pub events: u64,
    /// Simulated time covered, in picoseconds.
    pub sim_ps: u64,
}

/// Runs the bare loop until `cells` cells have reached the sink.
pub fn run(cells: u64) -> BaselineReport {
    const SOURCES: u32 = 16;
    const CELL_PS: u64 = 2_726_338; // one cell at 155.52 Mbit/s
    const DELAY_PS: u64 = 5_000_000; // 5 us output link
    // Each source sends every 16 / 0.95 cell times: 95% offered load.
    const PERIOD_PS: u64 = CELL_PS * 16 * 100 / 95;

    let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, t: u64, e: Ev| {
        heap.push(Reverse((t, seq, e)));
        seq += 1;
    };
    for i in 0..SOURCES {
        push(&mut heap, u64::from(i) * PERIOD_PS / u64::from(SOURCES), Ev::Arrival(i));
    }
    let mut fifo: VecDeque<u32> = VecDeque::with_capacity(1024);
    let mut busy = false;
    let (mut delivered, mut hops, mut events, mut now) = (0u64, 0u64, 0u64, 0u64);
    while delivered < cells {
        let Reverse((t, _, ev)) = heap.pop().expect("the sources never stop");
        now = t;
        events += 1;
        match ev {
            Ev::Arrival(i) => {
                hops += 1;
                fifo.push_back(i);
                if !busy {
                    busy = true;
                    push(&mut heap, now + CELL_PS, Ev::Departure);
                }
                push(&mut heap, now + PERIOD_PS, Ev::Arrival(i));
            }
            Ev::Departure => {
                fifo.pop_front();
                push(&mut heap, now + DELAY_PS, Ev::SinkArrival);
                if fifo.is_empty() {
                    busy = false;
                } else {
                    push(&mut heap, now + CELL_PS, Ev::Departure);
                }
            }
            Ev::SinkArrival => {
                hops += 1;
                delivered += 1;
            }
        }
    }
    BaselineReport { cell_hops: hops, events, sim_ps: now }
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_baseline_delivers_what_it_is_asked() {
        let r = super::run(10_000);
        // Every delivered cell crossed two links; a few more are on the way.
        assert!(r.cell_hops >= 20_000 && r.cell_hops < 20_100, "{r:?}");
        assert!(r.events >= 30_000);
    }
}
