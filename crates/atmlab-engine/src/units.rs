//! Typed rates and exact periodic schedules.
//!
//! A rate is an integer number of bits per second ([`BitRate`]). The time to
//! send `b` bits is `ceil(b * 1e12 / rate)` picoseconds (rounded up, as ns-3's
//! `CalculateBitsTxTime`), computed in 128-bit arithmetic.
//!
//! A cell slot at 155.52 Mbit/s lasts 2,726,337.45 ps, which is not a whole
//! number. Adding a rounded slot time again and again would drift by up to
//! 0.55 ps per cell (200 ns per second of saturated link). [`SlotClock`]
//! therefore defines slot `k` to start at `ceil(k * bits * 1e12 / rate)`
//! picoseconds after the epoch and steps from one boundary to the next with a
//! carried remainder (no division on the hot path, no drift ever).

use crate::time::{Duration, PS_PER_S, SimTime};
use std::fmt;

/// Bits in one ATM cell (53 bytes).
pub const CELL_BITS: u64 = 53 * 8;

/// A transmission rate in bits per second (never zero).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(u64);

impl BitRate {
    /// A rate of `bps` bit/s; `None` for zero.
    pub const fn from_bps(bps: u64) -> Option<BitRate> {
        if bps == 0 { None } else { Some(BitRate(bps)) }
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Cells per second at this rate (53-byte cells), for reporting.
    pub fn cells_per_s(self) -> f64 {
        self.0 as f64 / CELL_BITS as f64
    }
    /// Time to send `bits` bits, rounded up to a whole picosecond
    /// ([`Duration::MAX`] if that does not fit in 64 bits).
    pub fn tx_time(self, bits: u64) -> Duration {
        let num = bits as u128 * PS_PER_S as u128;
        let ps = num.div_ceil(self.0 as u128);
        Duration::from_ps(u64::try_from(ps).unwrap_or(u64::MAX))
    }
    /// Time to send one 53-byte cell, rounded up.
    pub fn cell_time(self) -> Duration {
        self.tx_time(CELL_BITS)
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{} Gbit/s", b / 1_000_000_000)
        } else if b >= 1_000_000 {
            write!(f, "{} Mbit/s", b as f64 / 1e6)
        } else if b >= 1_000 {
            write!(f, "{} kbit/s", b as f64 / 1e3)
        } else {
            write!(f, "{b} bit/s")
        }
    }
}
impl fmt::Debug for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Exact slot boundaries of a slotted transmitter.
///
/// Slot `k` starts at `epoch + ceil(k * P / R)` ps, where `P = bits_per_slot *
/// 1e12` and `R` is the rate in bit/s. The clock holds the current slot index
/// `k` and its boundary; [`advance`](Self::advance) moves to `k + 1` with a
/// carried remainder and [`seek`](Self::seek) jumps forward to the first
/// boundary at or after a given instant (the only place that divides).
///
/// A boundary beyond 2^64 ps (a long queue on a very slow link) is
/// [`SimTime::MAX`], "never": later than the end of any run.
///
/// A clock is a [`SlotGrid`] (the constants) and a [`SlotPos`] (where it
/// is); holders of several positions on one grid (a port's head and tail)
/// keep the grid once and the positions apart.
#[derive(Clone, Debug)]
pub struct SlotClock {
    grid: SlotGrid,
    pos: SlotPos,
}

impl SlotClock {
    /// A clock for slots of `bits_per_slot` bits at `rate`, epoch `t = 0`,
    /// positioned at slot 0.
    pub fn new(rate: BitRate, bits_per_slot: u64) -> SlotClock {
        SlotClock::with_epoch(rate, bits_per_slot, SimTime::ZERO)
    }

    /// As [`new`](Self::new) with slot 0 starting at `epoch`.
    pub fn with_epoch(rate: BitRate, bits_per_slot: u64, epoch: SimTime) -> SlotClock {
        SlotClock { grid: SlotGrid::new(rate, bits_per_slot, epoch), pos: SlotPos::default() }
    }

    /// Index of the current slot.
    pub fn slot(&self) -> u64 {
        self.pos.k
    }

    /// Start of the current slot.
    #[inline]
    pub fn boundary(&self) -> SimTime {
        self.grid.boundary(&self.pos)
    }

    /// Moves to the next slot.
    #[inline]
    pub fn advance(&mut self) {
        self.grid.advance(&mut self.pos);
    }

    /// How many slots (from slot 0) start strictly before `t` (see
    /// [`SlotGrid::slots_before`]).
    pub fn slots_before(&self, t: SimTime) -> u64 {
        self.grid.slots_before(t)
    }

    /// Moves forward to the first slot whose boundary is at or after `t`
    /// (never backwards: a clock already at or past `t` stays where it is).
    pub fn seek(&mut self, t: SimTime) {
        self.grid.seek(&mut self.pos, t);
    }
}

/// How far [`SlotGrid::seek_near`] walks instead of seeking, in slots.
const NEAR_SLOTS: u64 = 8;

/// The constants of a grid of slots: slot `k` starts at `epoch + ceil(k * P
/// / R)` ps (see [`SlotClock`]). 64 bytes, one cache line. Two grids are
/// equal when their slots are (the estimates follow from the constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotGrid {
    period_num: u128, // P, over gcd(P, R)
    epoch: u64,
    rate: u64, // R, over gcd(P, R)
    q: u64,    // P / R
    r: u64,    // P % R
    // R / P and P / R, for the estimates that spare `seek` its 128-bit
    // divisions (when P or the products outgrow 64 bits)
    slots_per_ps: f64,
    ps_per_slot: f64,
}

/// A slot of a [`SlotGrid`]: its index and its boundary's integer part and
/// remainder, so that moving to the next slot adds and never divides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotPos {
    k: u64,
    base: u64, // floor(k * P / R)
    rem: u64,  // (k * P) % R
}

