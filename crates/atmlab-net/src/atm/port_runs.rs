//! A port that holds its cells as runs: issue 31's stage 1, step 2
//! (`docs/benchmark.md`). A frame-wake port with a queue per VC served by
//! the round robin, one category, one buffer and one drop policy hands its
//! queues, slots and counts to the model of `atm/runs.rs`
//! ([`RoundRobinRuns`]), which runs the slots in horizons and judges a run
//! at its first cell, exactly as the port would cell by cell. The port
//! keeps its counters (`stats`, the queue, its largest value, the last
//! slot that sent) as the model gives them each time it runs, so that
//! every reader of the port reads what it reads of a port that queues
//! cells; the queue's mean is the model's integral.
//!
//! Its readers are those of the frame wake (`sim/settle.rs`, scheme 4):
//! the wake-up before the soonest frame end could reach a host, probes,
//! the end of the run. Its cells come as runs ([`offer_run`](Port::offer_run)):
//! a link whose every VC goes to it hands each frame over whole when its
//! adapter takes it, or a cell alone as a run of one on the link's grid,
//! and keeps them only to count them ([`keep_handed`](Port::keep_handed),
//! scheme 8 of `sim/settle.rs`); a cell that comes another way is a run of
//! one at its arrival. Cells of one frame join into one run in the queue.

use super::Port;
use super::PortMode;
use crate::atm::Cell;
use crate::atm::runs::{ArrivalRun, DepartureRun, RoundRobinRuns};
use crate::atm::sched::SchedulerKind;
use atmlab_engine::{CELL_BITS, Duration, SimTime, SlotGrid};

/// The memory of a run's record ([`ArrivalRun`]), in cells of 16 bytes.
pub const RUN_CELLS: u64 = std::mem::size_of::<ArrivalRun>().div_ceil(std::mem::size_of::<Cell>()) as u64;

impl Port {
    /// Makes a frame-wake port (after [`set_frame_reach`](Port::set_frame_reach))
    /// hold its cells as runs, if it is one the model covers: a queue per
    /// VC served by the round robin, VCs of one category sharing one
    /// buffer, no CLP threshold, a link that loses nothing; returns whether
    /// it does. Call before the port carries traffic.
    pub fn hold_runs(&mut self) -> bool {
        let covered = self.frame_wake
            && self.mode == PortMode::Slotted
            && self.per_vc_queues
            && !self.per_category
            && self.clp_threshold.is_none()
            && self.is_lossless()
            && self.accepted == 0
            && !self.vcs.is_empty()
            && matches!(self.scheduler, SchedulerKind::RoundRobin(_));
        if !covered {
            return false;
        }
        let c = self.vcs[0].category.index();
        let pool = usize::from(self.pool_of[c]);
        let limit = u64::from(self.pool_limit[pool]);
        let model = RoundRobinRuns::with_buffer(self.grid, self.vcs.len(), limit, self.policies[c]);
        self.runs = Some(Box::new(model));
        self.holds_runs = true;
        true
    }

    /// Whether the port holds its cells as runs ([`hold_runs`](Port::hold_runs)).
    #[inline]
    pub fn holds_runs(&self) -> bool {
        self.holds_runs
    }

    /// The run of one cell that this port sent and that reaches the far
    /// end of its link at `arrival`, as `cell`: on this port's grid, so
    /// that a frame's cells, sent in consecutive slots, join into one run.
    /// (A cell that left at no slot start of the port, which its slots
    /// never give, would be a run on a grid of its own.)
    pub fn sent_run(&self, arrival: SimTime, cell: Cell) -> ArrivalRun {
        let transit = self.transit();
        let on_grid = arrival.as_ps().checked_sub(transit.as_ps()).and_then(|start| {
            let k = self.grid.slots_before(SimTime::from_ps(start + 1)).checked_sub(1)?;
            (self.grid.start(k).as_ps() == start).then_some(k)
        });
        debug_assert!(on_grid.is_some(), "a cell leaves a port at one of its slots' starts");
        let run = match on_grid.and_then(|k| ArrivalRun::new(self.grid, k, transit, 1)) {
            Some(run) => run,
            None => {
                let own = SlotGrid::new(self.rate, CELL_BITS, arrival);
                ArrivalRun::new(own, 0, Duration::ZERO, 1).expect("a cell that arrived arrives in time")
            }
        };
        let run = run.carrying(cell);
        if cell.is_end_of_frame() { run.ending_frame() } else { run }
    }

    /// A port holding runs takes `run` for its VC `vc` (cells arriving
    /// after the slots it has run, after the VC's cells it holds): the
    /// wake-up the run's frame end asks for, if it is sooner than the
    /// pending one.
    pub fn offer_run(&mut self, vc: u16, run: ArrivalRun) -> Option<SimTime> {
        let runs = self.runs.as_mut().expect("a port holding runs has its model");
        runs.push(usize::from(vc), run);
        if !run.ends_with_frame() {
            return None;
        }
        let t = runs.earliest_frame_end(usize::from(vc))?;
        self.wake_for(t)
    }

