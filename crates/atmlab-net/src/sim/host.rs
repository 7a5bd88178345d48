//! End systems: an IP host with one ATM adapter, its sending CPU (datagrams
//! into AAL5 and cells into the adapter), and its receiving side (AAL5
//! reassembly, the input queue and the CPU that hands datagrams to the
//! transport).

use std::collections::VecDeque;

use super::Simulation;
use super::apps::VcEnd;
use super::datagram::{Datagram, Endpoint};
use super::guard::DATAGRAM_CELLS;
use super::kernel::{APP, Event};
use super::settle::Reader;
use crate::aal5::{Encapsulation, Reassembler, Reassembly};
use crate::atm::{Carries, Cell, VcLabel};
use crate::ids::{FlowId, HostId, PortId};
use crate::ip::Fragmentation;
use atmlab_engine::{Duration, SimTime};

/// One VC as a host sees it: the label and port VC index it sends with, and the
/// AAL5 receiver for the cells that arrive on it.
#[derive(Clone, Debug)]
pub struct HostVc {
    /// The label of the VC on the host's link.
    pub label: VcLabel,
    /// The VC's index at the host's adapter port.
    pub port_vc: u16,
    /// AAL5 receiver.
    pub reassembler: Reassembler,
    /// The application of cell sources whose cells arrive on this VC, if
    /// any (they are no frames; the host only counts them).
    pub cell_sink: Option<u32>,
    /// The ABR end that sends on this VC, if it is an ABR VC: the frames
    /// the transport sends wait there for the source's in-rate slots.
    pub abr: Option<u32>,
}

/// Counters of a host's receiving side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Cells that arrived.
    pub cells_received: u64,
    /// Good frames reassembled.
    pub frames_received: u64,
    /// Frames discarded by AAL5 (missing cells, merged frames).
    pub frames_discarded: u64,
    /// Cells of discarded frames ("dead cells").
    pub dead_cells: u64,
    /// Datagrams the sending side lost because the adapter buffer was full
    /// (`overflow = drop`).
    pub adapter_dropped: u64,
    /// Datagrams the receiving side dropped because its input queue was full.
    pub receive_dropped: u64,
    /// Datagrams the sending CPU handed to the adapter.
    pub datagrams_sent: u64,
}

/// What happens to a datagram that does not fit in the adapter's buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// The sending CPU waits until it fits (a blocking driver).
    #[default]
    Block,
    /// It is lost before it reaches the wire (004 s7.4.5: the SBA-200 with
    /// a low peak-rate setting).
    Drop,
}

/// The end system's own costs and limits (004 Annex A, 000 s6). All zero or
/// unlimited by default: a host that does nothing but put cells on its link.
///
/// Sending is serial: for each IP datagram (fragment) the CPU spends
/// `per_datagram`, checks that the adapter buffer has room for all the
/// datagram's cells, spends `per_cell` per cell writing them, and then hands
/// them to the adapter, which sends them at its (peak) cell rate while the
/// CPU goes on with the next datagram. Receiving: each reassembled datagram
/// waits in an input queue of `receive_queue` datagrams and costs
/// `receive_per_datagram` before the transport sees it; a datagram that
/// finds the queue full is dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostModel {
    /// CPU time per datagram sent (the study's interdatagram gap T_d).
    pub per_datagram: Duration,
    /// CPU time per cell sent (the intercell gap: T_c plus the time to move
    /// the cell to the adapter).
    pub per_cell: Duration,
    /// The adapter's transmit buffer, cells (`None`: unlimited).
    pub adapter_buffer: Option<u32>,
    /// What a full adapter buffer does to a datagram.
    pub overflow: Overflow,
    /// CPU time per datagram received.
    pub receive_per_datagram: Duration,
    /// Datagrams the receiving side holds, the one in service included
    /// (`None`: unlimited).
    pub receive_queue: Option<u32>,
}

impl HostModel {
    /// Whether sending goes through the serial CPU (else cells go straight
    /// to the adapter when the transport sends).
    pub fn serial_send(&self) -> bool {
        !self.per_datagram.is_zero() || !self.per_cell.is_zero() || self.adapter_buffer.is_some()
    }

