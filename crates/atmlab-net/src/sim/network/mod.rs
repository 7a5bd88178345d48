//! Cells between ports: a port's slot, a cell put on a link, its arrival at
//! the far end, usage parameter control where it enters a switch, and the
//! output port that takes it (see `atm/port.rs` for the two port modes and
//! the eager hops that skip arrival events).

mod pull;

use super::Simulation;
use super::kernel::{ARRIVAL, Event, SLOT};
use super::probes::{PortQuantity, Sample};
use super::settle::Reader;
use crate::atm::{ArrivalRun, Carries, Cell, DepartureRun, NextHop, Offer, Port, Pti, ServiceCategory, VcLabel};
use crate::ids::PortId;
use crate::pdu::PduId;
use atmlab_engine::SimTime;

/// The network: output ports (one per direction of each link) with their
/// links, switches, the policers at switch inputs, the ports that pull
/// their arrivals and the packet capture of tapped links.
pub(super) struct Network {
    ports: Vec<Port>,
    /// Per port: whether a switch owns it (else a host: its adapter).
    port_is_switch: Vec<bool>,
    switches: Vec<crate::atm::Switch>,
    upcs: Vec<super::build::Upc>,
    /// The ports that pull their arrivals (`pull.rs`).
    pulls: Vec<pull::Pull>,
    /// Per link: the pull that takes its cells, or `pull::NOT_PULLED`
    /// (empty when no port pulls).
    pulled_by: Vec<u32>,
    /// The packet capture of the tapped links, if any (`capture.rs`).
    capture: Option<Box<super::capture::Capture>>,
    /// Scratch for `offer_frame`: when each cell of the frame a host's
    /// adapter takes reaches the far end (empty between calls).
    frame_arrivals: Vec<SimTime>,
    /// The ports whose wake-ups wait for frame ends (`Port::set_frame_reach`):
    /// a probe runs their slots first (`settle.rs`).
    frame_wake: Vec<PortId>,
    /// Scratch for a port holding runs (`Port::advance_runs`): its
    /// departures and its drops (empty between calls).
    held_out: Vec<crate::atm::DepartureRun>,
    held_lost: Vec<(Cell, u64)>,
    /// Per port holding runs: the links that hand their cells over to it
    /// (`PortVc::hands_over`); empty for every other port.
    handing: Vec<Vec<PortId>>,
}

/// The cells of every port and link, for the conservation check.
pub(super) struct LinkTotals {
    pub(super) dropped: u64,
    pub(super) queued: u64,
    pub(super) on_links: u64,
    pub(super) sent: u64,
    pub(super) lost: u64,
}

impl Network {
    pub(super) fn new(
        ports: Vec<Port>,
        port_is_switch: Vec<bool>,
        switches: Vec<crate::atm::Switch>,
        upcs: Vec<super::build::Upc>,
        capture: Option<Box<super::capture::Capture>>,
    ) -> Network {
        let frame_wake =
            ports.iter().enumerate().filter(|(_, p)| p.has_frame_wake()).map(|(i, _)| PortId(i as u32)).collect();
        let mut handing = vec![Vec::new(); ports.len()];
        for (l, link) in ports.iter().enumerate() {
            if let Some(NextHop::Port { port: q, .. }) = link.vcs.iter().find(|vc| vc.hands_over).map(|vc| vc.next) {
                handing[q.idx()].push(PortId(l as u32));
            }
        }
        Network {
            frame_wake,
            ports,
            port_is_switch,
            switches,
            upcs,
            pulls: Vec::new(),
            pulled_by: Vec::new(),
            capture,
            frame_arrivals: Vec::new(),
            held_out: Vec::new(),
            held_lost: Vec::new(),
            handing,
        }
    }

    /// The ports whose wake-ups wait for frame ends.
    pub(super) fn frame_wake_ports(&self) -> &[PortId] {
        &self.frame_wake
    }

    /// Every port, by its [`PortId`].
    #[inline]
    pub(super) fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// Every port, to change.
    #[inline]
    pub(super) fn ports_mut(&mut self) -> &mut [Port] {
        &mut self.ports
    }

    /// Port `p`.
    #[inline]
    pub(super) fn port(&self, p: PortId) -> &Port {
        &self.ports[p.idx()]
    }

    /// Port `p`, to change.
    #[inline]
    pub(super) fn port_mut(&mut self, p: PortId) -> &mut Port {
        &mut self.ports[p.idx()]
    }

    /// Every switch.
    pub(super) fn switches(&self) -> &[crate::atm::Switch] {
        &self.switches
    }

    /// Switch `s`'s name.
    pub(super) fn switch_name(&self, s: crate::ids::SwitchId) -> &str {
        &self.switches[s.idx()].name
    }

    /// The packet capture, if any link is tapped.
    #[inline]
    pub(super) fn capture(&self) -> Option<&super::capture::Capture> {
        self.capture.as_deref()
    }

