//! A round robin's slots as runs: stage 1 of issue 31's run-based port
//! (`docs/benchmark.md`, "Session of 2026-11-30 (fifth)" and the next).
//!
//! A slotted port with a queue per VC and the round robin sends one cell a
//! slot. Between two changes of the set `B` of VCs with a cell present, it
//! repeats one cycle: VC `B[r]` sends in slots `s + r + j |B|`. Cells come
//! off a host's link in runs, one slot of that link apart. So a stretch of
//! slots can be run in one step: each VC's departures are an arithmetic
//! progression of slots (given out a frame at a time, [`DepartureRun`]),
//! the queue integral is the sum of the cells' waits (sums of slot starts,
//! [`SlotGrid::sum_of_starts`]), and the largest queue is found at a few
//! instants.
//!
//! [`RoundRobinRuns::advance_to`] runs the port's slots up to a time as
//! *horizons*: the longest stretch from the next slot over which it can
//! prove the cycle holds, never shorter than one slot. A stretch of one
//! slot is the per-cell rule itself, so a horizon that cannot be proved
//! long costs only speed. The horizon ends before
//!
//! 1. the first slot at or after the first arrival of a VC outside `B`
//!    (it joins the cycle there, or changes whose turn it is);
//! 2. the turn of a VC of `B` at which it might have no cell present: its
//!    queue runs out there, or a run's first cell arrives after the turn
//!    starts (see below);
//! 3. the first slot at or after the first arrival of a *slow* run, one
//!    whose link's slots can be further apart than the port's: the largest
//!    queue is then no longer found at a run's end;
//! 4. the first slot at or after the first arrival of a run not yet judged
//!    (below), so that the queue its first cell finds is known.
//!
//! **Admission.** The port's buffer and drop policy judge each cell at its
//! arrival; here a run is judged at its first cell, by the same policy
//! ([`AdmissionRule`]) on the queue that cell finds (cells arrived before
//! it, and at its instant those of lower VCs, less the slots that started
//! before it). A frame refused there (EPD) or cut by an overflow (PPD)
//! drops its later cells with it, its last cell judged on its arrival. A
//! run admitted is admitted whole when its cells and every admitted cell
//! not yet sent, arrived or not, fit the buffer: a promise that each will
//! find room, kept while that sum fits. When a cell admitted alone breaks
//! it, the promised cells still to arrive go back to be judged as a run at
//! the first of them; a run not admitted whole has its first cell judged
//! alone and the rest judged as a run at its next cell. So every cell is
//! judged at its arrival in the worst case, and a run is admitted whole
//! again as soon as the promise can be made; cells admitted one at a time
//! join the run before them, so a queue holds about a run per frame.
//!
//! **Why a run's first cell proves the rest.** The cells of a fast run (3.)
//! arrive at most `g` picoseconds apart, `g` no more than the shortest gap
//! between two of the port's slots, and a VC's turns are `|B|` slots apart:
//! each cell's arrival gains on its turn or keeps level with it. So if the
//! run's first cell is present when its turn starts (an arrival at a slot's
//! start comes before the slot, as in the port), every cell of the run is.
//!
//! **The largest queue.** Cells leave only at slot starts, so between two
//! slots the queue only grows: its largest value is one just before a
//! slot's departure (or at the end). Within a horizon every slot sends a
//! cell; while a fast run arrives, each gap between two slots holds at
//! least one arrival, so the queue before each slot does not fall. It
//! falls only where no run arrives, so its largest value in the horizon is
//! at the horizon's first or last slot, or at the first slot at or after a
//! run's last cell.
//!
//! This is the model and its exactness argument, checked against the
//! per-slot rule and against [`Port`](super::Port) by the tests below. A
//! frame-wake port holds its cells in it (`atm/port_runs.rs`; the
//! simulation's guards are scheme 8 of `sim/settle.rs`).

use std::collections::VecDeque;

use atmlab_engine::time::{Duration, SimTime};
use atmlab_engine::units::SlotGrid;

use super::Cell;
use super::{AdmissionRule, AdmitContext, DropPolicy, DropReason, OverflowAction, TailDrop, Verdict};

/// Cells that arrive one slot of their link apart: cell `i` at the start of
/// the link's slot `first + i`, `transit` later (the cell's time on the
/// wire and the link's delay).
#[derive(Clone, Copy, Debug)]
pub struct ArrivalRun {
    link: SlotGrid,
    first: u64,
    transit: Duration,
    count: u64,
    /// Its last cell ends an AAL5 frame.
    ends_frame: bool,
    /// Its cells but for the frame end's mark: the label, frame, payload
    /// type and CLP they carry at the port ([`ArrivalRun::carrying`]).
    cell: Cell,
}