    /// Whether received datagrams go through the input queue.
    pub fn queued_receive(&self) -> bool {
        !self.receive_per_datagram.is_zero() || self.receive_queue.is_some()
    }
}

/// A datagram waiting for the sending CPU.
#[derive(Clone, Debug)]
pub(crate) struct PendingTx {
    pub vc: u32,
    pub datagram: Datagram,
    pub cells: u32,
    /// When the transport sent it.
    pub created: SimTime,
}

/// A datagram waiting for the receiving CPU.
#[derive(Clone, Debug)]
pub(crate) struct PendingRx {
    pub datagram: Datagram,
    pub sent_at: SimTime,
}

/// Where the sending CPU is with the datagram at the head of its queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TxPhase {
    /// Nothing to do.
    #[default]
    Idle,
    /// Spending `per_datagram`; then checks the adapter buffer.
    Header,
    /// Writing the cells; then hands them over.
    Cells,
}

/// A host.
#[derive(Clone, Debug)]
pub struct Host {
    /// Its name in the scenario.
    pub name: String,
    /// Its adapter's output port (set when its link is added).
    pub port: Option<PortId>,
    /// IP MTU in bytes.
    pub mtu: u32,
    /// How IP datagrams are put into AAL5.
    pub encapsulation: Encapsulation,
    /// How datagrams larger than the MTU are cut.
    pub fragmentation: Fragmentation,
    /// Its VCs.
    pub vcs: Vec<HostVc>,
    /// Receive counters.
    pub stats: HostStats,
    /// CPU costs and buffer limits.
    pub model: HostModel,
    pub(crate) tx: VecDeque<PendingTx>,
    /// Cells of the datagrams in `tx` (for the memory guard).
    pub(crate) tx_cells: u64,
    pub(crate) tx_phase: TxPhase,
    pub(crate) rx: VecDeque<PendingRx>,
}

impl Host {
    /// A host with no link yet.
    pub fn new(name: String, mtu: u32, encapsulation: Encapsulation) -> Host {
        Host {
            name,
            port: None,
            mtu,
            encapsulation,
            fragmentation: Fragmentation::default(),
            vcs: Vec::new(),
            stats: HostStats::default(),
            model: HostModel::default(),
            tx: VecDeque::new(),
            tx_cells: 0,
            tx_phase: TxPhase::Idle,
            rx: VecDeque::new(),
        }
    }
}

/// The hosts of a run: their CPUs, their VCs' ends and reassembly.
pub(super) struct Hosts {
    list: Vec<Host>,
}

impl Hosts {
    pub(super) fn new(list: Vec<Host>) -> Hosts {
        Hosts { list }
    }

    /// Host `h`'s name.
    pub(super) fn name(&self, h: HostId) -> &str {
        &self.list[h.idx()].name
    }

    /// The encapsulation host `h` uses over AAL5.
    pub(super) fn encapsulation(&self, h: HostId) -> Encapsulation {
        self.list[h.idx()].encapsulation
    }

    /// The ABR end of the VC at `end`, if the VC is ABR.
    pub(super) fn abr_end(&self, end: VcEnd) -> Option<u32> {
        self.list[end.host.idx()].vcs[end.vc as usize].abr
    }

    /// Every host.
    pub(super) fn all(&self) -> &[Host] {
        &self.list
    }

    /// Host `h`.
    #[inline]
    pub(super) fn get(&self, h: HostId) -> &Host {
        &self.list[h.idx()]
    }

    /// The VC at `end`.
    #[inline]
    pub(super) fn vc(&self, end: VcEnd) -> &HostVc {
        &self.list[end.host.idx()].vcs[end.vc as usize]
    }

    /// The port of host `h`'s adapter.
    #[inline]
    pub(super) fn adapter(&self, h: HostId) -> PortId {
        self.list[h.idx()].port.expect("a host with a VC has a link")
    }

    /// Cells that arrived at the hosts.
    pub(super) fn cells_received(&self) -> u64 {
        self.list.iter().map(|h| h.stats.cells_received).sum()
    }

