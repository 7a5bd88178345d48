//! Packet capture: the AAL5 frames that crossed a link direction, as a pcap
//! file Wireshark and tshark decode.
//!
//! A *tap* sits at the far end of one link direction (one output port), or
//! at the input of an output port (`simulation.capture_input`: every cell
//! offered to the port, before its buffer may drop it, so that a frame a
//! switch then drops is still in the file). A link tap sees every cell that
//! crossed the link, including those of frames that
//! lost cells upstream, and puts them through an AAL5 reassembler of its own
//! per VC ([`Reassembler`], the one hosts use): a frame is written when its
//! end-of-frame cell arrives and only if the reassembler accepts it (every
//! cell of one PDU, none missing). Frames that lost a cell at a switch
//! upstream or on this link, or that merged with the next after a lost
//! end-of-frame cell, are left out and counted, as a reassembling receiver
//! at that point would discard them. RM cells and the cells of cell sources
//! carry no frame and are not written.
//!
//! Each record is the frame's CPCS-PDU payload (the IP datagram in its RFC
//! 1483 encapsulation, without the AAL5 pad and trailer) behind the 4-byte
//! SunATM pseudo-header (`LINKTYPE_SUNATM`, 123: flags, VPI, VCI), stamped
//! with the arrival of its last cell at the far end (nanoseconds; pcap has
//! no picoseconds, so the time is truncated). Payload bytes are not
//! modelled: a record holds the headers only (LLC/SNAP, IPv4, TCP with its
//! options or UDP) and its original length is the frame's real length, as a
//! capture with a short snap length. IP addresses are `10.x.y.z` from the
//! host's index (host `i` of the scenario is `10.0.0.(i+1)` for the first
//! 254); TCP connection `n` runs from port `1024 + n` at its sender to port
//! 9 at its receiver, UDP flow `n` likewise. Checksums are those of the
//! segment with a payload of zero bytes, which the headers determine.

use super::{Endpoint, Payload, Simulation, SimulationError};
use crate::aal5::{Encapsulation, IPV4_HEADER, Reassembler, Reassembly, UDP_HEADER};
use crate::atm::{Carries, Cell};
use crate::ids::PortId;
use crate::ip::Fragmentation;
use crate::tcp::{TcpFlags, TcpSegment};
use atmlab_engine::SimTime;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::io::Write;

/// The pcap link type written: SunATM (4-byte pseudo-header, then the
/// reassembled AAL5 frame).
pub const LINKTYPE: DataLink = DataLink::SUNATM;

/// SunATM pseudo-header traffic type: LLC-multiplexed (RFC 1483 LLC/SNAP).
const SUNATM_LLC: u8 = 0x02;
/// SunATM pseudo-header traffic type: unknown (Wireshark guesses from the
/// bytes; an IPv4 header is recognised), used for null encapsulation.
const SUNATM_RAW: u8 = 0x00;

/// The first port of the sending side of TCP connections and UDP flows
/// (connection `n` uses `BASE_PORT + n`).
pub const BASE_PORT: u16 = 1024;
/// The receiving side's port (the discard service).
pub const SINK_PORT: u16 = 9;

/// What a capture file recorded, reported by the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TapCounts {
    /// Frames written.
    pub frames: u64,
    /// Frames that ended on the link but were incomplete (left out).
    pub left_out: u64,
}

/// One captured link direction.
struct Tap {
    /// What the errors name (the file).
    name: String,
    writer: Option<PcapWriter<Box<dyn Write + Send>>>,
    /// An AAL5 reassembler per VC of the port (by the cell's VC index).
    frames: Vec<Reassembler>,
    counts: TapCounts,
    error: Option<String>,
}

/// The taps of a run, by port.
pub(crate) struct Capture {
    /// For each port, its tap's index, or `u32::MAX`.
    /// The network's ports.
    ports: usize,
    /// Per tap point (a port's link, then a port's input: `ports + port`),
    /// its tap, or `u32::MAX`.
    by_port: Vec<u32>,
    taps: Vec<Tap>,
    buf: Vec<u8>,
}

/// How one frame becomes bytes: the addresses and ports of its flow and the
/// sender's encapsulation.
#[derive(Clone, Copy, Debug)]
pub struct FrameMeta {
    /// Source and destination IPv4 addresses.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Source transport port.
    pub sport: u16,
    /// Destination transport port.
    pub dport: u16,
    /// The sender's RFC 1483 encapsulation.
    pub encap: Encapsulation,
    /// The label on this link.
    pub vpi: u16,
    /// The label on this link.
    pub vci: u16,
}

