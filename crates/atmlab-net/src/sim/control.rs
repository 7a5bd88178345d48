//! Switch control in the simulation: the ABR controller of each switch
//! output port that has one (any algorithm of
//! [`crate::abr::control`], through its [`SwitchControl`] trait), told of
//! what passes the port in true-time order.
//!
//! **What a controller is told.** Every cell offered to its port (an ABR
//! cell with a forward RM cell's CCR, CBR and VBR cells; it may mark the
//! ABR data cells), every backward RM cell of its VCs leaving the switch
//! the other way (it may lower the ER), and its deadline by an event
//! (`Event::ControlDeadline`). Nothing here knows an algorithm: results and
//! probes read a controller's readings by name.
//!
//! **Cells taken ahead of time.** A pipelined port fed by one link takes
//! each cell when it is put on that link (an eager hop, `sim/network/mod.rs`),
//! up to a link delay before it arrives; at a switch with controllers that
//! is allowed too, as each controller's [`Timing`] permits, because
//! everything a controller does with such a cell still happens in true
//! time:
//!
//! * its queueing and dropping are the port's own, decided from the port's
//!   state at the cell's arrival time (the port sees only this link's
//!   cells, in order, so that state is exact), and so is a marking
//!   controller's decision ([`Timing::PerCell`]: EFCI);
//! * a counting controller ([`Timing::Counted`]: ERICA) counts it later: the
//!   cell waits in the port's [`Deferred`] list, stamped with its arrival
//!   (time, and its link as the tie of arrivals at one instant) and whether
//!   the port took it, and whoever reads or changes that controller next (a
//!   backward RM cell's ER, its deadline, the end of the run) first feeds it
//!   every cell stamped before its own moment, in order
//!   ([`Simulation::settle`]): each interval then ends exactly where
//!   and with what it would have (a port that carries no ABR VC keeps only
//!   its CBR and VBR cells' arrival times: they are all its controller
//!   counts, and no ABR cell can end an interval between them);
//! * a backward RM cell's ER is written by an event at its true arrival
//!   (`Event::RmDue`), its RM entry held until then;
//! * a controller that changes cells and keeps state that others read
//!   ([`Timing::Exact`]) makes its port take no cell ahead of time
//!   (`Simulation::plan`).

use std::collections::VecDeque;

use super::Simulation;
use super::kernel::{APP, ARRIVAL, Event};
use super::settle::Reader;
use super::timer::{Firing, LazyTimer};
use crate::abr::control::{ControlConfig, Controller, PortInfo, SwitchControl, Timing};
use crate::abr::{Direction, RmCell};
use crate::atm::{Carries, Cell, NextHop, Offer, ServiceCategory};
use crate::ids::PortId;
use crate::pdu::PduId;
use atmlab_engine::{CELL_BITS, Duration, SimTime};

/// The controllers of a run's switch ports, and what the event elision
/// keeps for them (see the module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Controls {
    /// A port has a controller or a switch is a VS/VD: cells entering
    /// switches take the ABR path (`Simulation::enter_switch_abr`).
    switching: bool,
    /// Per port: its controller, if it has one (empty when no port has).
    ports: Vec<Option<PortControl>>,
    /// Per port: the cells taken ahead of time that its counting
    /// controller has still to count (empty when no port takes any).
    deferred: Vec<Option<Deferred>>,
    /// Per link: its backward RM cells taken ahead of time whose ER is due
    /// at their arrival (empty when no such link exists).
    rm_due: Vec<VecDeque<RmDue>>,
}

/// One port's controller and the event of its deadline.
#[derive(Clone, Debug)]
struct PortControl {
    ctl: Controller,
    deadline: LazyTimer,
}

impl Controls {
    /// No controllers yet; `switching` if cells entering switches take the
    /// ABR path.
    pub(super) fn new(switching: bool) -> Controls {
        Controls { switching, ..Controls::default() }
    }

    /// Whether cells entering switches take the slower path (a controller,
    /// a VS/VD switch or an input tap is there).
    #[inline]
    pub(super) fn switching(&self) -> bool {
        self.switching
    }

    /// Whether any port has a controller.
    #[inline]
    pub(super) fn any(&self) -> bool {
        !self.ports.is_empty()
    }

