//! The summary of one cell of samples: what every table, chart and comparison reads.

use super::quantile_ci::{Ci, ci_sorted_u64};
use super::{Stat, quantile_sorted, tail_quantile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Statistics of a set of elapsed-time samples (ns) for one requested duration.
///
/// Quantiles are exact (linear interpolation, as numpy/pandas) when every sample was
/// kept, and read from the HDR histogram (3 significant digits) otherwise;
/// `quantiles_exact` says which. The tail quantiles follow the quantile rule
/// (`stats::quantile`): `None` (JSON `null`) where `count·(1−q) < 1`. Beside each
/// quantile, its distribution-free 95 % interval from order statistics
/// (`stats::quantile_ci`): `[low, high]`, an end `null` where its rank runs off the
/// sample, the whole `null` where the quantile is or neither end is bounded.
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
    /// 95 % interval of the median, ns.
    #[serde(default)]
    pub median_ci_ns: Option<Ci>,
    /// 90th percentile, ns; `null` below 10 samples.
    pub p90_ns: Option<f64>,
    /// 95 % interval of the 90th percentile, ns.
    #[serde(default)]
    pub p90_ci_ns: Option<Ci>,
    /// 99th percentile, ns; `null` below 100 samples.
    pub p99_ns: Option<f64>,
    /// 95 % interval of the 99th percentile, ns (open above, `[low, null]`, below 368
    /// samples).
    #[serde(default)]
    pub p99_ci_ns: Option<Ci>,
    /// 99.9th percentile, ns; `null` below 1000 samples.
    pub p999_ns: Option<f64>,
    /// 95 % interval of the 99.9th percentile, ns (open above below 3688 samples).
    #[serde(default)]
    pub p999_ci_ns: Option<Ci>,
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
/// This is the exact path used when every sample is at hand; `Recorder` uses it
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
    Moments {
        n,
        mean,
        m2,
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        early: sorted.iter().filter(|&&x| x < requested_ns).count() as u64,
        total: sorted.iter().fold(0u64, |a, &x| a.saturating_add(x)),
    }
    .summary(
        requested_ns,
        quantile_sorted(&sorted, 0.5).unwrap_or(0.0),
        |p| tail_quantile(&sorted, p),
        |p| ci_sorted_u64(&sorted, p),
        true,
    )
}

/// The exact moments of a sample (Welford's mean and sum of squared deviations, the
/// extremes, the early count, the total): what both paths to a [`Summary`] (all
/// samples, or a `Recorder`'s histogram) know alike.
pub(super) struct Moments {
    /// Number of samples (≥ 1).
    pub n: u64,
    /// Mean, ns.
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
    /// Smallest sample, ns.
    pub min: u64,
    /// Largest sample, ns.
    pub max: u64,
    /// Samples below the request.
    pub early: u64,
    /// Sum of the samples (saturating), ns.
    pub total: u64,
}

