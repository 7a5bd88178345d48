//! The table of AAL5 PDUs in flight.
//!
//! Cells do not carry bytes; each carries the [`PduId`] of the CPCS-PDU it was
//! cut from. The table holds what the receiving host needs to rebuild the
//! packet (the transport segment or datagram) and counts the PDU's cells whose
//! fate is still open. When the last of them is either delivered to a
//! reassembler or dropped, the entry is released and its slot reused, so the
//! table never grows beyond the number of PDUs in flight.
//!
//! A [`PduId`] is a 24-bit slot index plus an 8-bit generation that changes on
//! every reuse, so a receiver that still holds the id of a released PDU (the
//! first PDU of two frames merged by a lost end-of-frame cell) never mistakes
//! a newer PDU in the same slot for it.

use crate::tcp::TcpSegment;
use atmlab_engine::SimTime;

/// Identifies a PDU in the [`PduTable`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PduId(u32);

const INDEX_BITS: u32 = 24;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

impl PduId {
    /// An id that never names a live PDU: the mark of a cell that is not
    /// part of an AAL5 frame (a cell source's cells).
    pub const NONE: PduId = PduId(u32::MAX);

    fn new(index: u32, generation: u8) -> PduId {
        PduId((u32::from(generation) << INDEX_BITS) | index)
    }
    fn index(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }
}

/// The endpoint that consumes a PDU at the receiving host.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Endpoint {
    /// The receiving side of TCP connection `n` (data segments).
    TcpReceiver(u32),
    /// The sending side of TCP connection `n` (ACKs, SYN-ACK).
    TcpSender(u32),
    /// The sink of UDP flow `n`.
    UdpSink(u32),
}

/// What an IP datagram carries.
#[derive(Clone, Debug)]
pub enum Payload {
    /// A TCP segment.
    Tcp(TcpSegment),
    /// A UDP datagram with `len` bytes of user data, the `seq`-th of its flow.
    Udp {
        /// User data bytes.
        len: u32,
        /// Sequence number of the datagram within its flow.
        seq: u64,
    },
    /// Fragment `index` of `count` of a UDP datagram too large for the MTU
    /// (see [`crate::ip`]); the receiver delivers the datagram when all have
    /// arrived.
    UdpFragment {
        /// User data bytes of the whole datagram.
        len: u32,
        /// Sequence number of the datagram within its flow.
        seq: u64,
        /// This fragment's position, from 0.
        index: u32,
        /// Fragments of the datagram.
        count: u32,
    },
}

/// One AAL5 CPCS-PDU (one IP datagram plus its encapsulation).
#[derive(Clone, Debug)]
pub struct Pdu {
    /// Who consumes it at the far end.
    pub dest: Endpoint,
    /// The transport payload.
    pub payload: Payload,
    /// Number of cells the PDU was cut into.
    pub cells: u32,
    /// When its first cell was queued at the sender.
    pub sent_at: SimTime,
    outstanding: u32,
    delivered: bool,
}

impl Pdu {
    /// Whether the PDU reached its endpoint.
    pub fn is_delivered(&self) -> bool {
        self.delivered
    }
}

struct Slot {
    generation: u8,
    pdu: Option<Pdu>,
}

/// Counts kept by the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PduCounts {
    /// PDUs created (frames sent).
    pub created: u64,
    /// PDUs released after delivery.
    pub delivered: u64,
    /// PDUs released without delivery (a cell dropped, or the frame merged
    /// with another by a lost end-of-frame cell).
    pub lost: u64,
}

/// The PDU table of a run.
#[derive(Default)]
pub struct PduTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    counts: PduCounts,
}

impl PduTable {
    /// An empty table.
    pub fn new() -> PduTable {
        PduTable::default()
    }

    /// Registers a PDU of `cells` cells and returns its id.
    pub fn insert(&mut self, dest: Endpoint, payload: Payload, cells: u32, now: SimTime) -> PduId {
        assert!(cells > 0, "a PDU has at least one cell");
        let pdu = Pdu { dest, payload, cells, sent_at: now, outstanding: cells, delivered: false };
        self.counts.created += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.pdu = Some(pdu);
            PduId::new(i, slot.generation)
        } else {
            let i = u32::try_from(self.slots.len()).expect("PDU table index overflow");
            assert!(i <= INDEX_MASK, "more than 16M PDUs in flight");
            self.slots.push(Slot { generation: 0, pdu: Some(pdu) });
            PduId::new(i, 0)
        }
    }

    /// The live PDU `id`, if any.
    pub fn get(&self, id: PduId) -> Option<&Pdu> {
        let slot = self.slots.get(id.index())?;
        match &slot.pdu {
            Some(p) if PduId::new(id.index() as u32, slot.generation) == id => Some(p),
            _ => None,
        }
    }

    /// Marks `id` as delivered to its endpoint.
    pub fn mark_delivered(&mut self, id: PduId) {
        if let Some(p) = self.slots[id.index()].pdu.as_mut() {
            p.delivered = true;
        }
    }

    /// One cell of `id` has met its fate (arrived at a reassembler or was
    /// dropped); releases the PDU after its last cell.
    #[inline]
    pub fn settle_cell(&mut self, id: PduId) {
        let slot = &mut self.slots[id.index()];
        let pdu = slot.pdu.as_mut().expect("a cell refers to a released PDU");
        pdu.outstanding -= 1;
        if pdu.outstanding == 0 {
            if pdu.delivered {
                self.counts.delivered += 1;
            } else {
                self.counts.lost += 1;
            }
            slot.pdu = None;
            self.free.push(id.index() as u32);
        }
    }

    /// The live PDUs.
    pub fn live(&self) -> impl Iterator<Item = &Pdu> {
        self.slots.iter().filter_map(|s| s.pdu.as_ref())
    }

    /// Entries of the table, live and free.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// PDUs whose cells are not all settled yet.
    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Cells not yet settled, summed over live PDUs.
    pub fn outstanding_cells(&self) -> u64 {
        self.slots.iter().filter_map(|s| s.pdu.as_ref()).map(|p| u64::from(p.outstanding)).sum()
    }

    /// The table's counters.
    pub fn counts(&self) -> PduCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp() -> Payload {
        Payload::Udp { len: 80, seq: 0 }
    }

    #[test]
    fn test_released_slot_gets_new_generation() {
        let mut t = PduTable::new();
        let a = t.insert(Endpoint::UdpSink(0), udp(), 1, SimTime::ZERO);
        t.settle_cell(a);
        let b = t.insert(Endpoint::UdpSink(0), udp(), 1, SimTime::ZERO);
        assert_ne!(a, b);
        assert!(t.get(a).is_none());
        assert!(t.get(b).is_some());
    }

    #[test]
    fn test_counts_delivered_and_lost() {
        let mut t = PduTable::new();
        let a = t.insert(Endpoint::UdpSink(0), udp(), 2, SimTime::ZERO);
        let b = t.insert(Endpoint::UdpSink(0), udp(), 2, SimTime::ZERO);
        t.settle_cell(a);
        t.mark_delivered(a);
        t.settle_cell(a);
        t.settle_cell(b);
        assert_eq!(t.outstanding_cells(), 1);
        t.settle_cell(b);
        assert_eq!(t.counts(), PduCounts { created: 2, delivered: 1, lost: 1 });
        assert_eq!(t.in_flight(), 0);
    }
}
