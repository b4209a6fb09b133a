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

/// The thread's preemptions in `events` (a range of `tl`): switched out while runnable,
/// until back in; each split among the tasks that held the CPU it came back on
/// ([`occupants`]), the time no switch there accounts for credited to the task it was
/// switched out for.
pub(super) fn preemptions(tl: &Timeline, events: &[Event], tid: i32) -> Vec<Preemption> {
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
                    let held = occupants(tl, from_ns, e, tid);
                    out.extend(filled(from_ns, e.time_ns, &by, held));
                }
            }
            if prev_pid == tid && prev_state & SLEEPING_STATES != 0 {
                open = None;
            }
        }
    }
    out
}

/// `held` (stretches inside `[from, to]`, in time order) with the time between and
/// around them credited to `by`: the whole of `[from, to]`, each instant once.
fn filled(from: u64, to: u64, by: &Holder, held: Vec<Preemption>) -> Vec<Preemption> {
    let mut out = Vec::with_capacity(held.len() * 2 + 1);
    let mut at = from;
    let rest = |a: u64, b: u64, out: &mut Vec<Preemption>| {
        if b > a {
            out.push(Preemption {
                from_ns: a,
                to_ns: b,
                by: by.clone(),
            });
        }
    };
    for p in held {
        let (a, b) = (p.from_ns.max(at), p.to_ns.min(to));
        if b <= a {
            continue;
        }
        rest(at, a, &mut out);
        out.push(Preemption {
            from_ns: a,
            to_ns: b,
            by: p.by,
        });
        at = b;
    }
    rest(at, to, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pid: i32) -> Holder {
        Holder {
            comm: format!("t{pid}"),
            pid,
        }
    }

    fn p(from_ns: u64, to_ns: u64, pid: i32) -> Preemption {
        Preemption {
            from_ns,
            to_ns,
            by: h(pid),
        }
    }

    /// Every instant of the preemption is credited once: to the task that held the CPU
    /// then, or to the one it was switched out for where no switch says.
    #[test]
    fn a_preemption_is_filled_around_its_occupants() {
        let spans = |v: Vec<Preemption>| -> Vec<(u64, u64, i32)> {
            v.into_iter()
                .map(|p| (p.from_ns, p.to_ns, p.by.pid))
                .collect()
        };
        assert_eq!(spans(filled(0, 100, &h(1), vec![])), [(0, 100, 1)]);
        assert_eq!(
            spans(filled(0, 100, &h(1), vec![p(20, 50, 2), p(60, 100, 3)])),
            [(0, 20, 1), (20, 50, 2), (50, 60, 1), (60, 100, 3)]
        );
        // Stretches past the edges are cut to them; overlapping ones counted once.
        assert_eq!(
            spans(filled(
                10,
                90,
                &h(1),
                vec![p(0, 30, 2), p(20, 40, 3), p(80, 200, 4)]
            )),
            [(10, 30, 2), (30, 40, 3), (40, 80, 1), (80, 90, 4)]
        );
        for v in [vec![], vec![p(5, 7, 2)], vec![p(0, 1000, 2)]] {
            let total: u64 = filled(3, 50, &h(1), v)
                .iter()
                .map(|p| p.to_ns - p.from_ns)
                .sum();
            assert_eq!(total, 47);
        }
    }
}