impl Moments {
    /// The summary of these moments with the median, the tail quantiles (`q`, `None`
    /// where the sample cannot resolve one) and their intervals (`qci`) read by the
    /// caller's path; `exact` says which path that is.
    pub(super) fn summary(
        &self,
        requested_ns: u64,
        median: f64,
        q: impl Fn(f64) -> Option<f64>,
        qci: impl Fn(f64) -> Option<Ci>,
        exact: bool,
    ) -> Summary {
        let n = self.n;
        let sd = if n > 1 {
            (self.m2 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let ci = super::mean_ci(self.mean, sd, n, 0.999);
        Summary {
            count: n,
            mean_ns: self.mean,
            stddev_ns: sd,
            min_ns: self.min,
            median_ns: median,
            median_ci_ns: qci(0.5),
            p90_ns: q(0.9),
            p90_ci_ns: qci(0.9),
            p99_ns: q(0.99),
            p99_ci_ns: qci(0.99),
            p999_ns: q(0.999),
            p999_ci_ns: qci(0.999),
            max_ns: self.max,
            mean_overshoot_ns: self.mean - requested_ns as f64,
            ci999_low_ns: ci.map(|c| c.0),
            ci999_high_ns: ci.map(|c| c.1),
            early_count: self.early,
            total_ns: self.total,
            quantiles_exact: exact,
        }
    }
}

impl Summary {
    /// The value of `stat`, `None` where the sample cannot resolve it (or it is a
    /// statistic a summary does not hold).
    pub fn get(&self, stat: Stat) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        match stat {
            Stat::Min => Some(self.min_ns as f64),
            Stat::Median => Some(self.median_ns),
            Stat::Mean => Some(self.mean_ns),
            Stat::P90 => self.p90_ns,
            Stat::P99 => self.p99_ns,
            Stat::P999 => self.p999_ns,
            Stat::Max => Some(self.max_ns as f64),
            Stat::Cpu => None,
        }
    }

    /// The 95 % interval of `stat` (a quantile: median, p90, p99, p99.9); `None` for the
    /// other statistics and where the sample cannot bound it.
    pub fn ci(&self, stat: Stat) -> Option<Ci> {
        stat.ci_among([
            self.median_ci_ns,
            self.p90_ci_ns,
            self.p99_ci_ns,
            self.p999_ci_ns,
            None,
        ])
    }

    /// The highest tail quantile this sample resolves (p99.9, p99 or p90) and its value.
    pub fn tail(&self) -> Option<(Stat, f64)> {
        [Stat::P999, Stat::P99, Stat::P90]
            .into_iter()
            .find_map(|s| self.get(s).map(|v| (s, v)))
    }

    /// Applies the quantile rule to quantiles read from elsewhere (an old file, a
    /// hand-built summary): any the count cannot resolve become `None`.
    pub fn enforce_quantile_rule(&mut self) {
        for (stat, v, ci) in [
            (Stat::P90, &mut self.p90_ns, &mut self.p90_ci_ns),
            (Stat::P99, &mut self.p99_ns, &mut self.p99_ci_ns),
            (Stat::P999, &mut self.p999_ns, &mut self.p999_ci_ns),
        ] {
            if !stat.resolved_by(self.count) {
                *v = None;
                *ci = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        // 10, 12, 14, 16, 18 requested 13: mean 14, sd sqrt(10), median 14,
        // early = 2 (10, 12), overshoot 1.
        let s = summarize(&[18, 10, 14, 12, 16], 13);
        assert_eq!(s.count, 5);
        assert!((s.mean_ns - 14.0).abs() < 1e-12);
        assert!((s.stddev_ns - 10f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.min_ns, 10);
        assert_eq!(s.max_ns, 18);
        assert!((s.median_ns - 14.0).abs() < 1e-12);
        // Five samples resolve no tail quantile: p90 needs 10, p99 100, p99.9 1000.
        assert_eq!((s.p90_ns, s.p99_ns, s.p999_ns), (None, None, None));
        assert_eq!((s.p90_ci_ns, s.p99_ci_ns, s.p999_ci_ns), (None, None, None));
        // Nor can five bound their median at 95 % (P(all five above it) = 3.1 %).
        assert_eq!(s.median_ci_ns, None);
        assert_eq!(s.tail(), None);
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
        assert_eq!(summarize(&[], 1).get(Stat::Median), None);
    }

    #[test]
    fn tail_quantiles_appear_at_their_sample_sizes() {
        // 1..=n: numpy's linear p90 of 1..=10 is 9.1, p99 of 1..=100 is 99.01.
        let s = summarize(&(1..=10).collect::<Vec<u64>>(), 0);
        assert!((s.p90_ns.unwrap() - 9.1).abs() < 1e-9);
        assert_eq!((s.p99_ns, s.tail().map(|t| t.0)), (None, Some(Stat::P90)));
        let s = summarize(&(1..=100).collect::<Vec<u64>>(), 0);
        assert!((s.p99_ns.unwrap() - 99.01).abs() < 1e-9);
        assert_eq!(s.p999_ns, None);
        // Their intervals: the 40th and 61st of 100 for the median, the 97th and an open
        // upper end for the p99 (stats::quantile_ci's hand-computed ranks).
        assert_eq!(s.median_ci_ns, Some(Ci(Some(40.0), Some(61.0))));
        assert_eq!(s.p99_ci_ns, Some(Ci(Some(97.0), None)));
        assert_eq!(s.ci(Stat::P99), s.p99_ci_ns);
        assert_eq!((s.p999_ci_ns, s.ci(Stat::Mean)), (None, None));
        let s = summarize(&(1..=1000).collect::<Vec<u64>>(), 0);
        assert!((s.p999_ns.unwrap() - 999.001).abs() < 1e-9);
        assert_eq!(s.tail().map(|t| t.0), Some(Stat::P999));
        // Even n: the median is the mean of the two middle values.
        assert_eq!(summarize(&[1, 2, 3, 10], 0).median_ns, 2.5);
    }

    #[test]
    fn the_rule_is_enforced_on_quantiles_from_elsewhere() {
        let mut s = summarize(&(1..=100).collect::<Vec<u64>>(), 0);
        s.count = 99;
        s.p999_ns = Some(1.0);
        s.enforce_quantile_rule();
        assert_eq!((s.p99_ns.is_some(), s.p999_ns), (false, None));
        assert_eq!(s.p99_ci_ns, None);
        assert!(s.p90_ns.is_some());
    }
}
