//! The ABR service in the simulation: the end systems at hosts and at
//! VS/VD switches, wired around the sans-I/O state machines of
//! [`crate::abr`] (the switch ports' controllers are `sim/control.rs`).
//!
//! **RM cells.** An RM cell is an ordinary cell with PTI = 110 whose PDU id
//! names its fields ([`RmCell`]) in the simulation's RM table, a one-cell
//! entry per cell in flight, released when the cell is received or lost.
//! They are counted like every other cell (ports, links, conservation) and
//! never reach AAL5.
//!
//! **End systems.** Each host end of an ABR VC has an [`AbrEnd`]: the
//! source of the direction it sends (TM 4.0 rules 1-13) and the destination
//! of the direction it receives. The frames its transport sends wait in the
//! end's queue (their PDU ids and cells left) and go out one cell per
//! in-rate slot at the source's ACR, with the fraction of a picosecond
//! carried from cell to cell; at most one event per in-rate cell (fewer
//! when the end sends ahead: below). A forward RM cell
//! that arrives is turned around (rule 3b: it waits for the end's next
//! in-rate slot, a newer one overwriting it); a backward RM cell sets the
//! source's ACR, and the pending slot moves with the new rate. With nothing
//! to send, a trailing FRM still goes once rule 3a makes one due (after at
//! least Mrm cells and Trm, as YATS sends it). While ACR is below TCR the
//! source sends no in-rate cells, only out-of-rate FRMs at TCR (rule 11),
//! each followed by the turned-around BRM if one waits (out of rate, CLP =
//! 1: TM 4.0 lets a destination send BRMs so, at most at TCR).
//!
//! **Frames held.** A frame a host's transport hands to an ABR end waits
//! there without a PDU entry ([`HeldFrame`]): the entry is made when its
//! first cell goes. A TCP window fills the end's queue far ahead of the
//! source's rate (some 2,000 frames per connection on the 97-0177 WAN,
//! up to a second of waiting), and an entry made at the handover was cold
//! in every cache by the time its frame reached the receiver, which reads
//! it first: a miss to memory per frame (`docs/benchmark.md` has the
//! figures). Made at the
//! first cell, from a slot the table freed moments before, it is still
//! warm at the receiver a link delay later. The held frames themselves
//! are read in order, each asked for (`atmlab_engine::hint::prefetch`)
//! when the one before it starts, so that reading them does not wait on
//! memory either. The run's
//! results count a held frame as sent and in flight, and the table keeps
//! room for every held frame (a host stops the run at the same point as
//! before if its frames would overflow it).
//!
//! **Switches.** A switch output port may have an ABR controller: its
//! part of the simulation is `sim/control.rs`. Here, a VS/VD switch's ends
//! ([`EndAt::Switch`]) take the cells of the loops they end
//! ([`Simulation::vs_receive`]).
//!
//! **Sending ahead.** What an end does in an in-rate slot depends only on
//! the end itself (its source's rules, its queue, a waiting BRM), and what
//! it sends goes into its adapter and onto a link, where nobody sees it
//! before it arrives. So an end sends ahead: when its in-rate slot's event
//! runs, the slots after it run at once, each at its own time, for as long
//! as they start before anything can reach the end or look at what it
//! sent: the next RM cell its host receives from its links (one already
//! on a link, or one not yet sent, which arrives a cell time and the link
//! delay after its slot at the earliest), the timers and start and stop of
//! the TCP connections at the host, the end's own other timers, the next
//! probe, and the end of the stretch `advance` is running. Only a slot
//! that starts strictly before that runs ahead, since events at that very
//! instant may come first. A frame end that arrives in between (a TCP ACK)
//! does not stop it: whatever the host does with it only appends frames
//! behind the cells being sent, and the stretch stops where the end's
//! queue runs dry, so that frames appended later go in the slots they
//! would have; the most cells ever waiting is kept in true time, counting
//! the cells sent ahead of such an arrival as still waiting then
//! ([`AbrEnd::push_waiting`]). The end
//! must be at a host whose CPU costs nothing (no CPU events), send into a
//! pipelined adapter that carries its VC alone, on a link whose far end
//! takes cells by arrival events, and no UDP flow may start at its host;
//! packet capture turns it off. On the 97-0177 WAN, a fifth of the
//! sources' slots remained events (2.41 M -> 0.50 M events per 10 s)
//! while frame ends stopped a stretch; passing them takes the run's events
//! from 1.15 M to 1.01 M. The
//! slots in a row that each send a data cell (rule 3c: data waits, no
//! BRM, no FRM due) run as one loop, without the in-rate timer between
//! them ([`abr_data_run`](Simulation::abr_data_run)); an FRM, a BRM or
//! an idle source takes the general path.
//!
//! Event elision off, every cell reaches every switch by an arrival event
//! and every in-rate slot is an event; the tests require the same run
//! both ways.

use std::collections::VecDeque;

use super::Simulation;
use super::apps::VcEnd;
use super::kernel::{APP, Event};
use super::timer::{Firing, LazyTimer};
use crate::abr::destination::AbrDestination;
use crate::abr::source::{AbrSource, InRate};
use crate::abr::{Direction, RmCell};
use crate::atm::{Carries, Cell, NextHop, Pti, VcLabel};
use crate::ids::{AbrEndId, ConnId, HostId, PortId, SwitchId};
use crate::pdu::PduId;
use atmlab_engine::{CELL_BITS, SimTime};

