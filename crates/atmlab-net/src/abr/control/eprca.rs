//! EPRCA, the Enhanced Proportional Rate Control Algorithm (L. Roberts, ATM
//! Forum 94-0735R1, 1994), and APRC, its variant that detects congestion by
//! the queue's growth (Siu and Tzeng, UC Irvine): one running average of
//! the rates the VCs report (MACR) per output port, two queue thresholds,
//! and feedback by explicit rate, CI or EFCI (docs/models/abr.md, "EPRCA
//! and APRC").
//!
//! # The algorithm
//!
//! ```text
//! on an FRM (CCR):   MACR = CCR                            (the first one; atmlab's start)
//!                    MACR += AV (CCR - MACR)               if not congested or CCR < MACR
//! congested:         EPRCA: Q > QT        APRC: the queue grew over the last K ABR cells
//! very congested:    Q > DQT
//! on a BRM (its CCR), reduction "factors":
//!     very congested:                 ER = min(ER, MRF MACR)   (every VC)
//!     congested and CCR > DPF MACR:   ER = min(ER, ERF MACR)   (VCs above the fair share)
//! reduction "fair_share" (the survey's form):
//!     congested or very congested:    ER = min(ER, DPF MACR)   (every VC)
//! CI = 1 on the BRM when very congested (or, as an option, congested)
//! EFCI = 1 on data cells offered while congested (an option, off)
//! ```
//!
//! Q is the port's ABR queue as the latest ABR cell offered to the port
//! found it (before that cell): the seam tells a controller the queue with
//! each cell, not when a BRM passes (atmlab's choice, docs/models/abr.md).
//!
//! # Sources and what rests on atmlab's reasoning
//!
//! The structure (MACR from the CCRs of FRMs, the fair share `DPF MACR`,
//! QT and DQT, CI set by switches, "some versions do not set the EFCI
//! bits") is Kalyanaraman's dissertation, s4.6 (p. 66); AV = 1/16 and
//! DPF = 7/8 are the values Jain's survey (*Congestion Control and Traffic
//! Management in ATM Networks: Recent Advances and A Survey*, 1996, s8)
//! gives. ERF = 15/16, MRF = 1/4, the condition on the MACR update and
//! which VCs are cut when congested are as recalled of 94-0735R1, whose
//! text could not be read (unverified: each is a parameter). QT = 100 and
//! DQT = 500 cells are atmlab's choices: no source read gives values.
//! APRC's growth test follows the dissertation's description (p. 69); its
//! K = 32 cells is atmlab's choice.
//!
//! # Timing
//!
//! It counts FRMs (their CCR) and the queue each ABR cell finds, and writes
//! BRMs from that state: [`super::Timing::Counted`], like ERICA. With EFCI
//! marking it also changes data cells, so its port must take none ahead of
//! time ([`super::Timing::Exact`], [`EprcaParams::timing`]).

use super::meter::{check, sanitize_rate};
use super::{ControlError, Reading, ReadingInfo, SwitchControl, Timing, bps, reading};
use crate::abr::RmCell;
use atmlab_engine::SimTime;

/// How a port decides that it is congested (the EPRCA / APRC difference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// EPRCA: the ABR queue is above `queue_threshold` (QT).
    QueueLength {
        /// QT, cells.
        queue_threshold: u32,
    },
    /// APRC: the ABR queue grew between two samples `every` ABR cells apart.
    QueueGrowth {
        /// K: the ABR cells between two samples of the queue (at least 1).
        every: u32,
    },
}

/// Which VCs a congested port cuts, and to what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// 94-0735R1 as the dissertation and the survey's sources describe it
    /// (factors unverified): congested, VCs above `DPF MACR` to
    /// `ERF MACR`; very congested, every VC to `MRF MACR`.
    Factors,
    /// The survey's short form: while congested, every VC to the fair share
    /// `DPF MACR`.
    FairShare,
}

/// When a port sets CI in the BRMs it passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiMarking {
    /// Never.
    Off,
    /// While congested (or very congested).
    Congested,
    /// While very congested (Q > DQT).
    VeryCongested,
}

/// When MACR follows an FRM's CCR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacrUpdate {
    /// Always.
    Always,
    /// While congested only towards a lower CCR (recalled of 94-0735R1,
    /// unverified): a congested port's average is pulled down, never up.
    DownWhenCongested,
}

