//! Parsing of the command line's values: durations with units, lists, counts.
//!
//! Every parser returns a [`ParseError`] naming the offending text, which the CLI turns
//! into a one-line message and exit code 2.

use sleeplab::duration::{DurationError, DurationProblem};
use std::fmt;

/// The largest duration any experiment accepts: one day. Longer sleeps are not a
/// latency measurement, and refusing them keeps every later sum far from overflow.
pub const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;

/// A bad value on the command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {value:?}: {reason}")]
pub struct ParseError {
    /// What was being parsed, e.g. "duration".
    pub what: &'static str,
    /// The text as given.
    pub value: String,
    /// Why it is bad.
    pub reason: String,
}

fn err(what: &'static str, value: &str, reason: impl fmt::Display) -> ParseError {
    ParseError {
        what,
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// Parses a duration such as `0`, `1ns`, `50us`, `50µs`, `50μs`, `1.5ms`, `2s` into
/// nanoseconds: the library's grammar ([`sleeplab::duration`]: exact decimals, whole
/// nanoseconds, a unit unless the value is `0`), at most [`MAX_DURATION_NS`].
pub fn duration_ns(text: &str) -> Result<u64, ParseError> {
    let what = "duration";
    let too_long = || err(what, text, "too long (the maximum is 1 day)");
    match sleeplab::duration::parse_ns(text) {
        Ok(ns) if ns <= MAX_DURATION_NS => Ok(ns),
        Ok(_)
        | Err(DurationError {
            problem: DurationProblem::Overflow,
            ..
        }) => Err(too_long()),
        Err(e) => Err(err(what, text, e.problem)),
    }
}

/// Parses a duration that must be more than zero (`what` names it in the error).
pub fn positive_duration_ns(what: &'static str, text: &str) -> Result<u64, ParseError> {
    let v = duration_ns(text)?;
    if v == 0 {
        return Err(err(what, text, "must be more than 0"));
    }
    Ok(v)
}

/// Parses `--seconds` (how long each cell, point or candidate runs), the same in every
/// command: a duration with a unit (`250ms`, `2s`), or a plain number, which means
/// seconds (`1`, `0.5`); more than 0 and at most `max_ns` (the command's cap).
pub fn seconds_ns(text: &str, max_ns: u64) -> Result<u64, ParseError> {
    let what = "--seconds";
    let t = text.trim();
    let plain = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.');
    let v = if plain {
        duration_ns(&format!("{t}s"))
    } else {
        duration_ns(t)
    }
    .map_err(|e| err(what, text, e.reason))?;
    if v == 0 {
        return Err(err(what, text, "must be more than 0"));
    }
    if v > max_ns {
        return Err(err(
            what,
            text,
            format!("at most {} s here", max_ns / 1_000_000_000),
        ));
    }
    Ok(v)
}

/// Parses a timer slack: a duration of at least 1 ns (the kernel reads 0 as "reset to
/// the default", which is not what anyone typing 0 means).
pub fn slack_ns(text: &str) -> Result<u64, ParseError> {
    let v = duration_ns(text)?;
    if v == 0 {
        return Err(err(
            "timer slack",
            text,
            "0 means 'default' to the kernel; use 1ns for the minimum",
        ));
    }
    Ok(v)
}

/// Parses a comma-separated list with `item`, rejecting empty lists and empty elements.
pub fn list<T>(
    what: &'static str,
    text: &str,
    item: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<Vec<T>, ParseError> {
    if text.trim().is_empty() {
        return Err(err(what, text, "empty list"));
    }
    text.split(',')
        .map(|part| {
            if part.trim().is_empty() {
                Err(err(what, text, "empty element in the list"))
            } else {
                item(part.trim())
            }
        })
        .collect()
}

/// Parses a count in `min..=max`.
pub fn count(what: &'static str, text: &str, min: u64, max: u64) -> Result<u64, ParseError> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err(err(what, text, "must not be negative"));
    }
    let n: u64 = t.parse().map_err(|_| {
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            err(what, text, format!("too large (the maximum is {max})"))
        } else {
            err(what, text, "not a whole number")
        }
    })?;
    if n < min {
        return Err(err(what, text, format!("must be at least {min}")));
    }
    if n > max {
        return Err(err(what, text, format!("too large (the maximum is {max})")));
    }
    Ok(n)
}

/// The values of `v` in order, without repeats (the first of each kept).
pub fn dedup<T: PartialEq + Clone>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

/// A name that is not one of the known ones: `unknown mechanism "nanoslep" (did you
/// mean nanosleep?)`, or, with no plausible typo, what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {name:?}{detail} ({hint})")]
pub struct UnknownName {
    /// What kind of name, e.g. "mechanism".
    pub kind: &'static str,
    /// The name as given.
    pub name: String,
    /// Said after the name, e.g. ": no selected runtime's probe lists it" (or empty).
    pub detail: &'static str,
    /// `did you mean X?`, or the fallback (`known: a, b`, `see `sleeplab list``).
    pub hint: String,
}

/// The known names of one kind, for checking names given on the command line.
#[derive(Debug, Clone)]
pub struct Names<'a> {
    kind: &'static str,
    known: Vec<&'a str>,
    otherwise: Option<String>,
    detail: &'static str,
}

