//! A program's waits per call: how many, how each ended, the lateness of those their
//! timer ended and its components, and the traps the waits fall into, each said once
//! with the number behind it and the change that would fix it.

use std::collections::BTreeMap;

use serde::Serialize;
use sleeplab_stats::{Claim, Sentence, Stat, Summary, summarize, units::ns};

use super::interrupts::{IrqTotal, total};
use super::{Ending, Found, ProgramWait, Timeout, WaitCall};
use crate::analysis::account::WakeAccount;
use crate::analysis::explanation::Explanation;
use crate::analysis::timeline::Timeline;
use crate::capture::Kind;

/// The timer slack of a normal (`SCHED_OTHER`) thread unless it sets its own, ns.
pub const SLACK_DEFAULT_NS: u64 = 50_000;

/// One call's waits.
#[derive(Debug, Clone, Serialize)]
pub struct CallSummary {
    /// The call.
    pub call: WaitCall,
    /// Its waits with a timeout.
    pub waits: u64,
    /// Of those, ended by their timer.
    pub timer: u64,
    /// Woken before their timer (by another task or an interrupt).
    pub woken: u64,
    /// Ended by a signal.
    pub signal: u64,
    /// Returned without blocking.
    pub never_blocked: u64,
    /// Blocked, with neither their timer's expiry nor a wakeup on record (lost events):
    /// how they ended is unknown.
    pub unrecorded: u64,
    /// Ended before their deadline (woken or interrupted): counted apart, never in the
    /// lateness.
    pub early: u64,
    /// The lateness past the deadline of the waits their timer ended, ns.
    pub lateness: Summary,
    /// Their lateness split into components (`None`: no wait ended by its timer).
    pub explanation: Option<Explanation>,
    /// Who held the CPU while those waits waited on a run queue, most time first.
    pub holders: Vec<HeldBy>,
    /// The interrupts and softirqs that ran on their CPU between deadline and return,
    /// summed over those waits by name, most time first.
    pub interrupts: Vec<IrqTotal>,
}

/// A task that held the CPU while a call's waits waited for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldBy {
    /// Its name.
    pub comm: String,
    /// Its thread id.
    pub pid: i32,
    /// The waits it kept on a run queue after their deadline (for any part of it).
    pub waits: u64,
    /// The run-queue time it held the CPU for in those waits, its own share only, ns.
    pub run_queue_ns: u64,
    /// Its kernel stack as it last left the CPU during the wait it held longest, the
    /// frames worth reading named (where stacks were recorded: `explain --stacks`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_stack: Vec<String>,
}

/// The holders of `wakes`, most run-queue time first: each task's own share of each
/// wait's run-queue time (a wait two tasks held shares it between them).
fn holders<'a>(wakes: impl Iterator<Item = &'a WakeAccount>) -> Vec<HeldBy> {
    let mut by: BTreeMap<(String, i32), (u64, u64)> = BTreeMap::new();
    for w in wakes {
        for (h, ns) in w.run_queue_by.iter().filter(|(_, ns)| *ns > 0) {
            let e = by.entry((h.comm.clone(), h.pid)).or_default();
            e.0 += 1;
            e.1 += ns;
        }
    }
    let mut out: Vec<HeldBy> = by
        .into_iter()
        .map(|((comm, pid), (waits, run_queue_ns))| HeldBy {
            comm,
            pid,
            waits,
            run_queue_ns,
            kernel_stack: Vec::new(),
        })
        .collect();
    out.sort_by(|a, b| b.run_queue_ns.cmp(&a.run_queue_ns).then(a.pid.cmp(&b.pid)));
    out
}

