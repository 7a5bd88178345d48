//! External hosts: real IP packets, from outside the simulation, across
//! the simulated ATM network (`docs/emulate.md`).
//!
//! A host marked external ([`NetworkBuilder::set_external`]) has an IPv4
//! address. A packet handed to it ([`Simulation::inject`], raw IPv4 bytes,
//! at a simulated time) is routed by its destination address to the first
//! VC (in the order VCs were added) that joins the host to the external
//! host of that address, goes through the host's sending side as any
//! datagram does (its CPU and adapter, if the scenario gives it any, and
//! its ABR end on an ABR VC), is cut into cells in the host's RFC 1483
//! encapsulation (LLC/SNAP `AA-AA-03-00-00-00-08-00` by default), crosses
//! the network cell by cell, and leaves it at the destination host, when
//! AAL5 there reassembles it, as bytes with that time
//! ([`Simulation::drain`]). A frame that loses a cell (EPD, PPD, an
//! overflow, a lossy link) is not delivered: AAL5 discards it, as the
//! real receiver would.
//!
//! **Bytes off the hot path.** Only these packets carry bytes, and they
//! wait here, in an arena; the datagram in the PDU table carries the
//! arena's id ([`Payload::External`]). An entry is freed when its packet
//! is delivered; the entries of packets lost in the network are found and
//! freed by a sweep (the arena's ids still named by the PDU table, the
//! hosts' CPUs and the ABR ends are live, the rest are lost), run when the
//! arena has doubled since the last one, so that the sweep costs a
//! constant per packet and the arena stays within twice what is in
//! flight.
//!
//! **Time.** An injection is an event of its own (class 1, after the
//! arrivals at its instant, in the order of injection among simultaneous
//! ones), at a time no earlier than the end of the stretch the last
//! [`advance`](Simulation::advance) ran: nothing at or after that time
//! has happened yet, so the injected packet is exactly a datagram its
//! host's transport sends at that time. The event elision's schemes stay
//! exact (`settle.rs`, "Traffic from outside"): the only scheme that
//! looks ahead at what a host sends, ABR sources sending ahead, is off at
//! external hosts, as for hosts with UDP flows, and cell sources at an
//! external host never run ahead of it (it counts as one more sender).

use std::collections::BTreeMap;

use super::Simulation;
use super::apps::VcEnd;
use super::datagram::{Datagram, Endpoint, Payload};
use super::kernel::{APP, Event};
use crate::ids::HostId;
use atmlab_engine::SimTime;

/// Arena entries below which no sweep runs.
const FIRST_SWEEP: usize = 1024;

/// A packet that left the network at an external host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivered {
    /// The host it reached.
    pub host: HostId,
    /// When AAL5 there reassembled it.
    pub at: SimTime,
    /// The IP packet, as it was injected.
    pub bytes: Vec<u8>,
}

/// Why a packet was not taken ([`Simulation::inject`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InjectError {
    /// The host is not external.
    #[error("host {0} is not external")]
    NotExternal(String),
    /// The bytes are no IPv4 packet (too short, or another version: the
    /// first byte's high nibble, 6 for IPv6).
    #[error("not an IPv4 packet ({len} bytes, IP version {version})")]
    NotIpv4 {
        /// The packet's length.
        len: usize,
        /// The version field it has (0 for an empty packet).
        version: u8,
    },
    /// Larger than the host's MTU.
    #[error("a packet of {len} bytes exceeds host {host}'s MTU of {mtu} bytes")]
    TooBig {
        /// The host.
        host: String,
        /// The packet's length.
        len: usize,
        /// The host's MTU.
        mtu: u32,
    },
    /// No external host has the destination address, or no VC joins the
    /// two hosts.
    #[error("no route from host {host} to {dst}")]
    NoRoute {
        /// The sending host.
        host: String,
        /// The destination address.
        dst: std::net::Ipv4Addr,
    },
    /// Before the end of the stretch already run.
    #[error("injected at {at} s, before {horizon} s, where the run already is")]
    InPast {
        /// The time asked for, seconds.
        at: f64,
        /// The earliest time allowed, seconds.
        horizon: f64,
    },
    /// At or after the end of the run.
    #[error("injected at {0} s, at or after the end of the run")]
    AfterEnd(f64),
}

/// Counters of the traffic from outside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExternalCounts {
    /// Packets taken by [`Simulation::inject`].
    pub injected: u64,
    /// Packets delivered at their destination host.
    pub delivered: u64,
    /// Packets whose arena entry a sweep found lost (dropped in the
    /// network, discarded by AAL5, or lost at a full adapter).
    pub lost: u64,
}