/// EPRCA's (and APRC's) parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EprcaParams {
    /// Queue length (EPRCA) or queue growth (APRC).
    pub congestion: Congestion,
    /// AV: the weight of a new CCR in MACR, in (0, 1] (1/16).
    pub averaging_weight: f64,
    /// DPF: the fair share is `DPF MACR`, in (0, 1] (7/8).
    pub down_pressure_factor: f64,
    /// ERF: a congested port cuts VCs above the fair share to `ERF MACR`,
    /// in (0, 1] (15/16, unverified).
    pub explicit_reduction_factor: f64,
    /// MRF: a very congested port cuts every VC to `MRF MACR`, in (0, 1]
    /// (1/4, unverified).
    pub major_reduction_factor: f64,
    /// DQT: very congested above this ABR queue, cells.
    pub high_queue_threshold: u32,
    /// Which VCs are cut, and to what.
    pub reduction: Reduction,
    /// Whether it lowers ER at all (off: a binary switch, by CI or EFCI).
    pub explicit_rate: bool,
    /// When it sets CI in BRMs.
    pub ci_marking: CiMarking,
    /// Whether it sets EFCI on the data cells it is offered while congested.
    pub efci_marking: bool,
    /// When MACR follows a CCR.
    pub macr_update: MacrUpdate,
}

/// EPRCA's defaults: AV 1/16, DPF 7/8 (Jain's survey); ERF 15/16, MRF 1/4
/// (recalled of 94-0735R1, unverified); QT 100, DQT 500 cells (atmlab's);
/// explicit rate on, CI when very congested, no EFCI.
pub const EPRCA_DEFAULTS: EprcaParams = EprcaParams {
    congestion: Congestion::QueueLength { queue_threshold: 100 },
    averaging_weight: 1.0 / 16.0,
    down_pressure_factor: 7.0 / 8.0,
    explicit_reduction_factor: 15.0 / 16.0,
    major_reduction_factor: 0.25,
    high_queue_threshold: 500,
    reduction: Reduction::Factors,
    explicit_rate: true,
    ci_marking: CiMarking::VeryCongested,
    efci_marking: false,
    macr_update: MacrUpdate::DownWhenCongested,
};

/// APRC's defaults: EPRCA's, with the growth of the queue sampled every 32
/// ABR cells (K: atmlab's choice).
pub const APRC_DEFAULTS: EprcaParams =
    EprcaParams { congestion: Congestion::QueueGrowth { every: 32 }, ..EPRCA_DEFAULTS };

impl EprcaParams {
    /// Checks every parameter; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ControlError> {
        let unit = |x: f64| x > 0.0 && x <= 1.0;
        check("averaging_weight", self.averaging_weight, unit(self.averaging_weight), "must be in (0, 1]")?;
        let dpf = self.down_pressure_factor;
        check("down_pressure_factor", dpf, unit(dpf), "must be in (0, 1]")?;
        let erf = self.explicit_reduction_factor;
        check("explicit_reduction_factor", erf, unit(erf), "must be in (0, 1]")?;
        let mrf = self.major_reduction_factor;
        check("major_reduction_factor", mrf, unit(mrf), "must be in (0, 1]")?;
        match self.congestion {
            Congestion::QueueLength { queue_threshold } if self.high_queue_threshold < queue_threshold => {
                return Err(ControlError::new(
                    "high_queue_threshold",
                    format!(
                        "{} cells is below the queue threshold ({queue_threshold} cells): very congested must \
                         mean more queue than congested",
                        self.high_queue_threshold
                    ),
                ));
            }
            Congestion::QueueGrowth { every: 0 } => {
                return Err(ControlError::new("growth_cells", "must be at least 1 cell".into()));
            }
            _ => {}
        }
        if !self.explicit_rate && self.ci_marking == CiMarking::Off && !self.efci_marking {
            return Err(ControlError::new(
                "explicit_rate",
                "with CI and EFCI marking off too the switch would give no feedback at all".into(),
            ));
        }
        Ok(())
    }

    /// When its port must tell it of cells: counted, or exact when it marks
    /// data cells (EFCI) too.
    pub fn timing(&self) -> Timing {
        if self.efci_marking { Timing::Exact } else { Timing::Counted }
    }
}

/// What EPRCA and APRC report.
pub const READINGS: &[ReadingInfo] = &[
    ReadingInfo {
        name: "macr_bps",
        description: "MACR, the running average of the CCRs of the FRMs, bit/s (null before the first FRM).",
        integer: false,
    },
    reading::FAIR_SHARE,
    reading::EFCI_MARKED,
    reading::BRMS_LOWERED,
    reading::BRMS_CI_SET,
];

