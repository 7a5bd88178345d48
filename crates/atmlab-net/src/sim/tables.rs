//! The payloads in flight: the AAL5 frames (PDUs) and the RM cells' fields,
//! addressed by the id every cell carries ([`crate::pdu::PduId`]).
//!
//! A cell is 16 bytes and moves by value from part to part; what it
//! carries beyond its header lives here until its last cell is settled
//! (delivered, dropped or lost). The tables are the one store every part
//! that makes, carries or settles cells shares, as the kernel's clock is:
//! a part reads an entry by the id of a cell it was handed, never by
//! reaching into another part (`docs/architecture.md`, "Parts").

use super::datagram::Datagram;
use crate::pdu::PduTable;

/// The AAL5 frames and RM cells in flight.
pub(super) struct Tables {
    /// The frames, with the datagram each carries.
    pub(super) pdus: PduTable<Datagram>,
    /// The fields of the RM cells in flight.
    pub(super) rms: PduTable<crate::abr::RmCell>,
}

impl Tables {
    pub(super) fn new() -> Tables {
        Tables { pdus: PduTable::new(), rms: PduTable::new() }
    }

    /// Frames with cells still in the network (the memory guard counts them).
    pub(super) fn frames_in_flight(&self) -> u64 {
        self.pdus.in_flight() as u64
    }

    /// Entries of the frame table, live and free.
    pub(super) fn frame_slots(&self) -> u64 {
        self.pdus.slots() as u64
    }
}
