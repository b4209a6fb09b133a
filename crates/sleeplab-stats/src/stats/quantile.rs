//! Quantiles of sorted samples, by linear interpolation between closest ranks (the
//! definition numpy and pandas use by default, so results can be checked with them),
//! and the rule that decides whether a sample can resolve a quantile at all.
//!
//! **The quantile rule.** A `q` quantile is reported only where `n·(1−q) ≥ 1`: at least
//! one sample lies above it, so it is not the largest sample renamed. p90 needs n ≥ 10,
//! p99 n ≥ 100, p99.9 n ≥ 1000. Below that the statistic is `None` (`null` in JSON, "–"
//! on screen, always next to n). The median is the middle sample and is reported for
//! every n ≥ 1.

/// The smallest sample size whose `q` quantile is reported: the least n with
/// n·(1−q) ≥ 1 (2 for the median, 10 for p90, 100 for p99, 1000 for p99.9).
/// `u64::MAX` for q ≥ 1 (the maximum is not a quantile any sample resolves).
pub fn min_samples(q: f64) -> u64 {
    if q >= 1.0 {
        return u64::MAX;
    }
    if q <= 0.0 {
        return 1;
    }
    // 1/(1−q) carries float noise (1/(1−0.9) = 10.000000000000002): shave it first.
    ((1.0 / (1.0 - q)) - 1e-9).ceil().max(1.0) as u64
}

/// Whether `n` samples resolve the `q` quantile (the quantile rule).
pub fn resolves(n: u64, q: f64) -> bool {
    n >= min_samples(q)
}

/// The `q` quantile (0 ≤ q ≤ 1) of `sorted` (ascending). `None` when empty.
/// This is the raw interpolation; tables and findings use [`tail_quantile`].
pub fn quantile_sorted(sorted: &[u64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let q = q.clamp(0.0, 1.0);
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    Some(sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * frac)
}

/// The `q` quantile of `sorted` when the sample resolves it ([`resolves`]), else `None`.
pub fn tail_quantile(sorted: &[u64], q: f64) -> Option<f64> {
    if resolves(sorted.len() as u64, q) {
        quantile_sorted(sorted, q)
    } else {
        None
    }
}

/// Where the `q` quantile of `n` samples sits, counted from the largest (1): at or above
/// that sample and below the next larger one (the interpolation at q·(n − 1)). Where the
/// rule only just admits a quantile it is nearly the sample's maximum: the p99 of 100
/// samples is about the 2nd largest, of 150 the 3rd, of 1000 the 11th. 0 for no samples.
pub fn rank_from_top(n: u64, q: f64) -> u64 {
    if n == 0 {
        return 0;
    }
    n - (q.clamp(0.0, 1.0) * (n - 1) as f64).floor() as u64
}

/// The `q` quantile of signed `sorted` values (ascending) under the quantile rule.
pub fn tail_quantile_i64(sorted: &[i64], q: f64) -> Option<f64> {
    let min = *sorted.first()?;
    // Shift to unsigned for the shared interpolation, then back.
    let shifted: Vec<u64> = sorted
        .iter()
        .map(|&x| (i128::from(x) - i128::from(min)) as u64)
        .collect();
    tail_quantile(&shifted, q).map(|v| v + min as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_just_resolved_p99_is_near_the_largest() {
        assert_eq!(rank_from_top(100, 0.99), 2);
        assert_eq!(rank_from_top(150, 0.99), 3);
        assert_eq!(rank_from_top(1000, 0.99), 11);
        assert_eq!(rank_from_top(10, 0.9), 2);
        assert_eq!(rank_from_top(0, 0.99), 0);
        // It sits between that sample and the next larger one.
        let s: Vec<u64> = (1..=150).collect();
        let v = quantile_sorted(&s, 0.99).unwrap();
        assert!((148.0..=149.0).contains(&v), "{v}");
    }

    #[test]
    fn matches_numpy_linear() {
        let s = [1, 2, 3, 4];
        assert_eq!(quantile_sorted(&s, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&s, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&s, 1.0), Some(4.0));
        // numpy.quantile([1,2,3,4], 0.9) == 3.7
        assert!((quantile_sorted(&s, 0.9).unwrap() - 3.7).abs() < 1e-12);
        assert_eq!(quantile_sorted(&[7], 0.99), Some(7.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
    }

    #[test]
    fn the_rule_at_its_edges() {
        assert_eq!(min_samples(0.5), 2);
        assert_eq!(min_samples(0.9), 10);
        assert_eq!(min_samples(0.99), 100);
        assert_eq!(min_samples(0.999), 1000);
        assert_eq!(min_samples(1.0), u64::MAX);
        assert!(!resolves(99, 0.99) && resolves(100, 0.99));
        assert!(!resolves(999, 0.999) && resolves(1000, 0.999));
        let s: Vec<u64> = (1..=99).collect();
        assert_eq!(tail_quantile(&s, 0.99), None);
        assert!(tail_quantile(&s, 0.9).is_some());
        let s: Vec<u64> = (1..=100).collect();
        assert!((tail_quantile(&s, 0.99).unwrap() - 99.01).abs() < 1e-9);
        assert_eq!(tail_quantile_i64(&[-5, 0, 5], 0.5), Some(0.0));
        assert_eq!(tail_quantile_i64(&[], 0.5), None);
    }

    proptest! {
        /// n·(1−q) ≥ 1 exactly when the rule says the quantile resolves.
        #[test]
        fn rule_is_n_times_tail_at_least_one(n in 1u64..5_000, permille in 1u32..999) {
            let q = f64::from(permille) / 1000.0;
            let exact = n * u64::from(1000 - permille) >= 1000;
            prop_assert_eq!(resolves(n, q), exact, "n {} q {}", n, q);
        }
    }
}