/// Where an ABR end sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndAt {
    /// At a host, on its VC `vc`.
    Host {
        /// The host.
        host: HostId,
        /// The VC's index at the host.
        vc: u32,
    },
    /// At a VS/VD switch, facing one side of the VC; `peer` is the end at
    /// the same switch facing the other side (where this end's cells come
    /// from, and whose source this end's destination couples to).
    Switch {
        /// The switch.
        switch: SwitchId,
        /// The other end of the pair.
        peer: u32,
    },
}

/// What can reach the host of an end that sends ahead.
#[derive(Clone, Debug, Default)]
struct Inputs {
    /// The links into the host.
    links: Vec<PortId>,
    /// The TCP connections with an end at the host.
    conns: Vec<ConnId>,
}

/// What waits at an ABR source for an in-rate slot.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Waiting {
    /// A host's frame none of whose cells has gone yet: the front of
    /// [`AbrEnd::held`] ("Frames held" in the module docs).
    Held,
    /// A host's frame being sent: its PDU and the cells of it still to send.
    Frame(PduId, u32),
    /// A cell a virtual source took from the segment behind it, already
    /// labelled for its output port.
    Cell(Cell),
}

/// A persistent source (the ATM Forum's test configurations): from its
/// start it always has cells, raw data cells that carry no frame, made
/// when a slot takes one; a cell application counts them at the sink.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Persistent {
    /// The cell application whose cells these are.
    pub(crate) app: u32,
    /// When it starts sending.
    pub(crate) start: SimTime,
    /// Whether it has started.
    on: bool,
    /// Cells sent.
    sent: u64,
}

impl Persistent {
    /// Application `app`'s source, from `start`.
    pub(crate) fn new(app: u32, start: SimTime) -> Persistent {
        Persistent { app, start, on: false, sent: 0 }
    }
}

/// A host's frame waiting at an ABR source before its first cell goes:
/// what its PDU entry will hold.
#[derive(Clone, Debug)]
pub(crate) struct HeldFrame {
    pub(crate) datagram: super::datagram::Datagram,
    pub(crate) cells: u32,
    /// When the host's transport sent it.
    created: SimTime,
}

/// One end of an ABR loop: at a host, or at a VS/VD switch (TM 4.0
/// s5.10.10), where two ends facing either side split the VC's loops.
#[derive(Clone, Debug)]
pub struct AbrEnd {
    /// The VC's name and the direction this end sends, `"<vc>:forward"` (at
    /// the VC's first host) or `"<vc>:backward"`; at a VS/VD switch,
    /// `"<vc>:forward@<switch>"` (the virtual source toward the VC's last
    /// host) or `"<vc>:backward@<switch>"`.
    pub name: String,
    /// Where it sits.
    pub at: EndAt,
    /// The output port it sends into, and the VC's label and index there.
    pub(crate) port: PortId,
    label: VcLabel,
    vc: u16,
    /// The source of the direction this end sends.
    pub source: AbrSource,
    /// The destination of the direction this end receives.
    pub destination: AbrDestination,
    /// What waits for in-rate slots.
    pub(crate) waiting: VecDeque<Waiting>,
    /// The frames of `waiting` none of whose cells has gone, in order.
    pub(crate) held: VecDeque<HeldFrame>,
    /// A persistent source's cells, sent when nothing else waits.
    pub(crate) persistent: Option<Persistent>,
    /// Sending ahead: when the data cells sent in the current stretch of
    /// slots go, the latest last. Those at or after a moment had not gone
    /// yet then, in true time: [`AbrEnd::push_waiting`] counts them when
    /// frames arrive between them.
    ahead: VecDeque<SimTime>,
    /// When the current stretch of slots started (its event), while one
    /// runs; else `SimTime::MAX`. Cells sent after it are sent ahead.
    stretch: SimTime,
    /// Cells in `waiting`, and the most there ever were.
    pub(crate) waiting_cells: u64,
    pub(crate) max_waiting_cells: u64,
    /// When the last in-rate cell went, in picoseconds with their fraction.
    last_ps: Option<f64>,
    /// The next in-rate slot while something waits for it.
    in_rate: LazyTimer,
    /// The trailing FRM of an idle source (rule 3a, as YATS sends it). A
    /// timer of its own: its deadline (Trm after the last FRM) only moves
    /// later, so it never leaves a retired event in the heap, whereas
    /// parking the in-rate timer there would retire one event per frame
    /// that arrives before it (2,200 dead events in the heap of the
    /// 97-0177 WAN, a tenth of its run time in deeper heap operations).
    trailing: LazyTimer,
    out_of_rate: LazyTimer,
    /// What can reach this end, if it sends ahead ("Sending ahead" in the
    /// module docs; `None`: one event per in-rate slot).
    inputs: Option<Box<Inputs>>,
    /// The integral of ACR over time (cells), its last value and when it was
    /// taken: the time-averaged ACR of the results.
    acr_integral: f64,
    acr_last: f64,
    acr_since: SimTime,
}