impl<'a> Names<'a> {
    /// The `known` names of `kind`; an unknown name without a close match lists them.
    pub fn new(kind: &'static str, known: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            kind,
            known: known.into_iter().collect(),
            otherwise: None,
            detail: "",
        }
    }

    /// What to say instead of the list when no known name is close (e.g. "see
    /// `sleeplab list`").
    pub fn otherwise(mut self, text: impl Into<String>) -> Self {
        self.otherwise = Some(text.into());
        self
    }

    /// Words said after an unknown name (e.g. ": no selected runtime's probe lists it").
    pub fn detail(mut self, text: &'static str) -> Self {
        self.detail = text;
        self
    }

    /// The known names, in order.
    pub fn known(&self) -> &[&'a str] {
        &self.known
    }

    /// Whether `name` is known.
    pub fn contains(&self, name: &str) -> bool {
        self.known.contains(&name)
    }

    /// Fails naming `name` and the closest known name unless it is known.
    pub fn check(&self, name: &str) -> Result<(), UnknownName> {
        if self.contains(name) {
            return Ok(());
        }
        let hint = match closest(name, self.known.iter().copied()) {
            Some(c) => format!("did you mean {c}?"),
            None => self
                .otherwise
                .clone()
                .unwrap_or_else(|| format!("known: {}", self.known.join(", "))),
        };
        Err(UnknownName {
            kind: self.kind,
            name: name.to_string(),
            detail: self.detail,
            hint,
        })
    }

    /// Checks every name of `given`; returns them in order without repeats.
    pub fn resolve<S: AsRef<str>>(&self, given: &[S]) -> Result<Vec<String>, UnknownName> {
        let mut out: Vec<String> = Vec::with_capacity(given.len());
        for name in given.iter().map(AsRef::as_ref) {
            self.check(name)?;
            if !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }
}