    /// Whether port `p` has a controller.
    #[inline]
    pub(super) fn has(&self, p: PortId) -> bool {
        matches!(self.ports.get(p.idx()), Some(Some(_)))
    }

    /// Whether port `p` counts the cells it takes ahead of time later.
    #[inline]
    pub(super) fn defers(&self, p: PortId) -> bool {
        matches!(self.deferred.get(p.idx()), Some(Some(_)))
    }

    /// The controller of port `p`, if it has one.
    pub(super) fn controller(&self, p: PortId) -> Option<&Controller> {
        self.ports.get(p.idx())?.as_ref().map(|c| &c.ctl)
    }

    /// Every port with a controller, and its controller.
    /// The reading `name` of port `p`'s controller, for a probe (the
    /// scenario layer probes only readings the port's controller has).
    pub(super) fn sample(&self, p: PortId, name: &str) -> super::probes::Sample {
        super::probes::Sample::Level(match self.controller(p).and_then(|c| c.reading(name)) {
            Some(Some(v)) => v,
            Some(None) => f64::MAX, // JSON has no infinity (a load factor with no capacity)
            None => 0.0,
        })
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (PortId, &Controller)> {
        self.ports.iter().enumerate().filter_map(|(i, c)| Some((PortId(i as u32), &c.as_ref()?.ctl)))
    }
}

/// What the counting controller of a port that takes cells ahead of time
/// still has to count of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counted {
    /// An ABR cell.
    Abr,
    /// A forward RM cell of an ABR VC: its CCR waits in [`Deferred::ccrs`].
    AbrFrm,
    /// A CBR or VBR cell.
    HighPriority,
    /// A UBR cell: nothing.
    Nothing,
}

/// A cell taken ahead of time, waiting for its arrival to be counted: 24
/// bytes, one per cell through the port (the port's queue before it, which
/// ERICA+ reads when a cell ends an interval, is the deferred list's own
/// [`Deferred::queue_at`] at its arrival, so it is not kept).
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// Its arrival at the switch.
    at: SimTime,
    /// With `taken`: when it reaches the far end of the port's link.
    departs: SimTime,
    /// Its VC's index at the port.
    vc: u16,
    what: Counted,
    /// The port took it (else it was dropped).
    taken: bool,
}

/// The true-time view of the counting controller of a port that takes its
/// cells ahead of time (see the module docs).
#[derive(Clone, Debug)]
struct Deferred {
    /// The link that feeds the port (its port index: the tie among
    /// arrivals at one instant).
    link: u32,
    /// Cells taken, in arrival order, not yet counted.
    pending: VecDeque<Pending>,
    /// The CCRs of the forward RM cells among them, in the same order
    /// (read when the cell is taken: by its arrival it may be gone).
    ccrs: VecDeque<f64>,
    /// Of the cells counted and taken, when those whose slot may not have
    /// started yet reach the far end: the port's queue as of the last cell
    /// counted.
    present: VecDeque<SimTime>,
    /// A cell's slot starts this long before it reaches the far end.
    transit: Duration,
    /// The port carries no ABR VC: its controller counts only
    /// higher-priority cells, and never reads the queue (there is no ABR
    /// queue), nor can an ABR cell end an interval between two of them.
    /// Their arrivals in [`Deferred::hp`] are then all it needs: no
    /// [`Pending`] record.
    hp_only: bool,
    /// With `hp_only`: the arrivals of the CBR and VBR cells taken, not yet
    /// counted, in order.
    hp: VecDeque<SimTime>,
}

impl Deferred {
    /// Whether a cell of this port arriving at `at` comes before a reader
    /// at `now`: one that is itself an arrival on link `tie`, or (`None`)
    /// any later event class at that instant.
    #[inline]
    fn before(&self, at: SimTime, now: SimTime, tie: Option<u32>) -> bool {
        at < now || (at == now && tie.is_none_or(|l| self.link < l))
    }

    /// The port's queue at `now` (every cell up to `now` counted): those
    /// counted whose slot starts at or after `now`.
    fn queue_at(&mut self, now: SimTime) -> u32 {
        let left = now.saturating_add(self.transit);
        while self.present.front().is_some_and(|&t| t < left) {
            self.present.pop_front();
        }
        self.present.len() as u32
    }
}

/// A backward RM cell taken ahead of time whose ER is written when it
/// arrives.
#[derive(Clone, Copy, Debug)]
struct RmDue {
    at: SimTime,
    /// The port whose controller writes the ER, and the VC's index there.
    port: PortId,
    vc: u16,
    id: PduId,
}

