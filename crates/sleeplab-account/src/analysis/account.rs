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
//! [`crate::capture::Events::NoSyscallExit`], has `on CPU ─return→ end`.)
//!
//! * The timer is the thread's own: the one it last armed itself (in a system call of
//!   its own, not in an interrupt) before it blocked, whose expiry on the waking CPU
//!   came before the wakeup. Its soft and hard expiry come from its last arming before
//!   that expiry, wherever that was (a periodic timer re-arms in its interrupt), and
//!   must lie in the window: an arming of an earlier wait (this one's lost) is not
//!   used. No own timer, or none that expired before the wakeup: the way to the
//!   wakeup is unexplained, never another timer's. Its slack ends early when another
//!   interrupt ran it before the hard expiry.
//! * From the wakeup to the switch onto the CPU: run queue while another task held the
//!   CPU the thread came on (from every switch on that CPU), idle wakeup while none did.
//!   Preemptions (switched out while runnable, then back in) count as run queue
//!   wherever they fall. Each run-queue stretch is credited to the task that held the
//!   CPU (a preemption's, to each task on the CPU it came back on in turn); the wake's
//!   holder is the one credited most.
//! * Only the part of each stretch after the deadline counts: the stretches add up to
//!   the lateness exactly. A wait that began after its deadline (a paced frame whose
//!   work overran) was `overrun` from the deadline to its start. A stretch whose events
//!   are missing is `unexplained`, and the wake is marked untraced.
//! * A wait that did not block: `spin` only for a wait that never blocks (a spin, a
//!   yield: [`Window::may_block`] false) or the precise sleeper's measured spin. A wait
//!   that can block whose switch-out is not on record is `unexplained` and untraced
//!   (the kernel drops a few `sched_switch` events), unless its voluntary context
//!   switches say it never blocked: then it was in the kernel from its timer's soft
//!   expiry until the call returned (`kernel exit`). A timer wait that began after
//!   its deadline cannot block: from its start it was in the kernel until the
//!   call returned. A wake whose whole lateness came before its wait began (two ticks
//!   in one wake: the second's window is empty) has nothing to trace.
//!
//! Pure: the tests build timelines by hand.

use super::component::{Component, Parts};
use super::no_guest::{Delivery, guest_work, idle_delivery, spin_gaps};
use super::timeline::{Arming, Timeline};
pub use super::window::Window;
use crate::capture::{Event, Kind, SLEEPING_STATES};
use holders::{Preemption, occupants, preemptions};

mod holders;

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
    /// Each task that kept the thread on a run queue after the deadline, with its own
    /// time, ns: the longest first (equal times by thread id). They add up to at most
    /// the run-queue component (a stretch whose holder is not on record is in it too).
    pub run_queue_by: Vec<(Holder, u64)>,
    /// Whether the thread blocked (went to sleep) in the window at all.
    pub blocked: bool,
    /// Whether every event of its way was found (false: part of it is unexplained
    /// because the tracer lost or never saw an event).
    pub traced: bool,
    /// Whether its [`Component::NO_GUEST_EVENT`] shares (an idle CPU's timer delivery,
    /// a spin's gaps) were told (the guest's interrupts were recorded, and a wake that
    /// spun had its spin's gaps logged): where not, they are unknown, not zero.
    pub host_told: bool,
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
            run_queue_by: Vec::new(),
            blocked: true,
            traced: true,
            host_told: true,
        }
    }
}

/// A stretch's start: from `at_ns` on (until the next mark), time counts to `what`.
#[derive(Debug, Clone, Copy)]
struct Mark {
    at_ns: u64,
    what: Component,
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
    // A timer wait that begins after its deadline returns at once: it cannot block.
    let may_block = w.may_block && w.start_ns <= w.deadline_ns;
    let switches = w.voluntary_switches;
    // `delivered`: whether the timer interrupt's delivery was told apart from its
    // handling, or needed no telling (no interrupt, or a CPU known to be running), and
    // the guest's work inside an idle CPU's delivery.
    let (marks, traced, held, delivered) = match block {
        Some(b) => wake_marks(tl, w, &events[b..]),
        None if !w.may_block => (
            vec![mark(w.start_ns, Component::Spin)],
            true,
            vec![],
            Delivered::none(),
        ),
        None if !may_block && switches.is_none_or(|n| n == 0) => {
            let (marks, traced) = late_call_marks(tl, w, events);
            (marks, traced, vec![], Delivered::none())
        }
        None if switches == Some(0) => {
            let (marks, traced, delivered) = unblocked_marks(tl, w, events);
            (marks, traced, vec![], delivered)
        }
        // It can block and did (or may have), but its switch-out is not on record.
        None => (
            vec![mark(w.start_ns, Component::Unexplained)],
            false,
            vec![],
            Delivered::none(),
        ),
    };
    // Blocked: the trace shows it, or (its switch-out lost) its context switches do.
    let blocked = block.is_some()
        || match switches {
            Some(n) => w.may_block && n > 0,
            None => may_block,
        };
    // Nothing of the lateness after the wait began (it was all overrun): nothing to trace.
    let traced = traced || w.end_ns <= w.start_ns.max(w.deadline_ns);
    // Run queue, each stretch credited to the task that held the CPU: the thread's
    // preemptions, and the stretches of its wakeup's wait another task held the CPU.
    let mut preemptions = preemptions(tl, events, tid);
    preemptions.extend(held);
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

