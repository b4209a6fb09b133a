//! Confidence intervals of a mean (Student's t).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The two-sided quantile of Student's t with `df` degrees of freedom at `confidence`
/// (e.g. 0.999 gives t such that 99.9 % of the mass lies within ±t).
pub fn t_quantile(confidence: f64, df: u64) -> Option<f64> {
    if df == 0 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df as f64).ok()?;
    Some(dist.inverse_cdf(0.5 + confidence / 2.0))
}

/// The `confidence` interval of the mean of `n` samples with sample standard deviation
/// `sd` (n − 1 denominator): mean ± t(n−1) · sd / √n. `None` for fewer than 2 samples.
pub fn mean_ci(mean: f64, sd: f64, n: u64, confidence: f64) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let half = t_quantile(confidence, n - 1)? * sd / (n as f64).sqrt();
    Some((mean - half, mean + half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_table_values() {
        // Published two-sided critical values.
        let cases = [
            (0.95, 1, 12.706),
            (0.95, 10, 2.228),
            (0.999, 19, 3.883),
            (0.999, 1000, 3.300),
            (0.99, 30, 2.750),
        ];
        for (c, df, t) in cases {
            let got = t_quantile(c, df).unwrap();
            assert!((got - t).abs() < 1e-3, "t({c}, {df}) = {got}, expected {t}");
        }
        assert!(t_quantile(0.999, 0).is_none());
    }

    #[test]
    fn ci_by_hand() {
        // Samples 10, 12, 14, 16, 18: mean 14, sd = sqrt(10) = 3.1623, n = 5,
        // t(0.999, 4) = 8.6103 → half width = 8.6103 * 3.1623 / 2.2361 = 12.177.
        let (lo, hi) = mean_ci(14.0, 10f64.sqrt(), 5, 0.999).unwrap();
        assert!((lo - (14.0 - 12.177)).abs() < 1e-2, "{lo}");
        assert!((hi - (14.0 + 12.177)).abs() < 1e-2, "{hi}");
        assert!(mean_ci(1.0, 0.0, 1, 0.999).is_none());
    }
}