impl ArrivalRun {
    /// `count` cells from the link's slot `first` on; `None` if one of them
    /// would arrive at or after 2^64 ps ("never").
    pub fn new(link: SlotGrid, first: u64, transit: Duration, count: u64) -> Option<ArrivalRun> {
        let run = ArrivalRun { link, first, transit, count, ends_frame: false, cell: Cell::NONE };
        let last = count.checked_sub(1).map_or(SimTime::ZERO, |i| run.arrival(i));
        (last < SimTime::MAX).then_some(run)
    }

    /// The same cells, the last of them a frame's end.
    pub fn ending_frame(self) -> ArrivalRun {
        ArrivalRun { ends_frame: true, ..self }
    }

    /// The same cells, each `cell` (its frame, label, payload type, CLP
    /// and VC index) but for the frame end's mark, which
    /// [`ending_frame`](Self::ending_frame) gives the last.
    pub fn carrying(self, cell: Cell) -> ArrivalRun {
        ArrivalRun { cell: cell.without_end_of_frame(), ..self }
    }

    /// How many cells.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether its last cell ends a frame.
    pub fn ends_with_frame(&self) -> bool {
        self.ends_frame
    }

    /// Its cell `i` alone (the frame's end if it is the last).
    fn cell(&self, i: u64) -> ArrivalRun {
        ArrivalRun { first: self.first + i, count: 1, ends_frame: self.ends_frame && i + 1 == self.count, ..*self }
    }

    /// When cell `i` arrives.
    pub fn arrival(&self, i: u64) -> SimTime {
        self.link.start(self.first + i).saturating_add(self.transit)
    }

    /// How many of the cells arrive at or before `t`.
    pub fn arrived_by(&self, t: SimTime) -> u64 {
        match t.as_ps().checked_sub(self.transit.as_ps()) {
            // Link slots that start at or before `t - transit`.
            Some(x) => {
                self.link.slots_before(SimTime::from_ps(x.saturating_add(1))).saturating_sub(self.first).min(self.count)
            }
            None => 0,
        }
    }

    /// The sum of the arrival times, in picoseconds, of cells `from..from + n`.
    fn sum_of_arrivals(&self, from: u64, n: u64) -> u128 {
        let starts = self.link.sum_of_starts(self.first + from, 1, n).expect("a run's arrivals are in time (`new`)");
        starts + u128::from(n) * u128::from(self.transit.as_ps())
    }

    /// Whether `next` carries on where it ends: the same frame and link,
    /// its next slot, and no frame's end between them. (A run then holds
    /// cells of one frame, its end at most its last cell.)
    fn joins(&self, next: &ArrivalRun) -> bool {
        !self.ends_frame
            && self.cell == next.cell
            && self.first + self.count == next.first
            && self.transit == next.transit
            && self.link == next.link
    }

    /// Whether its cells can be further apart than the slots of `port`
    /// (a cell alone never is).
    fn is_slow_for(&self, port: &SlotGrid) -> bool {
        self.count > 1 && self.link.longest_gap() > port.whole_period()
    }
}

/// Cells of one frame that one VC sends in one horizon: the port's slots
/// `first`, `first + step`, ..., `count` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepartureRun {
    /// The VC (its queue's index).
    pub vc: usize,
    /// The first slot.
    pub first: u64,
    /// Slots between two departures.
    pub step: u64,
    /// How many cells.
    pub count: u64,
    /// Their cell but for the frame end's mark ([`ArrivalRun::carrying`]).
    pub cell: Cell,
    /// The last of them ends the frame.
    pub ends_frame: bool,
}

/// What a VC's next cells meet after a drop in their frame (the port's
/// rule: `Port`'s offer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Discard {
    #[default]
    No,
    /// The frame was refused at its first cell.
    Whole,
    /// A cell of the frame overflowed.
    Partial,
}

/// A VC's admitted cells at an instant ([`VcRuns::split`]): how many are
/// present, and the first still to come, cell `from` of run `run` (`run`
/// past the admitted runs if none is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Split {
    present: u64,
    run: usize,
    from: u64,
}

/// A VC's cells not yet sent: runs in the order they arrive, `taken` of the
/// first one sent; the first `judged` runs are admitted (their first cells
/// arrived, the port's policy judged them), the rest wait for their first
/// cell's arrival. Cells admitted one by one join the run before them
/// ([`ArrivalRun::joins`]), so the queue holds about a run per frame
/// however its cells were judged.
#[derive(Clone, Debug, Default)]
struct VcRuns {
    runs: VecDeque<ArrivalRun>,
    taken: u64,
    judged: usize,
    /// The admitted runs' cells not yet sent, arrived or not.
    admitted: u64,
    /// The last cell judged did not end a frame.
    mid_frame: bool,
    discard: Discard,
}

