//! Plain-language findings computed from the measured data, each with its numbers and
//! the claims those numbers must bear out (`claim`).
//!
//! Every finding is a pure function of the results ([`Results`]) that returns `None`
//! when the data it needs is absent, so a report of one experiment shows the findings
//! that experiment supports and a survey shows them all. They are printed at the end of
//! the survey and at the top of the report. `docs/REPORT.md` lists each one with the
//! rule that produces it and the sample it needs.
//!
//! One file per topic: `short_sleeps` (the cheapest short sleep, poll's rounding),
//! `slack`, `binding_gain` (sleeplab's own sleep in other languages), `load` (the tail
//! under load, loaded faster than idle), `sweep` (long sleeps, spinning's cost, early
//! wake-ups, first calls), `newer_waits` (io_uring and futex_waitv against
//! clock_nanosleep), `pace`, `runtimes`, `tune` (machine settings).

mod binding_gain;
mod explain;
mod load;
mod newer_waits;
mod pace;
#[cfg(test)]
mod props;
pub(crate) mod runtimes;
mod short_sleeps;
mod slack;
mod sweep;
#[cfg(test)]
mod tests;
mod tune;

pub use binding_gain::binding_gain;
pub use explain::why_late;
pub use load::{load_effect, loaded_faster};
pub use newer_waits::newer_waits;
pub use pace::pace_loop;
pub use runtimes::runtime_floors;
pub use short_sleeps::{cheapest_short_sleep, poll_rounding};
pub use slack::timer_slack;
pub use sweep::{CPU_NOTE, cpu_pct};
pub use sweep::{early_wakeups, first_calls, long_sleeps, spin_cost};
pub use tune::{tune_best, tune_none};

use super::view::{MainSweep, Results};
use crate::claim::{BLOCKED_CSW, Claim, Sentence, and_list, n_clause, small_n};
use crate::experiments::sweep::SweepCell;
use crate::output::units::ns;
use crate::stats::{Stat, Summary};
use sleeplab::wait::{self, Family};

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// A stable name, e.g. `timer-slack` (tests and the docs refer to it).
    pub id: &'static str,
    /// The sentence, with its numbers.
    pub text: String,
    /// What the sentence claims, with the numbers each claim rests on.
    pub claims: Vec<Claim>,
}

impl Finding {
    fn new(id: &'static str, s: Sentence) -> Self {
        Self {
            id,
            text: s.text,
            claims: s.claims,
        }
    }

    /// The finding as a [`Sentence`] (to check its claims).
    pub fn sentence(&self) -> Sentence {
        Sentence {
            text: self.text.clone(),
            claims: self.claims.clone(),
        }
    }
}

/// Every finding the results support, most useful first.
pub fn findings(r: &Results<'_>) -> Vec<Finding> {
    let all: [fn(&Results<'_>) -> Option<Finding>; 15] = [
        cheapest_short_sleep,
        timer_slack,
        poll_rounding,
        newer_waits,
        pace_loop,
        runtime_floors,
        binding_gain,
        load_effect,
        loaded_faster,
        long_sleeps,
        spin_cost,
        early_wakeups,
        first_calls,
        tune_best,
        tune_none,
    ];
    let mut out: Vec<Finding> = all.iter().filter_map(|f| f(r)).collect();
    out.extend(why_late(r));
    out
}

/// The family of a mechanism by name (from the library's table; `None` if unknown).
fn family(name: &str) -> Option<Family> {
    wait::find(name).map(|m| m.family)
}

/// Whether a mechanism is meant to sleep (not spin or yield).
fn sleeps(name: &str) -> bool {
    !matches!(family(name), Some(Family::Busy) | None)
}

/// Whether a cell's calls blocked: at least [`BLOCKED_CSW`] voluntary context switches
/// per call. A call below it returned without sleeping, whatever it is called.
pub fn blocked(c: &SweepCell) -> bool {
    c.voluntary_csw_per_call >= BLOCKED_CSW
}

/// Mechanisms that are "a sleep call", in order of preference for examples.
const SLEEP_CALLS: [&str; 4] = [
    "nanosleep",
    "clock-nanosleep",
    "std-sleep",
    "clock-nanosleep-abs",
];

/// The first of [`SLEEP_CALLS`] the main sweep measured.
fn sleep_call<'a>(m: &MainSweep<'a>) -> Option<&'a str> {
    let mechs = m.mechanisms();
    SLEEP_CALLS
        .iter()
        .find_map(|s| mechs.iter().copied().find(|m| m == s))
}

/// The smallest non-zero request below 10 µs measured (normally 1 µs).
fn short_request(m: &MainSweep<'_>) -> Option<u64> {
    m.requests().into_iter().find(|&d| d > 0 && d < 10_000)
}

/// `stat` of `s` in the terminal's units, quoted ([`Sentence::quote`]).
fn quote(out: &mut Sentence, s: &Summary, stat: Stat) -> Option<String> {
    out.quote(s, stat, ns)
}

/// The highest of `prefer` that every sample of `sizes` resolves.
fn common_stat(prefer: &[Stat], sizes: impl IntoIterator<Item = u64>) -> Option<Stat> {
    let n = sizes.into_iter().min()?;
    prefer.iter().copied().find(|s| s.resolved_by(n))
}

/// A count with thin thousands separators: `12 345`.
fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push('\u{202f}');
        }
        out.push(ch);
    }
    out
}
