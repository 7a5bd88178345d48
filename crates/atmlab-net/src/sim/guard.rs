//! The memory guard and the footprint of a run.
//!
//! A run holds cells in port queues, on links and (as datagrams) at hosts'
//! CPUs. With finite buffers everywhere that is bounded, but a scenario may
//! leave a buffer unlimited (a host adapter by default, a host's input
//! queue) and offer more than its link or CPU carries; what is held then
//! grows until the machine runs out of memory. The guard stops the run with
//! an error naming the place that grew once what is held exceeds
//! `simulation.max_cells_held`, counted in memory: a cell is one (16 bytes;
//! 24 on a link), and each record held beside cells counts as the cells its
//! memory would hold ([`FRAME_CELLS`] for an AAL5 frame's entry in the PDU
//! table, [`DATAGRAM_CELLS`] for a datagram waiting for a host's CPU or at
//! an ABR source, `RUN_CELLS` for the record of a run of cells that a port
//! holding runs or a link handing cells over to one keeps: `atm/port_runs.rs`). Counting cells alone let a flood of 3-cell frames take
//! 3.7 GB at the default limit (their PDU entries, 136 bytes each, were
//! not counted), and a host's receiving CPU queue grow without any bound
//! (it was not counted at all). It looks whenever [`guard_step`] more cells
//! or records' worth have been made since it last looked (nothing held
//! grows otherwise).
//!
//! [`Footprint`] reports what a run holds at an instant; the tests use it to
//! check that memory stays flat over simulated time (docs/architecture.md).

use super::Simulation;
use super::abr::HeldFrame;
use super::datagram::Datagram;
use super::host::{PendingRx, PendingTx};
use crate::atm::Cell;
use crate::pdu::Pdu;
use serde::Serialize;
use std::mem::size_of;

/// The cells whose memory (16 bytes each) holds a record of `bytes`.
const fn cells_of(bytes: usize) -> u64 {
    bytes.div_ceil(size_of::<Cell>()) as u64
}

/// What an AAL5 frame's entry in the PDU table counts for the guard, in
/// cells (9: 136 bytes).
pub(super) const FRAME_CELLS: u64 = cells_of(size_of::<Pdu<Datagram>>());

/// What a datagram waiting for a host's sending or receiving CPU, or held
/// at an ABR source, counts for the guard, in cells (8: up to 128 bytes).
pub(super) const DATAGRAM_CELLS: u64 = {
    let (tx, rx, held) = (size_of::<PendingTx>(), size_of::<PendingRx>(), size_of::<HeldFrame>());
    let most = if tx > rx { tx } else { rx };
    cells_of(if most > held { most } else { held })
};

/// Cells created between two checks of the memory guard for a limit of
/// `limit` cells: at most 65,536 (cheap enough to vanish in the event loop,
/// often enough that a run overshoots the limit by little), and at most
/// half the limit, so that a small limit is kept too.
pub(super) fn guard_step(limit: u64) -> u64 {
    (limit / 2).clamp(1, 1 << 16)
}

/// The default of `simulation.max_cells_held`: 50 million cells, 800 MB of
/// cell records (up to twice that while the queues holding them grow),
/// far above any finite-buffer scenario (the largest shipped ones hold under
/// a million). Measured peak RSS of floods stopped at this limit:
/// docs/architecture.md, "Memory".
pub const DEFAULT_MAX_CELLS_HELD: u64 = 50_000_000;