/// What one frame carries, for [`encode`].
#[derive(Clone, Copy, Debug)]
pub enum Content<'a> {
    /// A TCP segment.
    Tcp(&'a TcpSegment),
    /// Fragment `index` of a UDP datagram of `len` user bytes (index 0 of
    /// count 1: an unfragmented datagram), cut for `mtu` by `rule`; `id` is
    /// the IP identification.
    Udp {
        /// User data bytes of the whole datagram.
        len: u32,
        /// IP identification (the same for every fragment).
        id: u16,
        /// This fragment.
        index: u32,
        /// Fragments of the datagram.
        count: u32,
        /// The sender's MTU.
        mtu: u32,
        /// The sender's fragmentation rule.
        rule: Fragmentation,
    },
    /// A whole IP packet from outside (`sim/external.rs`), written as it is.
    Ip(&'a [u8]),
}

/// The IPv4 address of host `h` (by its index): `10.0.0.1` for the first.
pub fn host_address(h: u32) -> [u8; 4] {
    let n = h + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The Internet checksum (RFC 1071) of `sum` carried over 16-bit words.
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The one's complement sum of `bytes` as big-endian 16-bit words.
fn sum16(bytes: &[u8]) -> u32 {
    bytes.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum()
}

/// TCP options in wire form, exactly [`TcpOptions::len`](crate::tcp::TcpOptions::len)
/// bytes: each option NOP-aligned to four bytes when that fits, else packed
/// and padded with end-of-list.
pub fn tcp_options(seg: &TcpSegment, out: &mut Vec<u8>) {
    let o = &seg.options;
    let want = o.len() as usize;
    let start = out.len();
    let sack = |out: &mut Vec<u8>| {
        let blocks = o.sack.as_slice();
        out.extend_from_slice(&[5, 2 + 8 * blocks.len() as u8]);
        for &(a, b) in blocks {
            out.extend_from_slice(&(a as u32).to_be_bytes());
            out.extend_from_slice(&(b as u32).to_be_bytes());
        }
    };
    let mss = |out: &mut Vec<u8>, m: u16| out.extend_from_slice(&[2, 4, (m >> 8) as u8, m as u8]);
    // Aligned: MSS, NOP WS, NOP NOP SACK-permitted, NOP NOP SACK.
    if let Some(m) = o.mss {
        mss(out, m);
    }
    if let Some(ws) = o.window_scale {
        out.extend_from_slice(&[1, 3, 3, ws]);
    }
    if o.sack_permitted {
        out.extend_from_slice(&[1, 1, 4, 2]);
    }
    if !o.sack.is_empty() {
        out.extend_from_slice(&[1, 1]);
        sack(out);
    }
    if out.len() - start != want {
        out.truncate(start);
        if let Some(m) = o.mss {
            mss(out, m);
        }
        if let Some(ws) = o.window_scale {
            out.extend_from_slice(&[3, 3, ws]);
        }
        if o.sack_permitted {
            out.extend_from_slice(&[4, 2]);
        }
        if !o.sack.is_empty() {
            sack(out);
        }
        out.resize(start + want, 0);
    }
}

/// Writes the captured bytes of one frame into `out` (cleared first): the
/// SunATM pseudo-header, the encapsulation, the IPv4 header and the
/// transport header. Returns the frame's original length (the pseudo-header
/// and the whole CPCS-PDU payload, user data included).
pub fn encode(meta: &FrameMeta, content: Content<'_>, out: &mut Vec<u8>) -> u32 {
    out.clear();
    let kind = match meta.encap {
        Encapsulation::LlcSnap => SUNATM_LLC,
        Encapsulation::Null => SUNATM_RAW,
    };
    out.push(kind);
    out.push(meta.vpi.min(255) as u8);
    out.extend_from_slice(&meta.vci.to_be_bytes());
    if meta.encap == Encapsulation::LlcSnap {
        // LLC AA-AA-03, OUI 00-00-00, EtherType IPv4.
        out.extend_from_slice(&[0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00]);
    }
    if let Content::Ip(bytes) = content {
        out.extend_from_slice(bytes);
        return 4 + meta.encap.header_bytes() + bytes.len() as u32;
    }
    // (IP payload bytes, protocol, identification, flags and fragment offset)
    let (ip_payload, proto, id, frag) = match content {
        Content::Tcp(seg) => (seg.header_len() + seg.len, 6u8, 0u16, 0x4000u16),
        Content::Udp { len, id, index, count, mtu, rule } => {
            let sizes = crate::ip::fragments(len + UDP_HEADER, mtu, rule);
            let i = (index as usize).min(sizes.len() - 1);
            debug_assert_eq!(sizes.len(), count as usize);
            let offset: u32 = sizes[..i].iter().sum();
            let more = if i + 1 < sizes.len() { 0x2000 } else { 0 };
            (sizes[i], 17u8, id, more | (offset / 8) as u16)
        }
        Content::Ip(_) => unreachable!("written above"),
    };
    let total = IPV4_HEADER + ip_payload;
    let ip = out.len();
    out.extend_from_slice(&[0x45, 0]);
    out.extend_from_slice(&(total as u16).to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&frag.to_be_bytes());
    out.extend_from_slice(&[64, proto, 0, 0]);
    out.extend_from_slice(&meta.src);
    out.extend_from_slice(&meta.dst);
    let c = fold(sum16(&out[ip..ip + IPV4_HEADER as usize]));
    out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    // The pseudo-header of the transport checksum.
    let pseudo = sum16(&meta.src) + sum16(&meta.dst) + u32::from(proto) + ip_payload;
    match content {
        Content::Tcp(seg) => {
            let t = out.len();
            out.extend_from_slice(&meta.sport.to_be_bytes());
            out.extend_from_slice(&meta.dport.to_be_bytes());
            out.extend_from_slice(&(seg.seq as u32).to_be_bytes());
            let ack = if seg.flags.contains(TcpFlags::ACK) { seg.ack as u32 } else { 0 };
            out.extend_from_slice(&ack.to_be_bytes());
            out.push(((seg.header_len() / 4) as u8) << 4);
            out.push(seg.flags.bits());
            out.extend_from_slice(&seg.window.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
            tcp_options(seg, out);
            let c = fold(pseudo + sum16(&out[t..]));
            out[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
        }
        Content::Udp { len, .. } => {
            if frag & 0x1fff == 0 {
                // The first (or only) fragment carries the UDP header.
                let u = out.len();
                let ulen = (len + UDP_HEADER) as u16;
                out.extend_from_slice(&meta.sport.to_be_bytes());
                out.extend_from_slice(&meta.dport.to_be_bytes());
                out.extend_from_slice(&ulen.to_be_bytes());
                out.extend_from_slice(&[0, 0]);
                // The checksum covers the whole datagram (the pseudo-header
                // with its full length, the UDP header, zeros).
                let pseudo = sum16(&meta.src) + sum16(&meta.dst) + 17 + u32::from(ulen);
                let c = match fold(pseudo + sum16(&out[u..])) {
                    0 => 0xffff, // RFC 768: a computed zero is sent as all ones
                    c => c,
                };
                out[u + 6..u + 8].copy_from_slice(&c.to_be_bytes());
            }
        }
        Content::Ip(_) => unreachable!("written above"),
    }
    4 + meta.encap.header_bytes() + total
}

impl Capture {
    /// No taps yet, for a network of `ports` ports.
    pub(crate) fn new(ports: usize) -> Capture {
        Capture { ports, by_port: vec![u32::MAX; 2 * ports], taps: Vec::new(), buf: Vec::with_capacity(128) }
    }

    /// Taps port `port`'s link (or, with `input`, the cells offered to the
    /// port), writing to `out`; `name` is what errors call it.
    pub(crate) fn add(&mut self, port: usize, input: bool, name: String, out: Box<dyn Write + Send>) {
        let point = if input { self.ports + port } else { port };
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: 65_535,
            datalink: LINKTYPE,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let (writer, error) = match PcapWriter::with_header(out, header) {
            Ok(w) => (Some(w), None),
            Err(e) => (None, Some(format!("{name}: {e}"))),
        };
        self.by_port[point] = self.taps.len() as u32;
        self.taps.push(Tap { name, writer, frames: Vec::new(), counts: TapCounts::default(), error });
    }

    /// The tap of `port`'s link, if it is captured.
    #[inline]
    pub(crate) fn tap_of(&self, port: usize) -> Option<usize> {
        match self.by_port.get(port) {
            Some(&t) if t != u32::MAX => Some(t as usize),
            _ => None,
        }
    }

    /// Whether any port's input is tapped.
    pub(crate) fn has_input_taps(&self) -> bool {
        self.by_port[self.ports..].iter().any(|&t| t != u32::MAX)
    }

    /// The tap of `port`'s input, if it is captured.
    #[inline]
    pub(crate) fn input_tap_of(&self, port: usize) -> Option<usize> {
        self.tap_of(self.ports + port)
    }

    /// Takes one frame cell of tap `t` (on its VC): the reassembler's verdict.
    pub(crate) fn on_cell<P>(
        &mut self,
        t: usize,
        cell: &crate::atm::Cell,
        pdus: &crate::pdu::PduTable<P>,
    ) -> Reassembly {
        let tap = &mut self.taps[t];
        let vc = cell.vc() as usize;
        if tap.frames.len() <= vc {
            tap.frames.resize(vc + 1, Reassembler::new());
        }
        let r = tap.frames[vc].on_cell(cell, pdus);
        if matches!(r, Reassembly::Discarded { .. }) {
            tap.counts.left_out += 1;
        }
        r
    }

    /// Writes one whole frame to tap `t` at `ps` picoseconds.
    pub(crate) fn write(&mut self, t: usize, ps: u64, meta: &FrameMeta, content: Content<'_>) {
        let orig = encode(meta, content, &mut self.buf);
        let tap = &mut self.taps[t];
        let Some(w) = tap.writer.as_mut() else { return };
        let ts = std::time::Duration::from_nanos(ps / 1000);
        match w.write_packet(&PcapPacket::new(ts, orig, &self.buf)) {
            Ok(_) => tap.counts.frames += 1,
            Err(e) => {
                tap.error = Some(format!("{}: {e}", tap.name));
                tap.writer = None;
            }
        }
    }

    /// Flushes every file; returns the counts of each tap by name, or the
    /// first error (a file that could not be written).
    pub(crate) fn finish(&mut self) -> Result<Vec<(String, TapCounts)>, String> {
        for tap in &mut self.taps {
            if let Some(w) = tap.writer.take() {
                let mut out = w.into_writer();
                if let Err(e) = out.flush() {
                    tap.error.get_or_insert_with(|| format!("{}: {e}", tap.name));
                }
            }
            if let Some(e) = &tap.error {
                return Err(e.clone());
            }
        }
        Ok(self.taps.iter().map(|t| (t.name.clone(), t.counts.clone())).collect())
    }
}

impl Simulation {
    /// A cell of port `p` crossed its link (it reaches the far end at
    /// `arrival`): the port's tap, if it has one, writes the frame it ends.
    /// Apart and not inlined: runs without a capture pay one test of
    /// `Network::capture` per cell put on a link.
    #[inline(never)]
    pub(super) fn capture_cell(&mut self, p: PortId, arrival: SimTime, cell: &Cell) {
        let Some(t) = self.net.capture().and_then(|c| c.tap_of(p.idx())) else { return };
        self.capture_frame(t, arrival, cell);
    }

    /// A cell is offered to port `p` at `at`: the tap of the port's input,
    /// if it has one, writes the frame it ends (before the port may drop
    /// it). Apart and not inlined, as [`capture_cell`](Self::capture_cell).
    #[inline(never)]
    pub(super) fn capture_input(&mut self, p: PortId, at: SimTime, cell: &Cell) {
        let Some(t) = self.net.capture().and_then(|c| c.input_tap_of(p.idx())) else { return };
        self.capture_frame(t, at, cell);
    }

    /// Tap `t` takes `cell` at `at`, and writes the frame it completes.
    fn capture_frame(&mut self, t: usize, arrival: SimTime, cell: &Cell) {
        if arrival >= self.k.end || !matches!(cell.carries(), Carries::Frame(_)) {
            return;
        }
        let Some(cap) = self.net.capture_mut() else { return };
        let Reassembly::Complete(id) = cap.on_cell(t, cell, &self.tables.pdus) else { return };
        let Some(pdu) = self.tables.pdus.get(id) else { return };
        let d = &pdu.payload;
        if let Payload::External(x) = d.payload {
            // Real bytes: the packet as it came in, addresses and all.
            let Some(bytes) = self.external.bytes(x) else { return };
            let sender = self.hosts.get(self.external.sender(x));
            let meta = FrameMeta {
                src: [0; 4],
                dst: [0; 4],
                sport: 0,
                dport: 0,
                encap: sender.encapsulation,
                vpi: cell.label().vpi,
                vci: cell.label().vci,
            };
            cap.write(t, arrival.as_ps(), &meta, Content::Ip(bytes));
            return;
        }
        let (src, dst, sport, dport) = match d.dest {
            Endpoint::TcpReceiver(n) => {
                let (src, dst) = self.transport.conn_ends(n);
                (src.host, dst.host, port_of(n), SINK_PORT)
            }
            Endpoint::TcpSender(n) => {
                let (src, dst) = self.transport.conn_ends(n);
                (dst.host, src.host, SINK_PORT, port_of(n))
            }
            Endpoint::UdpSink(n) => {
                let (src, dst) = self.transport.flow_ends(n);
                (src.host, dst.host, port_of(n), SINK_PORT)
            }
            Endpoint::External(_) => unreachable!("written above"),
        };
        let sender = self.hosts.get(src);
        let meta = FrameMeta {
            src: host_address(src.0),
            dst: host_address(dst.0),
            sport,
            dport,
            encap: sender.encapsulation,
            vpi: cell.label().vpi,
            vci: cell.label().vci,
        };
        let (mtu, rule) = (sender.mtu, sender.fragmentation);
        let content = match d.payload {
            Payload::Tcp(ref seg) => Content::Tcp(seg),
            Payload::Udp { len, seq } => Content::Udp { len, id: seq as u16, index: 0, count: 1, mtu, rule },
            Payload::UdpFragment { len, seq, index, count } => {
                Content::Udp { len, id: seq as u16, index, count, mtu, rule }
            }
            Payload::External(_) => unreachable!("written above"),
        };
        cap.write(t, arrival.as_ps(), &meta, content);
    }

    /// Flushes and closes the capture files and reports what each tap wrote
    /// (by file); empty without a capture. [`run`](Self::run) calls it; a
    /// caller that wants the counts calls it once it has advanced to the
    /// end (frames that cross a link later are no longer written).
    pub fn finish_capture(&mut self) -> Result<Vec<(String, TapCounts)>, SimulationError> {
        match self.net.capture_mut() {
            Some(cap) => cap.finish().map_err(SimulationError::Capture),
            None => Ok(Vec::new()),
        }
    }
}

/// The sending side's port of connection or flow `n`.
fn port_of(n: u32) -> u16 {
    BASE_PORT + (n % u32::from(u16::MAX - BASE_PORT)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::TcpOptions;

    fn meta(encap: Encapsulation) -> FrameMeta {
        FrameMeta {
            src: host_address(0),
            dst: host_address(1),
            sport: BASE_PORT,
            dport: SINK_PORT,
            encap,
            vpi: 0,
            vci: 32,
        }
    }

    /// The Internet checksum verifies: the sum over the covered bytes,
    /// checksum included, is all ones.
    fn verifies(sum: u32) -> bool {
        fold(sum) == 0
    }

    #[test]
    fn test_syn_with_options_encodes_mss_window_scale_and_sack_permitted() {
        let seg = TcpSegment {
            seq: 0,
            ack: 0,
            len: 0,
            flags: TcpFlags::SYN,
            window: 65535,
            options: TcpOptions { mss: Some(9140), window_scale: Some(5), sack_permitted: true, ..Default::default() },
        };
        let mut out = Vec::new();
        let orig = encode(&meta(Encapsulation::LlcSnap), Content::Tcp(&seg), &mut out);
        // 4 SunATM + 8 LLC/SNAP + 20 IP + 20 TCP + 12 options, all captured.
        assert_eq!(out.len(), 64);
        assert_eq!(orig, 64);
        assert_eq!(&out[..4], &[SUNATM_LLC, 0, 0, 32]);
        assert_eq!(&out[4..12], &[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
        let ip = &out[12..32];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 52, "total length");
        assert!(verifies(sum16(ip)), "IP header checksum");
        let tcp = &out[32..];
        assert_eq!(tcp[12] >> 4, 8, "data offset: 32 bytes");
        assert_eq!(tcp[13], 0x02, "SYN");
        assert_eq!(&tcp[20..], &[2, 4, 0x23, 0xb4, 1, 3, 3, 5, 1, 1, 4, 2]);
        let pseudo = sum16(&ip[12..20]) + 6 + tcp.len() as u32;
        assert!(verifies(pseudo + sum16(tcp)), "TCP checksum");
    }

    #[test]
    fn test_data_segment_is_truncated_to_headers_with_its_real_length_and_checksum() {
        let mut seg = TcpSegment {
            seq: (1 << 32) + 1000, // 64-bit model sequence numbers: the low 32 bits on the wire
            ack: 77,
            len: 512,
            flags: TcpFlags::ACK,
            window: 4096,
            options: TcpOptions::default(),
        };
        seg.options.sack.push(3000, 3512);
        seg.options.sack.push(4024, 4536);
        let mut out = Vec::new();
        let orig = encode(&meta(Encapsulation::Null), Content::Tcp(&seg), &mut out);
        // 4 + 20 IP + 20 TCP + 20 options (NOP NOP SACK 2 blocks), 512 bytes not captured.
        assert_eq!(out.len(), 64);
        assert_eq!(orig, 4 + 20 + 40 + 512);
        assert_eq!(out[0], SUNATM_RAW);
        let ip = &out[4..24];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 20 + 40 + 512);
        assert!(verifies(sum16(ip)));
        let tcp = &out[24..];
        assert_eq!(u32::from_be_bytes(tcp[4..8].try_into().unwrap()), 1000);
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 77);
        assert_eq!(u16::from_be_bytes([tcp[14], tcp[15]]), 4096);
        assert_eq!(&tcp[20..24], &[1, 1, 5, 18]);
        assert_eq!(u32::from_be_bytes(tcp[24..28].try_into().unwrap()), 3000);
        assert_eq!(u32::from_be_bytes(tcp[36..40].try_into().unwrap()), 4536);
        // Zero payload bytes add nothing to the sum: the checksum over the
        // headers with the full length is that of the whole segment.
        let pseudo = sum16(&ip[12..20]) + 6 + 40 + 512;
        assert!(verifies(pseudo + sum16(tcp)));
    }

    #[test]
    fn test_odd_option_mixes_fill_exactly_their_length() {
        let mut o = TcpOptions { mss: Some(512), window_scale: Some(3), sack_permitted: true, ..Default::default() };
        o.sack.push(1, 2);
        let seg = TcpSegment { seq: 0, ack: 0, len: 0, flags: TcpFlags::SYN, window: 1, options: o };
        let mut out = Vec::new();
        tcp_options(&seg, &mut out);
        assert_eq!(out.len(), o.len() as usize);
        assert_eq!(&out[..9], &[2, 4, 2, 0, 3, 3, 3, 4, 2], "packed when aligned would be longer");
    }

    #[test]
    fn test_udp_fragments_carry_offsets_and_one_udp_header() {
        let udp = |index| Content::Udp { len: 3000, id: 7, index, count: 3, mtu: 1500, rule: Fragmentation::Rfc791 };
        let mut out = Vec::new();
        // 3008 bytes of UDP: 1480 + 1480 + 48.
        let orig0 = encode(&meta(Encapsulation::LlcSnap), udp(0), &mut out);
        assert_eq!(orig0, 4 + 8 + 1500);
        let ip = out[12..32].to_vec();
        assert_eq!(u16::from_be_bytes([ip[6], ip[7]]), 0x2000, "MF, offset 0");
        assert!(verifies(sum16(&ip)));
        let u = &out[32..40];
        assert_eq!(u16::from_be_bytes([u[4], u[5]]), 3008);
        let pseudo = sum16(&ip[12..20]) + 17 + 3008;
        assert!(verifies(pseudo + sum16(u)), "UDP checksum of the whole datagram");
        let orig2 = encode(&meta(Encapsulation::LlcSnap), udp(2), &mut out);
        assert_eq!(orig2, 4 + 8 + 20 + 48);
        assert_eq!(out.len(), 32, "no UDP header in a later fragment");
        assert_eq!(u16::from_be_bytes([out[18], out[19]]), 2960 / 8, "last fragment: no MF, offset 370");
    }

    #[test]
    fn test_host_addresses() {
        assert_eq!(host_address(0), [10, 0, 0, 1]);
        assert_eq!(host_address(255), [10, 0, 1, 0]);
    }
}
