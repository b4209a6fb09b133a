//! The stretches of a wake in which the guest recorded nothing of its own, from what
//! the guest recorded and what it did not:
//!
//! * **In a spin** ([`Component::SpinGap`]): the spinner's clock reads are not in the
//!   trace, but its spins' gaps are ([`sleeplab::lab::noise::spin_log`], handed to the
//!   timeline). A gap in which the guest kernel recorded no interrupt or softirq that
//!   interrupted the spinner, and no switch away from it, is time the spinner's CPU ran
//!   none of the guest's recorded code: on a VM read as the host's (measured on a
//!   2-vCPU KVM guest: 903 of 1133 gaps over 5 µs of a post-halt spin had no guest
//!   event within ±1 µs). A gap with guest events is split at their stamps: from an
//!   interrupt's entry to its exit the guest ran (the spin's own share); a preemption
//!   is run queue.
//! * **In the timer interrupt** ([`Component::IdleDelivery`]): from the hard expiry to
//!   the guest's local-timer entry on a CPU that was idle (its last switch was to the
//!   idle task), or, where the local timer is not recorded (`Detail::Interrupts`), to
//!   the timer handler's own clock read, less the guest's own work recorded there
//!   ([`guest_work`]): the
//!   interrupts and softirqs that ran on that CPU, and, where the idle loop's states
//!   are recorded (`power:cpu_idle`), every moment the CPU was not stopped in one (the
//!   idle loop before it halted, after an interrupt, or polling). That work is the
//!   guest's ([`Component::TimerIrq`]), as is the handling from the entry to the wakeup.
//!   What is left is a delivery delay; on a VM whose vCPU halted it reads as the host's
//!   time to run it again, on bare metal as the exit from a sleep state.
//!
//! Without the guest's interrupts recorded neither is told: the share is unknown, and
//! a wake's account says so (`WakeAccount::host_told`).
//!
//! [`Component::SpinGap`]: super::component::Component::SpinGap
//! [`Component::IdleDelivery`]: super::component::Component::IdleDelivery
//! [`Component::TimerIrq`]: super::component::Component::TimerIrq

use super::timeline::Timeline;
use crate::capture::{Interrupt, Kind};

/// The stretches of `[from_ns, to_ns]` in which the guest kernel ran an interrupt or a
/// softirq that interrupted thread `tid`: entry to exit (nested ones merged; an exit
/// whose entry came before `from_ns` starts there, an entry with no exit runs to
/// `to_ns`), in time order.
pub fn guest_busy(tl: &Timeline, tid: i32, from_ns: u64, to_ns: u64) -> Vec<(u64, u64)> {
    busy_where(tl, |e| e.pid == tid, from_ns, to_ns)
}

/// [`guest_busy`] of the events `of` picks.
fn busy_where(
    tl: &Timeline,
    of: impl Fn(&crate::capture::Event) -> bool,
    from_ns: u64,
    to_ns: u64,
) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut depth = 0u32;
    let mut open = from_ns;
    for e in tl.range(from_ns, to_ns).iter().filter(|e| of(e)) {
        match e.kind {
            Kind::IrqEntry { .. } => {
                if depth == 0 {
                    open = e.time_ns;
                }
                depth += 1;
            }
            Kind::IrqExit { .. } if depth == 0 => push(&mut out, (from_ns, e.time_ns)),
            Kind::IrqExit { .. } => {
                depth -= 1;
                if depth == 0 {
                    push(&mut out, (open, e.time_ns));
                }
            }
            _ => {}
        }
    }
    if depth > 0 {
        push(&mut out, (open, to_ns));
    }
    out
}

/// Appends `(a, b)` to stretches in time order, merging it with the last if they touch.
fn push(out: &mut Vec<(u64, u64)>, (a, b): (u64, u64)) {
    match out.last_mut() {
        Some(last) if a <= last.1 => last.1 = last.1.max(b),
        _ => out.push((a, b)),
    }
}

