//! Replay: the IPv4 packets of a recorded pcap injected at their
//! timestamps (relative to the first), with no wall clock: the run is
//! deterministic, event for event, and the packets delivered are written
//! to the capture files as in a live run.
//!
//! Each packet enters at the external host whose address is its source
//! address. Link types read: raw IP (101, 228), Ethernet (1; IPv4 frames
//! only), Linux cooked capture (113), and SunATM (123, atmlab's own
//! captures: the IP packet behind LLC/SNAP or null encapsulation).

use std::collections::BTreeMap;

use atmlab_engine::{Duration, SimTime};
use atmlab_net::ids::HostId;
use atmlab_net::sim::{Delivered, InjectError, Simulation};
use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file is no pcap file this reads.
    #[error("{0}")]
    Pcap(String),
    /// A link type this does not read.
    #[error("link type {0:?} is not read (raw IP, Ethernet, Linux cooked or SunATM)")]
    LinkType(DataLink),
}

/// What a replay did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayCounts {
    /// Records in the file.
    pub records: u64,
    /// Packets injected.
    pub injected: u64,
    /// Records that were no IPv4 packet, or whose source address is no
    /// external host's.
    pub skipped: u64,
    /// Packets the network refused (no route, too big, after the end).
    pub refused: u64,
}

/// The IPv4 packet in a record of link type `link`, if it holds one.
fn ip_of(link: DataLink, data: &[u8]) -> Option<&[u8]> {
    let ip = match link {
        DataLink::RAW | DataLink::IPV4 => data,
        DataLink::ETHERNET if data.len() > 14 && data[12..14] == [0x08, 0x00] => &data[14..],
        DataLink::LINUX_SLL if data.len() > 16 && data[14..16] == [0x08, 0x00] => &data[16..],
        DataLink::SUNATM if data.len() > 12 && data[4..12] == [0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00] => &data[12..],
        DataLink::SUNATM if data.len() > 4 => &data[4..],
        _ => return None,
    };
    (ip.len() >= 20 && ip[0] >> 4 == 4).then_some(ip)
}

/// Reads the pcap in `file` and injects its packets into `sim`; runs the
/// simulation to its end; returns the packets delivered, in order, and
/// the counts. The caller then calls [`Simulation::run`] for the results.
pub fn replay(sim: &mut Simulation, file: impl std::io::Read) -> Result<(Vec<Delivered>, ReplayCounts), ReplayError> {
    let mut reader = PcapReader::new(file).map_err(|e| ReplayError::Pcap(e.to_string()))?;
    let link = reader.header().datalink;
    if !matches!(link, DataLink::RAW | DataLink::IPV4 | DataLink::ETHERNET | DataLink::LINUX_SLL | DataLink::SUNATM) {
        return Err(ReplayError::LinkType(link));
    }
    let by_address: BTreeMap<[u8; 4], HostId> =
        sim.external_hosts().into_iter().map(|(h, _, a)| (a.octets(), h)).collect();
    let mut counts = ReplayCounts::default();
    let mut out = Vec::new();
    let mut first = None;
    while let Some(record) = reader.next_packet() {
        let record = record.map_err(|e| ReplayError::Pcap(e.to_string()))?;
        counts.records += 1;
        let ts = record.timestamp;
        let origin = *first.get_or_insert(ts);
        let ns = u64::try_from(ts.saturating_sub(origin).as_nanos()).unwrap_or(u64::MAX / 1000);
        let at = SimTime::ZERO.saturating_add(Duration::from_ps(ns.saturating_mul(1000)));
        let Some(ip) = ip_of(link, &record.data) else {
            counts.skipped += 1;
            continue;
        };
        let src: [u8; 4] = ip[12..16].try_into().expect("at least 20 bytes");
        let Some(&host) = by_address.get(&src) else {
            counts.skipped += 1;
            continue;
        };
        // Everything before the packet's time happens first.
        if at > sim.now() {
            sim.advance(at);
            out.extend(sim.drain());
        }
        let at = at.max(sim.now());
        match sim.inject(host, at, ip) {
            Ok(()) => counts.injected += 1,
            Err(InjectError::AfterEnd(_)) => {
                counts.refused += 1;
                break;
            }
            Err(_) => counts.refused += 1,
        }
    }
    sim.advance(sim.end());
    out.extend(sim.drain());
    Ok((out, counts))
}
