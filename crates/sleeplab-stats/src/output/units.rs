//! Numbers as people read them, in two styles for two places:
//!
//! * **terminal** ([`fmt_ns`], [`fmt_ns_f`], [`fmt_pct`]): 3–4 significant digits with
//!   fixed decimals (`1.500 µs`, `65.43 µs`), so numbers line up in table columns;
//! * **prose and charts** ([`ns`], [`num`], [`pct`], [`ratio`]): three significant
//!   digits, no trailing zeros (`60.2 µs`, `1.06 ms`, `12 %`), for sentences, captions,
//!   HTML tables and axis ticks.
//!
//! Both write an absent statistic (`None`, e.g. a p99 of fewer than 100 samples) and a
//! non-finite value as "–", and both pick the unit with the library's
//! [`Unit::fit`] (the largest not above the value), whose units the duration grammar
//! reads back.

use sleeplab::duration::Unit;

// ---- terminal style
/// Formats a duration given in (possibly fractional, possibly negative) nanoseconds;
/// "–" for a statistic that is absent (`None`: e.g. a p99 of fewer than 100 samples).
pub fn fmt_ns_f(ns: impl Into<Option<f64>>) -> String {
    let Some(ns) = ns.into().filter(|v| v.is_finite()) else {
        return "–".into();
    };
    let sign = if ns < 0.0 { "-" } else { "" };
    let unit = Unit::fit(ns);
    let v = ns.abs() / unit.ns() as f64;
    let digits = if unit == Unit::Ns && v.fract() == 0.0 {
        0
    } else if v >= 100.0 {
        1
    } else if v >= 10.0 {
        2
    } else {
        3
    };
    format!("{sign}{v:.digits$} {}", unit.symbol())
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

// ---- prose and chart style
/// A duration given in (possibly fractional) nanoseconds; "–" for an absent statistic.
pub fn ns(ns: impl Into<Option<f64>>) -> String {
    let Some(ns) = ns.into().filter(|v| v.is_finite()) else {
        return "–".into();
    };
    if ns == 0.0 {
        return "0".into();
    }
    let a = ns.abs();
    let mut unit = Unit::fit(ns);
    // 999.96 µs rounds to "1000 µs": write it as 1 ms instead.
    let scaled = a / unit.ns() as f64;
    if let Some(larger) = unit.larger()
        && num(scaled).len() >= 4
        && scaled >= 999.5
    {
        unit = larger;
    }
    format!("{} {}", num(ns / unit.ns() as f64), unit.symbol())
}

/// A number with three significant digits (at most two decimals), no trailing zeros.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 0.1 || a == 0.0 {
        2
    } else {
        // Small values keep three significant digits: 0.00123, not 0.
        ((-a.log10().floor()) as usize + 2).min(12)
    };
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// A percentage: `12 %`, `0.35 %`.
pub fn pct(p: f64) -> String {
    format!("{} %", num(p))
}

/// A ratio: `×1.52`.
pub fn ratio(r: f64) -> String {
    format!("×{}", num(r))
}

/// A change in nanoseconds with its sign always written, the minus as U+2212:
/// `+12.9 µs`, `−8.96 µs`, `0`.
pub fn signed_ns(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return ns(v);
    }
    format!("{}{}", if v > 0.0 { "+" } else { "−" }, ns(v.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_carry_their_sign() {
        assert_eq!(signed_ns(12_900.0), "+12.9 µs");
        assert_eq!(signed_ns(-8_960.0), "−8.96 µs");
        assert_eq!(signed_ns(0.0), "0");
    }

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

    #[test]
    fn three_significant_digits() {
        assert_eq!(ns(0.0), "0");
        assert_eq!(ns(1_000.0), "1 µs");
        assert_eq!(ns(2_500_000.0), "2.5 ms");
        assert_eq!(ns(100.0), "100 ns");
        assert_eq!(ns(1e9), "1 s");
        assert_eq!(ns(16_666_667.0), "16.7 ms");
        assert_eq!(ns(60_213.0), "60.2 µs");
        assert_eq!(ns(1_063_000.0), "1.06 ms");
        assert_eq!(ns(-2_500.0), "-2.5 µs");
        assert_eq!(ns(f64::NAN), "–");
        assert_eq!(ns(999_950.0), "1 ms");
        assert_eq!(ns(999_400.0), "999 µs");
        assert_eq!(ns(0.5), "0.5 ns");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(0.126), "0.13");
        assert_eq!(num(-0.001), "-0.001");
        assert_eq!(num(0.0534), "0.0534");
        assert_eq!(num(1e-13), "0");
        assert_eq!(pct(4.8), "4.8 %");
        assert_eq!(ratio(1.517), "×1.52");
    }
}