impl AbrEnd {
    /// An end at `at` that sends into `port` with `label`, its VC of index `vc` there.
    pub(crate) fn new(name: String, at: EndAt, out: (PortId, VcLabel, u16), source: AbrSource) -> AbrEnd {
        let acr = source.acr();
        let (port, label, vc) = out;
        AbrEnd {
            name,
            at,
            port,
            label,
            vc,
            source,
            destination: AbrDestination::new(),
            waiting: VecDeque::new(),
            held: VecDeque::new(),
            persistent: None,
            ahead: VecDeque::new(),
            stretch: SimTime::MAX,
            waiting_cells: 0,
            max_waiting_cells: 0,
            last_ps: None,
            in_rate: LazyTimer::default(),
            trailing: LazyTimer::default(),
            out_of_rate: LazyTimer::default(),
            inputs: None,
            acr_integral: 0.0,
            acr_last: acr,
            acr_since: SimTime::ZERO,
        }
    }

    /// Queues `w` (`cells` cells) at `now`. The most cells ever waiting is
    /// kept in true time: cells sent ahead at or after `now` were still
    /// waiting then.
    fn push_waiting(&mut self, w: Waiting, cells: u32, now: SimTime) {
        self.waiting.push_back(w);
        self.waiting_cells += u64::from(cells);
        let then = self.waiting_cells + self.sent_ahead_of(now);
        self.max_waiting_cells = self.max_waiting_cells.max(then);
    }

    /// The data cells sent ahead that go at or after `now` (those before
    /// it are forgotten: the times asked never go back).
    fn sent_ahead_of(&mut self, now: SimTime) -> u64 {
        while self.ahead.front().is_some_and(|&t| t < now) {
            self.ahead.pop_front();
        }
        self.ahead.len() as u64
    }

    /// Notes the source's ACR at `now` (after anything that may change it).
    #[inline]
    fn note_acr(&mut self, now: SimTime) {
        let acr = self.source.acr();
        if acr != self.acr_last {
            self.acr_integral += self.acr_last * (now - self.acr_since).as_secs_f64();
            self.acr_last = acr;
            self.acr_since = now;
        }
    }

    /// The time-averaged ACR from 0 to `end`, cells/s.
    pub fn mean_acr(&self, end: SimTime) -> f64 {
        let total = (end - SimTime::ZERO).as_secs_f64();
        if total <= 0.0 {
            return self.acr_last;
        }
        (self.acr_integral + self.acr_last * (end - self.acr_since).as_secs_f64()) / total
    }

    fn has_data(&self) -> bool {
        !self.waiting.is_empty() || self.persistent.is_some_and(|p| p.on)
    }

    /// When the next in-rate cell may go (rule 1): an ACR interval after the
    /// last, not before `now`; `None` while in-rate sending is stopped.
    ///
    /// A slot's event runs at its time rounded up to the picosecond, so a
    /// slot that falls within the picosecond ending at `now` is the one due
    /// now and keeps its fraction: the pacing carries it from cell to cell
    /// (taking the later of the slot and `now` dropped it, and every
    /// interval came out rounded up).
    fn next_slot_ps(&self, now: SimTime) -> Option<f64> {
        let interval = self.source.cell_interval_ps()?;
        let Some(last) = self.last_ps else { return Some(now.as_ps() as f64) };
        let slot = last + interval;
        Some(if ceil_ps(slot) >= now.as_ps() { slot } else { now.as_ps() as f64 })
    }
}

/// The ABR end systems of a run, at hosts and at VS/VD switches.
pub(super) struct AbrEnds {
    ends: Vec<AbrEnd>,
    /// Frames waiting at the ends with no PDU entry yet ("Frames held" in
    /// the module docs): the PDU table keeps room for them.
    held_frames: u64,
}

impl AbrEnds {
    pub(super) fn new(ends: Vec<AbrEnd>) -> AbrEnds {
        AbrEnds { ends, held_frames: 0 }
    }

    /// Quantity `q` of the source of end `e`, for a probe (bit/s).
    pub(super) fn sample(&self, e: u32, q: super::probes::AbrQuantity) -> super::probes::Sample {
        let source = &self.ends[e as usize].source;
        let cells_per_s = match q {
            super::probes::AbrQuantity::Acr => source.acr(),
            super::probes::AbrQuantity::Er => source.last_er().unwrap_or(0.0),
        };
        super::probes::Sample::Level(cells_per_s * CELL_BITS as f64)
    }

    /// End `e`'s name.
    pub(super) fn name(&self, e: u32) -> &str {
        &self.ends[e as usize].name
    }

    /// Nrm of end `e`'s source: one in-rate cell in Nrm is a forward RM cell.
    pub(super) fn nrm(&self, e: u32) -> u32 {
        self.ends[e as usize].source.params().nrm
    }

    /// Frames held at the ends, with no PDU entry yet.
    pub(super) fn frames_held(&self) -> u64 {
        self.held_frames
    }

    /// The datagrams of the frames held at the ends.
    pub(super) fn datagrams_held(&self) -> impl Iterator<Item = &super::datagram::Datagram> {
        self.ends.iter().flat_map(|e| e.held.iter()).map(|h| &h.datagram)
    }

    /// The cells waiting at the ABR ends of host `h` (held frames and the
    /// rest of frames begun).
    pub(super) fn cells_held_at(&self, h: HostId) -> u64 {
        let at = |e: &&AbrEnd| matches!(e.at, EndAt::Host { host, .. } if host == h);
        self.ends.iter().filter(at).map(|e| e.waiting_cells).sum()
    }

    /// The cells of the frames held at the ends.
    pub(super) fn cells_held(&self) -> u64 {
        self.ends.iter().flat_map(|e| e.held.iter()).map(|h| u64::from(h.cells)).sum()
    }