impl VcRuns {
    /// Its admitted cells present at `t`: arrived by then and not sent.
    fn present(&self, t: SimTime) -> u64 {
        self.split(t).present
    }

    /// Its admitted cells present at `t`, and where those still to come
    /// begin. Its runs arrive one after another, so once one has arrived
    /// in full so have those before it: counted from the last run back
    /// (mostly one run), not from the first (as many as its frames in the
    /// buffer).
    fn split(&self, t: SimTime) -> Split {
        let mut missing = 0;
        let (mut run, mut from) = (self.judged, 0);
        for (k, r) in self.runs.iter().take(self.judged).enumerate().rev() {
            // (Of the first run, its sent cells have arrived.)
            let arrived = if k == 0 { r.arrived_by(t).max(self.taken) } else { r.arrived_by(t) };
            if arrived == r.count {
                break;
            }
            missing += r.count - arrived;
            (run, from) = (k, arrived);
        }
        Split { present: self.admitted - missing, run, from }
    }

    /// Its admitted cells still to come from `split` on, by run: (run,
    /// first cell in it).
    fn to_come(&self, split: Split) -> impl Iterator<Item = (&ArrivalRun, u64)> {
        let mut from = split.from;
        self.runs.range(split.run..self.judged).map(move |run| (run, std::mem::take(&mut from)))
    }

    /// Its admitted unsent cells, by run: (run, first cell in it).
    fn unsent(&self) -> impl Iterator<Item = (&ArrivalRun, u64)> {
        let mut from = self.taken;
        self.runs.iter().take(self.judged).map(move |run| (run, std::mem::take(&mut from)))
    }

    /// The arrival of its first admitted unsent cell.
    fn next_arrival(&self) -> Option<SimTime> {
        self.runs.front().filter(|_| self.judged > 0).map(|run| run.arrival(self.taken))
    }

    /// The first arrival of its first run not yet judged.
    fn next_to_judge(&self) -> Option<SimTime> {
        self.runs.get(self.judged).map(|run| run.arrival(0))
    }

    /// Admits `run` (its first unjudged run, or a first part of it, already
    /// taken off): joined to the last admitted run if it carries on from
    /// it, else a run of its own before the runs not yet judged.
    fn admit(&mut self, run: ArrivalRun) {
        self.admitted += run.count;
        match self.judged.checked_sub(1) {
            Some(j) if self.runs[j].joins(&run) => {
                let last = &mut self.runs[j];
                last.count += run.count;
                last.ends_frame = run.ends_frame;
            }
            _ => {
                self.runs.insert(self.judged, run);
                self.judged += 1;
            }
        }
        debug_assert_eq!(self.admitted, self.runs.iter().take(self.judged).map(|r| r.count).sum::<u64>() - self.taken);
    }

    /// Sends its first `n` cells, as VC `vc` in the slots `first + i step`,
    /// onto `out` a run per frame: the sum of their arrival times (ps).
    fn send(&mut self, mut n: u64, vc: usize, mut first: u64, step: u64, out: &mut Vec<DepartureRun>) -> u128 {
        let mut sum = 0;
        while n > 0 {
            let run = self.runs.front().expect("a VC sends only cells it holds");
            let k = n.min(run.count - self.taken);
            sum += run.sum_of_arrivals(self.taken, k);
            let ends_frame = run.ends_frame && self.taken + k == run.count;
            out.push(DepartureRun { vc, first, step, count: k, cell: run.cell, ends_frame });
            first += k * step;
            n -= k;
            self.taken += k;
            self.admitted -= k;
            if self.taken == run.count {
                self.runs.pop_front();
                self.taken = 0;
                self.judged -= 1;
            }
        }
        sum
    }

    /// The sum of the arrival times (ps) of its cells present at `t`.
    fn sum_of_present(&self, t: SimTime) -> u128 {
        let mut left = self.present(t);
        self.unsent()
            .map_while(|(run, from)| {
                let k = left.min(run.count - from);
                left -= k;
                (k > 0).then(|| run.sum_of_arrivals(from, k))
            })
            .sum()
    }
}

