//! End systems: an IP host with one ATM adapter.

use std::collections::VecDeque;

use crate::aal5::{Encapsulation, Reassembler};
use crate::atm::VcLabel;
use crate::ids::PortId;
use crate::ip::Fragmentation;
use crate::pdu::{Endpoint, Payload};
use atmlab_engine::{Duration, SimTime};

/// One VC as a host sees it: the label and port slot it sends with, and the
/// AAL5 receiver for the cells that arrive on it.
#[derive(Clone, Debug)]
pub struct HostVc {
    /// The label of the VC on the host's link.
    pub label: VcLabel,
    /// The VC's index at the host's adapter port.
    pub slot: u16,
    /// AAL5 receiver.
    pub reassembler: Reassembler,
    /// The cell source whose cells arrive on this VC, if any (they are not
    /// AAL5 frames; the host only counts them).
    pub cell_sink: Option<u32>,
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
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
    pub dest: Endpoint,
    pub payload: Payload,
    pub cells: u32,
    /// When the transport sent it.
    pub created: SimTime,
}

/// A datagram waiting for the receiving CPU.
#[derive(Clone, Debug)]
pub(crate) struct PendingRx {
    pub dest: Endpoint,
    pub payload: Payload,
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
