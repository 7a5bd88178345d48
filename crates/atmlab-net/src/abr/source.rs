//! The ABR source end system (SES) of ATM Forum TM 4.0 (af-tm-0056.000,
//! s5.10.4, source behaviours 1-13), as a sans-I/O state machine.
//!
//! The simulation keeps one [`AbrSource`] per direction of each ABR VC at a
//! host and drives it with these calls:
//!
//! * when an in-rate slot comes (the previous in-rate cell left
//!   [`cell_interval_ps`](AbrSource::cell_interval_ps) ago) it asks
//!   [`next_in_rate`](AbrSource::next_in_rate) what to send: an FRM (with its
//!   fields), the BRM waiting at the destination of the reverse direction,
//!   a data cell, or nothing;
//! * every backward RM cell of this VC direction that arrives goes to
//!   [`on_backward_rm`](AbrSource::on_backward_rm) (rules 8 and 9);
//! * while the ACR is below TCR in-rate sending is stopped (state
//!   [`SourceState::Stopped`]); [`out_of_rate_due`](AbrSource::out_of_rate_due)
//!   says when the next out-of-rate FRM may go and
//!   [`next_out_of_rate`](AbrSource::next_out_of_rate) gives it (rule 11).
//!
//! | state | on | to |
//! |---|---|---|
//! | [`Start`](SourceState::Start) | the first in-rate cell, an FRM (rule 2) | `Sending` |
//! | `Start`, [`Sending`](SourceState::Sending) | ACR < TCR (at setup, after a BRM, or by rules 5-6 at an FRM) | `Stopped` |
//! | [`Stopped`](SourceState::Stopped) | ACR >= TCR (after a BRM) | `Sending`, or `Start` if no in-rate FRM was ever sent |
//!
//! The caller owns the pacing: it sends the next in-rate cell
//! `cell_interval_ps()` after the previous one, carrying the fraction of a
//! picosecond (as the GCRA and slot clocks do), and may reschedule a pending
//! cell when a BRM changes the ACR (YATS does: last in-rate cell + the new
//! interval, never earlier than now). Rule 7 only requires cells after an FRM
//! to follow a rate that FRM changed. Cells sent in rate have CLP = 0
//! (rule 4) and data cells leave with EFCI = 0 (rule 12); out-of-rate FRMs
//! have CLP = 1.
//!
//! # The rules, and where each is implemented
//!
//! Behaviour text restated from TM 4.0 s5.10.4, as checked against the
//! sources below (docs/models/abr.md, "Source" and "Sources and what each
//! confirmed"; full citations in docs/references.md):
//!
//! | rule | what | here |
//! |---|---|---|
//! | 1 | `MCR <= ACR <= PCR`; in-rate cells at most at ACR | every ACR update clamps; [`AbrSource::cell_interval_ps`] |
//! | 2 | `ACR = ICR` at setup; the first in-rate cell is an FRM | [`AbrSource::new`], [`SourceState::Start`] |
//! | 3 | (a) an FRM iff due (Mrm cells and Trm, or Nrm - 1 cells, since the last); (b) else a waiting BRM; (c) else data | [`AbrSource::next_in_rate`] |
//! | 4 | in-rate cells have CLP = 0 | the caller |
//! | 5 | before an in-rate FRM: `ACR > ICR` and more than ADTF since the last in-rate FRM: `ACR = ICR` | `use_it_or_lose_it` |
//! | 6 | then: `>= CRM` in-rate FRMs since the last BRM with BN = 0: `ACR = max(MCR, ACR - ACR*CDF)` | `missing_feedback` |
//! | 7 | then CCR = ACR in the FRM | `forward_rm` |
//! | 8 | BRM with CI = 1: `ACR = max(MCR, ACR - ACR*RDF)`; CI = 0 and NI = 0: `ACR = min(PCR, ACR + RIF*PCR)`; NI = 1: no increase | `rule8_binary` |
//! | 9 | then `ACR = max(MCR, min(ACR, ER))` | `rule9_explicit` |
//! | 10 | FRM fields: DIR = forward, BN = 0, CI = 0, NI = 0, ER = PCR, CCR = ACR, MCR | `forward_rm` |
//! | 11 | out-of-rate FRMs at most TCR | [`AbrSource::next_out_of_rate`] |
//! | 12 | EFCI = 0 on every data cell sent | the caller |
//! | 13 | optional extra use-it-or-lose-it policies | not implemented |
//!
//! Rules 5, 6 and 8 allow "at least"/"no more than" those amounts; this is
//! the reference behaviour with exactly those amounts (as YATS and the chip
//! manuals below implement it).
//!
//! # What was checked against which source (2026-11)
//!
//! * **TM 4.0 text, rules 3a-c, 4, 5, 6, 7 and the first half of 8**: as
//!   quoted in S. Kalyanaraman's dissertation (OSU 1997), Appendix A
//!   pp. 381-382 (yumpu copy, page 409). The code
//!   follows it: `Nrm - 1` cells (not `Nrm`) between FRMs, "at least Mrm"
//!   cells and "at least Trm", rule 5's strict "greater than ADTF" measured
//!   from the last in-rate FRM, rule 6's "at least CRM" FRMs since the last
//!   BRM with BN = 0, CCR set after rules 5 and 6.
//! * **NEC uPD98501 user's manual s4.8.5.1 (a)-(f)**: the same
//!   wording for rules 1-6, in particular "sets ACR to ICR" at setup.
//! * **Freescale MPC8260 reference manual s30.5.1 and figure 30-12**
//!   (and the MPC8280 manual s31.5.1): FRM fields DIR = forward,
//!   CCR = ACR, ER = PCR, CI = NI = CLP = 0 (rule 10); rule 9 as
//!   `max(min(ACR, ER), MCR)`; a source with ACR < TCR sends out-of-rate
//!   FRMs at TCR and no data (the stop convention below).
//! * **YATS `src/abr/abrsrc.c`** (`hleuwer/luayats`): the defaults
//!   (Trm 100 ms, RIF = RDF = CDF = 1/16, TCR 10, ADTF 0.5 s, Nrm 32,
//!   Mrm 2, TBE 2^24 - 1), `ICR = min(ICR, TBE/FRTT)`, the counters
//!   (`IR_count` starts at 1 with the FRM and an FRM is due at `>= Nrm`, i.e.
//!   after `Nrm - 1` other cells; the Mrm test `IR_count > Mrm`, i.e. at
//!   least Mrm other cells), rule 5 with a strict `>` from the last in-rate
//!   FRM, rule 6 applied when `unack >= CRM` before counting the FRM, the
//!   rule 6 counter reset by BN = 0 BRMs only, the trailing FRM an idle
//!   source sends once its Trm expires.
//! * **A MIB description of TBE** (mib-explorer.com, OID
//!   1.3.6.1.4.1.562.2.4.1.114.9.2.2.2.110.1.11): TBE/FRTT bounds ICR and
//!   TBE/Nrm gives CRM.
//!
//! Unverified (TM 4.0 itself could not be read): the exact text of rules
//! 9-13 (taken from the manuals above), the ranges of the parameters in
//! [`AbrParams::validate`] (TM 4.0's signalled ranges as recalled; the FRTT
//! limit of 2^24 - 1 us in particular), and whether `CRM = ceil(TBE/Nrm)`
//! is the standard's rounding (atmlab's choice, below).
//!
//! # DISAGREEMENTs and the choices made (the standard wins)
//!
//! * **Rule 9 below MCR.** YATS lowers ACR to ER only if `ER >= MCR` and
//!   otherwise leaves ACR unchanged; TM 4.0 (and the MPC8260) set
//!   `ACR = max(MCR, min(ACR, ER))`, i.e. to MCR. We follow the standard.
//! * **CRM rounding.** YATS uses the integer quotient `TBE / Nrm` (524,287
//!   for the defaults). We use the ceiling, `ceil(TBE/Nrm)` (524,288), so
//!   that CRM FRMs cover at least TBE cells; both agree when Nrm divides TBE
//!   (TBE 4096 gives 128).
//! * **FRM spacing in the MPC8260.** Its flowchart counts only data and BRM
//!   cells from 0 and sends an FRM at `Count >= Nrm` (one FRM per `Nrm + 1`
//!   cells) and tests `Count > Mrm`; its text cuts ACR after "more than"
//!   CRM FRMs (its flowchart: `>=`) and after ADTF without the `ACR > ICR`
//!   condition. TM 4.0 as quoted, the
//!   uPD98501 and YATS give one FRM per Nrm cells, "at least" Mrm and CRM,
//!   and the `ACR > ICR` condition. We follow TM 4.0.
//! * **The uPD98405 rule 5** is a vendor use-it-or-lose-it (steps of 15/16
//!   towards the measured rate), closer to the optional rule 13; not used.
//! * **Stopping in-rate sending.** Rule 1 as we read it permits in-rate
//!   cells at any ACR > 0; the simulators stop them at low ACR so that a source at
//!   ACR = 0 probes with out-of-rate FRMs. YATS stops at `ACR <= TCR`, the
//!   MPC8260 at `ACR < TCR`. We stop at `ACR < TCR`:
//!   a source whose MCR equals TCR then keeps its guaranteed rate in rate.
//! * **When out-of-rate FRMs go.** YATS sends one whenever no in-rate cell
//!   left for Trm, even at a high ACR (an idle source); here they are sent
//!   only while stopped, each no sooner than `1/TCR` after the previous FRM
//!   of either kind (so rule 11's limit holds across stops and resumes, and
//!   an FRM that itself lowers ACR below TCR counts as the first probe).
//!
//! # Choices where the standard leaves room
//!
//! * The first FRM (rule 2) goes when the source first has something to
//!   send (data or a BRM); later FRMs are sent when rule 3a says so even if
//!   nothing else waits (YATS's trailing FRM). A source never sends two
//!   in-rate FRMs with fewer than Mrm cells between them, so an idle source
//!   falls silent and rule 5 applies when it resumes.
//! * Rule 1 bounds the initial rate too: `ACR = max(MCR, min(ICR, TBE/FRTT))`.
//! * Turned-around BRMs waiting while in-rate sending is stopped cannot go
//!   in rate; the caller decides (TM 4.0 lets the destination send them out
//!   of rate).

