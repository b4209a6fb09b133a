//! One wake's lateness, split into the components the kernel's timestamps show.
//!
//! A wake is a window of one thread: the caller read the clock at `start`, asked to
//! wake at `deadline`, and read the clock again at `end`; its lateness is
//! `end − deadline`. The kernel's events inside the window mark the way the wake took,
//! each mark starting a stretch:
//!
//! ```text
//! start ─entry→ soft expiry ─slack→ hard expiry ─timer irq→ waking ─run queue / idle wakeup→
//!       on CPU ─kernel exit→ syscall return ─return→ (spin →) end
//! ```
//!
//! (A tracer that does not record the system calls' returns,
//! [`super::Events::NoSyscallExit`], has `on CPU ─return→ end`.)
//!
//! * The timer is the one whose interrupt woke the thread: the last expiry on the
//!   waking CPU before the (hard-interrupt) wakeup; its soft and hard expiry come from
//!   its last arming, wherever that was (a periodic timer re-arms in its interrupt).
//!   Its slack ends early when another interrupt ran it before the hard expiry.
//! * Preemptions (switched out while runnable, then back in) count as run queue
//!   wherever they fall, naming the task that took the CPU.
//! * Only the part of each stretch after the deadline counts: the stretches add up to
//!   the lateness exactly. A wait that began after its deadline (a paced frame whose
//!   work overran) was `overrun` from the deadline to its start. A stretch whose events are missing is `unexplained`, and the
//!   wake is marked untraced.
//!
//! Pure: the tests build timelines by hand.

use super::component::{Component, Parts};
use super::event::{Comm, Event, Kind, SLEEPING_STATES};
use super::timeline::Timeline;

/// One wake as the measuring code saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The thread that waited.
    pub tid: i32,
    /// Its clock read before the wait, ns (CLOCK_MONOTONIC).
    pub start_ns: u64,
    /// When it asked to wake, ns.
    pub deadline_ns: u64,
    /// Its clock read after the wait, ns.
    pub end_ns: u64,
    /// How long it spun at the end on purpose (the precise sleeper's report), ns.
    pub spin_ns: u64,
}

impl Window {
    /// A relative wait of `requested_ns` timed from `start_ns` to `end_ns`.
    pub fn relative(tid: i32, start_ns: u64, requested_ns: u64, end_ns: u64) -> Self {
        Self {
            tid,
            start_ns,
            deadline_ns: start_ns.saturating_add(requested_ns),
            end_ns,
            spin_ns: 0,
        }
    }
}

/// The task that held a CPU while the thread waited for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its name.
    pub comm: String,
    /// Its thread id.
    pub pid: i32,
}

/// Where one wake's lateness went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WakeAccount {
    /// `end − deadline`, ns (negative: it returned early, and nothing is split).
    pub lateness_ns: i64,
    /// The lateness per component; they add up to `max(lateness, 0)`.
    pub parts: Parts,
    /// The task that kept the thread longest on a run queue, if any did.
    pub holder: Option<Holder>,
    /// Whether the thread blocked (went to sleep) in the window at all.
    pub blocked: bool,
    /// Whether every event of its way was found (false: part of it is unexplained
    /// because the tracer lost or never saw an event).
    pub traced: bool,
}

impl WakeAccount {
    /// A wake that blocked and whose every event was found, late by the sum of `parts`
    /// (what synthetic cells in tests are made of).
    pub fn of_parts(parts: &[(Component, u64)]) -> Self {
        let mut p = Parts::default();
        for &(c, ns) in parts {
            p.add(c, ns);
        }
        Self {
            lateness_ns: p.total() as i64,
            parts: p,
            holder: None,
            blocked: true,
            traced: true,
        }
    }
}

/// A stretch's start: from `at_ns` on (until the next mark), time counts to `what`.
#[derive(Debug, Clone, Copy)]
struct Mark {
    at_ns: u64,
    what: Component,
}

/// A time the thread spent runnable but off the CPU after a preemption.
#[derive(Debug, Clone)]
struct Preemption {
    from_ns: u64,
    to_ns: u64,
    by: Holder,
}

fn holder(pid: i32, comm: Comm) -> Holder {
    Holder {
        comm: comm.as_string(),
        pid,
    }
}

