//! The OSU scheme (R. Jain, S. Kalyanaraman, R. Viswanathan, ATM Forum
//! 94-0883, 1994), ERICA's predecessor: the switch measures its load level
//! z (ABR input over a target) each interval and steers it into a target
//! utilisation band `1 - delta <= z <= 1 + delta`; each VC's rate is divided
//! by a load adjustment decision (LAD) that, inside the band, lowers the VCs
//! above the fair share and raises those below (docs/models/abr.md, "The
//! OSU scheme").
//!
//! # The algorithm
//!
//! At the end of an interval (ERICA's bounds):
//!
//! ```text
//! target    = max(U LinkRate - hpRate, 0)          ("Target Cell Rate"; ERICA's ABR capacity)
//! z         = inputRate / target                   (infinite with no target)
//! nActive   = max(VCs seen in the interval, 1)
//! fairShare = target / nActive
//! ```
//!
//! and on a BRM of a VC, with OCR its offered rate (the dissertation's
//! Appendix B, p. 393, restated; LLB = 1 - delta, ULB = 1 + delta):
//! ```text
//! basic:      LLB <= z <= ULB:  LAD = z / LLB  if OCR > fairShare,  else z / ULB
//!             otherwise:        LAD = z
//! aggressive: z < LLB:  LAD = z                        if OCR < fairShare z or nActive = 1
//!                       LAD = z + (1 - z)(OCR / (z fairShare) - 1) / (nActive - 1)
//!                                                      if OCR < target z
//!                       LAD = 1                        otherwise
//!             LLB <= z <= ULB:  LAD = 1
//!             z > ULB:  LAD = z         (the page with this branch was not read: atmlab's)
//! ER = min(ER, OCR / LAD)
//! ```
//!
//! The native scheme carried the source's *measured* offered rate (OCR) in
//! its own control cell and the source divided its rate by the largest LAD
//! along the path. Mapped onto TM 4.0 (atmlab's mapping) the switch writes
//! `OCR / LAD` into the BRM's ER, and the minimum of the ERs along the path
//! is the rate of the largest LAD. The OCR is, by default
//! ([`OfferedRate::Measured`]), the VC's cells counted at this port over the
//! last interval: a measured rate, as the native one, and one ER per VC per
//! interval. With [`OfferedRate::Ccr`] it is each BRM's CCR, the allowed
//! rate the source raised at once to the last ER: below the band every BRM
//! divides it again by the same interval's z, and the rates compound (what
//! the first mapping did; docs/models/abr.md). With `LAD = 0` (no ABR
//! input) the ER is the target; a VC whose OCR is 0 gets the fair share
//! (`0 / LAD` would keep it stopped for ever).
//!
//! It counts cells and writes BRMs from its state:
//! [`super::Timing::Counted`].

use super::erica::AveragingInterval;
use super::meter::{Meter, check, check_interval, sanitize_rate};
use super::{ControlError, Reading, ReadingInfo, SwitchControl, bps, finite, reading};
use crate::abr::RmCell;
use atmlab_engine::SimTime;

/// How the LAD favours fairness (the dissertation's two options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fairness {
    /// Inside the band, VCs above the fair share go down and those below go up.
    Basic,
    /// Under load, the VCs below the fair share rise faster than those above.
    Aggressive,
}

/// Which rate of a VC the load adjustment divides (its "offered cell
/// rate", OCR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OfferedRate {
    /// The VC's cells counted at this port over the last interval, per
    /// second: the native scheme's OCR was the source's *measured* offered
    /// rate over its own interval (94-0883), not its allowed rate, and a VC
    /// gets one ER per interval from it.
    Measured,
    /// The CCR of each backward RM cell (atmlab's first TM 4.0 mapping):
    /// a source raises its CCR at once to the last ER it got, so below the
    /// band the increases compound within an interval.
    Ccr,
}

/// The OSU scheme's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OsuParams {
    /// U: the target is `U LinkRate - hpRate`, in (0, 1] (0.9, unverified).
    pub target_utilization: f64,
    /// delta: the band is `1 - delta <= z <= 1 + delta`, in [0, 1) (0.1,
    /// unverified).
    pub half_width: f64,
    /// Basic or aggressive fairness (basic).
    pub fairness: Fairness,
    /// The interval (ERICA's: 500 ABR cells or 5 ms).
    pub interval: AveragingInterval,
    /// The rate the LAD divides (measured).
    pub offered_rate: OfferedRate,
}

/// The OSU scheme's defaults (see [`OsuParams`]).
pub const OSU_DEFAULTS: OsuParams = OsuParams {
    target_utilization: 0.9,
    half_width: 0.1,
    fairness: Fairness::Basic,
    interval: AveragingInterval {
        time: super::erica::STUDY_INTERVAL_TIME,
        cells: Some(super::erica::STUDY_INTERVAL_CELLS),
    },
    offered_rate: OfferedRate::Measured,
};

