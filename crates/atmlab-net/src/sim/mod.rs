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
//! | `TcpStart`, `UdpSend`, timers | 1 | applications and TCP timers |
//! | `PortSlot(p)` | 2 | port `p` starts sending a cell |
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

mod apps;
mod build;
mod guard;
mod host;
mod probes;
mod results;
mod timer;

pub use apps::{CellSourceStats, Dist, OnOffSource, TcpConn, UdpCbr, UdpStats, VcEnd};
pub use build::{
    BuildError, CbrParams, EfficiencyCapacity, LossModel, MAX_CLOCK_PPM, MAX_UDP_PAYLOAD, NetworkBuilder, NodeRef,
    OnOffParams, SlotPhase, Upc, VcHandle,
};
pub use guard::{DEFAULT_MAX_CELLS_HELD, Footprint};
pub use host::{Host, HostModel, HostStats, HostVc, Overflow};
pub use probes::{ProbeKind, ProbeSpec, ProbeTarget};
pub use results::{
    CellSourceResult, ConnectionResult, EfficiencyBasis, FrameCounts, HostResult, PortResult, RunResult, SeriesResult,
    SimulationError, UdpFlowResult, UpcResult,
};

use crate::aal5::{IPV4_HEADER, Reassembly, UDP_HEADER};
use crate::atm::{Cell, NextHop, Offer, Port, Pti, Switch};
use crate::ids::{ConnId, FlowId, HostId, PortId};
use crate::pdu::{Endpoint, Payload, PduId, PduTable};
use crate::tcp::TcpSegment;
use atmlab_engine::{BitRate, Duration, EventClass, EventQueue, RngStreams, SimTime};
use rand::RngExt;
use timer::Firing;

const ARRIVAL: EventClass = EventClass(0);
const APP: EventClass = EventClass(1);
const SLOT: EventClass = EventClass(2);
const PROBE: EventClass = EventClass(3);

