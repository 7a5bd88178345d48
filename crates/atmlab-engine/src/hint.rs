//! Hints to the processor that change no result, only when memory is read.
//!
//! A cell-level model touches much state that was written long before
//! (in simulated time, and so in the run's memory traffic): a frame
//! queued at an ABR source a second before it is sent, a cell put on a
//! 5 ms link. Where the model knows such a read is coming, some hundreds
//! of nanoseconds ahead, [`prefetch`] starts it, and the read then finds
//! the line in cache instead of stalling for main memory
//! (`docs/benchmark.md` measures where it pays).

/// Asks the processor to bring the cache line holding the start of `x` into
/// every level of its cache; nothing else happens (an x86-64 `prefetcht0`,
/// through `safe_arch`: the workspace forbids `unsafe`). On other
/// architectures, nothing at all.
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(x);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_a_prefetch_changes_nothing() {
        let v = vec![1u64, 2, 3];
        prefetch(&v[1]);
        prefetch(&v);
        assert_eq!(v, [1, 2, 3]);
    }
}
