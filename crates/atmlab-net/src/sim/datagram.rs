//! What a PDU carries in the simulation: one IP datagram, as its transport
//! payload and the endpoint that consumes it at the receiving host. Cells
//! refer to it through the PDU table (`pdu.rs`), which does not know what it
//! holds.

use crate::tcp::TcpSegment;

/// The endpoint that consumes a datagram at the receiving host.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Endpoint {
    /// The receiving side of TCP connection `n` (data segments).
    TcpReceiver(u32),
    /// The sending side of TCP connection `n` (ACKs, SYN-ACK).
    TcpSender(u32),
    /// The sink of UDP flow `n`.
    UdpSink(u32),
    /// External host `n` (by its host index): the packet leaves the
    /// network there as bytes (`sim/external.rs`).
    External(u32),
}

/// What an IP datagram carries.
#[derive(Clone, Debug)]
pub enum Payload {
    /// A TCP segment.
    Tcp(TcpSegment),
    /// A UDP datagram with `len` bytes of user data, the `seq`-th of its flow.
    Udp {
        /// User data bytes.
        len: u32,
        /// Sequence number of the datagram within its flow.
        seq: u64,
    },
    /// Fragment `index` of `count` of a UDP datagram too large for the MTU
    /// (see [`crate::ip`]); the receiver delivers the datagram when all have
    /// arrived.
    UdpFragment {
        /// User data bytes of the whole datagram.
        len: u32,
        /// Sequence number of the datagram within its flow.
        seq: u64,
        /// This fragment's position, from 0.
        index: u32,
        /// Fragments of the datagram.
        count: u32,
    },
    /// An IP packet from outside the simulation: its bytes wait in the
    /// external part's arena under this id (`sim/external.rs`), so that
    /// no other payload carries bytes.
    External(u32),
}

impl Payload {
    /// The sequence number of a UDP datagram (or of the datagram a fragment
    /// belongs to); `None` for TCP.
    pub fn udp_seq(&self) -> Option<u64> {
        match *self {
            Payload::Udp { seq, .. } | Payload::UdpFragment { seq, .. } => Some(seq),
            Payload::Tcp(_) | Payload::External(_) => None,
        }
    }
}

/// One IP datagram on its way: its payload and who consumes it.
#[derive(Clone, Debug)]
pub struct Datagram {
    /// Who consumes it at the far end.
    pub dest: Endpoint,
    /// The transport payload.
    pub payload: Payload,
}
