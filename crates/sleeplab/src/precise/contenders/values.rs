//! The text forms of setting values: decimal numbers and durations with a unit.

/// A finite, non-negative decimal number.
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    ok.then(|| s.parse::<f64>().ok())
        .flatten()
        .filter(|x| x.is_finite())
}

/// A duration with a unit (`ns`, `us`, `µs`, `ms`, `s`), e.g. `250us` or `1.5ms`, in ns
/// (rounded to the nearest ns; `None` for no unit, a bad number or beyond `u64`).
pub fn parse_duration_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    let units = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|&(u, scale)| s.strip_suffix(u).map(|n| (n, scale)))?;
    let ns = (parse_number(number)? * scale).round();
    (ns < u64::MAX as f64).then_some(ns as u64)
}

/// `ns` in the largest unit that shows it exactly (`250us`, `1ms`, `1500ns`).
pub(crate) fn format_duration(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("250us"), Some(250_000));
        assert_eq!(parse_duration_ns("250µs"), Some(250_000));
        assert_eq!(parse_duration_ns("1.5ms"), Some(1_500_000));
        assert_eq!(parse_duration_ns("2s"), Some(2_000_000_000));
        assert_eq!(parse_duration_ns("7ns"), Some(7));
        for bad in ["", "5", "ms", "-1ms", "1e3ns", "1.2.3ms", "99999999999999s"] {
            assert_eq!(parse_duration_ns(bad), None, "{bad}");
        }
        assert_eq!(format_duration(0), "0ns");
        assert_eq!(format_duration(1_500), "1500ns");
        assert_eq!(format_duration(3_000_000_000), "3s");
    }
}
