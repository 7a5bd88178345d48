//! Charny's max-min algorithm with consistent marking (A. Charny, MIT
//! 1994; A. Charny, D. Clark, R. Jain, ICC 1995), "the MIT scheme": each
//! port computes an advertised rate A that shares its capacity C max-min
//! among the VCs it records, those recorded below A ("marked": held back
//! elsewhere) keeping their rate and the others getting A
//! (docs/models/abr.md, "Charny's algorithm").
//!
//! # The algorithm, mapped onto TM 4.0
//!
//! ```text
//! C = max(U LinkRate - hpRate, 0)            (hpRate of the last interval; U = 1)
//! on an FRM of VC i:  r_i = its CCR;  marked_i = r_i < A   (consistent marking)
//!                     A = advertised()
//! on a BRM:           ER = min(ER, A)
//! exact:     A = the level a with sum_i min(r_i, a) = C over the recorded VCs:
//!            sort r ascending; A_k = (C - sum_{j<k} r_(j)) / (N - k);
//!            A = A_k for the least k with r_(k) >= A_k, else A_(N-1)
//!            (= C - sum r + max r: every VC marked, the largest may grow)
//! two_pass:  A1 = (C - sum_marked r) / (N - #marked);  unmark i with r_i > A1;
//!            A = the same with the new marks
//! ```
//!
//! Charny's cell carried one "stamped rate" that each switch lowered on
//! the way out, and the source took it from the returning cell. Here (the
//! mapping is atmlab's) the recorded rate is the FRM's CCR, the rate the
//! source sends at, which the ER the switches wrote into the last BRM
//! capped; and A is written into the BRM's ER, where the least A along the
//! path wins as the least stamp did. A switch stamping A into the FRM's ER
//! too would tell the switches further on a round trip sooner; the seam
//! writes only BRMs, which TM 4.0 s5.10.6 allows, and the fixed point is the
//! same. A VC leaves the table when no FRM of it came for `vc_timeout`.
//!
//! It counts FRMs and CBR/VBR cells, and writes BRMs from its state:
//! [`super::Timing::Counted`].

use super::erica::AveragingInterval;
use super::meter::{Meter, check, check_interval, sanitize_rate};
use super::{ControlError, Reading, ReadingInfo, SwitchControl, bps, reading};
use crate::abr::RmCell;
use atmlab_engine::{Duration, SimTime};

/// How the advertised rate is computed after a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iteration {
    /// The fixed point of the marking (the local max-min share), at once.
    Exact,
    /// Two passes from the marks the FRMs left: Charny's "two iterations".
    TwoPass,
}

/// Charny's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharnyParams {
    /// U: C = `U LinkRate - hpRate`, in (0, 1] (1: Charny shares the whole
    /// link; no queue control, so a queue built once drains only with U < 1).
    pub target_utilization: f64,
    /// Exact or two passes (exact).
    pub iteration: Iteration,
    /// A VC with no FRM for this long leaves the table (400 ms, four times
    /// TM 4.0's default Trm: atmlab's).
    pub vc_timeout: Duration,
    /// The interval over which the CBR and VBR rate is measured (5 ms,
    /// time only).
    pub interval: Duration,
}

/// Charny's defaults (see [`CharnyParams`]).
pub const CHARNY_DEFAULTS: CharnyParams = CharnyParams {
    target_utilization: 1.0,
    iteration: Iteration::Exact,
    vc_timeout: Duration::from_ms(400),
    interval: Duration::from_ms(5),
};

impl CharnyParams {
    /// Checks every parameter at a port of `cell_rate` cells/s; the error
    /// names the first bad one.
    pub fn check(&self, cell_rate: f64) -> Result<(), ControlError> {
        let u = self.target_utilization;
        check("target_utilization", u, u > 0.0 && u <= 1.0, "must be in (0, 1]")?;
        if self.vc_timeout.is_zero() {
            return Err(ControlError::new("vc_timeout", "must be longer than zero".into()));
        }
        check_interval(&self.bounds(), cell_rate)
    }

    fn bounds(&self) -> AveragingInterval {
        AveragingInterval { time: self.interval, cells: None }
    }
}

/// What Charny's algorithm reports (the advertised rate as it is now).
pub const READINGS: &[ReadingInfo] = &[
    reading::INTERVALS,
    reading::ABR_CAPACITY,
    reading::HIGH_PRIORITY,
    reading::FAIR_SHARE,
    reading::ACTIVE_VCS,
    reading::BRMS_LOWERED,
];

