use super::*;
use crate::Events;
use crate::capture::{Comm, FLAG_HARDIRQ};
use proptest::prelude::*;

/// Fails unless the nonzero parts of the account `a` are these, in order: each a
/// [`Component`] variant and its nanoseconds (`assert_parts!(a, Slack 300, Return 100)`).
macro_rules! assert_parts {
    ($a:expr $(, $part:ident $ns:expr)* $(,)?) => {
        assert_eq!(
            $a.parts.nonzero().collect::<Vec<_>>(),
            [$((Component::$part, $ns)),*]
        )
    };
}

mod honest;
mod no_guest;

const TID: i32 = 100;
const TIMER: u64 = 0xa;

fn ev(time_ns: u64, cpu: u32, pid: i32, kind: Kind) -> Event {
    Event {
        time_ns,
        cpu,
        pid,
        flags: 0,
        kind,
    }
}

fn irq(time_ns: u64, cpu: u32, kind: Kind) -> Event {
    Event {
        flags: FLAG_HARDIRQ,
        ..ev(time_ns, cpu, 0, kind)
    }
}

fn arm(t: u64, soft: i64, hard: i64) -> Event {
    ev(
        t,
        0,
        TID,
        Kind::TimerStart {
            timer: TIMER,
            soft_ns: soft,
            hard_ns: hard,
        },
    )
}

fn sleep_out(t: u64) -> Event {
    switch(t, TID, 1, "sleeplab", 0, "swapper/0")
}

fn switch(t: u64, prev: i32, state: i64, prev_comm: &str, next: i32, next_comm: &str) -> Event {
    ev(
        t,
        0,
        prev,
        Kind::Switch {
            prev_pid: prev,
            prev_state: state,
            prev_comm: Comm::new(prev_comm),
            next_pid: next,
            next_comm: Comm::new(next_comm),
        },
    )
}

fn expire(t: u64, now: i64) -> Event {
    irq(
        t,
        0,
        Kind::TimerExpire {
            timer: TIMER,
            now_ns: now,
        },
    )
}

fn waking(t: u64) -> Event {
    irq(
        t,
        0,
        Kind::Waking {
            pid: TID,
            target_cpu: 0,
        },
    )
}

fn exit(t: u64) -> Event {
    ev(t, 0, TID, Kind::SysExit { id: 230, ret: 0 })
}

/// TID switched in from CPU 0's idle task at `t`.
fn switch_in(t: u64) -> Event {
    switch(t, 0, 0, "swapper/0", TID, "sleeplab")
}

/// `events` without the `lost` ones (events the tracer dropped).
fn without(events: Vec<Event>, lost: &[Event]) -> Vec<Event> {
    events.into_iter().filter(|e| !lost.contains(e)).collect()
}

/// A timer wake of TID on CPU 0, idle while it slept, by the times (ns) of its events:
/// its timer armed (`arm`: when, the soft expiry, the hard one), switched out to the
/// idle task (`out`), the timer run in an interrupt (`expire`: when, the interrupt's
/// clock), woken by that interrupt (`woken`), switched in from the idle task (`back`),
/// and its call returned (`exit`; `None`: not on record).
#[derive(Clone, Copy)]
struct Sleep {
    arm: (u64, i64, i64),
    out: u64,
    expire: (u64, i64),
    woken: u64,
    back: u64,
    exit: Option<u64>,
}

/// A 1 ms relative nanosleep at the default 50 µs slack on an idle CPU, in
/// [`plain_window`].
const PLAIN: Sleep = Sleep {
    arm: (1_000_300, 2_000_300, 2_050_300),
    out: 1_000_500,
    expire: (2_056_000, 2_055_500),
    woken: 2_056_500,
    back: 2_059_500,
    exit: Some(2_060_500),
};

impl Sleep {
    /// Its events, in order.
    fn events(self) -> Vec<Event> {
        let (at, soft, hard) = self.arm;
        let mut events = vec![
            arm(at, soft, hard),
            sleep_out(self.out),
            expire(self.expire.0, self.expire.1),
            waking(self.woken),
            switch_in(self.back),
        ];
        events.extend(self.exit.map(exit));
        events
    }

    /// The timeline of its events alone.
    fn timeline(self) -> Timeline {
        Timeline::new(self.events())
    }
}