use super::rm::{Direction, RmCell};
use atmlab_engine::{Duration, PS_PER_S, SimTime};
use std::fmt;
use thiserror::Error;

/// TBE's largest value, 2^24 - 1 cells (a 24-bit signalled field); also its
/// default, so that rule 6 practically never fires (YATS `abrsrc.c`:
/// "default ATM-Forum").
pub const TBE_MAX: u32 = (1 << 24) - 1;
/// TCR, the tagged cell rate: 10 cells/s, fixed by TM 4.0 (as YATS
/// `abrsrc.c` sets it).
pub const DEFAULT_TCR: f64 = 10.0;
/// Nrm, the most cells per in-rate FRM: 32 (YATS `abrsrc.c`; Cisco's ABR
/// document 10415).
pub const DEFAULT_NRM: u32 = 32;
/// Nrm's range, 2 to 256 (TM 4.0's signalled range as recalled, unverified;
/// TM 4.0 signals powers of 2).
const NRM_RANGE: (u32, u32) = (2, 256);
/// Mrm, the fewest cells between FRMs under the Trm condition: 2, fixed by
/// TM 4.0 (YATS `abrsrc.c`, MPC8260 figure 30-12).
pub const DEFAULT_MRM: u32 = 2;
/// Trm, the longest time between in-rate FRMs: 100 ms (YATS `abrsrc.c`).
pub const DEFAULT_TRM: Duration = Duration::from_ms(100);
/// Trm's smallest value, `100 * 2^-7` ms (TM 4.0's signalled range as
/// recalled, unverified).
const TRM_MIN: Duration = Duration::from_ps(DEFAULT_TRM.as_ps() >> 7);
/// RIF, RDF and CDF: 1/16 each (YATS `abrsrc.c`).
pub const DEFAULT_FACTOR: f64 = 1.0 / 16.0;
/// ADTF, the idle time after which rule 5 returns ACR to ICR: 0.5 s
/// (YATS `abrsrc.c`).
pub const DEFAULT_ADTF: Duration = Duration::from_ms(500);
/// ADTF's range, 10 ms to 10.23 s (a 10-bit count of 10 ms units; TM 4.0's
/// signalled range as recalled, unverified).
const ADTF_RANGE: (Duration, Duration) = (Duration::from_ms(10), Duration::from_ms(10_230));
/// FRTT's largest value, 2^24 - 1 us (a 24-bit signalled count of
/// microseconds; recalled, unverified).
const FRTT_MAX: Duration = Duration::from_us((1 << 24) - 1);