/// Splits the lateness of `w` using the events of `tl`.
pub fn account(tl: &Timeline, w: &Window) -> WakeAccount {
    let lateness_ns = w.end_ns as i64 - w.deadline_ns as i64;
    let events = tl.range(w.start_ns, w.end_ns);
    let tid = w.tid;

    // The last time the thread went to sleep in the window.
    let block = events.iter().rposition(|e| {
        matches!(e.kind, Kind::Switch { prev_pid, prev_state, .. }
            if prev_pid == tid && prev_state & SLEEPING_STATES != 0)
    });
    let (marks, traced, wake_holder) = match block {
        None => (
            vec![Mark {
                at_ns: w.start_ns,
                what: Component::Spin,
            }],
            true,
            None,
        ),
        Some(b) => wake_marks(tl, w, &events[b..]),
    };
    let preemptions = preemptions(events, tid);
    let mut marks = marks;
    if w.spin_ns > 0 {
        let spin_from = w.end_ns.saturating_sub(w.spin_ns);
        if marks.last().is_none_or(|m| m.at_ns <= spin_from) {
            marks.push(Mark {
                at_ns: spin_from,
                what: Component::Spin,
            });
        }
    }

    let mut parts = Parts::default();
    let lo = w.deadline_ns.max(w.start_ns);
    let mut run_queue_by: Vec<(Holder, u64)> = Vec::new();
    if lateness_ns > 0 && w.start_ns > w.deadline_ns {
        // The wait began after its deadline: that much was late before any wait.
        parts.add(Component::Overrun, w.start_ns.min(w.end_ns) - w.deadline_ns);
    }
    if lateness_ns > 0 {
        split(
            &marks,
            &preemptions,
            lo,
            w.end_ns,
            &mut parts,
            &mut run_queue_by,
        );
    }
    // The wake's own run-queue wait counts for the task that held the CPU then.
    let wake_rq =
        parts.get(Component::RunQueue) - run_queue_by.iter().map(|(_, ns)| ns).sum::<u64>();
    if let Some(h) = wake_holder {
        if wake_rq > 0 {
            run_queue_by.push((h, wake_rq));
        }
    }
    let holder = run_queue_by
        .into_iter()
        .max_by_key(|(_, ns)| *ns)
        .map(|(h, _)| h);
    WakeAccount {
        lateness_ns,
        parts,
        holder,
        blocked: block.is_some(),
        traced,
    }
}

/// The marks of a wake that blocked: `after_block` starts with the thread's last
/// switch to sleep. Returns the marks, whether every event was found, and the task the
/// thread found on its CPU when it got there (if not the idle task).
fn wake_marks(
    tl: &Timeline,
    w: &Window,
    after_block: &[Event],
) -> (Vec<Mark>, bool, Option<Holder>) {
    let tid = w.tid;
    let blocked_at = after_block[0].time_ns;
    let waking = after_block
        .iter()
        .find(|e| matches!(e.kind, Kind::Waking { pid, .. } if pid == tid));
    let from = waking.map_or(blocked_at, |e| e.time_ns);
    let on_cpu = after_block.iter().find(|e| {
        e.time_ns >= from && matches!(e.kind, Kind::Switch { next_pid, .. } if next_pid == tid)
    });
    let returned = on_cpu.and_then(|r| {
        after_block.iter().find(|e| {
            e.time_ns >= r.time_ns && e.pid == tid && matches!(e.kind, Kind::SysExit { .. })
        })
    });
    // The timer whose interrupt made the wakeup.
    let timer = waking.filter(|e| e.in_hardirq()).and_then(|wk| {
        let exp = tl.expiry_before(wk.cpu, blocked_at, wk.time_ns)?;
        let Kind::TimerExpire { timer, now_ns } = exp.kind else {
            return None;
        };
        let arm = tl.arming_before(timer, exp.time_ns)?;
        let ran = (now_ns.max(0) as u64).min(exp.time_ns);
        Some((arm, ran))
    });

    let mut marks = vec![Mark {
        at_ns: w.start_ns,
        what: Component::Entry,
    }];
    match timer {
        Some((arm, ran)) => {
            let soft = arm.soft_ns.max(0) as u64;
            let hard = arm.hard_ns.max(0) as u64;
            marks.push(Mark {
                at_ns: soft,
                what: Component::Slack,
            });
            marks.push(Mark {
                at_ns: ran.min(hard),
                what: Component::TimerIrq,
            });
        }
        None => marks.push(Mark {
            at_ns: blocked_at,
            what: Component::Unexplained,
        }),
    }
    let mut found_holder = None;
    match (waking, on_cpu) {
        (Some(wk), Some(r)) => {
            let Kind::Switch {
                prev_pid,
                prev_comm,
                ..
            } = r.kind
            else {
                unreachable!("on_cpu is a switch")
            };
            let idle = prev_pid == 0;
            if !idle {
                found_holder = Some(holder(prev_pid, prev_comm));
            }
            marks.push(Mark {
                at_ns: wk.time_ns,
                what: if idle {
                    Component::IdleWakeup
                } else {
                    Component::RunQueue
                },
            });
        }
        (Some(wk), None) => marks.push(Mark {
            at_ns: wk.time_ns,
            what: Component::Unexplained,
        }),
        (None, _) => {}
    }
    // Without the system calls' returns on record, the way out of the kernel is part
    // of the return path, and its end is not missing.
    let exits_recorded = tl.records_sys_exit();
    if let Some(r) = on_cpu {
        marks.push(Mark {
            at_ns: r.time_ns,
            what: if returned.is_some() {
                Component::KernelExit
            } else if exits_recorded {
                Component::Unexplained
            } else {
                Component::Return
            },
        });
    }
    if let Some(x) = returned {
        marks.push(Mark {
            at_ns: x.time_ns,
            what: Component::Return,
        });
    }
    let traced = timer.is_some()
        && waking.is_some()
        && on_cpu.is_some()
        && (returned.is_some() || !exits_recorded);
    (marks, traced, found_holder)
}