/// A slotted port with a queue per VC served by the round robin, one
/// shared buffer and one drop policy (one category), run in horizons.
#[derive(Clone, Debug)]
pub struct RoundRobinRuns {
    grid: SlotGrid,
    /// The buffer, cells, and the policy that admits them.
    limit: u64,
    policy: DropPolicy,
    /// Cells dropped, for want of room and with their frame; and runs of
    /// cells dropped with their frame that have yet to arrive in full, each
    /// with how many of its cells have arrived and been counted.
    dropped_overflow: u64,
    dropped_frame: u64,
    dropping: Vec<(ArrivalRun, u64)>,
    /// The next slot to run.
    slot: u64,
    /// The VC the round robin looks at first (one past the last served).
    next: usize,
    vcs: Vec<VcRuns>,
    cells_out: u64,
    /// Runs judged (each at its first cell), for the tests.
    judgements: u64,
    /// Sums (ps) of the sent cells' departures and arrivals: their waits.
    departures: u128,
    arrivals: u128,
    /// The largest queue seen before a slot's departure.
    max: u64,
    /// The VCs of the cycle with their cells present and those to come
    /// (kept for its buffer).
    cycle: Vec<(usize, Split)>,
    /// Each VC's queue as a judged cell finds it (kept for its buffer).
    counts: Vec<u64>,
    /// Cells dropped since [`take_dropped`](Self::take_dropped) last took
    /// them, by run: each run's cell and how many (a frame's later cells
    /// dropped with it count as they arrive, as the port drops them).
    lost: Vec<(Cell, u64)>,
    /// The last slot that sent a cell.
    last_sent: Option<u64>,
    /// The arrivals judged so far: up to here (the last advance's).
    judged_by: SimTime,
}

impl RoundRobinRuns {
    /// A port of `vcs` queues whose slots are `grid`'s, with room for
    /// every cell.
    pub fn new(grid: SlotGrid, vcs: usize) -> RoundRobinRuns {
        RoundRobinRuns::with_buffer(grid, vcs, u64::MAX, DropPolicy::TailDrop(TailDrop))
    }

    /// A port of `vcs` queues whose slots are `grid`'s, sharing a buffer
    /// of `limit` cells that `policy` admits cells to.
    pub fn with_buffer(grid: SlotGrid, vcs: usize, limit: u64, policy: DropPolicy) -> RoundRobinRuns {
        RoundRobinRuns {
            grid,
            limit,
            policy,
            dropped_overflow: 0,
            dropped_frame: 0,
            dropping: Vec::new(),
            slot: 0,
            next: 0,
            vcs: vec![VcRuns::default(); vcs],
            cells_out: 0,
            judgements: 0,
            departures: 0,
            arrivals: 0,
            max: 0,
            cycle: Vec::with_capacity(vcs),
            counts: Vec::with_capacity(vcs),
            lost: Vec::new(),
            last_sent: None,
            judged_by: SimTime::ZERO,
        }
    }

    /// Queues a run of cells for VC `vc`, judged when its first cell
    /// arrives; a VC's runs come in the order they arrive, each after the
    /// last cell of the one before, and after the slots already run.
    pub fn push(&mut self, vc: usize, run: ArrivalRun) {
        let q = &mut self.vcs[vc];
        debug_assert!(q.runs.back().is_none_or(|last| last.arrival(last.count - 1) <= run.arrival(0)));
        if run.count > 0 {
            q.runs.push_back(run);
        }
    }

    /// Runs the slots that start before `t`, each VC's departures onto `out`,
    /// and judges the runs whose first cells arrive by `t`.
    pub fn advance_to(&mut self, t: SimTime, out: &mut Vec<DepartureRun>) {
        self.advance(t, t, out);
    }