    /// Runs the slots of a port holding runs that start before `before`,
    /// with the cells that arrive by `arrived` ([`RoundRobinRuns::advance`]):
    /// their departures onto `out` (a run per VC and frame piece), the
    /// cells dropped since the last call onto `dropped`; then the port's
    /// counters as of `arrived`.
    pub fn advance_runs(
        &mut self,
        before: SimTime,
        arrived: SimTime,
        out: &mut Vec<DepartureRun>,
        dropped: &mut Vec<(Cell, u64)>,
    ) {
        let t = arrived;
        let runs = self.runs.as_mut().expect("a port holding runs has its model");
        runs.advance(before, arrived, out);
        runs.take_dropped(dropped);
        let (cells_in, overflow, frame, queued, max) = runs.counts_at(t);
        let c = self.vcs[0].category.index();
        let stats = &mut self.stats;
        stats.cells_in = cells_in;
        stats.cells_out = runs.cells_out();
        stats.dropped_overflow = overflow;
        stats.dropped_frame = frame;
        stats.per_category[c].cells_in = cells_in;
        stats.per_category[c].dropped = overflow + frame;
        let clamp = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        self.queued = clamp(queued);
        self.max_queued = clamp(max);
        if let Some(s) = runs.last_sent() {
            self.last_tx = s;
        }
    }

    /// The slots of a port holding runs, and how long after its slot
    /// starts a cell reaches the far end of the link: when the cells of
    /// its [`DepartureRun`]s arrive there.
    #[inline]
    pub fn held_slots(&self) -> (SlotGrid, Duration) {
        (self.grid, self.transit())
    }

    /// [`arm_wake`](Port::arm_wake) for a port holding runs: before the
    /// soonest frame end of all its VCs could reach a host.
    pub(super) fn arm_held_wake(&mut self) -> Option<SimTime> {
        let runs = self.runs.as_ref().expect("a port holding runs has its model");
        let t = runs.earliest_frame_end_of_all()?;
        self.wake_for(t)
    }

    /// The wake-up for a cell a host acts on whose slot starts at `t` at
    /// the soonest, if sooner than the pending one: just before it could
    /// reach the host (as [`wake_before`](Port::wake_before)).
    fn wake_for(&mut self, t: SimTime) -> Option<SimTime> {
        let lag = (self.cell_time + self.delay + self.beyond).as_ps() - 1;
        let w = t.saturating_add(Duration::from_ps(lag));
        (w < self.wake_at).then(|| {
            self.wake_at = w;
            w
        })
    }

    /// The run of the `taken` cells of a frame that this port put on its
    /// link in one call, from slot `first` on ([`offer_frame_onto_link`](Port::offer_frame_onto_link)),
    /// as `cell` (the last a frame end if `ends`); `None` if they arrive
    /// only after 2^64 ps ("never").
    pub fn frame_run(&self, first: u64, taken: u32, cell: Cell, ends: bool) -> Option<ArrivalRun> {
        let run = ArrivalRun::new(self.grid, first, self.transit(), u64::from(taken))?.carrying(cell);
        Some(if ends { run.ending_frame() } else { run })
    }

    /// Makes the port's link one that hands its cells over to a port
    /// holding runs ([`PortVc::hands_over`](super::PortVc::hands_over)):
    /// it keeps them as runs ([`keep_handed`](Port::keep_handed)), not on
    /// its FIFO. Call before the port carries traffic.
    pub fn set_hands_over(&mut self) {
        debug_assert!(self.channel.is_empty() && !self.to_host);
        self.hands_over = true;
    }

    /// Cells that the link handed over to a port holding runs as `run`
    /// went on it: kept (as the link's) until that port takes them off.
    pub fn keep_handed(&mut self, run: ArrivalRun) {
        self.handed_cells += run.count();
        self.handed.push_back(run);
    }

    /// What the port holds as runs: the cells, and the memory of the runs'
    /// records in cells' worth (each [`RUN_CELLS`], for the memory guard,
    /// `sim/guard.rs`). A port holding runs counts its admitted runs; a
    /// link that hands its cells over counts those it keeps, their records
    /// twice over (the port holds a copy of each until it judges it), so
    /// that a flood behind an adapter is charged to that adapter's link.
    /// In O(VCs): the runs not yet judged may number millions.
    pub(super) fn held_as_runs(&self) -> (u64, u64) {
        let (cells, runs) = self.runs.as_ref().map_or((0, 0), |r| r.admitted());
        (cells + self.handed_cells, (runs + 2 * self.handed.len() as u64) * RUN_CELLS)
    }

    /// `n` cells that the link handed over arrive only after 2^64 ps
    /// ("never"): the link keeps them for good.
    pub fn keep_never(&mut self, n: u64) {
        self.handed_cells += n;
    }

    /// Takes off the link the cells handed over that reach its far end by
    /// `t` ([`keep_handed`](Port::keep_handed)): how many.
    pub fn take_handed_over(&mut self, t: SimTime) -> u64 {
        let mut n = 0;
        while let Some(run) = self.handed.front() {
            let arrived = run.arrived_by(t);
            n += arrived - self.handed_taken;
            if arrived < run.count() {
                self.handed_taken = arrived;
                break;
            }
            self.handed.pop_front();
            self.handed_taken = 0;
        }
        self.handed_cells -= n;
        n
    }
}