    /// Datagrams held at the sources, and the entries allocated for them.
    pub(super) fn datagrams(&self) -> (u64, u64) {
        let waiting = self.ends.iter().map(|e| e.waiting.len() as u64).sum();
        (waiting, self.ends.iter().map(|e| (e.waiting.capacity() + e.held.capacity()) as u64).sum())
    }

    /// What each source holds, for the memory guard.
    pub(super) fn tally(&self, tally: &mut super::guard::Tally) {
        for e in &self.ends {
            let waiting = e.waiting_cells + e.held.len() as u64 * super::guard::DATAGRAM_CELLS;
            tally.add(waiting, || format!("the ABR source {} (cells waiting for their rate)", e.name));
        }
    }

    /// Each persistent source's cell application, the cells it sent and
    /// its source's PCR (cells/s).
    pub(super) fn persistent_sent(&self) -> impl Iterator<Item = (u32, u64, f64)> + '_ {
        self.ends.iter().filter_map(|e| e.persistent.map(|p| (p.app, p.sent, e.source.params().pcr)))
    }

    /// Cells of frames waiting at the sources for their in-rate slots.
    pub(super) fn waiting_cells(&self) -> u64 {
        self.ends.iter().map(|e| e.waiting_cells).sum()
    }
}

impl Simulation {
    // ------------------------------------------------------------ end systems

    /// Queues the `cells` cells of `datagram` (sent by its transport at
    /// `created`) at ABR end `e` for its in-rate slots; its PDU entry is
    /// made when its first cell goes ("Frames held" in the module docs).
    pub(super) fn abr_enqueue(&mut self, e: u32, datagram: super::datagram::Datagram, cells: u32, created: SimTime) {
        let end = &mut self.abr.ends[e as usize];
        end.held.push_back(HeldFrame { datagram, cells, created });
        end.push_waiting(Waiting::Held, cells, self.k.now);
        self.abr.held_frames += 1;
        self.abr_kick(e);
    }

    /// Schedules end `e`'s next in-rate slot if it has something to send (or
    /// its next out-of-rate FRM while stopped).
    fn abr_kick(&mut self, e: u32) {
        if let Some((t, g)) = self.abr_plan(e) {
            self.k.queue.push(t, APP, Event::AbrSend(AbrEndId(e), g));
        }
    }

    /// What [`abr_kick`](Self::abr_kick) does, but the in-rate slot's event,
    /// if a new one is needed, is returned for the caller to schedule (or
    /// to run at once: "Sending ahead" in the module docs).
    fn abr_plan(&mut self, e: u32) -> Option<(SimTime, u32)> {
        let now = self.k.now;
        let end = &mut self.abr.ends[e as usize];
        end.note_acr(now);
        // The next slot, rounded up to a whole picosecond (`as` saturates).
        match end.next_slot_ps(now).map(|at| SimTime::from_ps(ceil_ps(at))) {
            Some(slot) if end.has_data() || end.destination.brm_waiting() => end.in_rate.set(Some(slot)),
            Some(slot) => {
                // Nothing waits: only a trailing FRM (rule 3a(ii) once Trm has
                // passed after at least Mrm cells, as YATS sends it) may be due.
                end.in_rate.set(None);
                let due = end.source.frm_due_at().map(|due| due.max(slot));
                if let Some((t, g)) = end.trailing.set(due) {
                    self.k.queue.push(t, APP, Event::AbrTrailing(AbrEndId(e), g));
                }
                None
            }
            None => {
                end.in_rate.set(None);
                end.trailing.set(None);
                // A source stopped since before now (say from the start, its
                // ICR below TCR) owes its out-of-rate FRM now, not then.
                let due = end.source.out_of_rate_due().map(|due| due.max(now));
                if let Some((t, g)) = end.out_of_rate.set(due) {
                    self.k.queue.push(t, APP, Event::AbrOutOfRate(AbrEndId(e), g));
                }
                None
            }
        }
    }

    /// End `e`'s in-rate slot: rule 3 picks an FRM, a turned-around BRM or
    /// a data cell.
    pub(super) fn on_abr_send(&mut self, e: AbrEndId, generation: u32) {
        let e = e.0;
        let now = self.k.now;
        let end = &mut self.abr.ends[e as usize];
        match end.in_rate.fire(now, generation) {
            Firing::Stale => return,
            Firing::Rearm(t, g) => {
                self.k.queue.push(t, APP, Event::AbrSend(AbrEndId(e), g));
                return;
            }
            Firing::Due => {}
        }
        // Sending ahead: the slots due before anything can reach this end
        // or see what it sends run now, each at its own time (an end that
        // does not send ahead is quiet from now: its slot alone runs). The
        // cells of earlier stretches have all gone by now.
        let now = self.k.now;
        let end = &mut self.abr.ends[e as usize];
        end.sent_ahead_of(now);
        end.stretch = now;
        let quiet = self.abr_quiet_until(e);
        let mut next = self.abr_slot_run(e, quiet);
        while let Some((t, g)) = next
            && t < quiet
            && self.k.stopped.is_none()
        {
            self.k.now = t;
            let fired = self.abr.ends[e as usize].in_rate.fire(t, g);
            debug_assert_eq!(fired, Firing::Due);
            self.k.counts.abr_ahead += 1;
            next = self.abr_slot_run(e, quiet);
        }
        self.k.now = now;
        self.abr.ends[e as usize].stretch = SimTime::MAX;
        if let Some((t, g)) = next {
            self.k.queue.push(t, APP, Event::AbrSend(AbrEndId(e), g));
        }
    }