    /// Runs the slots that start before `before`, each VC's departures onto
    /// `out`, and judges the runs whose first cells arrive by `arrived`
    /// (at least the last slot's start: its arrivals come before it). A
    /// reader at `t` that comes after the slots of its instant reads after
    /// `advance(t + 1 ps, t)`; the end of a run at `t`, which has none of
    /// the arrivals at `t`, after `advance(t, t - 1 ps)`.
    pub fn advance(&mut self, before: SimTime, arrived: SimTime, out: &mut Vec<DepartureRun>) {
        let t = arrived;
        let end = self.grid.slots_before(before);
        debug_assert!(end == 0 || self.grid.start(end - 1) <= t, "the arrivals before the last slot are judged");
        while self.slot < end {
            let start = self.grid.start(self.slot);
            self.judge_arrivals(start);
            let n = self.vcs.len();
            // The cycle, in the round robin's order from its pointer, and
            // (1.) the first slot at which a VC outside it has a cell.
            let mut horizon = end - self.slot;
            self.cycle.clear();
            for k in 0..n {
                let v = (self.next + k) % n;
                // (4.) A run's first cell is judged at its arrival.
                if let Some(a) = self.vcs[v].next_to_judge() {
                    horizon = horizon.min(self.grid.slots_before(a) - self.slot);
                }
                match self.vcs[v].split(start) {
                    Split { present: 0, .. } => {
                        if let Some(a) = self.vcs[v].next_arrival() {
                            horizon = horizon.min(self.grid.slots_before(a) - self.slot);
                        }
                    }
                    split => self.cycle.push((v, split)),
                }
            }
            // Every VC's next arrival is after `start`: at least one slot.
            debug_assert!(horizon >= 1);
            if self.cycle.is_empty() {
                // Idle to the first slot at or after the next arrival.
                self.slot += horizon;
                continue;
            }
            horizon = self.prove(horizon);
            self.note_largest(horizon);
            self.send(horizon, out);
        }
        self.judge_arrivals(t);
        self.judged_by = self.judged_by.max(t);
        // The cells of frames dropped whole that have arrived by `t`:
        // dropped now, as the port drops each on its arrival (not when the
        // frame's first is judged: until it arrives, a cell is the link's).
        let (frame, lost) = (&mut self.dropped_frame, &mut self.lost);
        self.dropping.retain_mut(|(run, counted)| {
            let arrived = run.arrived_by(t);
            if arrived > *counted {
                lost.push((run.cell, arrived - *counted));
                *frame += arrived - *counted;
                *counted = arrived;
            }
            arrived < run.count
        });
    }

    /// Judges every run whose first cell arrives at or before `t`, in the
    /// order they arrive (at one instant, the lower VC first). The slots
    /// before each such arrival have run (a horizon ends at the first slot
    /// at or after it, (4.)).
    fn judge_arrivals(&mut self, t: SimTime) {
        while let Some((a, v)) = self
            .vcs
            .iter()
            .enumerate()
            .filter_map(|(v, q)| Some((q.next_to_judge()?, v)))
            .filter(|(a, _)| *a <= t)
            .min()
        {
            self.judge(v, a);
        }
    }

    /// Judges VC `v`'s first run not yet judged, whose first cell arrives
    /// at `t0`, as the port judges each cell on its arrival
    /// ([`Port::offer`](super::Port::offer)): its first cell by the queue
    /// then; its later cells with it where their fate follows (the frame
    /// admitted with room for all, or refused), else as a run of their own
    /// judged at the next cell's arrival.
    fn judge(&mut self, v: usize, t0: SimTime) {
        self.judgements += 1;
        // The queue as this cell finds it: cells that arrived before it, and
        // at its instant those of lower VCs.
        let mut counts = std::mem::take(&mut self.counts);
        counts.clear();
        counts.extend((0..self.vcs.len()).map(|u| came_before(u, v, t0).map_or(0, |t| self.vcs[u].present(t))));
        let queue: u64 = counts.iter().sum();
        let q = &mut self.vcs[v];
        let run = q.runs[q.judged];
        let eof = run.count == 1 && run.ends_frame;
        let room = queue < self.limit;
        let clamp = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        let first = match q.discard {
            Discard::No => {
                let verdict = if !q.mid_frame || !self.policy.judges_first_cells_only() {
                    let ctx = AdmitContext {
                        first_cell_of_frame: !q.mid_frame,
                        end_of_frame: eof,
                        clp: run.cell.clp(),
                        pool_occupancy: clamp(queue),
                        pool_limit: clamp(self.limit),
                        vc_occupancy: clamp(counts[v]),
                        active_vcs: clamp(counts.iter().filter(|c| **c > 0).count() as u64),
                    };
                    self.policy.admit(&ctx)
                } else {
                    Verdict::Admit
                };
                match verdict {
                    Verdict::DiscardFrame => {
                        q.discard = Discard::Whole;
                        Err(DropReason::FrameDiscard)
                    }
                    Verdict::Admit if room => Ok(()),
                    Verdict::Admit => {
                        if self.policy.on_overflow() == OverflowAction::DiscardRestOfFrame {
                            q.discard = Discard::Partial;
                        }
                        Err(DropReason::Overflow)
                    }
                }
            }
            Discard::Partial if eof && room && self.policy.keeps_end_of_frame() => Ok(()),
            Discard::Whole if eof && room && self.policy.keeps_end_of_refused_frame() => Ok(()),
            Discard::Partial | Discard::Whole => Err(DropReason::FrameDiscard),
        };
        self.counts = counts;
        q.mid_frame = !eof;
        if eof {
            q.discard = Discard::No;
        }
        match first {
            Err(DropReason::Overflow) => self.dropped_overflow += 1,
            Err(_) => self.dropped_frame += 1,
            Ok(()) => {}
        }
        if first.is_err() {
            self.lost.push((run.cell, 1));
        }
        let unsent: u64 = self.vcs.iter().map(|q| q.admitted).sum();
        let q = &mut self.vcs[v];
        let k = q.judged;
        let rest = run.count - 1;
        let later_need_no_rule = self.policy.judges_first_cells_only();
        match first {
            // Admitted, and room for the rest whatever arrives meanwhile:
            // every cell admitted or sent, at most `limit` held. (A cell
            // alone is judged.)
            Ok(()) if rest == 0 || (later_need_no_rule && unsent + 1 + rest <= self.limit) => {
                q.mid_frame = !run.ends_frame;
                q.runs.remove(k);
                q.admit(run);
            }
            Err(_) if rest == 0 => drop(q.runs.remove(k)),
            // Refused, or cut by an overflow: the frame's later cells are
            // dropped, its end judged when it arrives.
            Err(_) if q.discard != Discard::No => {
                let dropped = if run.ends_frame { rest - 1 } else { rest };
                if dropped > 0 {
                    self.dropping
                        .push((ArrivalRun { first: run.first + 1, count: dropped, ends_frame: false, ..run }, 0));
                }
                if run.ends_frame {
                    q.runs[k] = run.cell(run.count - 1);
                } else {
                    q.runs.remove(k);
                }
            }
            // Else the first cell on its own; the rest is judged as a run at
            // its next cell's arrival (where it may be admitted whole).
            _ => {
                q.runs[k] = ArrivalRun { first: run.first + 1, count: rest, ..run };
                if first.is_ok() {
                    q.admit(run.cell(0));
                }
            }
        }
        if first.is_ok() && unsent + 1 > self.limit {
            self.revoke(v, t0);
        }
    }

