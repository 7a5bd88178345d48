//! A switch: output-buffered, with a VC table.
//!
//! The VC table maps `(input link, VPI/VCI)` to `(output port, new
//! VPI/VCI)`. The simulation does not look it up per cell: at build time every
//! entry is compiled into the [`NextHop`](super::NextHop) of the VC at the
//! upstream port (a forwarding cache keyed by the VC's index on that link,
//! which is one-to-one with its label there). The table stays the
//! authoritative description and is what a user inspects.

use super::cell::VcLabel;
use crate::ids::PortId;
use std::collections::BTreeMap;

/// One VC table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VcRoute {
    /// The output port.
    pub out_port: PortId,
    /// The label on the output link.
    pub out_label: VcLabel,
}

/// A switch.
#[derive(Clone, Debug)]
pub struct Switch {
    /// Its name in the scenario.
    pub name: String,
    /// Its output ports.
    pub ports: Vec<PortId>,
    /// `(input port of the upstream node, label) -> route`.
    pub vc_table: BTreeMap<(PortId, VcLabel), VcRoute>,
}

impl Switch {
    /// A switch with no ports yet.
    pub fn new(name: String) -> Switch {
        Switch { name, ports: Vec::new(), vc_table: BTreeMap::new() }
    }
}