impl SlotPos {
    /// The slot's index.
    #[inline]
    pub fn slot(&self) -> u64 {
        self.k
    }
}

/// How one grid's slots follow another's ([`SlotGrid::follow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Follow {
    by: SlotPos,
    lead: Duration,
    periods: u64,
}

impl Follow {
    /// How many of the following grid's slots one of the followed grid's
    /// lasts.
    pub fn periods(&self) -> u64 {
        self.periods
    }
}

impl SlotGrid {
    /// Slots of `bits_per_slot` bits at `rate`, slot 0 starting at `epoch`.
    pub fn new(rate: BitRate, bits_per_slot: u64, epoch: SimTime) -> SlotGrid {
        assert!(bits_per_slot > 0, "a slot carries at least one bit");
        // The period P / R in lowest terms (424e12 / 149.76e6 is 331250000
        // / 117): the same slots, but `seek` then fits 64-bit arithmetic.
        let (mut period_num, mut r) = (bits_per_slot as u128 * PS_PER_S as u128, u128::from(rate.bps()));
        let g = gcd(period_num, r);
        (period_num, r) = (period_num / g, r / g);
        let r = u64::try_from(r).expect("a reduced rate is at most the rate");
        SlotGrid {
            epoch: epoch.as_ps(),
            period_num,
            rate: r,
            q: u64::try_from(period_num / r as u128).expect("slot period overflow"),
            r: (period_num % r as u128) as u64,
            slots_per_ps: r as f64 / period_num as f64,
            ps_per_slot: period_num as f64 / r as f64,
        }
    }

    /// Start of slot `pos`.
    #[inline]
    pub fn boundary(&self, pos: &SlotPos) -> SimTime {
        SimTime::from_ps(self.epoch.saturating_add(pos.base).saturating_add(u64::from(pos.rem > 0)))
    }

    /// Moves `pos` to the next slot.
    ///
    /// Without a branch on the carry: it comes in a pattern as long as the
    /// period's denominator (117 slots at 149.76 Mbit/s), which the branch
    /// predictor misses (cachegrind's model: 3 M mispredictions in a 3 s
    /// run of the 97-0177 WAN). Inside some loops (`pipeline_queued`) LLVM
    /// still makes it a branch.
    #[inline]
    pub fn advance(&self, pos: &mut SlotPos) {
        pos.k += 1;
        let rem = pos.rem + self.r;
        // All ones on a carry: a mask, which LLVM keeps branch-free where a
        // select became a branch again (`select_unpredictable` needs Rust
        // 1.88, above the MSRV).
        let carry = u64::from(rem < self.rate).wrapping_sub(1);
        pos.rem = rem - (self.rate & carry);
        pos.base = pos.base.saturating_add(self.q).saturating_add(carry & 1);
    }

    /// The start of slot `pos` in picoseconds, and `pos` moved to the next
    /// slot: what `boundary` then `advance` give, without their
    /// saturation, for slots known to start in time
    /// ([`starts_in_time`](Self::starts_in_time)).
    #[inline(always)]
    pub fn take_slot(&self, pos: &mut SlotPos) -> u64 {
        let start = self.epoch + pos.base + u64::from(pos.rem > 0);
        pos.k += 1;
        let rem = pos.rem + self.r;
        let carry = u64::from(rem < self.rate).wrapping_sub(1);
        pos.rem = rem - (self.rate & carry);
        pos.base += self.q + (carry & 1);
        start
    }

    /// Whether the `n` slots from `pos` on start, `extra` later, before
    /// 2^64 ps: then [`take_slot`](Self::take_slot) may take them (else
    /// `boundary` and `advance`, which saturate to "never", must).
    #[inline]
    pub fn starts_in_time(&self, pos: &SlotPos, n: u32, extra: Duration) -> bool {
        // Slot `k + n` starts at most `n * (q + 1)` ps after slot `k`.
        let span = self.q.checked_add(1).and_then(|p| p.checked_mul(u64::from(n)));
        [span, Some(pos.base), Some(1), Some(extra.as_ps())]
            .into_iter()
            .try_fold(self.epoch, |sum, x| sum.checked_add(x?))
            .is_some()
    }

    /// The slot period rounded down to a whole picosecond: slot `k + n`
    /// starts at least `n` times this after slot `k`.
    #[inline]
    pub fn whole_period(&self) -> Duration {
        Duration::from_ps(self.q)
    }

    /// How many slots (from slot 0) start strictly before `t`: the slots a
    /// run that ends at `t` offers, against which a port's utilization is
    /// counted.
    #[inline]
    pub fn slots_before(&self, t: SimTime) -> u64 {
        let Some(t_rel) = t.as_ps().checked_sub(self.epoch).filter(|t| *t > 0) else {
            return 0;
        };
        // Slots k with ceil(k P / R) < t', i.e. k P / R <= t' - 1, i.e.
        // k <= (t' - 1) R / P: that is floor((t' - 1) R / P) + 1 slots.
        if let (Some(n), Ok(p)) = ((t_rel - 1).checked_mul(self.rate), u64::try_from(self.period_num)) {
            return n / p + 1;
        }
        let n = (t_rel as u128 - 1) * self.rate as u128;
        let est = (t_rel - 1) as f64 * self.slots_per_ps;
        let k = floor_div_near(n, self.period_num, est) + 1;
        u64::try_from(k).unwrap_or(u64::MAX)
    }

    /// Moves `pos` forward to the first slot whose boundary is at or after
    /// `t` (never backwards: a position at or past `t` stays where it is).
    #[inline(always)]
    pub fn seek(&self, pos: &mut SlotPos, t: SimTime) {
        if self.boundary(pos) >= t {
            return;
        }
        // Smallest k with ceil(k P / R) >= t - epoch, i.e. k P / R > t' - 1.
        *pos = self.at_slot(self.slots_before(t));
        debug_assert!(self.boundary(pos) >= t);
    }

