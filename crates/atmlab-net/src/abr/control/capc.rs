//! CAPC, Congestion Avoidance using Proportional Control (A. Barnhart,
//! Hughes, ATM Forum 94-0983, 1994): one explicit rate per output port,
//! ERS, moved multiplicatively every interval towards the rate at which the
//! ABR input equals a target; every BRM's ER is capped at ERS, and CI is
//! set while the queue is above DQT (docs/models/abr.md, "CAPC").
//!
//! # The algorithm (after the CAPC star of Ptolemy Classic's tcpSim,
//! D. Sisalem, "as specified by Barnhart in ATM-Forum 94-0983")
//!
//! ```text
//! at the end of an interval (N ABR cells or the time T):
//!     target = max(U LinkRate - hpRate, 0)          (ERICA's ABR capacity)
//!     z      = inputRate / target                    (infinite with no target)
//!     z <= 1:  ERX = min(ERU, 1 + (1 - z) Rup)
//!     z >  1:  ERX = max(ERF, 1 - (z - 1) Rdn)
//!     ERS    = ERS ERX, then within [10 cells/s, target]   (the bounds: atmlab's)
//! on a BRM:  ER = min(ER, ERS);  CI = 1 if Q > DQT
//! ERS starts at target / 10 (the star's start)
//! ```
//!
//! The star ends an interval only at a cell arrival and counts data cells
//! alone; here the time bound is also a deadline (an idle port still
//! raises ERS) and every ABR cell is counted, as ERICA counts them (the
//! seam does not tell a backward RM cell from a data cell). Q is the ABR
//! queue the latest ABR cell found (or the interval's deadline).
//!
//! CAPC2 (Barnhart, 95-0195) changed CAPC in ways no source read here
//! states: it is not implemented (docs/models/abr.md, "CAPC").
//!
//! It counts cells and writes BRMs from its state:
//! [`super::Timing::Counted`].

use super::erica::AveragingInterval;
use super::meter::{Meter, check, check_interval};
use super::{ControlError, Reading, ReadingInfo, SwitchControl, bps, finite, reading};
use crate::abr::RmCell;
use atmlab_engine::{Duration, SimTime};

/// The least ERS, cells/s: TM 4.0's default TCR, below which a source sends
/// no cell in rate (atmlab's floor: ERS would otherwise shrink towards 0
/// while nothing is left for ABR and take ever longer to recover).
pub const ERS_FLOOR: f64 = 10.0;

/// The start of ERS as a share of the target (the Ptolemy star's
/// `target_rate / 10`).
pub const INITIAL_SHARE: f64 = 0.1;

/// CAPC's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapcParams {
    /// U: the target is `U LinkRate - hpRate`, in (0, 1] (0.95; the star
    /// takes an absolute target rate instead).
    pub target_utilization: f64,
    /// Rup: the slope of the increase, more than 0 (0.05, the star's).
    pub increase_slope: f64,
    /// Rdn: the slope of the decrease, more than 0 (0.5, the star's).
    pub decrease_slope: f64,
    /// ERU: the largest factor of one increase, at least 1 (1.5, the star's).
    pub increase_cap: f64,
    /// ERF: the smallest factor of one decrease, in (0, 1] (0.5, the star's).
    pub decrease_floor: f64,
    /// DQT: CI is set while the ABR queue is above this, cells (200, the
    /// star's).
    pub ci_threshold: u32,
    /// The interval: 100 ABR cells (the star's `max_count`) or 1 ms
    /// (atmlab's: the star's "1" is in its own time unit).
    pub interval: AveragingInterval,
}

/// CAPC's defaults (see [`CapcParams`]).
pub const CAPC_DEFAULTS: CapcParams = CapcParams {
    target_utilization: 0.95,
    increase_slope: 0.05,
    decrease_slope: 0.5,
    increase_cap: 1.5,
    decrease_floor: 0.5,
    ci_threshold: 200,
    interval: AveragingInterval { time: Duration::from_ms(1), cells: Some(100) },
};

impl CapcParams {
    /// Checks every parameter at a port of `cell_rate` cells/s; the error
    /// names the first bad one.
    pub fn check(&self, cell_rate: f64) -> Result<(), ControlError> {
        let u = self.target_utilization;
        check("target_utilization", u, u > 0.0 && u <= 1.0, "must be in (0, 1]")?;
        check("increase_slope", self.increase_slope, self.increase_slope > 0.0, "must be more than 0")?;
        check("decrease_slope", self.decrease_slope, self.decrease_slope > 0.0, "must be more than 0")?;
        check("increase_cap", self.increase_cap, self.increase_cap >= 1.0, "must be at least 1")?;
        let f = self.decrease_floor;
        check("decrease_floor", f, f > 0.0 && f <= 1.0, "must be in (0, 1]")?;
        check_interval(&self.interval, cell_rate)
    }
}

/// The factor ERX of one interval with load `z` (the star's rule).
pub fn factor(p: &CapcParams, z: f64) -> f64 {
    if z <= 1.0 {
        (1.0 + (1.0 - z) * p.increase_slope).min(p.increase_cap)
    } else if z.is_finite() {
        (1.0 - (z - 1.0) * p.decrease_slope).max(p.decrease_floor)
    } else {
        p.decrease_floor
    }
}

