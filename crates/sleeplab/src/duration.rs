//! Durations as text: the one grammar every surface reads (the command line's flags, the
//! strategy settings `precise:tol=50us`, the Python binding's option strings) and the one
//! table of units every surface writes with.
//!
//! The grammar: a decimal number and a unit, `ns`, `us`, `µs` (U+00B5), `μs` (U+03BC),
//! `ms` or `s`; `0` needs no unit. The arithmetic is exact (no floating point: `1.5ms` is
//! 1 500 000 ns). Refused: a value that is not a whole number of nanoseconds (`0.5ns`,
//! `1.0000000001s`), a sign, an exponent, a missing or unknown unit, and anything beyond
//! `u64::MAX` ns. A surface with a tighter limit (the CLI's one day) checks it after.
//!
//! ```
//! use sleeplab::duration::{format_ns, parse_ns};
//!
//! assert_eq!(parse_ns("1.5ms"), Ok(1_500_000));
//! assert_eq!(parse_ns("2μs"), Ok(2_000));
//! assert!(parse_ns("0.5ns").is_err());
//! assert_eq!(format_ns(250_000), "250us"); // reads back with parse_ns
//! ```

/// A unit of time, from the nanosecond to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl Unit {
    /// Every unit, smallest first.
    pub const ALL: [Unit; 4] = [Unit::Ns, Unit::Us, Unit::Ms, Unit::S];

    /// Nanoseconds in one of this unit.
    pub const fn ns(self) -> u64 {
        match self {
            Unit::Ns => 1,
            Unit::Us => 1_000,
            Unit::Ms => 1_000_000,
            Unit::S => 1_000_000_000,
        }
    }

    /// The ASCII suffix the grammar reads and [`format_ns`] writes (`us`).
    pub const fn suffix(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::S => "s",
        }
    }

    /// The symbol for people (`µs`), which the grammar reads too.
    pub const fn symbol(self) -> &'static str {
        match self {
            Unit::Us => "µs",
            other => other.suffix(),
        }
    }

    /// The unit a written suffix names: [`suffix`](Self::suffix), [`symbol`](Self::symbol)
    /// or `μs` (the Greek mu, U+03BC, which looks the same as the micro sign).
    pub fn from_suffix(text: &str) -> Option<Unit> {
        match text {
            "μs" => Some(Unit::Us),
            _ => Self::ALL
                .into_iter()
                .find(|u| u.suffix() == text || u.symbol() == text),
        }
    }

    /// The largest unit of which `ns` is a whole number (`Ns` for 0): the unit
    /// [`format_ns`] writes.
    pub fn exact(ns: u64) -> Unit {
        Self::ALL
            .into_iter()
            .rev()
            .find(|u| ns != 0 && ns % u.ns() == 0)
            .unwrap_or(Unit::Ns)
    }

    /// The largest unit not above `ns` in magnitude (`Ns` below 1 µs, and for NaN): the
    /// unit a number for people is written in (`65.43 µs`, `1.06 ms`).
    pub fn fit(ns: f64) -> Unit {
        let a = ns.abs();
        Self::ALL
            .into_iter()
            .rev()
            .find(|u| a >= u.ns() as f64)
            .unwrap_or(Unit::Ns)
    }

    /// The next larger unit, if any.
    pub fn larger(self) -> Option<Unit> {
        Self::ALL.into_iter().find(|u| *u > self)
    }
}

/// What is wrong with a duration's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationProblem {
    /// Nothing but white space.
    #[error("empty")]
    Empty,
    /// A number other than zero without a unit.
    #[error("missing unit (use ns, us, µs, ms or s)")]
    MissingUnit,
    /// A leading `-` or `+`.
    #[error("must not be negative or signed")]
    Signed,
    /// A unit the grammar does not know (as written).
    #[error("unknown unit {0:?} (use ns, us, µs, ms or s)")]
    UnknownUnit(String),
    /// A unit with no number before it.
    #[error("no number before the unit")]
    NoNumber,
    /// `1.5.3ms`.
    #[error("more than one decimal point")]
    TwoPoints,
    /// `.ms`.
    #[error("no digits")]
    NoDigits,
    /// Not a whole number of nanoseconds (`0.5ns`, `1.0000000001s`).
    #[error("finer than 1 ns")]
    SubNanosecond,
    /// More than `u64::MAX` ns (about 584 years).
    #[error("too long (the maximum is 2^64 - 1 ns, about 584 years)")]
    Overflow,
}

/// A duration's text that [`parse_ns`] refused: the text as given and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?}: {problem}")]
pub struct DurationError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub problem: DurationProblem,
}

/// Parses a duration (see the [module docs](self) for the grammar) into nanoseconds.
pub fn parse_ns(text: &str) -> Result<u64, DurationError> {
    parse(text).map_err(|problem| DurationError {
        text: text.to_owned(),
        problem,
    })
}

