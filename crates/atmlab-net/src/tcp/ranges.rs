//! Byte ranges `[start, end)` kept sorted and merged: the receiver's
//! out-of-order queue and the sender's SACK scoreboard.
//!
//! A list is sorted by start, and ranges that overlap or touch are one, so
//! between two neighbours there is at least one byte that is in neither:
//! ends are sorted too, and a byte is in at most one range. Both lookups
//! are binary searches and an insertion moves the tail of the list once,
//! in place. (Merging by a pass over a new copy of the whole list, as
//! before, cost a satellite run of 97-0424, where losses leave hundreds of
//! holes, 7 % of its instructions: `docs/benchmark.md`.)

/// Adds `[s, e)` (`s < e`) to `ranges`, merged with every range it
/// overlaps or touches. Returns whether bytes were added (else `[s, e)` was
/// inside one range, and the list is as it was).
pub(super) fn insert(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) -> bool {
    debug_assert!(s < e, "an empty range");
    // The ranges it joins: those that end at or after `s` and start at or
    // before `e` (ends are sorted, as starts are).
    let lo = ranges.partition_point(|&(_, re)| re < s);
    let hi = lo + ranges[lo..].partition_point(|&(rs, _)| rs <= e);
    if lo == hi {
        ranges.insert(lo, (s, e));
        return true;
    }
    let merged = (ranges[lo].0.min(s), ranges[hi - 1].1.max(e));
    if hi - lo == 1 && merged == ranges[lo] {
        return false;
    }
    ranges[lo] = merged;
    ranges.drain(lo + 1..hi);
    true
}

/// The index of the range that holds byte `x`, if one does.
pub(super) fn containing(ranges: &[(u64, u64)], x: u64) -> Option<usize> {
    let i = ranges.partition_point(|&(s, _)| s <= x);
    (i > 0 && x < ranges[i - 1].1).then(|| i - 1)
}

/// Removes the ranges that end at or before `x` and trims the first one left
/// to start at `x` at the soonest. Returns whether the list changed.
pub(super) fn forget_below(ranges: &mut Vec<(u64, u64)>, x: u64) -> bool {
    let gone = ranges.partition_point(|&(_, e)| e <= x);
    ranges.drain(..gone);
    match ranges.first_mut() {
        Some(first) if first.0 < x => {
            first.0 = x;
            true
        }
        _ => gone > 0,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The merge as it was: the range put in its place by start, then a
    /// pass over the whole list joining each range to the one before when
    /// they overlap or touch.
    pub(in crate::tcp) fn insert_by_merging(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
        let i = ranges.partition_point(|&(rs, _)| rs < s);
        ranges.insert(i, (s, e));
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *ranges = merged;
    }

    #[test]
    fn test_a_range_joins_the_ranges_it_overlaps_or_touches() {
        let mut r = vec![(10, 20), (30, 40), (50, 60)];
        assert!(insert(&mut r, 20, 30), "touching both neighbours");
        assert_eq!(r, [(10, 40), (50, 60)]);
        assert!(!insert(&mut r, 12, 40), "inside one range");
        assert!(insert(&mut r, 45, 48));
        assert_eq!(r, [(10, 40), (45, 48), (50, 60)]);
        assert!(insert(&mut r, 0, 100));
        assert_eq!(r, [(0, 100)]);
        assert_eq!(containing(&r, 0), Some(0));
        assert_eq!(containing(&r, 100), None, "the end is not in the range");
    }

    #[test]
    fn test_forgetting_below_a_byte_trims_the_first_range() {
        let mut r = vec![(10, 20), (30, 40)];
        assert!(!forget_below(&mut r, 5));
        assert!(forget_below(&mut r, 20));
        assert_eq!(r, [(30, 40)]);
        assert!(forget_below(&mut r, 35));
        assert_eq!(r, [(35, 40)]);
        assert!(forget_below(&mut r, 40));
        assert!(r.is_empty());
    }

    proptest! {
        /// Against the merge as it was: the same list after every insertion,
        /// "bytes added" exactly when the list changed, the range holding a
        /// byte found as a scan finds it, and the trim as `retain` then
        /// raising the first start gave. Small numbers, so that ranges
        /// overlap, touch and nest often.
        #[test]
        fn prop_ranges_merge_as_a_whole_pass_does(
            ops in prop::collection::vec((0u64..200, 1u64..30, 0u64..230), 1..120),
        ) {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            for (s, len, x) in ops {
                let before = slow.clone();
                insert_by_merging(&mut slow, s, s + len);
                prop_assert_eq!(insert(&mut fast, s, s + len), slow != before);
                prop_assert_eq!(&fast, &slow);
                let scan = slow.iter().position(|&(a, b)| a <= x && x < b);
                prop_assert_eq!(containing(&fast, x), scan);
                if x % 7 == 0 {
                    let before = slow.clone();
                    slow.retain(|&(_, e)| e > x);
                    if let Some(first) = slow.first_mut() {
                        first.0 = first.0.max(x);
                    }
                    prop_assert_eq!(forget_below(&mut fast, x), slow != before);
                    prop_assert_eq!(&fast, &slow);
                }
            }
        }
    }
}