    // The spin's gaps with no guest event: its logged gaps without the guest's
    // interrupts.
    let spins = marks.iter().any(|m| m.what == Component::Spin);
    let gaps = if spins {
        spin_gaps(tl, tid, w.start_ns, w.end_ns)
    } else {
        Some(Vec::new())
    };
    let host_told = tl.records_interrupts() && gaps.is_some() && delivered.told;
    let gaps = gaps.unwrap_or_default();

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
            (&gaps, &delivered.guest),
            lo,
            w.end_ns,
            &mut parts,
            &mut run_queue_by,
        );
    }
    run_queue_by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.pid.cmp(&b.0.pid)));
    let holder = run_queue_by.first().map(|(h, _)| h.clone());
    WakeAccount {
        lateness_ns,
        parts,
        holder,
        run_queue_by,
        blocked,
        traced,
        host_told,
    }
}

/// A stretch of time, `(from, to)` ns.
type Stretch = (u64, u64);

fn mark(at_ns: u64, what: Component) -> Mark {
    Mark { at_ns, what }
}

/// How a wake's timer interrupt was delivered, as far as its account goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Delivered {
    /// Whether the delivery was told apart from the handling, or needed no telling (no
    /// interrupt, or a CPU known to be running): false where the CPU's state is not on
    /// record.
    told: bool,
    /// The guest's own work inside an idle CPU's delivery ([`guest_work`]): the timer
    /// interrupt's, not the delivery's.
    guest: Vec<(u64, u64)>,
}

impl Delivered {
    /// Nothing to tell: no timer interrupt on the wake's way.
    fn none() -> Self {
        Self {
            told: true,
            guest: Vec::new(),
        }
    }
}

/// The marks of a wait that can block but did not switch out (its voluntary context
/// switches say so): the thread was still on its CPU when its own timer expired (it
/// had already expired when armed, or the wakeup came before the switch — on a VM, the
/// host took the vCPU between the two). Its timer, as for a wake that blocked, then
/// from its wakeup (or, none needed, the hard expiry) in the kernel until the call
/// returned. Returns the marks, whether every event was found and whether the
/// interrupt's delivery was told (`push_interrupt`).
fn unblocked_marks(tl: &Timeline, w: &Window, events: &[Event]) -> (Vec<Mark>, bool, Delivered) {
    let tid = w.tid;
    let span = (w.start_ns, w.end_ns);
    let mut marks = vec![mark(w.start_ns, Component::Entry)];
    let fired = tl
        .own_expiry(tid, span, span, None)
        .and_then(|(own, exp)| Some((timer_marks(tl, w, own, exp)?, exp.time_ns)));
    let mut delivered = Delivered::none();
    let found = match fired {
        Some(((arm, ran, expired), expired_at)) => {
            marks.push(mark(arm.soft_ns.max(0) as u64, Component::Slack));
            let from = ran.min(arm.hard_ns.max(0) as u64);
            delivered = push_interrupt(&mut marks, tl, w, (from, ran), expired);
            // Woken where it ran: from there in the kernel; with no wakeup (it had not
            // begun to sleep), from the expiry.
            let woken = events.iter().find(|e| {
                e.time_ns >= expired_at && matches!(e.kind, Kind::Waking { pid, .. } if pid == tid)
            });
            marks.push(mark(
                woken.map_or(expired_at, |e| e.time_ns),
                Component::KernelExit,
            ));
            true
        }
        // Armed already expired: no interrupt; from the soft expiry in the kernel.
        None => match tl
            .own_timer(tid, w.end_ns)
            .filter(|&(t, _)| t >= w.start_ns)
            .and_then(|(t, timer)| tl.arming_before(timer, t))
            // Only a timer already expired when armed needs no expiry; one armed for
            // later whose expiry was not recorded leaves the wake unexplained.
            .filter(|a| a.soft_ns <= a.time_ns as i64)
        {
            Some(arm) => {
                marks.push(mark(arm.soft_ns.max(0) as u64, Component::KernelExit));
                true
            }
            None => {
                marks.push(mark(w.start_ns, Component::Unexplained));
                false
            }
        },
    };
    let closed = close_call(tl, tid, events, &mut marks);
    (marks, found && closed, delivered)
}

