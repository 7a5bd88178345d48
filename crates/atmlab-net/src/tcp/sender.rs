//! The sending side of a TCP connection.
//!
//! One state machine serves every variant; they differ only in what they do
//! on duplicate ACKs and during recovery (see `docs/models/tcp.md`):
//!
//! | variant | fast retransmit | during recovery | leaves recovery on |
//! |---|---|---|---|
//! | Vanilla | no | - | - |
//! | Tahoe | yes, then `cwnd = 1`, go back N | - | - |
//! | Reno | yes | window inflation per duplicate ACK | any new ACK |
//! | NewReno | yes | inflation; a partial ACK retransmits the next hole | an ACK at or above `recover` |
//! | SACK | yes | `pipe` accounting, holes first, then new data | an ACK at or above `recover` |

use super::rtt::{RtoAlgorithm, RttEstimator, solaris_ms_to_ticks};
use super::scoreboard::Scoreboard;
use super::segment::{TcpFlags, TcpOptions, TcpSegment};
use super::{BackoffReset, SocketConfig, TcpConfig, TcpVariant};
use atmlab_engine::SimTime;
use std::collections::BTreeMap;

/// 4.4BSD's mbuf cluster size (`param.h`), the default send low-water mark.
pub const MCLBYTES: u64 = 2048;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Closed,
    SynSent,
    Established,
}

/// Where the sender is in repairing losses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Recovery {
    /// Nothing to repair (or, for Vanilla and Tahoe, repairing by go-back-N).
    Open,
    /// Reno and NewReno fast recovery (RFC 2001 s4, RFC 6582 s3.2).
    Fast {
        /// Window inflation by duplicate ACKs, kept apart from `cwnd` so that
        /// a timeout halves the real window (ns-2's `dupwnd_`).
        dupwnd: u64,
        /// NewReno: the retransmit timer has been reset by a partial ACK
        /// (only the first partial ACK resets it, RFC 6582 s3.2 step 5).
        partial_acked: bool,
    },
    /// SACK recovery as Fall and Floyd's sack1 (RFC 2018 scoreboard).
    Sack {
        /// Bytes estimated in the network.
        pipe: i64,
        /// Every hole below this has been retransmitted in this recovery.
        high_rxt: u64,
    },
    /// After a retransmission timeout: going back N until everything sent
    /// before it (`recover`) is acknowledged; no fast retransmit meanwhile
    /// (RFC 6582 s4.1, "careful").
    Loss,
}

/// Counters of a sender.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Data segments sent again.
    pub retransmitted_segments: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast retransmit / recovery).
    pub fast_retransmits: u64,
    /// ACKs received.
    pub acks_received: u64,
    /// Duplicate ACKs received.
    pub dupacks_received: u64,
}

/// The sending side of one connection (infinite or finite data).
#[derive(Clone, Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    state: State,
    iss: u64,
    peer_iss: u64,
    mss: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    end: u64,
    cwnd: u64,
    ssthresh: u64,
    snd_wnd: u64,
    /// The largest window the peer has offered (BSD `max_sndwnd`).
    max_sndwnd: u64,
    snd_scale: u8,
    dupacks: u32,
    /// Highest sequence sent when the last fast retransmit or timeout
    /// happened; no new fast retransmit below it (RFC 6582 "careful").
    recover: u64,
    recovery: Recovery,
    /// SACK was negotiated.
    sack: bool,
    scoreboard: Scoreboard,
    rtt: RttEstimator,
    timed: Option<(u64, SimTime)>,
    rto_deadline: Option<SimTime>,
    /// Solaris 2.5 (`rto_algorithm = "solaris25"`): `tcp_csuna`, the ACK
    /// beyond which samples are clean (no retransmission in flight).
    sol_csuna: u64,
    /// Solaris 2.5: each unacknowledged segment's start -> (end, time of
    /// its last transmission) (`b_prev`, per segment here).
    sol_sent: BTreeMap<u64, (u64, SimTime)>,
    /// Solaris 2.5: `tcp_timer_interval` in ms.
    sol_interval: i64,
    /// Socket send path: one past the last byte the application has written
    /// into the send buffer (`u64::MAX` without the socket path: the data
    /// is always there).
    buf_end: u64,
    /// Socket send path: bytes of the current write call not yet copied.
    write_left: u64,
    /// Socket send path: the next write call starts copying at this time
    /// (after its `write_cost`).
    write_at: Option<SimTime>,
    /// Socket send path: the application has stopped writing.
    writer_done: bool,
    /// Counters.
    pub stats: SenderStats,
}

