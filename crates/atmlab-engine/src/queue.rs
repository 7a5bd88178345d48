//! The event queue and its deterministic order.
//!
//! Events are ordered by the key `(time, class, tie)`:
//!
//! 1. `time`: earlier first;
//! 2. `class`: at equal times, lower [`EventClass`] first. Models use this to
//!    state causality explicitly (for example: every cell that arrives at a
//!    port at instant `t` is queued before the port picks the cell it sends in
//!    the slot starting at `t`);
//! 3. `tie`: for [`push`](EventQueue::push), a counter stamped at insertion,
//!    so that events with equal time and class run in the order they were
//!    scheduled (FIFO), as in SimPy (`eid`), ns-3 (`uid`) and NeXosim
//!    (insertion epoch); for [`push_keyed`](EventQueue::push_keyed), a key the
//!    model chooses (a link's index, say) when the order of simultaneous
//!    events must not depend on when they were scheduled.
//!
//! The order depends only on the calls made, never on memory addresses or
//! hashing, so a run is reproducible bit for bit.
//!
//! ## Implementation
//!
//! A 4-ary min-heap in a `Vec` (shallower than a binary heap, so fewer
//! unpredictable branches per operation). Most handlers schedule a new event
//! right after taking one, so [`pop_before`](EventQueue::pop_before) leaves a
//! *hole* at the root and the next push drops into it with one sift-down,
//! instead of a removal and an insertion.
//!
//! Events further ahead than a window (timers, cells a link delay away) wait
//! outside the heap in a list in no order, and are moved into it when the
//! heap runs dry; every event in the heap is earlier than every event in
//! the list, so the order is the heap's alone. The heap then holds the ~70
//! events of the next few milliseconds of the 97-0177 WAN instead of ~200,
//! one level less to sift through; the saving is mostly in cache lines
//! (`docs/benchmark.md`).

use crate::time::SimTime;

/// Tie-break class of an event at equal times (lower runs first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct EventClass(pub u8);

const TIE_BITS: u32 = 56;
const TIE_MASK: u64 = (1 << TIE_BITS) - 1;
const ARITY: usize = 4;

#[derive(Clone, Copy)]
struct Entry<E> {
    /// `time << 64 | class << 56 | tie`: one integer to compare, which the
    /// compiler turns into flag arithmetic and conditional moves rather
    /// than branches the CPU cannot predict.
    order: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        self.order < other.order
    }

    #[inline(always)]
    fn time(&self) -> u64 {
        (self.order >> 64) as u64
    }
}

/// Events this far ahead of the earliest one wait outside the heap (see the
/// module docs): 5 ms, past the next cells of a run but mostly short of its
/// timers and of what a WAN link's delay puts ahead. (1 ms and 0.2 ms were
/// measured too: 0.2 ms was slower than no window on the 97-0177 WAN.)
const WINDOW_PS: u64 = 5_000_000_000;

