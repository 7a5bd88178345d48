//! The ABR destination end system (DES) of ATM Forum TM 4.0
//! (af-tm-0056.000, s5.10.5), as a sans-I/O state machine.
//!
//! The simulation keeps one [`AbrDestination`] per direction of each ABR VC
//! at a host (and at a virtual destination switch), beside the
//! [`AbrSource`](super::source::AbrSource) of the *reverse* direction there:
//! it hands the destination every data cell ([`on_data_cell`]) and forward
//! RM cell ([`on_forward_rm`]) of its direction; the destination keeps the
//! turned-around BRM that waits for transmission, the reverse source sends
//! it in rate under its rule 3b (it is told `brm_waiting()`, and on
//! [`InRate::Brm`](super::source::InRate::Brm) the caller sends
//! [`take_brm`]).
//!
//! ```text
//!   host A                                              host B
//!   AbrSource (A->B) --data, FRM------------------->  AbrDestination (A->B)
//!   AbrDestination (B->A) <--data, FRM-------------  AbrSource (B->A)
//!        |  turned-around BRM waits here                   |
//!        +-> sent by AbrSource (A->B), rule 3b --BRM----> AbrSource (B->A)
//! ```
//!
//! # The rules (numbered as in docs/models/abr.md, "Destination")
//!
//! 1. On each data cell the destination stores its EFCI bit as the VC's
//!    EFCI state (the last data cell's bit, not a sticky OR):
//!    [`on_data_cell`].
//! 2. Each FRM is turned around: DIR = backward, BN = 0, ER, CCR, MCR, CI
//!    and NI kept, and CI = 1 if the EFCI state is set, which clears it:
//!    [`turn_around`]. The destination may also lower ER or set CI/NI for
//!    its own congestion; this one does not (the caller may, e.g. with
//!    [`RmCell::lower_er`], before sending).
//! 3. If an FRM arrives while the previous turned-around BRM of the VC
//!    still waits, the new one overwrites the old, which is never sent
//!    (the recommended option; the old may also be sent out of rate or
//!    dropped): [`on_forward_rm`] keeps at most one waiting BRM. The
//!    contents of an older cell are then never sent after a newer one's.
//! 4. FRMs that arrived in rate or out of rate (CLP = 1) are both turned
//!    around; here both wait for in-rate transmission.
//! 5. A destination may generate BRMs of its own (BN = 1, CI or NI set) at
//!    most 10 cells/s: not done here.
//! 6. Turned-around BRMs go out in rate, sent by the reverse direction's
//!    source under its rule 3b (not at once): [`take_brm`] at the time of
//!    [`InRate::Brm`](super::source::InRate::Brm).
//!
//! **When the EFCI state enters a BRM.** [`take_brm`] turns the waiting
//! FRM around at transmission time, not on arrival, so that an EFCI mark
//! is carried by the BRM that is actually sent instead of being cleared
//! into one that a newer FRM then overwrites (rule 3). TM 4.0 is recalled
//! to prefer this ("as close to the transmission time as possible";
//! unverified). [`turn_around`] is the same step for a caller that sends the
//! BRM at once (e.g. a unidirectional run without a reverse source).
//!
//! # What was checked against which source (2026-11)
//!
//! * **NEC uPD98405 datasheet, destination behaviour 1-2** (p. 213; the
//!   source rules are on p. 212): the EFCI of each data cell is saved
//!   as the connection's EFCI state; a turned-around FRM gets DIR = 1,
//!   BN = 0, CCR, MCR, ER, CI and NI unchanged except CI = 1 if the saved
//!   EFCI state is 1, which is then reset. Rules 1 and 2 follow it.
//! * **Freescale MPC8260 s30.5.1.2**: DIR changed to backward,
//!   CCR and MCR kept, CI set if the previous data cell had EFCI = 1, and a
//!   new FRM overwrites a not-yet-sent one (rule 3).
//! * **YATS `src/abr/abrsink.c`**: DIR = 1 and BN = 0 on
//!   turnaround; the sink marks CI and ER from its own queue instead of the
//!   EFCI state and returns the cell at once, so it confirms neither rule 1
//!   nor rule 3.
//!
//! Unverified: the TM 4.0 text of rules 3-6 (as recalled, and from the
//! manuals above) and its own rule numbering. Full citations:
//! docs/references.md.
//!
//! [`on_data_cell`]: AbrDestination::on_data_cell
//! [`on_forward_rm`]: AbrDestination::on_forward_rm
//! [`turn_around`]: AbrDestination::turn_around
//! [`take_brm`]: AbrDestination::take_brm

