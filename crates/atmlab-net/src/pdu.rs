//! The table of AAL5 PDUs in flight.
//!
//! Cells do not carry bytes; each carries the [`PduId`] of the CPCS-PDU it was
//! cut from. The table holds what the receiving host needs to rebuild the
//! packet (whatever the layer above puts in a PDU: the type `P`; the
//! simulation's is an IP datagram and its transport payload) and counts the
//! PDU's cells whose fate is still open. When the last of them is either delivered to a
//! reassembler or dropped, the entry is released and its slot reused, so the
//! table never grows beyond the number of PDUs in flight.
//!
//! A [`PduId`] is a 24-bit slot index plus an 8-bit generation that changes on
//! every reuse, so a receiver that still holds the id of a released PDU (the
//! first PDU of two frames merged by a lost end-of-frame cell) never mistakes
//! a newer PDU in the same slot for it.

use atmlab_engine::SimTime;

/// Identifies a PDU in the [`PduTable`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PduId(u32);

const INDEX_BITS: u32 = 24;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// The most PDUs the table holds at once: 2^24 - 1 (the index bits; the
/// largest index is [`PduId::NONE`]'s).
pub const MAX_PDUS_IN_FLIGHT: u32 = INDEX_MASK;

impl PduId {
    /// An id that never names a live PDU: the mark of a cell that is not
    /// part of an AAL5 frame (a cell source's cells).
    pub const NONE: PduId = PduId(u32::MAX);

    /// The id as one integer (a cell carries it packed).
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }

    /// The id `raw` was made from.
    pub(crate) const fn from_raw(raw: u32) -> PduId {
        PduId(raw)
    }

    fn new(index: u32, generation: u8) -> PduId {
        PduId((u32::from(generation) << INDEX_BITS) | index)
    }
    fn index(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }
}

/// One AAL5 CPCS-PDU carrying a `P` (for the simulation, one IP datagram).
#[derive(Clone, Debug)]
pub struct Pdu<P> {
    /// What it carries.
    pub payload: P,
    /// Number of cells the PDU was cut into.
    pub cells: u32,
    /// When its first cell was queued at the sender.
    pub sent_at: SimTime,
    outstanding: u32,
    delivered: bool,
}

impl<P> Pdu<P> {
    /// Whether the PDU reached its endpoint.
    pub fn is_delivered(&self) -> bool {
        self.delivered
    }
}

struct Slot<P> {
    generation: u8,
    pdu: Option<Pdu<P>>,
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
pub struct PduTable<P> {
    slots: Vec<Slot<P>>,
    free: Vec<u32>,
    counts: PduCounts,
}

impl<P> Default for PduTable<P> {
    fn default() -> Self {
        PduTable { slots: Vec::new(), free: Vec::new(), counts: PduCounts::default() }
    }
}

impl<P> PduTable<P> {
    /// An empty table.
    pub fn new() -> PduTable<P> {
        PduTable::default()
    }

    /// Registers a PDU of `cells` cells carrying `payload` and returns its
    /// id, or `None` when [`MAX_PDUS_IN_FLIGHT`] PDUs are in flight already
    /// (the caller stops the run: so many frames in flight only happen when
    /// a sender offers far more than the network carries).
    pub fn insert(&mut self, payload: P, cells: u32, now: SimTime) -> Option<PduId> {
        assert!(cells > 0, "a PDU has at least one cell");
        let pdu = Pdu { payload, cells, sent_at: now, outstanding: cells, delivered: false };
        self.counts.created += 1;
        if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.generation = slot.generation.wrapping_add(1);
            slot.pdu = Some(pdu);
            Some(PduId::new(i, slot.generation))
        } else {
            let i = u32::try_from(self.slots.len()).ok().filter(|i| *i < MAX_PDUS_IN_FLIGHT)?;
            self.slots.push(Slot { generation: 0, pdu: Some(pdu) });
            Some(PduId::new(i, 0))
        }
    }

    /// The live PDU `id`, if any.
    pub fn get(&self, id: PduId) -> Option<&Pdu<P>> {
        let slot = self.slots.get(id.index())?;
        match &slot.pdu {
            Some(p) if PduId::new(id.index() as u32, slot.generation) == id => Some(p),
            _ => None,
        }
    }

    /// The live PDU `id`, if any, to change its payload.
    pub fn get_mut(&mut self, id: PduId) -> Option<&mut Pdu<P>> {
        let slot = self.slots.get_mut(id.index())?;
        match &mut slot.pdu {
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

    /// Keeps the live PDU `id` (and its id) from being released until one
    /// more [`settle_cell`](Self::settle_cell): for work on it that is due
    /// after its cells may all have met their fate (the ER an ABR switch
    /// writes into an RM cell it took ahead of time).
    pub fn hold(&mut self, id: PduId) {
        if let Some(p) = self.get_mut(id) {
            p.outstanding += 1;
        }
    }

    /// One cell of `id` has met its fate (arrived at a reassembler or was
    /// dropped); releases the PDU after its last cell.
    #[inline]
    pub fn settle_cell(&mut self, id: PduId) {
        self.settle_cells(id, 1);
    }

    /// `n` cells of `id` have met their fate (see [`settle_cell`](Self::settle_cell)).
    #[inline]
    pub fn settle_cells(&mut self, id: PduId, n: u32) {
        let slot = &mut self.slots[id.index()];
        let pdu = slot.pdu.as_mut().expect("a cell refers to a released PDU");
        pdu.outstanding -= n;
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
    pub fn live(&self) -> impl Iterator<Item = &Pdu<P>> {
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

    fn udp() -> &'static str {
        "an 80-byte datagram"
    }

    #[test]
    fn test_released_slot_gets_new_generation() {
        let mut t = PduTable::new();
        let a = t.insert(udp(), 1, SimTime::ZERO).unwrap();
        t.settle_cell(a);
        let b = t.insert(udp(), 1, SimTime::ZERO).unwrap();
        assert_ne!(a, b);
        assert!(t.get(a).is_none());
        assert!(t.get(b).is_some());
    }

    #[test]
    fn test_counts_delivered_and_lost() {
        let mut t = PduTable::new();
        let a = t.insert(udp(), 2, SimTime::ZERO).unwrap();
        let b = t.insert(udp(), 2, SimTime::ZERO).unwrap();
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