/// The closest of `candidates` to `name` by edit distance, if it is close enough to be a
/// plausible typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A requested duration `1ms` or a rate `60hz` (its period, rounded to the nearest ns).
pub fn duration_or_rate_ns(text: &str) -> Result<u64, ParseError> {
    let t = text.trim();
    let Some(rate) = t
        .strip_suffix("hz")
        .or_else(|| t.strip_suffix("Hz"))
        .map(str::trim)
    else {
        return positive_duration_ns("duration", t);
    };
    let bad = |reason: &str| ParseError {
        what: "rate",
        value: text.into(),
        reason: reason.into(),
    };
    let hz: f64 = rate
        .parse()
        .ok()
        .filter(|_| rate.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| bad("not a number of hertz, e.g. 60hz"))?;
    if !(1.0 / 86_400.0..=1e9).contains(&hz) {
        return Err(bad("must be between one per day and 1 GHz"));
    }
    Ok((1e9 / hz).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grammar's own cases are the library's (`sleeplab::duration`); here, that the
    /// command line reads it whole up to its one-day limit.
    #[test]
    fn durations_or_rates() {
        assert_eq!(duration_or_rate_ns("60hz").unwrap(), 16_666_667);
        assert_eq!(duration_or_rate_ns("1000Hz").unwrap(), 1_000_000);
        assert_eq!(duration_or_rate_ns("1ms").unwrap(), 1_000_000);
        for bad in ["0hz", "-5hz", "NaNhz", "0", "1e3hz"] {
            assert!(duration_or_rate_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn good_durations() {
        for (text, ns) in [("0", 0), ("50μs", 50_000), (" 3ms ", 3_000_000)] {
            assert_eq!(duration_ns(text), Ok(ns), "{text}");
        }
        assert_eq!(duration_ns("86400s"), Ok(MAX_DURATION_NS));
        assert_eq!(duration_ns("86400000000000ns"), Ok(MAX_DURATION_NS));
    }

    #[test]
    fn bad_durations() {
        for text in [
            "",
            "-1ms",
            "NaN",
            "nanms",
            "inf",
            "infs",
            "1e400",
            "1e3ms",
            "1.5.3ms",
            "5",
            "5 parsecs",
            "1.5ns",
            "0.5ns",
            "ms",
            ".ms",
            "86401s",
            "99999999999999999999999s",
            "+5ms",
            "1,5ms",
            "0x10ns",
        ] {
            assert!(duration_ns(text).is_err(), "{text:?} should be rejected");
        }
    }

    #[test]
    fn error_names_the_value() {
        let e = duration_ns("1.5.3ms").unwrap_err();
        assert!(e.to_string().contains("\"1.5.3ms\""), "{e}");
    }

    #[test]
    fn lists() {
        assert_eq!(
            list("durations", "0,1ns,50us", duration_ns),
            Ok(vec![0, 1, 50_000])
        );
        assert!(list("durations", "1ms,,2ms", duration_ns).is_err());
        assert!(list("durations", "", duration_ns).is_err());
        assert!(list("durations", "1ms,", duration_ns).is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(count("iterations", "50", 1, 1000), Ok(50));
        for bad in [
            "0",
            "-3",
            "abc",
            "1001",
            "99999999999999999999999",
            "",
            "1.5",
        ] {
            assert!(count("iterations", bad, 1, 1000).is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_names_suggest_the_closest_or_say_what_to_do() {
        let n = Names::new("mechanism", ["nanosleep", "poll"]);
        assert_eq!(
            n.check("nanoslep").unwrap_err().to_string(),
            "unknown mechanism \"nanoslep\" (did you mean nanosleep?)"
        );
        assert_eq!(
            n.check("zzzzzzzz").unwrap_err().to_string(),
            "unknown mechanism \"zzzzzzzz\" (known: nanosleep, poll)"
        );
        let n = n.otherwise("see `sleeplab list`").detail(": not here");
        assert_eq!(
            n.check("zzzzzzzz").unwrap_err().to_string(),
            "unknown mechanism \"zzzzzzzz\": not here (see `sleeplab list`)"
        );
        assert_eq!(
            n.resolve(&["poll", "nanosleep", "poll"]).unwrap(),
            vec!["poll", "nanosleep"]
        );
        assert_eq!(dedup(&[3, 1, 3, 2, 1]), vec![3, 1, 2]);
    }

    #[test]
    fn suggestions() {
        let names = ["nanosleep", "clock-nanosleep", "epoll", "poll"];
        assert_eq!(closest("nanoslep", names), Some("nanosleep"));
        assert_eq!(closest("epol", names), Some("epoll"));
        assert_eq!(closest("completely-different", names), None);
    }

    /// `--seconds` has one form everywhere: a duration, or a plain number of seconds.
    #[test]
    fn seconds_take_a_unit_or_mean_seconds() {
        let max = MAX_DURATION_NS;
        assert_eq!(seconds_ns("1", max), Ok(1_000_000_000));
        assert_eq!(seconds_ns("1s", max), Ok(1_000_000_000));
        assert_eq!(seconds_ns("0.5", max), Ok(500_000_000));
        assert_eq!(seconds_ns("250ms", max), Ok(250_000_000));
        for bad in ["0", "0s", "-1", "NaN", "1x", "", "1.5.3"] {
            let e = seconds_ns(bad, max).unwrap_err();
            assert_eq!((e.what, e.value.as_str()), ("--seconds", bad));
        }
        let e = seconds_ns("3601", 3_600_000_000_000).unwrap_err();
        assert!(e.reason.contains("at most 3600 s"), "{}", e.reason);
    }
}