    /// The packet capture, to change.
    #[inline]
    pub(super) fn capture_mut(&mut self) -> Option<&mut super::capture::Capture> {
        self.capture.as_deref_mut()
    }

    /// Port `p`'s name.
    pub(super) fn port_name(&self, p: PortId) -> &str {
        &self.ports[p.idx()].name
    }

    /// Port `p`'s name and its link's rate.
    pub(super) fn link(&self, p: PortId) -> (&str, atmlab_engine::BitRate) {
        let port = &self.ports[p.idx()];
        (&port.name, port.rate)
    }

    /// Cells the policers discarded.
    pub(super) fn policed(&self) -> u64 {
        self.upcs.iter().map(|u| u.policer.stats.discarded).sum()
    }

    /// Checks that every port's cells offered = sent + dropped + queued, and
    /// totals them over ports and links.
    pub(super) fn conservation(&self) -> Result<LinkTotals, super::SimulationError> {
        let mut t = LinkTotals { dropped: 0, queued: 0, on_links: 0, sent: 0, lost: 0 };
        for p in &self.ports {
            let s = &p.stats;
            let d = p.dropped();
            let q = u64::from(p.queued());
            if s.cells_in != s.cells_out + d + q {
                return Err(super::SimulationError::Conservation(format!(
                    "port {}: {} cells offered != {} sent + {} dropped + {} queued",
                    p.name, s.cells_in, s.cells_out, d, q
                )));
            }
            t.dropped += d;
            t.queued += q;
            t.on_links += p.in_flight() as u64;
            t.sent += s.cells_out;
            t.lost += s.lost_on_link;
        }
        Ok(t)
    }