/// Ends a call's marks at its return: the return path from the thread's last
/// `sys_exit` in `events`. With returns on record but this one lost, the stretch since
/// the last mark is unexplained; with none on record, the way out of the kernel is the
/// return path. Whether the call's end needed nothing that was lost.
fn close_call(tl: &Timeline, tid: i32, events: &[Event], marks: &mut Vec<Mark>) -> bool {
    let returned = events
        .iter()
        .rev()
        .find(|e| e.pid == tid && matches!(e.kind, Kind::SysExit { .. }));
    match (returned, marks.last_mut()) {
        (Some(x), _) => marks.push(mark(x.time_ns, Component::Return)),
        (None, Some(last)) if tl.records_sys_exit() => last.what = Component::Unexplained,
        (None, Some(last)) if last.what == Component::KernelExit => last.what = Component::Return,
        (None, _) => {}
    }
    returned.is_some() || !tl.records_sys_exit()
}

/// The marks of a timer wait that began after its deadline and so returned at once:
/// from its start in the kernel until the call returned, then the return path.
/// Returns the marks and whether every event was found.
fn late_call_marks(tl: &Timeline, w: &Window, events: &[Event]) -> (Vec<Mark>, bool) {
    let mut marks = vec![mark(w.start_ns, Component::KernelExit)];
    let closed = close_call(tl, w.tid, events, &mut marks);
    (marks, closed)
}

/// The marks of a wake that blocked: `after_block` starts with the thread's last
/// switch to sleep. Returns the marks, whether every event was found, the tasks that
/// held the CPU it came on while it waited, and how its timer interrupt was delivered.
fn wake_marks(
    tl: &Timeline,
    w: &Window,
    after_block: &[Event],
) -> (Vec<Mark>, bool, Vec<Preemption>, Delivered) {
    let tid = w.tid;
    let blocked_at = after_block[0].time_ns;
    let waking = after_block
        .iter()
        .find(|e| matches!(e.kind, Kind::Waking { pid, .. } if pid == tid));
    let from = waking.map_or(blocked_at, |e| e.time_ns);
    let on_cpu = after_block.iter().find(|e| {
        e.time_ns >= from && matches!(e.kind, Kind::Switch { next_pid, .. } if next_pid == tid)
    });
    // The call's return: after the switch-in, or, that one lost, after the wakeup.
    let returned = waking.and_then(|wk| {
        let after = on_cpu.map_or(wk.time_ns, |r| r.time_ns);
        after_block
            .iter()
            .find(|e| e.time_ns >= after && e.pid == tid && matches!(e.kind, Kind::SysExit { .. }))
    });
    // The thread's own timer, if its expiry made the wakeup: armed by the thread
    // itself before it blocked, expired on the waking CPU between the block and the
    // wakeup, and armed (last, before that expiry) for an expiry inside this window.
    let timer = waking.and_then(|wk| {
        let (own, exp) =
            tl.own_expiry(tid, (0, blocked_at), (blocked_at, wk.time_ns), Some(wk.cpu))?;
        timer_marks(tl, w, own, exp)
    });

    let mut marks = vec![mark(w.start_ns, Component::Entry)];
    let mut delivered = Delivered::none();
    match timer {
        Some((arm, ran, expired)) => {
            let soft = arm.soft_ns.max(0) as u64;
            let hard = arm.hard_ns.max(0) as u64;
            marks.push(mark(soft, Component::Slack));
            delivered = push_interrupt(&mut marks, tl, w, (ran.min(hard), ran), expired);
        }
        None => marks.push(mark(blocked_at, Component::Unexplained)),
    }
    // From the wakeup to the switch-in: idle wakeup, but for the stretches another task
    // held the CPU it came on (run queue, each credited to that task).
    let mut held = Vec::new();
    match (waking, on_cpu) {
        (Some(wk), Some(r)) => {
            marks.push(mark(wk.time_ns, Component::IdleWakeup));
            held = occupants(tl, wk.time_ns, r, tid);
        }
        (Some(wk), None) => marks.push(mark(wk.time_ns, Component::Unexplained)),
        (None, _) => {}
    }
    // Without the system calls' returns on record, the way out of the kernel is part
    // of the return path, and its end is not missing.
    let exits_recorded = tl.records_sys_exit();
    if let Some(r) = on_cpu {
        marks.push(mark(
            r.time_ns,
            if returned.is_some() {
                Component::KernelExit
            } else if exits_recorded {
                Component::Unexplained
            } else {
                Component::Return
            },
        ));
    }
    if let Some(x) = returned {
        marks.push(mark(x.time_ns, Component::Return));
    }
    let traced = timer.is_some()
        && waking.is_some()
        && on_cpu.is_some()
        && (returned.is_some() || !exits_recorded);
    (marks, traced, held, delivered)
}