/// What CAPC reports, as of the end of the last interval (ERS as it is).
pub const READINGS: &[ReadingInfo] = &[
    reading::INTERVALS,
    reading::LOAD_FACTOR,
    reading::ABR_CAPACITY,
    reading::HIGH_PRIORITY,
    reading::FAIR_SHARE,
    reading::BRMS_LOWERED,
    reading::BRMS_CI_SET,
];

/// CAPC at one output port.
#[derive(Clone, Debug, PartialEq)]
pub struct Capc {
    params: CapcParams,
    link_rate: f64,
    meter: Meter,
    ers: f64,
    target: f64,
    z: f64,
    hp_rate: f64,
    queue: u32,
    lowered: u64,
    ci_set: u64,
}

impl Capc {
    /// A port of `cell_rate` cells/s whose first interval starts at `now`
    /// (the parameters checked by [`CapcParams::check`]): ERS is a tenth of
    /// the target, z = 1 until the first interval ends.
    pub fn new(params: CapcParams, cell_rate: f64, now: SimTime) -> Capc {
        let target = params.target_utilization * cell_rate;
        Capc {
            params,
            link_rate: cell_rate,
            meter: Meter::new(params.interval, cell_rate, now),
            ers: (INITIAL_SHARE * target).max(ERS_FLOOR),
            target,
            z: 1.0,
            hp_rate: 0.0,
            queue: 0,
            lowered: 0,
            ci_set: 0,
        }
    }

    /// ERS, cells/s.
    pub fn ers(&self) -> f64 {
        self.ers
    }

    /// The load factor z of the last interval.
    pub fn load_factor(&self) -> f64 {
        self.z
    }

    /// The target of the last interval, cells/s.
    pub fn target(&self) -> f64 {
        self.target
    }

    /// Ends the interval at `now` and moves ERS.
    fn end_interval(&mut self, now: SimTime) {
        let m = self.meter.end(now);
        self.close(m.abr_rate, m.hp_rate);
    }

    /// The end-of-interval rule from the interval's rates.
    fn close(&mut self, abr_rate: f64, hp_rate: f64) {
        self.hp_rate = hp_rate;
        self.target = (self.params.target_utilization * self.link_rate - hp_rate).max(0.0);
        self.z = if self.target > 0.0 { abr_rate / self.target } else { f64::INFINITY };
        let ers = self.ers * factor(&self.params, self.z);
        self.ers = ers.min(self.target).max(ERS_FLOOR);
    }
}