    /// Until when nothing can reach end `e` (which sends ahead), nor look at
    /// what it has sent: the earliest of the next cell its host acts on
    /// from its links, the timers and start and stop of the TCP
    /// connections at the host, the end's other timers, the next probe, and
    /// the end of the stretch being run. Events at that instant may come
    /// first, so a slot runs ahead only if it starts strictly before it.
    fn abr_quiet_until(&self, e: u32) -> SimTime {
        let now = self.k.now;
        let end = &self.abr.ends[e as usize];
        let Some(inputs) = &end.inputs else { return now };
        let mut t = self.k.until;
        for p in &inputs.links {
            t = t.min(self.net.port(*p).quiet_until_rm(now));
        }
        for &c in &inputs.conns {
            if let Some(at) = self.transport.next_own_event(c, now) {
                t = t.min(at);
            }
        }
        for at in [end.trailing.pending(), end.out_of_rate.pending()].into_iter().flatten() {
            t = t.min(at);
        }
        t.min(self.probes.next_due())
    }

    /// Schedules the start of every persistent source.
    pub(super) fn start_abr_persistent(&mut self) {
        for (e, end) in self.abr.ends.iter().enumerate() {
            if let Some(p) = end.persistent {
                self.k.queue.push(p.start, APP, Event::AbrStart(AbrEndId(e as u32)));
            }
        }
    }

    /// End `e`'s persistent source starts: from now on it always has cells.
    pub(super) fn on_abr_start(&mut self, e: AbrEndId) {
        if let Some(p) = self.abr.ends[e.0 as usize].persistent.as_mut() {
            p.on = true;
        }
        self.abr_kick(e.0);
    }

    /// End `e`'s trailing FRM may be due: sent in an in-rate slot if the
    /// source is still idle (else the in-rate timer has taken over).
    pub(super) fn on_abr_trailing(&mut self, e: AbrEndId, generation: u32) {
        let e = e.0;
        let end = &mut self.abr.ends[e as usize];
        match end.trailing.fire(self.k.now, generation) {
            Firing::Stale => {}
            Firing::Rearm(t, g) => self.k.queue.push(t, APP, Event::AbrTrailing(AbrEndId(e), g)),
            Firing::Due if end.has_data() || end.destination.brm_waiting() => {}
            Firing::Due => {
                if let Some((t, g)) = self.abr_slot(e) {
                    self.k.queue.push(t, APP, Event::AbrSend(AbrEndId(e), g));
                }
            }
        }
    }

    /// End `e`'s in-rate slot at `now` and, while they send data cells,
    /// its slots after it that start before `quiet` ("Sending ahead" in
    /// the module docs), each at its own time (`self.k.now` is left at the
    /// last). Returns the next slot's event, as [`abr_slot`](Self::abr_slot).
    fn abr_slot_run(&mut self, e: u32, quiet: SimTime) -> Option<(SimTime, u32)> {
        if self.abr_data_run(e, quiet) { self.abr_plan(e) } else { self.abr_slot(e) }
    }

    /// The data cells of [`abr_slot_run`](Self::abr_slot_run): what
    /// [`abr_slot`](Self::abr_slot) does in a slot where rule 3c sends a
    /// data cell (data waits, no BRM, no FRM due), for as many slots in a
    /// row as it applies, without the in-rate timer or rule 3's other
    /// branches between them: ACR and the BRM waiting cannot change before
    /// `quiet`, nor the pacing's interval. Returns whether it sent any;
    /// if not, nothing changed and the slot is the general path's.
    fn abr_data_run(&mut self, e: u32, quiet: SimTime) -> bool {
        let end = &mut self.abr.ends[e as usize];
        if !end.has_data() || end.destination.brm_waiting() {
            return false;
        }
        let Some(mut slot_ps) = end.next_slot_ps(self.k.now) else { return false };
        let Some(interval) = end.source.cell_interval_ps() else { return false };
        let (port, mut now) = (end.port, self.k.now);
        let mut sent = false;
        loop {
            let end = &mut self.abr.ends[e as usize];
            if !end.source.try_data_cell(now) {
                break;
            }
            if sent {
                self.k.counts.abr_ahead += 1;
            }
            self.k.now = now;
            let cell = self.abr_data_cell(e).expect("data was waiting");
            self.abr.ends[e as usize].last_ps = Some(slot_ps);
            self.offer_at(port, now, cell);
            sent = true;
            // The next slot, as `next_slot_ps` finds it from this one.
            slot_ps += interval;
            let t = SimTime::from_ps(ceil_ps(slot_ps));
            if t >= quiet || !self.abr.ends[e as usize].has_data() || self.k.stopped.is_some() {
                break;
            }
            now = t;
        }
        sent
    }