    /// A run admitted whole is a promise that each of its cells will find
    /// room, kept while the admitted cells not yet sent, arrived or not,
    /// fit the buffer. A cell admitted at `t0` by VC `v` (room for it
    /// alone) has just broken that: the cells of such runs that arrive
    /// after it go back to be judged at their arrivals, as a run judged at
    /// its first cell, as the port judges them. (Only a VC's last admitted
    /// run can have cells still to arrive: its next is judged at its first
    /// cell, after them.)
    fn revoke(&mut self, v: usize, t0: SimTime) {
        for (u, q) in self.vcs.iter_mut().enumerate() {
            let Some(k) = q.judged.checked_sub(1) else { continue };
            let run = q.runs[k];
            // Its cells that came before `v`'s at `t0` (and `v`'s own).
            let arrived = came_before(u, v, t0).map_or(0, |t| run.arrived_by(t));
            if arrived == run.count {
                continue;
            }
            q.admitted -= run.count - arrived;
            q.runs[k] = ArrivalRun { first: run.first + arrived, count: run.count - arrived, ..run };
            q.judged -= 1;
            let taken = if k == 0 { q.taken } else { 0 };
            if arrived > taken {
                q.runs.insert(k, ArrivalRun { count: arrived, ends_frame: false, ..run });
                q.judged += 1;
            } else if k == 0 {
                // Sent in full so far.
                q.taken = 0;
            }
            // Its frame goes on: the last cell judged did not end it.
            q.mid_frame = true;
        }
    }

    /// The horizon (at most `horizon` slots from the next) over which every
    /// VC of the cycle has a cell at each of its turns and every run that
    /// arrives is fast ((2.) and (3.) of the module's docs).
    fn prove(&self, mut horizon: u64) -> u64 {
        let l = self.cycle.len() as u64;
        for (r, &(v, split)) in self.cycle.iter().enumerate() {
            let r = r as u64;
            // Turns 0..m of this VC have a cell present.
            let mut m = split.present;
            let mut exhausted = true;
            for (run, from) in self.vcs[v].to_come(split) {
                let t0 = run.arrival(from);
                let last_start = self.grid.start(self.slot + horizon - 1);
                if t0 > last_start {
                    // Arrives after the horizon's last slot starts: what the
                    // turn's check below would say, without looking at the
                    // VC's later runs.
                    horizon = horizon.min(r + m * l);
                    exhausted = false;
                    break;
                }
                if run.is_slow_for(&self.grid) {
                    horizon = horizon.min(r + m * l).min(self.grid.slots_before(t0) - self.slot);
                    exhausted = false;
                    break;
                }
                let turn = r + m * l;
                if turn < horizon && t0 > self.grid.start(self.slot + turn) {
                    horizon = turn;
                    exhausted = false;
                    break;
                }
                m += run.count - from;
            }
            if exhausted {
                horizon = horizon.min(r + m * l);
            }
        }
        debug_assert!(horizon >= 1);
        horizon
    }

