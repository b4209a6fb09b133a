//! Quantiles of sorted samples, by linear interpolation between closest ranks (the
//! definition numpy and pandas use by default, so results can be checked with them).

/// The `q` quantile (0 ≤ q ≤ 1) of `sorted` (ascending). `None` when empty.
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