/// Every call's summary, in the order of [`WaitCall::ALL`] (calls with no wait left
/// out), from the waits' accounts (`split`: [`accounts`](super::accounts), by index);
/// `lost_events` is what the tracer lost over the run.
pub fn summarise(
    found: &Found,
    split: &[Option<WakeAccount>],
    lost_events: u64,
) -> Vec<CallSummary> {
    let mut by_call: BTreeMap<WaitCall, Vec<usize>> = BTreeMap::new();
    for (i, w) in found.waits.iter().enumerate() {
        by_call.entry(w.call).or_default().push(i);
    }
    WaitCall::ALL
        .into_iter()
        .filter_map(|call| {
            let idx = by_call.get(&call)?;
            let waits: Vec<&ProgramWait> = idx.iter().map(|&i| &found.waits[i]).collect();
            let count =
                |f: fn(&Ending) -> bool| waits.iter().filter(|w| f(&w.ending)).count() as u64;
            let late: Vec<u64> = waits.iter().filter_map(|w| w.lateness_ns()).collect();
            let wakes: Vec<_> = idx.iter().filter_map(|&i| split.get(i)?.clone()).collect();
            Some(CallSummary {
                call,
                waits: waits.len() as u64,
                timer: count(|e| *e == Ending::Timer),
                woken: count(|e| matches!(e, Ending::Woken { .. })),
                signal: count(|e| *e == Ending::Signal),
                never_blocked: count(|e| *e == Ending::NeverBlocked),
                unrecorded: count(|e| *e == Ending::Unrecorded),
                early: waits.iter().filter(|w| w.early_ns().is_some()).count() as u64,
                lateness: summarize(&late, 0),
                explanation: (!wakes.is_empty())
                    .then(|| Explanation::of(&wakes, lost_events, false)),
                holders: holders(wakes.iter()),
                interrupts: total(waits.iter().map(|w| &w.interrupts[..])),
            })
        })
        .collect()
}

/// Gives each holder of `calls` its kernel stack, where `tl` recorded stacks: of the
/// call's waits (`found`, each split in `split` by index), the one it held longest;
/// the last switch in that wait that took the holder off a CPU; that switch's stack,
/// named by `name`. A holder with none recorded keeps none.
pub fn name_holder_stacks(
    calls: &mut [CallSummary],
    tl: &Timeline,
    found: &Found,
    split: &[Option<WakeAccount>],
    name: impl Fn(&[u64]) -> Vec<String>,
) {
    if !tl.records_stacks() {
        return;
    }
    for c in calls.iter_mut() {
        for h in c.holders.iter_mut() {
            let longest = found
                .waits
                .iter()
                .zip(split)
                .filter(|(w, _)| w.call == c.call)
                .filter_map(|(w, a)| {
                    let share = a
                        .as_ref()?
                        .run_queue_by
                        .iter()
                        .find(|(x, _)| x.pid == h.pid)?;
                    Some((w, share.1))
                })
                .max_by_key(|&(w, ns)| (ns, std::cmp::Reverse(w.exit_ns)));
            let Some((w, _)) = longest else { continue };
            let frames = tl
                .range(w.enter_ns, w.exit_ns)
                .iter()
                .rev()
                .filter(|e| matches!(e.kind, Kind::Switch { prev_pid, .. } if prev_pid == h.pid))
                .find_map(|e| tl.stack_at(e.cpu, e.time_ns));
            if let Some(frames) = frames {
                h.kernel_stack = name(frames);
            }
        }
    }
}

/// A trap a program's waits fell into.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "trap")]
pub enum Trap {
    /// Its timers carried slack: the kernel may fire them that much after the deadline.
    Slack {
        /// The call.
        call: WaitCall,
        /// Its waits their timer ended (where the slack could delay the wakeup).
        waits: u64,
        /// Of those, the waits with slack.
        with_slack: u64,
        /// The median slack of those, ns.
        median_ns: f64,
    },
    /// A millisecond API with a timeout of a millisecond or two: a shorter wait cannot
    /// be asked for, and the kernel rounds the timeout up to whole milliseconds.
    Millis {
        /// The call.
        call: WaitCall,
        /// Its waits with such a timeout.
        waits: u64,
        /// The shortest timeout among them, ms.
        ms: i64,
        /// The longest, ms (at most the trap's bound, 2).
        most_ms: i64,
    },
    /// Calls with a zero timeout: each returns at once; in a loop, a busy poll.
    ZeroTimeout {
        /// The call.
        call: WaitCall,
        /// How many.
        calls: u64,
    },
}