/// A VC in the table.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    present: bool,
    rate: f64,
    marked: bool,
    last_frm: SimTime,
}

const ABSENT: Entry = Entry { present: false, rate: 0.0, marked: false, last_frm: SimTime::ZERO };

/// Charny's algorithm at one output port.
#[derive(Clone, Debug, PartialEq)]
pub struct Charny {
    params: CharnyParams,
    link_rate: f64,
    meter: Meter,
    capacity: f64,
    hp_rate: f64,
    advertised: f64,
    vcs: Vec<Entry>,
    present: usize,
    /// The earliest time a VC of the table times out.
    next_expiry: SimTime,
    /// Rates, sorted for the exact computation (kept to allocate once).
    scratch: Vec<f64>,
    lowered: u64,
}

impl Charny {
    /// A port of `cell_rate` cells/s with `n_vcs` VC indices, its first
    /// interval starting at `now` (the parameters checked by
    /// [`CharnyParams::check`]): C = U LinkRate, an empty table, A = C.
    pub fn new(params: CharnyParams, cell_rate: f64, n_vcs: usize, now: SimTime) -> Charny {
        let capacity = params.target_utilization * cell_rate;
        Charny {
            params,
            link_rate: cell_rate,
            meter: Meter::new(params.bounds(), cell_rate, now),
            capacity,
            hp_rate: 0.0,
            advertised: capacity,
            vcs: vec![ABSENT; n_vcs],
            present: 0,
            next_expiry: SimTime::MAX,
            scratch: Vec::with_capacity(n_vcs),
            lowered: 0,
        }
    }

    /// The advertised rate A, cells/s.
    pub fn advertised_rate(&self) -> f64 {
        self.advertised
    }

    /// The capacity C shared, cells/s.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// The VCs in the table.
    pub fn active_vcs(&self) -> usize {
        self.present
    }

    /// An FRM of VC `vc` with CCR `ccr` at `now`.
    fn frm(&mut self, now: SimTime, vc: usize, ccr: f64) {
        self.expire(now);
        let rate = sanitize_rate(ccr);
        let a = self.advertised;
        let e = &mut self.vcs[vc];
        if !e.present {
            self.present += 1;
        }
        *e = Entry { present: true, rate, marked: rate < a, last_frm: now };
        self.next_expiry = self.next_expiry.min(now.saturating_add(self.params.vc_timeout));
        self.advertised = self.advertise();
    }

    /// VCs whose last FRM is `vc_timeout` old at `now` leave the table.
    fn expire(&mut self, now: SimTime) {
        if now < self.next_expiry {
            return;
        }
        let timeout = self.params.vc_timeout;
        let mut next = SimTime::MAX;
        let mut left = false;
        for e in self.vcs.iter_mut().filter(|e| e.present) {
            let due = e.last_frm.saturating_add(timeout);
            if due <= now {
                *e = ABSENT;
                self.present -= 1;
                left = true;
            } else {
                next = next.min(due);
            }
        }
        self.next_expiry = next;
        if left {
            self.advertised = self.advertise();
        }
    }

    /// A from the table.
    fn advertise(&mut self) -> f64 {
        match self.params.iteration {
            Iteration::Exact => self.exact(),
            Iteration::TwoPass => {
                let a1 = self.marked_share();
                for e in self.vcs.iter_mut().filter(|e| e.present && e.marked && e.rate > a1) {
                    e.marked = false;
                }
                self.marked_share()
            }
        }
    }

    /// The water level over the recorded rates.
    fn exact(&mut self) -> f64 {
        let c = self.capacity;
        self.scratch.clear();
        self.scratch.extend(self.vcs.iter().filter(|e| e.present).map(|e| e.rate));
        self.scratch.sort_by(f64::total_cmp);
        let n = self.scratch.len();
        let (mut level, mut sum) = (c, 0.0);
        for (k, &r) in self.scratch.iter().enumerate() {
            level = (c - sum) / (n - k) as f64;
            if r >= level {
                return level;
            }
            sum += r;
        }
        level
    }

