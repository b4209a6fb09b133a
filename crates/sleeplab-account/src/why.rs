//! Why waits were late, in words: one sentence per traced cell (mechanism × duration ×
//! load) from its kernel account: the typical wake's biggest components and what held
//! up the tail. `explain`'s terminal render, the report's `why-late` findings and its
//! explain section all say the same sentence.

use super::analysis::explanation::Composition;
use super::{Component, Explanation, Machine, Tracing};
use sleeplab_stats::{
    BLOCKED_CSW, BY_POINT_VALUE, Claim, Extreme, NEVER_BLOCKED, RankBy, Sentence, Stat, and_list,
    small_n, units::ns,
};
use std::borrow::Cow;

/// How many components a sentence names at most.
const NAMED: usize = 3;

/// A result's traced cells, the one face every reader of a kernel account takes them
/// through (`ResultData::traced`): the report's explain section, the `why-late`
/// findings and explain's terminal sentences.
#[derive(Debug, Clone)]
pub struct TracedCells<'a> {
    /// What the cells measured, as a title says it ("waits", "the sweep's waits").
    pub subject: &'static str,
    /// Whether the run traced because it was asked to (an experiment that traces on
    /// request), rather than always (`explain`).
    pub on_request: bool,
    /// The run's tracing status.
    pub tracing: &'a Tracing,
    /// Each traced cell's account, in the result's order.
    pub cells: Vec<CellAccount<'a>>,
}

/// One cell's account as the sentences read it: a cell of `explain`, or of a sweep,
/// timers or runtimes run traced.
#[derive(Debug, Clone)]
pub struct CellAccount<'a> {
    /// Mechanism or strategy (a probe's cells: "runtime method").
    pub mechanism: Cow<'a, str>,
    /// Requested duration, ns.
    pub requested_ns: u64,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack in force, ns.
    pub timer_slack_ns: u64,
    /// Where its lateness went.
    pub explanation: &'a Explanation,
}

