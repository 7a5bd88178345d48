//! TCP as the 1990s BSD-derived stacks and simulators did it.
//!
//! A connection is a one-way transfer: a [`TcpSender`] at the data source
//! and a [`TcpReceiver`] at the sink (the studies use unidirectional traffic;
//! the receiver sends only ACKs). Both are *sans-I/O* state machines in the
//! smoltcp style: they take the current time and an incoming segment or timer
//! expiry, append the segments they want sent to an output vector, and expose
//! the deadline of their timer. The simulation turns segments into IP
//! datagrams and cells, and keeps at most one event per timer in the queue.
//!
//! See `docs/models/tcp.md` for the rules each variant follows and the choices
//! made where sources differ.

mod ranges;
mod receiver;
mod rtt;
mod scoreboard;
mod segment;
mod sender;

pub use receiver::{ReceiverStats, TcpReceiver};
pub use rtt::{RtoAlgorithm, RtoConfig, RttEstimator};
pub use scoreboard::Scoreboard;
pub use segment::{SackBlocks, TcpFlags, TcpOptions, TcpSegment};
pub use sender::{MCLBYTES, Recovery, SenderStats, TcpSender};

use atmlab_engine::{Duration, SimTime};
use serde::{Deserialize, Serialize};

/// The congestion-control variant of a sender.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// Slow start, congestion avoidance and retransmission timeout only (no
    /// fast retransmit): the "Vanilla" TCP of 97-0424.
    Vanilla,
    /// Vanilla plus fast retransmit on duplicate ACKs, then slow start from
    /// one segment (4.3BSD-Tahoe).
    Tahoe,
    /// Fast retransmit and fast recovery (RFC 2001, 4.3BSD-Reno).
    Reno,
    /// Reno that stays in fast recovery until all data outstanding at the
    /// loss is acknowledged, retransmitting on each partial ACK (RFC 6582).
    NewReno,
    /// Selective acknowledgements (RFC 2018) with Fall and Floyd's "sack1"
    /// sender: a scoreboard and `pipe` during recovery.
    Sack,
}

impl TcpVariant {
    /// The name used in scenarios and results.
    pub fn name(self) -> &'static str {
        match self {
            TcpVariant::Vanilla => "vanilla",
            TcpVariant::Tahoe => "tahoe",
            TcpVariant::Reno => "reno",
            TcpVariant::NewReno => "newreno",
            TcpVariant::Sack => "sack",
        }
    }
}

/// How a TCP timer maps a timeout onto the clock.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimerModel {
    /// BSD: timers count down on a periodic tick (aligned to `t = 0`), so a
    /// timeout of `n` ticks fires at the `n`-th tick boundary after it was
    /// set, i.e. between `n - 1` and `n` ticks later.
    #[default]
    TickAligned,
    /// BSD ticks as `TickAligned`, but each host's clock ticks with its own
    /// phase (a uniform draw per host: the machines did not boot together),
    /// so the timers of different hosts do not fire in step.
    HostTicks,
    /// ns-2: a timeout of `d` fires exactly `d` after it was set.
    Exact,
}

impl TimerModel {
    /// When a timeout of `delay` set at `now` fires, for a timer ticking every
    /// `tick`; `phase` in [0, 1) places the ticks at `(k + phase) * tick`
    /// (`HostTicks` only).
    pub fn expiry(self, now: SimTime, delay: Duration, tick: Duration, phase: f64) -> SimTime {
        let tick = tick.as_ps();
        let offset = match self {
            TimerModel::Exact => return now + delay,
            TimerModel::TickAligned => 0,
            TimerModel::HostTicks => ((phase * tick as f64) as u64).min(tick - 1),
        };
        let ticks = delay.as_ps().div_ceil(tick).max(1);
        // Shift time so the ticks fall on multiples of `tick`, and back.
        let shift = tick - offset;
        SimTime::from_ps(((now.as_ps() + shift) / tick + ticks) * tick - shift)
    }

    /// Whether the timer follows its host's tick phase.
    pub fn uses_host_phase(self) -> bool {
        self == TimerModel::HostTicks
    }
}