/// A parameter outside its range; names the parameter and the range.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("ABR parameter {name} = {value} is outside its range {range}")]
pub struct AbrParamError {
    /// The parameter, as TM 4.0 names it (`PCR`, `Nrm`, ...).
    pub name: &'static str,
    /// The value given, with its unit.
    pub value: String,
    /// The range it must lie in.
    pub range: &'static str,
}

/// `Ok` if `ok`, else the error naming `name`, `value` and `range`.
fn check(ok: bool, name: &'static str, value: impl fmt::Display, range: &'static str) -> Result<(), AbrParamError> {
    if ok { Ok(()) } else { Err(AbrParamError { name, value: value.to_string(), range }) }
}

/// `lo <= x <= hi`, false for NaN.
fn within(x: f64, lo: f64, hi: f64) -> bool {
    (lo..=hi).contains(&x)
}

/// The parameters of one ABR connection (TM 4.0 s5.10.2; docs/models/abr.md,
/// "Parameters and defaults"). Rates in cells/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrParams {
    /// PCR, peak cell rate: ACR never exceeds it; the ER of every FRM.
    pub pcr: f64,
    /// MCR, minimum cell rate: ACR never falls below it.
    pub mcr: f64,
    /// ICR, initial cell rate (before the TBE/FRTT bound): ACR at setup and
    /// after an idle period (rule 5).
    pub icr: f64,
    /// TCR, tagged cell rate: the most out-of-rate FRMs per second; in-rate
    /// sending stops while ACR < TCR.
    pub tcr: f64,
    /// Nrm: at most one in-rate FRM per Nrm in-rate cells.
    pub nrm: u32,
    /// Mrm: the fewest in-rate cells between FRMs under the Trm condition.
    pub mrm: u32,
    /// Trm: an FRM is due once Trm has passed since the last one (and Mrm
    /// cells went).
    pub trm: Duration,
    /// RIF, rate increase factor: a BRM with CI = NI = 0 raises ACR by
    /// `RIF * PCR`.
    pub rif: f64,
    /// RDF, rate decrease factor: a BRM with CI = 1 lowers ACR by
    /// `ACR * RDF`.
    pub rdf: f64,
    /// CDF, cutoff decrease factor: rule 6 lowers ACR by `ACR * CDF` per FRM
    /// once CRM FRMs went unanswered (0 disables rule 6).
    pub cdf: f64,
    /// ADTF, ACR decrease time factor: after more than ADTF without an
    /// in-rate FRM, ACR falls back to ICR (rule 5).
    pub adtf: Duration,
    /// TBE, transient buffer exposure, in cells: bounds ICR by TBE/FRTT and
    /// gives CRM = ceil(TBE/Nrm).
    pub tbe: u32,
    /// FRTT, fixed round-trip time, signalled at setup; zero means not
    /// signalled (no TBE/FRTT bound on ICR).
    pub frtt: Duration,
}

