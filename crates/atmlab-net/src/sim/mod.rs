//! The simulation: one run of one fully specified network.
//!
//! A [`Simulation`] is a value that owns everything of its run: the clock,
//! the event queue, the ports, hosts, switches and connections, the PDU table
//! and the random streams. There is no global state, so any number of runs
//! can live in one process (and on different threads: `Simulation: Send`).
//!
//! ## Events and their order
//!
//! | event | class | meaning |
//! |---|---|---|
//! | `LinkArrival(p)` | 0 | the head cell of port `p`'s link reaches the far end |
//! | `RmDue(p)` | 0 | a backward RM cell taken ahead of time by the switch at the far end of port `p`'s link arrives there: its ER is written |
//! | `TcpStart`, `TcpStop`, `TcpTimer`, `UdpSend` | 1 | applications and TCP timers |
//! | `CellSource(g)` | 1 | cell-source group `g` sends its next cell (or batch) |
//! | `HostTx(h)`, `HostRx(h)` | 1 | host `h`'s sending or receiving CPU finishes a step |
//! | `AbrSend(e, g)` | 1 | ABR end `e`'s next in-rate slot |
//! | `AbrTrailing(e, g)` | 1 | ABR end `e`'s trailing FRM, if it is still idle |
//! | `AbrOutOfRate(e, g)` | 1 | ABR end `e`'s next out-of-rate RM cell (ACR below TCR) |
//! | `ControlDeadline(p, g)` | 1 | port `p`'s switch controller reaches its deadline (ERICA's averaging interval its time bound) |
//! | `PortSlot(p)` | 2 | port `p` starts sending a cell (or, if it runs its slots late, the slots due by now run) |
//! | `Pull(k)` | 2 | the `k`-th port that pulls its arrivals takes those due by now (`sim/network/pull.rs`) |
//! | `Probe(i)` | 3 | probe `i` takes a sample |
//!
//! At equal times lower classes run first: every cell that arrives at an
//! instant is queued, and every ACK that arrives is processed, before a port
//! picks the cell for a slot starting at that instant or a timer that would
//! fire at it is acted on. Simultaneous arrivals run in the order of their
//! link's port index (the order links are declared), whenever they were
//! scheduled; other simultaneous events run in the order they were scheduled.
//!
//! Only the head cell of each link and the next slot of each busy port are in
//! the event queue, and each TCP timer has at most one pending event, so the
//! queue stays small however many cells are in flight.

mod abr;
mod apps;
mod build;
mod capture;
mod control;
mod datagram;
mod external;
mod guard;
mod host;
mod kernel;
mod network;
mod probes;
mod results;
mod settle;
mod sources;
mod tables;
mod timer;
mod trace;
mod transport;

pub use abr::{AbrEnd, EndAt};
pub use apps::{Dist, TcpConn, UdpCbr, UdpStats, VcEnd};
pub use build::{
    BuildError, CbrParams, EfficiencyCapacity, LossModel, MAX_CLOCK_PPM, MAX_UDP_PAYLOAD, NetworkBuilder, NodeRef,
    OnOffParams, SlotPhase, Upc, VcHandle,
};
pub use capture::{BASE_PORT, Content, FrameMeta, LINKTYPE, SINK_PORT, TapCounts, encode, host_address};
pub use datagram::{Datagram, Endpoint, Payload};
pub use external::{Delivered, ExternalCounts, InjectError};
pub use guard::{DEFAULT_MAX_CELLS_HELD, Footprint};
pub use host::{Host, HostModel, HostStats, HostVc, Overflow};
pub use probes::{AbrQuantity, ConnQuantity, PortQuantity, ProbeKind, ProbeSpec, ProbeTarget};
pub use results::{
    AbrPortResult, AbrResult, CategoryResult, CellSourceResult, ConnectionResult, EfficiencyBasis, FrameCounts,
    HostResult, PortResult, Readings, RunResult, SeriesResult, SimulationError, UdpFlowResult, UpcResult,
};

pub use sources::{CellApp, CellSource, CellSourceStats, Intervals, OnOff, Pattern, Piecewise};
pub use trace::{TraceKind, TraceSpec};

use crate::abr::control::Timing;
use crate::atm::{NextHop, Port, ServiceCategory, Switch};
use crate::ids::{PortId, ProbeId};
use atmlab_engine::{BitRate, Duration, EventClass, SimTime};
use kernel::{Event, Kernel, PROBE};
use rand::RngExt;
use sources::SourceGroup;