    /// [`seek`](Self::seek) for a `t` likely a few slots past `pos`: when
    /// `t` is at most eight whole periods past `pos`'s start, walks there
    /// slot by slot, at most eight steps, instead of dividing
    /// (`seek`'s two 64-bit divisions cost more than a few steps); farther,
    /// it seeks. The same slot as `seek` either way.
    ///
    /// Not for every seek: in `seek` itself, for every idle port, the walk
    /// made EXPERT 3 % slower (`docs/benchmark.md`, session of 2026-12-01,
    /// "Dropped: a short walk"). It is for cells known to come close
    /// behind each other: a frame's piece leaving a port that holds runs
    /// (`Port::offer_piece_into_host`).
    #[inline(always)]
    pub fn seek_near(&self, pos: &mut SlotPos, t: SimTime) {
        let b = self.boundary(pos);
        if b >= t {
            return;
        }
        // Each step moves at least `q` ps, so a gap of at most
        // `NEAR_SLOTS * q` is crossed in at most `NEAR_SLOTS` steps.
        if t.as_ps() - b.as_ps() <= NEAR_SLOTS.saturating_mul(self.q) {
            while self.boundary(pos) < t {
                self.advance(pos);
            }
        } else {
            self.seek(pos, t);
        }
    }

    /// Moves `pos` forward by `by.slot()` slots, `by` being
    /// [`position`](Self::position)`(n)`: what `n` calls of
    /// [`advance`](Self::advance) give, in a few additions.
    #[inline(always)]
    pub fn jump(&self, pos: &mut SlotPos, by: &SlotPos) {
        // floor((k + n) P / R) = floor(k P / R) + floor(n P / R), plus one
        // where the two remainders add up to R or more.
        pos.k += by.k;
        let rem = pos.rem + by.rem;
        let carry = u64::from(rem >= self.rate);
        pos.rem = rem - self.rate * carry;
        pos.base = pos.base.saturating_add(by.base).saturating_add(carry);
    }

    /// How many of this grid's slots one of `other`'s lasts, if a whole
    /// number (1 where the two are as long: a shaped port's slots last
    /// four of its link's at a quarter of the rate).
    pub fn periods_in(&self, other: &SlotGrid) -> Option<u64> {
        let num = other.period_num.checked_mul(u128::from(self.rate))?;
        let den = self.period_num.checked_mul(u128::from(other.rate))?;
        (num % den == 0).then(|| u64::try_from(num / den).ok()).flatten()
    }

    /// Cells that reach this grid's port `offset` after the start of one of
    /// `other`'s slots, whose slots last a whole number `k` of this grid's
    /// ([`periods_in`](Self::periods_in)): how to find, for each, the first
    /// of this grid's slots to start at or after its arrival without
    /// dividing ([`first_following`](Self::first_following)). `None` if
    /// the periods are not whole, if that slot could come before slot
    /// `k u` where `u` is the cell's slot of `other` (this epoch later than
    /// `other`'s plus `offset`), or if the sums outgrow 64 bits.
    ///
    /// Why it works: with `P / R` this grid's period, `other`'s slot `u`
    /// starts at its epoch plus `ceil(k u P / R)`, as this grid's slot
    /// `k u` does from this epoch; the arrival leads that slot by `E`,
    /// `offset` plus the epochs' difference. This grid's slot `k u + n`
    /// starts `ceil((k u + n) P / R) - ceil(k u P / R)` after slot `k u`,
    /// which is `floor(n P / R)` or `ceil(n P / R)`. The shift `by` is the
    /// least `n` with `ceil(n P / R) >= E` (no smaller one can reach the
    /// arrival); one slot more, `floor` already does (a slot is at least a
    /// picosecond long): the slot is `k u` shifted by `by`, or the one
    /// after it.
    pub fn follow(&self, other: &SlotGrid, offset: Duration) -> Option<Follow> {
        let periods = self.periods_in(other)?;
        let lead = other.epoch.checked_add(offset.as_ps())?.checked_sub(self.epoch)?;
        let arrival = self.epoch.checked_add(lead)?;
        let by = self.at_slot(self.slots_before(SimTime::from_ps(arrival)));
        Some(Follow { by, lead: Duration::from_ps(lead), periods })
    }

    /// The position, on this grid, of slot `u` of the grid `follow` was
    /// made for (slot `k u` of this one): to find the slots of the cells
    /// that leave it from.
    pub fn followed(&self, follow: &Follow, u: u64) -> Option<SlotPos> {
        Some(self.at_slot(u.checked_mul(follow.periods)?))
    }

    /// For a cell that leaves the slot of the followed grid at `from`
    /// ([`followed`](Self::followed)): its arrival, and the first slot of
    /// this grid to start at or after it, with its start, by a jump and at
    /// most one step where [`seek`](Self::seek) would divide.
    #[inline(always)]
    pub fn first_following(&self, follow: &Follow, from: &SlotPos) -> (SimTime, SlotPos, SimTime) {
        let at = self.boundary(from).saturating_add(follow.lead);
        let mut pos = *from;
        self.jump(&mut pos, &follow.by);
        let mut start = self.boundary(&pos);
        if start < at {
            self.advance(&mut pos);
            start = self.boundary(&pos);
        }
        (at, pos, start)
    }