/// An external host, as the network builder records it.
#[derive(Clone, Debug)]
pub(super) struct ExternalHost {
    pub(super) host: HostId,
    pub(super) address: [u8; 4],
}

/// A packet in the arena.
#[derive(Clone, Debug)]
struct Packet {
    /// The VC end it is sent from, and the host it goes to.
    from: VcEnd,
    to: HostId,
    bytes: Box<[u8]>,
    /// Still waiting for its injection event.
    pending: bool,
}

/// The external hosts, their routes and the packets in flight.
pub(super) struct External {
    /// Each external host and its address.
    hosts: Vec<ExternalHost>,
    /// By address, the host.
    by_address: BTreeMap<[u8; 4], HostId>,
    /// By (sending host, destination host), the sending host's VC.
    routes: BTreeMap<(HostId, HostId), u32>,
    packets: Vec<Option<Packet>>,
    free: Vec<u32>,
    live: usize,
    sweep_at: usize,
    out: Vec<Delivered>,
    counts: ExternalCounts,
}

impl External {
    /// The external `hosts`, with routes over the VCs `vcs` (each VC's two
    /// ends and whether it carries cells both ways), first VC first.
    pub(super) fn new(hosts: Vec<ExternalHost>, vcs: &[(VcEnd, VcEnd, bool)]) -> External {
        let by_address: BTreeMap<[u8; 4], HostId> = hosts.iter().map(|h| (h.address, h.host)).collect();
        let external = |h: HostId| hosts.iter().any(|x| x.host == h);
        let mut routes = BTreeMap::new();
        for &(a, b, duplex) in vcs {
            if external(a.host) && external(b.host) {
                routes.entry((a.host, b.host)).or_insert(a.vc);
                if duplex {
                    routes.entry((b.host, a.host)).or_insert(b.vc);
                }
            }
        }
        External {
            hosts,
            by_address,
            routes,
            packets: Vec::new(),
            free: Vec::new(),
            live: 0,
            sweep_at: FIRST_SWEEP,
            out: Vec::new(),
            counts: ExternalCounts::default(),
        }
    }

    /// Entries of the arena, live and free.
    #[cfg(test)]
    pub(super) fn entries(&self) -> usize {
        self.packets.len()
    }

    /// Whether host `h` is external.
    pub(super) fn is_external(&self, h: HostId) -> bool {
        self.hosts.iter().any(|x| x.host == h)
    }

    /// The host packet `id` was injected at (`HostId(0)` once it is gone).
    pub(super) fn sender(&self, id: u32) -> HostId {
        self.packets.get(id as usize).and_then(Option::as_ref).map_or(HostId(0), |p| p.from.host)
    }

    /// The bytes of packet `id`, while it is in flight.
    pub(super) fn bytes(&self, id: u32) -> Option<&[u8]> {
        self.packets.get(id as usize)?.as_ref().map(|p| &*p.bytes)
    }

    fn insert(&mut self, p: Packet) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.packets[i as usize] = Some(p);
            i
        } else {
            self.packets.push(Some(p));
            (self.packets.len() - 1) as u32
        }
    }

    fn take(&mut self, id: u32) -> Option<Packet> {
        let p = self.packets.get_mut(id as usize)?.take()?;
        self.live -= 1;
        self.free.push(id);
        Some(p)
    }

    /// Frees the entries not in `referenced` and not pending: packets lost
    /// in the network.
    fn sweep(&mut self, referenced: &std::collections::BTreeSet<u32>) {
        for i in 0..self.packets.len() {
            let lost = self.packets[i].as_ref().is_some_and(|p| !p.pending && !referenced.contains(&(i as u32)));
            if lost {
                self.take(i as u32);
                self.counts.lost += 1;
            }
        }
        self.sweep_at = (2 * self.live).max(FIRST_SWEEP);
    }
}

impl Simulation {
    /// The external hosts: each one's id, name and IPv4 address, in the
    /// order they were marked.
    pub fn external_hosts(&self) -> Vec<(HostId, String, std::net::Ipv4Addr)> {
        self.external
            .hosts
            .iter()
            .map(|x| (x.host, self.hosts.name(x.host).to_owned(), std::net::Ipv4Addr::from(x.address)))
            .collect()
    }