    /// End `e`'s in-rate slot at `now`. Returns the next slot's event, if a
    /// new one is needed, for the caller to schedule.
    fn abr_slot(&mut self, e: u32) -> Option<(SimTime, u32)> {
        let now = self.k.now;
        let end = &mut self.abr.ends[e as usize];
        let Some(slot_ps) = end.next_slot_ps(now) else {
            return self.abr_plan(e); // stopped since: out of rate
        };
        let (data, brm) = (end.has_data(), end.destination.brm_waiting());
        let cell = match end.source.next_in_rate(now, data, brm) {
            Some(InRate::Frm(rm)) => Some(self.abr_rm_cell(e, rm, false)),
            Some(InRate::Brm) => {
                let rm = self.take_brm(e).expect("a BRM was waiting");
                Some(self.abr_rm_cell(e, rm, false))
            }
            Some(InRate::Data) => Some(self.abr_data_cell(e)),
            None => None,
        };
        if let Some(cell) = cell.flatten() {
            self.abr.ends[e as usize].last_ps = Some(slot_ps);
            self.abr_offer(e, cell);
        }
        self.abr_plan(e)
    }

    /// End `e`'s out-of-rate FRM is due (rule 11).
    pub(super) fn on_abr_out_of_rate(&mut self, e: AbrEndId, generation: u32) {
        let e = e.0;
        let now = self.k.now;
        let end = &mut self.abr.ends[e as usize];
        match end.out_of_rate.fire(now, generation) {
            Firing::Stale => return,
            Firing::Rearm(t, g) => {
                self.k.queue.push(t, APP, Event::AbrOutOfRate(AbrEndId(e), g));
                return;
            }
            Firing::Due => {}
        }
        if let Some(rm) = end.source.next_out_of_rate(now)
            && let Some(cell) = self.abr_rm_cell(e, rm, true)
        {
            self.abr_offer(e, cell);
            // A turned-around BRM may go out of rate too (CLP = 1, at most
            // TCR: TM 4.0 s5.10.5 rule 3): else, with both directions of a
            // VC below TCR, neither would ever hear from the other again.
            if let Some(brm) = self.take_brm(e)
                && let Some(cell) = self.abr_rm_cell(e, brm, true)
            {
                self.abr_offer(e, cell);
            }
        }
        self.abr_kick(e);
    }

    /// An RM cell of end `e`'s VC carrying `rm` (CLP = 1 out of rate), or
    /// `None` when the RM table is full (the run then stops).
    fn abr_rm_cell(&mut self, e: u32, rm: RmCell, out_of_rate: bool) -> Option<Cell> {
        let end = &self.abr.ends[e as usize];
        let (label, vc) = (end.label, end.vc);
        let Some(id) = self.tables.rms.insert(rm, 1, self.k.now) else {
            self.k.stop(format!(
                "stopped at t = {:.6} s: more than {} RM cells are in flight at once (the RM table is full)",
                self.k.now.as_secs_f64(),
                crate::pdu::MAX_PDUS_IN_FLIGHT
            ));
            return None;
        };
        self.k.counts.cells_created += 1;
        if self.k.trace.is_some() {
            let event = if rm.dir == Direction::Forward { "frm_sent" } else { "brm_sent" };
            self.trace_rm(e, event, &rm, out_of_rate);
        }
        Some(Cell::new(label, id, Pti::RM, out_of_rate, vc))
    }

    /// The trace's record of an RM cell event at end `e` (`trace.rs`), with
    /// the source's ACR as it stands after the event.
    #[cold]
    #[inline(never)]
    fn trace_rm(&mut self, e: u32, event: &'static str, rm: &RmCell, out_of_rate: bool) {
        let end = &self.abr.ends[e as usize];
        let acr = Some(end.source.acr() * CELL_BITS as f64);
        let Some(t) = self.k.trace.as_deref_mut() else { return };
        let (at, vc) = match end.at {
            EndAt::Host { host, vc } => (self.hosts.name(host), t.host_vc(host.0, vc)),
            EndAt::Switch { switch, .. } => (self.net.switch_name(switch), t.port_vc(end.port.0, end.vc)),
        };
        t.rm(self.k.now, event, at, vc, rm, out_of_rate, acr);
    }

    /// The next cell at the head of end `e`'s queue.
    fn abr_data_cell(&mut self, e: u32) -> Option<Cell> {
        let end = &mut self.abr.ends[e as usize];
        if end.waiting.is_empty() {
            // A persistent source: a cell made now (it never waited).
            let p = end.persistent.as_mut().expect("data was waiting");
            p.sent += 1;
            self.k.counts.cells_created += 1;
            self.k.counts.raw_created += 1;
            return Some(Cell::new(end.label, PduId::NONE, Pti::DATA, false, end.vc));
        }
        end.waiting_cells -= 1;
        if self.k.now > end.stretch {
            end.ahead.push_back(self.k.now);
        }
        let front = end.waiting.front_mut().expect("data was waiting");
        if let Waiting::Held = front {
            // The frame's first cell: its PDU entry now (`send_cells` kept
            // room for it in the table).
            let h = end.held.pop_front().expect("a held frame waits with its mark");
            if let Some(next) = end.held.front() {
                // Its successor, written up to a second ago, is read at the
                // next frame's first cell: from cache, not main memory (all
                // of its lines, `docs/benchmark.md`).
                atmlab_engine::hint::prefetch(next);
                atmlab_engine::hint::prefetch(&next.created);
                atmlab_engine::hint::prefetch(&next.datagram.payload);
                atmlab_engine::hint::prefetch(&next.cells);
            }
            let pdu = self.tables.pdus.insert(h.datagram, h.cells, h.created).expect("room is kept for held frames");
            self.abr.held_frames -= 1;
            *front = Waiting::Frame(pdu, h.cells);
        }
        match front {
            Waiting::Held => unreachable!("made a frame above"),
            Waiting::Frame(pdu, left) => {
                let (pdu, last) = (*pdu, *left == 1);
                *left -= 1;
                if last {
                    end.waiting.pop_front();
                }
                let pti = if last { Pti::DATA_EOF } else { Pti::DATA }; // EFCI = 0 (rule 12)
                Some(Cell::new(end.label, pdu, pti, false, end.vc))
            }
            Waiting::Cell(_) => {
                let Some(Waiting::Cell(cell)) = end.waiting.pop_front() else { unreachable!("matched above") };
                Some(cell)
            }
        }
    }

