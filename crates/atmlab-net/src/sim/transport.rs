//! The transport layer's glue: TCP connections (segments to and from their
//! hosts, timers, the application starting and stopping) and UDP flows
//! (datagrams sent on schedule, received and counted).

use super::Simulation;
use super::datagram::{Datagram, Endpoint, Payload};
use super::kernel::{APP, Event, Kernel, TcpTimer};
use super::timer::Firing;
use crate::aal5::{IPV4_HEADER, UDP_HEADER};
use crate::ids::{ConnId, FlowId};
use crate::tcp::TcpSegment;
use atmlab_engine::SimTime;

/// The transport layer of a run: its TCP connections and UDP flows.
pub(super) struct Transport {
    pub(super) conns: Vec<super::TcpConn>,
    pub(super) flows: Vec<super::UdpCbr>,
    /// Reused buffer for the segments a TCP event sends.
    pub(super) scratch: Vec<crate::tcp::TcpSegment>,
}

impl Transport {
    /// A UDP datagram of flow `f` (`len` bytes of payload, sent at
    /// `sent_at`) reached its sink now.
    fn udp_received(&mut self, k: &Kernel, f: u32, len: u32, sent_at: SimTime) {
        let s = &mut self.flows[f as usize].stats;
        let delay = (k.now - sent_at).as_ps();
        s.received += 1;
        s.bytes_received += u64::from(len);
        s.delay_sum_ps += u128::from(delay);
        s.delay_max_ps = s.delay_max_ps.max(delay);
        s.delay_min_ps = if s.received == 1 { delay } else { s.delay_min_ps.min(delay) };
        s.last_received = Some(k.now);
    }

    /// Connection `c`'s timer `which` follows its state machine's deadline
    /// (at most one pending event each: `timer.rs`).
    fn sync_timer(&mut self, k: &mut Kernel, c: ConnId, which: TcpTimer) {
        let conn = &mut self.conns[c.idx()];
        let scheduled = match which {
            TcpTimer::Retransmit => conn.rto_timer.set(conn.sender.rto_deadline()),
            TcpTimer::DelayedAck => conn.delack_timer.set(conn.receiver.delack_deadline()),
            TcpTimer::Write => conn.write_timer.set(conn.sender.write_deadline()),
        };
        if let Some((t, generation)) = scheduled {
            k.queue.push(t, APP, Event::TcpTimer(c, which, generation));
        }
    }

    /// The application of connection `c` stops writing: the transfer is
    /// what it wrote so far.
    fn stop_writing(&mut self, k: &mut Kernel, c: ConnId) {
        let conn = &mut self.conns[c.idx()];
        let bytes = conn.sender.stop_writing();
        conn.bytes = Some(bytes);
        if conn.receiver.stats.bytes_delivered >= bytes {
            conn.completed_at.get_or_insert(k.now);
        }
        self.sync_timer(k, c, TcpTimer::Write);
    }
}

impl Simulation {
    /// A datagram reaches its transport endpoint (after the receiving CPU,
    /// if the host has one).
    pub(super) fn deliver(&mut self, datagram: Datagram, sent_at: SimTime) {
        match (datagram.dest, datagram.payload) {
            (Endpoint::TcpReceiver(c), Payload::Tcp(seg)) => {
                let conn = &mut self.transport.conns[c as usize];
                let mut out = std::mem::take(&mut self.transport.scratch);
                conn.receiver.on_segment(self.k.now, &seg, &mut out);
                if conn.completed_at.is_none() && conn.bytes.is_some_and(|b| conn.receiver.stats.bytes_delivered >= b) {
                    conn.completed_at = Some(self.k.now);
                }
                self.send_tcp(ConnId(c), false, &mut out);
                self.transport.scratch = out;
                self.transport.sync_timer(&mut self.k, ConnId(c), TcpTimer::DelayedAck);
            }
            (Endpoint::TcpSender(c), Payload::Tcp(seg)) => {
                let mut out = std::mem::take(&mut self.transport.scratch);
                self.transport.conns[c as usize].sender.on_segment(self.k.now, &seg, &mut out);
                self.send_tcp(ConnId(c), true, &mut out);
                self.transport.scratch = out;
                self.transport.sync_timer(&mut self.k, ConnId(c), TcpTimer::Retransmit);
                self.transport.sync_timer(&mut self.k, ConnId(c), TcpTimer::Write);
            }
            (Endpoint::UdpSink(f), Payload::Udp { len, .. }) => self.transport.udp_received(&self.k, f, len, sent_at),
            (Endpoint::UdpSink(f), Payload::UdpFragment { len, seq, index, count }) => {
                if let Some(first) = self.transport.flows[f as usize].fragments.on_fragment(seq, index, count, sent_at)
                {
                    self.transport.udp_received(&self.k, f, len, first);
                }
            }
            (dest, _) => unreachable!("a datagram for {dest:?} carries the wrong transport"),
        }
    }

