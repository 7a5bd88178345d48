//! Applications and the transport connections they drive.

use super::timer::LazyTimer;
use crate::ids::HostId;
use crate::tcp::{TcpReceiver, TcpSender};
use atmlab_engine::{Duration, SimTime};

/// Where one end of a flow sits: a host and its VC index there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcEnd {
    /// The host.
    pub host: HostId,
    /// The VC's index at the host.
    pub vc: u32,
}

/// A bulk transfer over TCP: a greedy sender (infinite data, or `bytes`)
/// and a greedy reader at the far end.
#[derive(Clone, Debug)]
pub struct TcpConn {
    /// The application's name in the scenario.
    pub name: String,
    /// The data source side.
    pub sender: TcpSender,
    /// The sink side.
    pub receiver: TcpReceiver,
    /// The sender's end.
    pub src: VcEnd,
    /// The receiver's end.
    pub dst: VcEnd,
    /// When the application opens the connection.
    pub start: SimTime,
    /// Bytes to transfer (`None`: forever).
    pub bytes: Option<u64>,
    /// When the receiver got the last byte of a finite transfer.
    pub completed_at: Option<SimTime>,
    pub(crate) rto_timer: LazyTimer,
    pub(crate) delack_timer: LazyTimer,
}

/// A constant-rate UDP source and its sink: `payload` bytes every `interval`
/// from `start`, the `k`-th at exactly `start + k * interval`.
#[derive(Clone, Debug)]
pub struct UdpCbr {
    /// The application's name in the scenario.
    pub name: String,
    /// The sender's end.
    pub src: VcEnd,
    /// The receiver's end.
    pub dst: VcEnd,
    /// User data bytes per datagram.
    pub payload: u32,
    /// Time between datagrams.
    pub interval: Duration,
    /// First datagram.
    pub start: SimTime,
    /// Datagrams to send (`None`: until the end of the run).
    pub count: Option<u64>,
    /// The largest write the sending program accepts; a larger payload is
    /// refused and nothing is sent (udpt refuses bursts above 9000 bytes).
    pub max_payload: Option<u32>,
    /// Counters.
    pub stats: UdpStats,
}

/// Counters of a UDP flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// User bytes received.
    pub bytes_received: u64,
    /// Sum of one-way delays of received datagrams, ps.
    pub delay_sum_ps: u128,
    /// Largest one-way delay, ps.
    pub delay_max_ps: u64,
}

impl UdpCbr {
    /// Whether the sending program refuses the payload size.
    pub fn is_refused(&self) -> bool {
        self.max_payload.is_some_and(|m| self.payload > m)
    }

    /// When datagram `k` is due.
    pub fn due(&self, k: u64) -> Option<SimTime> {
        if self.count.is_some_and(|n| k >= n) || self.is_refused() {
            return None;
        }
        self.start.checked_add(self.interval.checked_mul(k)?)
    }
}
