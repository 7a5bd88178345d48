//! Timers with at most one pending event each.
//!
//! A TCP sender restarts its retransmission timer on almost every ACK. Pushing
//! a new event each time and ignoring the stale ones would fill the event heap
//! with thousands of dead entries (one per ACK for an RTO's worth of time) and
//! slow every heap operation. A [`LazyTimer`] keeps one event in the queue:
//! moving the deadline later costs nothing (the pending event, when it fires
//! early, re-arms itself at the new deadline); only moving it earlier
//! schedules a new event, and a generation number retires the old one.

use atmlab_engine::SimTime;

/// What a timer event means when it fires.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Firing {
    /// Not this timer's live event, or the timer was cancelled: ignore.
    Stale,
    /// The deadline has come: run the timeout.
    Due,
    /// The deadline moved later: schedule this event `(time, generation)`.
    Rearm(SimTime, u32),
}

/// The bookkeeping of one timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct LazyTimer {
    deadline: Option<SimTime>,
    armed: Option<SimTime>,
    generation: u32,
}

impl LazyTimer {
    /// Sets the deadline (`None` cancels). Returns the event to schedule, if
    /// a new one is needed.
    pub fn set(&mut self, deadline: Option<SimTime>) -> Option<(SimTime, u32)> {
        self.deadline = deadline;
        match (deadline, self.armed) {
            (None, _) => None,
            (Some(d), Some(armed)) if armed <= d => None,
            (Some(d), _) => {
                self.generation = self.generation.wrapping_add(1);
                self.armed = Some(d);
                Some((d, self.generation))
            }
        }
    }

    /// When the timer's pending event fires, if it has one (it may only
    /// re-arm then: the deadline is at or after it).
    pub fn pending(&self) -> Option<SimTime> {
        self.armed
    }

    /// An event of this timer with `generation` fired at `now`.
    pub fn fire(&mut self, now: SimTime, generation: u32) -> Firing {
        if generation != self.generation || self.armed.is_none() {
            return Firing::Stale;
        }
        self.armed = None;
        match self.deadline {
            None => Firing::Stale,
            Some(d) if d <= now => {
                self.deadline = None;
                Firing::Due
            }
            Some(d) => {
                self.generation = self.generation.wrapping_add(1);
                self.armed = Some(d);
                Firing::Rearm(d, self.generation)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ps: u64) -> SimTime {
        SimTime::from_ps(ps)
    }

    #[test]
    fn test_later_deadline_reuses_the_pending_event() {
        let mut timer = LazyTimer::default();
        let (at, g) = timer.set(Some(t(10))).unwrap();
        assert_eq!(at, t(10));
        assert_eq!(timer.set(Some(t(20))), None);
        assert_eq!(timer.set(Some(t(30))), None);
        let Firing::Rearm(at2, g2) = timer.fire(t(10), g) else { panic!() };
        assert_eq!(at2, t(30));
        assert_eq!(timer.fire(t(30), g2), Firing::Due);
    }

    #[test]
    fn test_earlier_deadline_retires_the_old_event() {
        let mut timer = LazyTimer::default();
        let (_, g1) = timer.set(Some(t(30))).unwrap();
        let (at, g2) = timer.set(Some(t(10))).unwrap();
        assert_eq!(at, t(10));
        assert_eq!(timer.fire(t(10), g2), Firing::Due);
        assert_eq!(timer.fire(t(30), g1), Firing::Stale);
    }

    #[test]
    fn test_cancel_makes_the_event_stale() {
        let mut timer = LazyTimer::default();
        let (_, g) = timer.set(Some(t(10))).unwrap();
        assert_eq!(timer.set(None), None);
        assert_eq!(timer.fire(t(10), g), Firing::Stale);
        // and a new deadline schedules afresh
        assert!(timer.set(Some(t(50))).is_some());
    }
}