/// The links (their ports' indices, ascending) that carry VCs on to each
/// port.
fn feeders(ports: &[Port]) -> Vec<std::collections::BTreeSet<usize>> {
    let mut feeders = vec![std::collections::BTreeSet::new(); ports.len()];
    for (u, port) in ports.iter().enumerate() {
        for vc in &port.vcs {
            if let NextHop::Port { port: q, .. } = vc.next {
                feeders[q.idx()].insert(u);
            }
        }
    }
    feeders
}

/// What identifies a run besides its network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunMeta {
    /// Scenario name.
    pub scenario: String,
    /// Master seed.
    pub seed: u64,
    /// Replication index.
    pub replication: u64,
}

/// One run: the loop's kernel and the parts of the network, each owning its
/// state (`docs/architecture.md`, "Parts and what each owns").
pub struct Simulation {
    meta: RunMeta,
    /// The clock, the event queue, the counters, why the run stopped.
    k: Kernel,
    /// Ports, links, switches, policers, pulls, packet capture.
    net: network::Network,
    /// Hosts: CPUs, adapters' VCs, AAL5 reassembly.
    hosts: host::Hosts,
    /// TCP connections and UDP flows.
    transport: transport::Transport,
    /// The ABR end systems (at hosts and VS/VD switches).
    abr: abr::AbrEnds,
    /// The switch ports' ABR controllers.
    control: control::Controls,
    /// Cell sources and their applications.
    sources: sources::Sources,
    /// The probes' time series.
    probes: probes::Probes,
    /// The AAL5 frames and RM cells in flight.
    tables: tables::Tables,
    /// The memory guard.
    guard: guard::Guard,
    /// What the efficiency metric refers to.
    efficiency: EfficiencyRef,
    /// The external hosts and the packets from outside in flight.
    external: external::External,
}

/// The link whose capacity the efficiency metric refers to, and how.
#[derive(Clone, Copy, Debug)]
struct EfficiencyRef {
    port: Option<PortId>,
    capacity: EfficiencyCapacity,
}

impl Simulation {
    fn new(mut b: NetworkBuilder, meta: RunMeta, duration: Duration) -> Simulation {
        // Cells entering switches take the slower path only if something
        // there needs them: a controller, a VS/VD switch, an input tap.
        let abr_switching =
            !b.abr_controls.is_empty() || !b.vs_vd.is_empty() || b.capture.as_ref().is_some_and(|c| c.has_input_taps());
        Self::plan(&mut b, abr_switching);
        let elide = b.event_elision;
        let vs_vd = !b.vs_vd.is_empty();
        let abr_controls = std::mem::take(&mut b.abr_controls);
        let port_is_switch = b.port_owner.iter().map(|o| matches!(o, NodeRef::Switch(_))).collect();
        let trace = b.trace.take().map(|(spec, out)| Box::new(trace::Trace::new(&spec, b.trace_names(), out)));
        let mut sim = Simulation {
            meta,
            k: Kernel::new(SimTime::ZERO + duration),
            net: network::Network::new(b.ports, port_is_switch, b.switches, b.upcs, b.capture.take().map(Box::new)),
            hosts: host::Hosts::new(b.hosts),
            transport: transport::Transport::new(b.conns, b.flows),
            abr: abr::AbrEnds::new(b.abr_ends),
            control: control::Controls::new(abr_switching),
            sources: sources::Sources::new(b.sources, std::mem::take(&mut b.source_groups), b.cell_apps),
            probes: probes::Probes::new(b.probes),
            tables: tables::Tables::new(),
            guard: guard::Guard::new(b.max_cells_held),
            efficiency: EfficiencyRef { port: b.efficiency_port, capacity: b.efficiency_capacity },
            external: external::External::new(std::mem::take(&mut b.external), &b.vc_ends),
        };
        sim.transport.start(&mut sim.k);
        sim.sources.start(&mut sim.k);
        sim.start_abr_persistent();
        for (i, target) in sim.probes.targets().enumerate() {
            sim.k.queue.push(SimTime::ZERO, PROBE, Event::Probe(ProbeId(i as u32)));
            if let ProbeTarget::CellApp(a) = target {
                sim.sources.watch(a);
            }
        }
        sim.k.trace = trace;
        sim.start_control(abr_controls);
        sim.start_deferred();
        sim.start_abr_ahead(elide);
        sim.start_pulls(elide, vs_vd);
        sim.k.run_ahead = elide;
        sim
    }