impl SwitchControl for Capc {
    #[inline]
    fn abr_cell(&mut self, at: SimTime, _vc: usize, _frm_ccr: Option<f64>, queue: impl FnOnce() -> u32) -> bool {
        self.queue = queue();
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

    fn backward_rm(&mut self, _at: SimTime, _vc: usize, rm: &mut RmCell) {
        self.lowered += u64::from(self.ers < rm.er);
        rm.lower_er(self.ers);
        if self.queue > self.params.ci_threshold {
            self.ci_set += u64::from(!rm.ci);
            rm.ci = true;
        }
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        true
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        Some(self.meter.deadline())
    }

    fn deadline_reached(&mut self, now: SimTime, abr_queue: u32) {
        self.queue = abr_queue;
        self.end_interval(now);
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [
            Some(self.meter.intervals() as f64),
            finite(self.z),
            bps(self.target),
            bps(self.hp_rate),
            bps(self.ers),
            Some(self.lowered as f64),
            Some(self.ci_set as f64),
        ];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::rm::Direction;

    fn brm(er: f64) -> RmCell {
        RmCell { dir: Direction::Backward, bn: false, ci: false, ni: false, er, ccr: 0.0, mcr: 0.0 }
    }

    /// CAPC on a link of 100,000 cells/s at U = 1 (target 100,000) with
    /// ERS set to `ers`.
    fn at_target(ers: f64) -> Capc {
        let p = CapcParams { target_utilization: 1.0, ..CAPC_DEFAULTS };
        let mut c = Capc::new(p, 100_000.0, SimTime::ZERO);
        c.ers = ers;
        c
    }

    #[test]
    fn test_the_vectors_of_the_model_page() {
        let step = |input: f64| {
            let mut c = at_target(10_000.0);
            c.close(input, 0.0);
            (c.load_factor(), c.ers())
        };
        let (z, ers) = step(80_000.0);
        assert!((z - 0.8).abs() < 1e-12 && (ers - 10_100.0).abs() < 1e-9, "{z} {ers}");
        assert!((step(150_000.0).1 - 7_500.0).abs() < 1e-9);
        assert!((step(400_000.0).1 - 5_000.0).abs() < 1e-9, "ERF binds");
        assert!((step(0.0).1 - 10_500.0).abs() < 1e-9, "an idle port raises by 1 + Rup");
        // ERU binds only for large slopes; ERF from z > 1 + (1 - ERF) / Rdn = 2.
        let p = CapcParams { increase_slope: 1.0, ..CAPC_DEFAULTS };
        assert_eq!(factor(&p, 0.0), 1.5);
        assert_eq!(factor(&CAPC_DEFAULTS, 2.0), 0.5);
        assert_eq!(factor(&CAPC_DEFAULTS, 1.0), 1.0);
        assert_eq!(factor(&CAPC_DEFAULTS, f64::INFINITY), 0.5);
    }

    #[test]
    fn test_ers_stays_between_the_floor_and_the_target() {
        let mut c = at_target(99_000.0);
        c.close(0.0, 0.0);
        assert_eq!(c.ers(), 100_000.0, "never above the target");
        c.close(50_000.0, 60_000.0);
        assert_eq!(c.target(), 40_000.0, "the target leaves CBR and VBR their rate");
        assert_eq!(c.ers(), 40_000.0);
        for _ in 0..2000 {
            c.close(1.0, 100_000.0);
        }
        assert!(c.load_factor().is_infinite(), "nothing left for ABR");
        assert_eq!(c.ers(), ERS_FLOOR);
        let r = c.readings();
        assert_eq!(r[1].value, None, "an infinite z reads as null");
        assert_eq!(r[2].value, Some(0.0));
    }

    #[test]
    fn test_two_greedy_sources_converge_to_half_the_target() {
        // A fluid model (ours): each interval both sources send at ERS.
        // From ERS = target / 10 it takes 105 intervals to come within 2 %
        // of target / 2 with the star's slopes, 52 with Rup 0.1, Rdn 0.8.
        let intervals = |rup: f64, rdn: f64| {
            let p = CapcParams { target_utilization: 1.0, increase_slope: rup, decrease_slope: rdn, ..CAPC_DEFAULTS };
            let mut c = Capc::new(p, 100_000.0, SimTime::ZERO);
            assert_eq!(c.ers(), 10_000.0);
            (1..=1000).find(|_| {
                c.close(2.0 * c.ers(), 0.0);
                (c.ers() / 50_000.0 - 1.0).abs() < 0.02
            })
        };
        assert_eq!(intervals(0.05, 0.5), Some(105));
        assert_eq!(intervals(0.1, 0.8), Some(52));
    }

    #[test]
    fn test_brms_get_ers_and_ci_above_dqt() {
        let mut c = at_target(20_000.0);
        let mut rm = brm(50_000.0);
        c.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!((rm.er, rm.ci), (20_000.0, false));
        assert!(!c.abr_cell(SimTime::ZERO, 0, None, || 201));
        let mut rm = brm(5_000.0);
        c.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!((rm.er, rm.ci), (5_000.0, true), "ER never raised; CI above DQT");
        c.deadline_reached(SimTime::ZERO + Duration::from_ms(1), 200);
        let mut rm = brm(50_000.0);
        c.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert!(!rm.ci, "the queue the deadline found");
        let r = c.readings();
        assert_eq!(r[5].value, Some(2.0));
        assert_eq!(r[6].value, Some(1.0));
    }

    #[test]
    fn test_the_hundredth_cell_ends_the_interval() {
        let mut c = Capc::new(CAPC_DEFAULTS, 353_207.55, SimTime::ZERO);
        assert_eq!(c.deadline(), Some(SimTime::ZERO + Duration::from_ms(1)));
        let at = |i: u64| SimTime::ZERO + Duration::from_ns(2_832 * i);
        for i in 1..100 {
            assert!(!c.abr_cell(at(i), 0, None, || 0));
        }
        c.high_priority_cells(at(99), 20);
        assert!(c.abr_cell(at(100), 0, Some(1.0), || 0));
        assert_eq!(c.meter.intervals(), 1);
        assert_eq!(c.deadline(), Some(at(100) + Duration::from_ms(1)));
        // 100 cells in 283.2 us: 353,107 cells/s, 20 of them VBR.
        let target = 0.95 * 353_207.55 - 20.0 / 283.2e-6;
        assert!((c.target() - target).abs() < 1e-6 * target);
        assert!(c.load_factor() > 1.0 && c.ers() < 0.1 * 0.95 * 353_207.55);
    }

    #[test]
    fn test_parameters_that_cannot_work_name_themselves() {
        let bad = |f: fn(&mut CapcParams)| {
            let mut p = CAPC_DEFAULTS;
            f(&mut p);
            p.check(353_207.55).unwrap_err().param
        };
        assert!(CAPC_DEFAULTS.check(353_207.55).is_ok());
        assert_eq!(bad(|p| p.target_utilization = 1.1), "target_utilization");
        assert_eq!(bad(|p| p.increase_slope = 0.0), "increase_slope");
        assert_eq!(bad(|p| p.decrease_slope = f64::INFINITY), "decrease_slope");
        assert_eq!(bad(|p| p.increase_cap = 0.9), "increase_cap");
        assert_eq!(bad(|p| p.decrease_floor = 0.0), "decrease_floor");
        assert_eq!(bad(|p| p.interval.time = Duration::from_ps(1)), "interval.time");
        assert_eq!(bad(|p| p.interval.cells = Some(0)), "interval.cells");
    }
}
