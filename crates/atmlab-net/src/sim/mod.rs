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
//! At equal times lower classes run first (then FIFO): every cell that
//! arrives at an instant is queued, and every ACK that arrives is processed,
//! before a port picks the cell for a slot starting at that instant or a
//! timer that would fire at it is acted on.
//!
//! Only the head cell of each link and the next slot of each busy port are in
//! the event queue, and each TCP timer has at most one pending event, so the
//! queue stays small however many cells are in flight.

mod apps;
mod build;
mod host;
mod results;
mod timer;

pub use apps::{TcpConn, UdpCbr, UdpStats, VcEnd};
pub use build::{BuildError, CbrParams, NetworkBuilder, NodeRef, VcHandle};
pub use host::{Host, HostStats, HostVc};
pub use results::{
    ConnectionResult, EfficiencyBasis, FrameCounts, PortResult, RunResult, SimulationError,
    UdpFlowResult,
};

use crate::aal5::{IPV4_HEADER, Reassembly, UDP_HEADER};
use crate::atm::{Cell, NextHop, Offer, Port, Pti, Switch};
use crate::ids::{ConnId, FlowId, HostId, PortId};
use crate::pdu::{Endpoint, Payload, PduTable};
use crate::tcp::TcpSegment;
use atmlab_engine::{Duration, EventClass, EventQueue, RngStreams, SimTime};
use timer::Firing;

const ARRIVAL: EventClass = EventClass(0);
const APP: EventClass = EventClass(1);
const SLOT: EventClass = EventClass(2);

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
    pdus: PduTable,
    scratch: Vec<TcpSegment>,
    efficiency_port: Option<PortId>,
    cells_created: u64,
    cell_hops: u64,
    events: u64,
    #[allow(dead_code)]
    rng: RngStreams,
}

impl Simulation {
    fn new(b: NetworkBuilder, meta: RunMeta, duration: Duration) -> Simulation {
        let port_is_switch = b
            .port_owner
            .iter()
            .map(|o| matches!(o, NodeRef::Switch(_)))
            .collect();
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
            pdus: PduTable::new(),
            scratch: Vec::with_capacity(256),
            efficiency_port: b.efficiency_port,
            cells_created: 0,
            cell_hops: 0,
            events: 0,
            rng: b.rng,
        };
        for (i, c) in sim.conns.iter().enumerate() {
            sim.queue
                .push(c.start, APP, Event::TcpStart(ConnId(i as u32)));
        }
        for (i, f) in sim.flows.iter().enumerate() {
            if let Some(t) = f.due(0) {
                sim.queue.push(t, APP, Event::UdpSend(FlowId(i as u32), 0));
            }
        }
        sim
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

    /// Runs to the end and reports; fails if the cell accounting does not
    /// balance.
    pub fn run(mut self) -> Result<RunResult, SimulationError> {
        self.advance(self.end);
        self.now = self.end;
        self.finish()
    }

    /// Processes every event due strictly before `until` (at most the end).
    pub fn advance(&mut self, until: SimTime) {
        let until = until.min(self.end);
        while let Some((t, ev)) = self.queue.pop_before(until) {
            self.now = t;
            self.events += 1;
            match ev {
                Event::LinkArrival(p) => self.on_link_arrival(p),
                Event::PortSlot(p) => self.on_port_slot(p),
                Event::TcpStart(c) => self.on_tcp_start(c),
                Event::TcpTimer(c, which, generation) => self.on_tcp_timer(c, which, generation),
                Event::UdpSend(f, k) => self.on_udp_send(f, k),
            }
        }
    }

    #[inline]
    fn on_port_slot(&mut self, p: PortId) {
        let tx = self.ports[p.idx()].transmit(self.now);
        if tx.channel_was_empty {
            self.queue.push(tx.arrival, ARRIVAL, Event::LinkArrival(p));
        }
        if let Some(s) = tx.next_slot {
            self.queue.push(s, SLOT, Event::PortSlot(p));
        }
    }

    #[inline]
    fn on_link_arrival(&mut self, p: PortId) {
        let port = &mut self.ports[p.idx()];
        let (mut cell, next_head) = port.deliver_head();
        let hop = port.vcs[cell.slot as usize].next;
        self.cell_hops += 1;
        if let Some(t) = next_head {
            self.queue.push(t, ARRIVAL, Event::LinkArrival(p));
        }
        match hop {
            NextHop::Port { port, label, slot } => {
                cell.label = label;
                cell.slot = slot;
                self.offer(port, cell);
            }
            NextHop::Host { host, vc } => self.host_receive(host, vc, cell),
        }
    }

    #[inline]
    fn offer(&mut self, p: PortId, cell: Cell) {
        match self.ports[p.idx()].offer(self.now, cell) {
            Offer::Queued { wake: Some(t) } => self.queue.push(t, SLOT, Event::PortSlot(p)),
            Offer::Queued { wake: None } => {}
            Offer::Dropped(_) => self.pdus.settle_cell(cell.pdu),
        }
    }

