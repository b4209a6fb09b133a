//! Numbers as the report writes them: three significant digits, scaled units, no
//! trailing zeros (`60.2 µs`, `1.06 ms`, `850 ns`, `12 %`).

/// A duration given in (possibly fractional) nanoseconds.
pub fn ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "–".into();
    }
    if ns == 0.0 {
        return "0".into();
    }
    let a = ns.abs();
    let (v, unit) = if a < 1e3 {
        (ns, "ns")
    } else if a < 1e6 {
        (ns / 1e3, "µs")
    } else if a < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", num(v))
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
    } else {
        2
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(num(12.0), "12");
        assert_eq!(num(0.126), "0.13");
        assert_eq!(num(-0.001), "0");
        assert_eq!(pct(4.8), "4.8 %");
        assert_eq!(ratio(1.517), "×1.52");
    }
}
