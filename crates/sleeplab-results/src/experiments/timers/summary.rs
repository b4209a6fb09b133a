//! The statistics of one or more accounted runs (one measuring thread, or all of them
//! merged): counts, the seed's error, lateness quantiles, drift.

use crate::tick_account::Account;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, ci_sorted, quantile_sorted, tail_quantile};

/// Statistics of the ticks of one cell (one thread, or all threads merged).
///
/// Lateness is per *scheduled tick* (delivery − `t0 + k·P`, see the accounting model in
/// `docs/TIMERS.md`), so a stall appears in every tick it delayed. The error is the seed's:
/// per received wake, `|interval − P| / P`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct TickStats {
    /// Deadlines scheduled in the run (`seconds / period` per thread).
    pub expected: u64,
    /// Wakes that delivered at least one deadline (the seed's "count").
    pub received: u64,
    /// Deadlines not delivered by a wake of their own (overruns, skipped deadlines,
    /// undelivered ones): `expected − received`.
    pub missed: u64,
    /// Wakes before their own deadline (never expected; never hidden).
    pub early_wakes: u64,
    /// Wakes that stood for no deadline.
    pub extra_wakes: u64,
    /// Mean of |interval − P| / P over received wakes, % (seed 004's "avg error").
    pub avg_error_pct: f64,
    /// Sample standard deviation of that error, percentage points (seed 004's "std dev").
    pub error_stddev_pct: f64,
    /// Mean lateness over delivered ticks, ns.
    pub mean_lateness_ns: f64,
    /// Sample standard deviation of the lateness, ns.
    pub lateness_stddev_ns: f64,
    /// Smallest lateness, ns (negative only for an early wake).
    pub min_lateness_ns: i64,
    /// Median lateness, ns.
    pub median_lateness_ns: f64,
    /// 95 % interval of the median lateness, ns (`stats::quantile_ci`).
    #[serde(default)]
    pub median_lateness_ci_ns: Option<Ci>,
    /// 99th percentile of the lateness, ns (linear interpolation, as numpy); `null`
    /// below 100 delivered ticks (the quantile rule).
    pub p99_lateness_ns: Option<f64>,
    /// 95 % interval of the p99 lateness, ns.
    #[serde(default)]
    pub p99_lateness_ci_ns: Option<Ci>,
    /// Largest lateness, ns.
    pub max_lateness_ns: i64,
    /// The last received wake − its own deadline, ns (worst thread when merged).
    pub end_lateness_ns: i64,
    /// The last received wake − (t0 + received·P), ns: the drift of a program that
    /// counts wakes as ticks (worst thread when merged).
    pub drift_ns: i64,
}