impl OsuParams {
    /// Checks every parameter at a port of `cell_rate` cells/s; the error
    /// names the first bad one.
    pub fn check(&self, cell_rate: f64) -> Result<(), ControlError> {
        let u = self.target_utilization;
        check("target_utilization", u, u > 0.0 && u <= 1.0, "must be in (0, 1]")?;
        let d = self.half_width;
        check("half_width", d, (0.0..1.0).contains(&d), "must be in [0, 1)")?;
        check_interval(&self.interval, cell_rate)
    }
}

/// What the OSU scheme reports, as of the end of the last interval.
pub const READINGS: &[ReadingInfo] = &[
    reading::INTERVALS,
    reading::LOAD_FACTOR,
    reading::ABR_CAPACITY,
    reading::HIGH_PRIORITY,
    reading::FAIR_SHARE,
    reading::ACTIVE_VCS,
    reading::BRMS_LOWERED,
];

/// The OSU scheme at one output port.
#[derive(Clone, Debug, PartialEq)]
pub struct Osu {
    params: OsuParams,
    link_rate: f64,
    meter: Meter,
    /// Per VC index: seen in the current interval.
    seen: Vec<bool>,
    seen_count: usize,
    /// Per VC index: ABR cells in the current interval.
    counts: Vec<u32>,
    /// Per VC index: the rate measured over the last interval, cells/s.
    measured: Vec<f64>,
    target: f64,
    z: f64,
    n_active: usize,
    fair_share: f64,
    hp_rate: f64,
    lowered: u64,
}

impl Osu {
    /// A port of `cell_rate` cells/s with `n_vcs` VC indices, its first
    /// interval starting at `now` (the parameters checked by
    /// [`OsuParams::check`]). Until the first interval ends: z = 1, one
    /// active VC, the fair share the whole target (as ERICA starts).
    pub fn new(params: OsuParams, cell_rate: f64, n_vcs: usize, now: SimTime) -> Osu {
        let target = params.target_utilization * cell_rate;
        Osu {
            params,
            link_rate: cell_rate,
            meter: Meter::new(params.interval, cell_rate, now),
            seen: vec![false; n_vcs],
            seen_count: 0,
            counts: vec![0; n_vcs],
            measured: vec![0.0; n_vcs],
            target,
            z: 1.0,
            n_active: 1,
            fair_share: target,
            hp_rate: 0.0,
            lowered: 0,
        }
    }

    /// The load level z of the last interval.
    pub fn load_factor(&self) -> f64 {
        self.z
    }

    /// The fair share of the last interval, cells/s.
    pub fn fair_share(&self) -> f64 {
        self.fair_share
    }

    /// The load adjustment decision for a VC whose offered rate is `ocr`.
    pub fn lad(&self, ocr: f64) -> f64 {
        let z = self.z;
        let (llb, ulb) = (1.0 - self.params.half_width, 1.0 + self.params.half_width);
        match self.params.fairness {
            Fairness::Basic if (llb..=ulb).contains(&z) => {
                if ocr > self.fair_share {
                    z / llb
                } else {
                    z / ulb
                }
            }
            Fairness::Basic => z,
            Fairness::Aggressive if z < llb => {
                let n = self.n_active as f64;
                if ocr < self.fair_share * z || self.n_active == 1 {
                    z
                } else if ocr < self.target * z {
                    z + (1.0 - z) * (ocr / (z * self.fair_share) - 1.0) / (n - 1.0)
                } else {
                    1.0
                }
            }
            Fairness::Aggressive if z > ulb => z,
            Fairness::Aggressive => 1.0,
        }
    }

    /// The ER the scheme gives a VC whose CCR is `ccr`.
    pub fn er(&self, ccr: f64) -> f64 {
        let ocr = sanitize_rate(ccr);
        let lad = self.lad(ocr);
        if lad <= 0.0 {
            self.target
        } else if ocr <= 0.0 {
            self.fair_share
        } else {
            ocr / lad
        }
    }

    fn end_interval(&mut self, now: SimTime) {
        let m = self.meter.end(now);
        self.hp_rate = m.hp_rate;
        self.target = (self.params.target_utilization * self.link_rate - m.hp_rate).max(0.0);
        self.z = if self.target > 0.0 { m.abr_rate / self.target } else { f64::INFINITY };
        self.n_active = self.seen_count.max(1);
        self.fair_share = self.target / self.n_active as f64;
        for (rate, count) in self.measured.iter_mut().zip(&mut self.counts) {
            *rate = f64::from(*count) / m.dt_secs;
            *count = 0;
        }
        self.seen.fill(false);
        self.seen_count = 0;
    }
}

