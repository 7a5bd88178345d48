//! End systems: an IP host with one ATM adapter.

use crate::aal5::{Encapsulation, Reassembler};
use crate::atm::VcLabel;
use crate::ids::PortId;
use crate::ip::Fragmentation;

/// One VC as a host sees it: the label and port slot it sends with, and the
/// AAL5 receiver for the cells that arrive on it.
#[derive(Clone, Debug)]
pub struct HostVc {
    /// The label of the VC on the host's link.
    pub label: VcLabel,
    /// The VC's index at the host's adapter port.
    pub slot: u16,
    /// AAL5 receiver.
    pub reassembler: Reassembler,
    /// The cell source whose cells arrive on this VC, if any (they are not
    /// AAL5 frames; the host only counts them).
    pub cell_sink: Option<u32>,
}

/// Counters of a host's receiving side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Cells that arrived.
    pub cells_received: u64,
    /// Good frames reassembled.
    pub frames_received: u64,
    /// Frames discarded by AAL5 (missing cells, merged frames).
    pub frames_discarded: u64,
    /// Cells of discarded frames ("dead cells").
    pub dead_cells: u64,
}

/// A host.
#[derive(Clone, Debug)]
pub struct Host {
    /// Its name in the scenario.
    pub name: String,
    /// Its adapter's output port (set when its link is added).
    pub port: Option<PortId>,
    /// IP MTU in bytes.
    pub mtu: u32,
    /// How IP datagrams are put into AAL5.
    pub encapsulation: Encapsulation,
    /// How datagrams larger than the MTU are cut.
    pub fragmentation: Fragmentation,
    /// Its VCs.
    pub vcs: Vec<HostVc>,
    /// Receive counters.
    pub stats: HostStats,
}

impl Host {
    /// A host with no link yet.
    pub fn new(name: String, mtu: u32, encapsulation: Encapsulation) -> Host {
        Host {
            name,
            port: None,
            mtu,
            encapsulation,
            fragmentation: Fragmentation::default(),
            vcs: Vec::new(),
            stats: HostStats::default(),
        }
    }
}
