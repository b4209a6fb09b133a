//! Confidence intervals of a mean (Student's t).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Above this many degrees of freedom the quantile comes from an expansion around the
/// normal one: statrs' `StudentsT::inverse_cdf` (its `inv_beta_reg`) never returns for
/// some large df (e.g. 14 434 469 and 18 095 441 at 99.9 %: a sweep cell of ~18 M
/// samples hung its summary, found by `scripts/edge-overflow.sh`).
const LARGE_DF: u64 = 100_000;

/// The two-sided quantile of Student's t with `df` degrees of freedom at `confidence`
/// (e.g. 0.999 gives t such that 99.9 % of the mass lies within ±t).
pub fn t_quantile(confidence: f64, df: u64) -> Option<f64> {
    if df == 0 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    let p = 0.5 + confidence / 2.0;
    if df > LARGE_DF {
        return t_large_df(p, df as f64);
    }
    let dist = StudentsT::new(0.0, 1.0, df as f64).ok()?;
    Some(dist.inverse_cdf(p))
}

/// The one-sided quantile `p` of Student's t for many degrees of freedom `v`: the
/// Cornish–Fisher expansion in 1/v around the normal quantile (Abramowitz & Stegun
/// 26.7.5), three terms: exact to ~1e-9 from v = 1000, to ~1e-14 beyond [`LARGE_DF`].
fn t_large_df(p: f64, v: f64) -> Option<f64> {
    let z = Normal::new(0.0, 1.0).ok()?.inverse_cdf(p);
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    Some(z + g1 / v + g2 / (v * v) + g3 / (v * v * v))
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
    fn large_df_is_fast_exact_and_continuous() {
        // These never returned from statrs (soak regression): now they do, near z.
        for df in [14_434_469, 18_095_441, u64::MAX] {
            let t = t_quantile(0.999, df).unwrap();
            assert!((t - 3.290_526_731_491_9).abs() < 1e-6, "df {df}: {t}");
        }
        // The expansion against published values at df = 1000 (two-sided 95 %, 99.9 %).
        assert!((t_large_df(0.975, 1000.0).unwrap() - 1.962_339).abs() < 1e-6);
        assert!((t_large_df(0.9995, 1000.0).unwrap() - 3.300_283).abs() < 1e-6);
        // No jump where it takes over (statrs itself is ~1e-5 off there).
        for c in [0.95, 0.99, 0.999] {
            let below = t_quantile(c, LARGE_DF).unwrap();
            let above = t_quantile(c, LARGE_DF + 1).unwrap();
            assert!((below - above).abs() < 1e-4, "{c}: {below} vs {above}");
        }
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
