//! The seeds' own tables, each in the seed's form beside the report's own sections:
//! [`short`] (seed 001: the ground-truth floor and the per-call confidence intervals),
//! [`runtimes`] (seed 003: avg, σ and ideal vs actual total per runtime sleep request),
//! [`periodic`] (seed 004: count, avg error and σ per period, for the Linux periodic
//! timers and the runtimes' periodic timers). Seed 000's tables and scatter are in the
//! sweep's sections (`sweep/timertest.rs`), seed 002's figure 2 in `sweep/figure2.rs`.

pub(crate) mod periodic;
pub(crate) mod runtimes;
pub(crate) mod short;

/// The σ convention of seeds 000 and 003, stated in their tables' captions.
pub const SIGMA_N: &str = "σ divides by n, as the seed's program did (√(nΣx² − (Σx)²)/n); results.json's stddev_ns divides by n − 1, so σ here is stddev_ns × √((n − 1)/n)";

/// The standard deviation dividing by n (the seeds'), from `stddev` dividing by n − 1
/// over `n` samples: `stddev × √((n − 1)/n)`; 0 below two samples.
pub fn sigma_n(stddev: f64, n: u64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let n = n as f64;
    stddev * ((n - 1.0) / n).sqrt()
}

/// Whole nanoseconds with thin-space thousands, as seed 001 wrote them: `498 577 ns`.
pub fn whole_ns(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let r = v.round();
    let digits = format!("{}", r.abs() as u128);
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{202f}');
        }
        out.push(ch);
    }
    if r < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab_stats::summarize;

    #[test]
    fn sigma_dividing_by_n_is_hand_computed() {
        // 10, 12, 14, 16, 18: mean 14, squared deviations 40; σ(n) = √(40/5) = √8,
        // σ(n − 1) = √10.
        let s = summarize(&[10, 12, 14, 16, 18], 0);
        assert!((sigma_n(s.stddev_ns, s.count) - 8f64.sqrt()).abs() < 1e-12);
        // The seed's own formula: √(nΣx² − (Σx)²)/n.
        let (n, sum, sq) = (5.0f64, 70.0f64, 1020.0f64);
        assert!((sigma_n(s.stddev_ns, s.count) - (n * sq - sum * sum).sqrt() / n).abs() < 1e-12);
        assert_eq!(sigma_n(3.0, 1), 0.0);
    }

    #[test]
    fn whole_nanoseconds_as_the_seed_wrote_them() {
        assert_eq!(whole_ns(498_577.4), "498\u{202f}577");
        assert_eq!(whole_ns(130.0), "130");
        assert_eq!(whole_ns(-1_234.0), "-1\u{202f}234");
        assert_eq!(whole_ns(f64::NAN), "–");
    }
}