/// The window of [`PLAIN`]: from 1 000 000, 1 ms asked, back at 2 061 000.
fn plain_window() -> Window {
    Window::relative(TID, 1_000_000, 1_000_000, 2_061_000)
}

/// A wait from 1 000 000 for 1 ms whose timer (soft and hard expiry 2 000 000) woke it
/// on an idle CPU; its return is not on record. The other waits from 1 000 000 (armed
/// at 1 000 100, switched out at 1 000 200) vary it.
const NO_RETURN: Sleep = Sleep {
    arm: (1_000_100, 2_000_000, 2_000_000),
    out: 1_000_200,
    expire: (2_000_200, 2_000_100),
    woken: 2_000_300,
    back: 2_000_400,
    exit: None,
};

/// The window of [`NO_RETURN`]: back at 2 001 000.
fn no_return_window() -> Window {
    Window::relative(TID, 1_000_000, 1_000_000, 2_001_000)
}

/// A 1 ms relative nanosleep at the default 50 µs slack on an idle CPU.
#[test]
fn a_plain_sleep_splits_into_its_stretches() {
    let a = account(&PLAIN.timeline(), &plain_window());
    assert_eq!(a.lateness_ns, 61_000);
    assert_parts!(
        a, Entry 300, Slack 50_000, TimerIrq 6_200, IdleWakeup 3_000, KernelExit 1_000, Return 500
    );
    assert!(a.blocked && a.traced);
    assert_eq!(a.holder, None);
}

/// Woken onto a CPU a busy task holds, then preempted by it again on the way out.
#[test]
fn run_queue_time_names_the_task_that_held_the_cpu() {
    let tl = Timeline::new(vec![
        arm(1_000_100, 2_000_100, 2_000_101),
        sleep_out(1_000_200),
        expire(2_000_500, 2_000_400),
        waking(2_000_600),
        switch(2_900_600, 7, 0, "cc1", TID, "sleeplab"),
        switch(2_900_700, TID, 0x100, "sleeplab", 7, "cc1"),
        switch(3_000_700, 7, 0, "cc1", TID, "sleeplab"),
        exit(3_001_000),
    ]);
    let w = Window::relative(TID, 1_000_000, 1_000_000, 3_001_200);
    let a = account(&tl, &w);
    assert_eq!(a.lateness_ns, 1_001_200);
    assert_parts!(
        a, Entry 100, Slack 1, TimerIrq 499, RunQueue 900_000 + 100_000, KernelExit 100 + 300,
        Return 200
    );
    assert_eq!(
        a.holder,
        Some(Holder {
            comm: "cc1".into(),
            pid: 7
        })
    );
    assert!(a.traced);
}

/// Another interrupt runs the timer inside its slack window: the slack ends there.
#[test]
fn slack_ends_where_an_earlier_interrupt_ran_the_timer() {
    let early = Sleep {
        arm: (1_000_100, 2_000_000, 2_050_000),
        expire: (2_020_200, 2_020_000),
        woken: 2_020_300,
        back: 2_020_400,
        exit: Some(2_020_500),
        ..NO_RETURN
    };
    let a = account(
        &early.timeline(),
        &Window::relative(TID, 1_000_000, 1_000_000, 2_020_600),
    );
    assert_parts!(a, Slack 20_000, TimerIrq 300, IdleWakeup 100, KernelExit 100, Return 100);
}

/// The return event was lost: from the CPU on, nothing explains the time.
#[test]
fn a_missing_event_leaves_its_stretch_unexplained() {
    let a = account(&NO_RETURN.timeline(), &no_return_window());
    assert_eq!(a.parts.get(Component::Unexplained), 600);
    assert_eq!(a.parts.total(), 1_000);
    assert!(!a.traced);
}

/// The same wake from a tracer that does not record system calls' returns: from the
/// CPU on, the time is the return path, and the wake is fully traced.
#[test]
fn without_recorded_exits_the_way_out_is_the_return_path() {
    let tl = NO_RETURN.timeline().recording(Events::NoSyscallExit);
    assert!(!tl.records_sys_exit());
    let a = account(&tl, &no_return_window());
    assert_parts!(a, TimerIrq 300, IdleWakeup 100, Return 600);
    assert!(a.traced);
    // A return recorded anyway (a tracer's leftovers) still splits the way out.
    let with_exit = Sleep {
        exit: Some(2_000_700),
        ..NO_RETURN
    };
    let tl = with_exit.timeline().recording(Events::NoSyscallExit);
    let a = account(&tl, &no_return_window());
    assert_eq!(a.parts.get(Component::KernelExit), 300);
    assert_eq!(a.parts.get(Component::Return), 300);
}

