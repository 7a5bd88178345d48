//! The ATM cell as the simulator carries it.
//!
//! A real cell is 53 bytes: a 5-byte header (GFC/VPI, VCI, PTI, CLP, HEC) and
//! 48 bytes of payload. The hot path never moves payload bytes: a [`Cell`] is
//! a 16-byte record (two integers) holding the header fields that models
//! look at and a reference to the AAL5 PDU it is a piece of ([`PduId`]). Bytes are only
//! needed where they matter (HEC/CRC checks, traces), and the PDU table keeps
//! what the receiver needs to rebuild the packet.

use crate::pdu::PduId;
use std::fmt;

/// Payload bytes per cell.
pub const CELL_PAYLOAD: u32 = 48;
/// Bytes per cell on the wire.
pub const CELL_SIZE: u32 = 53;

/// A virtual channel label on one link: VPI (12 bits at the NNI, 8 at the
/// UNI) and VCI (16 bits).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VcLabel {
    /// Virtual path identifier.
    pub vpi: u16,
    /// Virtual channel identifier.
    pub vci: u16,
}

impl VcLabel {
    /// The label `vpi/vci`.
    pub const fn new(vpi: u16, vci: u16) -> VcLabel {
        VcLabel { vpi, vci }
    }
    /// The label packed into 32 bits (for table keys).
    pub const fn packed(self) -> u32 {
        ((self.vpi as u32) << 16) | self.vci as u32
    }
}

impl fmt::Display for VcLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.vpi, self.vci)
    }
}
impl fmt::Debug for VcLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Payload type indicator (3 bits, ITU-T I.361).
///
/// For user data cells the PTI is `0 C U`: `C` is the EFCI congestion bit and
/// `U` the ATM-user-to-user bit, which AAL5 sets on the last cell of a
/// CPCS-PDU (end of frame). `110` marks a VC resource-management (RM) cell.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pti(pub u8);

impl Pti {
    /// User data, not the end of a frame.
    pub const DATA: Pti = Pti(0b000);
    /// User data, last cell of an AAL5 frame.
    pub const DATA_EOF: Pti = Pti(0b001);
    /// VC-level resource management cell (ABR).
    pub const RM: Pti = Pti(0b110);
    /// Whether this is a user data cell.
    pub const fn is_user_data(self) -> bool {
        self.0 & 0b100 == 0
    }
    /// Whether this user data cell ends an AAL5 frame.
    pub const fn is_end_of_frame(self) -> bool {
        self.is_user_data() && self.0 & 0b001 != 0
    }
    /// Whether the EFCI (congestion experienced) bit is set.
    pub const fn efci(self) -> bool {
        self.is_user_data() && self.0 & 0b010 != 0
    }
    /// This user data PTI with the EFCI bit set (a congested switch marks
    /// the cell; I.361).
    pub const fn with_efci(self) -> Pti {
        if self.is_user_data() { Pti(self.0 | 0b010) } else { self }
    }
    /// This user data PTI with the EFCI bit clear (a virtual source sends
    /// its cells with EFCI = 0, TM 4.0 source rule 12).
    pub const fn without_efci(self) -> Pti {
        if self.is_user_data() { Pti(self.0 & !0b010) } else { self }
    }
    /// Whether this is a VC resource-management cell.
    pub const fn is_rm(self) -> bool {
        self.0 == Pti::RM.0
    }
}

/// What a cell is a piece of, as the simulation keeps track of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Carries {
    /// One cell of the AAL5 frame (PDU) with this id.
    Frame(PduId),
    /// An RM cell; the id names its fields in the simulation's RM table.
    Rm(PduId),
    /// Nothing the receiver rebuilds: a cell source's cell, only counted.
    Nothing,
}

/// A cell in flight or in a queue: its label, PDU, PTI, CLP and the VC's
/// index at the port it is at, packed in two integers.
///
/// Packed, not a struct of five fields, for the speed of the path every
/// cell takes: a cell is relabelled at each switch and handed across calls
/// that keep it in memory, and a field written alone (a 2-byte VC index, a
/// 4-byte label) then read back as part of a wider word cannot be
/// forwarded from the store buffer, a stall per cell and hop
/// (`docs/benchmark.md`).
/// With two words every change writes a whole word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The label (`vpi << 16 | vci`) in the low 32 bits, the PDU id in the
    /// high 32.
    lp: u64,
    /// PTI (bits 0-7), CLP (bit 8), the VC's index at the port (bits 16-31).
    meta: u32,
}

impl fmt::Debug for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cell")
            .field("label", &self.label())
            .field("pdu", &self.pdu())
            .field("pti", &self.pti())
            .field("clp", &self.clp())
            .field("vc", &self.vc())
            .finish()
    }
}

impl Cell {
    /// A cell of nothing on label 0/0 (a placeholder).
    pub const NONE: Cell = Cell::new(VcLabel::new(0, 0), PduId::NONE, Pti::DATA, false, 0);

    /// A cell on `label` of frame (or RM record) `pdu`, of VC index `vc` at
    /// its port.
    #[inline(always)]
    pub const fn new(label: VcLabel, pdu: PduId, pti: Pti, clp: bool, vc: u16) -> Cell {
        Cell {
            lp: label.packed() as u64 | ((pdu.raw() as u64) << 32),
            meta: pti.0 as u32 | ((clp as u32) << 8) | ((vc as u32) << 16),
        }
    }

