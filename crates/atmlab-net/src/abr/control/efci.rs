//! A binary (EFCI) switch: data cells of ABR VCs offered while the port's
//! ABR queue holds at least a threshold of cells get their EFCI bit set
//! (TM 4.0 s5.10.6; the "binary feedback" switches of the Forum's early
//! rate-based proposals), and the destination turns the bit into CI in
//! its backward RM cells (docs/models/abr.md, "EFCI switches").
//!
//! It reads only the port's ABR queue at each data cell's arrival and
//! keeps nothing else but its count of marked cells: it may be told of a
//! cell ahead of time ([`super::Timing::PerCell`]).

use super::{Reading, ReadingInfo, SwitchControl, reading};
use atmlab_engine::SimTime;

/// EFCI's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EfciParams {
    /// The ABR queue at which marking starts, cells.
    pub threshold: u32,
}

/// What an EFCI switch reports.
pub const READINGS: &[ReadingInfo] = &[reading::EFCI_MARKED];

/// An EFCI-marking port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Efci {
    params: EfciParams,
    marked: u64,
}

impl Efci {
    /// A port marking from `params.threshold` on.
    pub fn new(params: EfciParams) -> Efci {
        Efci { params, marked: 0 }
    }

    /// Data cells marked so far.
    pub fn marked(&self) -> u64 {
        self.marked
    }
}

impl SwitchControl for Efci {
    #[inline]
    fn mark(&mut self, _at: SimTime, _vc: usize, abr_queue: u32) -> bool {
        let mark = abr_queue >= self.params.threshold;
        self.marked += u64::from(mark);
        mark
    }

    #[inline]
    fn marks(&self) -> bool {
        true
    }

    fn readings(&self) -> Vec<Reading> {
        vec![Reading { name: READINGS[0].name, value: Some(self.marked as f64) }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_marks_from_the_threshold_on_and_counts() {
        let mut e = Efci::new(EfciParams { threshold: 10 });
        let marks: Vec<bool> = [0, 9, 10, 11, 3].iter().map(|&q| e.mark(SimTime::ZERO, 0, q)).collect();
        assert_eq!(marks, [false, false, true, true, false]);
        assert_eq!(e.marked(), 2);
        assert_eq!(e.readings(), vec![Reading { name: "efci_marked", value: Some(2.0) }]);
        assert!(e.deadline().is_none() && !e.writes_backward_rm() && e.marks());
    }
}