/// How a receiver with delayed ACKs decides when to acknowledge
/// (`docs/models/tcp.md`, "Receiver and ACKs").
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelayedAckRule {
    /// BSD (RFC 1122): count segments; the second in-order segment is
    /// acknowledged at once, a lone one when the timer fires.
    #[default]
    Bsd,
    /// Solaris 2.x (the Mentat-derived `tcp.c` of Solaris 2.5 and 2.6):
    /// count the unacknowledged *bytes* against a limit in units of the MSS
    /// that starts at one MSS, grows by one MSS with each ACK the limit
    /// forces, up to a cap (`delayed_ack_max`), and falls back to one MSS
    /// when the timer or a duplicate segment shows the ACKs came too late;
    /// a segment shorter than the MSS is acknowledged at once only if the
    /// data it follows is unacknowledged and not a whole number of MSS.
    /// The timer is restarted by every segment that defers its ACK.
    Solaris,
}

/// The receive window, in whole MSS, below which Solaris 2.x does not go
/// (`tcp_recv_hiwat_minmss`, 4 in Solaris 2.5 and 2.6).
pub const SOLARIS_RECV_MIN_MSS: u64 = 4;

/// What resets the exponential backoff of the retransmission timer.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackoffReset {
    /// A valid RTT sample (BSD; Karn: only new data sent after every
    /// retransmission is timed, so the backoff holds until every
    /// retransmitted segment is acknowledged: 002 s5.3's modification (1)).
    #[default]
    RttSample,
    /// Any ACK of new data, the retransmission's included.
    NewAck,
}

/// RFC 1323 window scaling policy.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowScaling {
    /// Offer the option when the window exceeds 65535 bytes.
    #[default]
    Auto,
    /// Always offer it.
    On,
    /// Never offer it (windows above 65535 bytes are then capped).
    Off,
}

/// Parameters of one TCP connection (both ends use the same).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Congestion-control variant of the sender.
    pub variant: TcpVariant,
    /// Maximum segment size in bytes (payload).
    pub mss: u32,
    /// Receive buffer = largest window the receiver advertises, bytes.
    pub window: u32,
    /// Window scaling policy.
    pub window_scaling: WindowScaling,
    /// Initial congestion window, segments.
    pub initial_cwnd: u32,
    /// Initial slow-start threshold, bytes (`None`: the window).
    pub initial_ssthresh: Option<u32>,
    /// Timer granularity and RTO bounds.
    pub rto: RtoConfig,
    /// How the retransmission timer is mapped onto ticks.
    pub rto_timer: TimerModel,
    /// Duplicate ACKs that trigger fast retransmit (Tahoe, Reno).
    pub dupack_threshold: u32,
    /// Delay ACKs (RFC 1122: ACK every second segment, or when the timer
    /// fires).
    pub delayed_ack: bool,
    /// The delayed-ACK timeout (BSD: the 200 ms fast timer).
    pub delayed_ack_timeout: Duration,
    /// How the delayed-ACK timer is mapped onto ticks of `delayed_ack_timeout`.
    pub delayed_ack_timer: TimerModel,
    /// How delayed ACKs are counted: BSD's segments or Solaris 2.x's bytes
    /// in units of the MSS (only with `delayed_ack`).
    pub delayed_ack_rule: DelayedAckRule,
    /// The Solaris rule's cap on the data whose ACK may be deferred, in MSS
    /// (`tcp_rack_abs_max`; Solaris 7-9's `tcp_deferred_acks_max`).
    /// `None`: Solaris 2.x's own, half the receive window in whole MSS
    /// ([`TcpConfig::deferred_ack_cap`]).
    pub delayed_ack_max: Option<u32>,
    /// SACK blocks a receiver puts in one ACK (RFC 2018 allows 4 without
    /// timestamps; ns-2's default is 3).
    pub max_sack_blocks: u8,
    /// Timer-driven stretch ACKs (Linux 2.0, 002 s4.3): the receiver sends
    /// ACKs only when a timer of this delay, started by the first segment
    /// not yet acknowledged, fires; one cumulative ACK covers everything
    /// since (duplicates included). Overrides `delayed_ack`.
    pub stretch_ack: Option<Duration>,
    /// What resets the retransmission backoff.
    pub backoff_reset: BackoffReset,
    /// The modified TCP of 002 s5.3: no window growth (no fast-recovery
    /// inflation) while a fast-retransmitted segment is unacknowledged.
    pub freeze_window_in_fast_recovery: bool,
    /// The modified TCP of 002 s5.3: a retransmission timeout does not reset
    /// the duplicate-ACK counter.
    pub keep_dupacks_on_timeout: bool,
    /// The phase of this end's host clock, in [0, 1) of a tick (set by the
    /// network builder for `HostTicks` timers; 0 otherwise).
    pub clock_phase: f64,
    /// The BSD socket send path (`None`: a greedy source whose data is
    /// always there and segments are always full, the default).
    pub socket: Option<SocketConfig>,
}

