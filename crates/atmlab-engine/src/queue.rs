//! The event queue and its deterministic order.
//!
//! Events are ordered by the key `(time, class, seq)`:
//!
//! 1. `time`: earlier first;
//! 2. `class`: at equal times, lower [`EventClass`] first. Models use this to
//!    state causality explicitly (for example: every cell that arrives at a
//!    port at instant `t` is queued before the port picks the cell it sends in
//!    the slot starting at `t`);
//! 3. `seq`: a counter stamped at insertion, so that events with equal time
//!    and class run in the order they were scheduled (FIFO), as in SimPy
//!    (`eid`), ns-3 (`uid`) and NeXosim (insertion epoch).
//!
//! The order depends only on the sequence of `push` calls, never on memory
//! addresses or hashing, so a run is reproducible bit for bit.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Tie-break class of an event at equal times (lower runs first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct EventClass(pub u8);

const SEQ_BITS: u32 = 56;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

struct Entry<E> {
    time: u64,
    key: u64, // class << 56 | seq
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: `BinaryHeap` is a max-heap and we want the smallest key on top.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.key).cmp(&(self.time, self.key))
    }
}

/// A priority queue of events of type `E` in `(time, class, seq)` order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    pushed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            pushed: 0,
        }
    }

    /// Schedules `event` at `time` with tie-break `class`.
    #[inline]
    pub fn push(&mut self, time: SimTime, class: EventClass, event: E) {
        let key = (u64::from(class.0) << SEQ_BITS) | (self.seq & SEQ_MASK);
        self.seq += 1;
        self.pushed += 1;
        self.heap.push(Entry {
            time: time.as_ps(),
            key,
            event,
        });
    }

    /// Removes and returns the earliest event if it is due strictly before
    /// `limit`; leaves the queue untouched otherwise.
    #[inline]
    pub fn pop_before(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        match self.heap.peek() {
            Some(top) if top.time < limit.as_ps() => {
                let e = self.heap.pop().expect("peeked entry exists");
                Some((SimTime::from_ps(e.time), e.event))
            }
            _ => None,
        }
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (SimTime::from_ps(e.time), e.event))
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime::from_ps(e.time))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Total number of events ever scheduled.
    pub fn pushed(&self) -> u64 {
        self.pushed
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
    fn test_pop_before_respects_limit() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ps(10), EventClass(0), ());
        assert!(q.pop_before(SimTime::from_ps(10)).is_none());
        assert!(q.pop_before(SimTime::from_ps(11)).is_some());
        assert!(q.is_empty());
    }

    proptest! {
        #[test]
        fn prop_pops_in_key_order(items in proptest::collection::vec((0u64..50, 0u8..3), 0..200)) {
            let mut q = EventQueue::new();
            for (i, (t, c)) in items.iter().enumerate() {
                q.push(SimTime::from_ps(*t), EventClass(*c), i);
            }
            let mut expected: Vec<_> = items.iter().enumerate().map(|(i, (t, c))| (*t, *c, i)).collect();
            expected.sort();
            let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, i)| (t.as_ps(), items[i].1, i)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
