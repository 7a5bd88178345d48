//! The transport layer's glue: TCP connections (segments to and from their
//! hosts, timers, the application starting and stopping) and UDP flows
//! (datagrams sent on schedule, received and counted).

use super::datagram::{Datagram, Endpoint, Payload};
use super::timer::Firing;
use super::{APP, Event, Simulation, TcpTimer};
use crate::aal5::{IPV4_HEADER, UDP_HEADER};
use crate::ids::{ConnId, FlowId};
use crate::tcp::TcpSegment;
use atmlab_engine::SimTime;

impl Simulation {
    /// A datagram reaches its transport endpoint (after the receiving CPU,
    /// if the host has one).
    pub(super) fn deliver(&mut self, datagram: Datagram, sent_at: SimTime) {
        match (datagram.dest, datagram.payload) {
            (Endpoint::TcpReceiver(c), Payload::Tcp(seg)) => {
                let conn = &mut self.conns[c as usize];
                let mut out = std::mem::take(&mut self.scratch);
                conn.receiver.on_segment(self.now, &seg, &mut out);
                if conn.completed_at.is_none() && conn.bytes.is_some_and(|b| conn.receiver.stats.bytes_delivered >= b) {
                    conn.completed_at = Some(self.now);
                }
                self.send_tcp(ConnId(c), false, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::DelayedAck);
            }
            (Endpoint::TcpSender(c), Payload::Tcp(seg)) => {
                let mut out = std::mem::take(&mut self.scratch);
                self.conns[c as usize].sender.on_segment(self.now, &seg, &mut out);
                self.send_tcp(ConnId(c), true, &mut out);
                self.scratch = out;
                self.sync_timer(ConnId(c), TcpTimer::Retransmit);
                self.sync_timer(ConnId(c), TcpTimer::Write);
            }
            (Endpoint::UdpSink(f), Payload::Udp { len, .. }) => self.udp_received(f, len, sent_at),
            (Endpoint::UdpSink(f), Payload::UdpFragment { len, seq, index, count }) => {
                if let Some(first) = self.flows[f as usize].fragments.on_fragment(seq, index, count, sent_at) {
                    self.udp_received(f, len, first);
                }
            }
            (dest, _) => unreachable!("a datagram for {dest:?} carries the wrong transport"),
        }
    }

    pub(super) fn udp_received(&mut self, f: u32, len: u32, sent_at: SimTime) {
        let s = &mut self.flows[f as usize].stats;
        let delay = (self.now - sent_at).as_ps();
        s.received += 1;
        s.bytes_received += u64::from(len);
        s.delay_sum_ps += u128::from(delay);
        s.delay_max_ps = s.delay_max_ps.max(delay);
        s.delay_min_ps = if s.received == 1 { delay } else { s.delay_min_ps.min(delay) };
        s.last_received = Some(self.now);
    }

    /// Sends the segments in `out` from the sender's end (`forward`) or the
    /// receiver's end, and empties `out`.
    pub(super) fn send_tcp(&mut self, c: ConnId, forward: bool, out: &mut Vec<TcpSegment>) {
        let conn = &self.conns[c.idx()];
        let (end, dest) =
            if forward { (conn.src, Endpoint::TcpReceiver(c.0)) } else { (conn.dst, Endpoint::TcpSender(c.0)) };
        for seg in out.drain(..) {
            let bytes = IPV4_HEADER + seg.header_len() + seg.len;
            self.send_datagram(end, Datagram { dest, payload: Payload::Tcp(seg) }, bytes);
        }
    }

    pub(super) fn sync_timer(&mut self, c: ConnId, which: TcpTimer) {
        let conn = &mut self.conns[c.idx()];
        let scheduled = match which {
            TcpTimer::Retransmit => conn.rto_timer.set(conn.sender.rto_deadline()),
            TcpTimer::DelayedAck => conn.delack_timer.set(conn.receiver.delack_deadline()),
            TcpTimer::Write => conn.write_timer.set(conn.sender.write_deadline()),
        };
        if let Some((t, generation)) = scheduled {
            self.queue.push(t, APP, Event::TcpTimer(c, which, generation));
        }
    }

    pub(super) fn on_tcp_start(&mut self, c: ConnId) {
        let mut out = std::mem::take(&mut self.scratch);
        self.conns[c.idx()].sender.connect(self.now, &mut out);
        self.send_tcp(c, true, &mut out);
        self.scratch = out;
        self.sync_timer(c, TcpTimer::Retransmit);
    }

    /// The application stops writing: the transfer is what it wrote so far.
    pub(super) fn on_tcp_stop(&mut self, c: ConnId) {
        let conn = &mut self.conns[c.idx()];
        let bytes = conn.sender.stop_writing();
        conn.bytes = Some(bytes);
        if conn.receiver.stats.bytes_delivered >= bytes {
            conn.completed_at.get_or_insert(self.now);
        }
        self.sync_timer(c, TcpTimer::Write);
    }

    pub(super) fn on_tcp_timer(&mut self, c: ConnId, which: TcpTimer, generation: u32) {
        let conn = &mut self.conns[c.idx()];
        let timer = match which {
            TcpTimer::Retransmit => &mut conn.rto_timer,
            TcpTimer::DelayedAck => &mut conn.delack_timer,
            TcpTimer::Write => &mut conn.write_timer,
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
                    TcpTimer::Write => {
                        conn.sender.on_write_timer(self.now, &mut out);
                        true
                    }
                };
                self.send_tcp(c, forward, &mut out);
                self.scratch = out;
                self.sync_timer(c, which);
                if forward {
                    // A timeout or a write changes what the other sender timer waits for.
                    let other = if which == TcpTimer::Retransmit { TcpTimer::Write } else { TcpTimer::Retransmit };
                    self.sync_timer(c, other);
                }
            }
        }
    }

    pub(super) fn on_udp_send(&mut self, f: FlowId, k: u64) {
        let flow = &mut self.flows[f.idx()];
        let len = flow.next_payload();
        flow.stats.sent += 1;
        flow.stats.first_sent.get_or_insert(self.now);
        flow.bytes_sent += u64::from(len);
        let src = flow.src;
        if let Some(t) = flow.due(k + 1, self.now) {
            self.queue.push(t, APP, Event::UdpSend(f, k + 1));
        }
        let host = &self.hosts[src.host.idx()];
        let dest = Endpoint::UdpSink(f.0);
        if len + UDP_HEADER + IPV4_HEADER <= host.mtu {
            self.flows[f.idx()].stats.fragments_sent += 1;
            let payload = Payload::Udp { len, seq: k };
            self.send_datagram(src, Datagram { dest, payload }, len + UDP_HEADER + IPV4_HEADER);
            return;
        }
        let pieces = crate::ip::fragments(len + UDP_HEADER, host.mtu, host.fragmentation);
        let count = pieces.len() as u32;
        self.flows[f.idx()].stats.fragments_sent += u64::from(count);
        for (index, bytes) in pieces.into_iter().enumerate() {
            let payload = Payload::UdpFragment { len, seq: k, index: index as u32, count };
            self.send_datagram(src, Datagram { dest, payload }, bytes + IPV4_HEADER);
        }
    }
}