impl AbrParams {
    /// TM 4.0 defaults for a connection with peak rate `pcr` cells/s, as
    /// atmlab resolves the 97-0177R2 study's silence (docs/models/abr.md,
    /// "Where 97-0177R2 is silent"): MCR = 0, ICR = PCR, TCR = 10 cells/s, Nrm = 32,
    /// Mrm = 2, Trm = 100 ms, RIF = RDF = CDF = 1/16, ADTF = 0.5 s,
    /// TBE = 2^24 - 1 (rule 6 never fires), FRTT not signalled.
    pub fn new(pcr: f64) -> AbrParams {
        AbrParams {
            pcr,
            mcr: 0.0,
            icr: pcr,
            tcr: DEFAULT_TCR,
            nrm: DEFAULT_NRM,
            mrm: DEFAULT_MRM,
            trm: DEFAULT_TRM,
            rif: DEFAULT_FACTOR,
            rdf: DEFAULT_FACTOR,
            cdf: DEFAULT_FACTOR,
            adtf: DEFAULT_ADTF,
            tbe: TBE_MAX,
            frtt: Duration::ZERO,
        }
    }

    /// Checks every parameter against its range (TM 4.0's, as recalled); the
    /// error names the first one outside. RIF, RDF and CDF need not be
    /// powers of 2 (TM 4.0 can only signal those), so that sensitivity runs
    /// may use others.
    pub fn validate(&self) -> Result<(), AbrParamError> {
        check(self.pcr.is_finite() && self.pcr > 0.0, "PCR", self.pcr, "0 < PCR (finite), cells/s")?;
        check(within(self.mcr, 0.0, self.pcr), "MCR", self.mcr, "0 <= MCR <= PCR, cells/s")?;
        check(within(self.icr, self.mcr, self.pcr), "ICR", self.icr, "MCR <= ICR <= PCR, cells/s")?;
        check(self.tcr.is_finite() && self.tcr > 0.0, "TCR", self.tcr, "0 < TCR (finite), cells/s")?;
        check((NRM_RANGE.0..=NRM_RANGE.1).contains(&self.nrm), "Nrm", self.nrm, "2 <= Nrm <= 256")?;
        check((1..=self.nrm).contains(&self.mrm), "Mrm", self.mrm, "1 <= Mrm <= Nrm")?;
        check((TRM_MIN..=DEFAULT_TRM).contains(&self.trm), "Trm", self.trm, "781.25 us <= Trm <= 100 ms")?;
        check(within(self.rif, f64::MIN_POSITIVE, 1.0), "RIF", self.rif, "0 < RIF <= 1")?;
        check(within(self.rdf, f64::MIN_POSITIVE, 1.0), "RDF", self.rdf, "0 < RDF <= 1")?;
        check(within(self.cdf, 0.0, 1.0), "CDF", self.cdf, "0 <= CDF <= 1")?;
        check((ADTF_RANGE.0..=ADTF_RANGE.1).contains(&self.adtf), "ADTF", self.adtf, "10 ms <= ADTF <= 10.23 s")?;
        check((1..=TBE_MAX).contains(&self.tbe), "TBE", self.tbe, "1 <= TBE <= 2^24 - 1 cells")?;
        check(self.frtt <= FRTT_MAX, "FRTT", self.frtt, "0 <= FRTT <= 2^24 - 1 us (0: not signalled)")
    }

