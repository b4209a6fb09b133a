//! Who held the CPU while a thread waited for it: its preemptions, and the tasks on the
//! CPU it came on between its wakeup and its switch onto it.

use super::Holder;
use crate::analysis::timeline::Timeline;
use crate::capture::{Comm, Event, Kind, SLEEPING_STATES};

/// A time the thread was runnable while another task held its CPU: after a preemption,
/// or between its wakeup and its switch onto the CPU.
#[derive(Debug, Clone)]
pub(super) struct Preemption {
    pub(super) from_ns: u64,
    pub(super) to_ns: u64,
    pub(super) by: Holder,
}

/// A holder from a switch event's pid and name.
pub(super) fn holder(pid: i32, comm: Comm) -> Holder {
    Holder {
        comm: comm.as_string(),
        pid,
    }
}

/// Who held the CPU the thread came on (`switch_in`'s) from `from` until then: each
/// task's stretch, from the switches on that CPU (the task on it at `from` is the one
/// the first of them switched out). The idle task and the thread itself hold nothing.
pub(super) fn occupants(tl: &Timeline, from: u64, switch_in: &Event, tid: i32) -> Vec<Preemption> {
    let cpu = switch_in.cpu;
    let switches: Vec<(u64, i32, Comm, i32, Comm)> = tl
        .range(from, switch_in.time_ns)
        .iter()
        .filter(|e| e.cpu == cpu && e.time_ns < switch_in.time_ns)
        .chain(std::iter::once(switch_in))
        .filter_map(|e| match e.kind {
            Kind::Switch {
                prev_pid,
                prev_comm,
                next_pid,
                next_comm,
                ..
            } => Some((e.time_ns, prev_pid, prev_comm, next_pid, next_comm)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    let mut at = from;
    for &(t, prev_pid, prev_comm, _, _) in &switches {
        if prev_pid != 0 && prev_pid != tid && t > at {
            out.push(Preemption {
                from_ns: at,
                to_ns: t,
                by: holder(prev_pid, prev_comm),
            });
        }
        at = t;
    }
    out
}

/// The thread's preemptions in `events`: switched out while runnable, until back in.
pub(super) fn preemptions(events: &[Event], tid: i32) -> Vec<Preemption> {
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