/// The arming (soft and hard expiry) of the thread's own timer `own` behind its expiry
/// `exp`, when the timer ran (its handler's clock, or the expiry event), and the
/// expiry's CPU and time: `None`
/// where the arming is not this wait's (its soft expiry before the window: an earlier
/// wait's, this one's lost).
fn timer_marks(
    tl: &Timeline,
    w: &Window,
    own: u64,
    exp: &Event,
) -> Option<(Arming, u64, (u32, u64))> {
    let Kind::TimerExpire { now_ns, .. } = exp.kind else {
        return None;
    };
    let arm = tl
        .arming_before(own, exp.time_ns)
        .filter(|a| a.soft_ns.max(0) as u64 >= w.start_ns)?;
    Some((
        arm,
        (now_ns.max(0) as u64).min(exp.time_ns),
        (exp.cpu, exp.time_ns),
    ))
}

/// The marks of the timer's interrupt from `from_ns` (the hard expiry, or an earlier
/// interrupt that ran it) on the CPU it expired on, before `until_ns`: on an idle CPU
/// whose interrupt entry is recorded (or, the local timer not recorded, from the
/// handler's clock read `handler_ns`), the delivery until then (less the guest's work
/// recorded there, returned to be booked as the interrupt's), then the guest's
/// handling; otherwise all of it the timer interrupt's. Returns how it was delivered:
/// not told where the CPU's state is not on record (the delivery, if any, is then
/// unknown, not 0).
fn push_interrupt(
    marks: &mut Vec<Mark>,
    tl: &Timeline,
    w: &Window,
    (from_ns, handler_ns): (u64, u64),
    (cpu, until_ns): (u32, u64),
) -> Delivered {
    match idle_delivery(tl, cpu, w.start_ns, (from_ns, handler_ns), until_ns) {
        Delivery::Idle {
            entry_ns,
            idle_since_ns,
        } => {
            marks.push(mark(from_ns, Component::IdleDelivery));
            marks.push(mark(entry_ns, Component::TimerIrq));
            Delivered {
                told: true,
                guest: guest_work(tl, cpu, idle_since_ns, from_ns, entry_ns),
            }
        }
        Delivery::Running => {
            marks.push(mark(from_ns, Component::TimerIrq));
            Delivered::none()
        }
        Delivery::Unknown => {
            marks.push(mark(from_ns, Component::TimerIrq));
            Delivered {
                told: false,
                guest: Vec::new(),
            }
        }
    }
}

/// Adds the time of `[lo, hi]` to `parts`: each instant counts to the component of
/// the last mark at or before it (marks taken in order, never going back in time),
/// or to the run queue inside a preemption (noted per task in `by`), or to a spin gap
/// inside one of `gaps` where it would be spin, or to the timer interrupt inside one of
/// `guest` (the guest's work) where it would be an idle CPU's delivery.
fn split(
    marks: &[Mark],
    preemptions: &[Preemption],
    (gaps, guest): (&[Stretch], &[Stretch]),
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
    for &(a, b) in gaps.iter().chain(guest) {
        cuts.extend([a, b]);
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
        let inside = |list: &[Stretch]| list.iter().any(|h| h.0 <= a && b <= h.1);
        let what = match what {
            // A spin's gap the guest recorded nothing in.
            Component::Spin if inside(gaps) => Component::SpinGap,
            // The guest's own work while its timer's interrupt was on its way.
            Component::IdleDelivery if inside(guest) => Component::TimerIrq,
            other => other,
        };
        parts.add(what, ns);
    }
}

#[cfg(test)]
mod tests;