    /// CRM, the in-rate FRMs a source may send without a BRM (BN = 0)
    /// before rule 6 cuts its rate: `ceil(TBE / Nrm)` (atmlab's rounding,
    /// docs/models/abr.md, "CRM rounding"; 524,288 for the defaults, 128 for
    /// TBE = 4096).
    pub fn crm(&self) -> u64 {
        u64::from(self.tbe).div_ceil(u64::from(self.nrm))
    }

    /// The ICR the source uses: ICR bounded by TBE/FRTT at setup
    /// (YATS `abrsrc.c`), and by MCR from below (rule 1).
    pub fn initial_rate(&self) -> f64 {
        let bound = if self.frtt.is_zero() {
            f64::INFINITY
        } else {
            f64::from(self.tbe) * PS_PER_S as f64 / self.frtt.as_ps() as f64
        };
        self.icr.min(bound).max(self.mcr)
    }
}

/// The in-rate cell to send now (rule 3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InRate {
    /// A forward RM cell with these fields (rules 3a, 5-7, 10).
    Frm(RmCell),
    /// The BRM waiting at the destination of the reverse direction (rule 3b).
    Brm,
    /// A data cell, sent with EFCI = 0 (rules 3c, 12).
    Data,
}

/// Where the source is (see the module diagram).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Rule 2: set up, no in-rate cell sent yet; the first will be an FRM.
    Start,
    /// Rules 3-10: sending in rate at ACR.
    Sending {
        /// When the last in-rate FRM left (rules 3a and 5).
        last_frm: SimTime,
    },
    /// Rule 11 (ACR < TCR): no in-rate cells; out-of-rate FRMs at most TCR.
    Stopped {
        /// The earliest time for the next out-of-rate FRM.
        next_out_of_rate: SimTime,
        /// When the last in-rate FRM left, if one ever did (where sending
        /// resumes: `Start` or `Sending`).
        last_frm: Option<SimTime>,
    },
}

/// What a BRM did to the sending state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// No change of state; in-rate cells (if sending) follow the new
    /// [`AbrSource::cell_interval_ps`].
    Unchanged,
    /// ACR fell below TCR: in-rate sending stopped; out-of-rate FRMs from
    /// [`AbrSource::out_of_rate_due`].
    Stopped,
    /// ACR rose to TCR or above: in-rate sending resumes.
    Resumed,
}

/// Counters of a source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// In-rate FRMs sent.
    pub frms_in_rate: u64,
    /// Out-of-rate FRMs sent (rule 11).
    pub frms_out_of_rate: u64,
    /// BRMs sent in rate for the reverse direction (rule 3b).
    pub brms_sent: u64,
    /// Data cells sent.
    pub data_cells: u64,
    /// BRMs received.
    pub brms_received: u64,
    /// Times rule 5 returned ACR to ICR.
    pub adtf_cuts: u64,
    /// Times rule 6 cut ACR for missing feedback.
    pub crm_cuts: u64,
}

