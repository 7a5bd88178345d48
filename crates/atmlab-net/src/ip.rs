//! IPv4 fragmentation and the cell arithmetic of messages.
//!
//! A datagram whose transport bytes `P` (UDP header included) do not fit in
//! `MTU - 20` is cut into fragments, each with its own 20-byte IP header and
//! each carried in its own AAL5 frame. Fragment data is a multiple of 8
//! bytes (the offset field counts 8-byte units), so every fragment but the
//! last carries `F = 8 floor((MTU - 20) / 8)` bytes. The two rules differ in
//! the last fragment:
//!
//! * **RFC 791**: the last fragment may carry up to `MTU - 20` bytes.
//! * **Berkeley** (4.3BSD-derived stacks, as van den Bergh 1995 s7.4.3
//!   observed on SunOS): the last fragment too is cut to `F`, so a datagram
//!   needs `ceil(P / F)` fragments. At MTU 48 (`F = 24`) a 41-byte message
//!   (`P = 49`) becomes 24 + 24 + 1 bytes in three fragments, where RFC 791
//!   needs two (24 + 25).
//!
//! At the receiver a [`FragmentReassembler`] per flow puts them together.

use crate::aal5::{Encapsulation, IPV4_HEADER, TCP_HEADER, UDP_HEADER};
use atmlab_engine::SimTime;
use serde::{Deserialize, Serialize};

/// How the last fragment of a datagram is sized.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fragmentation {
    /// RFC 791: the last fragment may fill the MTU.
    #[default]
    Rfc791,
    /// 4.3BSD/SunOS: every fragment, the last included, carries at most
    /// `8 floor((MTU - 20) / 8)` bytes.
    Berkeley,
}

impl Fragmentation {
    /// The name used in scenarios and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Fragmentation::Rfc791 => "rfc791",
            Fragmentation::Berkeley => "berkeley",
        }
    }
}

/// The smallest MTU that can fragment (8 bytes of data after the header).
pub const MIN_MTU: u32 = IPV4_HEADER + 8;

/// The IP payload bytes of each fragment of a datagram carrying `p` bytes
/// (transport header included) over an MTU of `mtu` (>= [`MIN_MTU`]). One
/// element when it fits.
pub fn fragments(p: u32, mtu: u32, rule: Fragmentation) -> Vec<u32> {
    assert!(mtu >= MIN_MTU, "an MTU of {mtu} bytes cannot carry a fragment");
    let room = mtu - IPV4_HEADER;
    if p <= room {
        return vec![p];
    }
    let f = room / 8 * 8;
    let n = match rule {
        Fragmentation::Berkeley => p.div_ceil(f),
        Fragmentation::Rfc791 => 1 + (p - room).div_ceil(f),
    };
    let mut out = vec![f; n as usize - 1];
    out.push(p - (n - 1) * f);
    out
}

/// The transport protocol of a message.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proto {
    /// One UDP datagram (fragmented if it does not fit the MTU).
    Udp,
    /// A TCP byte stream cut into segments of MSS = MTU - 40 bytes (no
    /// options).
    Tcp,
}

/// What a message becomes on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Wire {
    /// IP datagrams (fragments or segments), each one AAL5 frame.
    pub datagrams: u64,
    /// ATM cells.
    pub cells: u64,
    /// The datagrams in the order they are sent, runs of equal sizes
    /// merged.
    pub sizes: Vec<Datagrams>,
}

/// A run of equal IP datagrams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Datagrams {
    /// IP bytes of each, header included.
    pub ip_bytes: u32,
    /// How many.
    pub count: u64,
    /// Cells of each (AAL5 trailer and padding included).
    pub cells: u32,
}

/// The datagrams and cells `payload` bytes of user data become: one UDP
/// datagram, or a TCP transfer in full segments and one short one. The TCP
/// arithmetic counts data segments only (no handshake, no ACKs).
pub fn wire(payload: u64, proto: Proto, mtu: u32, encap: Encapsulation, rule: Fragmentation) -> Wire {
    let mut sizes: Vec<Datagrams> = Vec::new();
    let mut push = |ip_bytes: u32, n: u64| {
        if n == 0 {
            return;
        }
        match sizes.last_mut() {
            Some(d) if d.ip_bytes == ip_bytes => d.count += n,
            _ => sizes.push(Datagrams { ip_bytes, count: n, cells: encap.cells_for_datagram(ip_bytes) }),
        }
    };
    match proto {
        Proto::Udp => {
            let p = u32::try_from(payload).expect("a UDP payload fits in u32") + UDP_HEADER;
            for frag in fragments(p, mtu, rule) {
                push(frag + IPV4_HEADER, 1);
            }
        }
        Proto::Tcp => {
            let mss = u64::from(mtu - IPV4_HEADER - TCP_HEADER);
            let full = payload / mss;
            let rest = payload % mss;
            push(mtu, full);
            if rest > 0 {
                push(u32::try_from(rest).expect("shorter than an MSS") + IPV4_HEADER + TCP_HEADER, 1);
            }
        }
    }
    let datagrams = sizes.iter().map(|d| d.count).sum();
    let cells = sizes.iter().map(|d| u64::from(d.cells) * d.count).sum();
    Wire { datagrams, cells, sizes }
}

