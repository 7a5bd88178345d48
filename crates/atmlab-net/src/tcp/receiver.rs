//! The receiving side of a TCP connection.
//!
//! The application reads greedily, so the advertised window is always the
//! whole receive buffer (out-of-order data waits in the reassembly queue,
//! which BSD does not charge to the socket buffer). ACK policy (RFC 1122 as
//! BSD implements it): a segment that fills a gap, a duplicate and an
//! out-of-order segment are acknowledged at once; with delayed ACKs an
//! in-order segment sets a flag, the second one is acknowledged at once, and
//! the delayed-ACK timer acknowledges a lone one. With Solaris's rule
//! (`DelayedAckRule::Solaris`) the receiver counts bytes against a limit in
//! units of the MSS instead, as Solaris 2.5's `tcp_rput` and `tcp_timer` do
//! (`docs/models/tcp.md`, "Receiver and ACKs").

use super::ranges;
use super::segment::{TcpFlags, TcpOptions, TcpSegment};
use super::{DelayedAckRule, TcpConfig};
use atmlab_engine::SimTime;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Listen,
    SynReceived,
    Established,
}

/// Counters of a receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Bytes delivered in order to the application.
    pub bytes_delivered: u64,
    /// Data segments received.
    pub segments_received: u64,
    /// Data segments entirely below `rcv_nxt`.
    pub duplicate_segments: u64,
    /// Data segments above `rcv_nxt`.
    pub out_of_order_segments: u64,
    /// ACKs sent (SYN-ACKs included).
    pub acks_sent: u64,
}