    fn host_receive(&mut self, h: HostId, vc: u32, cell: Cell) {
        let host = &mut self.hosts[h.idx()];
        host.stats.cells_received += 1;
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
                self.deliver(dest, payload, sent_at);
            }
        }
        self.pdus.settle_cell(cell.pdu);
    }

    fn deliver(&mut self, dest: Endpoint, payload: Payload, sent_at: SimTime) {
        match (dest, payload) {
            (Endpoint::TcpReceiver(c), Payload::Tcp(seg)) => {
                let conn = &mut self.conns[c as usize];
                let mut out = std::mem::take(&mut self.scratch);
                conn.receiver.on_segment(self.now, &seg, &mut out);
                if conn.completed_at.is_none()
                    && conn
                        .bytes
                        .is_some_and(|b| conn.receiver.stats.bytes_delivered >= b)
                {
                    conn.completed_at = Some(self.now);
                }
                self.send_tcp(ConnId(c), false, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::DelayedAck);
            }
            (Endpoint::TcpSender(c), Payload::Tcp(seg)) => {
                let mut out = std::mem::take(&mut self.scratch);
                self.conns[c as usize]
                    .sender
                    .on_segment(self.now, &seg, &mut out);
                self.send_tcp(ConnId(c), true, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::Retransmit);
            }
            (Endpoint::UdpSink(f), Payload::Udp { len, .. }) => {
                let s = &mut self.flows[f as usize].stats;
                let delay = (self.now - sent_at).as_ps();
                s.received += 1;
                s.bytes_received += u64::from(len);
                s.delay_sum_ps += u128::from(delay);
                s.delay_max_ps = s.delay_max_ps.max(delay);
            }
            (dest, _) => unreachable!("PDU for {dest:?} carries the wrong transport"),
        }
    }

    /// Sends the segments in `out` from the sender's end (`forward`) or the
    /// receiver's end, and empties `out`.
    fn send_tcp(&mut self, c: ConnId, forward: bool, out: &mut Vec<TcpSegment>) {
        let conn = &self.conns[c.idx()];
        let (end, dest) = if forward {
            (conn.src, Endpoint::TcpReceiver(c.0))
        } else {
            (conn.dst, Endpoint::TcpSender(c.0))
        };
        for seg in out.drain(..) {
            let bytes = IPV4_HEADER + seg.header_len() + seg.len;
            self.send_datagram(end, dest, Payload::Tcp(seg), bytes);
        }
    }

    /// Puts one IP datagram of `ip_bytes` into AAL5 and queues its cells at
    /// the host's adapter.
    fn send_datagram(&mut self, from: VcEnd, dest: Endpoint, payload: Payload, ip_bytes: u32) {
        let host = &self.hosts[from.host.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let vc = &host.vcs[from.vc as usize];
        let (label, slot) = (vc.label, vc.slot);
        let cells = host.encapsulation.cells_for_datagram(ip_bytes);
        let pdu = self.pdus.insert(dest, payload, cells, self.now);
        self.cells_created += u64::from(cells);
        for i in 1..=cells {
            let pti = if i == cells { Pti::DATA_EOF } else { Pti::DATA };
            self.offer(
                port,
                Cell {
                    label,
                    pdu,
                    pti,
                    clp: false,
                    slot,
                },
            );
        }
    }

    fn sync_timer(&mut self, c: ConnId, which: TcpTimer) {
        let conn = &mut self.conns[c.idx()];
        let scheduled = match which {
            TcpTimer::Retransmit => conn.rto_timer.set(conn.sender.rto_deadline()),
            TcpTimer::DelayedAck => conn.delack_timer.set(conn.receiver.delack_deadline()),
        };
        if let Some((t, generation)) = scheduled {
            self.queue
                .push(t, APP, Event::TcpTimer(c, which, generation));
        }
    }

    fn on_tcp_start(&mut self, c: ConnId) {
        let mut out = std::mem::take(&mut self.scratch);
        self.conns[c.idx()].sender.connect(self.now, &mut out);
        self.send_tcp(c, true, &mut out);
        self.scratch = out;
        self.sync_timer(c, TcpTimer::Retransmit);
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

    fn on_udp_send(&mut self, f: FlowId, k: u64) {
        let flow = &mut self.flows[f.idx()];
        flow.stats.sent += 1;
        let (src, len) = (flow.src, flow.payload);
        if let Some(t) = flow.due(k + 1) {
            self.queue.push(t, APP, Event::UdpSend(f, k + 1));
        }
        self.send_datagram(
            src,
            Endpoint::UdpSink(f.0),
            Payload::Udp { len, seq: k },
            len + UDP_HEADER + IPV4_HEADER,
        );
    }
}

#[cfg(test)]
mod tests;