/// A wakeup from another thread (not in an interrupt): no timer to blame.
#[test]
fn a_wake_that_no_timer_made_is_unexplained_until_the_wakeup() {
    let tl = Timeline::new(vec![
        sleep_out(1_000_200),
        ev(
            2_010_000,
            1,
            55,
            Kind::Waking {
                pid: TID,
                target_cpu: 0,
            },
        ),
        switch_in(2_010_100),
        exit(2_010_200),
    ]);
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_010_300));
    assert_parts!(a, IdleWakeup 100, KernelExit 100, Return 100, Unexplained 10_000);
    assert!(!a.traced && a.blocked);
}

/// A wait that never blocks (a spin) is spin, but for the time it was preempted.
#[test]
fn a_wait_that_never_blocks_is_spin_and_preemption() {
    let tl = Timeline::new(vec![
        switch(1_500_000, TID, 0x100, "x", 9, "busy"),
        switch(1_700_000, 9, 0, "busy", TID, "x"),
    ]);
    let w = Window::relative(TID, 1_000_000, 0, 2_000_000).never_blocking(true);
    let a = account(&tl, &w);
    assert_parts!(a, RunQueue 200_000, Spin 800_000);
    assert!(!a.blocked && a.traced);
    assert_eq!(a.holder.unwrap().comm, "busy");
}

/// Two tasks that preempt a spin in turn each get their own run-queue time: the
/// shares add up to the run-queue component, the longest first, and the holder is it.
#[test]
fn each_task_that_held_the_cpu_gets_its_own_share() {
    let tl = Timeline::new(vec![
        switch(1_100_000, TID, 0x100, "x", 9, "busy"),
        switch(1_130_000, 9, 0, "busy", TID, "x"),
        switch(1_500_000, TID, 0x100, "x", 12, "kworker/0:1"),
        switch(1_600_000, 12, 0, "kworker/0:1", 9, "busy"),
        switch(1_610_000, 9, 0, "busy", TID, "x"),
    ]);
    let w = Window::relative(TID, 1_000_000, 0, 2_000_000).never_blocking(true);
    let a = account(&tl, &w);
    assert_parts!(a, RunQueue 140_000, Spin 860_000);
    let shares: Vec<(&str, u64)> = a
        .run_queue_by
        .iter()
        .map(|(h, ns)| (h.comm.as_str(), *ns))
        .collect();
    assert_eq!(shares, [("kworker/0:1", 100_000), ("busy", 40_000)]);
    assert_eq!(a.holder.unwrap().comm, "kworker/0:1");
}

/// The precise sleeper woke before its deadline and spun past it.
#[test]
fn a_timely_native_wake_leaves_only_the_spin_past_the_deadline() {
    let timely = Sleep {
        arm: (1_000_100, 1_900_000, 1_900_000),
        expire: (1_904_000, 1_903_900),
        woken: 1_904_500,
        back: 1_905_000,
        exit: Some(1_907_000),
        ..NO_RETURN
    };
    let w = Window::until(TID, 1_000_000, 2_000_000, 2_000_800).spinning(93_300);
    let a = account(&timely.timeline(), &w);
    assert_parts!(a, Spin 800);
    assert!(a.traced);
}

/// The precise sleeper's native wake came after the deadline: its way counts from the
/// deadline on.
#[test]
fn a_late_native_wake_counts_from_the_deadline() {
    let late = Sleep {
        arm: (1_000_100, 1_990_000, 1_990_000),
        expire: (2_020_200, 2_020_000),
        woken: 2_020_500,
        back: 2_021_000,
        exit: Some(2_021_500),
        ..NO_RETURN
    };
    let w = Window::until(TID, 1_000_000, 2_000_000, 2_022_000);
    let a = account(&late.timeline(), &w);
    assert_parts!(a, TimerIrq 20_500, IdleWakeup 500, KernelExit 500, Return 500);
}

#[test]
fn an_early_return_splits_nothing() {
    let tl = Timeline::new(vec![]);
    let a = account(&tl, &Window::relative(TID, 1_000, 1_000, 1_500));
    assert_eq!(a.lateness_ns, -500);
    assert_eq!(a.parts.total(), 0);
}