/// IP reassembly at the receiver of one flow.
///
/// The fragments of a datagram travel in order on one VC, so a datagram is
/// complete when fragments 0 to `count - 1` arrive one after another; a gap,
/// or a fragment of a later datagram, abandons the one being assembled (its
/// buffer would time out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragmentReassembler {
    /// The datagram being assembled: its sequence number, the next fragment
    /// expected, and when its first fragment was sent.
    assembling: Option<(u64, u32, SimTime)>,
}

impl FragmentReassembler {
    /// Fragment `index` of `count` of datagram `seq`, sent at `sent_at`, has
    /// arrived. When it completes its datagram, returns when the datagram's
    /// first fragment was sent (for its delay).
    pub fn on_fragment(&mut self, seq: u64, index: u32, count: u32, sent_at: SimTime) -> Option<SimTime> {
        let next = match self.assembling {
            Some((s, next, first)) if s == seq && next == index => Some((next + 1, first)),
            _ if index == 0 => Some((1, sent_at)),
            _ => None,
        };
        self.assembling = next.map(|(n, first)| (seq, n, first));
        match next {
            Some((n, first)) if n == count => {
                self.assembling = None;
                Some(first)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_fragments_at_mtu_48() {
        // van den Bergh s7.4.3: 21 bytes -> 16 + 5 of data (P = 29: 24 + 5).
        assert_eq!(fragments(29, 48, Fragmentation::Berkeley), [24, 5]);
        assert_eq!(fragments(29, 48, Fragmentation::Rfc791), [24, 5]);
        // 41 bytes (P = 49): Berkeley cuts the last fragment to 24 as well.
        assert_eq!(fragments(49, 48, Fragmentation::Berkeley), [24, 24, 1]);
        assert_eq!(fragments(49, 48, Fragmentation::Rfc791), [24, 25]);
        // Fits: one datagram.
        assert_eq!(fragments(28, 48, Fragmentation::Berkeley), [28]);
    }

    #[test]
    fn test_every_fragment_but_the_last_is_a_multiple_of_8_and_data_is_conserved() {
        for mtu in [48, 68, 576, 1500, 4352, 9180, 9188] {
            for p in (1..20_000).step_by(7) {
                for rule in [Fragmentation::Rfc791, Fragmentation::Berkeley] {
                    let f = fragments(p, mtu, rule);
                    assert_eq!(f.iter().sum::<u32>(), p);
                    assert!(f.iter().all(|&x| x > 0 && x + IPV4_HEADER <= mtu));
                    assert!(f[..f.len() - 1].iter().all(|&x| x % 8 == 0));
                }
            }
        }
    }

    #[test]
    fn test_wire_counts() {
        let null = Encapsulation::Null;
        // Table 5 (MTU 9188, no LLC/SNAP): 36 bytes of overhead.
        let w = wire(8192, Proto::Udp, 9188, null, Fragmentation::Berkeley);
        assert_eq!((w.datagrams, w.cells), (1, 172));
        // Table 7: an 8192-byte burst at MTU 8192 is two datagrams, 173 cells.
        let w = wire(8192, Proto::Udp, 8192, null, Fragmentation::Berkeley);
        assert_eq!((w.datagrams, w.cells), (2, 173));
        // Table 6 at MTU 48: 9000 bytes -> 376 datagrams, 751 cells.
        let w = wire(9000, Proto::Udp, 48, null, Fragmentation::Berkeley);
        assert_eq!((w.datagrams, w.cells), (376, 751));
        // 80-byte voice over LLC/SNAP: one datagram, 3 cells.
        let w = wire(80, Proto::Udp, 9180, Encapsulation::LlcSnap, Fragmentation::Rfc791);
        assert_eq!((w.datagrams, w.cells), (1, 3));
        // TCP: 30e6 bytes at MTU 9188 -> 3279 full segments of 9148 bytes
        // and one of 3708: 629,647 cells, the least Table 9 could measure.
        let w = wire(30_000_000, Proto::Tcp, 9188, null, Fragmentation::Rfc791);
        assert_eq!(w.datagrams, 3280);
        let runs: Vec<_> = w.sizes.iter().map(|d| (d.ip_bytes, d.count, d.cells)).collect();
        assert_eq!(runs, [(9188, 3279, 192), (3748, 1, 79)]);
        assert_eq!(w.cells, 629_647);
    }

    #[test]
    fn test_fragments_in_order_complete_a_datagram_and_a_gap_abandons_it() {
        let t = |ps| SimTime::from_ps(ps);
        let mut r = FragmentReassembler::default();
        assert_eq!(r.on_fragment(0, 0, 3, t(10)), None);
        assert_eq!(r.on_fragment(0, 1, 3, t(20)), None);
        assert_eq!(r.on_fragment(0, 2, 3, t(30)), Some(t(10))); // delay from the first fragment
        // Datagram 1 loses fragment 1: fragment 2 completes nothing.
        assert_eq!(r.on_fragment(1, 0, 3, t(40)), None);
        assert_eq!(r.on_fragment(1, 2, 3, t(60)), None);
        // A single-fragment datagram after it is whole.
        assert_eq!(r.on_fragment(2, 0, 1, t(70)), Some(t(70)));
    }
}
