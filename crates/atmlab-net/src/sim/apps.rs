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
    /// When the application stops writing (a transfer of a duration).
    pub stop: Option<SimTime>,
    pub(crate) rto_timer: LazyTimer,
    pub(crate) delack_timer: LazyTimer,
    pub(crate) write_timer: LazyTimer,
}

/// A UDP source and its sink: payloads and intervals from their
/// distributions (constant for CBR: the `k`-th datagram at exactly `start +
/// k * interval`).
#[derive(Clone, Debug)]
pub struct UdpCbr {
    /// The application's name in the scenario.
    pub name: String,
    /// The sender's end.
    pub src: VcEnd,
    /// The receiver's end.
    pub dst: VcEnd,
    /// First datagram.
    pub start: SimTime,
    /// Datagrams to send (`None`: until the end of the run).
    pub count: Option<u64>,
    /// The largest write the sending program accepts; a larger payload is
    /// refused and nothing is sent (udpt refuses bursts above 9000 bytes).
    pub max_payload: Option<u32>,
    /// Counters.
    pub stats: UdpStats,
    /// IP reassembly of the flow's fragmented datagrams.
    pub(crate) fragments: crate::ip::FragmentReassembler,
    /// Record the arrival times (last cell at the receiving host) of this
    /// many frames from this time on.
    pub record: Option<(SimTime, u32)>,
    /// The recorded arrival times.
    pub arrivals: Vec<SimTime>,
    /// How the payload varies (`Constant(payload)` for CBR).
    pub payload_dist: Dist,
    /// How the time between datagrams varies (`Constant(interval)`: the
    /// exact schedule `start + k * interval`).
    pub interval_dist: Dist,
    /// Stop after this many user bytes have been sent.
    pub bytes: Option<u64>,
    /// Send nothing at or after this time.
    pub stop: Option<SimTime>,
    /// User bytes sent so far.
    pub bytes_sent: u64,
    /// The streams the payload and interval draws come from (`None` when
    /// constant).
    pub(crate) rng_payload: Option<Box<atmlab_engine::SimRng>>,
    pub(crate) rng_interval: Option<Box<atmlab_engine::SimRng>>,
}

/// Counters of a UDP flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpStats {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received (all their fragments, if fragmented).
    pub received: u64,
    /// IP fragments sent (equal to `sent` when nothing is fragmented).
    pub fragments_sent: u64,
    /// User bytes received.
    pub bytes_received: u64,
    /// Sum of one-way delays of received datagrams, ps.
    pub delay_sum_ps: u128,
    /// Largest one-way delay, ps.
    pub delay_max_ps: u64,
    /// Smallest one-way delay, ps (0 before the first datagram).
    pub delay_min_ps: u64,
    /// When the first datagram was sent.
    pub first_sent: Option<SimTime>,
    /// When the last datagram was received (after the receiving CPU).
    pub last_received: Option<SimTime>,
}

impl UdpCbr {
    /// A frame of this flow reached its host at `t`.
    pub(crate) fn record_arrival(&mut self, t: SimTime) {
        if let Some((from, n)) = self.record
            && t >= from
            && self.arrivals.len() < n as usize
        {
            self.arrivals.push(t);
        }
    }

    /// Whether the sending program refuses the (constant) payload size.
    pub fn is_refused(&self) -> bool {
        matches!(self.payload_dist, Dist::Constant(v) if self.max_payload.is_some_and(|m| v > u64::from(m)))
    }

    /// When datagram `k` is due (`now`: when datagram `k - 1` was sent).
    pub fn due(&mut self, k: u64, now: SimTime) -> Option<SimTime> {
        if self.count.is_some_and(|n| k >= n) || self.is_refused() || self.bytes.is_some_and(|b| self.bytes_sent >= b) {
            return None;
        }
        let t = match (&mut self.rng_interval, k) {
            (_, 0) => self.start,
            (None, _) => {
                let Dist::Constant(ps) = self.interval_dist else { unreachable!("a varying interval has a stream") };
                self.start.checked_add(Duration::from_ps(ps).checked_mul(k)?)?
            }
            (Some(rng), _) => {
                // At least 1 ps, so that a draw of 0 cannot stall the clock.
                let gap = self.interval_dist.sample(rng, u64::MAX).max(1);
                now.checked_add(Duration::from_ps(gap))?
            }
        };
        if self.stop.is_some_and(|s| t >= s) { None } else { Some(t) }
    }

    /// The payload of the next datagram.
    pub(crate) fn next_payload(&mut self) -> u32 {
        match &mut self.rng_payload {
            None => {
                let Dist::Constant(v) = self.payload_dist else { unreachable!("a varying payload has a stream") };
                v as u32
            }
            Some(rng) => self.payload_dist.sample(rng, u64::from(crate::sim::MAX_UDP_PAYLOAD)) as u32,
        }
    }
}

/// How a quantity of an application varies from one TSDU to the next (the
/// CM Toolset's classes, 000 s5.2): sizes in bytes, times in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Constant(u64),
    /// Exponentially distributed with this mean (rounded to an integer).
    Exponential {
        /// The mean.
        mean: f64,
    },
    /// `values[1]` with probability `p`, else `values[0]`.
    Bivalue {
        /// The two values.
        values: [u64; 2],
        /// Probability of the second.
        p: f64,
    },
}

impl Dist {
    /// Whether every draw is the same.
    pub fn is_constant(&self) -> bool {
        matches!(self, Dist::Constant(_))
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Constant(v) => v as f64,
            Dist::Exponential { mean } => mean,
            Dist::Bivalue { values: [a, b], p } => a as f64 * (1.0 - p) + b as f64 * p,
        }
    }

    /// One draw from `rng`, at most `cap`.
    pub fn sample(&self, rng: &mut atmlab_engine::SimRng, cap: u64) -> u64 {
        use rand::RngExt;
        use rand_distr::Distribution;
        let v = match *self {
            Dist::Constant(v) => v,
            Dist::Exponential { mean } => {
                let exp = rand_distr::Exp::new(1.0 / mean).expect("a positive mean (checked when built)");
                exp.sample(rng).round() as u64
            }
            Dist::Bivalue { values, p } => values[usize::from(rng.random_bool(p))],
        };
        v.min(cap)
    }
}
