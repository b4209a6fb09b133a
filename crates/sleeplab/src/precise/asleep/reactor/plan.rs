//! The reactor timer's decisions, with no clock and no I/O: which of its two timerfds to
//! arm for which deadline and when, what a wake fires, whether it spins first, and what
//! it learns. Tested in virtual time.
//!
//! Two timerfds hold the two earliest distinct deadlines. After a wake the one that
//! fired is re-armed for the third, a time no earlier than the other's: re-arming never
//! moves the kernel's earliest timer, which on a virtual machine costs a clock-event
//! reprogram (an exit to the host) at every wake when one timerfd is re-armed for the
//! very next deadline. Only a deadline registered among the two earliest arms the
//! earliest timer.

use super::super::queue::{Counts, Due, Queue, Slot};
use crate::precise::estimator::MarginEstimator;
use crate::precise::tradeoff::Tradeoff;
use std::sync::Arc;

/// How many timerfds the timer keeps armed.
pub(crate) const FDS: usize = 2;

/// What to do to each timerfd: `None`, leave it; `Some(Some(t))`, arm it to fire at `t`
/// (absolute, ns); `Some(None)`, disarm it.
pub(crate) type Changes = [Option<Option<u64>>; FDS];

/// What a wake of the dispatch task does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// It fired sleeps (or none is near): wake them and re-arm.
    Done,
    /// None was due yet, and the earliest deadline is the one the timerfd that woke it
    /// was armed for, its fire time passed: spin to it, then fire.
    SpinTo(u64),
}

/// The deadline a timerfd is armed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Armed {
    /// The sleep's deadline, ns.
    pub(crate) deadline_ns: u64,
    /// When the timerfd fires: the deadline minus the margin, ns.
    pub(crate) fire_ns: u64,
    /// The clock when it was armed, ns (a fire time already past fires at once: its
    /// wake is late only from here).
    pub(crate) set_ns: u64,
}

/// The reactor timer's state of mind.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) queue: Queue,
    pub(crate) estimator: MarginEstimator,
    tradeoff: Tradeoff,
    /// What each timerfd is armed for (`None`: disarmed, or fired and not re-armed).
    pub(crate) armed: [Option<Armed>; FDS],
}

impl Plan {
    pub(crate) fn new(tradeoff: Tradeoff) -> Self {
        Self {
            queue: Queue::default(),
            estimator: MarginEstimator::default(),
            tradeoff,
            armed: [None; FDS],
        }
    }

    /// The margin for a deadline `wait_ns` away: the estimator's, bounded by the budget.
    pub(crate) fn margin_ns(&self, wait_ns: u64) -> u64 {
        self.tradeoff
            .margin_ns(&self.estimator, wait_ns)
            .min(wait_ns)
    }

    /// Queues a sleep at `now_ns`; what to arm (only when it is among the two earliest
    /// deadlines and not armed yet).
    pub(crate) fn register(&mut self, now_ns: u64, deadline_ns: u64, slot: Arc<Slot>) -> Changes {
        self.queue.push(deadline_ns, slot);
        self.sync(now_ns)
    }

    /// Timerfd `fd` woke the dispatch task at `now_ns`. If its fire time has passed (else
    /// the wake is stale: an expiry re-armed since), learns how late the wake came after
    /// it (the kernel's and the executor's delay, which the margin covers). Fires what is
    /// due into `due`, and says whether to spin to the next deadline first.
    pub(crate) fn wake(&mut self, fd: usize, now_ns: u64, due: &mut Due, counts: &Counts) -> Step {
        let fired = self.armed[fd].filter(|a| now_ns >= a.fire_ns);
        if let Some(a) = fired {
            self.armed[fd] = None;
            // Never negative: the fire time is past and the arming was before now.
            self.estimator.observe(now_ns - a.fire_ns.max(a.set_ns));
        }
        self.queue.take_due(now_ns, due, counts);
        match (fired, due.next_ns) {
            (Some(a), Some(next)) if due.wakers.is_empty() && next == a.deadline_ns => {
                Step::SpinTo(next)
            }
            _ => Step::Done,
        }
    }

    /// After a wake at `now_ns`: what to arm so that the timerfds hold the two earliest
    /// deadlines left.
    pub(crate) fn rearm(&mut self, now_ns: u64) -> Changes {
        self.sync(now_ns)
    }

    /// Brings the timerfds to the two earliest distinct deadlines, touching only those
    /// that hold another (or none): one already armed for a wanted deadline is left
    /// alone, so after a wake only the one that fired is re-armed, for a later time than
    /// the other's.
    fn sync(&mut self, now_ns: u64) -> Changes {
        let first = self.queue.next_ns();
        // One wanted deadline per timerfd (the type ties the list to FDS).
        let wanted: [Option<u64>; FDS] = [first, first.and_then(|d| self.queue.next_after_ns(d))];
        let holds = |a: &Option<Armed>, d: u64| a.is_some_and(|a| a.deadline_ns == d);
        let mut changes: Changes = [None; FDS];
        // Timerfds armed for a deadline no longer wanted are free.
        let mut free = [false; FDS];
        for (fd, a) in self.armed.iter().enumerate() {
            free[fd] = a.is_none_or(|a| !wanted.contains(&Some(a.deadline_ns)));
        }
        for d in wanted.into_iter().flatten() {
            if self.armed.iter().any(|a| holds(a, d)) {
                continue;
            }
            let Some(fd) = free.iter().position(|&f| f) else {
                break;
            };
            free[fd] = false;
            let fire_ns = d - self.margin_ns(d.saturating_sub(now_ns));
            self.armed[fd] = Some(Armed {
                deadline_ns: d,
                fire_ns,
                set_ns: now_ns,
            });
            changes[fd] = Some(Some(fire_ns));
        }
        // A free timerfd left over (fewer than two deadlines) is disarmed if armed.
        for fd in 0..FDS {
            if free[fd] && self.armed[fd].take().is_some() {
                changes[fd] = Some(None);
            }
        }
        changes
    }
}