impl TcpSender {
    /// A closed sender that will send `bytes` bytes (`None`: forever).
    pub fn new(cfg: TcpConfig, bytes: Option<u64>) -> TcpSender {
        let iss = 0;
        let mss = u64::from(cfg.mss);
        let ssthresh = u64::from(cfg.initial_ssthresh.unwrap_or(cfg.window));
        TcpSender {
            rtt: RttEstimator::new(cfg.rto),
            state: State::Closed,
            iss,
            peer_iss: 0,
            mss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            end: bytes.map_or(u64::MAX, |b| iss + 1 + b),
            cwnd: u64::from(cfg.initial_cwnd) * mss,
            ssthresh,
            snd_wnd: 0,
            max_sndwnd: 0,
            snd_scale: 0,
            dupacks: 0,
            recover: iss,
            recovery: Recovery::Open,
            sack: false,
            scoreboard: Scoreboard::default(),
            timed: None,
            rto_deadline: None,
            sol_csuna: iss + 1,
            sol_sent: BTreeMap::new(),
            sol_interval: 0,
            buf_end: if cfg.socket.is_some() { iss + 1 } else { u64::MAX },
            write_left: 0,
            write_at: None,
            writer_done: false,
            stats: SenderStats::default(),
            cfg,
        }
    }