    /// Chooses how each port and link is simulated (see `atm/port.rs`):
    /// pipelined FIFO ports, eager hops into pipelined ports that only one
    /// link feeds, and frame-end events on links into hosts. With event
    /// elision off every port is slotted and every cell-hop is an event: the
    /// reference the optimised runs are tested against. `switching`: cells
    /// entering switches take the slower path (`Controls::switching`).
    fn plan(b: &mut NetworkBuilder, switching: bool) {
        for port in &mut b.ports {
            let (mut rate, mut line) = (port.rate, port.line);
            if b.clock_ppm > 0.0 {
                // One oscillator per transmitter: the line rate and a shaped
                // rate derived from it are off by the same factor.
                let mut rng = b.rng.stream(&format!("link:{}:clock", port.name));
                let e = rng.random_range(-b.clock_ppm..=b.clock_ppm) * 1e-6;
                let scale = |r: BitRate| {
                    BitRate::from_bps((r.bps() as f64 * (1.0 + e)).round() as u64)
                        .expect("a tolerance of at most 0.1% leaves the rate positive")
                };
                (rate, line) = (scale(rate), scale(line));
            }
            let phase = match b.slot_phase {
                SlotPhase::Random => {
                    let mut rng = b.rng.stream(&format!("link:{}:phase", port.name));
                    SimTime::from_ps(rng.random_range(0..rate.cell_time().as_ps()))
                }
                SlotPhase::Aligned => SimTime::ZERO,
            };
            port.set_clock(rate, line, phase);
        }
        let elide = b.event_elision;
        for p in &mut b.ports {
            p.finalize(elide);
        }
        let feeders = feeders(&b.ports);
        // A port that accepts cells when they are put on the link runs ahead
        // of the clock; a probe must see it as it is now, so probed ports are
        // never eager targets.
        let probed: std::collections::BTreeSet<usize> = b
            .probes
            .iter()
            .filter_map(|p| match p.target {
                ProbeTarget::Port(q, _) => Some(q.idx()),
                _ => None,
            })
            .collect();
        // A VS/VD switch ends the loops of the cells it receives, so it takes
        // none ahead of time. (A switch with ABR controllers may: what they
        // do with a cell still happens at its arrival, `sim/abr.rs`.)
        let vs_vd: std::collections::BTreeSet<NodeRef> = b.vs_vd.iter().map(|s| NodeRef::Switch(*s)).collect();
        let eager_target: Vec<bool> = b
            .ports
            .iter()
            .zip(&feeders)
            .enumerate()
            .map(|(i, (q, f))| {
                elide
                    && q.mode() == crate::atm::PortMode::Pipelined
                    && f.len() <= 1
                    && !probed.contains(&i)
                    && !vs_vd.contains(&b.port_owner[i])
                    // A controller that changes cells and keeps state others
                    // read sees each cell at its arrival, never ahead of time.
                    && b.abr_control(PortId(i as u32)).is_none_or(|c| c.timing() != Timing::Exact)
            })
            .collect();
        // A cell source may hand its adapter cells ahead of time only if it is
        // the host's one sender and nobody samples that adapter.
        let mut senders = vec![0u32; b.hosts.len()];
        for c in &b.conns {
            senders[c.src.host.idx()] += 1;
            senders[c.dst.host.idx()] += 1; // ACKs
        }
        for f in &b.flows {
            senders[f.src.host.idx()] += 1;
        }
        let mut sources_on = vec![Vec::new(); b.hosts.len()];
        // An external host sends whatever comes from outside.
        for x in &b.external {
            senders[x.host.idx()] += 1;
        }
        for (i, s) in b.sources.iter().enumerate() {
            senders[s.src.host.idx()] += 1;
            sources_on[s.src.host.idx()].push(i as u32);
        }
        // The sources of a host are one group, merged ahead of time, if
        // they are its only senders and nobody samples its adapter; else
        // each source goes alone, a cell per event.
        b.source_groups.clear();
        for (h, members) in sources_on.into_iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let adapter = b.hosts[h].port.map(|p| p.idx());
            let alone = members.len() == senders[h] as usize && !adapter.is_some_and(|a| probed.contains(&a));
            if elide && alone {
                let next = vec![None; members.len()];
                b.source_groups.push(SourceGroup { members, next, batch: 64 });
            } else {
                for m in members {
                    b.source_groups.push(SourceGroup { members: vec![m], next: vec![None], batch: 1 });
                }
            }
        }
        for (i, port) in b.ports.iter_mut().enumerate() {
            port.set_to_host(elide && matches!(b.port_peer[i], NodeRef::Host(_)));
            port.set_lazy(elide);
            for vc in &mut port.vcs {
                vc.eager = matches!(vc.next, NextHop::Port { port: q, .. } if eager_target[q.idx()]);
            }
        }
        // An eager hop into a port that only passes cells on into a host:
        // taken in one step when nothing at the switch acts on the cell.
        let passes: Vec<bool> = (0..b.ports.len())
            .map(|i| {
                let q = &b.ports[i];
                // A link into a host: every VC of the port leads into it.
                q.takes_frames()
                    && q.is_to_host()
                    && q.is_lossless()
                    && b.abr_control(PortId(i as u32)).is_none()
                    && !vs_vd.contains(&b.port_owner[i])
            })
            .collect();
        let watched = b.capture.is_some();
        for port in &mut b.ports {
            for vc in &mut port.vcs {
                vc.into_host = vc.eager
                    && !watched
                    && vc.upc == crate::atm::NO_UPC
                    && vc.category != ServiceCategory::Abr
                    && vc.vs.is_none()
                    && matches!(vc.next, NextHop::Port { port: q, .. } if passes[q.idx()]);
            }
        }
        // A slotted port whose cells all go on into hosts by eager hops
        // runs its slots late until a cell a host acts on could leave
        // (`Port::set_frame_reach`). Not with a capture, which writes a
        // frame when its last cell crosses a link, in the order they cross.
        if elide && b.capture.is_none() {
            let beyond: Vec<Option<Duration>> = (0..b.ports.len()).map(|i| frame_reach(b, PortId(i as u32))).collect();
            for (port, beyond) in b.ports.iter_mut().zip(beyond) {
                if let Some(d) = beyond {
                    port.set_frame_reach(d);
                }
            }
        }
        // Such a port holds its cells as runs where the model covers it
        // (`atm/port_runs.rs`) and every cell reaches it by the plain way
        // in (`can_hold_runs`).
        if elide && !switching && b.capture.is_none() {
            let held: Vec<bool> = (0..b.ports.len()).map(|i| can_hold_runs(b, PortId(i as u32))).collect();
            for (port, held) in b.ports.iter_mut().zip(held) {
                if held {
                    port.hold_runs();
                }
            }
            // A link whose every VC goes on to such a port, with nothing
            // acting on its cells where it ends and nothing lost on it,
            // hands its cells over when it takes them
            // (`Simulation::hand_over`).
            let held: Vec<bool> = b.ports.iter().map(|q| q.holds_runs()).collect();
            for link in &mut b.ports {
                let hands = !link.is_to_host()
                    && link.is_lossless()
                    && !link.vcs.is_empty()
                    && link.vcs.iter().all(|vc| {
                        vc.upc == crate::atm::NO_UPC
                            && vc.vs.is_none()
                            && matches!(vc.next, NextHop::Port { port: q, .. } if held[q.idx()])
                    });
                for vc in &mut link.vcs {
                    vc.hands_over = hands;
                }
                if hands {
                    link.set_hands_over();
                }
            }
        }
        // A frame's later cells into a port that judges frames at their
        // first cells: offered the short way when nothing where the link
        // ends acts on them (`Simulation::on_link_arrival`).
        let short: Vec<bool> = b.ports.iter().map(|q| q.offers_later_cells()).collect();
        for port in &mut b.ports {
            for vc in &mut port.vcs {
                vc.later_short = elide
                    && !switching
                    && !vc.eager
                    && vc.upc == crate::atm::NO_UPC
                    && matches!(vc.next, NextHop::Port { port: q, .. } if short[q.idx()]);
            }
            port.note_later_short();
        }
        // A port whose first category by priority leaves as from a FIFO of
        // its own passes that category's cells through at their arrival
        // (`Port::pass_top_through`). Not with a capture, which writes each
        // cell when it crosses a link.
        if elide && b.capture.is_none() {
            for port in &mut b.ports {
                port.pass_top_through();
            }
        }
    }

    /// Advances to `until` as [`advance`](Self::advance) does and reports
    /// what the run then holds.
    pub fn advance_to(&mut self, until: SimTime) -> Footprint {
        self.advance(until);
        if self.k.stopped.is_none() {
            // Nothing is due before `until`: the run is there now.
            self.k.now = self.k.now.max(until.min(self.k.end));
        }
        self.footprint()
    }

    /// In-rate slots that ABR sources ran ahead so far, without an event of
    /// their own (`sim/abr.rs`, "Sending ahead").
    pub fn abr_slots_ahead(&self) -> u64 {
        self.k.counts.abr_ahead
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.k.now
    }

    /// The ports.
    pub fn ports(&self) -> &[Port] {
        self.net.ports()
    }

    /// The switches.
    pub fn switches(&self) -> &[Switch] {
        self.net.switches()
    }

    /// The hosts.
    pub fn hosts(&self) -> &[Host] {
        self.hosts.all()
    }

    /// The TCP connections.
    pub fn connections(&self) -> &[TcpConn] {
        self.transport.connections()
    }

    /// When the run ends.
    pub fn end(&self) -> SimTime {
        self.k.end
    }

    /// Runs to the end and reports; fails if the cell accounting does not
    /// balance. (To watch progress, call [`advance`](Self::advance) in steps
    /// first; `run` finishes what is left.)
    pub fn run(mut self) -> Result<RunResult, SimulationError> {
        self.advance(self.k.end);
        if let Some(why) = self.k.stopped.take() {
            return Err(SimulationError::Limit(why));
        }
        // What the event elision left behind comes up to the end (`settle.rs`).
        self.settle(self.k.end, Some(0), settle::Reader::End);
        self.k.now = self.k.end;
        for p in self.net.ports_mut() {
            p.settle(self.k.end);
        }
        // Cells that reached a host before the end but do not end a frame
        // had no event of their own: hand them to their reassemblers.
        for i in 0..self.net.ports().len() {
            while let Some(cell) = self.net.ports_mut()[i].take_arrived_before(self.k.end) {
                self.k.counts.cell_hops += 1;
                let NextHop::Host { host, vc } = self.net.ports()[i].vcs[cell.vc() as usize].next else {
                    unreachable!("only links into hosts hold arrived cells")
                };
                self.host_receive(host, vc, cell);
            }
        }
        self.finish_capture()?;
        if let Some(t) = self.k.trace.as_deref_mut() {
            t.finish().map_err(SimulationError::Trace)?;
        }
        self.finish()
    }

    /// Processes every event due strictly before `until` (at most the end),
    /// unless the memory guard stops the run ([`run`](Self::run) then
    /// reports why).
    pub fn advance(&mut self, until: SimTime) {
        self.advance_events(until, u64::MAX);
    }

    /// [`advance`](Self::advance), stopping after at most `max_events`
    /// events: true when no event is left before `until` (or the run
    /// stopped), false when it stopped at the count. Calls with the same
    /// `until` continue where the last stopped, and give the run one
    /// [`advance`](Self::advance) gives, event for event: the Python binding
    /// advances this way to return to the interpreter every few
    /// milliseconds of wall time (to see Ctrl-C) without changing a result.
    pub fn advance_events(&mut self, until: SimTime, max_events: u64) -> bool {
        let until = until.min(self.k.end);
        self.k.until = until;
        if self.k.stopped.is_some() {
            return true;
        }
        let last = self.k.counts.events.saturating_add(max_events);
        while self.k.counts.events < last {
            let Some((t, ev)) = self.k.queue.pop_before(until) else {
                return true;
            };
            self.k.now = t;
            self.k.counts.events += 1;
            if self.guard.due(self.guard_clock()) && self.over_limit() {
                return true;
            }
            if self.k.stopped.is_some() {
                return true;
            }
            match ev {
                Event::LinkArrival(p) => self.on_link_arrival(p),
                Event::RmDue(p) => self.on_rm_due(p),
                Event::PortSlot(p) => self.on_port_slot(p),
                Event::TcpStart(c) => self.on_tcp_start(c),
                Event::TcpStop(c) => self.on_tcp_stop(c),
                Event::TcpTimer(c, which, generation) => self.on_tcp_timer(c, which, generation),
                Event::UdpSend(f, k) => self.on_udp_send(f, k),
                Event::CellSource(i) => self.on_cell_source(i),
                Event::Probe(i) => self.on_probe(i),
                Event::HostTx(h) => self.on_host_tx(h),
                Event::HostRx(h) => self.on_host_rx(h),
                Event::AbrSend(e, g) => self.on_abr_send(e, g),
                Event::AbrTrailing(e, g) => self.on_abr_trailing(e, g),
                Event::AbrOutOfRate(e, g) => self.on_abr_out_of_rate(e, g),
                Event::AbrStart(e) => self.on_abr_start(e),
                Event::ControlDeadline(p, g) => self.on_control_deadline(p, g),
                Event::Pull(k) => self.on_pull(k),
                Event::External(id) => self.on_external(id),
            }
        }
        false
    }

    /// Whether the event a handler is about to schedule at `t` (in `class`,
    /// tie key `key`, as `EventQueue::push_keyed`) is the one the loop
    /// would take next: then it is taken and counted now, the clock set to
    /// `t`, and the handler goes on with it instead of scheduling it. The
    /// order of events is the loop's (`EventQueue::take_keyed_if_next`);
    /// what is saved is the heap's and the loop's work for it. When the
    /// memory guard is due, or the run has stopped, the event goes to the
    /// loop, which checks them. Off in the reference mode (event elision
    /// off).
    #[inline(always)]
    pub(super) fn run_ahead(&mut self, t: SimTime, class: EventClass, key: u64) -> bool {
        if !self.k.run_ahead
            || self.k.stopped.is_some()
            || self.guard.due(self.guard_clock())
            || !self.k.queue.take_keyed_if_next(t, class, key, self.k.until)
        {
            return false;
        }
        self.k.now = t;
        self.k.counts.events += 1;
        self.k.counts.ran_ahead += 1;
        true
    }
}