    fn abr_offer(&mut self, e: u32, cell: Cell) {
        let port = self.abr.ends[e as usize].port;
        self.offer_at(port, self.k.now, cell);
    }

    /// An RM cell reached host `h` on its VC `vc`: a forward one is turned
    /// around for this end's source to send back; a backward one sets this
    /// end's ACR.
    pub(super) fn rm_at_host(&mut self, h: HostId, vc: u32, id: PduId) {
        let rm = self.tables.rms.get(id).expect("an arriving RM cell's fields are live").payload;
        self.tables.rms.settle_cell(id);
        let Some(e) = self.hosts.abr_end(VcEnd { host: h, vc }) else {
            return; // not an ABR VC at this host: nothing acts on it
        };
        let end = &mut self.abr.ends[e as usize];
        match rm.dir {
            Direction::Forward => {
                end.destination.on_forward_rm(&rm);
            }
            Direction::Backward => {
                end.source.on_backward_rm(self.k.now, &rm);
            }
        }
        if self.k.trace.is_some() {
            let event = if rm.dir == Direction::Forward { "frm_received" } else { "brm_received" };
            self.trace_rm(e, event, &rm, false);
        }
        self.abr_kick(e);
    }

    /// `n` data cells like `cell` of an AAL5 frame reached host `h` on its
    /// VC `vc` (before AAL5 sees them): the ABR destination notes their EFCI
    /// bit (rule 1).
    pub(super) fn data_cells_at_host(&mut self, h: HostId, vc: u32, cell: Cell, n: u32) {
        if let Some(e) = self.hosts.abr_end(VcEnd { host: h, vc }) {
            self.abr.ends[e as usize].destination.on_data_cells(cell.pti().efci(), n);
        }
    }

    /// End `e`'s waiting turned-around BRM, if any. At a VS/VD switch its
    /// ER is lowered to the ACR of the virtual source on the other side
    /// (atmlab's coupling, docs/models/abr.md, "Virtual source and
    /// destination": the segment behind may not send faster than the one
    /// ahead drains).
    fn take_brm(&mut self, e: u32) -> Option<RmCell> {
        let mut brm = self.abr.ends[e as usize].destination.take_brm()?;
        if let EndAt::Switch { peer, .. } = self.abr.ends[e as usize].at {
            brm.lower_er(self.abr.ends[peer as usize].source.acr());
        }
        Some(brm)
    }

    /// A cell of an ABR VC reached a VS/VD switch on its way to the port of
    /// end `e` (already relabelled for it): the switch ends the loop of the
    /// segment it came from and starts the next one. Data cells wait at
    /// `e`'s virtual source (their EFCI noted by the virtual destination
    /// facing where they came from, and cleared); an FRM is turned around by
    /// that virtual destination; a BRM is the feedback of the virtual source
    /// that sends back toward where it came from, and ends there.
    pub(super) fn vs_receive(&mut self, e: u32, mut cell: Cell) {
        let EndAt::Switch { peer, .. } = self.abr.ends[e as usize].at else {
            unreachable!("only switch ends take cells from links")
        };
        match cell.carries() {
            Carries::Frame(_) | Carries::Nothing => {
                self.abr.ends[peer as usize].destination.on_data_cell(cell.pti().efci());
                cell = cell.with_pti(cell.pti().without_efci());
                self.abr.ends[e as usize].push_waiting(Waiting::Cell(cell), 1, self.k.now);
                self.abr_kick(e);
            }
            Carries::Rm(id) => {
                let rm = self.tables.rms.get(id).expect("an arriving RM cell's fields are live").payload;
                self.tables.rms.settle_cell(id);
                self.k.counts.rm_absorbed += 1;
                match rm.dir {
                    Direction::Forward => {
                        self.abr.ends[peer as usize].destination.on_forward_rm(&rm);
                    }
                    Direction::Backward => {
                        self.abr.ends[peer as usize].source.on_backward_rm(self.k.now, &rm);
                    }
                }
                if self.k.trace.is_some() {
                    let event = if rm.dir == Direction::Forward { "frm_received" } else { "brm_received" };
                    self.trace_rm(peer, event, &rm, false);
                }
                self.abr_kick(peer);
            }
        }
    }