/// What a run holds in memory at one instant.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Footprint {
    /// Simulated time, seconds.
    pub time_s: f64,
    /// Cells in port queues and on links.
    pub cells_held: u64,
    /// Cell entries allocated for port queues, links and frame ends.
    pub cell_capacity: u64,
    /// Cells of datagrams waiting for a host's sending CPU.
    pub cells_at_hosts: u64,
    /// Datagrams waiting for a host's sending or receiving CPU.
    pub datagrams_waiting: u64,
    /// Datagram entries allocated at hosts.
    pub datagram_capacity: u64,
    /// PDUs with cells still in the network.
    pub pdus_live: u64,
    /// Entries of the PDU table (live and free).
    pub pdu_slots: u64,
    /// Events pending.
    pub events_pending: u64,
    /// Entries allocated in the event queue.
    pub event_capacity: u64,
    /// Time-series samples recorded so far (these grow with time by design:
    /// a probe records what it was asked to).
    pub probe_samples: u64,
}

/// What the parts hold, as each reports it to the guard: the total in
/// cells' worth and the place that holds most.
pub(super) struct Tally {
    total: u64,
    worst: (u64, String),
}

impl Tally {
    /// `held` cells' worth at the place `place()` names.
    pub(super) fn add(&mut self, held: u64, place: impl FnOnce() -> String) {
        self.total += held;
        if held > self.worst.0 {
            self.worst = (held, place());
        }
    }
}

/// The memory guard: the limit of cells held, and when it looks next.
pub(super) struct Guard {
    /// `simulation.max_cells_held`.
    limit: u64,
    /// It looks again once this many cells (and records' worth,
    /// [`Simulation::guard_clock`]) have been made.
    next: u64,
}

impl Guard {
    pub(super) fn new(limit: u64) -> Guard {
        Guard { limit, next: guard_step(limit) }
    }

    /// Whether it is time to look, `made` cells and records' worth made so far.
    #[inline]
    pub(super) fn due(&self, made: u64) -> bool {
        made >= self.next
    }
}

impl Simulation {
    /// What the run holds now.
    pub fn footprint(&self) -> Footprint {
        let (host_datagrams, host_capacity) = self.hosts.datagrams();
        let (abr_datagrams, abr_capacity) = self.abr.datagrams();
        Footprint {
            time_s: self.k.now.as_secs_f64(),
            cells_held: self.net.held_cells(),
            cell_capacity: self.net.cell_capacity(),
            cells_at_hosts: self.hosts.cells_waiting() + self.abr.waiting_cells(),
            datagrams_waiting: host_datagrams + abr_datagrams,
            datagram_capacity: host_capacity + abr_capacity,
            pdus_live: self.tables.frames_in_flight(),
            pdu_slots: self.tables.frame_slots(),
            events_pending: self.k.queue.len() as u64,
            event_capacity: self.k.queue.capacity() as u64,
            probe_samples: self.probes.samples(),
        }
    }

    /// Cells and records' worth made so far: what the guard's next look
    /// waits for ([`Guard::due`]).
    pub(super) fn guard_clock(&self) -> u64 {
        self.k.counts.cells_created + self.k.counts.records_made
    }

    /// Checks the memory guard; on a breach records why the run stops and
    /// returns true.
    pub(super) fn over_limit(&mut self) -> bool {
        let mut tally = Tally { total: 0, worst: (0, String::new()) };
        self.net.tally(&mut tally);
        self.hosts.tally(&mut tally);
        self.abr.tally(&mut tally);
        // The frames whose cells are held above, by their entries in the PDU table.
        let frames = self.tables.frames_in_flight();
        tally.total += frames * FRAME_CELLS;
        self.guard.next = self.guard_clock().saturating_add(guard_step(self.guard.limit));
        let Tally { total, worst } = tally;
        if total <= self.guard.limit {
            return false;
        }
        self.k.stop(format!(
            "stopped at t = {:.6} s: the cells held in queues, on links and at hosts, with the {frames} AAL5 \
             frames they belong to and the datagrams waiting, take the memory of {total} cells, more than \
             simulation.max_cells_held ({} cells); {} of them at {}. More traffic is offered there than can \
             be sent: give it a finite buffer, or raise simulation.max_cells_held",
            self.k.now.as_secs_f64(),
            self.guard.limit,
            worst.0,
            worst.1
        ));
        true
    }
}