/// The source end system of one direction of an ABR VC.
#[derive(Clone, Debug)]
pub struct AbrSource {
    params: AbrParams,
    /// The ICR in use ([`AbrParams::initial_rate`]).
    icr: f64,
    /// CRM ([`AbrParams::crm`]).
    crm: u64,
    /// `1/TCR`, rounded up so that out-of-rate FRMs never exceed TCR.
    tcr_interval: Duration,
    acr: f64,
    state: SourceState,
    /// In-rate cells (BRM and data) since the last in-rate FRM (rule 3a).
    cells_since_frm: u32,
    /// An in-rate BRM went since the last in-rate FRM (rule 3b(i)).
    brm_since_frm: bool,
    /// In-rate FRMs since the last BRM with BN = 0 (rule 6).
    frms_since_brm: u64,
    /// When the last FRM of either kind left (rule 11 spacing).
    last_probe: Option<SimTime>,
    last_er: Option<f64>,
    /// Counters.
    pub stats: SourceStats,
}

impl AbrSource {
    /// A source set up at `now` with `ACR = ICR` (rule 2), or the error of
    /// the first parameter out of range.
    pub fn new(params: AbrParams, now: SimTime) -> Result<AbrSource, AbrParamError> {
        params.validate()?;
        let icr = params.initial_rate();
        let ps_per_tcr = (PS_PER_S as f64 / params.tcr).ceil() as u64; // saturates for tiny TCR
        let mut src = AbrSource {
            params,
            icr,
            crm: params.crm(),
            tcr_interval: Duration::from_ps(ps_per_tcr),
            acr: icr,
            state: SourceState::Start,
            cells_since_frm: 0,
            brm_since_frm: false,
            frms_since_brm: 0,
            last_probe: None,
            last_er: None,
            stats: SourceStats::default(),
        };
        src.update_state(now);
        Ok(src)
    }

    /// The connection's parameters.
    pub fn params(&self) -> &AbrParams {
        &self.params
    }
    /// ACR, the allowed cell rate, in cells/s.
    pub fn acr(&self) -> f64 {
        self.acr
    }
    /// The ICR in use, after the TBE/FRTT bound.
    pub fn icr(&self) -> f64 {
        self.icr
    }
    /// CRM, the rule 6 threshold.
    pub fn crm(&self) -> u64 {
        self.crm
    }
    /// The sending state.
    pub fn state(&self) -> SourceState {
        self.state
    }
    /// The ER of the last BRM received, if any.
    pub fn last_er(&self) -> Option<f64> {
        self.last_er
    }
    /// In-rate FRMs sent since the last BRM with BN = 0 (rule 6's count).
    pub fn frms_since_brm(&self) -> u64 {
        self.frms_since_brm
    }
    /// In-rate cells sent since the last in-rate FRM (rule 3a's count).
    pub fn cells_since_frm(&self) -> u32 {
        self.cells_since_frm
    }

    /// The time from one in-rate cell to the next at the current ACR, in
    /// picoseconds with their fraction (rule 1), or `None` while in-rate
    /// sending is stopped (ACR < TCR, rule 11).
    pub fn cell_interval_ps(&self) -> Option<f64> {
        match self.state {
            SourceState::Start | SourceState::Sending { .. } => Some(PS_PER_S as f64 / self.acr),
            SourceState::Stopped { .. } => None,
        }
    }

    /// When rule 3a will make an FRM due with nothing else to send (a
    /// trailing FRM after a burst; in the past means now), or `None` if it
    /// will not before more cells are sent. A caller that wants YATS's
    /// trailing FRM polls [`next_in_rate`](Self::next_in_rate) then (and
    /// not before its pacing allows).
    pub fn frm_due_at(&self) -> Option<SimTime> {
        match self.state {
            // Rule 3a(ii): Nrm - 1 cells went, due at once.
            SourceState::Sending { last_frm } if self.cells_since_frm >= self.params.nrm - 1 => Some(last_frm),
            // Rule 3a(i): Mrm cells went, due Trm after the last FRM.
            SourceState::Sending { last_frm } if self.cells_since_frm >= self.params.mrm => {
                Some(last_frm.saturating_add(self.params.trm))
            }
            // Too few cells since the last FRM; before the first FRM the
            // source waits for something to send (rule 2); stopped: none.
            SourceState::Sending { .. } | SourceState::Start | SourceState::Stopped { .. } => None,
        }
    }

