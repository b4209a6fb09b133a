//! Bounded-memory recording of samples: exact moments, an HDR histogram for quantiles,
//! and raw samples up to a cap.

use super::quantile_ci::ci_by_rank;
use super::summary::Moments;
use super::{Summary, resolves, summarize};
use hdrhistogram::Histogram;

/// How much a [`Recorder`] keeps.
#[derive(Debug, Clone, Copy)]
pub struct RecorderConfig {
    /// Raw samples kept (for CSV and exact quantiles); later samples only enter the
    /// histogram and the moments.
    pub raw_cap: usize,
}

impl Default for RecorderConfig {
    fn default() -> Self {
        Self { raw_cap: 100_000 }
    }
}

/// Records elapsed-time samples (ns) of one cell in bounded memory.
///
/// Mean and variance are exact (Welford), min/max/early/total exact, quantiles exact
/// while all samples fit in the raw buffer and from a 3-significant-digit HDR histogram
/// afterwards.
#[derive(Debug, Clone)]
pub struct Recorder {
    requested_ns: u64,
    hist: Histogram<u64>,
    count: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
    early: u64,
    total: u64,
    raw: Vec<u64>,
    raw_cap: usize,
}

impl Recorder {
    /// A recorder for samples of a request of `requested_ns`.
    pub fn new(requested_ns: u64, config: RecorderConfig) -> Self {
        let mut hist = Histogram::new(3).expect("3 significant digits is a valid precision");
        hist.auto(true);
        Self {
            requested_ns,
            hist,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: u64::MAX,
            max: 0,
            early: 0,
            total: 0,
            raw: Vec::with_capacity(config.raw_cap.min(4096)),
            raw_cap: config.raw_cap,
        }
    }

    /// Records one sample.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Auto-resizing histogram: recording cannot fail for a u64 value.
        let _ = self.hist.record(ns.max(1));
        self.count += 1;
        let x = ns as f64;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.early += u64::from(ns < self.requested_ns);
        self.total = self.total.saturating_add(ns);
        if self.raw.len() < self.raw_cap {
            self.raw.push(ns);
        }
    }

    /// Number of samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of all samples, ns.
    pub fn total_ns(&self) -> u64 {
        self.total
    }

    /// The raw samples kept, in recording order (at most the cap).
    pub fn raw(&self) -> &[u64] {
        &self.raw
    }

    /// The histogram of all samples.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// The summary of everything recorded.
    pub fn summary(&self) -> Summary {
        if self.raw.len() as u64 == self.count {
            return summarize(&self.raw, self.requested_ns);
        }
        let n = self.count;
        Moments {
            n,
            mean: self.mean,
            m2: self.m2,
            min: self.min,
            max: self.max,
            early: self.early,
            total: self.total,
        }
        .summary(
            self.requested_ns,
            self.hist.value_at_quantile(0.5) as f64,
            |p| resolves(n, p).then(|| self.hist.value_at_quantile(p) as f64),
            |p| ci_by_rank(n, p, |k| self.value_at_rank(k) as f64),
            false,
        )
    }

    /// The `k`-th smallest recorded value (1-based) as the histogram holds it: the highest
    /// value of the bucket where the running count reaches `k` (as `value_at_quantile`
    /// reads a quantile).
    fn value_at_rank(&self, k: u64) -> u64 {
        let mut seen = 0u64;
        for v in self.hist.iter_recorded() {
            seen += v.count_at_value();
            if seen >= k {
                return self.hist.highest_equivalent(v.value_iterated_to());
            }
        }
        self.hist.max()
    }

    /// The histogram as (bucket upper value ns, count) pairs of its non-empty
    /// logarithmic buckets (2 sub-buckets per power of two above 1 µs), for charts.
    pub fn histogram_buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_log(1_000, std::f64::consts::SQRT_2)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| (v.value_iterated_to(), v.count_since_last_iteration()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_while_under_cap() {
        let mut r = Recorder::new(13, RecorderConfig { raw_cap: 10 });
        for x in [18, 10, 14, 12, 16] {
            r.record(x);
        }
        let s = r.summary();
        assert_eq!(s, summarize(&[18, 10, 14, 12, 16], 13));
        assert!(s.quantiles_exact);
    }

    #[test]
    fn bounded_beyond_cap_and_moments_stay_exact() {
        let mut r = Recorder::new(1_000, RecorderConfig { raw_cap: 100 });
        let n = 100_000u64;
        for i in 0..n {
            r.record(1_000 + i);
        }
        assert_eq!(r.raw().len(), 100);
        let s = r.summary();
        assert!(!s.quantiles_exact);
        assert_eq!(s.count, n);
        assert_eq!(s.min_ns, 1_000);
        assert_eq!(s.max_ns, 1_000 + n - 1);
        // Mean of 1000..=100999 is 50999.5; sd of 0..n-1 uniform = sqrt(n(n+1)/12).
        assert!((s.mean_ns - 50_999.5).abs() < 1e-6);
        let sd = ((n * (n + 1)) as f64 / 12.0).sqrt();
        assert!((s.stddev_ns - sd).abs() / sd < 1e-9);
        // Histogram quantiles within 3 significant digits.
        assert!(
            (s.median_ns - 51_000.0).abs() / 51_000.0 < 2e-3,
            "{}",
            s.median_ns
        );
        assert_eq!(s.early_count, 0);
        assert!(!r.histogram_buckets().is_empty());
        // The intervals come from the histogram's ranks: each end within 3 significant
        // digits of the exact order statistic (value 1000 + rank − 1), around the quantile.
        let (l, u) = crate::stats::quantile_ci::ci_ranks(n, 0.99);
        let ci = s.p99_ci_ns.unwrap();
        for (end, rank) in [(ci.low(), l), (ci.high(), u)] {
            let exact = (1_000 + rank.unwrap() - 1) as f64;
            assert!(
                (end.unwrap() - exact).abs() / exact < 2e-3,
                "{end:?} vs {exact}"
            );
        }
        let p99 = s.p99_ns.unwrap();
        assert!(ci.low().unwrap() <= p99 && p99 <= ci.high().unwrap());
    }
}