/// A millisecond API's timeout at most this long is named as a trap, ms.
pub const MILLIS_TRAP_MS: i64 = 2;

/// The traps in `waits`, per call in the order of [`WaitCall::ALL`].
pub fn traps(waits: &[ProgramWait]) -> Vec<Trap> {
    let mut out = Vec::new();
    for call in WaitCall::ALL {
        let of: Vec<&ProgramWait> = waits.iter().filter(|w| w.call == call).collect();
        if of.is_empty() {
            continue;
        }
        // Slack delays only a wait its timer ends.
        let slacks: Vec<u64> = of
            .iter()
            .filter(|w| w.ending == Ending::Timer)
            .filter_map(|w| w.slack_ns())
            .collect();
        let with: Vec<u64> = slacks.iter().copied().filter(|&s| s > 1).collect();
        if !with.is_empty() {
            let s = summarize(&with, 0);
            out.push(Trap::Slack {
                call,
                waits: slacks.len() as u64,
                with_slack: with.len() as u64,
                median_ns: s.median_ns,
            });
        }
        if call.millisecond_api().is_some() {
            let ms: Vec<i64> = of
                .iter()
                .filter_map(|w| match w.timeout {
                    Timeout::Millis(ms) if (1..=MILLIS_TRAP_MS).contains(&ms) => Some(ms),
                    _ => None,
                })
                .collect();
            if let (Some(&least), Some(&most)) = (ms.iter().min(), ms.iter().max()) {
                out.push(Trap::Millis {
                    call,
                    waits: ms.len() as u64,
                    ms: least,
                    most_ms: most,
                });
            }
            let zero = of
                .iter()
                .filter(|w| w.timeout == Timeout::Millis(0))
                .count() as u64;
            if zero > 0 {
                out.push(Trap::ZeroTimeout { call, calls: zero });
            }
        }
    }
    out
}