/// `gap` without the stretches `busy` (in time order): what is left, in time order.
pub fn subtract(gap: (u64, u64), busy: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = gap.0;
    for &(a, b) in busy {
        if b <= at || a >= gap.1 {
            continue;
        }
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < gap.1 {
        out.push((at, gap.1));
    }
    out
}

/// The stretches of thread `tid`'s spins in `[from_ns, to_ns]` with no guest event
/// ([`Component::SpinGap`]): its logged gaps there, clipped, without the guest's
/// interrupts of it. `None` where they cannot be told: the guest's interrupts not
/// recorded (the local timer's among them: its ticks interrupt a spin), or the
/// thread's gaps not logged.
///
/// [`Component::SpinGap`]: super::component::Component::SpinGap
pub fn spin_gaps(tl: &Timeline, tid: i32, from_ns: u64, to_ns: u64) -> Option<Vec<(u64, u64)>> {
    if !tl.records_local_timer() {
        return None;
    }
    let gaps = tl.spin_gaps(tid, from_ns, to_ns)?;
    let busy = guest_busy(tl, tid, from_ns, to_ns);
    Some(
        gaps.iter()
            .map(|&(a, b)| (a.max(from_ns), b.min(to_ns)))
            .filter(|(a, b)| a < b)
            .flat_map(|g| subtract(g, &busy))
            .collect(),
    )
}

/// The guest's own work on idle `cpu` in `[from_ns, to_ns]` (a timer's delivery), in
/// time order: the interrupts and softirqs that interrupted its idle task there, entry
/// to exit; and where the idle loop's states on `cpu` since `idle_since_ns` (its switch
/// to the idle task) are on record, every moment it was not stopped in one: from an
/// entry into a stopping state (HLT or deeper, state ≥ 1) to the next interrupt entry,
/// state exit or polling entry the CPU was stopped; all else the guest ran (the idle
/// loop, its polling, the interrupts). Without the idle states on record, only the
/// interrupts are told.
pub fn guest_work(
    tl: &Timeline,
    cpu: u32,
    idle_since_ns: u64,
    from_ns: u64,
    to_ns: u64,
) -> Vec<(u64, u64)> {
    let interrupts = busy_where(tl, |e| e.cpu == cpu && e.pid == 0, from_ns, to_ns);
    let since = idle_since_ns.min(from_ns);
    let on_cpu: Vec<&crate::capture::Event> = tl
        .range(since, to_ns)
        .iter()
        .filter(|e| e.cpu == cpu)
        .collect();
    let states_recorded = on_cpu
        .iter()
        .any(|e| matches!(e.kind, Kind::IdleEnter { .. } | Kind::IdleExit));
    if !states_recorded {
        return interrupts;
    }
    let mut stopped: Vec<(u64, u64)> = Vec::new();
    let mut since_stop: Option<u64> = None;
    for e in on_cpu {
        match e.kind {
            Kind::IdleEnter { state } if state >= 1 => {
                since_stop.get_or_insert(e.time_ns);
            }
            Kind::IdleEnter { .. } | Kind::IdleExit | Kind::IrqEntry { .. } => {
                if let Some(a) = since_stop.take() {
                    push(&mut stopped, (a, e.time_ns));
                }
            }
            _ => {}
        }
    }
    if let Some(a) = since_stop {
        push(&mut stopped, (a, to_ns));
    }
    subtract((from_ns, to_ns), &stopped)
}

/// How a timer interrupt reached the CPU its timer expired on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The CPU was idle (its last switch was to the idle task): from the expiry to the
    /// guest's local-timer entry, or where the local timer is not recorded to the
    /// timer handler's clock read, the timer's interrupt was being delivered, and the
    /// guest ran only what it recorded there ([`guest_work`]).
    Idle {
        /// The guest's interrupt entry (or its handler's clock read), ns.
        entry_ns: u64,
        /// The CPU's switch to the idle task, ns.
        idle_since_ns: u64,
    },
    /// The CPU was running a task: the interrupt came while the guest ran.
    Running,
    /// Not on record: the interrupts were not recorded, no entry was, or no switch on
    /// that CPU since the wake began says what it was doing (a CPU whose idle task's
    /// events the kernel does not record). Its delivery, if any, is not told apart.
    Unknown,
}