    /// Each port's results for a run that ended at `end`.
    pub(super) fn port_results(&self, end: SimTime) -> Vec<super::PortResult> {
        self.ports
            .iter()
            .zip(&self.port_is_switch)
            .map(|(p, &sw)| {
                let st = &p.stats;
                super::PortResult {
                    name: p.name.clone(),
                    kind: if sw { "switch" } else { "host" },
                    rate_bps: p.rate.bps(),
                    cells_in: st.cells_in,
                    cells_out: st.cells_out,
                    dropped: p.dropped(),
                    dropped_overflow: st.dropped_overflow,
                    dropped_frame: st.dropped_frame,
                    dropped_clp: st.dropped_clp,
                    lost_on_link: st.lost_on_link,
                    max_queue: p.max_queue(),
                    mean_queue: p.mean_queue(end),
                    utilization: match p.slots_before(end) {
                        0 => 0.0,
                        slots => st.cells_out as f64 / slots as f64,
                    },
                    categories: crate::atm::ServiceCategory::ALL
                        .iter()
                        .zip(st.per_category)
                        .filter(|(_, c)| c.cells_in > 0)
                        .map(|(cat, c)| {
                            let (max_queue, mean_queue) = p.category_queue(*cat, end);
                            (
                                cat.name(),
                                super::CategoryResult {
                                    cells_in: c.cells_in,
                                    dropped: c.dropped,
                                    max_queue,
                                    mean_queue,
                                },
                            )
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// Each policer's counters.
    pub(super) fn upc_results(&self) -> Vec<super::UpcResult> {
        self.upcs
            .iter()
            .map(|u| super::UpcResult {
                vc: u.vc.clone(),
                at: u.at.clone(),
                conformance: u.policer.contract().conformance.name(),
                cells: u.policer.stats.cells,
                tagged: u.policer.stats.tagged,
                discarded: u.policer.stats.discarded,
            })
            .collect()
    }

    /// Cells in port queues and on links.
    pub(super) fn held_cells(&self) -> u64 {
        self.ports.iter().map(|p| p.held_cells()).sum()
    }

    /// Cell entries allocated for port queues, links and frame ends.
    pub(super) fn cell_capacity(&self) -> u64 {
        self.ports.iter().map(|p| p.cell_capacity()).sum()
    }

    /// What each port holds, for the memory guard.
    pub(super) fn tally(&self, tally: &mut super::guard::Tally) {
        for p in &self.ports {
            tally.add(p.held_memory(), || format!("port {} (its queue and link)", p.name));
        }
    }

    /// Quantity `q` of port `p` at `now`, for a probe. Probes come after
    /// slots at an instant: a cell whose slot starts now has left the queue.
    pub(super) fn sample_port(&mut self, p: PortId, q: PortQuantity, now: SimTime) -> Sample {
        let port = &mut self.ports[p.idx()];
        match q {
            PortQuantity::Reading(_) => unreachable!("a controller's reading is the controller's to give"),
            PortQuantity::CategoryQueue(cat) => {
                Sample::Level(f64::from(port.category_queued_at(cat, now).saturating_sub(port.starting_at(now))))
            }
            PortQuantity::Queue => Sample::Level(f64::from(port.queued_at(now) - port.starting_at(now))),
            PortQuantity::Drops => Sample::Count(port.dropped()),
            PortQuantity::Utilization => Sample::Utilization { sent: port.sent_by(now), slots: port.slots_before(now) },
        }
    }
}

impl Simulation {
    #[inline]
    pub(super) fn on_port_slot(&mut self, p: PortId) {
        if self.net.ports[p.idx()].is_lazy() {
            // A wake-up: the slots due by now run (after the cells that
            // arrive by now, if ports pull them), and the next wake-up is
            // set if the port is still busy. (One that a sooner wake-up
            // replaced does nothing.)
            if !self.net.ports[p.idx()].wake_is(self.k.now) {
                return;
            }
            self.settle(self.k.now, None, Reader::Wake(p));
            if let Some(w) = self.net.ports[p.idx()].arm_wake() {
                self.k.queue.push(w, SLOT, Event::PortSlot(p));
            }
            return;
        }
        let tx = self.net.ports[p.idx()].transmit(self.k.now);
        if let Some(s) = tx.next_slot {
            self.k.queue.push(s, SLOT, Event::PortSlot(p));
        }
        self.put_on_link(p, tx.arrival, tx.cell);
    }

    /// Runs the slots of port `p` (if it runs them late) that start before
    /// `t`, or at `t` too if `inclusive` (for a reader that comes after slot
    /// events at `t`): the port is then as it would be at `t` with an event
    /// per slot (`atm/port.rs`, "Slots run late").
    ///
    /// Always inlined: with the held port's branch added (cc79eff) LLVM
    /// stopped inlining it, and its calls cost 97-0177's SAT+SAT 3.8 % more
    /// instructions (`docs/benchmark.md`, session of 2026-12-02).
    #[inline(always)]
    pub(super) fn run_slots(&mut self, p: PortId, t: SimTime, inclusive: bool) {
        if self.net.ports[p.idx()].holds_runs() {
            self.run_held(p, t, inclusive);
            return;
        }
        while let Some(s) = self.net.ports[p.idx()].slot_due(t, inclusive) {
            // (A slot a cell passed through at its arrival holds sends
            // nothing: that cell is on the link.)
            if let Some(tx) = self.net.ports[p.idx()].send_slot(s) {
                self.put_on_link(p, tx.arrival, tx.cell);
            }
        }
    }

    /// [`run_slots`](Self::run_slots) for a port holding runs
    /// (`atm/port_runs.rs`): the model runs the slots; each departing cell
    /// goes onto the link as the port's slot would put it there, a VC's
    /// cells in order (each VC goes on to a port of its own: `plan`), and
    /// each dropped cell's frame is settled.
    #[inline(never)]
    fn run_held(&mut self, p: PortId, t: SimTime, inclusive: bool) {
        // A reader after the slots of its instant has them and the arrivals
        // at `t`; the end of the run (the one reader before them) has
        // neither.
        let ps = atmlab_engine::Duration::from_ps(1);
        let (before, arrived) =
            if inclusive { (t.saturating_add(ps), t) } else { (t, SimTime::from_ps(t.as_ps().saturating_sub(1))) };
        // The cells handed over that have arrived leave their links, each
        // a cell-hop as its arrival event would count it.
        for i in 0..self.net.handing[p.idx()].len() {
            let link = self.net.handing[p.idx()][i];
            self.k.counts.cell_hops += self.net.ports[link.idx()].take_handed_over(arrived);
        }
        let mut out = std::mem::take(&mut self.net.held_out);
        let mut lost = std::mem::take(&mut self.net.held_lost);
        self.net.ports[p.idx()].advance_runs(before, arrived, &mut out, &mut lost);
        for &(cell, n) in &lost {
            for _ in 0..n {
                self.settle_lost(cell);
            }
        }
        // Each run's slots walked one to the next (no division a cell).
        // What `put_on_link` asks of each cell is asked once a run: the
        // link loses nothing and no capture watches it (`plan`), so a
        // cell that arrives before the end goes through `pass_into_host`
        // where its VC passes into a host, as `put_on_link` would send it:
        // a run whose cells all arrive before the end (a frame's piece)
        // at once, `pass_piece_into_host`.
        debug_assert!(self.net.capture.is_none() && self.net.ports[p.idx()].is_lossless());
        let (grid, transit) = self.net.ports[p.idx()].held_slots();
        for d in &out {
            let vc = &self.net.ports[p.idx()].vcs[d.vc];
            let passes = vc.eager && vc.into_host;
            let next = vc.next;
            let mut slot = grid.position(d.first);
            if passes && d.cell.carries() != Carries::Nothing && self.arrives_in_run(&grid, &slot, d, transit) {
                self.pass_piece_into_host(next, &grid, slot, d, transit);
                continue;
            }
            for j in 0..d.count {
                let cell = if d.ends_frame && j + 1 == d.count { d.cell.ending_frame() } else { d.cell };
                let arrival = grid.boundary(&slot).saturating_add(transit);
                if passes && arrival < self.k.end {
                    self.k.counts.cell_hops += 1;
                    self.pass_into_host(next, arrival, cell);
                } else {
                    self.put_on_link(p, arrival, cell);
                }
                for _ in 0..d.step {
                    grid.advance(&mut slot);
                }
            }
        }
        out.clear();
        lost.clear();
        self.net.held_out = out;
        self.net.held_lost = lost;
    }

    /// Whether every cell of departure run `d`, whose first slot is `slot`,
    /// reaches the far end of its link before the end of the run (by a
    /// bound: slots at most `longest_gap` apart; a run near the end may be
    /// told no, and takes the way of one cell at a time).
    #[inline]
    fn arrives_in_run(
        &self,
        grid: &atmlab_engine::SlotGrid,
        slot: &atmlab_engine::SlotPos,
        d: &DepartureRun,
        transit: atmlab_engine::Duration,
    ) -> bool {
        let span = (d.count - 1).checked_mul(d.step).and_then(|n| n.checked_mul(grid.longest_gap().as_ps()));
        let last = span.and_then(|s| grid.boundary(slot).as_ps().checked_add(s)?.checked_add(transit.as_ps()));
        last.is_some_and(|t| t < self.k.end.as_ps())
    }

    /// The cells of departure run `d` (its first slot `slot` on the held
    /// port's `grid`) reach, each `transit` after its slot, a port that
    /// passes them into a host (`hop`), before the end of the run: what
    /// `pass_into_host` does for each in turn, the piece at once
    /// (`Port::offer_piece_into_host`: the host port's slots found without
    /// a division a cell, its counts once a piece).
    #[inline(never)]
    fn pass_piece_into_host(
        &mut self,
        hop: NextHop,
        grid: &atmlab_engine::SlotGrid,
        slot: atmlab_engine::SlotPos,
        d: &DepartureRun,
        transit: atmlab_engine::Duration,
    ) {
        let NextHop::Port { port: q, label, vc } = hop else { unreachable!("a switch hop leads to a port") };
        let data = d.cell.relabelled(label, vc);
        let last = if d.ends_frame { d.cell.ending_frame().relabelled(label, vc) } else { data };
        let from = crate::atm::PieceFrom { grid, first: slot, step: d.step, transit };
        let count = d.count;
        let taken = self.net.ports[q.idx()].offer_piece_into_host(count, from, data, last);
        self.k.counts.cell_hops += count;
        for i in 0..taken.dropped {
            let cell = if taken.last_dropped && i + 1 == taken.dropped { last } else { data };
            self.lose_cell(q, cell, drop_reason(crate::atm::DropReason::Overflow));
        }
        if let Some(t) = taken.due {
            self.link_head_due(q, t);
        }
    }

    /// `cell` reaches port `p`, which holds runs, at `at` by link `link`:
    /// a run of one on that link's grid, and the wake-up its frame end may
    /// ask for.
    #[inline(never)]
    fn offer_held(&mut self, p: PortId, at: SimTime, cell: Cell, link: PortId) {
        let run = self.net.ports[link.idx()].sent_run(at, cell);
        self.offer_run_to(p, cell.vc(), run);
    }

    /// Port `q`, which holds runs, takes `run` on its VC `vc`, and wakes
    /// when the run's frame end may ask it to.
    #[inline]
    fn offer_run_to(&mut self, q: PortId, vc: u16, run: ArrivalRun) {
        if let Some(w) = self.net.ports[q.idx()].offer_run(vc, run) {
            self.k.queue.push(w, SLOT, Event::PortSlot(q));
        }
    }

    /// A cell leaves port `p` and will reach the far end at `arrival`.
    ///
    /// If it goes on to a pipelined port fed by this link alone (`eager`),
    /// that port takes it now, at its arrival time: such a port sees only
    /// this link's cells, in order, so nothing can come between. Cells that
    /// would arrive after the end of the run stay on the link.
    #[inline]
    pub(super) fn put_on_link(&mut self, p: PortId, arrival: SimTime, cell: Cell) {
        if self.net.ports[p.idx()].loses_cell(&cell) {
            self.lose_cell(p, cell, "link");
            return;
        }
        if self.net.capture.is_some() {
            self.capture_cell(p, arrival, &cell);
        }
        let port = &self.net.ports[p.idx()];
        let vc = &port.vcs[cell.vc() as usize];
        if vc.eager && arrival < self.k.end {
            let (next, upc) = (vc.next, vc.upc);
            self.k.counts.cell_hops += 1;
            if vc.into_host {
                self.pass_into_host(next, arrival, cell);
            } else {
                self.enter_switch::<true>(next, upc, arrival, cell, p);
            }
        } else if port.is_to_host()
            && cell.carries() == Carries::Nothing
            && arrival < self.k.end
            && vc.category != ServiceCategory::Abr
        {
            // A cell source's cell only adds to its sink's count: it needs
            // no event, and is not kept on the link until a frame end that
            // never comes (it would pile up in memory for the whole run).
            // A persistent ABR source's cells go in order with its RM cells,
            // which come every Nrm cells: the destination notes their EFCI.
            let NextHop::Host { host, vc } = vc.next else { unreachable!("a link into a host leads to it") };
            self.k.counts.cell_hops += 1;
            self.raw_received(host, vc, Some(arrival));
        } else if vc.hands_over {
            self.hand_over(p, arrival, cell);
        } else if let Some(t) = self.net.ports[p.idx()].put_on_link(arrival, cell) {
            self.link_head_due(p, t);
        }
    }

    /// `cell` goes on link `p`, whose cells all go on to a port that holds
    /// runs (`PortVc::hands_over`), and reaches its far end at `arrival`:
    /// that port has it now, as a run of one (its cells arrive in order,
    /// and it reads none before their arrivals: `atm/port_runs.rs`); the
    /// link keeps it, without an event, until that port takes it off.
    #[inline(never)]
    fn hand_over(&mut self, p: PortId, arrival: SimTime, cell: Cell) {
        let link = &mut self.net.ports[p.idx()];
        let NextHop::Port { port: q, label, vc } = link.vcs[cell.vc() as usize].next else {
            unreachable!("a link hands its cells over to a port")
        };
        if arrival == SimTime::MAX {
            // Past 2^64 ps: it never arrives (the link keeps it).
            link.keep_never(1);
            return;
        }
        let cell = cell.relabelled(label, vc);
        let run = link.sent_run(arrival, cell);
        link.keep_handed(run);
        self.offer_run_to(q, vc, run);
    }

    /// The `taken` cells of a frame that link `p` took in one call from its
    /// slot `first` on, `cell(i)` the `i`-th, go to the port holding runs
    /// that the link hands its cells over to, as one run (see
    /// [`hand_over`](Self::hand_over)).
    #[inline(never)]
    fn hand_frame_over(&mut self, p: PortId, vc: u16, first: u64, taken: u32, cell: Cell, ends: bool) {
        let link = &mut self.net.ports[p.idx()];
        let NextHop::Port { port: q, label, vc: v } = link.vcs[usize::from(vc)].next else {
            unreachable!("a link hands its cells over to a port")
        };
        // Cells that would arrive only after 2^64 ps never do: the link
        // keeps them.
        let run = link.frame_run(first, taken, cell.relabelled(label, v), ends);
        let Some(run) = run else {
            link.keep_never(u64::from(taken));
            return;
        };
        link.keep_handed(run);
        self.offer_run_to(q, v, run);
    }

    /// A cell reaches, by an eager hop, a port that only passes cells on
    /// into a host (`PortVc::into_host`): what `enter_switch` and
    /// `offer_to_port`, then `put_on_link` from that port give, without
    /// their checks. No policer, ABR switching or capture acts on it where
    /// the hop ends; the port is pipelined (no slots to run) and drops by
    /// tail drop alone; its link loses nothing. A cell source's cell takes
    /// the general way onto the link (its sink only counts it).
    ///
    /// Always inlined: called from a held port's departures too (cc79eff),
    /// LLVM made it a call from `put_on_link`, 4-5 % more instructions in
    /// the 97-0424 and N-source runs (`docs/benchmark.md`, session of
    /// 2026-12-02).
    #[inline(always)]
    fn pass_into_host(&mut self, hop: NextHop, at: SimTime, cell: Cell) {
        let NextHop::Port { port: q, label, vc } = hop else { unreachable!("a switch hop leads to a port") };
        let cell = cell.relabelled(label, vc);
        match self.net.ports[q.idx()].offer_pipelined(at, cell) {
            Some(arrival) if cell.carries() != Carries::Nothing => {
                if let Some(t) = self.net.ports[q.idx()].put_on_link(arrival, cell) {
                    self.link_head_due(q, t);
                }
            }
            Some(arrival) => self.put_on_link(q, arrival, cell),
            None => self.lose_cell(q, cell, drop_reason(crate::atm::DropReason::Overflow)),
        }
    }

    /// Link `p`, empty until now, has a head cell arriving at `t`: its
    /// arrival event, or its pull's (`pull.rs`).
    #[inline]
    fn link_head_due(&mut self, p: PortId, t: SimTime) {
        match self.net.pulled_by.get(p.idx()) {
            Some(&k) if k != pull::NOT_PULLED => self.pull_head(k, p, t),
            _ => self.k.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p)),
        }
    }

    #[inline]
    pub(super) fn on_link_arrival(&mut self, p: PortId) {
        if self.net.ports[p.idx()].is_to_host() {
            // A frame end or an RM cell is due: take it with the cells before it.
            loop {
                let port = &mut self.net.ports[p.idx()];
                let (_, cell) = port.take_arrival();
                let NextHop::Host { host, vc } = port.vcs[cell.vc() as usize].next else {
                    unreachable!("a link into a host carries host-bound cells")
                };
                if cell.needs_host_event() {
                    if cell.pti().is_rm() {
                        port.took_rm();
                    }
                    self.k.counts.cell_hops += 1;
                    self.host_receive(host, vc, cell);
                    break;
                }
                // A frame's cells before its end are alike: taken as one.
                let cells = 1 + port.take_equal(cell);
                self.k.counts.cell_hops += u64::from(cells);
                self.host_receive_run(host, vc, cell, cells);
            }
            if let Some(t) = self.net.ports[p.idx()].next_due() {
                self.k.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
            }
            return;
        }
        // Into a switch: the link's cells in turn while the next is the
        // loop's next event (`run_ahead`: most of a frame, where one source
        // sends at a time). Nothing the arrival does takes the head off
        // this link; a cell it puts on the link finds it not empty and
        // schedules nothing.
        loop {
            let port = &mut self.net.ports[p.idx()];
            let (_, cell) = port.take_arrival();
            let next = port.next_arrival();
            self.cell_arrives(p, self.k.now, cell);
            let Some(mut t) = next else { return };
            debug_assert_eq!(self.net.ports[p.idx()].next_arrival(), Some(t), "the link's head stayed");
            let port = &self.net.ports[p.idx()];
            if port.has_later_short()
                && !cell.needs_host_event()
                && port.next_is(cell)
                && port.vcs[cell.vc() as usize].later_short
            {
                let to = port.vcs[cell.vc() as usize].next;
                // The cells after it that are alike (a frame's later cells:
                // the same VC, payload type and PDU), each at its own time,
                // while each is the loop's next event: where `cell_arrives`
                // would take them, without its checks (made once here).
                while self.net.ports[p.idx()].next_is(cell) {
                    if !self.run_ahead(t, ARRIVAL, u64::from(p.0)) {
                        self.k.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
                        return;
                    }
                    let port = &mut self.net.ports[p.idx()];
                    port.take_arrival();
                    let next = port.next_arrival();
                    self.k.counts.cell_hops += 1;
                    self.later_cell_arrives(to, t, cell);
                    let Some(n) = next else { return };
                    t = n;
                }
            }
            if !self.run_ahead(t, ARRIVAL, u64::from(p.0)) {
                self.k.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
                return;
            }
        }
    }

    /// A frame's later cell alike to one that went `to` (by a VC whose
    /// `PortVc::later_short` is set) arrives at `at`: what
    /// `cell_arrives`, `enter_switch` and `offer_to_port` do, with the
    /// port's shorter offer for such a cell (`Port::offer_later`).
    #[inline]
    fn later_cell_arrives(&mut self, to: NextHop, at: SimTime, cell: Cell) {
        let NextHop::Port { port, label, vc } = to else { unreachable!("later cells go to a port") };
        let cell = cell.relabelled(label, vc);
        self.run_slots(port, at, false);
        let offer = self.net.ports[port.idx()].offer_later(at, cell);
        self.offered(port, cell, offer);
    }

    /// `cell`, taken off link `link`, reaches the far end at `at`: by its
    /// arrival event, or taken later by a port that pulls it (`pull.rs`),
    /// which must handle it exactly alike.
    #[inline]
    pub(super) fn cell_arrives(&mut self, link: PortId, at: SimTime, cell: Cell) {
        let vc = &self.net.ports[link.idx()].vcs[cell.vc() as usize];
        let (hop, upc) = (vc.next, vc.upc);
        self.k.counts.cell_hops += 1;
        match hop {
            NextHop::Port { .. } => self.enter_switch::<false>(hop, upc, at, cell, link),
            NextHop::Host { host, vc } => self.host_receive(host, vc, cell),
        }
    }

    /// A cell reaches a switch at `at` by link `link`: usage parameter
    /// control (if its VC is policed on this link), then relabelling and the
    /// output port. `EAGER`: the cell is taken when it is put on the link,
    /// ahead of `at` (see [`put_on_link`](Self::put_on_link)).
    ///
    /// Two copies, one for each kind of cell: each path's branches are its
    /// own (sharing them, the two kinds, which alternate at random, made
    /// each branch on `eager` a likely misprediction), and neither calls
    /// down another level for the ABR switching.
    #[inline]
    pub(super) fn enter_switch<const EAGER: bool>(
        &mut self,
        hop: NextHop,
        upc: u32,
        at: SimTime,
        mut cell: Cell,
        link: PortId,
    ) {
        let NextHop::Port { port, label, vc } = hop else { unreachable!("a switch hop leads to a port") };
        if upc != crate::atm::NO_UPC {
            match self.net.upcs[upc as usize].policer.police(at, cell.clp()) {
                crate::atm::Policed::Pass => {}
                crate::atm::Policed::Tag => cell = cell.with_clp(true),
                crate::atm::Policed::Discard => {
                    self.k.counts.policed += 1;
                    self.lose_cell(link, cell, "upc");
                    return;
                }
            }
        }
        let cell = cell.relabelled(label, vc);
        if !self.control.switching() {
            if self.net.ports[port.idx()].holds_runs() {
                self.offer_held(port, at, cell, link);
            } else {
                self.offer_to_port(port, at, cell);
            }
        } else {
            self.enter_switch_abr(port, at, cell, link, EAGER);
        }
    }

    /// The rest of [`enter_switch`](Self::enter_switch) in a run with ABR
    /// controllers, VS/VD switches or a capture of a port's input (`cell`
    /// relabelled for `port`): a backward RM cell gets its ER, the input
    /// tap writes the cell, a VS/VD switch takes the cell.
    ///
    /// A cell taken ahead of time (`eager`) is queued at once, but what the
    /// switch's controllers do with it happens in true time: a backward RM
    /// cell's ER is written by an event at its arrival, and the port's
    /// ERICA counts it when the controller is next read
    /// (`sim/abr.rs`, "Cells taken ahead of time").
    #[inline(always)]
    fn enter_switch_abr(&mut self, port: PortId, at: SimTime, cell: Cell, link: PortId, eager: bool) {
        if self.control.any() && cell.pti().is_rm() {
            if eager {
                self.defer_backward_rm(port, cell.vc(), at, cell.pdu(), link);
            } else {
                self.control_on_backward_rm(port, cell.vc(), at, cell.pdu(), link);
            }
        }
        if self.net.capture.is_some() {
            // A capture of the port's input (`capture.rs`): the cell as the
            // switch offers it, before the port may drop it.
            self.capture_input(port, at, &cell);
        }
        if let Some(e) = self.net.ports[port.idx()].vcs[cell.vc() as usize].vs {
            // A VS/VD switch: the loop of this segment ends here.
            self.vs_receive(e, cell);
            return;
        }
        if eager && self.control.defers(port) {
            self.offer_deferred(port, at, cell);
        } else {
            self.offer_at(port, at, cell);
        }
    }

    /// Offers `cell` to port `p` as arriving at `at` (now, or later for an
    /// eager hop). Only a port with an ABR controller takes the controlled
    /// path: a host's adapter or a switch port without one goes straight to
    /// the port (deciding by the run instead would send every ABR source's
    /// and video source's cell through the controlled path's checks).
    #[inline]
    pub(super) fn offer_at(&mut self, p: PortId, at: SimTime, cell: Cell) {
        if self.is_controlled(p) {
            self.offer_at_controlled(p, at, cell);
        } else {
            self.offer_to_port(p, at, cell);
        }
    }

    /// Whether port `p` has an ABR controller.
    #[inline]
    fn is_controlled(&self, p: PortId) -> bool {
        self.control.has(p)
    }

    /// Offers the `cells` cells of frame `pdu` on the VC `(label, vc)` of
    /// port `p`, all arriving now (a host's adapter taking a frame).
    ///
    /// The choice between the two paths of [`offer_at`](Self::offer_at) is
    /// made once, outside the loop: taken inside it, each cell was built on
    /// the stack for the controlled path's call and read back for the other
    /// across narrower stores, a store-forwarding stall per cell
    /// (`docs/benchmark.md`).
    #[inline]
    pub(super) fn offer_frame(&mut self, p: PortId, label: VcLabel, pdu: PduId, vc: u16, cells: u32) {
        let now = self.k.now;
        let (data, end) =
            (Cell::new(label, pdu, Pti::DATA, false, vc), Cell::new(label, pdu, Pti::DATA_EOF, false, vc));
        let cell = |i: u32| if i == cells { end } else { data };
        if self.is_controlled(p) {
            for i in 1..=cells {
                self.offer_at_controlled(p, now, cell(i));
            }
        } else if self.net.ports[p.idx()].takes_frames() {
            // A pipelined tail-drop adapter takes the frame at once, with
            // the state and the cells on the link that one offer per cell
            // gives (`Port::offer_frame`; with elision off no port is
            // pipelined, so the reference runs the loop below).
            let port = &mut self.net.ports[p.idx()];
            // Onto a plain link into a switch the cells go at once, as
            // `put_on_link` puts them one by one: no loss to draw, no
            // capture to write, no eager hop, no frame end to schedule.
            let taken = if port.is_lossless()
                && !port.is_to_host()
                && !port.vcs[usize::from(vc)].eager
                && self.net.capture.is_none()
            {
                let (taken, head, first) = port.offer_frame_onto_link(now, vc, cells, cell);
                if port.vcs[usize::from(vc)].hands_over {
                    if taken > 0 {
                        self.hand_frame_over(p, vc, first, taken, data, taken == cells);
                    }
                } else if let Some(t) = head {
                    self.link_head_due(p, t);
                }
                taken
            } else {
                let mut arrivals = std::mem::take(&mut self.net.frame_arrivals);
                let taken = port.offer_frame(now, vc, cells, &mut arrivals);
                for (i, &arrival) in (1..).zip(&arrivals) {
                    self.put_on_link(p, arrival, cell(i));
                }
                arrivals.clear();
                self.net.frame_arrivals = arrivals;
                taken
            };
            for i in taken + 1..=cells {
                self.lose_cell(p, cell(i), drop_reason(crate::atm::DropReason::Overflow));
            }
        } else {
            for i in 1..=cells {
                self.offer_to_port(p, now, cell(i));
            }
        }
    }

    /// [`offer_at`](Self::offer_at) at a port with an ABR controller. Apart,
    /// so that the path of other ports' cells is the port's alone: a cell
    /// coming from either of two branches is kept on the stack, and reading
    /// it back across the two stores stalls (`docs/benchmark.md`).
    ///
    /// The port's slots before `at` run first, once: the controller's count
    /// changes nothing they look at.
    #[inline(never)]
    fn offer_at_controlled(&mut self, p: PortId, at: SimTime, cell: Cell) {
        self.run_slots(p, at, false);
        let cell = self.control_on_offer(p, at, cell);
        self.offer_to_port_now(p, at, cell);
    }

    #[inline]
    fn offer_to_port(&mut self, p: PortId, at: SimTime, cell: Cell) {
        self.run_slots(p, at, false);
        self.offer_to_port_now(p, at, cell);
    }

    /// [`offer_to_port`](Self::offer_to_port) once the port's slots before
    /// `at` have run.
    #[inline(always)]
    fn offer_to_port_now(&mut self, p: PortId, at: SimTime, cell: Cell) {
        debug_assert!(self.net.ports[p.idx()].slot_due(at, false).is_none(), "the slots before the offer have run");
        let offer = self.net.ports[p.idx()].offer(at, cell);
        self.offered(p, cell, offer);
    }

    /// What port `p`'s answer to the offer of `cell` asks for: a wake-up or
    /// slot event, the cell onto the link, or the cell lost.
    #[inline(always)]
    fn offered(&mut self, p: PortId, cell: Cell, offer: Offer) {
        match offer {
            Offer::Queued { wake: Some(t) } => self.k.queue.push(t, SLOT, Event::PortSlot(p)),
            Offer::Queued { wake: None } => {}
            Offer::Departs { arrival, cell } => self.put_on_link(p, arrival, cell),
            Offer::Dropped(why) => self.lose_cell(p, cell, drop_reason(why)),
        }
    }

    /// The trace's record of a cell dropped at port `p` (or lost on its
    /// link, or discarded by the policer where the link ends). A traced
    /// run runs without event elision, so this happens at the drop's time.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_drop(&mut self, p: PortId, cell: Cell, reason: &'static str) {
        let now = self.k.now;
        let queue = self.net.ports[p.idx()].queued_at(now);
        let pdu = match cell.carries() {
            Carries::Frame(id) => Some(id.raw()),
            _ => None,
        };
        if let Some(t) = self.k.trace.as_deref_mut() {
            t.drop(now, p.0, cell.vc(), reason, queue, pdu);
        }
    }

    /// `cell` is lost at port `p`, on its link or where the link ends
    /// (`reason`, as the trace writes it): the trace's record if a trace is
    /// kept, then its PDU or RM record settled.
    #[inline]
    pub(super) fn lose_cell(&mut self, p: PortId, cell: Cell, reason: &'static str) {
        if self.k.trace.is_some() {
            self.trace_drop(p, cell, reason);
        }
        self.settle_lost(cell);
    }

    /// A cell was dropped or lost: settle its PDU or RM record (or count a
    /// cell source's).
    #[inline]
    pub(super) fn settle_lost(&mut self, cell: Cell) {
        match cell.carries() {
            Carries::Frame(id) => self.tables.pdus.settle_cell(id),
            Carries::Rm(id) => self.tables.rms.settle_cell(id),
            Carries::Nothing => self.k.counts.raw_lost += 1,
        }
    }
}

/// Why a port dropped a cell, as the trace writes it.
pub(super) fn drop_reason(why: crate::atm::DropReason) -> &'static str {
    match why {
        crate::atm::DropReason::Overflow => "overflow",
        crate::atm::DropReason::FrameDiscard => "frame",
        crate::atm::DropReason::Clp => "clp",
    }
}