    /// Sends the segments in `out` from the sender's end (`forward`) or the
    /// receiver's end, and empties `out`.
    pub(super) fn send_tcp(&mut self, c: ConnId, forward: bool, out: &mut Vec<TcpSegment>) {
        let conn = &self.transport.conns[c.idx()];
        let (end, dest) =
            if forward { (conn.src, Endpoint::TcpReceiver(c.0)) } else { (conn.dst, Endpoint::TcpSender(c.0)) };
        if forward && self.k.trace.is_some() {
            self.trace_tcp(c, out);
        }
        for seg in out.drain(..) {
            let bytes = IPV4_HEADER + seg.header_len() + seg.len;
            self.send_datagram(end, Datagram { dest, payload: Payload::Tcp(seg) }, bytes);
        }
    }

    /// The trace's records of connection `c`'s sender after it acted: what
    /// changed in its state (a timeout, a fast retransmit, its window),
    /// then the segments it sends.
    #[cold]
    #[inline(never)]
    fn trace_tcp(&mut self, c: ConnId, out: &[TcpSegment]) {
        let sender = &self.transport.conns[c.idx()].sender;
        let (s, cwnd, ssthresh) = (&sender.stats, sender.cwnd(), sender.ssthresh());
        let Some(t) = self.k.trace.as_deref_mut() else { return };
        t.tcp_sender(self.k.now, c.0, cwnd, ssthresh, s.timeouts, s.fast_retransmits);
        for seg in out {
            t.tcp_send(self.k.now, c.0, seg.seq, seg.len);
        }
    }

    pub(super) fn on_tcp_start(&mut self, c: ConnId) {
        let mut out = std::mem::take(&mut self.transport.scratch);
        self.transport.conns[c.idx()].sender.connect(self.k.now, &mut out);
        self.send_tcp(c, true, &mut out);
        self.transport.scratch = out;
        self.transport.sync_timer(&mut self.k, c, TcpTimer::Retransmit);
    }

    /// The application stops writing: the transfer is what it wrote so far.
    pub(super) fn on_tcp_stop(&mut self, c: ConnId) {
        self.transport.stop_writing(&mut self.k, c);
    }

    pub(super) fn on_tcp_timer(&mut self, c: ConnId, which: TcpTimer, generation: u32) {
        let conn = &mut self.transport.conns[c.idx()];
        let timer = match which {
            TcpTimer::Retransmit => &mut conn.rto_timer,
            TcpTimer::DelayedAck => &mut conn.delack_timer,
            TcpTimer::Write => &mut conn.write_timer,
        };
        match timer.fire(self.k.now, generation) {
            Firing::Stale => {}
            Firing::Rearm(t, g) => self.k.queue.push(t, APP, Event::TcpTimer(c, which, g)),
            Firing::Due => {
                let mut out = std::mem::take(&mut self.transport.scratch);
                let forward = match which {
                    TcpTimer::Retransmit => {
                        conn.sender.on_timeout(self.k.now, &mut out);
                        true
                    }
                    TcpTimer::DelayedAck => {
                        conn.receiver.on_delack_timeout(&mut out);
                        false
                    }
                    TcpTimer::Write => {
                        conn.sender.on_write_timer(self.k.now, &mut out);
                        true
                    }
                };
                self.send_tcp(c, forward, &mut out);
                self.transport.scratch = out;
                self.transport.sync_timer(&mut self.k, c, which);
                if forward {
                    // A timeout or a write changes what the other sender timer waits for.
                    let other = if which == TcpTimer::Retransmit { TcpTimer::Write } else { TcpTimer::Retransmit };
                    self.transport.sync_timer(&mut self.k, c, other);
                }
            }
        }
    }

    pub(super) fn on_udp_send(&mut self, f: FlowId, k: u64) {
        let flow = &mut self.transport.flows[f.idx()];
        let len = flow.next_payload();
        flow.stats.sent += 1;
        flow.stats.first_sent.get_or_insert(self.k.now);
        flow.bytes_sent += u64::from(len);
        let src = flow.src;
        if let Some(t) = flow.due(k + 1, self.k.now) {
            self.k.queue.push(t, APP, Event::UdpSend(f, k + 1));
        }
        let host = &self.hosts.list[src.host.idx()];
        let dest = Endpoint::UdpSink(f.0);
        if len + UDP_HEADER + IPV4_HEADER <= host.mtu {
            self.transport.flows[f.idx()].stats.fragments_sent += 1;
            let payload = Payload::Udp { len, seq: k };
            self.send_datagram(src, Datagram { dest, payload }, len + UDP_HEADER + IPV4_HEADER);
            return;
        }
        let pieces = crate::ip::fragments(len + UDP_HEADER, host.mtu, host.fragmentation);
        let count = pieces.len() as u32;
        self.transport.flows[f.idx()].stats.fragments_sent += u64::from(count);
        for (index, bytes) in pieces.into_iter().enumerate() {
            let payload = Payload::UdpFragment { len, seq: k, index: index as u32, count };
            self.send_datagram(src, Datagram { dest, payload }, bytes + IPV4_HEADER);
        }
    }
}