    /// The queue just before the departure of slot `self.slot + j`.
    fn queue_before(&self, j: u64) -> u64 {
        let t = self.grid.start(self.slot + j);
        self.vcs.iter().map(|q| q.present(t)).sum::<u64>() - j
    }

    /// The largest queue over the horizon's slots: at its first and last,
    /// and at the first slot at or after the last cell of a run that
    /// arrives within it.
    fn note_largest(&mut self, horizon: u64) {
        let last_start = self.grid.start(self.slot + horizon - 1);
        // Before the first slot, the cycle's cells present are the queue.
        let mut largest = self.cycle.iter().map(|(_, split)| split.present).sum::<u64>();
        debug_assert_eq!(largest, self.queue_before(0));
        if horizon > 1 {
            largest = largest.max(self.queue_before(horizon - 1));
        }
        for &(v, split) in &self.cycle {
            for (run, from) in self.vcs[v].to_come(split) {
                if run.arrival(from) > last_start {
                    break;
                }
                let j = self.grid.slots_before(run.arrival(run.count - 1)) - self.slot;
                if 0 < j && j < horizon {
                    largest = largest.max(self.queue_before(j));
                }
            }
        }
        self.max = self.max.max(largest);
    }

    /// Sends the cycle's cells in the `horizon` slots from the next.
    fn send(&mut self, horizon: u64, out: &mut Vec<DepartureRun>) {
        let l = self.cycle.len() as u64;
        // Every slot of the horizon sends a cell: the departures' sum is
        // the sum of the slots' starts, whichever VC sends in each.
        self.departures += self.grid.sum_of_starts(self.slot, 1, horizon).expect("slots before `t` are in time");
        for (r, &(v, _)) in self.cycle.iter().enumerate() {
            let r = r as u64;
            if r >= horizon {
                break;
            }
            let count = (horizon - r).div_ceil(l);
            self.arrivals += self.vcs[v].send(count, v, self.slot + r, l, out);
            self.cells_out += count;
        }
        self.next = self.cycle[((horizon - 1) % l) as usize].0 + 1;
        self.slot += horizon;
        self.last_sent = Some(self.slot - 1);
    }

    /// Cells sent.
    pub fn cells_out(&self) -> u64 {
        self.cells_out
    }

    /// The start of the last slot that sent a cell, if any has.
    pub fn last_sent(&self) -> Option<SimTime> {
        self.last_sent.map(|k| self.grid.start(k))
    }

    /// The cells dropped since the last call, a run's cell (its frame end's
    /// mark cleared) and how many, onto `out`.
    pub fn take_dropped(&mut self, out: &mut Vec<(Cell, u64)>) {
        out.append(&mut self.lost);
    }

    /// Its admitted cells not yet sent, arrived or not, and the runs that
    /// hold them (for the memory guard: in O(VCs), where the runs not yet
    /// judged may number millions behind a flooded link, whose own count
    /// of them stands for them).
    pub fn admitted(&self) -> (u64, u64) {
        let cells = self.vcs.iter().map(|q| q.admitted).sum();
        let runs = self.vcs.iter().map(|q| q.judged as u64).sum();
        (cells, runs)
    }

    /// The soonest VC `v`'s first frame end among its cells not yet sent
    /// can start its slot, if it has one: no sooner than its arrival, nor
    /// than the slot the round robin would give it were no other cell to
    /// come and were every cell ahead of it that has yet to arrive
    /// dropped. Cells that arrived before the last arrivals judged are
    /// admitted for good (a promise of room revoked, or a rule, can take
    /// back only cells still to arrive: `revoke`); before the frame end
    /// `v` sends those of them ahead of it, and every other VC sends one
    /// of its own such cells between two of `v`'s while it has one, and
    /// one before `v`'s first if the pointer comes to it first. Cells
    /// still to come only delay it. A bound, not the time.
    pub fn earliest_frame_end(&self, v: usize) -> Option<SimTime> {
        let settled = self.settled();
        self.frame_end_bound(v, |u| self.vcs[u].present(settled))
    }

    /// The soonest of every VC's [`earliest_frame_end`](Self::earliest_frame_end),
    /// each VC's cells present counted once.
    pub fn earliest_frame_end_of_all(&self) -> Option<SimTime> {
        let settled = self.settled();
        let present: Vec<u64> = self.vcs.iter().map(|q| q.present(settled)).collect();
        (0..self.vcs.len()).filter_map(|v| self.frame_end_bound(v, |u| present[u])).min()
    }