    /// The in-rate cell to send at `now` (rule 3), given whether a data cell
    /// and a BRM of the reverse direction are waiting; `None` if there is
    /// nothing to send or in-rate sending is stopped. The caller calls this
    /// only when its pacing allows an in-rate cell (rule 1) and sends what
    /// it returns at once.
    pub fn next_in_rate(&mut self, now: SimTime, data_waiting: bool, brm_waiting: bool) -> Option<InRate> {
        match self.state {
            // Rule 2: the first in-rate cell is an FRM, ahead of the first
            // cell the source has to send.
            SourceState::Start => (data_waiting || brm_waiting).then(|| self.send_frm(now, None)),
            SourceState::Sending { last_frm } => {
                if self.frm_due(now, last_frm) {
                    // Rule 3a.
                    Some(self.send_frm(now, Some(last_frm)))
                } else if brm_waiting && (!self.brm_since_frm || !data_waiting) {
                    // Rule 3b: (i) no BRM since the last FRM, or (ii) no data.
                    self.count_cell();
                    self.brm_since_frm = true;
                    self.stats.brms_sent += 1;
                    Some(InRate::Brm)
                } else if data_waiting {
                    // Rule 3c.
                    self.count_cell();
                    self.stats.data_cells += 1;
                    Some(InRate::Data)
                } else {
                    None
                }
            }
            // Rule 11: no in-rate cells while ACR < TCR.
            SourceState::Stopped { .. } => None,
        }
    }

    /// [`next_in_rate`](Self::next_in_rate) for a caller with data waiting
    /// and no BRM: `true` (the data cell counted) if rule 3c sends a data
    /// cell at `now`, else `false` with nothing changed (an FRM is due, or
    /// the source is not sending in rate: the caller asks `next_in_rate`).
    #[inline]
    pub fn try_data_cell(&mut self, now: SimTime) -> bool {
        match self.state {
            SourceState::Sending { last_frm } if !self.frm_due(now, last_frm) => {
                self.count_cell();
                self.stats.data_cells += 1;
                true
            }
            SourceState::Start | SourceState::Sending { .. } | SourceState::Stopped { .. } => false,
        }
    }

    /// When the next out-of-rate FRM may go (rule 11), or `None` while
    /// sending in rate.
    pub fn out_of_rate_due(&self) -> Option<SimTime> {
        match self.state {
            SourceState::Stopped { next_out_of_rate, .. } => Some(next_out_of_rate),
            SourceState::Start | SourceState::Sending { .. } => None,
        }
    }

    /// Rule 11: the out-of-rate FRM (CLP = 1) to send at `now`, if in-rate
    /// sending is stopped and one is due; the next is due `1/TCR` later.
    /// Rules 5 and 6 apply to in-rate FRMs only, and out-of-rate FRMs count
    /// neither for rule 3a nor for rule 6.
    pub fn next_out_of_rate(&mut self, now: SimTime) -> Option<RmCell> {
        match self.state {
            SourceState::Stopped { next_out_of_rate, last_frm } if now >= next_out_of_rate => {
                self.last_probe = Some(now);
                self.stats.frms_out_of_rate += 1;
                self.state = SourceState::Stopped { next_out_of_rate: self.next_probe(now), last_frm };
                Some(self.forward_rm())
            }
            SourceState::Stopped { .. } | SourceState::Start | SourceState::Sending { .. } => None,
        }
    }

    /// A backward RM cell of this VC direction arrived at `now` (in rate or
    /// out of rate): rules 8 and 9 set ACR, and a BRM with BN = 0 resets
    /// rule 6's count. Returns whether in-rate sending stopped or resumed.
    pub fn on_backward_rm(&mut self, now: SimTime, brm: &RmCell) -> Transition {
        debug_assert_eq!(brm.dir, Direction::Backward, "a forward RM cell given to the source");
        self.stats.brms_received += 1;
        self.last_er = Some(brm.er);
        // Rule 6: only a BRM turned around by the destination (BN = 0)
        // shows the loop is alive; switch-made BECN cells do not.
        if !brm.bn {
            self.frms_since_brm = 0;
        }
        self.acr = self.rule9_explicit(self.rule8_binary(brm), brm.er);
        self.update_state(now)
    }

    /// Rule 8: ACR after the CI and NI bits of a BRM.
    fn rule8_binary(&self, brm: &RmCell) -> f64 {
        let p = &self.params;
        if brm.ci {
            // CI = 1: decrease by ACR * RDF, not below MCR.
            (self.acr - self.acr * p.rdf).max(p.mcr)
        } else if !brm.ni {
            // CI = 0 and NI = 0: increase by RIF * PCR, not above PCR.
            (self.acr + p.rif * p.pcr).min(p.pcr)
        } else {
            // NI = 1 (CI = 0): no increase.
            self.acr
        }
    }

    /// Rule 9: ACR after rule 8 is lowered to ER, but not below MCR (TM 4.0;
    /// YATS ignores an ER below MCR, see the DISAGREEMENT in the module
    /// docs). An ER that is NaN leaves ACR as rule 8 set it.
    fn rule9_explicit(&self, acr: f64, er: f64) -> f64 {
        acr.min(er).max(self.params.mcr)
    }