/// Events of other threads and other timers in the window change nothing.
#[test]
fn other_threads_events_are_ignored() {
    let quiet = account(&PLAIN.timeline(), &plain_window());
    let mut events = PLAIN.events();
    events.extend([
        ev(1_500_000, 1, 77, Kind::SysExit { id: 1, ret: 0 }),
        switch(1_600_000, 77, 1, "other", 0, "swapper/1"),
        ev(
            1_700_000,
            1,
            0,
            Kind::Waking {
                pid: 77,
                target_cpu: 1,
            },
        ),
        irq(
            1_800_000,
            1,
            Kind::TimerExpire {
                timer: 0xb,
                now_ns: 1_799_000,
            },
        ),
    ]);
    let busy = account(&Timeline::new(events), &plain_window());
    assert_eq!(quiet, busy);
}

fn any_event() -> impl Strategy<Value = Event> {
    let t = 0u64..3_000;
    let pid = prop_oneof![Just(TID), Just(0), Just(7)];
    let kind = prop_oneof![
        (0i64..3_000, 0i64..100).prop_map(|(s, slack)| Kind::TimerStart {
            timer: TIMER,
            soft_ns: s,
            hard_ns: s + slack
        }),
        (0i64..3_000).prop_map(|n| Kind::TimerExpire {
            timer: TIMER,
            now_ns: n
        }),
        Just(Kind::Waking {
            pid: TID,
            target_cpu: 0
        }),
        (
            pid.clone(),
            prop_oneof![Just(0i64), Just(1), Just(0x100)],
            pid.clone()
        )
            .prop_map(|(p, s, n)| Kind::Switch {
                prev_pid: p,
                prev_state: s,
                prev_comm: Comm::new("a"),
                next_pid: n,
                next_comm: Comm::new("b"),
            }),
        Just(Kind::SysExit { id: 0, ret: 0 }),
    ];
    (t, 0u32..2, pid, any::<bool>(), kind).prop_map(|(time_ns, cpu, pid, hard, kind)| Event {
        time_ns,
        cpu,
        pid,
        flags: if hard { FLAG_HARDIRQ } else { 0 },
        kind,
    })
}

#[test]
fn a_wait_that_began_late_counts_its_overrun() {
    // Deadline 1000, the wait began at 1300 (an overrunning frame) and spun to 1500.
    let tl = Timeline::new(Vec::new());
    let w = Window::until(TID, 1_300, 1_000, 1_500).never_blocking(true);
    let a = account(&tl, &w);
    assert_eq!(a.lateness_ns, 500);
    assert_eq!(a.parts.get(Component::Overrun), 300);
    assert_eq!(a.parts.get(Component::Spin), 200);
    assert_eq!(a.parts.total(), 500);
}

proptest! {
    /// Whatever the events, the parts add up to the lateness (or to nothing when early).
    #[test]
    fn parts_always_add_up_to_the_lateness(
        events in prop::collection::vec(any_event(), 0..40),
        start in 0u64..1_000,
        deadline in 0u64..2_500,
        end_after in 0u64..2_500,
        spin in prop_oneof![Just(0u64), 0u64..500],
        never in any::<bool>(),
        switches in prop::option::of(0u64..3),
    ) {
        let w = Window::until(TID, start, deadline, start + end_after)
            .spinning(spin)
            .never_blocking(never);
        let w = match switches { Some(n) => w.with_switches(n), None => w };
        for recorded in [Events::All, Events::NoSyscallExit] {
            let tl = Timeline::new(events.clone()).recording(recorded);
            let a = account(&tl, &w);
            prop_assert_eq!(a.lateness_ns, (start + end_after) as i64 - deadline as i64);
            prop_assert_eq!(a.parts.total() as i64, a.lateness_ns.max(0));
            // A fully traced wake has nothing unexplained.
            prop_assert!(!a.traced || a.parts.get(Component::Unexplained) == 0);
            // Spin comes only from a wait that never blocks or a measured spin.
            prop_assert!(a.parts.get(Component::Spin) == 0 || never || spin > 0);
            // One whose switches say it blocked did, whatever the trace lost.
            prop_assert!(never || switches.is_none_or(|n| n == 0) || a.blocked);
        }
    }
}
