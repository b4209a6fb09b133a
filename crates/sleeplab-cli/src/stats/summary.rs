//! The summary of one cell of samples: what every table, chart and comparison reads.

use super::quantile_sorted;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Statistics of a set of elapsed-time samples (ns) for one requested duration.
///
/// Quantiles are exact (linear interpolation, as numpy/pandas) when every sample was
/// kept, and read from the HDR histogram (3 significant digits) otherwise;
/// `quantiles_exact` says which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Mean elapsed, ns.
    pub mean_ns: f64,
    /// Sample standard deviation (n − 1 denominator), ns.
    pub stddev_ns: f64,
    /// Smallest sample, ns.
    pub min_ns: u64,
    /// Median, ns.
    pub median_ns: f64,
    /// 90th percentile, ns.
    pub p90_ns: f64,
    /// 99th percentile, ns.
    pub p99_ns: f64,
    /// 99.9th percentile, ns.
    pub p999_ns: f64,
    /// Largest sample, ns.
    pub max_ns: u64,
    /// Mean of (elapsed − requested), ns; negative when the mechanism returns early.
    pub mean_overshoot_ns: f64,
    /// Lower end of the 99.9 % confidence interval of the mean (Student t), ns.
    pub ci999_low_ns: Option<f64>,
    /// Upper end of the 99.9 % confidence interval of the mean, ns.
    pub ci999_high_ns: Option<f64>,
    /// Samples shorter than requested: early wakeups, reported and never hidden.
    pub early_count: u64,
    /// Sum of all samples, ns (the "actual total" next to count × requested).
    pub total_ns: u64,
    /// Whether the quantiles come from all samples (true) or the histogram (false).
    pub quantiles_exact: bool,
}

/// Summarizes `samples` (any order) for a request of `requested_ns`.
/// This is the exact path used when every sample is at hand; [`super::Recorder`] uses it
/// too while its raw buffer holds all samples.
pub fn summarize(samples: &[u64], requested_ns: u64) -> Summary {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    if n == 0 {
        return Summary {
            quantiles_exact: true,
            ..Summary::default()
        };
    }
    let (mean, m2) = sorted
        .iter()
        .enumerate()
        .fold((0.0f64, 0.0f64), |(mean, m2), (i, &x)| {
            let x = x as f64;
            let delta = x - mean;
            let mean = mean + delta / (i + 1) as f64;
            (mean, m2 + delta * (x - mean))
        });
    let sd = if n > 1 {
        (m2 / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let q = |p| quantile_sorted(&sorted, p).unwrap_or(0.0);
    let ci = super::mean_ci(mean, sd, n, 0.999);
    Summary {
        count: n,
        mean_ns: mean,
        stddev_ns: sd,
        min_ns: sorted[0],
        median_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
        max_ns: sorted[sorted.len() - 1],
        mean_overshoot_ns: mean - requested_ns as f64,
        ci999_low_ns: ci.map(|c| c.0),
        ci999_high_ns: ci.map(|c| c.1),
        early_count: sorted.iter().filter(|&&x| x < requested_ns).count() as u64,
        total_ns: sorted.iter().fold(0u64, |a, &x| a.saturating_add(x)),
        quantiles_exact: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // 10, 12, 14, 16, 18 requested 13: mean 14, sd sqrt(10), median 14,
        // p90 = 16 + 0.6*2 = 17.2 (numpy linear), early = 2 (10, 12), overshoot 1.
        let s = summarize(&[18, 10, 14, 12, 16], 13);
        assert_eq!(s.count, 5);
        assert!((s.mean_ns - 14.0).abs() < 1e-12);
        assert!((s.stddev_ns - 10f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.min_ns, 10);
        assert_eq!(s.max_ns, 18);
        assert!((s.median_ns - 14.0).abs() < 1e-12);
        assert!((s.p90_ns - 17.2).abs() < 1e-9);
        assert!((s.p99_ns - 17.92).abs() < 1e-9);
        assert_eq!(s.early_count, 2);
        assert!((s.mean_overshoot_ns - 1.0).abs() < 1e-12);
        assert_eq!(s.total_ns, 70);
        let (lo, hi) = (s.ci999_low_ns.unwrap(), s.ci999_high_ns.unwrap());
        assert!((hi - lo - 2.0 * 12.177).abs() < 0.02, "{lo}..{hi}");
    }

    #[test]
    fn single_and_empty() {
        let s = summarize(&[5], 5);
        assert_eq!((s.count, s.min_ns, s.max_ns, s.early_count), (1, 5, 5, 0));
        assert_eq!(s.stddev_ns, 0.0);
        assert!(s.ci999_low_ns.is_none());
        assert_eq!(summarize(&[], 1).count, 0);
    }
}