/// The sentences of a result's traced cells: one per cell at the lowest load measured,
/// and one per cell of a higher load whose tail was set by the run queue.
pub fn why_late(cells: &[CellAccount<'_>], machine: Machine) -> Vec<Sentence> {
    let lowest = cells.iter().map(|c| c.load).min();
    cells
        .iter()
        .filter(|c| Some(c.load) == lowest || c.explanation.tail.is_some())
        .filter_map(|c| cell_sentence(c, machine))
        .collect()
}

/// `nanosleep 1 ms (load 0): 78 µs late at the median; …`: the typical wake's biggest
/// components (the means over the wakes between p40 and p60 of lateness, which add up
/// to their mean lateness), then the tail's biggest component and who held the CPU.
/// A component is named in the words of the result's `machine`. `None` for a cell
/// without wakes.
pub fn cell_sentence(c: &CellAccount<'_>, machine: Machine) -> Option<Sentence> {
    let x = &c.explanation;
    let typical = x.typical.as_ref()?;
    let mut s = Sentence::default();
    let median = s.quote(&x.lateness, Stat::Median, ns)?;
    s.push(&format!(
        "{} {} (load {}): {median} late at the median{}",
        c.mechanism,
        ns(c.requested_ns as f64),
        c.load,
        small_n(x.lateness.count)
    ));
    blocking(&mut s, c, x);
    s.push("; the wakes between its p40 and p60");
    composition(&mut s, typical, "spent on average", machine);
    runtime_clause(&mut s, &c.mechanism, typical);
    if let Some(tail) = &x.tail {
        let p99 = s.quote(&x.lateness, Stat::P99, ns)?;
        s.push(&format!(
            "; its slowest wakes (at or above the p99 of {p99})"
        ));
        composition(&mut s, tail, "spent on average", machine);
        if let Some(h) = x.tail_holders.first() {
            if tail
                .biggest()
                .is_some_and(|(c, _)| c == Component::RunQueue)
            {
                s.push(&format!(", most behind {}", h.comm));
            }
        }
    }
    if x.partial {
        s.push(" (a partial account: run queue and timer slack from /proc, no kernel trace)");
    } else if x.untraced > 0 {
        s.push(&format!(
            " ({} of {} wakes partly unexplained: an event of their way was not recorded)",
            x.untraced, x.wakes
        ));
    }
    s.push(".");
    Some(s)
}

/// ` (n = 40) spent on average 50 µs in timer slack, 24 µs in the timer interrupt and
/// 3 µs waiting while another task held the CPU`: the group's biggest components, largest first, the first
/// ranked as the most.
fn composition(s: &mut Sentence, c: &Composition, verb: &str, machine: Machine) {
    let ranked = c.ranked();
    s.push(&format!(" (n = {})", c.wakes));
    if ranked.is_empty() {
        s.push(" were not late at all");
        return;
    }
    let among: Vec<f64> = Component::ALL
        .iter()
        .map(|k| c.parts_ns.get(k).copied().unwrap_or(0.0))
        .collect();
    let ranks = among.iter().filter(|&&v| v > 0.0).count() >= 2;
    if ranks {
        s.claim(Claim::Rank {
            extreme: Extreme::Most,
            by: RankBy::Signed,
            chosen: ranked[0].0.index(),
            among,
            // Means of one group's components, not quantiles: ranked as measured.
            intervals: Vec::new(),
        });
    }
    let named: Vec<String> = ranked
        .iter()
        .take(NAMED)
        .map(|&(k, v)| {
            let shown = ns(v);
            s.claim(Claim::Quote {
                stat: Stat::Mean,
                n: c.wakes,
                shown: shown.clone(),
            });
            match k {
                // Time no recorded event accounts for is not a place the wake was in.
                Component::Unexplained => format!("{shown} unexplained"),
                _ => format!("{shown} {}", k.phrase(machine)),
            }
        })
        .collect();
    let order = if ranks {
        format!(" (largest first, {BY_POINT_VALUE})")
    } else {
        String::new()
    };
    s.push(&format!(" {verb} {}{order}", and_list(&named)));
}

/// Where tokio adds its own lateness, for its rows: a current-thread runtime parks in
/// `epoll_wait` armed to the wheel's next whole millisecond, so the typical wake's timer
/// arming (its mean, quoted) is the runtime's rounding; on a multi-thread runtime a
/// worker fires the timer and wakes the measuring thread, whose record then holds no
/// timer of its own.
fn runtime_clause(s: &mut Sentence, mechanism: &str, typical: &Composition) {
    if !mechanism.starts_with("tokio-") {
        return;
    }
    if mechanism.ends_with("-mt") {
        s.push("; a tokio worker fired its timer and woke this thread, whose record holds no timer of its own");
        return;
    }
    let arming = typical
        .parts_ns
        .get(&Component::Entry)
        .copied()
        .unwrap_or(0.0);
    if arming <= 0.0 {
        return;
    }
    let shown = ns(arming);
    s.claim(Claim::Quote {
        stat: Stat::Mean,
        n: typical.wakes,
        shown: shown.clone(),
    });
    s.push(&format!(
        "; {shown} of it is tokio's own timer set late: its wheel rounds the deadline up to a whole millisecond and epoll_wait takes whole milliseconds"
    ));
}

/// The share of `x`'s waits that blocked, and whether it is enough to call them sleeps
/// (at least [`BLOCKED_CSW`]): what the sentences and the compact table both say.
pub(crate) fn blocked_share(x: &Explanation) -> (f64, bool) {
    let blocked = if x.wakes == 0 {
        0.0
    } else {
        (x.wakes - x.never_blocked) as f64 / x.wakes as f64
    };
    (blocked, blocked >= BLOCKED_CSW)
}

/// States a cell whose waits mostly never blocked as such, and records the claim.
fn blocking(s: &mut Sentence, c: &CellAccount<'_>, x: &Explanation) {
    let (blocked, sleeps) = blocked_share(x);
    if !sleeps {
        s.push(&format!(
            ", {NEVER_BLOCKED} (it blocked in {} of {} waits)",
            x.wakes - x.never_blocked,
            x.wakes
        ));
    }
    s.claim(Claim::Blocking {
        name: c.mechanism.to_string(),
        voluntary_csw_per_call: blocked,
        called_a_sleep: false,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Holder, WakeAccount};
    use proptest::prelude::*;

    /// A cell that owns what its account borrows.
    struct Cell {
        mechanism: String,
        explanation: Explanation,
    }

    impl Cell {
        fn account(&self) -> CellAccount<'_> {
            CellAccount {
                mechanism: Cow::Borrowed(&self.mechanism),
                requested_ns: 1_000_000,
                load: 0,
                timer_slack_ns: 50_000,
                explanation: &self.explanation,
            }
        }
    }

    fn cell(accounts: &[WakeAccount]) -> Cell {
        Cell {
            mechanism: "nanosleep".into(),
            explanation: Explanation::of(accounts, 0, false),
        }
    }

    fn wake(parts: &[(Component, u64)], holder: Option<&str>, blocked: bool) -> WakeAccount {
        WakeAccount {
            holder: holder.map(|h| Holder {
                comm: h.into(),
                pid: 3,
            }),
            blocked,
            ..WakeAccount::of_parts(parts)
        }
    }

    #[test]
    fn the_typical_wake_and_the_tail_in_words() {
        let typical = [
            (Component::Slack, 50_000),
            (Component::TimerIrq, 24_000),
            (Component::RunQueue, 3_000),
            (Component::Return, 1_000),
        ];
        let mut w: Vec<WakeAccount> = (0..198).map(|_| wake(&typical, None, true)).collect();
        for _ in 0..2 {
            w.push(wake(
                &[(Component::Slack, 50_000), (Component::RunQueue, 2_000_000)],
                Some("cc1"),
                true,
            ));
        }
        let s = cell_sentence(&cell(&w).account(), Machine::Host).unwrap();
        assert_eq!(
            s.text,
            "nanosleep 1 ms (load 0): 78 µs late at the median; the wakes between its p40 and p60 (n = 42) \
             spent on average 50 µs in timer slack, 24 µs in the timer interrupt and 3 µs waiting while another task held the CPU \
             (largest first, by point value); its slowest wakes (at or above the p99 of 97.7 µs) (n = 2) spent \
             on average 2 ms waiting while another task held the CPU and 50 µs in timer slack (largest first, by point value), most \
             behind cc1."
        );
        s.check().unwrap();
    }

    #[test]
    fn unexplained_time_is_named_as_such_not_as_a_place() {
        let w: Vec<WakeAccount> = (0..10)
            .map(|_| {
                wake(
                    &[(Component::Unexplained, 7_000), (Component::Slack, 5_000)],
                    None,
                    true,
                )
            })
            .collect();
        let s = cell_sentence(&cell(&w).account(), Machine::Host).unwrap();
        assert!(
            s.text
                .contains("spent on average 7 µs unexplained and 5 µs in timer slack"),
            "{}",
            s.text
        );
        s.check().unwrap();
    }

    /// A spin gap's reading is named in the result's machine's words: the vCPU on a
    /// virtual machine, SMIs and firmware on bare metal.
    #[test]
    fn the_spin_gap_is_named_for_the_results_machine() {
        let w: Vec<WakeAccount> = (0..10)
            .map(|_| {
                wake(
                    &[(Component::SpinGap, 9_000), (Component::Slack, 5_000)],
                    None,
                    true,
                )
            })
            .collect();
        for (m, word) in [
            (
                Machine::Host,
                "9 µs with the spinning vCPU not running (no guest event)",
            ),
            (
                Machine::Hardware,
                "9 µs with the spinning CPU taken by SMI or firmware (no guest event)",
            ),
        ] {
            let s = cell_sentence(&cell(&w).account(), m).unwrap();
            assert!(s.text.contains(word), "{}", s.text);
            s.check().unwrap();
        }
    }

    #[test]
    fn a_wait_that_never_blocked_is_not_called_a_sleep() {
        let w: Vec<WakeAccount> = (0..10)
            .map(|_| wake(&[(Component::Spin, 500)], None, false))
            .collect();
        let mut c = cell(&w);
        c.mechanism = "spin".into();
        let s = cell_sentence(&c.account(), Machine::Host).unwrap();
        assert!(s.text.contains(NEVER_BLOCKED), "{}", s.text);
        assert!(s.text.contains("n = 10"));
        s.check().unwrap();
    }

    #[test]
    fn a_tokio_sleep_names_its_wheel_with_the_number() {
        let w: Vec<WakeAccount> = (0..20)
            .map(|_| {
                wake(
                    &[(Component::Entry, 900_000), (Component::TimerIrq, 20_000)],
                    None,
                    true,
                )
            })
            .collect();
        let mut c = cell(&w);
        c.mechanism = "tokio-sleep".into();
        let s = cell_sentence(&c.account(), Machine::Host).unwrap();
        assert!(
            s.text
                .contains("; 900 µs of it is tokio's own timer set late: its wheel rounds"),
            "{}",
            s.text
        );
        s.check().unwrap();
        c.mechanism = "tokio-sleep-mt".into();
        let s = cell_sentence(&c.account(), Machine::Host).unwrap();
        assert!(
            s.text.contains("a tokio worker fired its timer"),
            "{}",
            s.text
        );
        s.check().unwrap();
    }

    proptest! {
        /// Every claim of every sentence holds for random cells, tokio's rows too.
        #[test]
        fn runtime_sentences_hold_for_random_cells(
            arming in 0u64..2_000_000,
            other in 0u64..100_000,
            n in 1usize..200,
            mt in any::<bool>(),
        ) {
            let w: Vec<WakeAccount> = (0..n)
                .map(|_| wake(&[(Component::Entry, arming), (Component::Return, other)], None, true))
                .collect();
            let mut c = cell(&w);
            c.mechanism = if mt { "tokio-sleep-mt" } else { "tokio-sleep" }.into();
            let s = cell_sentence(&c.account(), Machine::Host).unwrap();
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }

        /// Every claim of every sentence holds for random cells.
        #[test]
        fn sentences_hold_for_random_cells(
            wakes in prop::collection::vec(
                (prop::collection::vec(0u64..100_000, Component::COUNT), any::<bool>(), prop::option::of("[a-z]{1,6}")),
                1..300,
            )
        ) {
            let accounts: Vec<WakeAccount> = wakes
                .iter()
                .map(|(v, blocked, h)| {
                    let parts: Vec<(Component, u64)> =
                        Component::ALL.into_iter().zip(v.iter().copied()).collect();
                    wake(&parts, h.as_deref(), *blocked)
                })
                .collect();
            let s = cell_sentence(&cell(&accounts).account(), Machine::Host).unwrap();
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}