/// How the timer interrupt that ran a timer expiring at `expired_ns` on `cpu` was
/// delivered, from `from_ns` (its hard expiry, or the earlier clock read of the
/// handler that ran it): the last local-timer entry on `cpu` in `[since_ns,
/// expired_ns]` (one before `from_ns` and not exited by then was already running when
/// the timer came due: nothing to deliver), and the CPU's state from its last switch
/// since `since_ns`. Where the local timer is not recorded, the delivery ends at
/// `handler_ns`, the handler's own clock read: the interrupt's entry, and an interrupt
/// already running when the timer came due, are then not told from the delivery.
pub fn idle_delivery(
    tl: &Timeline,
    cpu: u32,
    since_ns: u64,
    (from_ns, handler_ns): (u64, u64),
    expired_ns: u64,
) -> Delivery {
    if !tl.records_interrupts() || from_ns > expired_ns {
        return Delivery::Unknown;
    }
    let entry_ns = if tl.records_local_timer() {
        match local_timer_entry(tl, cpu, since_ns, from_ns, expired_ns) {
            Ok(at) => at,
            Err(delivery) => return delivery,
        }
    } else {
        handler_ns.clamp(from_ns, expired_ns)
    };
    let last_switch = tl
        .range(since_ns, entry_ns)
        .iter()
        .rev()
        .find_map(|e| match e.kind {
            Kind::Switch { next_pid, .. } if e.cpu == cpu => Some((next_pid, e.time_ns)),
            _ => None,
        });
    match last_switch {
        Some((0, at)) => Delivery::Idle {
            entry_ns,
            idle_since_ns: at,
        },
        Some(_) => Delivery::Running,
        None => Delivery::Unknown,
    }
}

/// The last local-timer entry on `cpu` in `[since_ns, expired_ns]`, or the delivery
/// it tells without one: none on record (unknown), or one before `from_ns` still
/// running then (it ran the timer: running) or exited by then (the interrupt that ran
/// it is not on record: unknown).
fn local_timer_entry(
    tl: &Timeline,
    cpu: u32,
    since_ns: u64,
    from_ns: u64,
    expired_ns: u64,
) -> Result<u64, Delivery> {
    let entry = tl.range(since_ns, expired_ns).iter().rev().find(|e| {
        e.cpu == cpu
            && matches!(
                e.kind,
                Kind::IrqEntry {
                    what: Interrupt::LocalTimer,
                    ..
                }
            )
    });
    let Some(entry) = entry else {
        return Err(Delivery::Unknown);
    };
    if entry.time_ns >= from_ns {
        return Ok(entry.time_ns);
    }
    let exited = tl.range(entry.time_ns, from_ns).iter().any(|e| {
        e.cpu == cpu
            && matches!(
                e.kind,
                Kind::IrqExit {
                    what: Interrupt::LocalTimer,
                    ..
                }
            )
    });
    Err(if exited {
        Delivery::Unknown
    } else {
        Delivery::Running
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracting_stretches() {
        assert_eq!(subtract((10, 20), &[]), vec![(10, 20)]);
        assert_eq!(subtract((10, 20), &[(12, 15)]), vec![(10, 12), (15, 20)]);
        assert_eq!(subtract((10, 20), &[(0, 12), (18, 30)]), vec![(12, 18)]);
        assert_eq!(subtract((10, 20), &[(0, 30)]), vec![]);
        assert_eq!(subtract((10, 20), &[(0, 5), (25, 30)]), vec![(10, 20)]);
        // What is left never exceeds the gap, and the parts are disjoint and ordered.
        let left = subtract((0, 100), &[(5, 10), (8, 20), (50, 60)]);
        assert_eq!(left, vec![(0, 5), (20, 50), (60, 100)]);
    }
}
