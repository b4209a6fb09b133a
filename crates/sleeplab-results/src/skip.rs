//! Which requests a contender skips: a mechanism that ignores durations, or cannot
//! express one that short (read from the library's registry row; no probing).

use sleeplab::wait;

/// Why `name` skips a request of `ns` (it ignores durations, or cannot express one that
/// short), if it does; `None` for names that are not contenders. Unlike the CLI's `contenders::all` this
/// does not probe the machine's support.
pub fn skip_reason(name: &str, ns: u64) -> Option<String> {
    match wait::find(name) {
        Some(m) => request_skip(m.name, m.min_ns, m.takes_duration, ns),
        None => None,
    }
}

/// The one rule behind [`skip_reason`] and the CLI's `Info::accepts`.
pub fn request_skip(name: &str, min_ns: u64, takes_duration: bool, ns: u64) -> Option<String> {
    if !takes_duration && ns != 0 {
        Some(format!("{name} ignores the duration; measured at 0 only"))
    } else if ns < min_ns {
        Some(format!(
            "{name} cannot express {ns} ns (minimum {min_ns} ns)"
        ))
    } else {
        None
    }
}