/// EPRCA or APRC at one output port.
#[derive(Clone, Debug, PartialEq)]
pub struct Eprca {
    params: EprcaParams,
    /// MACR, cells/s (`None` before the first FRM).
    macr: Option<f64>,
    /// The ABR queue the latest ABR cell found, cells.
    queue: u32,
    /// APRC: ABR cells since the last sample, the last sample, and whether
    /// the queue grew between the last two samples.
    since_sample: u32,
    sampled: u32,
    growing: bool,
    efci_marked: u64,
    lowered: u64,
    ci_set: u64,
}

impl Eprca {
    /// A port with `params` (checked by [`EprcaParams::validate`]).
    pub fn new(params: EprcaParams) -> Eprca {
        Eprca {
            params,
            macr: None,
            queue: 0,
            since_sample: 0,
            sampled: 0,
            growing: false,
            efci_marked: 0,
            lowered: 0,
            ci_set: 0,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &EprcaParams {
        &self.params
    }

    /// MACR, cells/s.
    pub fn macr(&self) -> Option<f64> {
        self.macr
    }

    /// The fair share `DPF MACR`, cells/s.
    pub fn fair_share(&self) -> Option<f64> {
        self.macr.map(|m| self.params.down_pressure_factor * m)
    }

    /// Whether the port is congested now.
    pub fn congested(&self) -> bool {
        match self.params.congestion {
            Congestion::QueueLength { queue_threshold } => self.queue > queue_threshold,
            Congestion::QueueGrowth { .. } => self.growing,
        }
    }

    /// Whether the port is very congested now (Q > DQT).
    pub fn very_congested(&self) -> bool {
        self.queue > self.params.high_queue_threshold
    }

    /// The queue `queue` found by an ABR cell: the congestion state, and
    /// APRC's sample every K cells.
    fn observe(&mut self, queue: u32) {
        self.queue = queue;
        if let Congestion::QueueGrowth { every } = self.params.congestion {
            self.since_sample += 1;
            if self.since_sample >= every {
                self.since_sample = 0;
                self.growing = queue > self.sampled;
                self.sampled = queue;
            }
        }
    }

    /// An FRM's CCR: MACR follows it (s4.6; the condition as recalled).
    fn update_macr(&mut self, ccr: f64) {
        let ccr = sanitize_rate(ccr);
        self.macr = Some(match self.macr {
            None => ccr,
            Some(m) => {
                let hold = self.params.macr_update == MacrUpdate::DownWhenCongested && self.congested() && ccr >= m;
                if hold { m } else { m + self.params.averaging_weight * (ccr - m) }
            }
        });
    }
}

impl SwitchControl for Eprca {
    #[inline]
    fn abr_cell(&mut self, _at: SimTime, _vc: usize, frm_ccr: Option<f64>, queue: impl FnOnce() -> u32) -> bool {
        self.observe(queue());
        if let Some(ccr) = frm_ccr {
            self.update_macr(ccr);
        }
        false
    }

    #[inline]
    fn mark(&mut self, _at: SimTime, _vc: usize, abr_queue: u32) -> bool {
        if !self.params.efci_marking {
            return false;
        }
        let congested = match self.params.congestion {
            Congestion::QueueLength { queue_threshold } => abr_queue > queue_threshold,
            Congestion::QueueGrowth { .. } => self.growing,
        };
        self.efci_marked += u64::from(congested);
        congested
    }

    #[inline]
    fn marks(&self) -> bool {
        self.params.efci_marking
    }

    fn backward_rm(&mut self, _at: SimTime, _vc: usize, rm: &mut RmCell) {
        let (congested, very) = (self.congested(), self.very_congested());
        let before = rm.er;
        if self.params.explicit_rate
            && let Some(macr) = self.macr
        {
            let p = &self.params;
            match p.reduction {
                Reduction::Factors if very => rm.lower_er(p.major_reduction_factor * macr),
                Reduction::Factors if congested && rm.ccr > p.down_pressure_factor * macr => {
                    rm.lower_er(p.explicit_reduction_factor * macr);
                }
                Reduction::FairShare if congested || very => rm.lower_er(p.down_pressure_factor * macr),
                _ => {}
            }
        }
        self.lowered += u64::from(rm.er < before);
        let ci = match self.params.ci_marking {
            CiMarking::Off => false,
            CiMarking::Congested => congested || very,
            CiMarking::VeryCongested => very,
        };
        if ci {
            self.ci_set += u64::from(!rm.ci);
            rm.ci = true;
        }
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        self.params.explicit_rate || self.params.ci_marking != CiMarking::Off
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [
            self.macr.and_then(bps),
            self.fair_share().and_then(bps),
            Some(self.efci_marked as f64),
            Some(self.lowered as f64),
            Some(self.ci_set as f64),
        ];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
#[path = "eprca_tests.rs"]
mod tests;