    /// `(C - sum_marked r) / (N - #marked)`, or with every VC marked
    /// `C - sum r + max r` (recalled of Charny, unverified); never below 0.
    fn marked_share(&self) -> f64 {
        let (mut n, mut marked, mut sum, mut max) = (0usize, 0usize, 0.0, 0.0f64);
        for e in self.vcs.iter().filter(|e| e.present) {
            n += 1;
            if e.marked {
                marked += 1;
                sum += e.rate;
                max = max.max(e.rate);
            }
        }
        let a = if n == 0 {
            self.capacity
        } else if marked == n {
            self.capacity - sum + max
        } else {
            (self.capacity - sum) / (n - marked) as f64
        };
        a.max(0.0)
    }
}

impl SwitchControl for Charny {
    #[inline]
    fn abr_cell(&mut self, at: SimTime, vc: usize, frm_ccr: Option<f64>, _queue: impl FnOnce() -> u32) -> bool {
        if let Some(ccr) = frm_ccr {
            self.frm(at, vc, ccr);
        }
        false
    }

    #[inline]
    fn high_priority_cells(&mut self, _at: SimTime, n: u32) {
        self.meter.hp_cells(n);
    }

    fn backward_rm(&mut self, at: SimTime, _vc: usize, rm: &mut RmCell) {
        self.expire(at);
        self.lowered += u64::from(self.advertised < rm.er);
        rm.lower_er(self.advertised);
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
        let m = self.meter.end(now);
        self.hp_rate = m.hp_rate;
        self.capacity = (self.params.target_utilization * self.link_rate - m.hp_rate).max(0.0);
        self.expire(now);
        self.advertised = self.advertise();
    }