    /// The datagrams waiting for the hosts' sending and receiving CPUs.
    pub(super) fn datagrams_waiting(&self) -> impl Iterator<Item = &Datagram> {
        let sending = self.list.iter().flat_map(|h| h.tx.iter()).map(|p| &p.datagram);
        sending.chain(self.list.iter().flat_map(|h| h.rx.iter()).map(|p| &p.datagram))
    }

    /// Each host's end-system counters.
    pub(super) fn results(&self) -> Vec<super::HostResult> {
        self.list
            .iter()
            .map(|h| {
                let st = &h.stats;
                let frames = st.frames_received + st.frames_discarded;
                let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
                super::HostResult {
                    name: h.name.clone(),
                    cells_received: st.cells_received,
                    frames_received: st.frames_received,
                    frames_discarded: st.frames_discarded,
                    dead_cells: st.dead_cells,
                    frame_error_ratio: ratio(st.frames_discarded, frames),
                    dead_cell_ratio: ratio(st.dead_cells, st.cells_received),
                    datagrams_sent: st.datagrams_sent,
                    adapter_dropped: st.adapter_dropped,
                    receive_dropped: st.receive_dropped,
                }
            })
            .collect()
    }

    /// Cells of datagrams waiting for host `h`'s sending CPU.
    pub(super) fn cells_waiting_at(&self, h: HostId) -> u64 {
        self.list[h.idx()].tx_cells
    }

    /// Cells of datagrams waiting for the hosts' sending CPUs.
    pub(super) fn cells_waiting(&self) -> u64 {
        self.list.iter().map(|h| h.tx_cells).sum()
    }

    /// Datagrams waiting for the hosts' CPUs, and the entries allocated for them.
    pub(super) fn datagrams(&self) -> (u64, u64) {
        let waiting = self.list.iter().map(|h| (h.tx.len() + h.rx.len()) as u64).sum();
        (waiting, self.list.iter().map(|h| (h.tx.capacity() + h.rx.capacity()) as u64).sum())
    }

    /// What each host's CPUs hold, for the memory guard.
    pub(super) fn tally(&self, tally: &mut super::guard::Tally) {
        for h in &self.list {
            let sending = h.tx_cells + h.tx.len() as u64 * DATAGRAM_CELLS;
            tally.add(sending, || format!("host {}'s sending CPU (datagrams waiting)", h.name));
            let receiving = h.rx.len() as u64 * DATAGRAM_CELLS;
            tally.add(receiving, || format!("host {}'s receiving CPU (datagrams waiting)", h.name));
        }
    }
}

impl Simulation {
    /// A cell source's cell reaches its sink at host `h` on its VC `vc`;
    /// `early`: counted now but arriving then (a link into a host counts
    /// such cells when they are put on it), which a probe of the sink's
    /// rate must know.
    #[inline]
    pub(super) fn raw_received(&mut self, h: HostId, vc: u32, early: Option<SimTime>) {
        let host = &mut self.hosts.list[h.idx()];
        host.stats.cells_received += 1;
        let sink = host.vcs[vc as usize].cell_sink.expect("a cell source's cells arrive at its sink");
        self.sources.received(sink, early);
        self.k.counts.raw_received += 1;
    }