impl SwitchControl for Osu {
    #[inline]
    fn abr_cell(&mut self, at: SimTime, vc: usize, _frm_ccr: Option<f64>, _queue: impl FnOnce() -> u32) -> bool {
        if !self.seen[vc] {
            self.seen[vc] = true;
            self.seen_count += 1;
        }
        self.counts[vc] += 1;
        if self.meter.abr_cell(at) {
            self.end_interval(at);
            return true;
        }
        false
    }

    #[inline]
    fn high_priority_cells(&mut self, _at: SimTime, n: u32) {
        self.meter.hp_cells(n);
    }

    fn backward_rm(&mut self, _at: SimTime, vc: usize, rm: &mut RmCell) {
        let ocr = match self.params.offered_rate {
            OfferedRate::Measured => self.measured[vc],
            OfferedRate::Ccr => rm.ccr,
        };
        let er = self.er(ocr);
        self.lowered += u64::from(er < rm.er);
        rm.lower_er(er);
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        true
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        Some(self.meter.deadline())
    }

    fn deadline_reached(&mut self, now: SimTime, _abr_queue: u32) {
        self.end_interval(now);
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [
            Some(self.meter.intervals() as f64),
            finite(self.z),
            bps(self.target),
            bps(self.hp_rate),
            bps(self.fair_share),
            Some(self.n_active as f64),
            Some(self.lowered as f64),
        ];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmlab_engine::Duration;

    /// A port of 100 cells/s at U = 0.9 (target 90), time-only intervals of
    /// 1 s, after an interval in which `input` cells came from the VCs
    /// 0..`vcs` in turn.
    fn after(fairness: Fairness, vcs: usize, input: u32) -> Osu {
        let p = OsuParams {
            fairness,
            interval: AveragingInterval { time: Duration::from_secs(1), cells: None },
            ..OSU_DEFAULTS
        };
        let mut o = Osu::new(p, 100.0, vcs, SimTime::ZERO);
        for i in 0..input {
            let at = SimTime::ZERO + Duration::from_ms(u64::from(i));
            assert!(!o.abr_cell(at, i as usize % vcs, None, || 0));
        }
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(1), 0);
        o
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn test_the_basic_vectors_of_the_model_page() {
        // U C = 90, delta 0.1, three VCs: fair share 30.
        let o = after(Fairness::Basic, 3, 72);
        assert!(close(o.load_factor(), 0.8) && close(o.fair_share(), 30.0));
        assert!(close(o.er(30.0), 37.5), "below the band: LAD = z");
        let o = after(Fairness::Basic, 3, 95);
        assert!(close(o.lad(40.0), 1.1728), "{}", o.lad(40.0));
        assert!(close(o.er(40.0), 34.105), "{}", o.er(40.0));
        assert!(close(o.lad(20.0), 0.9596) && close(o.er(20.0), 20.842), "{}", o.er(20.0));
        let o = after(Fairness::Basic, 3, 120);
        assert!(close(o.er(40.0), 30.0), "above the band: LAD = z = 4/3");
    }

    #[test]
    fn test_the_aggressive_vectors_of_the_model_page() {
        let o = after(Fairness::Aggressive, 3, 72);
        assert!(close(o.er(20.0), 25.0), "below fairShare z: LAD = z");
        assert!(close(o.lad(27.0), 0.8125) && close(o.er(27.0), 33.231), "{}", o.er(27.0));
        assert!(close(o.er(80.0), 80.0), "above target z: LAD = 1");
        let o = after(Fairness::Aggressive, 3, 90);
        assert!(close(o.er(50.0), 50.0), "inside the band: LAD = 1");
        let o = after(Fairness::Aggressive, 3, 120);
        assert!(close(o.er(40.0), 30.0), "above the band: LAD = z (atmlab's)");
        let o = after(Fairness::Aggressive, 1, 45);
        assert!(close(o.er(45.0), 90.0), "one active VC: LAD = z");
    }

    fn brm(ccr: f64) -> RmCell {
        RmCell { dir: crate::abr::Direction::Backward, bn: false, ci: false, ni: false, er: 1e9, ccr, mcr: 0.0 }
    }

    #[test]
    fn test_the_measured_offered_rate_gives_one_er_per_vc_and_interval() {
        // 72 cells in 1 s, VC 0 twice as many as VC 1 (48 and 24): z = 0.8
        // below the band, LAD = z, and each VC's ER is its measured rate / z
        // whatever CCR its BRMs carry.
        let p = OsuParams { interval: AveragingInterval { time: Duration::from_secs(1), cells: None }, ..OSU_DEFAULTS };
        let mut o = Osu::new(p, 100.0, 2, SimTime::ZERO);
        for i in 0..72u32 {
            let at = SimTime::ZERO + Duration::from_ms(u64::from(i));
            assert!(!o.abr_cell(at, usize::from(i % 3 == 2), None, || 0));
        }
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(1), 0);
        assert!(close(o.load_factor(), 0.8));
        for ccr in [10.0, 48.0, 60.0, 75.0] {
            let mut rm = brm(ccr);
            o.backward_rm(SimTime::ZERO, 0, &mut rm);
            assert!(close(rm.er, 60.0), "VC 0: 48 / 0.8 at CCR {ccr}, got {}", rm.er);
            let mut rm = brm(ccr);
            o.backward_rm(SimTime::ZERO, 1, &mut rm);
            assert!(close(rm.er, 30.0), "VC 1: 24 / 0.8 at CCR {ccr}, got {}", rm.er);
        }
        // With the CCR as the offered rate, each BRM's CCR is divided: a
        // source that took the last ER as its CCR compounds.
        let mut o = Osu::new(OsuParams { offered_rate: OfferedRate::Ccr, ..p }, 100.0, 2, SimTime::ZERO);
        for i in 0..72u32 {
            assert!(!o.abr_cell(SimTime::ZERO + Duration::from_ms(u64::from(i)), usize::from(i % 3 == 2), None, || 0));
        }
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(1), 0);
        let mut rm = brm(48.0);
        o.backward_rm(SimTime::ZERO, 0, &mut rm);
        let mut again = brm(rm.er);
        o.backward_rm(SimTime::ZERO, 0, &mut again);
        assert!(close(rm.er, 60.0) && close(again.er, 75.0), "{} then {}", rm.er, again.er);
        // A VC not seen in the last interval gets the fair share (45).
        let mut o = Osu::new(p, 100.0, 3, SimTime::ZERO);
        for i in 0..72u32 {
            assert!(!o.abr_cell(SimTime::ZERO + Duration::from_ms(u64::from(i)), usize::from(i % 2 == 1), None, || 0));
        }
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(1), 0);
        let mut rm = brm(50.0);
        o.backward_rm(SimTime::ZERO, 2, &mut rm);
        assert!(close(rm.er, 45.0), "{}", rm.er);
    }

    #[test]
    fn test_edge_cases_give_finite_ers() {
        // No ABR input: z = 0, LAD = 0: the target.
        let mut o = after(Fairness::Basic, 2, 0);
        assert_eq!(o.load_factor(), 0.0);
        assert!(close(o.er(10.0), 90.0));
        // A stopped VC gets the fair share, not 0 / LAD.
        let o2 = after(Fairness::Basic, 3, 72);
        assert!(close(o2.er(0.0), 30.0) && close(o2.er(f64::NAN), 30.0));
        // Nothing left for ABR: z infinite, ER 0.
        o.high_priority_cells(SimTime::ZERO, 200);
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(2), 0);
        assert!(o.load_factor().is_infinite());
        assert_eq!(o.er(10.0), 0.0);
        let mut rm = RmCell {
            dir: crate::abr::Direction::Backward,
            bn: false,
            ci: false,
            ni: false,
            er: 5.0,
            ccr: 10.0,
            mcr: 0.0,
        };
        o.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!(rm.er, 0.0);
        let r = o.readings();
        assert_eq!(r[1].value, None, "infinite z");
        assert_eq!(r[6].value, Some(1.0));
    }

    #[test]
    fn test_active_vcs_are_those_seen_in_the_interval() {
        let mut o = after(Fairness::Basic, 4, 6);
        assert_eq!(o.n_active, 4);
        assert!(!o.abr_cell(SimTime::ZERO + Duration::from_secs(1), 2, None, || 0));
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(2), 0);
        assert_eq!(o.n_active, 1);
        assert!(close(o.fair_share(), 90.0));
        o.deadline_reached(SimTime::ZERO + Duration::from_secs(3), 0);
        assert_eq!(o.n_active, 1, "at least one");
    }

    #[test]
    fn test_parameters_that_cannot_work_name_themselves() {
        let bad = |f: fn(&mut OsuParams)| {
            let mut p = OSU_DEFAULTS;
            f(&mut p);
            p.check(353_207.55).unwrap_err().param
        };
        assert!(OSU_DEFAULTS.check(353_207.55).is_ok());
        assert_eq!(bad(|p| p.target_utilization = 0.0), "target_utilization");
        assert_eq!(bad(|p| p.half_width = 1.0), "half_width");
        assert_eq!(bad(|p| p.half_width = -0.1), "half_width");
        assert_eq!(bad(|p| p.interval.cells = Some(0)), "interval.cells");
    }
}
