//! Plain-language findings computed from the measured data, each with its numbers and
//! the claims those numbers must bear out (`claim`).
//!
//! Every finding is a pure function of the results ([`Results`]) that returns `None`
//! when the data it needs is absent, so a report of one experiment shows the findings
//! that experiment supports and a survey shows them all. They are printed at the end of
//! the survey and at the top of the report, in the order of the page's registry
//! (`sections::FINDINGS`). `docs/REPORT.md` lists each one with the
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
pub(crate) use explain::first_traced;
pub use load::{load_effect, loaded_faster};
pub use newer_waits::newer_waits;
pub use pace::pace_loop;
pub use runtimes::runtime_floors;
pub(crate) use short_sleeps::{Rounding, rounding};
pub use short_sleeps::{cheapest_short_sleep, poll_rounding};
pub use slack::timer_slack;
pub(crate) use slack::{MATTERS_NS, slack_effect};
pub use sweep::{CPU_NOTE, cpu_pct};
pub use sweep::{early_wakeups, first_calls, long_sleeps, spin_cost};
pub use tune::{tune_best, tune_none};

use super::view::{MainSweep, Results};
use sleeplab::wait::{self, Family};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BLOCKED_CSW, Claim, Direction, Est, Order, Sentence, Stat, Summary, Verb, and_list, direction,
    equivalent, n_clause, order, small_n, units::ns,
};

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
    /// The finding `id` stating `s`.
    pub(crate) fn new(id: &'static str, s: Sentence) -> Self {
        Self {
            id,
            text: s.text,
            claims: s.claims,
        }
    }
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

/// How [`judge_change`] found a change.
pub(crate) struct Judged {
    /// Its direction in point values (Same: within the tolerance).
    pub direction: Direction,
    /// How the two values' intervals order them.
    pub order: Order,
    /// Whether the intervals bear the direction out (its claims then recorded).
    pub decided: bool,
}

/// The change of `stat` from `from` to `to` judged on their intervals: a rise or a fall
/// beyond `tolerance` (relative to the larger value) stands where the intervals separate
/// its way ([`Claim::Verdict`]), "no change" where the interval of the difference lies
/// within `tolerance` of the larger value ([`Claim::Equivalent`], that margin written
/// `shown`); either is recorded with its [`Claim::Change`] by `verb`. Where the intervals
/// decide neither, nothing is claimed but, where they do not separate, that they are
/// indistinguishable.
pub(crate) fn judge_change(
    s: &mut Sentence,
    stat: Stat,
    verb: Verb,
    (from, to): (Est, Est),
    tolerance: f64,
    shown: &str,
) -> Judged {
    let d = direction(from.value, to.value, tolerance);
    let o = order(&from, &to);
    let margin = tolerance * from.value.abs().max(to.value.abs());
    let decided = match d {
        Direction::Same => equivalent(&from, &to, margin),
        Direction::Up => o == Order::Below,
        Direction::Down => o == Order::Above,
    };
    let judged = Judged {
        direction: d,
        order: o,
        decided,
    };
    if !decided {
        // (Intervals that separate a change within the tolerance order nothing here.)
        if o == Order::Indistinguishable {
            s.claim(Claim::Verdict {
                stat,
                a: from,
                b: to,
                stated: o,
            });
        }
        return judged;
    }
    s.claim(if d == Direction::Same {
        Claim::Equivalent {
            stat,
            a: from,
            b: to,
            margin,
            shown: shown.to_string(),
        }
    } else {
        Claim::Verdict {
            stat,
            a: from,
            b: to,
            stated: o,
        }
    });
    s.claim(Claim::Change {
        stat,
        from: from.value,
        to: to.value,
        verb,
        tolerance,
        stated: d,
    });
    judged
}

/// Records whether `c`'s calls blocked ([`Claim::Blocking`]: its voluntary context
/// switches per call), `called_a_sleep` where the sentence calls its mechanism a sleep.
pub(crate) fn claim_blocking(s: &mut Sentence, c: &SweepCell, called_a_sleep: bool) {
    s.claim(Claim::Blocking {
        name: c.mechanism.clone(),
        voluntary_csw_per_call: c.voluntary_csw_per_call,
        called_a_sleep,
    });
}

/// Mechanisms that are "a sleep call", in order of preference for examples.
pub(crate) const SLEEP_CALLS: [&str; 4] = [
    "nanosleep",
    "clock-nanosleep",
    "std-sleep",
    "clock-nanosleep-abs",
];

/// The first of [`SLEEP_CALLS`] the main sweep measured.
pub(crate) fn sleep_call<'a>(m: &MainSweep<'a>) -> Option<&'a str> {
    let mechs = m.mechanisms();
    SLEEP_CALLS
        .iter()
        .find_map(|s| mechs.iter().copied().find(|m| m == s))
}

/// The smallest non-zero request below 10 µs measured (normally 1 µs).
pub(crate) fn short_request(m: &MainSweep<'_>) -> Option<u64> {
    m.requests().into_iter().find(|&d| d > 0 && d < 10_000)
}

/// `stat` of `s` in the terminal's units, quoted ([`Sentence::quote`]).
pub(crate) fn quote(out: &mut Sentence, s: &Summary, stat: Stat) -> Option<String> {
    out.quote(s, stat, ns)
}

/// The highest of `prefer` that every sample of `sizes` resolves.
pub(crate) fn common_stat(prefer: &[Stat], sizes: impl IntoIterator<Item = u64>) -> Option<Stat> {
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

#[cfg(test)]
impl Finding {
    /// The finding as a [`Sentence`] (to check its claims).
    pub fn sentence(&self) -> Sentence {
        Sentence {
            text: self.text.clone(),
            claims: self.claims.clone(),
        }
    }
}