impl Simulation {
    /// A cell is offered to port `p` at `at`: the port's controller counts
    /// it, and may mark it.
    #[inline]
    pub(super) fn control_on_offer(&mut self, p: PortId, at: SimTime, mut cell: Cell) -> Cell {
        let port = self.net.port_mut(p);
        let category = port.vcs[cell.vc() as usize].category;
        let Some(Some(c)) = self.control.ports.get_mut(p.idx()) else { return cell };
        match category {
            ServiceCategory::Abr => {
                let vc = usize::from(cell.vc());
                if c.ctl.marks()
                    && cell.pti().is_user_data()
                    && c.ctl.mark(at, vc, port.category_queued_at(ServiceCategory::Abr, at))
                {
                    cell = cell.with_pti(cell.pti().with_efci());
                }
                let ccr = forward_ccr(&self.tables.rms, &cell);
                if c.ctl.abr_cell(at, vc, ccr, || port.category_queued_at(ServiceCategory::Abr, at)) {
                    if let Some((t, g)) = c.deadline.set(c.ctl.deadline()) {
                        self.k.queue.push(t, APP, Event::ControlDeadline(p, g));
                    }
                    if let Some(t) = self.k.trace.as_deref_mut() {
                        t.control(at, p.0, &c.ctl.readings());
                    }
                }
            }
            ServiceCategory::Cbr | ServiceCategory::Vbr => c.ctl.high_priority_cells(at, 1),
            ServiceCategory::Ubr => {}
        }
        cell
    }

    /// A backward RM cell leaves a switch by port `p` (its VC at index
    /// `vc` there), arriving at `at` on link `link`: the controller of the
    /// VC's opposite port at that switch may lower its ER.
    #[inline]
    pub(super) fn control_on_backward_rm(&mut self, p: PortId, vc: u16, at: SimTime, id: PduId, link: PortId) {
        let Some((f, fvc)) = self.net.port(p).vcs[vc as usize].feedback else { return };
        self.write_er(f, fvc, at, id, link);
    }

    /// Port `f`'s controller (if it has one) writes the ER of its VC `fvc`
    /// into the backward RM cell `id`, which arrived at `at` on link `link`.
    fn write_er(&mut self, f: PortId, fvc: u16, at: SimTime, id: PduId, link: PortId) {
        self.settle(at, Some(link.0), Reader::Controller(f));
        if let Some(Some(c)) = self.control.ports.get_mut(f.idx())
            && let Some(rm) = self.tables.rms.get_mut(id)
            && rm.payload.dir == Direction::Backward
        {
            c.ctl.backward_rm(at, usize::from(fvc), &mut rm.payload);
        }
    }

    /// [`control_on_backward_rm`](Self::control_on_backward_rm) for an RM
    /// cell taken ahead of time: the ER is written by an `RmDue` event at
    /// its arrival.
    pub(super) fn defer_backward_rm(&mut self, p: PortId, vc: u16, at: SimTime, id: PduId, link: PortId) {
        let Some((f, fvc)) = self.net.port(p).vcs[vc as usize].feedback else { return };
        let writes = self.control.controller(f).is_some_and(|c| c.writes_backward_rm());
        if !writes || self.tables.rms.get(id).is_none_or(|rm| rm.payload.dir != Direction::Backward) {
            return;
        }
        // The cell may be dropped or delivered before its arrival here;
        // its fields must live (and its id stay its own) until then.
        self.tables.rms.hold(id);
        let due = &mut self.control.rm_due[link.idx()];
        due.push_back(RmDue { at, port: f, vc: fvc, id });
        if due.len() == 1 {
            self.k.queue.push_keyed(at, ARRIVAL, u64::from(link.0), Event::RmDue(link));
        }
    }

    /// A backward RM cell taken ahead of time arrives on link `link`: its
    /// ER is written now.
    pub(super) fn on_rm_due(&mut self, link: PortId) {
        let due = &mut self.control.rm_due[link.idx()];
        let d = due.pop_front().expect("an RmDue event has its cell");
        if let Some(next) = due.front() {
            self.k.queue.push_keyed(next.at, ARRIVAL, u64::from(link.0), Event::RmDue(link));
        }
        debug_assert_eq!(d.at, self.k.now);
        self.write_er(d.port, d.vc, d.at, d.id, link);
        self.tables.rms.settle_cell(d.id);
    }