/// The receiving side of one connection.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    cfg: TcpConfig,
    state: State,
    iss: u64,
    rcv_nxt: u64,
    rcv_scale: u8,
    scaling: bool,
    ooo: Vec<(u64, u64)>,
    /// SACK was negotiated.
    sack: bool,
    /// Out-of-order ranges, most recently reported first (RFC 2018 s4).
    sack_recent: Vec<(u64, u64)>,
    /// Room for the next `sack_recent` while it is made, and which ranges
    /// of `ooo` it holds (kept to spare an allocation per segment).
    sack_next: Vec<(u64, u64)>,
    sack_listed: Vec<bool>,
    delack_pending: bool,
    delack_deadline: Option<SimTime>,
    /// Solaris rule: `rcv_nxt` when the last ACK was sent (`tcp_rack`).
    rack: u64,
    /// Solaris rule: bytes received since the last ACK (`tcp_rack_cnt`).
    rack_cnt: u64,
    /// Solaris rule: the bytes whose ACK may be deferred now
    /// (`tcp_rack_cur_max`).
    rack_cur_max: u64,
    /// Solaris rule: the most it may grow to (`tcp_rack_abs_max`).
    rack_abs_max: u64,
    /// Counters.
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    /// A listening receiver.
    pub fn new(cfg: TcpConfig) -> TcpReceiver {
        TcpReceiver {
            cfg,
            state: State::Listen,
            iss: 0,
            rcv_nxt: 0,
            rcv_scale: 0,
            scaling: false,
            ooo: Vec::new(),
            sack: false,
            sack_recent: Vec::new(),
            sack_next: Vec::new(),
            sack_listed: Vec::new(),
            delack_pending: false,
            delack_deadline: None,
            rack: 0,
            rack_cnt: 0,
            rack_cur_max: 0,
            rack_abs_max: 0,
            stats: ReceiverStats::default(),
        }
    }

    /// Next sequence number expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// When the delayed-ACK timer fires, if it runs.
    pub fn delack_deadline(&self) -> Option<SimTime> {
        self.delack_deadline
    }
    /// Solaris rule: the bytes whose ACK may be deferred now and the most
    /// that limit may grow to (`tcp_rack_cur_max`, `tcp_rack_abs_max`).
    pub fn deferred_ack_limits(&self) -> (u64, u64) {
        (self.rack_cur_max, self.rack_abs_max)
    }
    /// Out-of-order ranges held, `[start, end)`.
    pub fn out_of_order(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Takes a segment from the sender.
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpSegment, out: &mut Vec<TcpSegment>) {
        match self.state {
            State::Listen => {
                if seg.flags.contains(TcpFlags::SYN) {
                    self.rcv_nxt = seg.seq + 1;
                    // RFC 1323: scaling is on only if both ends offer it.
                    self.scaling = self.cfg.offers_window_scale() && seg.options.window_scale.is_some();
                    if self.scaling {
                        self.rcv_scale = self.cfg.window_shift();
                    }
                    self.sack = seg.options.sack_permitted;
                    // Solaris 2.5 `tcp_rwnd_set`: the limit starts at one
                    // MSS, the cap from the receive window.
                    let mss = u64::from(self.cfg.mss);
                    self.rack = self.rcv_nxt;
                    self.rack_abs_max = self.cfg.deferred_ack_cap() * mss;
                    self.rack_cur_max = mss.min(self.rack_abs_max);
                    self.state = State::SynReceived;
                    self.send_syn_ack(out);
                }
                return;
            }
            State::SynReceived => {
                if seg.flags.contains(TcpFlags::SYN) {
                    self.send_syn_ack(out); // our SYN-ACK was lost
                    return;
                }
                if !(seg.flags.contains(TcpFlags::ACK) && seg.ack == self.iss + 1) {
                    return;
                }
                self.state = State::Established;
            }
            State::Established => {
                if seg.flags.contains(TcpFlags::SYN) {
                    self.ack_now(out);
                    return;
                }
            }
        }
        if seg.len > 0 {
            self.on_data(now, seg.seq, seg.seq + u64::from(seg.len), out);
        }
    }

    fn on_data(&mut self, now: SimTime, start: u64, end: u64, out: &mut Vec<TcpSegment>) {
        if self.solaris() {
            self.on_data_solaris(now, start, end, out);
            return;
        }
        self.stats.segments_received += 1;
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            self.ack_or_stretch(now, out);
        } else if start <= self.rcv_nxt {
            let (filled_gap, _) = self.take_in_order(end);
            if self.cfg.stretch_ack.is_some() {
                self.ack_or_stretch(now, out);
            } else if filled_gap || !self.cfg.delayed_ack || self.delack_pending {
                self.ack_now(out);
            } else {
                self.defer_ack(now);
            }
        } else {
            self.take_out_of_order(start, end);
            self.ack_or_stretch(now, out);
        }
    }

    /// An in-order segment ending at `end`: `rcv_nxt` moves past it and
    /// past the out-of-order data it joins. Returns whether it filled a gap
    /// and how many bytes were delivered.
    fn take_in_order(&mut self, end: u64) -> (bool, u64) {
        let filled_gap = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        // The held ranges it reaches, and those they reach in turn.
        let mut joined = 0;
        for &(s, e) in &self.ooo {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            joined += 1;
        }
        self.ooo.drain(..joined);
        let len = self.rcv_nxt - before;
        self.stats.bytes_delivered += len;
        let nxt = self.rcv_nxt;
        self.sack_recent.retain(|&(_, e)| e > nxt);
        (filled_gap, len)
    }

    /// A segment beyond a gap: held, and reported first in the SACK blocks.
    fn take_out_of_order(&mut self, start: u64, end: u64) {
        self.stats.out_of_order_segments += 1;
        self.insert_out_of_order(start, end);
        if self.sack {
            self.report_first(start);
        }
    }

    /// The ACK waits for the delayed-ACK timer, (re)started now.
    fn defer_ack(&mut self, now: SimTime) {
        self.delack_pending = true;
        self.delack_deadline = Some(self.cfg.delayed_ack_timer.expiry(
            now,
            self.cfg.delayed_ack_timeout,
            self.cfg.delayed_ack_timeout,
            self.cfg.clock_phase,
        ));
    }

    fn solaris(&self) -> bool {
        self.cfg.delayed_ack && self.cfg.delayed_ack_rule == DelayedAckRule::Solaris && self.cfg.stretch_ack.is_none()
    }

    /// Solaris 2.5's `tcp_rput` (tcp.c 1.106; the same in Solaris 2.6's
    /// 1.156): out-of-order data is acknowledged at once; a duplicate
    /// segment too, after the limit falls back to one MSS (and the cap by
    /// one MSS, down to two, if it repeats data not yet acknowledged); in
    /// order, the new bytes count towards the limit, which forces an ACK
    /// and grows by one MSS when reached; below it a segment shorter than
    /// the MSS is acknowledged at once if it follows unacknowledged data
    /// that is not a whole number of MSS, and any other segment (re)starts
    /// the timer.
    fn on_data_solaris(&mut self, now: SimTime, start: u64, end: u64, out: &mut Vec<TcpSegment>) {
        let mss = u64::from(self.cfg.mss);
        self.stats.segments_received += 1;
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            self.solaris_fall_back(end >= self.rack);
            self.ack_now(out);
        } else if start <= self.rcv_nxt {
            let unacked_before = self.rcv_nxt - self.rack;
            let (filled_gap, len) = self.take_in_order(end);
            self.rack_cnt += len;
            let ack = if self.rack_cnt >= self.rack_cur_max {
                self.rack_cur_max = (self.rack_cur_max + mss).min(self.rack_abs_max);
                true
            } else if len < mss {
                unacked_before > 0 && unacked_before % mss != 0
            } else {
                false
            };
            if ack || filled_gap {
                self.ack_now(out);
            } else {
                self.defer_ack(now);
            }
        } else {
            self.take_out_of_order(start, end);
            self.ack_now(out);
        }
    }

    /// ACK at once, or with stretch ACKs, when the stretch timer started by
    /// the first unacknowledged segment fires.
    fn ack_or_stretch(&mut self, now: SimTime, out: &mut Vec<TcpSegment>) {
        match self.cfg.stretch_ack {
            None => self.ack_now(out),
            Some(delay) => {
                self.delack_pending = true;
                if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + delay);
                }
            }
        }
    }

    fn insert_out_of_order(&mut self, start: u64, end: u64) {
        ranges::insert(&mut self.ooo, start, end);
    }

    /// RFC 2018: the block holding the newest segment comes first, then the
    /// most recently reported others (as they are now, merged).
    fn report_first(&mut self, seq: u64) {
        let first = ranges::containing(&self.ooo, seq).expect("the segment was just stored");
        let (order, listed) = (&mut self.sack_next, &mut self.sack_listed);
        order.clear();
        listed.clear();
        listed.resize(self.ooo.len(), false);
        order.push(self.ooo[first]);
        listed[first] = true;
        for &(s, _) in &self.sack_recent {
            if let Some(r) = ranges::containing(&self.ooo, s)
                && !listed[r]
            {
                listed[r] = true;
                order.push(self.ooo[r]);
            }
        }
        std::mem::swap(&mut self.sack_recent, &mut self.sack_next);
    }

    /// The ACK's SACK blocks.
    fn sack_blocks(&self) -> TcpOptions {
        let mut options = TcpOptions::default();
        if self.sack {
            for &(s, e) in self.sack_recent.iter().take(usize::from(self.cfg.max_sack_blocks)) {
                options.sack.push(s, e);
            }
        }
        options
    }

    /// The delayed-ACK timer fired (the caller checks the deadline).
    /// With Solaris's rule (Solaris 2.5's `tcp_timer`): when more than one
    /// MSS was waiting, the limit falls back to one MSS, and the cap by one
    /// MSS (down to two) if at least one MSS arrived since the last ACK.
    pub fn on_delack_timeout(&mut self, out: &mut Vec<TcpSegment>) {
        self.delack_deadline = None;
        if !self.delack_pending {
            return;
        }
        if self.solaris() && self.rcv_nxt - self.rack > u64::from(self.cfg.mss) {
            self.solaris_fall_back(true);
        }
        self.ack_now(out);
    }

    /// Solaris's rule when its ACKs came too late: the limit falls back to
    /// one MSS and, if `shrink` and at least one MSS arrived since the last
    /// ACK, the cap by one MSS (down to two).
    fn solaris_fall_back(&mut self, shrink: bool) {
        let mss = u64::from(self.cfg.mss);
        if shrink && self.rack_cnt >= mss && self.rack_abs_max > 2 * mss {
            self.rack_abs_max -= mss;
        }
        self.rack_cur_max = mss;
    }

    fn window_field(&self) -> u16 {
        (self.cfg.window >> self.rcv_scale).min(65_535) as u16
    }

    fn ack_now(&mut self, out: &mut Vec<TcpSegment>) {
        self.delack_pending = false;
        self.delack_deadline = None;
        self.rack = self.rcv_nxt;
        self.rack_cnt = 0;
        self.stats.acks_sent += 1;
        out.push(TcpSegment {
            seq: self.iss + 1,
            ack: self.rcv_nxt,
            len: 0,
            flags: TcpFlags::ACK,
            window: self.window_field(),
            options: self.sack_blocks(),
        });
    }

    fn send_syn_ack(&mut self, out: &mut Vec<TcpSegment>) {
        self.stats.acks_sent += 1;
        let options = TcpOptions {
            mss: Some(self.cfg.mss.min(65_535) as u16),
            window_scale: self.scaling.then_some(self.rcv_scale),
            sack_permitted: self.sack,
            ..TcpOptions::default()
        };
        out.push(TcpSegment {
            seq: self.iss,
            ack: self.rcv_nxt,
            len: 0,
            flags: TcpFlags::SYN_ACK,
            window: self.cfg.window.min(65_535) as u16,
            options,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The receiver's out-of-order queue and SACK order as they were kept
    /// before `ranges`: a new merged copy of the queue per segment, and
    /// the SACK order by scans.
    #[derive(Default)]
    struct Reference {
        rcv_nxt: u64,
        ooo: Vec<(u64, u64)>,
        sack_recent: Vec<(u64, u64)>,
    }

    impl Reference {
        fn in_order(&mut self, end: u64) {
            self.rcv_nxt = end;
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            let nxt = self.rcv_nxt;
            self.sack_recent.retain(|&(_, e)| e > nxt);
        }

        fn out_of_order(&mut self, start: u64, end: u64) {
            ranges::tests::insert_by_merging(&mut self.ooo, start, end);
            let containing = |r: &[(u64, u64)], x: u64| r.iter().copied().find(|&(s, e)| s <= x && x < e);
            let first = containing(&self.ooo, start).expect("the segment was just stored");
            let mut order = vec![first];
            for &(s, _) in &self.sack_recent {
                if let Some(r) = containing(&self.ooo, s)
                    && !order.contains(&r)
                {
                    order.push(r);
                }
            }
            self.sack_recent = order;
        }
    }

    proptest! {
        /// Segments in any order, duplicates and overlaps included: the
        /// held ranges, `rcv_nxt` and the SACK order (the whole list, of
        /// which an ACK carries the first few) as the reference keeps them.
        #[test]
        fn prop_out_of_order_data_and_sack_order_as_before(
            segments in prop::collection::vec((0u64..60, 1u64..4), 1..150),
        ) {
            let mut rx = TcpReceiver::new(crate::tcp::TcpConfig::classic());
            rx.sack = true;
            let mut reference = Reference::default();
            for (slot, len) in segments {
                // Sequence numbers in units of 10 bytes: segments touch,
                // overlap and leave holes.
                let (start, end) = (slot * 10, (slot + len) * 10);
                if end <= rx.rcv_nxt {
                    continue;
                }
                if start <= rx.rcv_nxt {
                    rx.take_in_order(end);
                    reference.in_order(end);
                } else {
                    rx.take_out_of_order(start, end);
                    reference.out_of_order(start, end);
                }
                prop_assert_eq!(rx.rcv_nxt, reference.rcv_nxt);
                prop_assert_eq!(&rx.ooo, &reference.ooo);
                prop_assert_eq!(&rx.sack_recent, &reference.sack_recent);
            }
        }
    }
}