    /// Hands the IPv4 packet `bytes` to external host `host`'s sending
    /// side at simulated time `at`, which must not be before the end of
    /// the stretch the last [`advance`](Self::advance) ran (nor before
    /// now), and before the end of the run. The packet is routed by its
    /// destination address (module docs). An error says why the packet was
    /// not taken; the run is unchanged then.
    pub fn inject(&mut self, host: HostId, at: SimTime, bytes: &[u8]) -> Result<(), InjectError> {
        let name = || self.hosts.name(host).to_owned();
        if host.idx() >= self.hosts.all().len() || !self.external.is_external(host) {
            let name = self.hosts.all().get(host.idx()).map_or_else(|| format!("#{}", host.0), |h| h.name.clone());
            return Err(InjectError::NotExternal(name));
        }
        let horizon = self.k.until.max(self.k.now);
        if at < horizon {
            return Err(InjectError::InPast { at: at.as_secs_f64(), horizon: horizon.as_secs_f64() });
        }
        if at >= self.k.end {
            return Err(InjectError::AfterEnd(at.as_secs_f64()));
        }
        if bytes.len() < 20 || bytes[0] >> 4 != 4 {
            let version = bytes.first().map_or(0, |b| b >> 4);
            return Err(InjectError::NotIpv4 { len: bytes.len(), version });
        }
        let mtu = self.hosts.get(host).mtu;
        if bytes.len() > mtu as usize {
            return Err(InjectError::TooBig { host: name(), len: bytes.len(), mtu });
        }
        let dst: [u8; 4] = bytes[16..20].try_into().expect("checked: at least 20 bytes");
        let no_route = || InjectError::NoRoute { host: name(), dst: std::net::Ipv4Addr::from(dst) };
        let to = *self.external.by_address.get(&dst).ok_or_else(no_route)?;
        let vc = *self.external.routes.get(&(host, to)).ok_or_else(no_route)?;
        if self.external.live >= self.external.sweep_at {
            self.sweep_external();
        }
        let packet = Packet { from: VcEnd { host, vc }, to, bytes: bytes.into(), pending: true };
        let id = self.external.insert(packet);
        self.external.counts.injected += 1;
        self.k.queue.push(at, APP, Event::External(id));
        Ok(())
    }

    /// The packets delivered at external hosts since the last call, in
    /// the order they were delivered (by time).
    pub fn drain(&mut self) -> Vec<Delivered> {
        std::mem::take(&mut self.external.out)
    }

    /// The time of the next event, if any is left (the next moment
    /// anything in the run can change, or a packet be delivered).
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        self.k.queue.peek_time().filter(|&t| t < self.k.end)
    }

    /// Cells waiting in external host `host`'s adapter and sending CPU, at
    /// the latest time the run has reached: a driver stops reading the
    /// host's device while this is high (back-pressure).
    pub fn adapter_backlog(&mut self, host: HostId) -> u64 {
        let Some(port) = self.hosts.get(host).port else { return 0 };
        let t = self.k.now;
        self.settle(t, None, super::settle::Reader::Adapter(port));
        let queued = u64::from(self.net.port_mut(port).queued_at(t));
        queued + self.hosts.cells_waiting_at(host) + self.abr.cells_held_at(host)
    }

    /// What the traffic from outside did so far (a packet counts as lost
    /// once nothing in the network holds it any more).
    pub fn external_counts(&mut self) -> ExternalCounts {
        self.sweep_external();
        self.external.counts
    }

    /// The injection event of packet `id`: its host's transport sends it.
    pub(super) fn on_external(&mut self, id: u32) {
        let Some(p) = self.external.packets.get_mut(id as usize).and_then(Option::as_mut) else { return };
        p.pending = false;
        let (from, to, len) = (p.from, p.to, p.bytes.len() as u32);
        let datagram = Datagram { dest: Endpoint::External(to.0), payload: Payload::External(id) };
        self.send_datagram(from, datagram, len);
    }

    /// Packet `id` reached external host `h`'s transport: it leaves the
    /// network.
    pub(super) fn external_delivered(&mut self, h: u32, id: u32) {
        let Some(p) = self.external.take(id) else { return };
        self.external.counts.delivered += 1;
        self.external.out.push(Delivered { host: HostId(h), at: self.k.now, bytes: p.bytes.into_vec() });
    }

    /// Frees the arena entries of packets lost in the network.
    #[cold]
    fn sweep_external(&mut self) {
        let id = |d: &Datagram| if let Payload::External(i) = d.payload { Some(i) } else { None };
        let network = self.tables.pdus.live().filter_map(|p| id(&p.payload));
        let held = self.abr.datagrams_held().filter_map(id);
        let at_hosts = self.hosts.datagrams_waiting().filter_map(id);
        let referenced = network.chain(held).chain(at_hosts).collect();
        self.external.sweep(&referenced);
    }
}