fn parse(text: &str) -> Result<u64, DurationProblem> {
    use DurationProblem as P;
    let s = text.trim();
    if s.is_empty() {
        return Err(P::Empty);
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let unit = unit.trim();
    let unit_ns = match Unit::from_suffix(unit) {
        Some(u) => u.ns(),
        None if unit.is_empty() => {
            if number.is_empty() || !number.chars().all(|c| c == '0' || c == '.') {
                return Err(P::MissingUnit);
            }
            1
        }
        None if unit.starts_with('-') || unit.starts_with('+') && number.is_empty() => {
            return Err(P::Signed);
        }
        None => return Err(P::UnknownUnit(unit.to_owned())),
    };
    if number.is_empty() {
        return Err(P::NoNumber);
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    if frac_part.contains('.') {
        return Err(P::TwoPoints);
    }
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(P::NoDigits);
    }
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| P::Overflow)?
    };
    let mut ns = int.checked_mul(unit_ns).ok_or(P::Overflow)?;
    // Each fractional digit must land on a whole nanosecond.
    let mut scale = unit_ns;
    for (i, c) in frac_part.char_indices() {
        if scale % 10 != 0 {
            if frac_part[i..].chars().any(|c| c != '0') {
                return Err(P::SubNanosecond);
            }
            break;
        }
        scale /= 10;
        let digit = u64::from(c.to_digit(10).unwrap_or(0));
        ns = ns.checked_add(digit * scale).ok_or(P::Overflow)?;
    }
    Ok(ns)
}

/// `ns` in the largest unit that shows it exactly, ASCII suffix (`250us`, `1ms`,
/// `1500ns`, `0ns`): what [`parse_ns`] reads back to the same value.
pub fn format_ns(ns: u64) -> String {
    let unit = Unit::exact(ns);
    format!("{}{}", ns / unit.ns(), unit.suffix())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_exact_decimals() {
        let cases = [
            ("0", 0),
            ("0ns", 0),
            ("0.0", 0),
            ("00", 0),
            ("1ns", 1),
            ("50us", 50_000),
            ("50µs", 50_000),
            ("50μs", 50_000),
            ("1.5ms", 1_500_000),
            (".5ms", 500_000),
            ("1s", 1_000_000_000),
            ("0.000000001s", 1),
            ("2.50us", 2_500),
            ("1.0ns", 1),
            (" 3ms ", 3_000_000),
            ("5 ms", 5_000_000),
            ("18446744073709551615ns", u64::MAX),
            ("18446744073.709551615s", u64::MAX),
            // The cases of the settings' former parser (lab/strategies/values.rs).
            ("250us", 250_000),
            ("250µs", 250_000),
            ("2s", 2_000_000_000),
            ("7ns", 7),
        ];
        for (text, ns) in cases {
            assert_eq!(parse_ns(text), Ok(ns), "{text}");
        }
    }

    #[test]
    fn refusals_name_the_text_and_the_problem() {
        use DurationProblem as P;
        let cases = [
            ("", P::Empty),
            ("  ", P::Empty),
            ("5", P::MissingUnit),
            ("-1ms", P::Signed),
            ("+5ms", P::Signed),
            ("NaN", P::UnknownUnit("NaN".into())),
            ("1e3ms", P::UnknownUnit("e3ms".into())),
            ("0x10ns", P::UnknownUnit("x10ns".into())),
            ("1,5ms", P::UnknownUnit(",5ms".into())),
            ("ms", P::NoNumber),
            ("1.5.3ms", P::TwoPoints),
            (".ms", P::NoDigits),
            ("0.5ns", P::SubNanosecond),
            ("1.5ns", P::SubNanosecond),
            ("1.0000000001s", P::SubNanosecond),
            ("18446744073709551616ns", P::Overflow),
            ("18446744074s", P::Overflow),
            ("99999999999999999999999s", P::Overflow),
            ("99999999999999s", P::Overflow),
            ("1e3ns", P::UnknownUnit("e3ns".into())),
            ("1.2.3ms", P::TwoPoints),
        ];
        for (text, problem) in cases {
            let e = parse_ns(text).unwrap_err();
            assert_eq!((e.text.as_str(), &e.problem), (text, &problem), "{text}");
            assert!(e.to_string().contains(&format!("{text:?}")), "{e}");
        }
    }

    #[test]
    fn formatting_is_exact_and_reads_back() {
        assert_eq!(format_ns(0), "0ns");
        assert_eq!(format_ns(1_500), "1500ns");
        assert_eq!(format_ns(250_000), "250us");
        assert_eq!(format_ns(3_000_000_000), "3s");
        for ns in [0, 1, 999, 1_000, 1_500_000, 86_400_000_000_000, u64::MAX] {
            assert_eq!(parse_ns(&format_ns(ns)), Ok(ns), "{ns}");
        }
    }

    #[test]
    fn units_for_people() {
        assert_eq!(Unit::fit(999.0), Unit::Ns);
        assert_eq!(Unit::fit(-1_500.0), Unit::Us);
        assert_eq!(Unit::fit(2e9), Unit::S);
        assert_eq!(Unit::fit(0.5), Unit::Ns);
        assert_eq!(Unit::fit(f64::NAN), Unit::Ns);
        assert_eq!(Unit::Us.symbol(), "µs");
        assert_eq!(Unit::Us.larger(), Some(Unit::Ms));
        assert_eq!(Unit::S.larger(), None);
        assert_eq!(Unit::exact(0), Unit::Ns);
        assert_eq!(Unit::exact(7_000), Unit::Us);
    }
}