use super::rm::{Direction, RmCell};

/// What became of an FRM handed to [`AbrDestination::on_forward_rm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turnaround {
    /// It waits for in-rate transmission; no BRM was waiting.
    Queued,
    /// It replaced a BRM that was still waiting (rule 3), which is lost.
    Overwrote,
}

/// Counters of a destination.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DestinationStats {
    /// Data cells received.
    pub data_cells: u64,
    /// Data cells received with EFCI = 1.
    pub efci_cells: u64,
    /// FRMs received.
    pub frms_received: u64,
    /// BRMs turned around and handed out for transmission.
    pub brms_sent: u64,
    /// Waiting BRMs overwritten by a newer FRM (rule 3).
    pub overwritten: u64,
    /// BRMs whose CI was set from the EFCI state (rule 2).
    pub ci_from_efci: u64,
}

/// The destination end system of one direction of an ABR VC.
#[derive(Clone, Debug, Default)]
pub struct AbrDestination {
    /// The EFCI state (rule 1).
    efci: bool,
    /// The FRM whose turned-around BRM waits for in-rate transmission
    /// (rule 3: at most one).
    waiting: Option<RmCell>,
    /// Counters.
    pub stats: DestinationStats,
}

impl AbrDestination {
    /// A destination with a clear EFCI state and no waiting BRM.
    pub fn new() -> AbrDestination {
        AbrDestination::default()
    }

    /// The EFCI state: the EFCI bit of the last data cell, unless a BRM has
    /// carried it away since (rules 1 and 2).
    pub fn efci_state(&self) -> bool {
        self.efci
    }

    /// Rule 1: a data cell of this VC direction arrived with EFCI `efci`.
    pub fn on_data_cell(&mut self, efci: bool) {
        self.on_data_cells(efci, 1);
    }

    /// Rule 1 for `n` data cells in a row, all with EFCI `efci`.
    pub fn on_data_cells(&mut self, efci: bool, n: u32) {
        self.efci = efci;
        self.stats.data_cells += u64::from(n);
        self.stats.efci_cells += u64::from(efci) * u64::from(n);
    }

    /// Rule 2: `frm` turned around into the BRM to send now: DIR = backward,
    /// BN = 0, ER, CCR, MCR, CI and NI kept; CI = 1 if the EFCI state is
    /// set, which this clears.
    pub fn turn_around(&mut self, frm: &RmCell) -> RmCell {
        debug_assert_eq!(frm.dir, Direction::Forward, "a backward RM cell turned around");
        let mut brm = RmCell { dir: Direction::Backward, bn: false, ..*frm };
        if self.efci {
            brm.ci = true;
            self.efci = false;
            self.stats.ci_from_efci += 1;
        }
        brm
    }

    /// Rules 2-4: an FRM of this VC direction arrived (in rate or out of
    /// rate); its BRM waits for in-rate transmission, replacing a BRM still
    /// waiting (rule 3).
    pub fn on_forward_rm(&mut self, frm: &RmCell) -> Turnaround {
        self.stats.frms_received += 1;
        match self.waiting.replace(*frm) {
            None => Turnaround::Queued,
            Some(_) => {
                self.stats.overwritten += 1;
                Turnaround::Overwrote
            }
        }
    }

    /// Whether a turned-around BRM waits for transmission (what the reverse
    /// source's rule 3b is told).
    pub fn brm_waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// The waiting BRM, turned around now (rule 2, with the EFCI state of
    /// this moment), for the reverse source's in-rate slot (rule 6); `None`
    /// if none waits.
    pub fn take_brm(&mut self) -> Option<RmCell> {
        let frm = self.waiting.take()?;
        self.stats.brms_sent += 1;
        Some(self.turn_around(&frm))
    }
}

#[cfg(test)]
#[path = "destination_tests.rs"]
mod tests;
