//! The recorded events of a run, sorted and indexed for the questions a wake's account
//! asks: what happened in a time range, which timer a thread armed itself, when that
//! timer expired, when a timer was last armed.

use crate::capture::{Captured, Event, Events, InterruptsRecorded, Kind, SwitchStack};
use std::collections::HashMap;

/// How many of a thread's own timers (the latest first) a wake's account looks through
/// for the one that woke it.
pub const OWN_TIMERS_SEARCHED: usize = 8;

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
    /// Per timer address: its armings in time order (by anyone: a periodic timer is
    /// re-armed by its own interrupt).
    armings: HashMap<u64, Vec<Arming>>,
    /// Per thread: `(when, timer address)` of every timer it armed in its own context
    /// (a system call of its own, not an interrupt that happened to interrupt it), in
    /// time order.
    own_armings: HashMap<i32, Vec<(u64, u64)>>,
    /// Per timer address: indexes into `events` of its expiries, in time order.
    expiries: HashMap<u64, Vec<usize>>,
    /// What the tracer recorded: an event it did not record is not missing.
    recorded: Events,
    /// Which of the guest's interrupts and softirqs were recorded.
    interrupts: InterruptsRecorded,
    /// Per thread: the gaps of its spins, `(from, to)` in time order, where they were
    /// logged ([`sleeplab::lab::noise::spin_log`]).
    spin_gaps: HashMap<i32, Vec<(u64, u64)>>,
    /// The kernel stacks of the tasks that left a CPU, by `(cpu, switch time)`, where
    /// they were recorded.
    stacks: Vec<SwitchStack>,
    /// Stack records the tracer could not pair with their switch.
    unpaired_stacks: u64,
    /// Threads of a followed program whose first calls may be missing.
    late_threads: u64,
}

