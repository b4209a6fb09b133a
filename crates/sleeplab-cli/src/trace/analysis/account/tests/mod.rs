use super::*;
use crate::trace::Events;
use crate::trace::event::FLAG_HARDIRQ;
use proptest::prelude::*;

mod honest;
mod host;

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
    ev(t, 0, TID, Kind::SysExit { id: 230 })
}

fn parts_of(a: &WakeAccount) -> Vec<(Component, u64)> {
    a.parts.nonzero().collect()
}

/// A 1 ms relative nanosleep at the default 50 µs slack on an idle CPU.
#[test]
fn a_plain_sleep_splits_into_its_stretches() {
    let tl = Timeline::new(vec![
        arm(1_000_300, 2_000_300, 2_050_300),
        sleep_out(1_000_500),
        expire(2_056_000, 2_055_500),
        waking(2_056_500),
        switch(2_059_500, 0, 0, "swapper/0", TID, "sleeplab"),
        exit(2_060_500),
    ]);
    let w = Window::relative(TID, 1_000_000, 1_000_000, 2_061_000);
    let a = account(&tl, &w);
    assert_eq!(a.lateness_ns, 61_000);
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::Entry, 300),
            (Component::Slack, 50_000),
            (Component::TimerIrq, 6_200),
            (Component::IdleWakeup, 3_000),
            (Component::KernelExit, 1_000),
            (Component::Return, 500),
        ]
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
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::Entry, 100),
            (Component::Slack, 1),
            (Component::TimerIrq, 499),
            (Component::RunQueue, 900_000 + 100_000),
            (Component::KernelExit, 100 + 300),
            (Component::Return, 200),
        ]
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
    let tl = Timeline::new(vec![
        arm(1_000_100, 2_000_000, 2_050_000),
        sleep_out(1_000_200),
        expire(2_020_200, 2_020_000),
        waking(2_020_300),
        switch(2_020_400, 0, 0, "swapper/0", TID, "x"),
        exit(2_020_500),
    ]);
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_020_600));
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::Slack, 20_000),
            (Component::TimerIrq, 300),
            (Component::IdleWakeup, 100),
            (Component::KernelExit, 100),
            (Component::Return, 100),
        ]
    );
}

/// The return event was lost: from the CPU on, nothing explains the time.
#[test]
fn a_missing_event_leaves_its_stretch_unexplained() {
    let tl = Timeline::new(vec![
        arm(1_000_100, 2_000_000, 2_000_000),
        sleep_out(1_000_200),
        expire(2_000_200, 2_000_100),
        waking(2_000_300),
        switch(2_000_400, 0, 0, "swapper/0", TID, "x"),
    ]);
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_001_000));
    assert_eq!(a.parts.get(Component::Unexplained), 600);
    assert_eq!(a.parts.total(), 1_000);
    assert!(!a.traced);
}

/// The same wake from a tracer that does not record system calls' returns: from the
/// CPU on, the time is the return path, and the wake is fully traced.
#[test]
fn without_recorded_exits_the_way_out_is_the_return_path() {
    let events = vec![
        arm(1_000_100, 2_000_000, 2_000_000),
        sleep_out(1_000_200),
        expire(2_000_200, 2_000_100),
        waking(2_000_300),
        switch(2_000_400, 0, 0, "swapper/0", TID, "x"),
    ];
    let tl = Timeline::new(events).recording(Events::NoSyscallExit);
    assert!(!tl.records_sys_exit());
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_001_000));
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::TimerIrq, 300),
            (Component::IdleWakeup, 100),
            (Component::Return, 600),
        ]
    );
    assert!(a.traced);
    // A return recorded anyway (a tracer's leftovers) still splits the way out.
    let mut with_exit = tl.events().to_vec();
    with_exit.push(exit(2_000_700));
    let tl = Timeline::new(with_exit).recording(Events::NoSyscallExit);
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_001_000));
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
        switch(2_010_100, 0, 0, "swapper/0", TID, "x"),
        exit(2_010_200),
    ]);
    let a = account(&tl, &Window::relative(TID, 1_000_000, 1_000_000, 2_010_300));
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::IdleWakeup, 100),
            (Component::KernelExit, 100),
            (Component::Return, 100),
            (Component::Unexplained, 10_000),
        ]
    );
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
    assert_eq!(
        parts_of(&a),
        vec![(Component::RunQueue, 200_000), (Component::Spin, 800_000)]
    );
    assert!(!a.blocked && a.traced);
    assert_eq!(a.holder.unwrap().comm, "busy");
}

/// The precise sleeper woke before its deadline and spun past it.
#[test]
fn a_timely_native_wake_leaves_only_the_spin_past_the_deadline() {
    let tl = Timeline::new(vec![
        arm(1_000_100, 1_900_000, 1_900_000),
        sleep_out(1_000_200),
        expire(1_904_000, 1_903_900),
        waking(1_904_500),
        switch(1_905_000, 0, 0, "swapper/0", TID, "x"),
        exit(1_907_000),
    ]);
    let w = Window::until(TID, 1_000_000, 2_000_000, 2_000_800).spinning(93_300);
    let a = account(&tl, &w);
    assert_eq!(parts_of(&a), vec![(Component::Spin, 800)]);
    assert!(a.traced);
}

/// The precise sleeper's native wake came after the deadline: its way counts from the
/// deadline on.
#[test]
fn a_late_native_wake_counts_from_the_deadline() {
    let tl = Timeline::new(vec![
        arm(1_000_100, 1_990_000, 1_990_000),
        sleep_out(1_000_200),
        expire(2_020_200, 2_020_000),
        waking(2_020_500),
        switch(2_021_000, 0, 0, "swapper/0", TID, "x"),
        exit(2_021_500),
    ]);
    let w = Window::until(TID, 1_000_000, 2_000_000, 2_022_000);
    let a = account(&tl, &w);
    assert_eq!(
        parts_of(&a),
        vec![
            (Component::TimerIrq, 20_500),
            (Component::IdleWakeup, 500),
            (Component::KernelExit, 500),
            (Component::Return, 500),
        ]
    );
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
    let mut events = vec![
        arm(1_000_300, 2_000_300, 2_050_300),
        sleep_out(1_000_500),
        expire(2_056_000, 2_055_500),
        waking(2_056_500),
        switch(2_059_500, 0, 0, "swapper/0", TID, "sleeplab"),
        exit(2_060_500),
    ];
    let quiet = account(
        &Timeline::new(events.clone()),
        &Window::relative(TID, 1_000_000, 1_000_000, 2_061_000),
    );
    events.extend([
        ev(1_500_000, 1, 77, Kind::SysExit { id: 1 }),
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
    let busy = account(
        &Timeline::new(events),
        &Window::relative(TID, 1_000_000, 1_000_000, 2_061_000),
    );
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
        Just(Kind::SysExit { id: 0 }),
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
