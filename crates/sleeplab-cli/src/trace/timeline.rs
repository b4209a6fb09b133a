//! The recorded events of a run, sorted and indexed for the questions a wake's account
//! asks: what happened in a time range, which timer interrupt ran last on a CPU, when a
//! timer was last armed.

use super::decode::Tracepoint;
use super::event::{Event, Kind};
use super::session::Events;
use std::collections::HashMap;

/// A timer's arming: when, and its soft and hard expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arming {
    /// When it was armed, ns.
    pub time_ns: u64,
    /// Soft expiry, ns.
    pub soft_ns: i64,
    /// Hard expiry, ns.
    pub hard_ns: i64,
}

/// Events sorted by time, with the indexes a wake's account needs.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    events: Vec<Event>,
    /// Per timer address: its armings in time order.
    armings: HashMap<u64, Vec<Arming>>,
    /// Per CPU: indexes into `events` of its timer expiries, in time order.
    expiries: Vec<Vec<usize>>,
    /// What the tracer recorded: an event it did not record is not missing.
    recorded: Events,
}

impl Timeline {
    /// A timeline of `events` (any order; sorted here, stably, so events of one CPU
    /// keep the order they were recorded in).
    pub fn new(mut events: Vec<Event>) -> Self {
        events.sort_by_key(|e| e.time_ns);
        let mut armings: HashMap<u64, Vec<Arming>> = HashMap::new();
        let mut expiries: Vec<Vec<usize>> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            match e.kind {
                Kind::TimerStart {
                    timer,
                    soft_ns,
                    hard_ns,
                } => armings.entry(timer).or_default().push(Arming {
                    time_ns: e.time_ns,
                    soft_ns,
                    hard_ns,
                }),
                Kind::TimerExpire { .. } => {
                    let cpu = e.cpu as usize;
                    if expiries.len() <= cpu {
                        expiries.resize_with(cpu + 1, Vec::new);
                    }
                    expiries[cpu].push(i);
                }
                _ => {}
            }
        }
        Self {
            events,
            armings,
            expiries,
            recorded: Events::All,
        }
    }

    /// The same timeline, from a tracer that recorded `recorded` (a timeline is of
    /// [`Events::All`] until told otherwise).
    pub fn recording(mut self, recorded: Events) -> Self {
        self.recorded = recorded;
        self
    }

    /// Whether the system calls' returns were recorded: without them, the kernel's way
    /// out of the call is counted in the return path.
    pub fn records_sys_exit(&self) -> bool {
        self.recorded.records(Tracepoint::SysExit)
    }

    /// Every event, in time order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// How many events it holds.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether it holds no event.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events with `from_ns ≤ time ≤ to_ns`, in time order.
    pub fn range(&self, from_ns: u64, to_ns: u64) -> &[Event] {
        let lo = self.events.partition_point(|e| e.time_ns < from_ns);
        let hi = self.events.partition_point(|e| e.time_ns <= to_ns);
        &self.events[lo..hi.max(lo)]
    }

    /// The last timer expiry on `cpu` at or before `at_ns` and not before `not_before_ns`.
    pub fn expiry_before(&self, cpu: u32, not_before_ns: u64, at_ns: u64) -> Option<&Event> {
        let list = self.expiries.get(cpu as usize)?;
        let n = list.partition_point(|&i| self.events[i].time_ns <= at_ns);
        let e = &self.events[*list[..n].last()?];
        (e.time_ns >= not_before_ns).then_some(e)
    }

    /// The last arming of `timer` at or before `at_ns`.
    pub fn arming_before(&self, timer: u64, at_ns: u64) -> Option<Arming> {
        let list = self.armings.get(&timer)?;
        let n = list.partition_point(|a| a.time_ns <= at_ns);
        list[..n].last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, cpu: u32, kind: Kind) -> Event {
        Event {
            time_ns: t,
            cpu,
            pid: 0,
            flags: 0,
            kind,
        }
    }

    #[test]
    fn ranges_and_lookups() {
        let tl = Timeline::new(vec![
            ev(
                30,
                0,
                Kind::TimerExpire {
                    timer: 7,
                    now_ns: 29,
                },
            ),
            ev(
                10,
                0,
                Kind::TimerStart {
                    timer: 7,
                    soft_ns: 25,
                    hard_ns: 28,
                },
            ),
            ev(20, 1, Kind::TimerInterrupt),
            ev(
                40,
                0,
                Kind::TimerStart {
                    timer: 7,
                    soft_ns: 50,
                    hard_ns: 55,
                },
            ),
            ev(
                60,
                0,
                Kind::TimerExpire {
                    timer: 7,
                    now_ns: 56,
                },
            ),
        ]);
        assert_eq!(tl.len(), 5);
        assert_eq!(
            tl.range(20, 40)
                .iter()
                .map(|e| e.time_ns)
                .collect::<Vec<_>>(),
            vec![20, 30, 40]
        );
        assert!(tl.range(41, 59).is_empty());
        assert!(tl.range(70, 60).is_empty());
        assert_eq!(tl.expiry_before(0, 0, 59).unwrap().time_ns, 30);
        assert_eq!(tl.expiry_before(0, 0, 60).unwrap().time_ns, 60);
        assert!(tl.expiry_before(0, 31, 59).is_none());
        assert!(tl.expiry_before(1, 0, 100).is_none());
        assert!(tl.expiry_before(9, 0, 100).is_none());
        assert_eq!(tl.arming_before(7, 39).unwrap().soft_ns, 25);
        assert_eq!(tl.arming_before(7, 40).unwrap().hard_ns, 55);
        assert!(tl.arming_before(7, 9).is_none());
        assert!(tl.arming_before(8, 100).is_none());
    }
}