impl Trap {
    /// The trap in a sentence: what happened, the number behind it, and the change
    /// that would fix it.
    pub fn sentence(&self) -> Sentence {
        match *self {
            Trap::Slack {
                call,
                waits,
                with_slack,
                median_ns,
            } => {
                let mut s = Sentence::default();
                let median = s.quoted(Stat::Median, with_slack, ns(median_ns));
                let default = ns(SLACK_DEFAULT_NS as f64);
                s.claim(Claim::Threshold {
                    shown: default.clone(),
                });
                let had = if (median_ns - SLACK_DEFAULT_NS as f64).abs() < 1.0 {
                    format!("had the default timer slack of a normal thread (median {median})")
                } else {
                    format!(
                        "had timer slack (median {median}; a normal thread's default is {default})"
                    )
                };
                s.push(&format!(
                    "timer slack: {with_slack} of the {waits} {} waits their timer ended {had}: the kernel may fire each that much after its deadline; prctl(PR_SET_TIMERSLACK, 1) on the waiting thread removes it.",
                    call.name()
                ));
                s
            }
            Trap::Millis {
                call,
                waits,
                ms,
                most_ms,
            } => {
                let mut s = Sentence::default();
                let sibling = call.millisecond_api().unwrap_or("a nanosecond timeout");
                s.claim(Claim::Threshold {
                    shown: format!("{MILLIS_TRAP_MS} ms"),
                });
                let asked = if most_ms > ms {
                    format!("{ms}–{most_ms} ms")
                } else {
                    format!("{ms} ms")
                };
                s.push(&format!(
                    "millisecond timeouts: {waits} {} waits asked for {asked} (timeouts of at most {MILLIS_TRAP_MS} ms are named here); the call takes whole milliseconds, so nothing shorter can be asked for and the kernel rounds up; {sibling} takes nanoseconds.",
                    call.name()
                ));
                s
            }
            Trap::ZeroTimeout { call, calls } => {
                let mut s = Sentence::default();
                s.push(&format!(
                    "zero timeouts: {calls} {} calls with a timeout of 0 returned at once without sleeping; in a loop that is a busy poll.",
                    call.name()
                ));
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(call: WaitCall, timeout: Timeout, soft: u64, hard: u64, ending: Ending) -> ProgramWait {
        ProgramWait {
            interrupts: Vec::new(),
            tid: 5,
            comm: "app".into(),
            call,
            timeout,
            enter_ns: soft.saturating_sub(1_000_000),
            exit_ns: soft + 70_000,
            ret: 0,
            deadline_ns: Some(soft),
            hard_ns: Some(hard),
            ending,
        }
    }

    #[test]
    fn traps_name_the_slack_the_millisecond_floor_and_zero_timeouts() {
        let mut waits = Vec::new();
        for k in 0..10u64 {
            let soft = 10_000_000 * (k + 1);
            waits.push(wait(
                WaitCall::EpollWait,
                Timeout::Millis(1),
                soft,
                soft + SLACK_DEFAULT_NS,
                Ending::Timer,
            ));
        }
        waits.push(wait(
            WaitCall::EpollWait,
            Timeout::Millis(0),
            1,
            1,
            Ending::NeverBlocked,
        ));
        // 1 ns of slack: none to speak of.
        waits.push(wait(
            WaitCall::Nanosleep,
            Timeout::InMemory,
            5,
            6,
            Ending::Timer,
        ));
        let t = traps(&waits);
        assert_eq!(
            t,
            vec![
                Trap::Slack {
                    call: WaitCall::EpollWait,
                    waits: 10,
                    with_slack: 10,
                    median_ns: 50_000.0
                },
                Trap::Millis {
                    call: WaitCall::EpollWait,
                    waits: 10,
                    ms: 1,
                    most_ms: 1
                },
                Trap::ZeroTimeout {
                    call: WaitCall::EpollWait,
                    calls: 1
                },
            ]
        );
        for trap in &t {
            let s = trap.sentence();
            s.check().unwrap();
            assert!(s.text.contains("epoll_wait"), "{}", s.text);
        }
        let slack = t[0].sentence().text;
        assert!(slack.contains("10 of the 10"), "{slack}");
        assert!(
            slack.contains("the default timer slack of a normal thread"),
            "{slack}"
        );
    }

    proptest::proptest! {
        /// Whatever the waits' slack and endings, the slack trap counts the waits its
        /// timer ended and those with slack among them, says so in its sentence, and
        /// its claims hold.
        #[test]
        fn the_slack_trap_counts_what_it_says(
            waits in proptest::collection::vec((0u64..200_000, proptest::bool::ANY), 1..60)
        ) {
            let ws: Vec<ProgramWait> = waits
                .iter()
                .enumerate()
                .map(|(i, &(slack, timer))| {
                    let soft = 10_000_000 * (i as u64 + 1);
                    let ending = if timer { Ending::Timer } else { Ending::Woken { waker: 9 } };
                    wait(WaitCall::Futex, Timeout::InMemory, soft, soft + slack, ending)
                })
                .collect();
            let ended: Vec<u64> = waits.iter().filter(|w| w.1).map(|w| w.0).collect();
            let with = ended.iter().filter(|&&s| s > 1).count() as u64;
            let found = traps(&ws);
            match found.first() {
                Some(t @ Trap::Slack { waits, with_slack, .. }) => {
                    proptest::prop_assert_eq!((*waits, *with_slack), (ended.len() as u64, with));
                    let s = t.sentence();
                    proptest::prop_assert!(s.check().is_ok(), "{:?}", s.check());
                    let counted = format!("{with} of the {} futex waits", ended.len());
                    proptest::prop_assert!(s.text.contains(&counted), "{}", s.text);
                }
                _ => proptest::prop_assert_eq!(with, 0),
            }
        }
    }
}