    pub(super) fn host_receive(&mut self, h: HostId, vc: u32, cell: Cell) {
        if cell.carries() == Carries::Nothing {
            // A persistent ABR source's cell: its destination notes the EFCI.
            self.data_cells_at_host(h, vc, cell, 1);
            self.raw_received(h, vc, None);
            return;
        }
        let host = &mut self.hosts.list[h.idx()];
        host.stats.cells_received += 1;
        match cell.carries() {
            Carries::Nothing => unreachable!("taken above"),
            Carries::Rm(id) => {
                self.rm_at_host(h, vc, id);
                return;
            }
            Carries::Frame(_) => self.data_cells_at_host(h, vc, cell, 1),
        }
        let host = &mut self.hosts.list[h.idx()];
        let outcome = host.vcs[vc as usize].reassembler.on_cell(&cell, &self.tables.pdus);
        match outcome {
            Reassembly::Incomplete => {}
            Reassembly::Discarded { cells } => {
                host.stats.frames_discarded += 1;
                host.stats.dead_cells += u64::from(cells);
                if let Some(t) = self.k.trace.as_deref_mut() {
                    t.frame(self.k.now, h.0, vc, false, cells);
                }
            }
            Reassembly::Complete(id) => {
                host.stats.frames_received += 1;
                let pdu = self.tables.pdus.get(id).expect("a complete frame's PDU is live");
                let (datagram, sent_at) = (pdu.payload.clone(), pdu.sent_at);
                if let Some(t) = self.k.trace.as_deref_mut() {
                    t.frame(self.k.now, h.0, vc, true, pdu.cells);
                }
                self.tables.pdus.mark_delivered(id);
                if let Endpoint::UdpSink(f) = datagram.dest {
                    self.transport.udp_arrived(FlowId(f), self.k.now);
                }
                if host.model.queued_receive() {
                    self.enqueue_rx(h, PendingRx { datagram, sent_at });
                } else {
                    self.deliver(datagram, sent_at);
                }
            }
        }
        self.tables.pdus.settle_cell(cell.pdu());
    }

    /// `cells` equal cells that end no frame and are no RM cells reached
    /// host `h` on its VC `vc`, one after the other: what
    /// [`host_receive`](Self::host_receive) does with each, done once.
    pub(super) fn host_receive_run(&mut self, h: HostId, vc: u32, cell: Cell, cells: u32) {
        debug_assert!(!cell.needs_host_event());
        if cell.carries() == Carries::Nothing {
            for _ in 0..cells {
                self.host_receive(h, vc, cell);
            }
            return;
        }
        let host = &mut self.hosts.list[h.idx()];
        host.stats.cells_received += u64::from(cells);
        host.vcs[vc as usize].reassembler.on_cells_before_end(&cell, cells);
        self.data_cells_at_host(h, vc, cell, cells);
        self.tables.pdus.settle_cells(cell.pdu(), cells);
    }

    /// A reassembled datagram joins the host's input queue (or is dropped
    /// if the queue is full).
    pub(super) fn enqueue_rx(&mut self, h: HostId, item: PendingRx) {
        let host = &mut self.hosts.list[h.idx()];
        if host.model.receive_queue.is_some_and(|n| host.rx.len() >= n as usize) {
            host.stats.receive_dropped += 1;
            return;
        }
        host.rx.push_back(item);
        self.k.counts.records_made += super::guard::DATAGRAM_CELLS;
        if host.rx.len() == 1 {
            let t = self.k.now + host.model.receive_per_datagram;
            self.k.queue.push(t, APP, Event::HostRx(h));
        }
    }

    /// The receiving CPU has finished the datagram at the head of the queue.
    pub(super) fn on_host_rx(&mut self, h: HostId) {
        let host = &mut self.hosts.list[h.idx()];
        let item = host.rx.pop_front().expect("a receive event has a datagram");
        if !host.rx.is_empty() {
            let t = self.k.now + host.model.receive_per_datagram;
            self.k.queue.push(t, APP, Event::HostRx(h));
        }
        self.deliver(item.datagram, item.sent_at);
    }

    /// Puts one IP datagram of `ip_bytes` into AAL5 and queues its cells at
    /// the host's adapter.
    pub(super) fn send_datagram(&mut self, from: VcEnd, datagram: Datagram, ip_bytes: u32) {
        let host = &mut self.hosts.list[from.host.idx()];
        let cells = host.encapsulation.cells_for_datagram(ip_bytes);
        if !host.model.serial_send() {
            host.stats.datagrams_sent += 1;
            self.send_cells(from, datagram, cells, self.k.now);
            return;
        }
        host.tx.push_back(PendingTx { vc: from.vc, datagram, cells, created: self.k.now });
        host.tx_cells += u64::from(cells);
        self.k.counts.records_made += super::guard::DATAGRAM_CELLS + u64::from(cells);
        if host.tx_phase == TxPhase::Idle {
            host.tx_phase = TxPhase::Header;
            let t = self.k.now + host.model.per_datagram;
            self.k.queue.push(t, APP, Event::HostTx(from.host));
        }
    }