/// The sending application and its socket, as 4.4BSD's `sosend` and
/// `tcp_output` have them (`docs/models/tcp.md`, "Socket send path"): the
/// application writes `write_size` bytes per write call into a send buffer
/// of `send_buffer` bytes; a call copies what fits and blocks while the
/// buffer has less than `min(MCLBYTES, send_buffer)` bytes free (the send
/// low-water mark) and the rest of the write does not fit; TCP sends from
/// the buffer under the window and Nagle's rule (RFC 896 as `tcp_output`
/// states it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketConfig {
    /// The socket send buffer (`SO_SNDBUF`, `sb_hiwat`), bytes.
    pub send_buffer: u32,
    /// Bytes per write call (the application's TSDU).
    pub write_size: u32,
    /// The application's time per write call before it copies (system
    /// call and per-call work); 0: the next write follows at once.
    pub write_cost: Duration,
}

impl SocketConfig {
    /// The send low-water mark: 4.4BSD `soreserve` sets `sb_lowat` to
    /// `MCLBYTES`, at most the buffer.
    pub fn low_water(&self) -> u64 {
        u64::from(self.send_buffer).min(MCLBYTES)
    }
}

impl TcpConfig {
    /// The 1990s defaults: Reno, MSS 512, 64 KB window, 100 ms ticks, RTO
    /// between 2 ticks and 64 s (3 s before the first sample), three
    /// duplicate ACKs, no delayed ACK.
    pub fn classic() -> TcpConfig {
        TcpConfig {
            variant: TcpVariant::Reno,
            mss: 512,
            window: 65_535,
            window_scaling: WindowScaling::Auto,
            initial_cwnd: 1,
            initial_ssthresh: None,
            rto: RtoConfig {
                tick: Duration::from_ms(100),
                initial_rto: Duration::from_secs(3),
                min_rto: Duration::ZERO,
                max_rto: Duration::from_secs(64),
                algorithm: RtoAlgorithm::Ns2,
            },
            rto_timer: TimerModel::TickAligned,
            dupack_threshold: 3,
            delayed_ack: false,
            delayed_ack_timeout: Duration::from_ms(200),
            delayed_ack_timer: TimerModel::TickAligned,
            delayed_ack_rule: DelayedAckRule::Bsd,
            delayed_ack_max: None,
            max_sack_blocks: 3,
            stretch_ack: None,
            backoff_reset: BackoffReset::RttSample,
            freeze_window_in_fast_recovery: false,
            keep_dupacks_on_timeout: false,
            clock_phase: 0.0,
            socket: None,
        }
    }

    /// The Solaris rule's cap, in MSS, on the data whose ACK may be
    /// deferred: `delayed_ack_max` if set, else what Solaris 2.5 and 2.6
    /// compute in `tcp_rwnd_set` (`tcp_rack_abs_max = (rwnd / mss / 2) *
    /// mss`) for the receive window `rwnd` they use: the receive buffer
    /// rounded up to whole MSS, at least [`SOLARIS_RECV_MIN_MSS`] of them
    /// (`tcp_mss_set`; Solaris 2.5 on a passive open, Solaris 2.6 always).
    pub fn deferred_ack_cap(&self) -> u64 {
        if let Some(cap) = self.delayed_ack_max {
            return u64::from(cap);
        }
        let mss = u64::from(self.mss.max(1));
        u64::from(self.window).div_ceil(mss).max(SOLARIS_RECV_MIN_MSS) / 2
    }

    /// Whether this end offers the window scale option.
    pub fn offers_window_scale(&self) -> bool {
        match self.window_scaling {
            WindowScaling::Auto => self.window > 65_535,
            WindowScaling::On => true,
            WindowScaling::Off => false,
        }
    }

    /// The smallest shift `s` with `window >> s <= 65535` (at most 14).
    pub fn window_shift(&self) -> u8 {
        let mut s = 0;
        while (self.window >> s) > 65_535 && s < 14 {
            s += 1;
        }
        s
    }
}

#[cfg(test)]
mod tests;
