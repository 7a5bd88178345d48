//! The ABR service in the simulation: RM cells at hosts and switches.
//!
//! An RM cell is an ordinary cell with PTI = 110 whose PDU id names its
//! fields ([`RmCell`]) in the simulation's RM table, a one-cell entry per
//! cell in flight, released when the cell is received or lost.

use super::Simulation;
use crate::abr::RmCell;
use crate::atm::Cell;
use crate::ids::HostId;
use crate::pdu::PduId;

impl Simulation {
    /// An RM cell reached host `h` on its VC `vc`.
    pub(super) fn rm_at_host(&mut self, _h: HostId, _vc: u32, id: PduId) {
        let _fields: Option<RmCell> = self.rms.get(id).map(|p| p.payload);
        self.rms.settle_cell(id);
    }

    /// A data cell of an AAL5 frame reached host `h` on its VC `vc`
    /// (before AAL5 sees it): the ABR destination notes its EFCI bit.
    pub(super) fn data_cell_at_host(&mut self, _h: HostId, _vc: u32, _cell: Cell) {}
}