    /// [`first_following`](Self::first_following) for `n` cells, the
    /// first leaving the followed grid's slot at `from`, each `step` (a
    /// [`position`](Self::position) of this grid) after the one before:
    /// calls `each(arrival, slot's start, start + extra)` for each in
    /// turn, and returns the last cell's slot. Where every sum stays below
    /// 2^64 ps (checked once, from a bound on the last cell's), without
    /// the saturating additions `boundary`, `jump` and `advance` make for
    /// each; else by them, the same values.
    #[inline(always)]
    pub fn follow_each(
        &self,
        follow: &Follow,
        (mut from, step): (SlotPos, &SlotPos),
        n: u64,
        extra: Duration,
        mut each: impl FnMut(SimTime, SimTime, SimTime),
    ) -> Option<SlotPos> {
        let mut last = None;
        // Every sum below is at most the epoch, `from`'s base, the lead and
        // `extra`, plus `n` jumps of at most `step`'s base and a carry,
        // `by`'s base and a carry, and a slot's step (`q + 1`) and the
        // remainder's picosecond: one check bounds them all.
        let jumps = step.base.checked_add(1).and_then(|s| s.checked_mul(n));
        let slot = self.q.checked_mul(2).and_then(|q| q.checked_add(4));
        let fits = [
            jumps,
            slot,
            Some(follow.by.base),
            Some(self.epoch),
            Some(from.base),
            Some(follow.lead.as_ps()),
            Some(extra.as_ps()),
        ]
        .into_iter()
        .try_fold(0u64, |sum, x| sum.checked_add(x?))
        .is_some();
        if !fits {
            for _ in 0..n {
                let (at, pos, start) = self.first_following(follow, &from);
                each(at, start, start.saturating_add(extra));
                self.jump(&mut from, step);
                last = Some(pos);
            }
            return last;
        }
        let (lead, extra) = (follow.lead.as_ps(), extra.as_ps());
        for _ in 0..n {
            let at = self.epoch + from.base + u64::from(from.rem > 0) + lead;
            // `from` jumped by `by`, and the slot after it if that one
            // starts before the arrival (as `first_following`).
            let rem = from.rem + follow.by.rem;
            let carry = u64::from(rem >= self.rate);
            let mut pos = SlotPos {
                k: from.k + follow.by.k,
                base: from.base + follow.by.base + carry,
                rem: rem - self.rate * carry,
            };
            let mut start = self.epoch + pos.base + u64::from(pos.rem > 0);
            if start < at {
                self.take_slot(&mut pos);
                start = self.epoch + pos.base + u64::from(pos.rem > 0);
            }
            each(SimTime::from_ps(at), SimTime::from_ps(start), SimTime::from_ps(start + extra));
            let rem = from.rem + step.rem;
            let carry = u64::from(rem >= self.rate);
            from = SlotPos { k: from.k + step.k, base: from.base + step.base + carry, rem: rem - self.rate * carry };
            last = Some(pos);
        }
        last
    }

    /// Whether `other`'s slots are as long as this grid's (their epochs
    /// may differ).
    #[inline]
    pub fn same_period(&self, other: &SlotGrid) -> bool {
        (self.period_num, self.rate) == (other.period_num, other.rate)
    }

    /// Slot `k` (from slot 0, at the epoch), to walk on from with
    /// [`advance`](Self::advance).
    #[inline]
    pub fn position(&self, k: u64) -> SlotPos {
        self.at_slot(k)
    }

    /// The start of slot `k` (from slot 0, at the epoch).
    #[inline]
    pub fn start(&self, k: u64) -> SimTime {
        self.boundary(&self.at_slot(k))
    }

    /// The longest time between the starts of two successive slots: the
    /// period rounded up to a whole picosecond (the shortest is
    /// [`whole_period`](Self::whole_period)).
    #[inline]
    pub fn longest_gap(&self) -> Duration {
        Duration::from_ps(self.q + u64::from(self.r > 0))
    }

    /// Slot `k`.
    #[inline]
    fn at_slot(&self, k: u64) -> SlotPos {
        if let Some(kp) = u64::try_from(self.period_num).ok().and_then(|p| k.checked_mul(p)) {
            return SlotPos { k, base: kp / self.rate, rem: kp % self.rate };
        }
        let kp = k as u128 * self.period_num;
        let est = k as f64 * self.ps_per_slot;
        let base = floor_div_near(kp, self.rate as u128, est);
        SlotPos { k, base: u64::try_from(base).unwrap_or(u64::MAX), rem: (kp - base * self.rate as u128) as u64 }
    }

    /// The sum of the starts, in picoseconds, of the `n` slots `first`,
    /// `first + step`, ..., `first + (n - 1) step`: one VC's departures in
    /// a round robin's cycle, or the arrivals of a run of cells one slot of
    /// their link apart. Exact, in O(log) steps whatever `n` (by
    /// `floor_sum`, since slot `k` starts at `epoch + ceil(k P / R)`), so a
    /// run's queue integral (the sum of its cells' waits) needs no loop
    /// over its cells. `None` if one of the slots starts at or after 2^64
    /// ps (where [`boundary`](Self::boundary) saturates to "never") or the
    /// sum outgrows 128 bits.
    pub fn sum_of_starts(&self, first: u64, step: u64, n: u64) -> Option<u128> {
        if n == 0 {
            return Some(0);
        }
        if n.saturating_mul(step.max(1)) <= SHORT_SUM_SLOTS {
            // A few slots (most of a busy port's horizons, and a frame's
            // piece in one): their starts one by one, a slot at a time,
            // without the recursion's 128-bit divisions (about a thousand
            // instructions a call in EXPERT, `docs/benchmark.md`).
            let mut pos = self.at_slot(first);
            let mut sum = 0u128;
            for i in 0..n {
                let start = self.boundary(&pos);
                if start == SimTime::MAX {
                    return None;
                }
                sum += u128::from(start.as_ps());
                if i + 1 < n {
                    for _ in 0..step {
                        self.advance(&mut pos);
                    }
                }
            }
            return Some(sum);
        }
        let (p, r) = (self.period_num, u128::from(self.rate));
        let last = u128::from(first) + u128::from(step) * u128::from(n - 1);
        let last_start = last.checked_mul(p)?.div_ceil(r).checked_add(u128::from(self.epoch))?;
        if last_start >= u128::from(u64::MAX) {
            return None;
        }
        // ceil(k P / R) = floor((k P + R - 1) / R), k = first + i step.
        let a = u128::from(step).checked_mul(p)?;
        let b = u128::from(first).checked_mul(p)?.checked_add(r - 1)?;
        floor_sum(u128::from(n), r, a, b)?.checked_add(u128::from(self.epoch).checked_mul(u128::from(n))?)
    }
}