#[cfg(test)]
mod abr_tests;
#[cfg(test)]
mod external_tests;
#[cfg(test)]
mod tests;

/// Whether frame-wake port `p` may hold its cells as runs
/// (`atm/port_runs.rs`), as far as the network goes (the port checks the
/// rest, `Port::hold_runs`): every cell reaches it from a link by the
/// plain way in (no policer where the link ends; the caller has checked
/// that no ABR switching or capture acts there), its departures go on
/// each to a port of its own (it puts them on the link a VC at a time), and
/// its VCs come in by links in the same order as their indices: at one
/// instant the reference takes arrivals by link, the model by VC.
fn can_hold_runs(b: &NetworkBuilder, p: PortId) -> bool {
    let port = &b.ports[p.idx()];
    if !port.has_frame_wake() {
        return false;
    }
    let mut next: Vec<PortId> = port
        .vcs
        .iter()
        .filter_map(|vc| match vc.next {
            NextHop::Port { port, .. } => Some(port),
            NextHop::Host { .. } => None,
        })
        .collect();
    let vcs = next.len();
    next.sort_unstable();
    next.dedup();
    if vcs != port.vcs.len() || next.len() != vcs {
        return false;
    }
    // The link each VC comes in by.
    let mut from = vec![None; vcs];
    for (l, link) in b.ports.iter().enumerate() {
        for vc in &link.vcs {
            if let NextHop::Port { port: q, vc: v, .. } = vc.next {
                if q == p {
                    if vc.upc != crate::atm::NO_UPC || from[usize::from(v)].is_some() {
                        return false;
                    }
                    from[usize::from(v)] = Some(l);
                }
            }
        }
    }
    from.iter().all(Option::is_some) && from.windows(2).all(|w| w[0] <= w[1])
}

