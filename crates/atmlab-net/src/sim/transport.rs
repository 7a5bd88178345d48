//! The transport layer's glue: TCP connections (segments to and from their
//! hosts, timers, the application starting and stopping) and UDP flows
//! (datagrams sent on schedule, received and counted).

use super::Simulation;
use super::apps::VcEnd;
use super::datagram::{Datagram, Endpoint, Payload};
use super::kernel::{APP, Event, Kernel, TcpTimer};
use super::probes::{ConnQuantity, Sample};
use super::results::{ConnectionResult, UdpFlowResult, interarrival, secs};
use super::timer::Firing;
use crate::aal5::{IPV4_HEADER, UDP_HEADER};
use crate::ids::{ConnId, FlowId, HostId};
use crate::tcp::TcpSegment;
use atmlab_engine::SimTime;

/// The transport layer of a run: its TCP connections and UDP flows.
pub(super) struct Transport {
    conns: Vec<super::TcpConn>,
    flows: Vec<super::UdpCbr>,
    /// Reused buffer for the segments a TCP event sends.
    scratch: Vec<crate::tcp::TcpSegment>,
}

impl Transport {
    pub(super) fn new(conns: Vec<super::TcpConn>, flows: Vec<super::UdpCbr>) -> Transport {
        Transport { conns, flows, scratch: Vec::with_capacity(256) }
    }

    /// Schedules every connection's start and stop and every flow's first
    /// datagram.
    pub(super) fn start(&mut self, k: &mut Kernel) {
        for (i, c) in self.conns.iter().enumerate() {
            k.queue.push(c.start, APP, Event::TcpStart(ConnId(i as u32)));
            if let Some(t) = c.stop {
                k.queue.push(t, APP, Event::TcpStop(ConnId(i as u32)));
            }
        }
        for (i, f) in self.flows.iter_mut().enumerate() {
            if let Some(t) = f.due(0, SimTime::ZERO) {
                k.queue.push(t, APP, Event::UdpSend(FlowId(i as u32), 0));
            }
        }
    }

    /// A datagram of flow `f` arrived at its sink's host at `now` (before
    /// its receiving CPU).
    pub(super) fn udp_arrived(&mut self, f: FlowId, now: SimTime) {
        self.flows[f.idx()].record_arrival(now);
    }

    /// The ends of connection `c`: its sender's and its receiver's.
    pub(super) fn conn_ends(&self, c: u32) -> (VcEnd, VcEnd) {
        let c = &self.conns[c as usize];
        (c.src, c.dst)
    }

    /// The ends of flow `f`: its source's and its sink's.
    pub(super) fn flow_ends(&self, f: u32) -> (VcEnd, VcEnd) {
        let f = &self.flows[f as usize];
        (f.src, f.dst)
    }

    /// Whether a UDP flow starts at host `h`.
    pub(super) fn sends_udp_from(&self, h: HostId) -> bool {
        self.flows.iter().any(|f| f.src.host == h)
    }

    /// The connections with an end at host `h`.
    pub(super) fn conns_at(&self, h: HostId) -> Vec<ConnId> {
        (0..self.conns.len())
            .filter(|&c| self.conns[c].src.host == h || self.conns[c].dst.host == h)
            .map(|c| ConnId(c as u32))
            .collect()
    }

    /// The earliest time, not before `now`, at which connection `c` may act
    /// on its own: a timer, or its application starting or stopping.
    pub(super) fn next_own_event(&self, c: ConnId, now: SimTime) -> Option<SimTime> {
        let c = &self.conns[c.idx()];
        let timers = [c.rto_timer.pending(), c.delack_timer.pending(), c.write_timer.pending()];
        let app = [Some(c.start), c.stop].map(|a| a.filter(|&a| a >= now));
        timers.into_iter().chain(app).flatten().min()
    }

    /// The TCP connections.
    pub(super) fn connections(&self) -> &[super::TcpConn] {
        &self.conns
    }

    /// Whether the run has TCP connections.
    pub(super) fn has_connections(&self) -> bool {
        !self.conns.is_empty()
    }