/// [`SlotGrid::sum_of_starts`] walks the slots one by one up to this many
/// slot steps, below which that costs less than the recursion.
const SHORT_SUM_SLOTS: u64 = 64;

/// The sum over `i` in `0..n` of `floor((a i + b) / m)` (`m > 0`), in
/// O(log m) steps: the Euclid-like recursion that swaps the roles of the
/// lattice's axes (Graham, Knuth and Patashnik, *Concrete Mathematics*,
/// 2nd ed., 1994, sec. 3.5; the form here is the AtCoder Library's
/// `floor_sum_unsigned`, `atcoder/math.hpp`). `None` if a term outgrows
/// 128 bits. Written here rather than taken from `ac-library-rs`, whose
/// `floor_sum` is in `i64` with `n` and `m` below 2^32: a sum of slot
/// starts is about `n` times 10^15 ps and needs 128 bits.
fn floor_sum(mut n: u128, mut m: u128, mut a: u128, mut b: u128) -> Option<u128> {
    debug_assert!(m > 0);
    let mut sum = 0u128;
    loop {
        if a >= m {
            // The sum of i over 0..n, n (n - 1) / 2, halved before the
            // product so that it cannot overflow where the result fits.
            let half = if n % 2 == 0 { (n / 2).checked_mul(n.saturating_sub(1)) } else { n.checked_mul((n - 1) / 2) };
            sum = sum.checked_add(half?.checked_mul(a / m)?)?;
            a %= m;
        }
        if b >= m {
            sum = sum.checked_add(n.checked_mul(b / m)?)?;
            b %= m;
        }
        // Every term is now below n; count the lattice points the other way.
        let y_max = a.checked_mul(n)?.checked_add(b)?;
        if y_max < m {
            return Some(sum);
        }
        (n, b) = (y_max / m, y_max % m);
        (m, a) = (a, m);
    }
}