    /// Chooses the ends that send ahead ("Sending ahead" in the module
    /// docs): with event elision on and no packet capture, an end at a host
    /// whose CPU costs nothing (no CPU events), that sends into a pipelined
    /// adapter carrying its VC alone, whose link goes on to a port that
    /// takes its cells at their arrival events (not ahead of time), no
    /// UDP flow of which starts at the host, and which is not external
    /// (`sim/external.rs`).
    pub(super) fn start_abr_ahead(&mut self, elide: bool) {
        if !elide || self.net.capture().is_some() {
            return;
        }
        for e in 0..self.abr.ends.len() {
            let EndAt::Host { host, .. } = self.abr.ends[e].at else { continue };
            let model = &self.hosts.get(host).model;
            let adapter = &self.net.ports()[self.abr.ends[e].port.idx()];
            let alone =
                adapter.mode() == crate::atm::PortMode::Pipelined && adapter.vcs.len() == 1 && !adapter.vcs[0].eager;
            // Traffic from outside is no schedule the end could look at.
            let udp = self.transport.sends_udp_from(host) || self.external.is_external(host);
            if model.serial_send() || model.queued_receive() || !alone || udp {
                continue;
            }
            let links = (0..self.net.ports().len())
                .filter(|&p| {
                    self.net.ports()[p].vcs.iter().any(|v| matches!(v.next, NextHop::Host { host: h, .. } if h == host))
                })
                .map(|p| PortId(p as u32))
                .collect();
            let conns = self.transport.conns_at(host);
            self.abr.ends[e].inputs = Some(Box::new(Inputs { links, conns }));
        }
    }

    /// The results of the ABR ends.
    pub(super) fn abr_results(&self) -> Vec<super::AbrResult> {
        let bps = |cells_per_s: f64| cells_per_s * CELL_BITS as f64;
        self.abr
            .ends
            .iter()
            .map(|e| {
                let (s, d) = (&e.source.stats, &e.destination.stats);
                super::AbrResult {
                    name: e.name.clone(),
                    host: match e.at {
                        EndAt::Host { host, .. } => self.hosts.name(host).to_owned(),
                        EndAt::Switch { switch, .. } => self.net.switch_name(switch).to_owned(),
                    },
                    acr_bps: bps(e.source.acr()),
                    mean_acr_bps: bps(e.mean_acr(self.k.end)),
                    last_er_bps: e.source.last_er().map(bps),
                    data_cells: s.data_cells,
                    frms_in_rate: s.frms_in_rate,
                    frms_out_of_rate: s.frms_out_of_rate,
                    brms_received: s.brms_received,
                    brms_sent: d.brms_sent,
                    brms_overwritten: d.overwritten,
                    adtf_cuts: s.adtf_cuts,
                    crm_cuts: s.crm_cuts,
                    cells_waiting: e.waiting_cells,
                    max_cells_waiting: e.max_waiting_cells,
                }
            })
            .collect()
    }
}

/// `x.ceil() as u64` (saturating, NaN to 0) without the call into libm that
/// `ceil` is on the x86-64 baseline (no SSE4.1): four times per ABR cell.
#[inline]
fn ceil_ps(x: f64) -> u64 {
    // `as` truncates toward zero and saturates: for x >= 0 that is the
    // floor, exact; one more if x has a fraction (x >= 2^53 has none).
    let t = x as u64;
    if (t as f64) < x { t.saturating_add(1) } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::source::AbrParams;

    /// An end whose source sends at `cells_per_s` (PCR = ICR).
    fn end(cells_per_s: f64) -> AbrEnd {
        let source = AbrSource::new(AbrParams::new(cells_per_s), SimTime::ZERO).unwrap();
        let at = EndAt::Host { host: HostId(0), vc: 0 };
        AbrEnd::new("e".into(), at, (PortId(0), VcLabel::new(0, 32), 0), source)
    }

    #[test]
    fn test_in_rate_slots_carry_their_fraction_of_a_picosecond() {
        // 300,000 cells/s: a slot every 3,333,333.33 ps. Sent on schedule
        // (each slot's event at its time rounded up), slot k is at k / 3 of
        // 10^7 ps: no rounding accumulates.
        let mut e = end(300_000.0);
        let mut now = SimTime::ZERO;
        for _ in 0..3_000 {
            let slot = e.next_slot_ps(now).unwrap();
            e.last_ps = Some(slot);
            now = SimTime::from_ps(e.next_slot_ps(now).unwrap().ceil() as u64);
        }
        // The 3,000th slot after slot 0: exactly 10^10 ps (rounded up each
        // time it would be 3,000 ps later).
        assert_eq!(now.as_ps(), 10_000_000_000);
        assert!((e.next_slot_ps(now).unwrap() - 1e10).abs() < 1e-3);
    }

    #[test]
    fn test_ceil_ps_is_ceil_as_u64() {
        let xs = [0.0, -0.0, -0.5, -3.0, 0.25, 1.0, 1.5, 2_831_197.38, 9_007_199_254_740_993.0, 1.8e19, 1.9e19, 1e300];
        for x in xs.into_iter().chain([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE]) {
            assert_eq!(ceil_ps(x), x.ceil() as u64, "{x}");
        }
        for k in 0..10_000u64 {
            let x = k as f64 * 3_333_333.333_333_333 + 0.125;
            assert_eq!(ceil_ps(x), x.ceil() as u64, "{x}");
        }
    }

    #[test]
    fn test_an_idle_end_sends_its_next_cell_now_not_in_the_past() {
        let mut e = end(300_000.0);
        e.last_ps = Some(1_000.5);
        // Long after the slot that was due: now.
        let now = SimTime::from_ps(50_000_000);
        assert_eq!(e.next_slot_ps(now), Some(50_000_000.0));
        // Within the picosecond of the due slot: the slot itself.
        let due: f64 = 1_000.5 + 1e12 / 300_000.0;
        assert_eq!(e.next_slot_ps(SimTime::from_ps(due.ceil() as u64)), Some(due));
    }
}