    /// [`earliest_frame_end`](Self::earliest_frame_end) of VC `v`, with
    /// `present(u)` VC `u`'s cells present when the last arrivals judged
    /// are settled.
    fn frame_end_bound(&self, v: usize, present: impl Fn(usize) -> u64) -> Option<SimTime> {
        let q = &self.vcs[v];
        let mut ahead = 0u64;
        for (k, run) in q.runs.iter().enumerate() {
            let judged = k < q.judged;
            let taken = if k == 0 { q.taken } else { 0 };
            if run.ends_frame {
                if judged {
                    ahead += run.count - 1 - taken;
                }
                // Its cells arrive in order: those ahead that have arrived.
                let ahead = ahead.min(present(v));
                // Each other VC's cells between two of `v`'s turns, and
                // before its first if the pointer comes to it first.
                let n = self.vcs.len();
                let turn = |u: usize| (u + n - self.next % n) % n;
                let others: u64 =
                    (0..n).filter(|&u| u != v).map(|u| present(u).min(ahead + u64::from(turn(u) < turn(v)))).sum();
                let slot = self.slot.saturating_add(ahead).saturating_add(others);
                return Some(self.grid.start(slot).max(run.arrival(run.count - 1)));
            }
            if judged {
                ahead += run.count - taken;
            }
        }
        None
    }

    /// Up to when the arrivals are admitted for good: before the last
    /// arrivals judged (a run pushed later may still arrive at that very
    /// instant and be judged there, after them).
    fn settled(&self) -> SimTime {
        SimTime::from_ps(self.judged_by.as_ps().saturating_sub(1))
    }

    /// Cells that arrived by `t`, and of them those dropped for want of
    /// room and those dropped with their frame (after
    /// [`advance_to`](Self::advance_to) `t`).
    pub fn cells_in_at(&self, t: SimTime) -> (u64, u64, u64) {
        let (cells_in, overflow, frame, _, _) = self.counts_at(t);
        (cells_in, overflow, frame)
    }

    /// What [`cells_in_at`](Self::cells_in_at), [`queued_at`](Self::queued_at)
    /// and [`max_queue_at`](Self::max_queue_at) give at `t`, the queue
    /// counted once: (cells in, dropped for want of room, dropped with
    /// their frame, queued, the largest queue).
    pub fn counts_at(&self, t: SimTime) -> (u64, u64, u64, u64, u64) {
        let queued = self.queued_at(t);
        let frame =
            self.dropped_frame + self.dropping.iter().map(|(run, counted)| run.arrived_by(t) - counted).sum::<u64>();
        let cells_in = self.cells_out + queued + self.dropped_overflow + frame;
        (cells_in, self.dropped_overflow, frame, queued, self.max.max(queued))
    }

    /// Cells queued at `t` (after [`advance_to`](Self::advance_to) `t`).
    pub fn queued_at(&self, t: SimTime) -> u64 {
        self.vcs.iter().map(|q| q.present(t)).sum()
    }

    /// The largest queue up to `t` (after `advance_to` `t`).
    pub fn max_queue_at(&self, t: SimTime) -> u64 {
        self.max.max(self.queued_at(t))
    }

    /// The queue's integral over `[0, t]`, in cell-picoseconds (after
    /// `advance_to` `t`): the sent cells' waits, and the queued ones' up
    /// to `t`.
    pub fn area_at(&self, t: SimTime) -> u128 {
        let queued = u128::from(self.queued_at(t)) * u128::from(t.as_ps());
        let queued_arrivals: u128 = self.vcs.iter().map(|q| q.sum_of_present(t)).sum();
        self.departures - self.arrivals + queued - queued_arrivals
    }

    /// How many times a run was judged at its first cell.
    #[cfg(test)]
    fn judgements(&self) -> u64 {
        self.judgements
    }

    /// The runs admitted and not yet sent, over every VC, and how many of
    /// them end a frame.
    #[cfg(test)]
    fn admitted_runs(&self) -> (usize, usize) {
        let runs = || self.vcs.iter().flat_map(|q| q.runs.iter().take(q.judged));
        (runs().count(), runs().filter(|r| r.ends_frame).count())
    }

    /// The start of slot `k` (the time of a [`DepartureRun`]'s cells).
    pub fn slot_start(&self, k: u64) -> SimTime {
        self.grid.start(k)
    }
}

/// Up to when VC `u`'s cells arrive before VC `v`'s cell at `t0`, in the
/// port's order: at one instant the lower VC first (`v`'s own earlier cells
/// are all before `t0`); `None` if none can.
fn came_before(u: usize, v: usize, t0: SimTime) -> Option<SimTime> {
    if u <= v { Some(t0) } else { t0.as_ps().checked_sub(1).map(SimTime::from_ps) }
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;
