//! A sliding window of recent oversleeps kept as a small log-linear histogram, for O(1)
//! insertion and O(buckets) quantiles with bounded memory.
//!
//! Values are bucketed with 8 sub-buckets per power of two (≤ 12.5 % relative width):
//! 0–7 ns exactly, then `[8·2^k, 9·2^k)`, `[9·2^k, 10·2^k)`, … up to `u32::MAX`. An
//! order statistic is reported as the *upper* edge of its bucket, so it errs on the safe (high)
//! side by at most one bucket width. The ring remembers only each slot's bucket index
//! (one byte), so a window of 256 costs 256 B of ring plus 480 B of counts.

/// Number of buckets: values `0..=u32::MAX` map to `0..BUCKETS`.
pub(crate) const BUCKETS: usize = 240;
/// Marks a ring slot that holds no sample (a wait without a native phase).
const EMPTY: u8 = u8::MAX;
/// The largest window the ring supports (counts are `u16`).
pub(crate) const MAX_WINDOW: usize = 4096;

/// The bucket holding `v` (values above `u32::MAX` share the top bucket).
pub(crate) fn bucket_of(v: u64) -> u8 {
    let v = u32::try_from(v).unwrap_or(u32::MAX);
    if v < 8 {
        v as u8
    } else {
        let e = 31 - v.leading_zeros(); // floor(log2 v), >= 3
        let m = (v >> (e - 3)) & 7;
        (8 * (e - 2) + m) as u8
    }
}

/// The largest value that falls in bucket `i` (inclusive upper edge).
pub(crate) fn bucket_max(i: u8) -> u64 {
    let i = u64::from(i).min(BUCKETS as u64 - 1);
    if i < 8 {
        i
    } else {
        let e = i / 8 + 2;
        let m = i % 8;
        ((9 + m) << (e - 3)) - 1
    }
}

/// The ring of the last `len` waits (each a bucket index or empty) and its histogram.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    ring: Vec<u8>,
    pos: usize,
    filled: usize,
    counts: [u16; BUCKETS],
}

impl Window {
    /// A window over the last `len` waits, `len` clamped to `1..=MAX_WINDOW`.
    pub(crate) fn new(len: usize) -> Self {
        Self {
            ring: vec![EMPTY; len.clamp(1, MAX_WINDOW)],
            pos: 0,
            filled: 0,
            counts: [0; BUCKETS],
        }
    }

    /// Capacity in waits.
    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }

    /// Number of slots holding a sample.
    pub(crate) fn filled(&self) -> usize {
        self.filled
    }

    /// Pushes a sample (`Some`) or an empty slot (`None`), evicting the oldest slot.
    pub(crate) fn push(&mut self, sample: Option<u64>) {
        let old = self.ring[self.pos];
        if old != EMPTY {
            self.counts[old as usize] -= 1;
            self.filled -= 1;
        }
        let new = sample.map_or(EMPTY, bucket_of);
        if new != EMPTY {
            self.counts[new as usize] += 1;
            self.filled += 1;
        }
        self.ring[self.pos] = new;
        self.pos = (self.pos + 1) % self.ring.len();
    }

    /// The `k`-th largest sample in the window (upper bucket edge; `k` ≥ 1), or `None`
    /// when the window holds fewer than `k` samples.
    pub(crate) fn kth_largest(&self, k: usize) -> Option<u64> {
        let k = k.max(1);
        if self.filled < k {
            return None;
        }
        let mut acc = 0usize;
        for i in (0..BUCKETS).rev() {
            acc += usize::from(self.counts[i]);
            if acc >= k {
                return Some(bucket_max(i as u8));
            }
        }
        None
    }

    /// Number of samples in buckets `lo..=hi` (none when `lo > hi`).
    pub(crate) fn count_between(&self, lo: u8, hi: u8) -> usize {
        let hi = usize::from(hi).min(BUCKETS - 1);
        let lo = usize::from(lo);
        if lo > hi {
            return 0;
        }
        self.counts[lo..=hi].iter().map(|&c| usize::from(c)).sum()
    }

    /// Forgets every sample.
    pub(crate) fn clear(&mut self) {
        self.ring.fill(EMPTY);
        self.pos = 0;
        self.filled = 0;
        self.counts = [0; BUCKETS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_range_monotonically() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(7), 7);
        assert_eq!(bucket_of(8), 8);
        assert_eq!(bucket_of(u64::from(u32::MAX)) as usize, BUCKETS - 1);
        assert_eq!(bucket_of(u64::MAX) as usize, BUCKETS - 1);
        assert_eq!(bucket_max((BUCKETS - 1) as u8), u64::from(u32::MAX));
        let mut prev = 0;
        for v in (0..5_000_000u64).step_by(97) {
            let b = bucket_of(v);
            assert!(b >= prev);
            prev = b;
            assert!(v <= bucket_max(b), "{v} above edge of bucket {b}");
            if b > 0 {
                assert!(v > bucket_max(b - 1), "{v} not above bucket {}", b - 1);
            }
            // Relative width stays within 12.5 %.
            assert!(bucket_max(b) as f64 <= (v as f64) * 1.125 + 1.0);
        }
    }

    #[test]
    fn quantile_and_eviction() {
        let mut w = Window::new(4);
        assert_eq!(w.kth_largest(1), None);
        for v in [10, 20, 30, 1000] {
            w.push(Some(v));
        }
        assert_eq!(w.kth_largest(0), Some(bucket_max(bucket_of(1000))));
        assert_eq!(w.kth_largest(1), Some(bucket_max(bucket_of(1000))));
        assert_eq!(w.kth_largest(3), Some(bucket_max(bucket_of(20))));
        assert_eq!(w.kth_largest(5), None);
        // Four more pushes evict everything.
        for _ in 0..4 {
            w.push(None);
        }
        assert_eq!(w.filled(), 0);
        assert_eq!(w.kth_largest(1), None);
        w.push(Some(5));
        w.clear();
        assert_eq!(w.filled(), 0);
    }

    #[test]
    fn counts_within_a_range() {
        let mut w = Window::new(8);
        for v in [10_000, 20_000, 2_000_000, 3_000_000, 900_000_000] {
            w.push(Some(v));
        }
        let (b1ms, b50ms) = (bucket_of(1_000_000), bucket_of(50_000_000));
        assert_eq!(w.count_between(b1ms + 1, b50ms), 2);
        assert_eq!(w.count_between(0, u8::MAX), 5);
        assert_eq!(w.count_between(b50ms, b1ms), 0);
    }

    #[test]
    fn third_largest_of_256() {
        let mut w = Window::new(256);
        for i in 0..256u64 {
            w.push(Some(i * 1000));
        }
        // 3rd largest is 253 000, reported as its bucket's upper edge.
        assert_eq!(w.kth_largest(3), Some(bucket_max(bucket_of(253_000))));
        assert!(bucket_max(bucket_of(253_000)) < 254_000 * 9 / 8);
    }
}