    /// Rule 3a: an in-rate FRM is due at `now`, since the last went at
    /// `last_frm`: (ii) `Nrm - 1` in-rate cells went, or (i) at least Mrm
    /// cells went and at least Trm passed.
    fn frm_due(&self, now: SimTime, last_frm: SimTime) -> bool {
        let p = &self.params;
        self.cells_since_frm >= p.nrm - 1 || (self.cells_since_frm >= p.mrm && now.saturating_since(last_frm) >= p.trm)
    }

    /// One more in-rate BRM or data cell since the last FRM (rule 3a).
    fn count_cell(&mut self) {
        self.cells_since_frm = self.cells_since_frm.saturating_add(1);
    }

    /// Sends an in-rate FRM at `now` (`last_frm`: the previous one, if any):
    /// rules 5 and 6 first, then the FRM's fields (rules 7 and 10); stops
    /// in-rate sending after it if ACR fell below TCR (rule 7: only cells
    /// after this FRM follow the new rate).
    fn send_frm(&mut self, now: SimTime, last_frm: Option<SimTime>) -> InRate {
        if let Some(last) = last_frm {
            self.use_it_or_lose_it(now.saturating_since(last));
        }
        self.missing_feedback();
        let frm = self.forward_rm();
        self.frms_since_brm = self.frms_since_brm.saturating_add(1);
        self.cells_since_frm = 0;
        self.brm_since_frm = false;
        self.last_probe = Some(now);
        self.stats.frms_in_rate += 1;
        self.state = SourceState::Sending { last_frm: now };
        self.update_state(now);
        InRate::Frm(frm)
    }

    /// Rule 5: more than ADTF without an in-rate FRM and `ACR > ICR`:
    /// `ACR = ICR`.
    fn use_it_or_lose_it(&mut self, idle: Duration) {
        if self.acr > self.icr && idle > self.params.adtf {
            self.acr = self.icr;
            self.stats.adtf_cuts += 1;
        }
    }

    /// Rule 6: at least CRM in-rate FRMs since the last BRM with BN = 0:
    /// `ACR = max(MCR, ACR - ACR * CDF)`.
    fn missing_feedback(&mut self) {
        if self.frms_since_brm >= self.crm {
            self.acr = (self.acr - self.acr * self.params.cdf).max(self.params.mcr);
            self.stats.crm_cuts += 1;
        }
    }

    /// Rules 7 and 10: a source-generated FRM: DIR = forward, BN = 0,
    /// CI = 0, NI = 0, ER = PCR, CCR = ACR, MCR = MCR.
    fn forward_rm(&self) -> RmCell {
        RmCell {
            dir: Direction::Forward,
            bn: false,
            ci: false,
            ni: false,
            er: self.params.pcr,
            ccr: self.acr,
            mcr: self.params.mcr,
        }
    }

    /// The earliest next out-of-rate FRM after a stop or a probe at `now`:
    /// `1/TCR` after the last FRM of either kind, not before `now` (rule 11).
    fn next_probe(&self, now: SimTime) -> SimTime {
        self.last_probe.map_or(now, |t| t.saturating_add(self.tcr_interval)).max(now)
    }

    /// Stops in-rate sending when ACR < TCR and resumes it when ACR >= TCR
    /// (rule 11 and the stop convention in the module docs).
    fn update_state(&mut self, now: SimTime) -> Transition {
        let below = self.acr < self.params.tcr;
        match (self.state, below) {
            (SourceState::Start, true) => self.stop(now, None),
            (SourceState::Sending { last_frm }, true) => self.stop(now, Some(last_frm)),
            (SourceState::Stopped { last_frm, .. }, false) => {
                self.state = match last_frm {
                    // Rule 2 still holds: the first in-rate cell is an FRM.
                    None => SourceState::Start,
                    Some(last_frm) => SourceState::Sending { last_frm },
                };
                Transition::Resumed
            }
            (SourceState::Start | SourceState::Sending { .. }, false) | (SourceState::Stopped { .. }, true) => {
                Transition::Unchanged
            }
        }
    }

    /// Enters [`SourceState::Stopped`] at `now`.
    fn stop(&mut self, now: SimTime, last_frm: Option<SimTime>) -> Transition {
        self.state = SourceState::Stopped { next_out_of_rate: self.next_probe(now), last_frm };
        Transition::Stopped
    }
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