/// The thread's preemptions in `events`: switched out while runnable, until back in.
fn preemptions(events: &[Event], tid: i32) -> Vec<Preemption> {
    let mut out = Vec::new();
    let mut open: Option<(u64, Holder)> = None;
    for e in events {
        if let Kind::Switch {
            prev_pid,
            prev_state,
            next_pid,
            next_comm,
            ..
        } = e.kind
        {
            if prev_pid == tid && prev_state & SLEEPING_STATES == 0 {
                open = Some((e.time_ns, holder(next_pid, next_comm)));
            } else if next_pid == tid {
                if let Some((from_ns, by)) = open.take() {
                    out.push(Preemption {
                        from_ns,
                        to_ns: e.time_ns,
                        by,
                    });
                }
            }
            if prev_pid == tid && prev_state & SLEEPING_STATES != 0 {
                open = None;
            }
        }
    }
    out
}

/// Adds the time of `[lo, hi]` to `parts`: each instant counts to the component of
/// the last mark at or before it (marks taken in order, never going back in time),
/// or to the run queue inside a preemption (noted per task in `by`).
fn split(
    marks: &[Mark],
    preemptions: &[Preemption],
    lo: u64,
    hi: u64,
    parts: &mut Parts,
    by: &mut Vec<(Holder, u64)>,
) {
    // Marks as monotone stretches: a mark earlier than the one before it starts where
    // that one does (clock readings of different CPUs may disagree by a little).
    let mut stretches: Vec<(u64, Component)> = Vec::with_capacity(marks.len());
    for m in marks {
        let at = stretches.last().map_or(m.at_ns, |&(t, _)| m.at_ns.max(t));
        stretches.push((at, m.what));
    }
    let mut cuts: Vec<u64> = vec![lo, hi];
    cuts.extend(stretches.iter().map(|s| s.0));
    for p in preemptions {
        cuts.push(p.from_ns);
        cuts.push(p.to_ns);
    }
    cuts.retain(|&t| t >= lo && t <= hi);
    cuts.sort_unstable();
    cuts.dedup();
    for pair in cuts.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let ns = b - a;
        if let Some(p) = preemptions.iter().find(|p| p.from_ns <= a && b <= p.to_ns) {
            parts.add(Component::RunQueue, ns);
            match by.iter_mut().find(|(h, _)| *h == p.by) {
                Some((_, t)) => *t += ns,
                None => by.push((p.by.clone(), ns)),
            }
            continue;
        }
        let what = stretches
            .iter()
            .rev()
            .find(|s| s.0 <= a)
            .map_or(Component::Unexplained, |s| s.1);
        parts.add(what, ns);
    }
}

#[cfg(test)]
mod tests;