    fn readings(&self) -> Vec<Reading> {
        let values = [
            Some(self.meter.intervals() as f64),
            bps(self.capacity),
            bps(self.hp_rate),
            bps(self.advertised),
            Some(self.present as f64),
            Some(self.lowered as f64),
        ];
        super::named(READINGS, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port whose C is `c` cells/s (U = 1, no CBR or VBR; hp intervals
    /// of 1 s).
    fn port(c: f64, iteration: Iteration, vcs: usize) -> Charny {
        let p = CharnyParams { iteration, interval: Duration::from_secs(1), ..CHARNY_DEFAULTS };
        Charny::new(p, c, vcs, SimTime::ZERO)
    }

    fn frm(ch: &mut Charny, vc: usize, ccr: f64) {
        assert!(!ch.abr_cell(SimTime::ZERO, vc, Some(ccr), || 0));
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn test_the_exact_vectors_of_the_model_page() {
        let mut ch = port(150.0, Iteration::Exact, 4);
        assert_eq!(ch.advertised_rate(), 150.0, "an empty table advertises C");
        frm(&mut ch, 0, 10.0);
        assert_eq!(ch.advertised_rate(), 150.0, "alone, the largest (and only) VC may take what is left");
        frm(&mut ch, 1, 155.0);
        assert_eq!(ch.advertised_rate(), 140.0, "{}", ch.advertised_rate());
        frm(&mut ch, 2, 50.0);
        assert_eq!(ch.advertised_rate(), 90.0);
        // Every VC marked: {10, 30, 40} with C = 150 gives 150 - 80 + 40.
        let mut ch = port(150.0, Iteration::Exact, 3);
        for (vc, r) in [(0, 10.0), (1, 30.0), (2, 40.0)] {
            frm(&mut ch, vc, r);
        }
        assert_eq!(ch.advertised_rate(), 110.0);
        // The DISAGREEMENT case: C = 100, r = {20, 45, 80, 90}: 80 / 3.
        let mut ch = port(100.0, Iteration::Exact, 4);
        for (vc, r) in [(0, 20.0), (1, 45.0), (2, 80.0), (3, 90.0)] {
            frm(&mut ch, vc, r);
        }
        assert!(close(ch.advertised_rate(), 80.0 / 3.0), "{}", ch.advertised_rate());
        // A sums to C: the marked keep their rates, the others get A.
        let total: f64 = [20.0f64, 45.0, 80.0, 90.0].iter().map(|r| r.min(ch.advertised_rate())).sum();
        assert!(close(total, 100.0));
    }

    #[test]
    fn test_two_passes_from_the_marks_of_a_higher_rate() {
        // Marks from A = 50: 20 and 45 marked, 80 and 90 not; then two passes:
        // A1 = (100 - 65) / 2 = 17.5 unmarks both, A = 100 / 4 = 25.
        let mut ch = port(100.0, Iteration::TwoPass, 4);
        for (vc, rate, marked) in [(0, 20.0, true), (1, 45.0, true), (2, 80.0, false), (3, 90.0, false)] {
            ch.vcs[vc] = Entry { present: true, rate, marked, last_frm: SimTime::ZERO };
        }
        ch.present = 4;
        assert_eq!(ch.advertise(), 25.0);
        assert!(ch.vcs.iter().all(|e| !e.marked));
        // Later FRMs bring it to the exact level: 20 and 45 are marked
        // against 25 and 26.67 in turn.
        for (vc, r) in [(0, 20.0), (1, 45.0), (2, 80.0), (3, 90.0), (0, 20.0), (1, 45.0)] {
            frm(&mut ch, vc, r);
        }
        assert!((ch.advertised_rate() - 80.0 / 3.0).abs() < 1e-9, "{}", ch.advertised_rate());
        // Every VC marked.
        let mut ch = port(150.0, Iteration::TwoPass, 3);
        for (vc, rate) in [(0, 10.0), (1, 30.0), (2, 40.0)] {
            ch.vcs[vc] = Entry { present: true, rate, marked: true, last_frm: SimTime::ZERO };
        }
        ch.present = 3;
        assert_eq!(ch.advertise(), 110.0);
    }

    #[test]
    fn test_brms_get_the_advertised_rate_and_idle_vcs_leave() {
        let mut ch = port(100.0, Iteration::Exact, 2);
        frm(&mut ch, 0, 100.0);
        frm(&mut ch, 1, 100.0);
        assert_eq!(ch.advertised_rate(), 50.0);
        let mut rm = RmCell {
            dir: crate::abr::Direction::Backward,
            bn: false,
            ci: false,
            ni: false,
            er: 100.0,
            ccr: 100.0,
            mcr: 0.0,
        };
        ch.backward_rm(SimTime::ZERO, 0, &mut rm);
        assert_eq!(rm.er, 50.0);
        // VC 1 sends no FRM for 400 ms: it leaves, VC 0 may take all.
        let t = SimTime::ZERO + Duration::from_ms(300);
        assert!(!ch.abr_cell(t, 0, Some(50.0), || 0));
        let mut rm2 = RmCell { er: 1000.0, ..rm };
        ch.backward_rm(SimTime::ZERO + Duration::from_ms(399), 0, &mut rm2);
        assert_eq!(rm2.er, 50.0, "{}", rm2.er);
        ch.backward_rm(SimTime::ZERO + Duration::from_ms(400), 0, &mut rm2);
        assert_eq!(ch.active_vcs(), 1);
        let mut rm3 = RmCell { er: 1000.0, ..rm };
        ch.backward_rm(SimTime::ZERO + Duration::from_ms(400), 0, &mut rm3);
        assert_eq!(rm3.er, 100.0);
        // And VC 0 leaves too at 700 ms.
        ch.backward_rm(SimTime::ZERO + Duration::from_ms(700), 0, &mut rm3);
        assert_eq!((ch.active_vcs(), ch.advertised_rate()), (0, 100.0));
        assert_eq!(ch.readings()[5].value, Some(3.0));
    }

    #[test]
    fn test_cbr_and_vbr_take_their_rate_off_the_capacity() {
        let mut ch = port(100.0, Iteration::Exact, 1);
        ch.high_priority_cells(SimTime::ZERO, 40);
        ch.deadline_reached(SimTime::ZERO + Duration::from_secs(1), 0);
        assert_eq!(ch.capacity(), 60.0);
        assert_eq!(ch.advertised_rate(), 60.0);
        ch.high_priority_cells(SimTime::ZERO, 400);
        ch.deadline_reached(SimTime::ZERO + Duration::from_secs(2), 0);
        assert_eq!((ch.capacity(), ch.advertised_rate()), (0.0, 0.0));
        let r = ch.readings();
        assert_eq!(r[0].value, Some(2.0));
        assert_eq!(r[2].value, Some(400.0 * 424.0));
    }

    #[test]
    fn test_parameters_that_cannot_work_name_themselves() {
        let bad = |f: fn(&mut CharnyParams)| {
            let mut p = CHARNY_DEFAULTS;
            f(&mut p);
            p.check(353_207.55).unwrap_err().param
        };
        assert!(CHARNY_DEFAULTS.check(353_207.55).is_ok());
        assert_eq!(bad(|p| p.target_utilization = 1.5), "target_utilization");
        assert_eq!(bad(|p| p.vc_timeout = Duration::ZERO), "vc_timeout");
        assert_eq!(bad(|p| p.interval = Duration::from_ps(1)), "interval.time");
    }
}