    /// The connection's parameters.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Congestion window in bytes (without fast-recovery inflation).
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold in bytes.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    /// Oldest unacknowledged sequence number.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next sequence number to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// Highest sequence number sent plus one.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// The negotiated segment size.
    pub fn mss(&self) -> u32 {
        self.mss as u32
    }
    /// The window the peer advertised, in bytes.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }
    /// Duplicate ACKs counted toward the next fast retransmit.
    pub fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// Where the sender is in repairing losses.
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }
    /// Whether the sender is in fast recovery (Reno, NewReno) or SACK recovery.
    pub fn in_fast_recovery(&self) -> bool {
        matches!(self.recovery, Recovery::Fast { .. } | Recovery::Sack { .. })
    }
    /// Whether SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack
    }
    /// The SACK scoreboard.
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.scoreboard
    }
    /// SACK: the estimate of bytes in the network during recovery (0 outside it).
    pub fn pipe(&self) -> i64 {
        match self.recovery {
            Recovery::Sack { pipe, .. } => pipe,
            _ => 0,
        }
    }

    /// Reno/NewReno: the window inflation of fast recovery (0 outside it).
    fn dupwnd(&self) -> u64 {
        match self.recovery {
            Recovery::Fast { dupwnd, .. } => dupwnd,
            _ => 0,
        }
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// When the retransmission timer fires, if it runs.
    pub fn rto_deadline(&self) -> Option<SimTime> {
        self.rto_deadline
    }
    /// The application stops writing: the transfer ends with the data sent
    /// so far (with the socket send path: written into the send buffer so
    /// far, which TCP still sends). Returns the transfer's length in bytes.
    pub fn stop_writing(&mut self) -> u64 {
        let first = self.iss + 1;
        let written = if self.cfg.socket.is_some() { self.buf_end } else { self.snd_max };
        self.end = self.end.min(written.max(first));
        self.writer_done = true;
        self.write_at = None;
        self.end - first
    }

    /// The end of the data TCP may send now: the transfer's end, or with
    /// the socket send path what the application has written.
    fn data_end(&self) -> u64 {
        self.end.min(self.buf_end)
    }

    /// Socket send path: bytes in the send buffer (BSD `so_snd.sb_cc`:
    /// unacknowledged plus unsent).
    pub fn buffered(&self) -> u64 {
        if self.cfg.socket.is_none() { 0 } else { self.data_end().saturating_sub(self.snd_una.max(self.iss + 1)) }
    }

    /// Socket send path: when the application's next write call starts
    /// copying (it is spending `write_cost` until then).
    pub fn write_deadline(&self) -> Option<SimTime> {
        self.write_at
    }

    /// Socket send path: the application's write call has spent its
    /// `write_cost` (the caller checks the deadline); it copies what fits.
    pub fn on_write_timer(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        if self.write_at.is_some_and(|t| t <= now) {
            self.write_at = None;
            self.write_left = self.cfg.socket.map_or(0, |s| u64::from(s.write_size).max(1));
            self.pump(now, out);
        }
    }

    /// Socket send path: the application writes as 4.4BSD `sosend` lets it
    /// (copy what fits unless the buffer has less than the low-water mark
    /// free and the rest of the write does not fit; `tcp_output` after each
    /// copy), and starts its next write call when one completes.
    fn pump(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        let Some(sock) = self.cfg.socket else { return };
        while !self.writer_done && self.state == State::Established && self.write_at.is_none() {
            if self.buf_end >= self.end {
                // A finite transfer's application has written its last
                // byte: it makes no more write calls (else, with room in
                // the buffer that the capped `buffered` never fills, this
                // loop would copy nothing for ever).
                self.writer_done = true;
                return;
            }
            if self.write_left == 0 {
                if sock.write_cost.is_zero() {
                    // At least a byte a call, so a zero write size cannot spin.
                    self.write_left = u64::from(sock.write_size).max(1);
                } else {
                    self.write_at = Some(now.saturating_add(sock.write_cost));
                    return;
                }
            }
            let space = u64::from(sock.send_buffer).saturating_sub(self.buffered());
            if space == 0 || (space < self.write_left && space < sock.low_water()) {
                return; // blocked in sbwait until ACKs free the low-water mark
            }
            let copy = space.min(self.write_left).min(self.end - self.buf_end);
            self.buf_end += copy;
            self.write_left -= copy;
            if matches!(self.recovery, Recovery::Sack { .. }) {
                self.send_in_recovery(now, out); // SACK recovery sends by `pipe`
            } else {
                self.output(now, out);
            }
        }
    }

    fn socket(&self) -> Option<SocketConfig> {
        self.cfg.socket
    }

    /// Whether every byte of a finite transfer has been acknowledged.
    pub fn is_done(&self) -> bool {
        self.end != u64::MAX && self.snd_una >= self.end
    }

    /// Opens the connection: sends the SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        assert_eq!(self.state, State::Closed, "connect on an open sender");
        self.state = State::SynSent;
        self.snd_nxt = self.iss + 1;
        self.snd_max = self.snd_nxt;
        self.timed = Some((self.iss, now));
        self.send_syn(out);
        self.arm(now);
    }

    fn send_syn(&self, out: &mut Vec<TcpSegment>) {
        let options = TcpOptions {
            mss: Some(self.cfg.mss.min(65_535) as u16),
            window_scale: self.cfg.offers_window_scale().then(|| self.cfg.window_shift()),
            sack_permitted: self.cfg.variant == TcpVariant::Sack,
            ..TcpOptions::default()
        };
        out.push(TcpSegment {
            seq: self.iss,
            ack: 0,
            len: 0,
            flags: TcpFlags::SYN,
            window: self.cfg.window.min(65_535) as u16,
            options,
        });
    }

    /// Takes a segment from the receiver (SYN-ACK or ACK).
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpSegment, out: &mut Vec<TcpSegment>) {
        match self.state {
            State::Closed => {}
            State::SynSent => {
                if seg.flags.contains(TcpFlags::SYN_ACK) && seg.ack == self.iss + 1 {
                    self.establish(now, seg, out);
                }
            }
            State::Established => {
                if seg.flags.contains(TcpFlags::SYN) {
                    // Our ACK of the SYN-ACK was lost: acknowledge again.
                    self.send_pure_ack(out);
                } else if seg.flags.contains(TcpFlags::ACK) {
                    self.on_ack(now, seg, out);
                }
            }
        }
    }

    fn establish(&mut self, now: SimTime, seg: &TcpSegment, out: &mut Vec<TcpSegment>) {
        self.state = State::Established;
        self.peer_iss = seg.seq;
        self.snd_una = seg.ack;
        self.mss = u64::from(self.cfg.mss.min(seg.options.mss.map_or(536, u32::from)));
        self.cwnd = u64::from(self.cfg.initial_cwnd) * self.mss;
        if self.cfg.offers_window_scale() {
            self.snd_scale = seg.options.window_scale.unwrap_or(0).min(14);
        }
        self.sack = self.cfg.variant == TcpVariant::Sack && seg.options.sack_permitted;
        self.snd_wnd = u64::from(seg.window); // a SYN's window is never scaled
        self.max_sndwnd = self.max_sndwnd.max(self.snd_wnd);
        if let Some((_, sent)) = self.timed.take() {
            // Solaris 2.5 times no SYN: tcp_csuna starts at tcp_snxt, which
            // the SYN's ACK does not pass.
            if !self.solaris() {
                self.rtt.sample(now - sent, sent);
            }
            self.rtt.reset_backoff();
        }
        self.rto_deadline = None;
        let before = out.len();
        self.output(now, out);
        self.pump(now, out);
        if out.len() == before {
            self.send_pure_ack(out);
        }
    }

    fn send_pure_ack(&self, out: &mut Vec<TcpSegment>) {
        out.push(TcpSegment {
            seq: self.snd_nxt,
            ack: self.peer_iss + 1,
            len: 0,
            flags: TcpFlags::ACK,
            window: self.cfg.window.min(65_535) as u16,
            options: TcpOptions::default(),
        });
    }

    fn on_ack(&mut self, now: SimTime, seg: &TcpSegment, out: &mut Vec<TcpSegment>) {
        let ack = seg.ack;
        if ack > self.snd_max || ack < self.snd_una {
            return; // acknowledges nothing we sent, or an old ACK
        }
        self.stats.acks_received += 1;
        if self.sack {
            self.scoreboard.update(ack, seg.options.sack.as_slice());
        }
        let wnd = u64::from(seg.window) << self.snd_scale;
        if ack > self.snd_una {
            self.on_new_ack(now, ack, wnd, out);
        } else if seg.len == 0 && wnd == self.snd_wnd && self.snd_max > self.snd_una {
            self.stats.dupacks_received += 1;
            self.on_dupack(now, out);
        } else {
            self.snd_wnd = wnd; // window update
            self.max_sndwnd = self.max_sndwnd.max(self.snd_wnd);
            self.output(now, out);
        }
    }

    fn on_new_ack(&mut self, now: SimTime, ack: u64, wnd: u64, out: &mut Vec<TcpSegment>) {
        if self.solaris() {
            self.solaris_sample(now, ack);
        }
        // Karn: only an ACK covering a segment timed since the last
        // retransmission gives a sample and clears the backoff.
        if let Some((seq, sent)) = self.timed
            && ack > seq
        {
            self.rtt.sample(now - sent, sent);
            self.rtt.reset_backoff();
            self.timed = None;
        }
        if self.cfg.backoff_reset == BackoffReset::NewAck {
            self.rtt.reset_backoff();
        }
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.snd_wnd = wnd;
        self.max_sndwnd = self.max_sndwnd.max(self.snd_wnd);
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.dupacks = 0;
        if self.recovery == Recovery::Loss && ack >= self.recover {
            self.recovery = Recovery::Open; // everything sent before the timeout is acknowledged
        }
        if self.in_fast_recovery() {
            self.on_ack_in_recovery(now, ack, acked, out);
        } else {
            self.open_cwnd();
            self.restart_timer(now);
            self.output(now, out);
        }
        // The ACK freed buffer space: a blocked writer wakes (sowwakeup) and
        // copies after TCP has sent what it could.
        self.pump(now, out);
    }

    /// A new ACK while recovering from a fast retransmit.
    fn on_ack_in_recovery(&mut self, now: SimTime, ack: u64, acked: u64, out: &mut Vec<TcpSegment>) {
        match self.cfg.variant {
            // RFC 2001: the first ACK of new data ends recovery, partial or not.
            TcpVariant::Reno | TcpVariant::Vanilla | TcpVariant::Tahoe => {
                self.end_recovery(self.ssthresh);
                self.restart_timer(now);
                self.output(now, out);
            }
            TcpVariant::NewReno if ack >= self.recover => {
                // RFC 6582 s3.2 step 3, option 1.
                let flight = self.snd_max - self.snd_una;
                self.end_recovery(self.ssthresh.min(flight.max(self.mss) + self.mss));
                self.restart_timer(now);
                self.output(now, out);
            }
            TcpVariant::NewReno => {
                // Partial ACK: retransmit the next unacknowledged segment,
                // deflate the window by what was acknowledged and add back
                // one segment; reset the timer on the first partial ACK only.
                let len = self.mss.min(self.data_end() - self.snd_una);
                self.send_data(now, self.snd_una, len, out);
                let Recovery::Fast { dupwnd, partial_acked } = self.recovery else {
                    unreachable!("NewReno recovers in fast recovery")
                };
                let window = (self.cwnd + dupwnd).saturating_sub(acked) + if acked >= self.mss { self.mss } else { 0 };
                let dupwnd = if window >= self.cwnd {
                    window - self.cwnd
                } else {
                    self.cwnd = window.max(self.mss);
                    0
                };
                self.recovery = Recovery::Fast { dupwnd, partial_acked: true };
                if !partial_acked {
                    self.arm(now);
                }
                self.output(now, out);
            }
            TcpVariant::Sack if ack >= self.recover => {
                // sack1: recovery ends with cwnd at its halved value.
                self.end_recovery(self.cwnd);
                self.restart_timer(now);
                self.output(now, out);
            }
            TcpVariant::Sack => {
                // sack1: a partial ACK means the retransmission and the
                // original have both left the network.
                if let Recovery::Sack { pipe, .. } = &mut self.recovery {
                    *pipe -= 2 * self.mss as i64;
                }
                self.arm(now);
                self.send_in_recovery(now, out);
            }
        }
    }

    fn end_recovery(&mut self, cwnd: u64) {
        self.recovery = Recovery::Open;
        self.cwnd = cwnd.max(self.mss);
    }

    fn restart_timer(&mut self, now: SimTime) {
        if self.solaris() {
            // Solaris 2.5 does not restart the timer on an ACK: it runs on,
            // and tcp_timer measures from the oldest segment's transmission.
            if self.rto_deadline.is_none() && self.snd_una < self.snd_max {
                self.solaris_restart(now);
            }
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else {
            self.arm(now);
        }
    }

    fn open_cwnd(&mut self) {
        let incr = if self.cwnd < self.ssthresh {
            self.mss // slow start
        } else {
            (self.mss * self.mss / self.cwnd).max(1) // congestion avoidance
        };
        let cap = 65_535u64 << self.snd_scale;
        self.cwnd = (self.cwnd + incr).min(cap.max(self.mss));
    }

    fn halve(&mut self) {
        let win = self.cwnd.min(self.snd_wnd);
        self.ssthresh = (win / 2 / self.mss).max(2) * self.mss;
    }

    fn on_dupack(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        let thresh = self.cfg.dupack_threshold;
        match &mut self.recovery {
            Recovery::Fast { dupwnd, .. } => {
                if !self.cfg.freeze_window_in_fast_recovery {
                    *dupwnd += self.mss; // one more segment has left the network
                }
                self.output(now, out);
                return;
            }
            Recovery::Sack { pipe, .. } => {
                *pipe -= self.mss as i64;
                self.send_in_recovery(now, out);
                return;
            }
            Recovery::Open | Recovery::Loss => {}
        }
        self.dupacks += 1;
        // One fast retransmit per window: not while the ACKs still cover only
        // data sent before the last loss event.
        if self.dupacks != thresh || self.cfg.variant == TcpVariant::Vanilla || self.snd_una < self.recover {
            return;
        }
        self.stats.fast_retransmits += 1;
        self.halve();
        self.recover = self.snd_max;
        self.timed = None;
        let len = self.mss.min(self.data_end() - self.snd_una);
        match self.cfg.variant {
            TcpVariant::Tahoe => {
                self.cwnd = self.mss;
                self.snd_nxt = self.snd_una; // go back N
                self.arm(now);
                self.output(now, out);
            }
            TcpVariant::Reno | TcpVariant::NewReno => {
                self.cwnd = self.ssthresh;
                let dupwnd = if self.cfg.freeze_window_in_fast_recovery { 0 } else { u64::from(thresh) * self.mss };
                self.recovery = Recovery::Fast { dupwnd, partial_acked: false };
                self.send_data(now, self.snd_una, len, out);
                self.arm(now);
                self.output(now, out);
            }
            TcpVariant::Sack => {
                // sack1: pipe = what is outstanding less the segments the
                // duplicate ACKs report as having left; cwnd = ssthresh.
                self.cwnd = self.ssthresh;
                let pipe = (self.snd_max - self.snd_una) as i64 - i64::from(thresh) * self.mss as i64;
                self.send_data(now, self.snd_una, len, out);
                self.recovery = Recovery::Sack { pipe, high_rxt: self.snd_una + len };
                self.arm(now);
            }
            TcpVariant::Vanilla => unreachable!("returned above"),
        }
    }

    /// SACK recovery: while `pipe < cwnd`, send the next hole, else new data.
    fn send_in_recovery(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        let Recovery::Sack { mut pipe, mut high_rxt } = self.recovery else { unreachable!("called in SACK recovery") };
        while pipe < self.cwnd as i64 {
            let from = high_rxt.max(self.snd_una);
            if let Some((seq, len)) = self.scoreboard.next_hole(from, self.mss) {
                let len = len.min(self.data_end() - seq);
                self.send_data(now, seq, len, out);
                high_rxt = seq + len;
            } else {
                let limit = self.snd_una.saturating_add(self.snd_wnd);
                let seq = self.snd_nxt.max(self.snd_max);
                let len = self.mss.min(self.data_end().saturating_sub(seq));
                if len == 0 || seq + len > limit {
                    break;
                }
                self.send_data(now, seq, len, out);
                self.snd_nxt = seq + len;
            }
            pipe += self.mss as i64;
        }
        self.recovery = Recovery::Sack { pipe, high_rxt };
    }

    /// The retransmission timer fired (the caller checks the deadline).
    pub fn on_timeout(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        self.rto_deadline = None;
        match self.state {
            State::Closed => {}
            State::SynSent => {
                self.stats.timeouts += 1;
                self.rtt.back_off();
                self.timed = None;
                self.send_syn(out);
                self.arm(now);
            }
            State::Established if self.solaris() => self.solaris_timeout(now, out),
            State::Established => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                self.stats.timeouts += 1;
                self.halve();
                self.cwnd = self.mss;
                self.enter_loss();
                self.rtt.back_off();
                self.snd_nxt = self.snd_una; // go back N
                self.arm(now);
                self.output(now, out);
            }
        }
    }

    /// What every timeout does to the recovery state: loss recovery up to
    /// `snd_max`, the duplicate-ACK count dropped (unless configured to be
    /// kept), the SACK scoreboard cleared (RFC 2018: stale after a timeout)
    /// and no segment timed.
    fn enter_loss(&mut self) {
        self.recovery = Recovery::Loss;
        if !self.cfg.keep_dupacks_on_timeout {
            self.dupacks = 0;
        }
        self.recover = self.snd_max;
        self.scoreboard.clear();
        self.timed = None;
    }

    fn arm(&mut self, now: SimTime) {
        if self.solaris() && self.state == State::Established {
            if self.rto_deadline.is_none() {
                self.solaris_restart(now);
            }
            return;
        }
        self.rto_deadline =
            Some(self.cfg.rto_timer.expiry(now, self.rtt.rto(), self.cfg.rto.tick, self.cfg.clock_phase));
    }

    /// Sends what the window allows (outside SACK recovery).
    fn output(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        if self.state != State::Established {
            return;
        }
        let win = (self.cwnd + self.dupwnd()).min(self.snd_wnd);
        let limit = self.snd_una.saturating_add(win);
        if self.socket().is_some() {
            self.output_socket(now, limit, out);
            return;
        }
        while self.snd_nxt < self.end {
            let mut len = self.mss.min(self.end - self.snd_nxt);
            if self.snd_nxt + len > limit {
                // BSD's sender-side silly window avoidance: a segment shorter
                // than the data allows goes out only if it is at least half
                // the largest window the peer has offered (so a window below
                // one MSS is still used, one window-sized segment at a time).
                let usable = limit.saturating_sub(self.snd_nxt);
                if usable == 0 || usable < self.max_sndwnd.div_ceil(2) {
                    break;
                }
                len = usable;
            }
            self.send_data(now, self.snd_nxt, len, out);
            self.snd_nxt += len;
        }
    }

    /// `output` with the socket send path: 4.4BSD `tcp_output`'s rule for
    /// whether to send a segment shorter than the MSS (Nagle, RFC 896, and
    /// sender silly-window avoidance): send it only if the connection was
    /// idle when `tcp_output` was called (nothing unacknowledged) and it
    /// empties the buffer, or it is at least half the largest window the
    /// peer has offered, or it is a retransmission (`snd_nxt < snd_max`).
    fn output_socket(&mut self, now: SimTime, limit: u64, out: &mut Vec<TcpSegment>) {
        let idle = self.snd_max == self.snd_una;
        loop {
            let sb_end = self.data_end();
            let avail = sb_end.min(limit);
            if avail <= self.snd_nxt {
                break;
            }
            let len = (avail - self.snd_nxt).min(self.mss);
            let send = len == self.mss
                || (idle && self.snd_nxt + len >= sb_end)
                || len >= self.max_sndwnd.div_ceil(2)
                || self.snd_nxt < self.snd_max;
            if !send {
                break;
            }
            self.send_data(now, self.snd_nxt, len, out);
            self.snd_nxt += len;
        }
    }

    fn send_data(&mut self, now: SimTime, seq: u64, len: u64, out: &mut Vec<TcpSegment>) {
        let retransmission = seq < self.snd_max;
        if self.solaris() {
            self.solaris_stamp(now, seq, len, retransmission);
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        if retransmission {
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len;
        } else if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
        out.push(TcpSegment {
            seq,
            ack: self.peer_iss + 1,
            len: len as u32,
            flags: TcpFlags::ACK,
            window: self.cfg.window.min(65_535) as u16,
            options: TcpOptions::default(),
        });
        self.snd_max = self.snd_max.max(seq + len);
        if self.rto_deadline.is_none() {
            self.arm(now);
        }
    }

    fn solaris(&self) -> bool {
        self.cfg.rto.algorithm == RtoAlgorithm::Solaris25
    }

    /// `lbolt` at `t`: the ticks of `timer_tick` (Solaris: 10 ms) since 0.
    fn lbolt(&self, t: SimTime) -> i64 {
        (t.as_ps() / self.cfg.rto.tick.as_ps()) as i64
    }

    /// Arms the timer `ms` milliseconds ahead as `mi_timer` does: after
    /// `MS_TO_TICKS(ms)` ticks (at least one), at a tick boundary.
    fn solaris_arm_ms(&mut self, now: SimTime, ms: i64) {
        let ticks = solaris_ms_to_ticks(ms).max(1) as u64;
        let tick = self.cfg.rto.tick.as_ps();
        self.rto_deadline = Some(SimTime::from_ps((now.as_ps() / tick + ticks) * tick));
    }

    /// `TCP_TIMER_RESTART(tcp, tcp->tcp_rto)`.
    fn solaris_restart(&mut self, now: SimTime) {
        self.sol_interval = self.rtt.solaris_rto_ms();
        self.solaris_arm_ms(now, self.sol_interval);
    }

    /// Solaris 2.5 stamps what it transmits (`b_prev = lbolt`); sending
    /// new data from an idle connection restarts the timer with `tcp_rto`
    /// (`if (snxt == suna) TCP_TIMER_RESTART`); any retransmission sets
    /// `tcp_csuna = tcp_snxt`, so no sample until an ACK passes it.
    fn solaris_stamp(&mut self, now: SimTime, seq: u64, len: u64, retransmission: bool) {
        if retransmission {
            self.sol_csuna = self.snd_max;
            // Only the segment holding `seq` is restamped (Solaris: the head
            // mblk's b_prev), even when the retransmission runs into the next.
            if let Some((_, (end, t))) = self.sol_sent.range_mut(..=seq).next_back()
                && *end > seq
            {
                *t = now;
                return;
            }
            self.sol_sent.insert(seq, (seq + len, now));
            return;
        }
        if self.snd_max == self.snd_una && seq == self.snd_una {
            self.solaris_restart(now);
        }
        self.sol_sent.insert(seq, (seq + len, now));
    }

    /// When the oldest unacknowledged segment was last sent (its
    /// `b_prev`).
    fn solaris_oldest_sent(&self) -> Option<SimTime> {
        self.sol_sent.range(..=self.snd_una).next_back().map(|(_, &(_, t))| t)
    }

    /// `tcp_rput` on an ACK of new data: the sample is `lbolt - b_prev` of
    /// the oldest unacknowledged segment, if the ACK passes `tcp_csuna`.
    fn solaris_sample(&mut self, now: SimTime, ack: u64) {
        let head = self.solaris_oldest_sent();
        let sample = if ack > self.sol_csuna {
            self.sol_csuna = ack;
            head.map(|t| self.lbolt(now) - self.lbolt(t))
        } else {
            None
        };
        self.rtt.solaris_ack(sample, self.lbolt(now));
        // Eat the acknowledged segments.
        while let Some((&start, &(end, _))) = self.sol_sent.first_key_value() {
            if end > ack {
                break;
            }
            self.sol_sent.remove(&start);
        }
    }

    /// `tcp_timer` with data outstanding: if the oldest segment was sent
    /// less than `MS_TO_TICKS(tcp_rto)` ticks ago the timer "fired too
    /// early" and waits the rest; otherwise `ssthresh = cwnd >> 1`, `cwnd =
    /// 1 MSS`, the interval becomes `2 x max(interval, tcp_rto)` (at most
    /// `tcp_rexmit_interval_max`), and one segment from `snd_una` is
    /// retransmitted (no go-back-N).
    fn solaris_timeout(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        if self.snd_una >= self.snd_max {
            return; // nothing to retransmit: the timer is not restarted
        }
        let head = self.solaris_oldest_sent().unwrap_or(now);
        let wait = solaris_ms_to_ticks(self.rtt.solaris_rto_ms()) - (self.lbolt(now) - self.lbolt(head));
        if wait > 0 {
            self.sol_interval = wait * self.cfg.rto.tick.as_millis() as i64;
            self.solaris_arm_ms(now, self.sol_interval);
            return;
        }
        self.stats.timeouts += 1;
        if self.snd_wnd != 0 {
            self.ssthresh = self.cwnd >> 1;
            self.cwnd = self.mss;
        }
        self.enter_loss();
        let max = self.cfg.rto.max_rto.as_millis() as i64;
        self.sol_interval = (self.sol_interval.max(self.rtt.solaris_rto_ms()) * 2).min(max);
        let interval = self.sol_interval;
        self.solaris_arm_ms(now, interval);
        let mut len = (self.snd_nxt - self.snd_una).min(self.mss);
        if self.snd_wnd != 0 {
            len = len.min(self.snd_wnd);
        }
        if len > 0 {
            self.send_data(now, self.snd_una, len, out);
        }
    }
}
