//! Human units for durations: ns, µs, ms, s, scaled to keep 3–4 significant digits.

/// Formats a duration given in (possibly fractional, possibly negative) nanoseconds;
/// "–" for a statistic that is absent (`None`: e.g. a p99 of fewer than 100 samples).
pub fn fmt_ns_f(ns: impl Into<Option<f64>>) -> String {
    let Some(ns) = ns.into().filter(|v| v.is_finite()) else {
        return "–".into();
    };
    let sign = if ns < 0.0 { "-" } else { "" };
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (a, "ns")
    } else if a < 1e6 {
        (a / 1e3, "µs")
    } else if a < 1e9 {
        (a / 1e6, "ms")
    } else {
        (a / 1e9, "s")
    };
    let digits = if unit == "ns" && v.fract() == 0.0 {
        0
    } else if v >= 100.0 {
        1
    } else if v >= 10.0 {
        2
    } else {
        3
    };
    format!("{sign}{v:.digits$} {unit}")
}

/// Formats whole nanoseconds.
pub fn fmt_ns(ns: u64) -> String {
    fmt_ns_f(ns as f64)
}

/// Formats a percentage with sensible precision.
pub fn fmt_pct(p: f64) -> String {
    if !p.is_finite() {
        "–".into()
    } else if p.abs() >= 10.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales() {
        assert_eq!(fmt_ns(0), "0 ns");
        assert_eq!(fmt_ns(999), "999 ns");
        assert_eq!(fmt_ns_f(12.5), "12.50 ns");
        assert_eq!(fmt_ns(1_500), "1.500 µs");
        assert_eq!(fmt_ns(65_432), "65.43 µs");
        assert_eq!(fmt_ns(1_083_204), "1.083 ms");
        assert_eq!(fmt_ns(100_089_610), "100.1 ms");
        assert_eq!(fmt_ns(2_000_000_000), "2.000 s");
        assert_eq!(fmt_ns_f(-2_500.0), "-2.500 µs");
        assert_eq!(fmt_ns_f(f64::NAN), "–");
        assert_eq!(fmt_ns_f(None), "–");
        assert_eq!(fmt_ns_f(Some(1_500.0)), "1.500 µs");
        assert_eq!(fmt_pct(4.8), "4.80 %");
        assert_eq!(fmt_pct(99.8), "99.8 %");
    }
}