    /// Offers a cell taken ahead of time to port `p`, which it reaches at
    /// `at`: queued or dropped now, counted by the port's controller later.
    /// Always inlined into its one caller, the eager hop (out of line, as
    /// LLVM chose once `put_on_link` grew, the 97-0177 runs took some 2 %
    /// more instructions).
    #[inline(always)]
    pub(super) fn offer_deferred(&mut self, p: PortId, at: SimTime, cell: Cell) {
        let port = self.net.port_mut(p);
        let category = port.vcs[cell.vc() as usize].category;
        let deferred = self.control.deferred[p.idx()].as_mut().expect("checked by the caller");
        let offer = if deferred.hp_only {
            if matches!(category, ServiceCategory::Cbr | ServiceCategory::Vbr) {
                deferred.hp.push_back(at);
            }
            port.offer(at, cell)
        } else {
            let what = match category {
                ServiceCategory::Abr => match forward_ccr(&self.tables.rms, &cell) {
                    Some(ccr) => {
                        deferred.ccrs.push_back(ccr);
                        Counted::AbrFrm
                    }
                    None => Counted::Abr,
                },
                ServiceCategory::Cbr | ServiceCategory::Vbr => Counted::HighPriority,
                ServiceCategory::Ubr => Counted::Nothing,
            };
            let offer = port.offer(at, cell);
            let (departs, taken) = match offer {
                Offer::Departs { arrival, .. } => (arrival, true),
                _ => (SimTime::ZERO, false),
            };
            deferred.pending.push_back(Pending { at, departs, vc: cell.vc(), what, taken });
            offer
        };
        match offer {
            Offer::Departs { arrival, cell } => self.put_on_link(p, arrival, cell),
            Offer::Dropped(why) => {
                self.lose_cell(p, cell, super::network::drop_reason(why));
            }
            Offer::Queued { .. } => unreachable!("only pipelined ports take cells ahead of time"),
        }
    }

    /// Port `p`'s controller counts the cells the port took ahead of time
    /// that arrive before a reader at `now` (an arrival on link `tie`, or
    /// with `None` any later class of event), in their order, ending
    /// intervals where they end. A step of [`settle`](Self::settle).
    #[inline]
    pub(super) fn count_deferred(&mut self, p: PortId, now: SimTime, tie: Option<u32>) {
        let Some(Some(deferred)) = self.control.deferred.get_mut(p.idx()) else { return };
        let Some(Some(c)) = self.control.ports.get_mut(p.idx()) else {
            unreachable!("only ports with a counting controller count cells later")
        };
        if deferred.hp_only {
            let (mut n, mut last) = (0, now);
            while let Some(&at) = deferred.hp.front()
                && deferred.before(at, now, tie)
            {
                deferred.hp.pop_front();
                (n, last) = (n + 1, at);
            }
            if n > 0 {
                c.ctl.high_priority_cells(last, n);
            }
            return;
        }
        while let Some(&cell) = deferred.pending.front()
            && deferred.before(cell.at, now, tie)
        {
            deferred.pending.pop_front();
            // The port's queue when the cell arrived, before it (later
            // readers come no earlier: the cells gone by then are
            // forgotten, so the list is bounded by the port's queue).
            let queue_before = deferred.queue_at(cell.at);
            if cell.taken {
                deferred.present.push_back(cell.departs);
            }
            let ccr = match cell.what {
                Counted::AbrFrm => Some(deferred.ccrs.pop_front().expect("an FRM's CCR waits with it")),
                _ => None,
            };
            match cell.what {
                Counted::Abr | Counted::AbrFrm => {
                    if c.ctl.abr_cell(cell.at, usize::from(cell.vc), ccr, || queue_before)
                        && let Some((t, g)) = c.deadline.set(c.ctl.deadline())
                    {
                        // (No trace record: a traced run takes no cell ahead of time.)
                        self.k.queue.push(t, APP, Event::ControlDeadline(p, g));
                    }
                }
                Counted::HighPriority => c.ctl.high_priority_cells(cell.at, 1),
                Counted::Nothing => {}
            }
        }
    }