/// Which TCP timer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TcpTimer {
    Retransmit,
    DelayedAck,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Event {
    LinkArrival(PortId),
    PortSlot(PortId),
    TcpStart(ConnId),
    TcpTimer(ConnId, TcpTimer, u32),
    UdpSend(FlowId, u64),
    TcpStop(ConnId),
    CellSource(u32),
    Probe(u32),
    HostTx(HostId),
    HostRx(HostId),
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

/// One run.
pub struct Simulation {
    meta: RunMeta,
    now: SimTime,
    end: SimTime,
    queue: EventQueue<Event>,
    ports: Vec<Port>,
    port_is_switch: Vec<bool>,
    hosts: Vec<Host>,
    switches: Vec<Switch>,
    conns: Vec<TcpConn>,
    flows: Vec<UdpCbr>,
    sources: Vec<OnOffSource>,
    efficiency_capacity: EfficiencyCapacity,
    pdus: PduTable,
    probes: Vec<probes::Probe>,
    scratch: Vec<TcpSegment>,
    efficiency_port: Option<PortId>,
    cells_created: u64,
    raw_created: u64,
    raw_received: u64,
    raw_lost: u64,
    cell_hops: u64,
    events: u64,
    upcs: Vec<build::Upc>,
    policed: u64,
    max_cells_held: u64,
    /// Why the run stopped early (the memory guard), if it did.
    stopped: Option<String>,
    #[allow(dead_code)]
    rng: RngStreams,
}

impl Simulation {
    fn new(mut b: NetworkBuilder, meta: RunMeta, duration: Duration) -> Simulation {
        Self::plan(&mut b);
        let port_is_switch = b.port_owner.iter().map(|o| matches!(o, NodeRef::Switch(_))).collect();
        let mut sim = Simulation {
            meta,
            now: SimTime::ZERO,
            end: SimTime::ZERO + duration,
            queue: EventQueue::new(),
            ports: b.ports,
            port_is_switch,
            hosts: b.hosts,
            switches: b.switches,
            conns: b.conns,
            flows: b.flows,
            sources: b.sources,
            efficiency_capacity: b.efficiency_capacity,
            pdus: PduTable::new(),
            probes: b.probes.into_iter().map(probes::Probe::new).collect(),
            scratch: Vec::with_capacity(256),
            efficiency_port: b.efficiency_port,
            cells_created: 0,
            raw_created: 0,
            raw_received: 0,
            raw_lost: 0,
            cell_hops: 0,
            events: 0,
            upcs: b.upcs,
            policed: 0,
            max_cells_held: b.max_cells_held,
            stopped: None,
            rng: b.rng,
        };
        for (i, c) in sim.conns.iter().enumerate() {
            sim.queue.push(c.start, APP, Event::TcpStart(ConnId(i as u32)));
            if let Some(t) = c.stop {
                sim.queue.push(t, APP, Event::TcpStop(ConnId(i as u32)));
            }
        }
        for (i, f) in sim.flows.iter_mut().enumerate() {
            if let Some(t) = f.due(0, SimTime::ZERO) {
                sim.queue.push(t, APP, Event::UdpSend(FlowId(i as u32), 0));
            }
        }
        for (i, src) in sim.sources.iter().enumerate() {
            sim.queue.push(src.start, APP, Event::CellSource(i as u32));
        }
        for i in 0..sim.probes.len() {
            sim.queue.push(SimTime::ZERO, PROBE, Event::Probe(i as u32));
        }
        sim
    }

    /// Chooses how each port and link is simulated (see `atm/port.rs`):
    /// pipelined FIFO ports, eager hops into pipelined ports that only one
    /// link feeds, and frame-end events on links into hosts. With event
    /// elision off every port is slotted and every cell-hop is an event: the
    /// reference the optimised runs are tested against.
    fn plan(b: &mut NetworkBuilder) {
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
        let mut feeders = vec![std::collections::BTreeSet::new(); b.ports.len()];
        for (u, port) in b.ports.iter().enumerate() {
            for vc in &port.vcs {
                if let NextHop::Port { port: q, .. } = vc.next {
                    feeders[q.idx()].insert(u);
                }
            }
        }
        // A port that accepts cells when they are put on the link runs ahead
        // of the clock; a probe must see it as it is now, so probed ports are
        // never eager targets.
        let probed: std::collections::BTreeSet<usize> = b
            .probes
            .iter()
            .filter_map(|p| match p.target {
                ProbeTarget::Port(q) => Some(q.idx()),
                _ => None,
            })
            .collect();
        let eager_target: Vec<bool> = b
            .ports
            .iter()
            .zip(&feeders)
            .enumerate()
            .map(|(i, (q, f))| {
                elide && q.mode() == crate::atm::PortMode::Pipelined && f.len() <= 1 && !probed.contains(&i)
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
        for s in &b.sources {
            senders[s.src.host.idx()] += 1;
        }
        for s in &mut b.sources {
            let adapter = b.hosts[s.src.host.idx()].port.expect("a source's host has a link");
            let alone = senders[s.src.host.idx()] == 1 && !probed.contains(&adapter.idx());
            s.batch = if elide && alone { 64 } else { 1 };
        }
        for (i, port) in b.ports.iter_mut().enumerate() {
            port.set_to_host(elide && matches!(b.port_peer[i], NodeRef::Host(_)));
            for vc in &mut port.vcs {
                vc.eager = matches!(vc.next, NextHop::Port { port: q, .. } if eager_target[q.idx()]);
            }
        }
    }

    /// Advances to `until` as [`advance`](Self::advance) does and reports
    /// what the run then holds.
    pub fn advance_to(&mut self, until: SimTime) -> Footprint {
        self.advance(until);
        if self.stopped.is_none() {
            // Nothing is due before `until`: the run is there now.
            self.now = self.now.max(until.min(self.end));
        }
        self.footprint()
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The ports.
    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    /// The switches.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// The hosts.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The TCP connections.
    pub fn connections(&self) -> &[TcpConn] {
        &self.conns
    }

    /// When the run ends.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Runs to the end and reports; fails if the cell accounting does not
    /// balance. (To watch progress, call [`advance`](Self::advance) in steps
    /// first; `run` finishes what is left.)
    pub fn run(mut self) -> Result<RunResult, SimulationError> {
        self.advance(self.end);
        if let Some(why) = self.stopped.take() {
            return Err(SimulationError::Limit(why));
        }
        self.now = self.end;
        for p in &mut self.ports {
            p.settle(self.end);
        }
        // Cells that reached a host before the end but do not end a frame
        // had no event of their own: hand them to their reassemblers.
        for i in 0..self.ports.len() {
            while let Some(cell) = self.ports[i].take_arrived_before(self.end) {
                self.cell_hops += 1;
                let NextHop::Host { host, vc } = self.ports[i].vcs[cell.slot as usize].next else {
                    unreachable!("only links into hosts hold arrived cells")
                };
                self.host_receive(host, vc, cell);
            }
        }
        self.finish()
    }

    /// Processes every event due strictly before `until` (at most the end),
    /// unless the memory guard stops the run ([`run`](Self::run) then
    /// reports why).
    pub fn advance(&mut self, until: SimTime) {
        let until = until.min(self.end);
        if self.stopped.is_some() {
            return;
        }
        while let Some((t, ev)) = self.queue.pop_before(until) {
            self.now = t;
            self.events += 1;
            if self.events % guard::GUARD_EVERY == 0 && self.over_limit() {
                return;
            }
            match ev {
                Event::LinkArrival(p) => self.on_link_arrival(p),
                Event::PortSlot(p) => self.on_port_slot(p),
                Event::TcpStart(c) => self.on_tcp_start(c),
                Event::TcpStop(c) => self.on_tcp_stop(c),
                Event::TcpTimer(c, which, generation) => self.on_tcp_timer(c, which, generation),
                Event::UdpSend(f, k) => self.on_udp_send(f, k),
                Event::CellSource(i) => self.on_cell_source(i),
                Event::Probe(i) => self.on_probe(i),
                Event::HostTx(h) => self.on_host_tx(h),
                Event::HostRx(h) => self.on_host_rx(h),
            }
        }
    }

    #[inline]
    fn on_port_slot(&mut self, p: PortId) {
        let tx = self.ports[p.idx()].transmit(self.now);
        if let Some(s) = tx.next_slot {
            self.queue.push(s, SLOT, Event::PortSlot(p));
        }
        self.put_on_link(p, tx.arrival, tx.cell);
    }

    /// A cell leaves port `p` and will reach the far end at `arrival`.
    ///
    /// If it goes on to a pipelined port fed by this link alone (`eager`),
    /// that port takes it now, at its arrival time: such a port sees only
    /// this link's cells, in order, so nothing can come between. Cells that
    /// would arrive after the end of the run stay on the link.
    #[inline]
    fn put_on_link(&mut self, p: PortId, arrival: SimTime, cell: Cell) {
        if self.ports[p.idx()].loses_cell() {
            self.settle_lost(cell);
            return;
        }
        let port = &self.ports[p.idx()];
        let vc = &port.vcs[cell.slot as usize];
        if vc.eager && arrival < self.end {
            let (next, upc) = (vc.next, vc.upc);
            self.cell_hops += 1;
            self.enter_switch(next, upc, arrival, cell);
        } else if port.is_to_host() && cell.pdu == PduId::NONE && arrival < self.end {
            // A cell source's cell only adds to its sink's count: it needs
            // no event, and is not kept on the link until a frame end that
            // never comes (it would pile up in memory for the whole run).
            let NextHop::Host { host, vc } = vc.next else { unreachable!("a link into a host leads to it") };
            self.cell_hops += 1;
            self.host_receive(host, vc, cell);
        } else if let Some(t) = self.ports[p.idx()].put_on_link(arrival, cell) {
            self.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
        }
    }

    #[inline]
    fn on_link_arrival(&mut self, p: PortId) {
        if self.ports[p.idx()].is_to_host() {
            // A frame end is due: take it with the cells before it.
            loop {
                let (_, cell) = self.ports[p.idx()].take_arrival();
                self.cell_hops += 1;
                let NextHop::Host { host, vc } = self.ports[p.idx()].vcs[cell.slot as usize].next else {
                    unreachable!("a link into a host carries host-bound cells")
                };
                self.host_receive(host, vc, cell);
                if cell.is_end_of_frame() {
                    break;
                }
            }
            if let Some(t) = self.ports[p.idx()].next_frame_end() {
                self.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
            }
            return;
        }
        let port = &mut self.ports[p.idx()];
        let (_, cell) = port.take_arrival();
        let (hop, upc) = (port.vcs[cell.slot as usize].next, port.vcs[cell.slot as usize].upc);
        if let Some(t) = port.next_arrival() {
            self.queue.push_keyed(t, ARRIVAL, u64::from(p.0), Event::LinkArrival(p));
        }
        self.cell_hops += 1;
        match hop {
            NextHop::Port { .. } => self.enter_switch(hop, upc, self.now, cell),
            NextHop::Host { host, vc } => self.host_receive(host, vc, cell),
        }
    }

    /// A cell reaches a switch at `at`: usage parameter control (if its VC
    /// is policed on this link), then relabelling and the output port.
    #[inline]
    fn enter_switch(&mut self, hop: NextHop, upc: u32, at: SimTime, mut cell: Cell) {
        let NextHop::Port { port, label, slot } = hop else { unreachable!("a switch hop leads to a port") };
        if upc != crate::atm::NO_UPC {
            match self.upcs[upc as usize].policer.police(at, cell.clp) {
                crate::atm::Policed::Pass => {}
                crate::atm::Policed::Tag => cell.clp = true,
                crate::atm::Policed::Discard => {
                    self.policed += 1;
                    self.settle_lost(cell);
                    return;
                }
            }
        }
        self.offer_at(port, at, Cell { label, slot, ..cell });
    }

    /// Offers `cell` to port `p` as arriving at `at` (now, or later for an
    /// eager hop).
    #[inline]
    fn offer_at(&mut self, p: PortId, at: SimTime, cell: Cell) {
        match self.ports[p.idx()].offer(at, cell) {
            Offer::Queued { wake: Some(t) } => self.queue.push(t, SLOT, Event::PortSlot(p)),
            Offer::Queued { wake: None } => {}
            Offer::Departs { arrival, cell } => self.put_on_link(p, arrival, cell),
            Offer::Dropped(_) => self.settle_lost(cell),
        }
    }

    /// A cell was dropped or lost: settle its PDU (or count a cell source's).
    #[inline]
    fn settle_lost(&mut self, cell: Cell) {
        if cell.pdu == PduId::NONE {
            self.raw_lost += 1;
        } else {
            self.pdus.settle_cell(cell.pdu);
        }
    }

    fn host_receive(&mut self, h: HostId, vc: u32, cell: Cell) {
        let host = &mut self.hosts[h.idx()];
        host.stats.cells_received += 1;
        if cell.pdu == PduId::NONE {
            let sink = host.vcs[vc as usize].cell_sink.expect("a cell source's cells arrive at its sink");
            self.sources[sink as usize].stats.received += 1;
            self.raw_received += 1;
            return;
        }
        let outcome = host.vcs[vc as usize].reassembler.on_cell(&cell, &self.pdus);
        match outcome {
            Reassembly::Incomplete => {}
            Reassembly::Discarded { cells } => {
                host.stats.frames_discarded += 1;
                host.stats.dead_cells += u64::from(cells);
            }
            Reassembly::Complete(id) => {
                host.stats.frames_received += 1;
                let pdu = self.pdus.get(id).expect("a complete frame's PDU is live");
                let (dest, payload) = (pdu.dest, pdu.payload.clone());
                let sent_at = pdu.sent_at;
                self.pdus.mark_delivered(id);
                if let Endpoint::UdpSink(f) = dest {
                    self.flows[f as usize].record_arrival(self.now);
                }
                if host.model.queued_receive() {
                    self.enqueue_rx(h, host::PendingRx { dest, payload, sent_at });
                } else {
                    self.deliver(dest, payload, sent_at);
                }
            }
        }
        self.pdus.settle_cell(cell.pdu);
    }

    /// A reassembled datagram joins the host's input queue (or is dropped
    /// if the queue is full).
    fn enqueue_rx(&mut self, h: HostId, item: host::PendingRx) {
        let host = &mut self.hosts[h.idx()];
        if host.model.receive_queue.is_some_and(|n| host.rx.len() >= n as usize) {
            host.stats.receive_dropped += 1;
            return;
        }
        host.rx.push_back(item);
        if host.rx.len() == 1 {
            let t = self.now + host.model.receive_per_datagram;
            self.queue.push(t, APP, Event::HostRx(h));
        }
    }

    /// The receiving CPU has finished the datagram at the head of the queue.
    fn on_host_rx(&mut self, h: HostId) {
        let host = &mut self.hosts[h.idx()];
        let item = host.rx.pop_front().expect("a receive event has a datagram");
        if !host.rx.is_empty() {
            let t = self.now + host.model.receive_per_datagram;
            self.queue.push(t, APP, Event::HostRx(h));
        }
        self.deliver(item.dest, item.payload, item.sent_at);
    }

    fn deliver(&mut self, dest: Endpoint, payload: Payload, sent_at: SimTime) {
        match (dest, payload) {
            (Endpoint::TcpReceiver(c), Payload::Tcp(seg)) => {
                let conn = &mut self.conns[c as usize];
                let mut out = std::mem::take(&mut self.scratch);
                conn.receiver.on_segment(self.now, &seg, &mut out);
                if conn.completed_at.is_none() && conn.bytes.is_some_and(|b| conn.receiver.stats.bytes_delivered >= b) {
                    conn.completed_at = Some(self.now);
                }
                self.send_tcp(ConnId(c), false, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::DelayedAck);
            }
            (Endpoint::TcpSender(c), Payload::Tcp(seg)) => {
                let mut out = std::mem::take(&mut self.scratch);
                self.conns[c as usize].sender.on_segment(self.now, &seg, &mut out);
                self.send_tcp(ConnId(c), true, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::Retransmit);
            }
            (Endpoint::UdpSink(f), Payload::Udp { len, .. }) => self.udp_received(f, len, sent_at),
            (Endpoint::UdpSink(f), Payload::UdpFragment { len, seq, index, count }) => {
                // IP reassembly. The fragments of a datagram travel in order
                // on one VC, so a datagram is complete when fragments 0 to
                // count - 1 arrive one after another; a gap, or a fragment of
                // a later datagram, abandons it (its buffer would time out).
                let flow = &mut self.flows[f as usize];
                let next = match flow.assembling {
                    Some((s, next, first)) if s == seq && next == index => Some((next + 1, first)),
                    _ if index == 0 => Some((1, sent_at)),
                    _ => None,
                };
                flow.assembling = next.map(|(n, first)| (seq, n, first));
                if let Some((n, first)) = next
                    && n == count
                {
                    flow.assembling = None;
                    self.udp_received(f, len, first);
                }
            }
            (dest, _) => unreachable!("PDU for {dest:?} carries the wrong transport"),
        }
    }

    fn udp_received(&mut self, f: u32, len: u32, sent_at: SimTime) {
        let s = &mut self.flows[f as usize].stats;
        let delay = (self.now - sent_at).as_ps();
        s.received += 1;
        s.bytes_received += u64::from(len);
        s.delay_sum_ps += u128::from(delay);
        s.delay_max_ps = s.delay_max_ps.max(delay);
        s.last_received = Some(self.now);
    }

    /// Sends the segments in `out` from the sender's end (`forward`) or the
    /// receiver's end, and empties `out`.
    fn send_tcp(&mut self, c: ConnId, forward: bool, out: &mut Vec<TcpSegment>) {
        let conn = &self.conns[c.idx()];
        let (end, dest) =
            if forward { (conn.src, Endpoint::TcpReceiver(c.0)) } else { (conn.dst, Endpoint::TcpSender(c.0)) };
        for seg in out.drain(..) {
            let bytes = IPV4_HEADER + seg.header_len() + seg.len;
            self.send_datagram(end, dest, Payload::Tcp(seg), bytes);
        }
    }

    /// Puts one IP datagram of `ip_bytes` into AAL5 and queues its cells at
    /// the host's adapter.
    fn send_datagram(&mut self, from: VcEnd, dest: Endpoint, payload: Payload, ip_bytes: u32) {
        let host = &mut self.hosts[from.host.idx()];
        let cells = host.encapsulation.cells_for_datagram(ip_bytes);
        if !host.model.serial_send() {
            host.stats.datagrams_sent += 1;
            self.send_cells(from, dest, payload, cells, self.now);
            return;
        }
        host.tx.push_back(host::PendingTx { vc: from.vc, dest, payload, cells, created: self.now });
        host.tx_cells += u64::from(cells);
        if host.tx_phase == host::TxPhase::Idle {
            host.tx_phase = host::TxPhase::Header;
            let t = self.now + host.model.per_datagram;
            self.queue.push(t, APP, Event::HostTx(from.host));
        }
    }

    /// The sending CPU finished a step of the datagram at the head of its
    /// queue: the per-datagram work (check the adapter buffer), or writing
    /// the cells (hand them over, go on with the next datagram).
    fn on_host_tx(&mut self, h: HostId) {
        let host = &mut self.hosts[h.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let head = host.tx.front().expect("the sending CPU has a datagram");
        let (cells, model) = (head.cells, host.model);
        if host.tx_phase == host::TxPhase::Header {
            if let Some(cap) = model.adapter_buffer {
                let queued = self.ports[port.idx()].queued_at(self.now);
                let excess = (queued + cells).saturating_sub(cap);
                if excess > 0 {
                    match model.overflow {
                        Overflow::Block => {
                            // Wait until enough cells have left (the adapter
                            // sends one per cell time while it has any).
                            let cell_time = self.ports[port.idx()].rate.cell_time();
                            let wait = cell_time.saturating_mul(u64::from(excess));
                            self.queue.push(self.now.saturating_add(wait), APP, Event::HostTx(h));
                        }
                        Overflow::Drop => {
                            let host = &mut self.hosts[h.idx()];
                            let dropped = host.tx.pop_front().expect("the sending CPU has a datagram");
                            host.tx_cells -= u64::from(dropped.cells);
                            host.stats.adapter_dropped += 1;
                            self.next_tx(h);
                        }
                    }
                    return;
                }
            }
            if !model.per_cell.is_zero() {
                self.hosts[h.idx()].tx_phase = host::TxPhase::Cells;
                let write = model.per_cell.saturating_mul(u64::from(cells));
                self.queue.push(self.now.saturating_add(write), APP, Event::HostTx(h));
                return;
            }
        }
        let host = &mut self.hosts[h.idx()];
        let item = host.tx.pop_front().expect("the sending CPU has a datagram");
        host.tx_cells -= u64::from(item.cells);
        host.stats.datagrams_sent += 1;
        let from = VcEnd { host: h, vc: item.vc };
        self.send_cells(from, item.dest, item.payload, item.cells, item.created);
        self.next_tx(h);
    }

    /// The sending CPU starts on its next datagram, if any.
    fn next_tx(&mut self, h: HostId) {
        let host = &mut self.hosts[h.idx()];
        if host.tx.is_empty() {
            host.tx_phase = host::TxPhase::Idle;
        } else {
            host.tx_phase = host::TxPhase::Header;
            self.queue.push(self.now + host.model.per_datagram, APP, Event::HostTx(h));
        }
    }

    /// Queues the `cells` cells of one PDU at the host's adapter (`created`:
    /// when its transport sent it, for delays).
    fn send_cells(&mut self, from: VcEnd, dest: Endpoint, payload: Payload, cells: u32, created: SimTime) {
        let host = &self.hosts[from.host.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let vc = &host.vcs[from.vc as usize];
        let (label, slot) = (vc.label, vc.slot);
        let pdu = self.pdus.insert(dest, payload, cells, created);
        self.cells_created += u64::from(cells);
        for i in 1..=cells {
            let pti = if i == cells { Pti::DATA_EOF } else { Pti::DATA };
            self.offer_at(port, self.now, Cell { label, pdu, pti, clp: false, slot });
        }
    }

    fn sync_timer(&mut self, c: ConnId, which: TcpTimer) {
        let conn = &mut self.conns[c.idx()];
        let scheduled = match which {
            TcpTimer::Retransmit => conn.rto_timer.set(conn.sender.rto_deadline()),
            TcpTimer::DelayedAck => conn.delack_timer.set(conn.receiver.delack_deadline()),
        };
        if let Some((t, generation)) = scheduled {
            self.queue.push(t, APP, Event::TcpTimer(c, which, generation));
        }
    }

    fn on_tcp_start(&mut self, c: ConnId) {
        let mut out = std::mem::take(&mut self.scratch);
        self.conns[c.idx()].sender.connect(self.now, &mut out);
        self.send_tcp(c, true, &mut out);
        self.scratch = out;
        self.sync_timer(c, TcpTimer::Retransmit);
    }

    /// The application stops writing: the transfer is what it wrote so far.
    fn on_tcp_stop(&mut self, c: ConnId) {
        let conn = &mut self.conns[c.idx()];
        let bytes = conn.sender.stop_writing();
        conn.bytes = Some(bytes);
        if conn.receiver.stats.bytes_delivered >= bytes {
            conn.completed_at.get_or_insert(self.now);
        }
    }

    fn on_tcp_timer(&mut self, c: ConnId, which: TcpTimer, generation: u32) {
        let conn = &mut self.conns[c.idx()];
        let timer = match which {
            TcpTimer::Retransmit => &mut conn.rto_timer,
            TcpTimer::DelayedAck => &mut conn.delack_timer,
        };
        match timer.fire(self.now, generation) {
            Firing::Stale => {}
            Firing::Rearm(t, g) => self.queue.push(t, APP, Event::TcpTimer(c, which, g)),
            Firing::Due => {
                let mut out = std::mem::take(&mut self.scratch);
                let forward = match which {
                    TcpTimer::Retransmit => {
                        conn.sender.on_timeout(self.now, &mut out);
                        true
                    }
                    TcpTimer::DelayedAck => {
                        conn.receiver.on_delack_timeout(&mut out);
                        false
                    }
                };
                self.send_tcp(c, forward, &mut out);
                self.scratch = out;
                self.sync_timer(c, which);
            }
        }
    }

    fn on_probe(&mut self, i: u32) {
        let now = self.now;
        let probe = &mut self.probes[i as usize];
        let interval = probe.spec.interval;
        let (value, counter) = match probe.spec.target {
            ProbeTarget::Conn(c) => {
                let c = &self.conns[c.idx()];
                match probe.spec.kind {
                    ProbeKind::Cwnd => (c.sender.cwnd() as f64, None),
                    ProbeKind::Ssthresh => (c.sender.ssthresh() as f64, None),
                    ProbeKind::Rto => (c.sender.rtt().rto().as_secs_f64(), None),
                    ProbeKind::Srtt => (c.sender.rtt().srtt().map_or(0.0, |d| d.as_secs_f64()), None),
                    _ => (0.0, Some(c.receiver.stats.bytes_delivered)),
                }
            }
            ProbeTarget::Flow(f) => (0.0, Some(self.flows[f.idx()].stats.bytes_received)),
            ProbeTarget::Port(q) => {
                let port = &mut self.ports[q.idx()];
                match probe.spec.kind {
                    ProbeKind::Queue => (f64::from(port.queued_at(now)), None),
                    ProbeKind::Drops => (0.0, Some(port.dropped())),
                    _ => (0.0, Some(port.sent_by(now))),
                }
            }
        };
        let value = match counter {
            None => value,
            Some(total) => {
                let delta = total - probe.last;
                probe.last = total;
                let secs = interval.as_secs_f64();
                match probe.spec.kind {
                    _ if probe.next == 0 => 0.0,
                    ProbeKind::Goodput => delta as f64 * 8.0 / secs,
                    ProbeKind::Utilization => match probe.spec.target {
                        // Cells started over slots started in the interval:
                        // both counted strictly before now, so at most 1.
                        ProbeTarget::Port(q) => {
                            let slots = self.ports[q.idx()].slots_before(now);
                            let offered = slots - std::mem::replace(&mut probe.last_slots, slots);
                            if offered == 0 { 0.0 } else { delta as f64 / offered as f64 }
                        }
                        _ => unreachable!("utilization probes watch ports"),
                    },
                    _ => delta as f64,
                }
            }
        };
        probe.times_ps.push(now.as_ps());
        probe.values.push(value);
        probe.next += 1;
        if let Some(t) = interval.checked_mul(probe.next).and_then(|d| SimTime::ZERO.checked_add(d)) {
            self.queue.push(t, PROBE, Event::Probe(i));
        }
    }

    /// A cell source's cell is due now: hand it to the adapter, and with it
    /// the next `batch - 1` cells at their own (later) times when the source
    /// is the only sender on its host (its pipelined adapter then sees only
    /// these cells, in order, so taking them early changes nothing).
    fn on_cell_source(&mut self, i: u32) {
        let src = &self.sources[i as usize];
        let (from, batch) = (src.src, src.batch);
        let host = &self.hosts[from.host.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let vc = &host.vcs[from.vc as usize];
        let cell = Cell { label: vc.label, pdu: PduId::NONE, pti: Pti::DATA, clp: false, slot: vc.slot };
        let mut due = self.now;
        for k in 1..=batch {
            self.sources[i as usize].stats.sent += 1;
            self.cells_created += 1;
            self.raw_created += 1;
            self.offer_at(port, due, cell);
            match self.sources[i as usize].next_cell() {
                Some(t) if t < self.end && k < batch => due = t,
                Some(t) => {
                    self.queue.push(t, APP, Event::CellSource(i));
                    break;
                }
                None => break,
            }
        }
    }

    fn on_udp_send(&mut self, f: FlowId, k: u64) {
        let flow = &mut self.flows[f.idx()];
        let len = flow.next_payload();
        flow.stats.sent += 1;
        flow.stats.first_sent.get_or_insert(self.now);
        flow.bytes_sent += u64::from(len);
        let src = flow.src;
        if let Some(t) = flow.due(k + 1, self.now) {
            self.queue.push(t, APP, Event::UdpSend(f, k + 1));
        }
        let host = &self.hosts[src.host.idx()];
        let dest = Endpoint::UdpSink(f.0);
        if len + UDP_HEADER + IPV4_HEADER <= host.mtu {
            self.flows[f.idx()].stats.fragments_sent += 1;
            self.send_datagram(src, dest, Payload::Udp { len, seq: k }, len + UDP_HEADER + IPV4_HEADER);
            return;
        }
        let pieces = crate::ip::fragments(len + UDP_HEADER, host.mtu, host.fragmentation);
        let count = pieces.len() as u32;
        self.flows[f.idx()].stats.fragments_sent += u64::from(count);
        for (index, bytes) in pieces.into_iter().enumerate() {
            let payload = Payload::UdpFragment { len, seq: k, index: index as u32, count };
            self.send_datagram(src, dest, payload, bytes + IPV4_HEADER);
        }
    }
}

#[cfg(test)]
mod tests;