/// How long after it reaches the far end of port `p`'s link a cell of `p`
/// can at the soonest be acted on, if `p` is a slotted port whose every VC
/// goes on by an eager hop (`PortVc::eager`) into a port whose every VC
/// leads into a host; else `None` (see `Port::set_frame_reach`). ABR VCs
/// and ports with ABR controllers are left out: their ends and controllers
/// act on RM cells and queues in ways the frame wake does not follow.
fn frame_reach(b: &NetworkBuilder, p: PortId) -> Option<Duration> {
    let port = &b.ports[p.idx()];
    if port.mode() != crate::atm::PortMode::Slotted || port.vcs.is_empty() || b.abr_control(p).is_some() {
        return None;
    }
    let mut beyond: Option<Duration> = None;
    for vc in &port.vcs {
        let NextHop::Port { port: q, .. } = vc.next else { return None };
        if !vc.eager || vc.category == ServiceCategory::Abr || vc.vs.is_some() {
            return None;
        }
        let next = &b.ports[q.idx()];
        let into_hosts = next.vcs.iter().all(|v| matches!(v.next, NextHop::Host { .. }));
        if !next.is_to_host() || !into_hosts || b.abr_control(q).is_some() {
            return None;
        }
        beyond = Some(beyond.map_or(next.transit(), |d| d.min(next.transit())));
    }
    beyond
}