    /// Each TCP sender's end and MSS.
    pub(super) fn senders(&self) -> impl Iterator<Item = (VcEnd, u32)> + '_ {
        self.conns.iter().map(|c| (c.src, c.sender.config().mss))
    }

    /// Connection `c`'s name.
    pub(super) fn conn_name(&self, c: ConnId) -> &str {
        &self.conns[c.idx()].name
    }

    /// Flow `f`'s name.
    pub(super) fn flow_name(&self, f: FlowId) -> &str {
        &self.flows[f.idx()].name
    }

    /// Each TCP connection's results over a run of `dur` seconds.
    pub(super) fn connection_results(&self, dur: f64, host_name: &dyn Fn(HostId) -> String) -> Vec<ConnectionResult> {
        self.conns
            .iter()
            .map(|c| {
                let s = &c.sender.stats;
                let bytes = c.receiver.stats.bytes_delivered;
                ConnectionResult {
                    name: c.name.clone(),
                    variant: c.sender.config().variant.name(),
                    mss: c.sender.mss(),
                    src: host_name(c.src.host),
                    dst: host_name(c.dst.host),
                    bytes_delivered: bytes,
                    goodput_bps: bytes as f64 * 8.0 / dur,
                    segments_sent: s.segments_sent,
                    retransmitted_segments: s.retransmitted_segments,
                    retransmitted_bytes: s.retransmitted_bytes,
                    timeouts: s.timeouts,
                    fast_retransmits: s.fast_retransmits,
                    dupacks_received: s.dupacks_received,
                    final_cwnd_bytes: c.sender.cwnd(),
                    final_ssthresh_bytes: c.sender.ssthresh(),
                    srtt_s: c.sender.rtt().srtt().map(|d| d.as_secs_f64()),
                    completed_at_s: c.completed_at.map(|t| t.as_secs_f64()),
                    started_at_s: c.start.as_secs_f64(),
                    transfer_throughput_bps: c
                        .completed_at
                        .filter(|&t| t > c.start)
                        .map(|t| bytes as f64 * 8.0 / (t - c.start).as_secs_f64()),
                }
            })
            .collect()
    }

    /// Each UDP flow's results over a run of `dur` seconds; `in_flight(f)`:
    /// flow `f`'s datagrams still on their way (not lost).
    pub(super) fn flow_results(
        &self,
        dur: f64,
        host_name: &dyn Fn(HostId) -> String,
        in_flight: impl Fn(u32) -> u64,
    ) -> Vec<UdpFlowResult> {
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let s = &f.stats;
                let mean = (s.received > 0).then(|| secs(s.delay_sum_ps / u128::from(s.received)));
                let gaps = interarrival(&f.arrivals);
                UdpFlowResult {
                    name: f.name.clone(),
                    src: host_name(f.src.host),
                    dst: host_name(f.dst.host),
                    refused: f.is_refused(),
                    sent: s.sent,
                    received: s.received,
                    fragments_sent: s.fragments_sent,
                    lost: s.sent - s.received - in_flight(i as u32),
                    throughput_bps: s.bytes_received as f64 * 8.0 / dur,
                    mean_delay_s: mean,
                    max_delay_s: (s.received > 0).then(|| secs(u128::from(s.delay_max_ps))),
                    min_delay_s: (s.received > 0).then(|| secs(u128::from(s.delay_min_ps))),
                    delay_variation_s: (s.received > 0).then(|| secs(u128::from(s.delay_max_ps - s.delay_min_ps))),
                    session_throughput_bps: match (s.first_sent, s.last_received) {
                        (Some(a), Some(b)) if b > a => Some(s.bytes_received as f64 * 8.0 / (b - a).as_secs_f64()),
                        _ => None,
                    },
                    arrivals_recorded: f.arrivals.len() as u64,
                    interarrival_mean_s: gaps.map(|(m, _)| m),
                    interarrival_std_s: gaps.map(|(_, sd)| sd),
                }
            })
            .collect()
    }

    /// Quantity `q` of connection `c`, for a probe.
    pub(super) fn sample_conn(&self, c: ConnId, q: ConnQuantity) -> Sample {
        let c = &self.conns[c.idx()];
        match q {
            ConnQuantity::Cwnd => Sample::Level(c.sender.cwnd() as f64),
            ConnQuantity::Ssthresh => Sample::Level(c.sender.ssthresh() as f64),
            ConnQuantity::Rto => Sample::Level(c.sender.rtt().rto().as_secs_f64()),
            ConnQuantity::Srtt => Sample::Level(c.sender.rtt().srtt().map_or(0.0, |d| d.as_secs_f64())),
            ConnQuantity::Goodput => Sample::Bytes(c.receiver.stats.bytes_delivered),
        }
    }

    /// Flow `f`'s goodput, for a probe.
    pub(super) fn sample_flow(&self, f: FlowId) -> Sample {
        Sample::Bytes(self.flows[f.idx()].stats.bytes_received)
    }

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
            (Endpoint::External(h), Payload::External(id)) => self.external_delivered(h, id),
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
        let host = self.hosts.get(src.host);
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
