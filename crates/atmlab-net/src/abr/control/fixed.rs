//! A fixed explicit rate: every backward RM cell of the port's VCs gets its
//! ER lowered to one configured rate, whatever the load. Not an algorithm
//! of the literature: a baseline (what the end systems do when the switch
//! hands out a known rate, e.g. a VC's max-min fair share) and the smallest
//! example of a controller: this file, a variant in `control/mod.rs` and
//! its keys in `atmlab-scenario` (`abr_switch.rs`), nothing in `sim/`.
//!
//! Its view is one number: it may be told ahead of time (it counts
//! nothing; [`super::Timing::PerCell`]).

use super::{ControlError, Reading, ReadingInfo, SwitchControl, bps, reading};
use crate::abr::RmCell;
use atmlab_engine::SimTime;

/// The fixed rate's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedRateParams {
    /// The explicit rate, cells/s (more than 0).
    pub er: f64,
}

impl FixedRateParams {
    /// `Ok` if the rate is a positive finite number.
    pub fn validate(&self) -> Result<(), ControlError> {
        if self.er.is_finite() && self.er > 0.0 {
            Ok(())
        } else {
            Err(ControlError::new("er", format!("{} cells/s is not a rate: must be more than 0", self.er)))
        }
    }
}

/// What a fixed-rate port reports.
pub const READINGS: &[ReadingInfo] = &[
    ReadingInfo { name: "er_bps", description: "The fixed explicit rate, bit/s (fixed_rate).", integer: false },
    reading::BRMS_LOWERED,
];

/// A port that writes one fixed ER.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedRate {
    params: FixedRateParams,
    lowered: u64,
}

impl FixedRate {
    /// A port writing `params.er`.
    pub fn new(params: FixedRateParams) -> FixedRate {
        FixedRate { params, lowered: 0 }
    }
}

impl SwitchControl for FixedRate {
    #[inline]
    fn backward_rm(&mut self, _at: SimTime, _vc: usize, rm: &mut RmCell) {
        if rm.er > self.params.er {
            self.lowered += 1;
        }
        rm.lower_er(self.params.er);
    }

    #[inline]
    fn writes_backward_rm(&self) -> bool {
        true
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [bps(self.params.er), Some(self.lowered as f64)];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::{Direction, RmCell};

    #[test]
    fn test_lowers_the_er_never_raises_it() {
        let mut f = FixedRate::new(FixedRateParams { er: 1000.0 });
        let mut rm =
            RmCell { dir: Direction::Backward, bn: false, ci: false, ni: false, er: 5000.0, ccr: 2000.0, mcr: 0.0 };
        f.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!(rm.er, 1000.0);
        rm.er = 500.0;
        f.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!(rm.er, 500.0);
        assert_eq!(f.readings()[1].value, Some(1.0));
        assert!(FixedRateParams { er: 0.0 }.validate().is_err());
        assert!(FixedRateParams { er: f64::NAN }.validate().is_err());
    }
}
