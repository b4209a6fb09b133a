//! [`WaitSummary`]: what a run of waits cost and how late it was, the one yardstick of the
//! oracle (`oracle_at_cpu`) and the replay.

/// Lateness percentiles and spin CPU of a run of waits.
///
/// Percentiles interpolate linearly between closest ranks (numpy's default, as every
/// quantile sleeplab reports), rounded to the nearest ns, and are reported only where
/// `n·(1 − q) ≥ 1` (p99 needs 100 waits, p99.9 needs 1000); otherwise `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WaitSummary {
    /// Number of waits.
    pub waits: usize,
    /// Waits that returned after their deadline.
    pub late_waits: usize,
    /// Median lateness, ns (`None` without waits).
    pub p50_ns: Option<u64>,
    /// 99th percentile of lateness, ns.
    pub p99_ns: Option<u64>,
    /// 99.9th percentile of lateness, ns.
    pub p999_ns: Option<u64>,
    /// Largest lateness, ns.
    pub max_ns: u64,
    /// Total time spent spinning, ns.
    pub spin_ns: u64,
    /// Total time from each wait's start to its return, ns.
    pub span_ns: u64,
}

impl WaitSummary {
    /// Summarizes waits given as `(lateness_ns, spin_ns, span_ns)`.
    pub fn from_waits(waits: impl IntoIterator<Item = (u64, u64, u64)>) -> Self {
        let mut lateness = Vec::new();
        let (mut spin_ns, mut span_ns) = (0u64, 0u64);
        for (late, spin, span) in waits {
            lateness.push(late);
            spin_ns = spin_ns.saturating_add(spin);
            span_ns = span_ns.saturating_add(span);
        }
        lateness.sort_unstable();
        Self {
            waits: lateness.len(),
            late_waits: lateness.iter().filter(|&&l| l > 0).count(),
            p50_ns: quantile_ns(&lateness, 0.5),
            p99_ns: quantile_ns(&lateness, 0.99),
            p999_ns: quantile_ns(&lateness, 0.999),
            max_ns: lateness.last().copied().unwrap_or(0),
            spin_ns,
            span_ns,
        }
    }

    /// Spin time as a share of the time waited, percent of one core (0 without waits).
    pub fn cpu_percent(&self) -> f64 {
        if self.span_ns == 0 {
            0.0
        } else {
            100.0 * self.spin_ns as f64 / self.span_ns as f64
        }
    }
}

/// The `q`-quantile of `sorted` (ascending) by linear interpolation between closest
/// ranks (numpy's and pandas' default: position `q·(n − 1)`), rounded to the nearest
/// ns; `None` where `n·(1 − q) < 1` (too few values to tell that quantile from the
/// maximum; for `q = 1` the maximum itself) or there are no values.
pub fn quantile_ns(sorted: &[u64], q: f64) -> Option<u64> {
    let n = sorted.len();
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return None;
    }
    if q < 1.0 && (n as f64) * (1.0 - q) < 1.0 - 1e-9 {
        return None;
    }
    let pos = q * (n - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let (a, b) = (sorted[lo] as f64, sorted[hi] as f64);
    Some((a + (b - a) * (pos - lo as f64)).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_quantiles_only_where_honest() {
        // numpy.quantile(range(1, 101), [0.5, 0.9, 0.99]) = 50.5, 90.1, 99.01.
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_ns(&v, 0.5), Some(51), "50.5 rounds to 51");
        assert_eq!(quantile_ns(&v, 0.9), Some(90));
        assert_eq!(quantile_ns(&v, 0.99), Some(99));
        assert_eq!(quantile_ns(&v, 0.999), None, "100 values cannot give p99.9");
        assert_eq!(quantile_ns(&v, 1.0), Some(100));
        assert_eq!(quantile_ns(&v[..99], 0.99), None);
        // 0, 10, …, 990: p99 at position 98.01 → 980 + 0.01 · 10 = 980.1.
        let t: Vec<u64> = (0..100).map(|i| 10 * i).collect();
        assert_eq!(quantile_ns(&t, 0.99), Some(980));
        let w: Vec<u64> = (1..=1000).collect();
        assert_eq!(quantile_ns(&w, 0.999), Some(999));
        assert_eq!(quantile_ns(&[], 0.5), None);
        assert_eq!(quantile_ns(&[7], 0.5), None, "one value is no median");
        assert_eq!(quantile_ns(&[7, 9], 0.5), Some(8));
        assert_eq!(quantile_ns(&[7], f64::NAN), None);
    }

    #[test]
    fn summary_counts_and_cpu() {
        let s = WaitSummary::from_waits([(0, 10, 100), (5, 0, 105), (0, 30, 100), (2, 0, 102)]);
        assert_eq!((s.waits, s.late_waits, s.max_ns), (4, 2, 5));
        // Lateness 0, 0, 2, 5: the median is the mean of the two middle ones.
        assert_eq!(s.p50_ns, Some(1));
        assert_eq!(s.p99_ns, None);
        assert_eq!((s.spin_ns, s.span_ns), (40, 407));
        assert!((s.cpu_percent() - 4000.0 / 407.0).abs() < 1e-12);
        assert_eq!(WaitSummary::default().cpu_percent(), 0.0);
    }
}