/// The greatest common divisor (Euclid).
fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `floor(n / d)` (`d > 0`), exactly, given `est`, a floating-point estimate
/// of `n / d`: the estimate is checked and corrected by one step with
/// multiplications only, and the integer division runs only when it is
/// further off (far beyond any run's times). Seeking a slot clock divides
/// twice, and a 128-bit division is a library call of about a hundred
/// cycles: with an idle port at every hop of an ABR cell it was a few
/// percent of the 97-0177 WAN run.
#[inline]
fn floor_div_near(n: u128, d: u128, est: f64) -> u128 {
    // Saturating, NaN to 0; a quotient of 2^64 or more takes the division.
    let q = u128::from(est as u64);
    match q.checked_mul(d) {
        Some(p) if p <= n => {
            let r = n - p;
            if r < d {
                return q;
            }
            if r - d < d {
                return q + 1;
            }
        }
        // q d > n: q - 1 is right if (q - 1) d <= n.
        Some(p) if p - n <= d => return q - 1,
        _ => {}
    }
    n / d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn oc3() -> BitRate {
        BitRate::from_bps(155_520_000).unwrap()
    }

    #[test]
    fn test_zero_rate_is_rejected() {
        assert!(BitRate::from_bps(0).is_none());
    }

    #[test]
    fn test_cell_time_rounds_up() {
        // 424 bit / 155.52 Mbit/s = 2,726,337.448... ps
        assert_eq!(oc3().cell_time(), Duration::from_ps(2_726_338));
        // 424 bit / 100 Mbit/s = 4.24 us exactly
        assert_eq!(BitRate::from_bps(100_000_000).unwrap().cell_time(), Duration::from_ns(4240));
    }

    #[test]
    fn test_slot_clock_has_no_drift_after_a_million_slots() {
        let mut c = SlotClock::new(oc3(), CELL_BITS);
        for _ in 0..1_000_000 {
            c.advance();
        }
        // ceil(1e6 * 424e12 / 155.52e6) = ceil(2_726_337_448_559.67...)
        assert_eq!(c.boundary().as_ps(), 2_726_337_448_560);
    }

    #[test]
    fn test_seek_finds_first_boundary_at_or_after() {
        let mut c = SlotClock::new(oc3(), CELL_BITS);
        c.seek(SimTime::from_ps(2_726_338)); // exactly boundary 1
        assert_eq!(c.slot(), 1);
        c.seek(SimTime::from_ps(2_726_339)); // just after: slot 2
        assert_eq!(c.slot(), 2);
        c.seek(SimTime::from_ps(5)); // never backwards
        assert_eq!(c.slot(), 2);
    }

    #[test]
    fn test_slots_before_counts_boundaries_strictly_before() {
        let c = SlotClock::new(oc3(), CELL_BITS);
        assert_eq!(c.slots_before(SimTime::ZERO), 0);
        assert_eq!(c.slots_before(SimTime::from_ps(1)), 1); // slot 0 at t = 0
        assert_eq!(c.slots_before(SimTime::from_ps(2_726_338)), 1); // boundary 1 is not before itself
        assert_eq!(c.slots_before(SimTime::from_ps(2_726_339)), 2);
        // 1 ms at 155.52 Mbit/s: 366.79 cell times, 367 slots start in [0, 1 ms).
        assert_eq!(c.slots_before(SimTime::ZERO + Duration::from_ms(1)), 367);
        let shifted = SlotClock::with_epoch(oc3(), CELL_BITS, SimTime::from_ps(100));
        assert_eq!(shifted.slots_before(SimTime::from_ps(100)), 0);
        assert_eq!(shifted.slots_before(SimTime::from_ps(101)), 1);
    }

    #[test]
    fn test_boundaries_beyond_2_64_ps_are_never() {
        // 1 bit/s: a cell slot lasts 424 s; slot 2^40 would be at 4.7e14 s.
        let mut c = SlotClock::new(BitRate::from_bps(1).unwrap(), CELL_BITS);
        c.seek(SimTime::from_ps(u64::MAX - 1));
        c.advance();
        assert_eq!(c.boundary(), SimTime::MAX);
        c.advance();
        assert_eq!(c.boundary(), SimTime::MAX);
    }

    #[test]
    fn test_epoch_shifts_every_boundary() {
        let mut c = SlotClock::with_epoch(oc3(), CELL_BITS, SimTime::from_ps(100));
        assert_eq!(c.boundary().as_ps(), 100);
        c.advance();
        assert_eq!(c.boundary().as_ps(), 100 + 2_726_338);
    }

    #[test]
    fn test_floor_div_near_corrects_any_estimate() {
        let (n, d) = (1_000_000_007u128 * 424_000_000_000_000, 155_520_000u128);
        let exact = n / d;
        for est in [exact as f64, exact as f64 + 1.0, exact as f64 - 1.0, 0.0, 1e30, f64::NAN, -5.0] {
            assert_eq!(floor_div_near(n, d, est), exact, "estimate {est}");
        }
        assert_eq!(floor_div_near(u128::MAX, 3, 0.0), u128::MAX / 3);
        assert_eq!(floor_div_near(5, 7, 0.7), 0);
        assert_eq!(floor_div_near(14, 7, 1.99999), 2);
    }

    /// The sum of `floor((a i + b) / m)` term by term.
    fn floor_sum_by_terms(n: u128, m: u128, a: u128, b: u128) -> u128 {
        (0..n).map(|i| (a * i + b) / m).sum()
    }

    #[test]
    fn test_floor_sum_small_cases_and_overflow() {
        assert_eq!(floor_sum(0, 7, 3, 5), Some(0));
        assert_eq!(floor_sum(1, 7, 3, 5), Some(0));
        // 0 + 1 + 1 + 2 + 2 (i = 0..5: 5, 8, 11, 14, 17 over 7)
        assert_eq!(floor_sum(5, 7, 3, 5), Some(1 + 1 + 2 + 2));
        assert_eq!(floor_sum(4, 1, 0, 9), Some(36));
        assert_eq!(floor_sum(u128::MAX, 1, 2, 0), None);
        assert_eq!(floor_sum(1 << 40, 3, 1 << 60, u128::MAX / 2), None);
    }

    #[test]
    fn test_sum_of_starts_of_the_oc3_grid() {
        // Slots 0, 1, 2 of OC-3 start at 0, 2,726,338 and 5,452,675 ps.
        let grid = SlotGrid::new(oc3(), CELL_BITS, SimTime::ZERO);
        assert_eq!(grid.sum_of_starts(0, 1, 3), Some(2_726_338 + 5_452_675));
        assert_eq!(grid.sum_of_starts(2, 5, 0), Some(0));
        let shifted = SlotGrid::new(oc3(), CELL_BITS, SimTime::from_ps(100));
        assert_eq!(shifted.sum_of_starts(1, 1, 2), Some(100 + 2_726_338 + 100 + 5_452_675));
        // 1 bit/s: slot 2^40 starts at about 4.7e26 ps, beyond 2^64 ps.
        let slow = SlotGrid::new(BitRate::from_bps(1).unwrap(), CELL_BITS, SimTime::ZERO);
        assert_eq!(slow.sum_of_starts(0, 1 << 20, 1 << 20), None);
        assert!(slow.sum_of_starts(0, 1, 1_000).is_some());
        // One slot: its start (the short way), "never" beyond 2^64 ps.
        assert_eq!(grid.sum_of_starts(2, 9, 1), Some(5_452_675));
        assert_eq!(shifted.sum_of_starts(1, 0, 1), Some(100 + 2_726_338));
        assert_eq!(slow.sum_of_starts(1 << 40, 1, 1), None);
        assert_eq!(slow.sum_of_starts(1_000, 1, 1), Some(1_000 * 424 * 1_000_000_000_000));
    }

    proptest! {
        #[test]
        fn prop_floor_sum_is_the_sum_of_its_terms(n in 0u128..500, m in 1u128..(1 << 50), a in 0u128..(1 << 60), b in 0u128..(1 << 70)) {
            prop_assert_eq!(floor_sum(n, m, a, b), Some(floor_sum_by_terms(n, m, a, b)));
        }

        #[test]
        fn prop_sum_of_starts_is_the_sum_of_the_boundaries(
            // Whole and fractional periods; the first slots, where a
            // start is a whole number of picoseconds, and later ones.
            rate in proptest::prop_oneof![proptest::strategy::Just(100_000_000u64), proptest::strategy::Just(155_520_000), 1_000u64..100_000_000_000],
            bits in proptest::prop_oneof![proptest::strategy::Just(CELL_BITS), 1u64..100_000],
            epoch in 0u64..1_000_000_000_000,
            first in proptest::prop_oneof![0u64..8, 0u64..1_000_000_000],
            step in 0u64..64,
            n in 0u64..600,
        ) {
            // Against the slots one by one, as a port takes them.
            let grid = SlotGrid::new(BitRate::from_bps(rate).unwrap(), bits, SimTime::from_ps(epoch));
            let starts: Vec<SimTime> = (0..n).map(|i| grid.boundary(&grid.at_slot(first + i * step))).collect();
            let expected = if starts.contains(&SimTime::MAX) {
                None
            } else {
                Some(starts.iter().map(|t| u128::from(t.as_ps())).sum())
            };
            prop_assert_eq!(grid.sum_of_starts(first, step, n), expected);
        }

        #[test]
        fn prop_floor_div_near_is_exact(a in proptest::num::u64::ANY, b in 1u64.., d in 1u128..(1u128 << 100)) {
            let n = a as u128 * b as u128;
            let est = a as f64 * b as f64 / d as f64;
            prop_assert_eq!(floor_div_near(n, d, est), n / d);
        }

        #[test]
        fn prop_seek_matches_division(rate in 1u64..100_000_000_000, bits in 1u64..100_000, t in proptest::num::u64::ANY) {
            let mut c = SlotClock::new(BitRate::from_bps(rate).unwrap(), bits);
            let p = bits as u128 * PS_PER_S as u128;
            let k = if t == 0 { 0 } else { (t as u128 - 1) * rate as u128 / p + 1 };
            prop_assert_eq!(u128::from(c.slots_before(SimTime::from_ps(t))), k.min(u128::from(u64::MAX)));
            c.seek(SimTime::from_ps(t));
            let kp = u128::from(c.slot()) * p;
            let base = u64::try_from(kp / rate as u128).unwrap_or(u64::MAX);
            // The clock keeps the remainder over the reduced rate R / g.
            let g = gcd(p, u128::from(rate));
            prop_assert_eq!((c.pos.base, u128::from(c.pos.rem) * g), (base, kp % rate as u128));
        }

        #[test]
        fn prop_seek_near_lands_where_seek_does(
            rate in proptest::prop_oneof![proptest::strategy::Just(149_760_000u64), 1_000u64..10_000_000_000],
            epoch in 0u64..1_000_000_000,
            from in 0u64..1_000_000_000_000,
            // Near (walked) and far (sought), and a time at or before `from`.
            gap in proptest::prop_oneof![0u64..30_000, 0u64..100_000_000, proptest::strategy::Just(0u64)],
            back in proptest::bool::ANY,
            // Or `t` exactly a slot's start, a few slots on (`+ 1`: a
            // picosecond past it).
            on_slot in proptest::option::of((0u64..12, 0u64..2)),
        ) {
            let grid = SlotGrid::new(BitRate::from_bps(rate).unwrap(), CELL_BITS, SimTime::from_ps(epoch));
            let mut pos = grid.position(0);
            grid.seek(&mut pos, SimTime::from_ps(from));
            let t = match on_slot {
                Some((n, past)) => grid.start(pos.slot() + n).as_ps() + past,
                None if back => from.saturating_sub(gap),
                None => from + gap,
            };
            let t = SimTime::from_ps(t);
            let (mut near, mut far) = (pos, pos);
            grid.seek_near(&mut near, t);
            grid.seek(&mut far, t);
            prop_assert_eq!(near, far);
        }

        #[test]
        fn prop_first_following_is_where_seek_lands(
            rate in proptest::prop_oneof![
                proptest::strategy::Just(155_520_000u64),
                proptest::strategy::Just(149_760_000),
                1_000u64..10_000_000_000,
            ],
            // The followed grid's slots as long as this one's, or a whole
            // number of them (a shaped port's), or not.
            slower in proptest::prop_oneof![proptest::strategy::Just(1u64), 1u64..6],
            whole in proptest::bool::ANY,
            // The followed grid's and this one's epochs, the offset (a
            // link's transit, or none) and the departing slot.
            epochs in (0u64..1_000_000_000, 0u64..1_000_000_000),
            offset in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..10_000_000_000],
            // Or the arrival's lead on this epoch within two picoseconds
            // of one of this grid's slot starts (where the shift is one
            // short for some slots and not for others).
            aligned in proptest::option::of((0u64..5_000, 0u64..5)),
            from in proptest::prop_oneof![0u64..300, 0u64..1_000_000_000],
        ) {
            let this_rate = rate * slower;
            let other_rate = if whole { rate } else { rate + 1 };
            let other = SlotGrid::new(BitRate::from_bps(other_rate).unwrap(), CELL_BITS, SimTime::from_ps(epochs.0));
            let grid = SlotGrid::new(BitRate::from_bps(this_rate).unwrap(), CELL_BITS, SimTime::from_ps(epochs.1));
            let offset = match aligned {
                Some((c, d)) => (grid.start(c).as_ps() + d).saturating_sub(2 + epochs.0),
                None => offset,
            };
            let offset = Duration::from_ps(offset);
            let periods = grid.periods_in(&other);
            if whole {
                prop_assert_eq!(periods, Some(slower));
            }
            let Some(follow) = grid.follow(&other, offset) else {
                // Only where the periods are not whole or this grid's
                // epoch is later than the arrival's lead.
                prop_assert!(periods.is_none() || epochs.0 + offset.as_ps() < epochs.1);
                return Ok(());
            };
            prop_assert_eq!(Some(follow.periods()), periods);
            let at = other.start(from).saturating_add(offset);
            let mut sought = grid.position(0);
            grid.seek(&mut sought, at);
            let pos = grid.followed(&follow, from).unwrap();
            prop_assert_eq!(grid.first_following(&follow, &pos), (at, sought, grid.boundary(&sought)));
        }

        #[test]
        fn prop_follow_each_is_first_following_cell_by_cell(
            rate in proptest::prop_oneof![proptest::strategy::Just(149_760_000u64), 1_000u64..10_000_000_000],
            slower in 1u64..6,
            epochs in (0u64..1_000_000_000, 0u64..1_000_000_000),
            offset in 0u64..10_000_000_000,
            aligned in proptest::option::of((0u64..5_000, 0u64..5)),
            // The first slot, the step between cells (in the followed
            // grid's slots) and how many; near 2^64 ps the sums saturate
            // and `follow_each` must take the saturating way.
            from in proptest::prop_oneof![0u64..1_000_000_000, (u64::MAX / 2_000_000)..(u64::MAX / 2_000)],
            step in 1u64..8,
            n in 0u64..40,
            extra in proptest::prop_oneof![0u64..10_000_000, proptest::strategy::Just(u64::MAX / 2)],
        ) {
            let other = SlotGrid::new(BitRate::from_bps(rate).unwrap(), CELL_BITS, SimTime::from_ps(epochs.0));
            let grid = SlotGrid::new(BitRate::from_bps(rate * slower).unwrap(), CELL_BITS, SimTime::from_ps(epochs.1));
            let offset = match aligned {
                Some((c, d)) => (grid.start(c).as_ps() + d).saturating_sub(2 + epochs.0),
                None => offset,
            };
            let Some(follow) = grid.follow(&other, Duration::from_ps(offset)) else { return Ok(()) };
            let Some(first) = grid.followed(&follow, from) else { return Ok(()) };
            let by = grid.position(slower * step);
            let extra = Duration::from_ps(extra);
            let mut seen = Vec::new();
            let last = grid.follow_each(&follow, (first, &by), n, extra, |at, start, leaves| seen.push((at, start, leaves)));
            let (mut want, mut want_last, mut pos) = (Vec::new(), None, first);
            for _ in 0..n {
                let (at, slot, start) = grid.first_following(&follow, &pos);
                want.push((at, start, start.saturating_add(extra)));
                want_last = Some(slot);
                grid.jump(&mut pos, &by);
            }
            prop_assert_eq!(seen, want);
            prop_assert_eq!(last, want_last);
        }

        #[test]
        fn prop_jump_is_advancing_one_by_one(
            rate in proptest::prop_oneof![proptest::strategy::Just(149_760_000u64), 1_000u64..10_000_000_000],
            bits in proptest::prop_oneof![proptest::strategy::Just(CELL_BITS), 1u64..100_000],
            from in 0u64..1_000_000_000,
            n in 0u64..40,
        ) {
            let grid = SlotGrid::new(BitRate::from_bps(rate).unwrap(), bits, SimTime::ZERO);
            let (mut jumped, mut walked) = (grid.position(from), grid.position(from));
            grid.jump(&mut jumped, &grid.position(n));
            for _ in 0..n {
                grid.advance(&mut walked);
            }
            prop_assert_eq!(jumped, walked);
        }

        #[test]
        fn prop_advance_after_seek_matches_closed_form(
            rate in 1_000u64..10_000_000_000,
            epoch in 0u64..1_000_000_000,
            t in 0u64..1_000_000_000_000_000,
            n in 0u64..300,
        ) {
            // From any slot `seek` lands on, `advance` steps to the exact
            // boundaries, epoch included.
            let mut c = SlotClock::with_epoch(BitRate::from_bps(rate).unwrap(), CELL_BITS, SimTime::from_ps(epoch));
            c.seek(SimTime::from_ps(t));
            for _ in 0..n { c.advance(); }
            let p = CELL_BITS as u128 * PS_PER_S as u128;
            let exact = u128::from(epoch) + (u128::from(c.slot()) * p).div_ceil(rate as u128);
            prop_assert_eq!(c.boundary().as_ps() as u128, exact);
        }

        #[test]
        fn prop_advance_matches_closed_form(rate in 1_000u64..10_000_000_000, bits in 1u64..100_000, n in 0u64..2_000) {
            let r = BitRate::from_bps(rate).unwrap();
            let mut c = SlotClock::new(r, bits);
            for _ in 0..n { c.advance(); }
            let exact = (n as u128 * bits as u128 * PS_PER_S as u128).div_ceil(rate as u128);
            prop_assert_eq!(c.boundary().as_ps() as u128, exact);
        }

        #[test]
        fn prop_take_slot_is_boundary_then_advance(
            rate in 1u64..10_000_000_000,
            epoch in 0u64..1_000_000_000,
            t in 0u64..1 << 50,
            near_the_end in proptest::option::of(0u64..400),
            n in 0u32..300,
            extra in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..1_000_000, 0u64..1_000_000_000_000],
        ) {
            // Wherever the run of slots lies, even against 2^64 ps: if
            // `starts_in_time` lets `take_slot` take it, each start is the
            // boundary, `extra` later still in time, and the position
            // after it is `advance`'s; if not, the run's end plus `extra`
            // lies within a slot of 2^64 ps.
            let grid = SlotGrid::new(BitRate::from_bps(rate).unwrap(), CELL_BITS, SimTime::from_ps(epoch));
            // From `t`, or from a few hundred slots before 2^64 ps.
            let t = near_the_end.map_or(t, |m| u64::MAX.saturating_sub(m.saturating_mul(grid.q)));
            let mut pos = SlotPos::default();
            grid.seek(&mut pos, SimTime::from_ps(t));
            let (mut fast, mut reference) = (pos, pos);
            let in_time = grid.starts_in_time(&pos, n, Duration::from_ps(extra));
            for _ in 0..=n {
                let b = grid.boundary(&reference);
                if in_time && fast.k < pos.k + u64::from(n) {
                    prop_assert_eq!(grid.take_slot(&mut fast), b.as_ps());
                }
                grid.advance(&mut reference);
            }
            if in_time {
                prop_assert_eq!(fast, { let mut r = pos; for _ in 0..n { grid.advance(&mut r); } r });
            } else {
                let end = u128::from(grid.boundary(&pos).as_ps()) + u128::from(n + 1) * u128::from(grid.q + 1) + u128::from(extra);
                prop_assert!(end > u128::from(u64::MAX), "refused a run that ends at {end} ps");
            }
        }

        #[test]
        fn prop_seek_is_minimal(rate in 1_000u64..10_000_000_000, t in 1u64..1_000_000_000_000) {
            let mut c = SlotClock::new(BitRate::from_bps(rate).unwrap(), CELL_BITS);
            c.seek(SimTime::from_ps(t));
            prop_assert!(c.boundary().as_ps() >= t);
            if c.slot() > 0 {
                let prev = ((c.slot() - 1) as u128 * CELL_BITS as u128 * PS_PER_S as u128).div_ceil(rate as u128);
                prop_assert!(prev < t as u128);
            }
        }
    }
}