    /// The ports that have a counting controller and take cells ahead of
    /// time, and the links whose backward RM cells get their ER at an
    /// event, once the event plan has chosen the eager hops.
    pub(super) fn start_deferred(&mut self) {
        if !self.control.any() {
            return;
        }
        let mut any = false;
        let mut deferred = vec![None; self.net.ports().len()];
        for (u, port) in self.net.ports().iter().enumerate() {
            for vc in port.vcs.iter().filter(|vc| vc.eager) {
                any = true;
                let NextHop::Port { port: q, .. } = vc.next else { continue };
                if self.control.controller(q).is_some_and(|c| c.timing() == Timing::Counted) {
                    deferred[q.idx()] = Some(Deferred {
                        link: u as u32,
                        pending: VecDeque::new(),
                        ccrs: VecDeque::new(),
                        present: VecDeque::new(),
                        transit: self.net.port(q).transit(),
                        hp_only: !self.net.port(q).carries_category(ServiceCategory::Abr),
                        hp: VecDeque::new(),
                    });
                }
            }
        }
        if any {
            self.control.deferred = deferred;
            self.control.rm_due = vec![VecDeque::new(); self.net.ports().len()];
        }
    }

    /// Port `p`'s controller reached its deadline.
    pub(super) fn on_control_deadline(&mut self, p: PortId, generation: u32) {
        let now = self.k.now;
        self.settle(now, None, Reader::ControlDeadline(p));
        let queue = match self.control.deferred.get_mut(p.idx()) {
            Some(Some(d)) if self.net.port(p).carries_category(ServiceCategory::Abr) => d.queue_at(now),
            Some(Some(_)) => 0,
            _ => self.net.port_mut(p).category_queued_at(ServiceCategory::Abr, now),
        };
        let Some(Some(c)) = self.control.ports.get_mut(p.idx()) else { return };
        match c.deadline.fire(now, generation) {
            Firing::Stale => {}
            Firing::Rearm(t, g) => self.k.queue.push(t, APP, Event::ControlDeadline(p, g)),
            Firing::Due => {
                c.ctl.deadline_reached(now, queue);
                if let Some((t, g)) = c.deadline.set(c.ctl.deadline()) {
                    self.k.queue.push(t, APP, Event::ControlDeadline(p, g));
                }
                if let Some(t) = self.k.trace.as_deref_mut() {
                    t.control(now, p.0, &c.ctl.readings());
                }
            }
        }
    }

    /// The controllers of the ports configured with one, made once the
    /// ports' VCs are known; their first deadlines are scheduled.
    pub(super) fn start_control(&mut self, configs: Vec<(PortId, ControlConfig)>) {
        if configs.is_empty() {
            return; // no controllers: the cell path skips switch control at no cost
        }
        self.control.ports = vec![None; self.net.ports().len()];
        for (p, config) in configs {
            let port = &self.net.port(p);
            let info = PortInfo { cell_rate: port.rate.bps() as f64 / CELL_BITS as f64, vcs: port.vcs.len() };
            let ctl = config.build(info, SimTime::ZERO); // checked by NetworkBuilder::set_abr_control
            let mut deadline = LazyTimer::default();
            if let Some((t, g)) = deadline.set(ctl.deadline()) {
                self.k.queue.push(t, APP, Event::ControlDeadline(p, g));
            }
            self.control.ports[p.idx()] = Some(PortControl { ctl, deadline });
        }
    }

    /// The results of the ports' controllers: each algorithm's own
    /// readings.
    pub(super) fn control_results(&self) -> Vec<super::AbrPortResult> {
        self.control
            .iter()
            .map(|(p, ctl)| super::AbrPortResult {
                port: self.net.port(p).name.clone(),
                algorithm: ctl.algorithm().name(),
                readings: super::results::Readings(ctl.readings()),
            })
            .collect()
    }
}

/// The CCR of a forward RM cell, which a controller may record for the VC
/// (ERICA's FRM handler, docs/models/abr.md).
fn forward_ccr(rms: &crate::pdu::PduTable<RmCell>, cell: &Cell) -> Option<f64> {
    match cell.carries() {
        Carries::Rm(id) => {
            let rm = rms.get(id).expect("a queued RM cell's fields are live").payload;
            (rm.dir == Direction::Forward).then_some(rm.ccr)
        }
        Carries::Frame(_) | Carries::Nothing => None,
    }
}