    /// The label on the link it is on.
    #[inline(always)]
    pub const fn label(&self) -> VcLabel {
        VcLabel::new((self.lp >> 16) as u16, self.lp as u16)
    }

    /// The PDU (or RM record) it belongs to.
    #[inline(always)]
    pub const fn pdu(&self) -> PduId {
        PduId::from_raw((self.lp >> 32) as u32)
    }

    /// Payload type.
    #[inline(always)]
    pub const fn pti(&self) -> Pti {
        Pti(self.meta as u8)
    }

    /// Cell loss priority (true: CLP = 1, tagged).
    #[inline(always)]
    pub const fn clp(&self) -> bool {
        self.meta & 0x100 != 0
    }

    /// The VC's index at the port the cell is at (simulation-internal, not
    /// a header field).
    #[inline(always)]
    pub const fn vc(&self) -> u16 {
        (self.meta >> 16) as u16
    }

    /// The cell with another payload type.
    #[inline(always)]
    pub const fn with_pti(self, pti: Pti) -> Cell {
        Cell { meta: (self.meta & !0xff) | pti.0 as u32, ..self }
    }

    /// The cell tagged (CLP = 1) or not.
    #[inline(always)]
    pub const fn with_clp(self, clp: bool) -> Cell {
        Cell { meta: (self.meta & !0x100) | ((clp as u32) << 8), ..self }
    }

    /// The cell relabelled for the next link, of VC index `vc` at the next
    /// port.
    #[inline(always)]
    pub const fn relabelled(self, label: VcLabel, vc: u16) -> Cell {
        Cell { lp: (self.lp & !0xffff_ffff) | label.packed() as u64, meta: (self.meta & 0xffff) | ((vc as u32) << 16) }
    }

    /// The user data cell with its frame end's mark (AAL5's bit of the
    /// PTI) cleared: what a frame's other cells carry. Any other cell as
    /// it is.
    #[inline]
    pub const fn without_end_of_frame(self) -> Cell {
        if self.pti().is_user_data() { self.with_pti(Pti(self.pti().0 & !0b001)) } else { self }
    }

    /// The user data cell marked as its frame's end; any other as it is.
    #[inline]
    pub const fn ending_frame(self) -> Cell {
        if self.pti().is_user_data() { self.with_pti(Pti(self.pti().0 | 0b001)) } else { self }
    }

    /// Whether the cell ends its AAL5 frame.
    #[inline]
    pub fn is_end_of_frame(&self) -> bool {
        self.pti().is_end_of_frame()
    }

    /// Whether a host acts on this cell when it arrives (AAL5 on a frame's
    /// end, the ABR end system on an RM cell): a link into a host gives such
    /// cells an arrival event and the cells before them go with them.
    #[inline]
    pub fn needs_host_event(&self) -> bool {
        self.is_end_of_frame() || self.pti().is_rm()
    }

    /// What the cell carries (decided by its PTI and PDU id).
    #[inline]
    pub fn carries(&self) -> Carries {
        if self.pti().is_rm() {
            Carries::Rm(self.pdu())
        } else if self.pdu() == PduId::NONE {
            Carries::Nothing
        } else {
            Carries::Frame(self.pdu())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_cell_record_stays_compact() {
        assert!(std::mem::size_of::<Cell>() <= 16);
    }

    #[test]
    fn test_cell_fields_round_trip_and_change_alone() {
        let pdu = PduId::from_raw(0x0123_4567);
        let c = Cell::new(VcLabel::new(0xabc, 0xfedc), pdu, Pti::DATA_EOF, true, 0xbeef);
        assert_eq!(
            (c.label(), c.pdu(), c.pti(), c.clp(), c.vc()),
            (VcLabel::new(0xabc, 0xfedc), pdu, Pti::DATA_EOF, true, 0xbeef)
        );
        let r = c.relabelled(VcLabel::new(1, 2), 7);
        assert_eq!((r.label(), r.pdu(), r.pti(), r.clp(), r.vc()), (VcLabel::new(1, 2), pdu, Pti::DATA_EOF, true, 7));
        let t = r.with_clp(false).with_pti(Pti::RM);
        assert_eq!((t.label(), t.pdu(), t.pti(), t.clp(), t.vc()), (VcLabel::new(1, 2), pdu, Pti::RM, false, 7));
        assert_eq!(Cell::new(VcLabel::new(0, 0), PduId::NONE, Pti(0b111), false, 0).pdu(), PduId::NONE);
    }

    #[test]
    fn test_pti_end_of_frame_bit() {
        assert!(Pti::DATA_EOF.is_end_of_frame());
        assert!(!Pti::DATA.is_end_of_frame());
        assert!(!Pti::RM.is_end_of_frame()); // 110: not user data
        assert!(Pti(0b011).efci() && Pti(0b011).is_end_of_frame());
        assert_eq!(Pti::DATA_EOF.with_efci(), Pti(0b011));
        assert_eq!(Pti::RM.with_efci(), Pti::RM, "only user data carries EFCI");
        assert!(Pti::RM.is_rm() && !Pti::DATA.is_rm());
    }
}
