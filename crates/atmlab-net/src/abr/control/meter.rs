//! The measurement interval of the interval-based controllers other than
//! ERICA (CAPC, the OSU scheme, Charny's capacity): the ABR and the
//! higher-priority (CBR, VBR) cells offered to the port are counted over an
//! interval that ends at whichever bound comes first, the N-th ABR cell or
//! the time T, and is never shorter than one cell time of the link (an
//! interval of zero length would divide by zero). The bounds are those of
//! ERICA's averaging interval ([`super::erica::AveragingInterval`],
//! docs/models/abr.md, "ERICA and ERICA+"); ERICA keeps its own copy of
//! this arithmetic so that nothing here can change its results.

use atmlab_engine::{Duration, PS_PER_S, SimTime};

use super::ControlError;
use super::erica::AveragingInterval;

/// What one interval measured, as rates over its length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Measured {
    /// The interval's length in seconds (at least one cell time).
    pub dt_secs: f64,
    /// ABR cells offered per second.
    pub abr_rate: f64,
    /// CBR and VBR cells offered per second.
    pub hp_rate: f64,
}

/// The interval under way at one port.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Meter {
    bounds: AveragingInterval,
    min_interval: Duration,
    t_start: SimTime,
    abr_cells: u32,
    hp_cells: u32,
    intervals: u64,
}

/// `Ok` if `bounds` work at a port of `cell_rate` cells/s: a time bound no
/// shorter than one cell time, a cell bound of at least one cell. Errors
/// name `interval.time` or `interval.cells` (the scenario's `interval` and
/// `interval_cells`).
pub(crate) fn check_interval(bounds: &AveragingInterval, cell_rate: f64) -> Result<(), ControlError> {
    if !(cell_rate.is_finite() && cell_rate > 0.0) {
        return Err(ControlError::new("link_cell_rate", format!("{cell_rate} cells/s: must be more than 0")));
    }
    if bounds.cells == Some(0) {
        return Err(ControlError::new("interval.cells", "must be at least 1 (or None)".into()));
    }
    let min = cell_time(cell_rate);
    if bounds.time < min {
        return Err(ControlError::new(
            "interval.time",
            format!("{} is shorter than one cell time of the link ({min})", bounds.time),
        ));
    }
    Ok(())
}

impl Meter {
    /// A meter whose first interval starts at `now`, at a port of
    /// `cell_rate` cells/s (checked by [`check_interval`]).
    pub(crate) fn new(bounds: AveragingInterval, cell_rate: f64, now: SimTime) -> Meter {
        Meter { bounds, min_interval: cell_time(cell_rate), t_start: now, abr_cells: 0, hp_cells: 0, intervals: 0 }
    }

    /// Counts an ABR cell offered at `now`; `true` when the cell bound ends
    /// the interval (never before one cell time has passed): the caller
    /// then calls [`end`](Self::end).
    #[must_use = "true means the interval must be ended now"]
    pub(crate) fn abr_cell(&mut self, now: SimTime) -> bool {
        self.abr_cells = self.abr_cells.saturating_add(1);
        self.bounds.cells.is_some_and(|n| self.abr_cells >= n)
            && now.saturating_since(self.t_start) >= self.min_interval
    }

    /// Counts `n` CBR or VBR cells.
    pub(crate) fn hp_cells(&mut self, n: u32) {
        self.hp_cells = self.hp_cells.saturating_add(n);
    }

    /// When the time bound ends the interval.
    pub(crate) fn deadline(&self) -> SimTime {
        self.t_start.saturating_add(self.bounds.time)
    }

    /// How many intervals have ended.
    pub(crate) fn intervals(&self) -> u64 {
        self.intervals
    }

    /// Ends the interval at `now` (measured as at least one cell time
    /// long) and starts the next.
    pub(crate) fn end(&mut self, now: SimTime) -> Measured {
        let len = now.saturating_since(self.t_start).max(self.min_interval);
        let dt_secs = len.as_secs_f64();
        let m = Measured {
            dt_secs,
            abr_rate: f64::from(self.abr_cells) / dt_secs,
            hp_rate: f64::from(self.hp_cells) / dt_secs,
        };
        self.t_start = now;
        self.abr_cells = 0;
        self.hp_cells = 0;
        self.intervals += 1;
        m
    }
}

/// One cell time at `rate` cells/s, rounded up to whole picoseconds (at
/// least 1 ps; saturating for absurdly slow links), as ERICA's.
pub(crate) fn cell_time(rate: f64) -> Duration {
    let ps = (PS_PER_S as f64 / rate).ceil() as u64;
    Duration::from_ps(ps.max(1))
}

/// A rate read from a cell: NaN and negative values count as 0.
pub(crate) fn sanitize_rate(rate: f64) -> f64 {
    if rate >= 0.0 { rate } else { 0.0 }
}

/// `Ok` if `value` is finite and `ok`, else an error naming `param`.
pub(crate) fn check(param: &'static str, value: f64, ok: bool, rule: &str) -> Result<(), ControlError> {
    if value.is_finite() && ok {
        Ok(())
    } else {
        Err(ControlError::new(param, format!("{value} is not allowed: {rule}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_an_interval_ends_at_its_cell_bound_or_its_deadline() {
        let bounds = AveragingInterval { time: Duration::from_ms(1), cells: Some(3) };
        let mut m = Meter::new(bounds, 100_000.0, SimTime::ZERO);
        let us = |n| SimTime::ZERO + Duration::from_us(n);
        assert!(!m.abr_cell(us(10)) && !m.abr_cell(us(20)));
        m.hp_cells(2);
        assert!(m.abr_cell(us(100)), "the third cell ends it");
        let r = m.end(us(100));
        assert!((r.abr_rate - 30_000.0).abs() < 1e-6 && (r.hp_rate - 20_000.0).abs() < 1e-6, "{r:?}");
        assert_eq!(m.deadline(), us(1100));
        assert_eq!(m.intervals(), 1);
        // Never shorter than one cell time (10 us at 100,000 cells/s).
        let mut m = Meter::new(bounds, 100_000.0, SimTime::ZERO);
        assert!(!m.abr_cell(SimTime::ZERO) && !m.abr_cell(SimTime::ZERO) && !m.abr_cell(us(5)));
        assert!(m.abr_cell(us(10)));
        assert_eq!(m.end(SimTime::ZERO).dt_secs, 10e-6);
    }

    #[test]
    fn test_bounds_that_cannot_work_name_their_parameter() {
        let ok = AveragingInterval { time: Duration::from_ms(1), cells: Some(100) };
        assert!(check_interval(&ok, 353_207.55).is_ok());
        let short = AveragingInterval { time: Duration::from_ns(1), cells: None };
        assert_eq!(check_interval(&short, 353_207.55).unwrap_err().param, "interval.time");
        let none = AveragingInterval { time: Duration::from_ms(1), cells: Some(0) };
        assert_eq!(check_interval(&none, 353_207.55).unwrap_err().param, "interval.cells");
        assert_eq!(check_interval(&ok, 0.0).unwrap_err().param, "link_cell_rate");
        assert_eq!(sanitize_rate(f64::NAN), 0.0);
        assert_eq!(sanitize_rate(-1.0), 0.0);
        assert_eq!(check("x", f64::INFINITY, true, "finite").unwrap_err().param, "x");
    }
}