impl Timeline {
    /// A timeline of `events` (any order; sorted here, stably, so events of one CPU
    /// keep the order they were recorded in).
    pub fn new(mut events: Vec<Event>) -> Self {
        events.sort_by_key(|e| e.time_ns);
        let mut armings: HashMap<u64, Vec<Arming>> = HashMap::new();
        let mut own_armings: HashMap<i32, Vec<(u64, u64)>> = HashMap::new();
        let mut expiries: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            match e.kind {
                Kind::TimerStart {
                    timer,
                    soft_ns,
                    hard_ns,
                } => {
                    armings.entry(timer).or_default().push(Arming {
                        time_ns: e.time_ns,
                        soft_ns,
                        hard_ns,
                    });
                    if e.in_task() && e.pid > 0 {
                        own_armings
                            .entry(e.pid)
                            .or_default()
                            .push((e.time_ns, timer));
                    }
                }
                Kind::TimerExpire { timer, .. } => expiries.entry(timer).or_default().push(i),
                _ => {}
            }
        }
        Self {
            events,
            armings,
            own_armings,
            expiries,
            recorded: Events::All,
            interrupts: InterruptsRecorded::None,
            spin_gaps: HashMap::new(),
            stacks: Vec::new(),
            unpaired_stacks: 0,
            late_threads: 0,
        }
    }

    /// The timeline of what a tracer captured (its lost count aside).
    pub fn of(c: Captured) -> Self {
        let mut stacks = c.stacks;
        stacks.sort_by_key(|s| (s.cpu, s.time_ns));
        let mut tl = Self::new(c.events)
            .recording(c.recorded)
            .with_interrupts_recorded(c.interrupts);
        tl.stacks = stacks;
        tl.unpaired_stacks = c.unpaired_stacks;
        tl.late_threads = c.late_threads;
        tl
    }

    /// The kernel stack of the task that the switch on `cpu` at `time_ns` took off
    /// it, where it was recorded (innermost address first).
    pub fn stack_at(&self, cpu: u32, time_ns: u64) -> Option<&[u64]> {
        self.stacks
            .binary_search_by_key(&(cpu, time_ns), |s| (s.cpu, s.time_ns))
            .ok()
            .map(|i| self.stacks[i].frames.as_slice())
    }

    /// Whether kernel stacks were recorded with it.
    pub fn records_stacks(&self) -> bool {
        !self.stacks.is_empty()
    }

    /// Stack records the tracer dropped: no switch just before them on their CPU.
    pub fn unpaired_stacks(&self) -> u64 {
        self.unpaired_stacks
    }

    /// The same timeline, its guest interrupts and softirqs all recorded (`true`, the
    /// local timer's among them) or none (a timeline records none until told).
    pub fn with_interrupts(self, recorded: bool) -> Self {
        self.with_interrupts_recorded(InterruptsRecorded::all_or_none(recorded))
    }

    /// The same timeline, recording `recorded` of the guest's interrupts: without the
    /// local timer's, an idle CPU's timer delivery ends at the timer handler's clock read.
    pub fn with_interrupts_recorded(mut self, recorded: InterruptsRecorded) -> Self {
        self.interrupts = recorded;
        self
    }

    /// Which of the guest's interrupts and softirqs were recorded.
    pub fn interrupts_recorded(&self) -> InterruptsRecorded {
        self.interrupts
    }

    /// Whether the local timer's interrupt was recorded with the others.
    pub fn records_local_timer(&self) -> bool {
        self.interrupts.local_timer()
    }

    /// Whether the guest's interrupts and softirqs were recorded: only then is any time
    /// told to be the host's.
    pub fn records_interrupts(&self) -> bool {
        self.interrupts.any()
    }

    /// The same timeline with the gaps of thread `tid`'s spins, `(from, to)` ns (any
    /// order; added to those it had).
    pub fn with_spin_gaps(mut self, tid: i32, gaps: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let list = self.spin_gaps.entry(tid).or_default();
        list.extend(gaps);
        list.sort_unstable();
        self
    }

    /// The gaps of `tid`'s spins that overlap `[from_ns, to_ns]`; `None` where its
    /// spins' gaps were not logged.
    pub fn spin_gaps(&self, tid: i32, from_ns: u64, to_ns: u64) -> Option<&[(u64, u64)]> {
        let list = self.spin_gaps.get(&tid)?;
        let lo = list.partition_point(|g| g.1 < from_ns);
        let hi = list.partition_point(|g| g.0 <= to_ns);
        Some(&list[lo..hi.max(lo)])
    }

    /// The same timeline, from a tracer that recorded `recorded` (a timeline is of
    /// [`Events::All`] until told otherwise).
    pub fn recording(mut self, recorded: Events) -> Self {
        self.recorded = recorded;
        self
    }

    /// The same timeline, said to have recorded what `other` did (its tracepoints, its
    /// interrupts, its local timer): a window of `other`'s events read on its own.
    pub fn recorded_as(self, other: &Timeline) -> Self {
        self.recording(other.recorded)
            .with_interrupts_recorded(other.interrupts)
    }

    /// Whether the system calls' returns were recorded: without them, the kernel's way
    /// out of the call is counted in the return path.
    pub fn records_sys_exit(&self) -> bool {
        self.recorded.records_sys_exit()
    }

    /// Threads of a followed program born where the tracer's filter did not reach
    /// (the machine created tasks faster than its drains moved it on): their first
    /// system calls, and the waits among them, may be missing.
    pub fn late_threads(&self) -> u64 {
        self.late_threads
    }

    /// Which tracepoints were recorded.
    pub fn recorded(&self) -> Events {
        self.recorded
    }

    /// What was captured, again: the events (in time order), what was recorded, and
    /// `lost` (a timeline does not keep its tracer's lost count); its spin gaps aside.
    /// `Timeline::of` of it is this timeline.
    pub fn captured(&self, lost: u64) -> Captured {
        Captured {
            events: self.events.clone(),
            recorded: self.recorded,
            lost,
            interrupts: self.interrupts,
            stacks: self.stacks.clone(),
            unpaired_stacks: self.unpaired_stacks,
            late_threads: self.late_threads,
        }
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

    /// The timer thread `tid` last armed itself at or before `at_ns`: `(when, its
    /// address)`.
    pub fn own_timer(&self, tid: i32, at_ns: u64) -> Option<(u64, u64)> {
        let list = self.own_armings.get(&tid)?;
        let n = list.partition_point(|&(t, _)| t <= at_ns);
        list[..n].last().copied()
    }

    /// The timer thread `tid` armed itself in `armed` (the latest first, among its
    /// last `OWN_TIMERS_SEARCHED` distinct timers) that expired in `expired` (on
    /// `cpu` when given), and that expiry. Not simply the last one it armed: on its
    /// way to sleep the scheduler may arm a timer of its own in the thread's context
    /// (the deadline server's), which does not wake it.
    pub fn own_expiry(
        &self,
        tid: i32,
        armed: (u64, u64),
        expired: (u64, u64),
        cpu: Option<u32>,
    ) -> Option<(u64, &Event)> {
        let list = self.own_armings.get(&tid)?;
        let lo = list.partition_point(|&(t, _)| t < armed.0);
        let hi = list.partition_point(|&(t, _)| t <= armed.1);
        let mut tried: Vec<u64> = Vec::new();
        for &(_, timer) in list[lo..hi.max(lo)].iter().rev() {
            if tried.contains(&timer) {
                continue;
            }
            if tried.len() == OWN_TIMERS_SEARCHED {
                break;
            }
            tried.push(timer);
            let hit = self
                .expiry_of(timer, expired.0, expired.1)
                .filter(|e| cpu.is_none_or(|c| e.cpu == c));
            if let Some(e) = hit {
                return Some((timer, e));
            }
        }
        None
    }

    /// The last expiry of `timer` with `from_ns ≤ time ≤ to_ns`.
    pub fn expiry_of(&self, timer: u64, from_ns: u64, to_ns: u64) -> Option<&Event> {
        let list = self.expiries.get(&timer)?;
        let n = list.partition_point(|&i| self.events[i].time_ns <= to_ns);
        let e = &self.events[*list[..n].last()?];
        (e.time_ns >= from_ns).then_some(e)
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
        assert_eq!(tl.len(), 4);
        assert_eq!(
            tl.range(20, 40)
                .iter()
                .map(|e| e.time_ns)
                .collect::<Vec<_>>(),
            vec![30, 40]
        );
        assert!(tl.range(41, 59).is_empty());
        assert!(tl.range(70, 60).is_empty());
        assert_eq!(tl.expiry_of(7, 0, 59).unwrap().time_ns, 30);
        assert_eq!(tl.expiry_of(7, 0, 60).unwrap().time_ns, 60);
        assert!(tl.expiry_of(7, 31, 59).is_none());
        assert!(tl.expiry_of(8, 0, 100).is_none());
        assert_eq!(tl.arming_before(7, 39).unwrap().soft_ns, 25);
        assert_eq!(tl.arming_before(7, 40).unwrap().hard_ns, 55);
        assert!(tl.arming_before(7, 9).is_none());
        assert!(tl.arming_before(8, 100).is_none());
    }

    /// A thread's own timers are those it armed in its own context: an arming in an
    /// interrupt that happened to interrupt it (the tick's, a periodic timer's re-arm)
    /// is not its own.
    #[test]
    fn own_timers_are_armed_in_the_threads_own_context() {
        use crate::capture::{FLAG_HARDIRQ, FLAG_SOFTIRQ};
        let arm = |t: u64, pid: i32, flags: u8, timer: u64| Event {
            time_ns: t,
            cpu: 0,
            pid,
            flags,
            kind: Kind::TimerStart {
                timer,
                soft_ns: 100,
                hard_ns: 100,
            },
        };
        let tl = Timeline::new(vec![
            arm(10, 5, 0x01, 0xa),
            arm(20, 5, FLAG_HARDIRQ, 0xb),
            arm(30, 5, FLAG_SOFTIRQ, 0xc),
            arm(40, 6, 0, 0xd),
            arm(50, 5, 0, 0xe),
        ]);
        assert_eq!(tl.own_timer(5, 45), Some((10, 0xa)));
        assert_eq!(tl.own_timer(5, 50), Some((50, 0xe)));
        assert_eq!(tl.own_timer(5, 9), None);
        assert_eq!(tl.own_timer(6, 100), Some((40, 0xd)));
        assert_eq!(tl.own_timer(7, 100), None);
        // Every arming still counts for its timer's expiry times.
        assert_eq!(tl.arming_before(0xb, 25).unwrap().time_ns, 20);
    }
}
