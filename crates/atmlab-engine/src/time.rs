//! Simulated time: an instant ([`SimTime`]) and a span ([`Duration`]), both
//! unsigned 64-bit counts of picoseconds.
//!
//! 2^64 ps is about 213 days, far beyond any run (a scenario's times are
//! validated to at most [`MAX_SCENARIO_TIME`]). Arithmetic that would
//! overflow or go negative through the operators panics (a broken invariant,
//! never a user error); the `checked_*` variants return `None` instead, and
//! [`SimTime::saturating_add`] gives [`SimTime::MAX`], "never", for instants
//! computed from quantities that grow during a run (a departure behind a
//! long queue on a slow link, a blocked CPU's wait), which are then simply
//! later than the end of any run. There is no floating-point time inside the
//! core: `as_secs_f64` exists only for reporting.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The longest time a scenario may state (a run's duration, a delay, an
/// interval, a timer): 10^6 s, about 11.6 days. Any sum of a few such
/// values and the end of a run stays far below 2^64 ps (about 213 days).
pub const MAX_SCENARIO_TIME: Duration = Duration(1_000_000 * PS_PER_S);

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant ("never").
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// The instant `ps` picoseconds after the start.
    pub const fn from_ps(ps: u64) -> SimTime {
        SimTime(ps)
    }
    /// Picoseconds since the start.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Seconds since the start, for reporting only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: Duration) -> Option<SimTime> {
        self.0.checked_add(d.0).map(SimTime)
    }
    /// The span from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_since(self, earlier: SimTime) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration)
    }
    /// `self + d`, or [`SimTime::MAX`] ("never") on overflow.
    pub fn saturating_add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);
    /// The largest representable span.
    pub const MAX: Duration = Duration(u64::MAX);

    /// A span of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Duration {
        Duration(ps)
    }
    /// A span of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Duration {
        Duration(ns * 1_000)
    }
    /// A span of `us` microseconds.
    pub const fn from_us(us: u64) -> Duration {
        Duration(us * 1_000_000)
    }
    /// A span of `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Duration {
        Duration(ms * 1_000_000_000)
    }
    /// A span of `s` seconds.
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * PS_PER_S)
    }
    /// Picoseconds in this span.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Seconds in this span, for reporting only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// Whole milliseconds in this span (rounded down).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000_000
    }
    /// Whether the span is empty.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self * k`, or `None` on overflow.
    pub fn checked_mul(self, k: u64) -> Option<Duration> {
        self.0.checked_mul(k).map(Duration)
    }
    /// `self * k`, saturating at [`Duration::MAX`].
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: Duration) -> Option<Duration> {
        self.0.checked_add(d.0).map(Duration)
    }
    /// `self + d`, saturating at [`Duration::MAX`].
    pub fn saturating_add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.checked_add(d.0).expect("simulated time overflow"))
    }
}

impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<SimTime> for SimTime {
    type Output = Duration;
    fn sub(self, earlier: SimTime) -> Duration {
        Duration(self.0.checked_sub(earlier.0).expect("negative time span"))
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.checked_add(d.0).expect("duration overflow"))
    }
}

impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        Duration(self.0.checked_sub(d.0).expect("negative duration"))
    }
}

/// Formats picoseconds with the largest unit that divides them exactly
/// (`5 us`, `2.726337448 us` is printed as `2726337 ps` only when no larger unit
/// divides it).
fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    const UNITS: [(u64, &str); 5] =
        [(PS_PER_S, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns"), (1, "ps")];
    if ps == 0 {
        return write!(f, "0 s");
    }
    for (scale, unit) in UNITS {
        if ps % scale == 0 {
            return write!(f, "{} {}", ps / scale, unit);
        }
    }
    unreachable!("1 ps divides everything")
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t=")?;
        fmt_ps(self.0, f)
    }
}
impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_duration_constructors_agree() {
        assert_eq!(Duration::from_secs(1), Duration::from_ms(1000));
        assert_eq!(Duration::from_ms(1), Duration::from_us(1000));
        assert_eq!(Duration::from_us(1), Duration::from_ns(1000));
        assert_eq!(Duration::from_ns(1), Duration::from_ps(1000));
    }

    #[test]
    fn test_instant_arithmetic_round_trips() {
        let t = SimTime::ZERO + Duration::from_us(5);
        assert_eq!(t - SimTime::ZERO, Duration::from_us(5));
        assert_eq!(t.checked_since(t + Duration::from_ps(1)), None);
        assert_eq!(t.saturating_since(t + Duration::from_ps(1)), Duration::ZERO);
    }

    #[test]
    #[should_panic(expected = "negative time span")]
    fn test_negative_span_panics() {
        let _ = SimTime::ZERO - SimTime::from_ps(1);
    }

    #[test]
    fn test_checked_overflow_is_none() {
        assert_eq!(SimTime::MAX.checked_add(Duration::from_ps(1)), None);
        assert_eq!(Duration::MAX.checked_mul(2), None);
    }

    #[test]
    fn test_saturating_add_is_never_past_the_end() {
        let t = SimTime::from_ps(u64::MAX - 5);
        assert_eq!(t.saturating_add(Duration::from_ps(10)), SimTime::MAX);
        assert_eq!(SimTime::ZERO.saturating_add(Duration::from_ps(10)), SimTime::from_ps(10));
        // A few of the longest times a scenario can state, added to the
        // latest end of a run, stay representable.
        let end = SimTime::ZERO + MAX_SCENARIO_TIME;
        assert!(end.checked_add(MAX_SCENARIO_TIME.checked_mul(10).unwrap()).is_some());
    }

    #[test]
    fn test_display_uses_largest_exact_unit() {
        assert_eq!(Duration::from_us(5).to_string(), "5 us");
        assert_eq!(Duration::from_ms(300).to_string(), "300 ms");
        assert_eq!(Duration::from_ps(2_726_337).to_string(), "2726337 ps");
        assert_eq!(Duration::ZERO.to_string(), "0 s");
        assert_eq!(SimTime::from_ps(10 * PS_PER_S).to_string(), "t=10 s");
    }
}
