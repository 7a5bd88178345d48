//! Statistics used by the probes: time-weighted averages and Jain's index.

use crate::time::SimTime;

/// The time-weighted average of a piecewise-constant integer quantity (a
/// queue length, say), with its maximum.
///
/// `set(now, v)` records that the quantity changes to `v` at `now`; the
/// accumulated area is exact (128-bit integer picosecond-units).
#[derive(Clone, Debug, Default)]
pub struct TimeAverage {
    value: u64,
    since: SimTime,
    area: u128,
    max: u64,
}

impl TimeAverage {
    /// A quantity that is zero from `t = 0`.
    pub fn new() -> TimeAverage {
        TimeAverage::default()
    }

    /// The quantity becomes `value` at `now` (`now` never goes backwards).
    #[inline]
    pub fn set(&mut self, now: SimTime, value: u64) {
        let dt = now.as_ps() - self.since.as_ps();
        self.area += u128::from(self.value) * u128::from(dt);
        self.since = now;
        self.value = value;
        if value > self.max {
            self.max = value;
        }
    }

    /// The current value.
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The largest value seen.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The average over `[0, until]` (zero for an empty interval).
    pub fn mean(&self, until: SimTime) -> f64 {
        if until.as_ps() == 0 {
            return 0.0;
        }
        self.area_until(until) as f64 / until.as_ps() as f64
    }

    /// The exact integral over `[0, until]` (value-picoseconds): the areas
    /// of quantities that add up add up, so the average of a sum can be
    /// had from its parts' without keeping it.
    pub fn area_until(&self, until: SimTime) -> u128 {
        let tail = u128::from(self.value) * u128::from(until.as_ps().saturating_sub(self.since.as_ps()));
        self.area + tail
    }
}

/// Jain's fairness index `(sum x)^2 / (n * sum x^2)`, in `[1/n, 1]`.
///
/// `None` when it is undefined: no values, or every value zero.
pub fn jain_fairness(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sum_sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sum_sq == 0.0 { None } else { Some(sum * sum / (n * sum_sq)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_time_average_of_a_square_wave() {
        let mut q = TimeAverage::new();
        q.set(SimTime::from_ps(10), 4); // 0 on [0,10), 4 on [10,30), 2 on [30,40]
        q.set(SimTime::from_ps(30), 2);
        assert_eq!(q.mean(SimTime::from_ps(40)), (4.0 * 20.0 + 2.0 * 10.0) / 40.0);
        assert_eq!(q.max(), 4);
        assert_eq!(q.value(), 2);
        assert_eq!(q.area_until(SimTime::from_ps(40)), 4 * 20 + 2 * 10);
    }

    #[test]
    fn test_jain_extremes() {
        assert_eq!(jain_fairness(&[1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain_fairness(&[5.0, 0.0, 0.0, 0.0, 0.0]), Some(0.2));
        assert_eq!(jain_fairness(&[0.0, 0.0]), None);
        assert_eq!(jain_fairness(&[]), None);
    }
}