    /// The sending CPU finished a step of the datagram at the head of its
    /// queue: the per-datagram work (check the adapter buffer), or writing
    /// the cells (hand them over, go on with the next datagram).
    pub(super) fn on_host_tx(&mut self, h: HostId) {
        let host = &mut self.hosts.list[h.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let head = host.tx.front().expect("the sending CPU has a datagram");
        let (cells, model) = (head.cells, host.model);
        if host.tx_phase == TxPhase::Header {
            if let Some(cap) = model.adapter_buffer {
                self.settle(self.k.now, None, Reader::Adapter(port));
                let queued = self.net.port_mut(port).queued_at(self.k.now);
                let excess = (queued + cells).saturating_sub(cap);
                if excess > 0 {
                    match model.overflow {
                        Overflow::Block => {
                            // Wait until enough cells have left (the adapter
                            // sends one per cell time while it has any).
                            let cell_time = self.net.port(port).rate.cell_time();
                            let wait = cell_time.saturating_mul(u64::from(excess));
                            self.k.queue.push(self.k.now.saturating_add(wait), APP, Event::HostTx(h));
                        }
                        Overflow::Drop => {
                            let host = &mut self.hosts.list[h.idx()];
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
                self.hosts.list[h.idx()].tx_phase = TxPhase::Cells;
                let write = model.per_cell.saturating_mul(u64::from(cells));
                self.k.queue.push(self.k.now.saturating_add(write), APP, Event::HostTx(h));
                return;
            }
        }
        let host = &mut self.hosts.list[h.idx()];
        let item = host.tx.pop_front().expect("the sending CPU has a datagram");
        host.tx_cells -= u64::from(item.cells);
        host.stats.datagrams_sent += 1;
        let from = VcEnd { host: h, vc: item.vc };
        self.send_cells(from, item.datagram, item.cells, item.created);
        self.next_tx(h);
    }

    /// The sending CPU starts on its next datagram, if any.
    pub(super) fn next_tx(&mut self, h: HostId) {
        let host = &mut self.hosts.list[h.idx()];
        if host.tx.is_empty() {
            host.tx_phase = TxPhase::Idle;
        } else {
            host.tx_phase = TxPhase::Header;
            self.k.queue.push(self.k.now + host.model.per_datagram, APP, Event::HostTx(h));
        }
    }

    /// Queues the `cells` cells of one PDU at the host's adapter (`created`:
    /// when its transport sent it, for delays).
    pub(super) fn send_cells(&mut self, from: VcEnd, datagram: Datagram, cells: u32, created: SimTime) {
        let host = &self.hosts.list[from.host.idx()];
        let port = host.port.expect("a host with a VC has a link");
        let vc = &host.vcs[from.vc as usize];
        let (label, port_vc, abr) = (vc.label, vc.port_vc, vc.abr);
        // Room in the PDU table, for this frame and for every frame held at
        // an ABR end (`sim/abr.rs`, "Frames held").
        let in_flight = self.tables.frames_in_flight() + self.abr.frames_held();
        if in_flight >= u64::from(crate::pdu::MAX_PDUS_IN_FLIGHT) {
            self.k.stop(format!(
                "stopped at t = {:.6} s: more than {} AAL5 frames are in flight at once (the PDU table is \
                 full); host {} offers far more than the network carries",
                self.k.now.as_secs_f64(),
                crate::pdu::MAX_PDUS_IN_FLIGHT,
                host.name
            ));
            return;
        }
        self.k.counts.cells_created += u64::from(cells);
        self.k.counts.records_made += super::guard::FRAME_CELLS;
        if let Some(e) = abr {
            self.abr_enqueue(e, datagram, cells, created);
            return;
        }
        let pdu = self.tables.pdus.insert(datagram, cells, created).expect("room checked above");
        self.offer_frame(port, label, pdu, port_vc, cells);
    }
}