/// A priority queue of events of type `E` in `(time, class, tie)` order.
pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
    hole: bool,
    /// Every event at or after `horizon`, in no order; every event in the
    /// heap is before it.
    far: Vec<Entry<E>>,
    horizon: u64,
    seq: u64,
    pushed: u64,
    /// The time and class of the last event taken (`time << 64 | class <<
    /// 56`): nothing may be scheduled before it, at an earlier time or at
    /// the same time in an earlier class (a past event would turn the clock
    /// back, and one of an earlier class at the same instant would run
    /// after events it should precede: either corrupts the run; the check
    /// costs nothing measurable in `atmlab bench`, and its panic becomes
    /// the run's internal error at the Python boundary).
    floor: u128,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(256),
            hole: false,
            far: Vec::with_capacity(256),
            horizon: WINDOW_PS,
            seq: 0,
            pushed: 0,
            floor: 0,
        }
    }

    /// Schedules `event` at `time`; ties at equal `(time, class)` run FIFO.
    #[inline]
    pub fn push(&mut self, time: SimTime, class: EventClass, event: E) {
        let tie = self.seq & TIE_MASK;
        self.seq += 1;
        self.insert(time, class, tie, event);
    }

    /// Schedules `event` at `time`; ties at equal `(time, class)` run in
    /// increasing `key` order (`key < 2^56`).
    #[inline]
    pub fn push_keyed(&mut self, time: SimTime, class: EventClass, key: u64, event: E) {
        debug_assert!(key <= TIE_MASK, "tie key out of range");
        self.insert(time, class, key & TIE_MASK, event);
    }

    #[inline]
    fn insert(&mut self, time: SimTime, class: EventClass, tie: u64, event: E) {
        self.pushed += 1;
        let key = (u64::from(class.0) << TIE_BITS) | tie;
        let e = Entry { order: (u128::from(time.as_ps()) << 64) | u128::from(key), event };
        assert!(e.order >= self.floor, "an event scheduled in the past: {time:?} in class {}", class.0);
        if time.as_ps() >= self.horizon {
            self.far.push(e);
        } else if self.hole {
            self.hole = false;
            self.heap[0] = e;
            self.sift_down(0);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1);
        }
    }

    /// Really removes the root taken by the last pop.
    #[inline]
    fn fill_hole(&mut self) {
        if self.hole {
            self.hole = false;
            let last = self.heap.pop().expect("a hole is in a non-empty heap");
            if !self.heap.is_empty() {
                self.heap[0] = last;
                self.sift_down(0);
            }
        }
    }

    /// Removes and returns the earliest event if it is due strictly before
    /// `limit`; leaves the queue untouched otherwise.
    #[inline]
    pub fn pop_before(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        self.fill_hole();
        if self.heap.is_empty() {
            self.refill();
        }
        let top = self.heap.first()?;
        if top.time() >= limit.as_ps() {
            return None;
        }
        self.hole = true;
        self.floor = top.order & !u128::from(TIE_MASK);
        Some((SimTime::from_ps(top.time()), top.event))
    }

    /// Whether an event at `time` in `class` with tie key `key` (as
    /// [`push_keyed`](Self::push_keyed) would schedule it) would be the
    /// next one taken, due before `limit` and before every pending event;
    /// if so it counts as scheduled and taken, and the caller handles it
    /// now instead of scheduling it: exactly what a push and the next
    /// [`pop_before`](Self::pop_before) would give, without either.
    ///
    /// Behind a hole (the root taken by the last pop) the earliest pending
    /// event is the least of the root's children, every other being below
    /// one of them; every event in the far list is at or after `horizon`.
    /// An event at or after `horizon` is never taken here (the far list's
    /// earliest is not known without a scan).
    #[inline]
    pub fn take_keyed_if_next(&mut self, time: SimTime, class: EventClass, key: u64, limit: SimTime) -> bool {
        debug_assert!(key <= TIE_MASK, "tie key out of range");
        let t = time.as_ps();
        if t >= limit.as_ps() || t >= self.horizon {
            return false;
        }
        let order = (u128::from(t) << 64) | (u128::from(class.0) << TIE_BITS) | u128::from(key & TIE_MASK);
        let first = usize::from(self.hole);
        let last = if self.hole { self.heap.len().min(ARITY + 1) } else { self.heap.len().min(1) };
        if self.heap[first..last].iter().any(|e| e.order <= order) {
            return false;
        }
        assert!(order >= self.floor, "an event scheduled in the past: {time:?} in class {}", class.0);
        self.pushed += 1;
        self.floor = order & !u128::from(TIE_MASK);
        true
    }

    /// The heap is empty: moves the far events within a window of the
    /// earliest into it.
    #[cold]
    fn refill(&mut self) {
        let Some(first) = self.far.iter().map(Entry::time).min() else { return };
        self.horizon = first.saturating_add(WINDOW_PS);
        let mut i = 0;
        while i < self.far.len() {
            if self.far[i].time() < self.horizon {
                let e = self.far.swap_remove(i);
                self.heap.push(e);
                self.sift_up(self.heap.len() - 1);
            } else {
                i += 1;
            }
        }
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_before(SimTime::MAX)
    }

    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.fill_hole();
        if self.heap.is_empty() {
            self.refill();
        }
        self.heap.first().map(|e| SimTime::from_ps(e.time()))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.hole) + self.far.len()
    }

    /// Entries allocated for events.
    pub fn capacity(&self) -> usize {
        self.heap.capacity() + self.far.capacity()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of events ever scheduled.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !e.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let first = ARITY * i + 1;
            let best = if let Some(h) = self.heap.get(first..first + ARITY) {
                // All four children: a tournament of selects, no branches.
                let a = usize::from(h[1].order < h[0].order);
                let b = 2 + usize::from(h[3].order < h[2].order);
                let m = if h[b].order < h[a].order { b } else { a };
                if !h[m].before(&e) {
                    break;
                }
                first + m
            } else if first < n {
                let mut best = first;
                for c in first + 1..n {
                    if self.heap[c].before(&self.heap[best]) {
                        best = c;
                    }
                }
                if !self.heap[best].before(&e) {
                    break;
                }
                best
            } else {
                break;
            };
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn test_equal_times_run_fifo() {
        let mut q = EventQueue::new();
        for i in 0..10 {
            q.push(SimTime::from_ps(5), EventClass(1), i);
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn test_class_orders_equal_times() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(5), EventClass(2), "late class");
        q.push(SimTime::from_ps(5), EventClass(0), "early class");
        q.push(SimTime::from_ps(4), EventClass(9), "earlier time");
        assert_eq!(q.pop().unwrap().1, "earlier time");
        assert_eq!(q.pop().unwrap().1, "early class");
        assert_eq!(q.pop().unwrap().1, "late class");
    }

    #[test]
    fn test_keyed_ties_ignore_scheduling_order() {
        let mut q = EventQueue::new();
        q.push_keyed(SimTime::from_ps(5), EventClass(0), 7, "link 7");
        q.push_keyed(SimTime::from_ps(5), EventClass(0), 3, "link 3");
        assert_eq!(q.pop().unwrap().1, "link 3");
        assert_eq!(q.pop().unwrap().1, "link 7");
    }

    #[test]
    #[should_panic(expected = "scheduled in the past")]
    fn test_an_earlier_class_at_the_time_just_taken_is_refused() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(5), EventClass(2), ());
        q.pop();
        q.push(SimTime::from_ps(5), EventClass(2), ()); // the same class: later, fine
        q.push(SimTime::from_ps(5), EventClass(1), ());
    }

    #[test]
    fn test_pop_before_respects_limit() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(10), EventClass(0), ());
        assert!(q.pop_before(SimTime::from_ps(10)).is_none());
        assert_eq!(q.len(), 1);
        assert!(q.pop_before(SimTime::from_ps(11)).is_some());
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
    }

    /// Runs `ops` (a time step, a class, push or pop) on a queue and on a
    /// sorted reference, time steps scaled by `unit`: the queue must give
    /// the reference's order and count at every step.
    fn matches_a_sorted_reference(ops: &[(u64, u8, bool)], unit: u64) -> Result<(), TestCaseError> {
        let mut q: EventQueue<usize> = EventQueue::new();
        let mut reference: Vec<(u64, u8, usize)> = Vec::new();
        let (mut now, mut now_class) = (0, 0);
        let mut classes = vec![0; ops.len()];
        for (i, (dt, class, pop)) in ops.iter().enumerate() {
            if *pop {
                reference.sort();
                let want = if reference.is_empty() { None } else { Some(reference.remove(0)) };
                let got = q.pop().map(|(t, i)| (t.as_ps(), classes[i], i));
                prop_assert_eq!(got, want);
                if let Some((t, c, _)) = want {
                    (now, now_class) = (t, c);
                }
            } else {
                // Never in the past, as in a simulation: not before the
                // event taken last, nor in an earlier class at its time.
                let t = now + dt * unit;
                let class = if t == now { (*class).max(now_class) } else { *class };
                classes[i] = class;
                q.push(SimTime::from_ps(t), EventClass(class), i);
                reference.push((t, class, i));
            }
            prop_assert_eq!(q.len(), reference.len());
        }
        Ok(())
    }

    /// The event the next pop would give.
    fn peek_event(q: &mut EventQueue<usize>) -> Option<usize> {
        q.peek_time()?;
        Some(q.heap[0].event)
    }

    /// Runs `ops` as `matches_a_sorted_reference` does, but each push
    /// (keyed by its index) first asks `take_keyed_if_next`: the queue
    /// must say yes exactly when a push and a pop would give that event
    /// next, and then, having taken it, go on as that pop would.
    fn take_if_next_matches_push_and_pop(ops: &[(u64, u8, bool)], unit: u64) -> Result<(), TestCaseError> {
        let mut q: EventQueue<usize> = EventQueue::new();
        let mut reference: EventQueue<usize> = EventQueue::new();
        let (mut now, mut now_class) = (0, 0);
        let mut classes = vec![0; ops.len()];
        for (i, (dt, class, pop)) in ops.iter().enumerate() {
            if *pop {
                let got = q.pop();
                prop_assert_eq!(got, reference.pop());
                if let Some((t, e)) = got {
                    (now, now_class) = (t.as_ps(), classes[e]);
                }
            } else {
                let t = now + dt * unit;
                let class = if t == now { (*class).max(now_class) } else { *class };
                classes[i] = class;
                let (time, key) = (SimTime::from_ps(t), i as u64);
                let limit = SimTime::from_ps(now + 40 * unit);
                let taken = q.take_keyed_if_next(time, EventClass(class), key, limit);
                reference.push_keyed(time, EventClass(class), key, i);
                let would = t < limit.as_ps() && peek_event(&mut reference) == Some(i);
                if taken {
                    prop_assert!(would, "taken, but a push and a pop would not give it next");
                    prop_assert_eq!(reference.pop(), Some((time, i)));
                    (now, now_class) = (t, class);
                } else {
                    // Declined: it may be next only past the window (the far list).
                    prop_assert!(!would || t >= q.horizon, "declined an event that was next");
                    q.push_keyed(time, EventClass(class), key, i);
                }
            }
            prop_assert_eq!(q.len(), reference.len());
        }
        Ok(())
    }

    proptest! {
        /// `take_keyed_if_next` takes an event exactly when it would be
        /// the next one popped, holes and far events included.
        #[test]
        fn prop_take_if_next_matches_a_push_and_a_pop(ops in proptest::collection::vec((0u64..50, 0u8..3, proptest::bool::ANY), 0..300)) {
            take_if_next_matches_push_and_pop(&ops, 1)?;
            take_if_next_matches_push_and_pop(&ops, WINDOW_PS / 16)?;
        }

        /// Random interleavings of pushes and pops give the sorted order a
        /// reference model gives.
        #[test]
        fn prop_matches_a_sorted_reference(ops in proptest::collection::vec((0u64..50, 0u8..3, proptest::bool::ANY), 0..300)) {
            matches_a_sorted_reference(&ops, 1)?;
        }

        /// The same with times spread over several windows (multiples of a
        /// sixteenth of one, so that ties are frequent), so that events go
        /// to the far list and come back.
        #[test]
        fn prop_matches_a_sorted_reference_across_windows(ops in proptest::collection::vec((0u64..50, 0u8..3, proptest::bool::ANY), 0..300)) {
            matches_a_sorted_reference(&ops, WINDOW_PS / 16)?;
        }
    }
}
