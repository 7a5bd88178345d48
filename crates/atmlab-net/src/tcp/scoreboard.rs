//! The SACK scoreboard of a sender (RFC 2018; Fall & Floyd's `sack1`).
//!
//! It holds the byte ranges the receiver reported in SACK blocks above the
//! cumulative ACK, merged and sorted, and finds the next hole to retransmit:
//! the lowest sequence at or after a starting point that is not SACKed and
//! lies below the highest SACKed byte.

use super::ranges;

/// Ranges `[start, end)` SACKed by the receiver, above `snd_una`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
}

impl Scoreboard {
    /// Adds the blocks of an ACK and forgets what `snd_una` covers. Returns
    /// whether the ranges changed: a block reported data not known before,
    /// or `snd_una` moved past SACKed data.
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> bool {
        let mut changed = false;
        for &(s, e) in blocks {
            let s = s.max(snd_una);
            if s < e {
                changed |= ranges::insert(&mut self.ranges, s, e);
            }
        }
        // Data added is at or above `snd_una`, so forgetting what lies
        // below it never takes back what the blocks added.
        ranges::forget_below(&mut self.ranges, snd_una) || changed
    }

    /// Forgets everything below `snd_una`.
    pub fn prune(&mut self, snd_una: u64) {
        ranges::forget_below(&mut self.ranges, snd_una);
    }

    /// Forgets everything (after a timeout SACK information is stale).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// One past the highest SACKed byte ("forward-most" byte, FACK).
    pub fn highest(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, e)| e)
    }

    /// The SACKed ranges.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// The next hole at or after `from`: its start and length (at most
    /// `mss`, and never into SACKed data).
    pub fn next_hole(&self, from: u64, mss: u64) -> Option<(u64, u64)> {
        let top = self.highest()?;
        let mut start = from;
        for &(s, e) in &self.ranges {
            if start >= top {
                return None;
            }
            if start < s {
                return Some((start, mss.min(s - start)));
            }
            start = start.max(e);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_blocks_merge_and_prune() {
        let mut sb = Scoreboard::default();
        assert!(sb.update(100, &[(300, 400)]));
        assert!(sb.update(100, &[(200, 300), (300, 400)]));
        assert!(!sb.update(100, &[(250, 350)]), "nothing new");
        assert_eq!(sb.ranges(), &[(200, 400)]);
        assert!(sb.update(250, &[]), "snd_una moved into SACKed data");
        assert_eq!(sb.ranges(), &[(250, 400)]);
        assert!(!sb.update(250, &[(100, 250)]), "below snd_una");
        assert_eq!(sb.highest(), Some(400));
    }

    #[test]
    fn test_next_hole_skips_sacked_data() {
        let mut sb = Scoreboard::default();
        sb.update(0, &[(100, 200), (300, 350)]);
        assert_eq!(sb.next_hole(0, 100), Some((0, 100)));
        assert_eq!(sb.next_hole(100, 100), Some((200, 100)));
        assert_eq!(sb.next_hole(200, 512), Some((200, 100)), "up to the next SACKed range");
        assert_eq!(sb.next_hole(300, 100), None, "nothing above the highest SACKed byte");
    }
}