fn mean_sd(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    for x in values {
        n += 1;
        let d = x - mean;
        mean += d / n as f64;
        m2 += d * (x - mean);
    }
    let sd = if n > 1 {
        (m2 / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

impl TickStats {
    /// The statistics of the given accounts taken together.
    pub fn of(accounts: &[&Account]) -> Self {
        let sum = |f: fn(&Account) -> u64| accounts.iter().map(|a| f(a)).sum::<u64>();
        let errors = accounts.iter().flat_map(|a| a.error_pct.iter().copied());
        let (avg_error_pct, error_stddev_pct) = mean_sd(errors);
        let lateness = accounts
            .iter()
            .flat_map(|a| a.ticks.iter().map(|t| t.lateness_ns as f64));
        let (mean_lateness_ns, lateness_stddev_ns) = mean_sd(lateness);
        // Quantiles on an offset copy so negative lateness sorts correctly as u64.
        let mut sorted: Vec<i64> = accounts
            .iter()
            .flat_map(|a| a.ticks.iter().map(|t| t.lateness_ns))
            .collect();
        sorted.sort_unstable();
        let min = sorted.first().copied().unwrap_or(0);
        let shifted: Vec<u64> = sorted.iter().map(|&x| (x - min) as u64).collect();
        let q = |p: f64| quantile_sorted(&shifted, p).map_or(0.0, |v| v + min as f64);
        let p99 = tail_quantile(&shifted, 0.99).map(|v| v + min as f64);
        let worst = |f: fn(&Account) -> i64| {
            accounts
                .iter()
                .filter(|a| a.received > 0)
                .map(|a| f(a))
                .max_by_key(|v| v.unsigned_abs())
                .unwrap_or(0)
        };
        Self {
            expected: sum(|a| a.expected),
            received: sum(|a| a.received),
            missed: sum(|a| a.missed),
            early_wakes: sum(|a| a.early),
            extra_wakes: sum(|a| a.extra),
            avg_error_pct,
            error_stddev_pct,
            mean_lateness_ns,
            lateness_stddev_ns,
            min_lateness_ns: min,
            median_lateness_ns: q(0.5),
            median_lateness_ci_ns: ci_sorted(&sorted, 0.5, |v| v as f64),
            p99_lateness_ns: p99,
            p99_lateness_ci_ns: ci_sorted(&sorted, 0.99, |v| v as f64),
            max_lateness_ns: sorted.last().copied().unwrap_or(0),
            end_lateness_ns: worst(|a| a.end_lateness_ns),
            drift_ns: worst(|a| a.drift_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tick_account::{Schedule, Wake, account};

    #[test]
    fn hand_computed() {
        // Lateness 10, 20, 30, 40 µs (one thread) and 50 µs + a 2-tick overrun (another).
        let ms = 1_000_000u64;
        let s = Schedule {
            t0_ns: 0,
            period_ns: ms,
            ticks: 4,
        };
        let a: Vec<Wake> = (1..=4)
            .map(|k| Wake {
                wake_ns: k * ms + k * 10_000,
                expirations: 1,
            })
            .collect();
        let a = account(&s, &a);
        let s2 = Schedule { ticks: 2, ..s };
        let b = account(
            &s2,
            &[Wake {
                wake_ns: 2 * ms + 50_000,
                expirations: 2,
            }],
        );
        let one = TickStats::of(&[&a]);
        assert_eq!((one.expected, one.received, one.missed), (4, 4, 0));
        assert!((one.mean_lateness_ns - 25_000.0).abs() < 1e-6);
        // Sample sd of 10, 20, 30, 40 µs = 12.910 µs.
        assert!((one.lateness_stddev_ns - 12_909.944).abs() < 1e-2);
        assert_eq!((one.min_lateness_ns, one.max_lateness_ns), (10_000, 40_000));
        // Four ticks cannot resolve a p99 (the quantile rule needs 100).
        assert_eq!(one.p99_lateness_ns, None);
        // Errors: intervals 1.01, 1.01, 1.01, 1.01 ms → 1 % each.
        assert!((one.avg_error_pct - 1.0).abs() < 1e-9);
        assert!(one.error_stddev_pct.abs() < 1e-9);
        assert_eq!(one.end_lateness_ns, 40_000);

        let both = TickStats::of(&[&a, &b]);
        assert_eq!((both.expected, both.received, both.missed), (6, 5, 1));
        // Lateness: 10, 20, 30, 40, 1050, 50 µs → mean 200 µs.
        assert!((both.mean_lateness_ns - 200_000.0).abs() < 1e-6);
        assert_eq!(both.max_lateness_ns, 1_050_000);
        assert!((both.median_lateness_ns - 35_000.0).abs() < 1e-6);
        // Six ticks bound their median by the 1st and 6th smallest (P(B = 0) = 1.6 %).
        assert_eq!(
            both.median_lateness_ci_ns,
            Some(Ci(Some(10_000.0), Some(1_050_000.0)))
        );
        assert_eq!(both.p99_lateness_ci_ns, None);
        // b's drift: 2.05 ms − 1 ms = 1.05 ms is the worst.
        assert_eq!(both.drift_ns, 1_050_000);
        assert_eq!(TickStats::of(&[]), TickStats::default());
    }
}
