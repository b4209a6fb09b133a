//! Honest accounting: what no event explains is unexplained, spin only where the wait
//! spins, and the timer is the thread's own.

use super::*;

/// The switch-out of a wait that can block was not recorded (the kernel drops a few
/// `sched_switch` events): nothing explains it, it is not traced, and it blocked unless
/// its context switches say otherwise. Never `spin`: a nanosleep cannot spin.
#[test]
fn a_blocking_wait_without_its_switch_out_is_unexplained() {
    let tl = Timeline::new(without(PLAIN.events(), &[sleep_out(PLAIN.out)]));
    let w = plain_window();
    for w in [w, w.with_switches(1)] {
        let a = account(&tl, &w);
        assert_parts!(a, Unexplained 61_000);
        assert!(!a.traced && a.blocked);
    }
}

/// A wait that can block but did not (no voluntary switch): to its timer's soft expiry
/// the timer was being armed, then the kernel returned at once.
#[test]
fn a_wait_whose_switches_say_it_never_blocked_is_the_kernels_way_out() {
    let tl = Timeline::new(vec![arm(1_000_400, 1_000_300, 1_000_300), exit(1_001_000)]);
    let w = Window::relative(TID, 1_000_000, 0, 1_001_200).with_switches(0);
    let a = account(&tl, &w);
    assert_parts!(a, Entry 300, KernelExit 700, Return 200);
    assert!(a.traced && !a.blocked);
    // Without its arming on record, the way to the return is unexplained.
    let tl = Timeline::new(vec![exit(1_001_000)]);
    let a = account(&tl, &w);
    assert_parts!(a, Return 200, Unexplained 1_000);
    assert!(!a.traced && !a.blocked);
}

/// Another timer expiring on the CPU just before the wakeup is not the thread's: a wake
/// whose own timer's expiry is not on record gets no slack or interrupt time from it.
#[test]
fn a_neighbours_timer_never_supplies_slack() {
    let neighbour = |t: u64| {
        irq(
            t,
            0,
            Kind::TimerExpire {
                timer: 0xbad,
                now_ns: t as i64 - 100,
            },
        )
    };
    let neighbour_arm = ev(
        900_000,
        0,
        77,
        Kind::TimerStart {
            timer: 0xbad,
            soft_ns: 2_040_000,
            hard_ns: 2_055_000,
        },
    );
    // The plain sleep, its own timer's expiry lost and the neighbour's recorded.
    let (at, now) = PLAIN.expire;
    let mut events = without(PLAIN.events(), &[expire(at, now)]);
    events.extend([neighbour_arm, neighbour(2_056_200)]);
    let a = account(&Timeline::new(events), &plain_window());
    assert_eq!(a.parts.get(Component::Slack), 0);
    assert_eq!(a.parts.get(Component::TimerIrq), 0);
    assert_eq!(a.parts.get(Component::Unexplained), 56_500);
    assert!(!a.traced);
}

/// This wait's own arming was lost: the arming of the previous wait (the same timer on
/// the same kernel stack) is stale and not used.
#[test]
fn a_stale_arming_of_an_earlier_wait_is_not_used() {
    let stale = Sleep {
        arm: (10_000, 990_000, 990_050),
        ..PLAIN
    };
    let a = account(&stale.timeline(), &plain_window());
    assert_eq!(a.parts.get(Component::Slack), 0);
    assert_eq!(a.parts.get(Component::Unexplained), 56_500);
    assert!(!a.traced);
}

/// A periodic timer the thread armed once, re-armed by its own interrupt each period:
/// the re-arm gives this tick's expiries.
#[test]
fn a_periodic_timer_re_armed_in_its_interrupt_is_still_the_threads() {
    let rearm = |t: u64, soft: i64| {
        irq(
            t,
            0,
            Kind::TimerStart {
                timer: TIMER,
                soft_ns: soft,
                hard_ns: soft,
            },
        )
    };
    let tl = Timeline::new(vec![
        arm(100, 1_000_000, 1_000_000),
        expire(1_000_900, 1_000_800),
        rearm(1_000_950, 2_000_000),
        sleep_out(1_500_000),
        expire(2_000_700, 2_000_600),
        rearm(2_000_750, 3_000_000),
        waking(2_000_800),
        switch_in(2_001_000),
        exit(2_001_100),
    ]);
    let w = Window::until(TID, 1_001_500, 2_000_000, 2_001_200);
    let a = account(&tl, &w);
    assert_parts!(a, TimerIrq 800, IdleWakeup 200, KernelExit 100, Return 100);
    assert!(a.traced);
}

/// The timer of the waits below that did not block: armed at 1 000 300 for
/// 1 100 300–1 150 300.
fn unblocked_arm() -> Event {
    arm(1_000_300, 1_100_300, 1_150_300)
}

/// The window of the waits below that did not block: from 1 000 000, 100 µs asked,
/// back at 1 185 400, and no voluntary switch.
fn unblocked_window() -> Window {
    Window::relative(TID, 1_000_000, 100_000, 1_185_400).with_switches(0)
}

/// A wait that did not block, by its events to the wakeup: its timer armed
/// ([`unblocked_arm`]), then, in interrupts of the thread itself on its CPU, the
/// timer's expiry at 1 176 000 and its wakeup at 1 177 000.
fn woken_on_its_cpu() -> Vec<Event> {
    let current = |t: u64, kind: Kind| Event {
        flags: FLAG_HARDIRQ,
        ..ev(t, 0, TID, kind)
    };
    vec![
        unblocked_arm(),
        current(
            1_176_000,
            Kind::TimerExpire {
                timer: TIMER,
                now_ns: 1_176_000,
            },
        ),
        current(
            1_177_000,
            Kind::Waking {
                pid: TID,
                target_cpu: 0,
            },
        ),
    ]
}

/// Woken while still on its CPU (the host took the vCPU between arming the timer and
/// switching out): no switch-out, no voluntary switch, and the thread's own timer and
/// wakeup split it as any wake; from the wakeup it was in the kernel until it returned.
#[test]
fn a_wake_that_came_before_the_switch_out_splits_at_its_own_timer() {
    let mut events = woken_on_its_cpu();
    events.push(exit(1_185_000));
    let a = account(&Timeline::new(events), &unblocked_window());
    assert_parts!(a, Entry 300, Slack 50_000, TimerIrq 26_700, KernelExit 8_000, Return 400);
    assert!(a.traced && !a.blocked);
}

/// A wait that never blocked, whose timer was armed for later and whose expiry was not
/// recorded: nothing says where the time went (never the kernel's way out), and it is
/// not traced.
#[test]
fn an_unblocked_wait_whose_expiry_was_lost_is_unexplained() {
    let tl = Timeline::new(vec![unblocked_arm(), exit(1_185_000)]);
    let a = account(&tl, &unblocked_window());
    assert_parts!(a, Return 400, Unexplained 85_000);
    assert!(!a.traced && !a.blocked);
}

/// The same wake with its own timer on record but its return lost (returns are
/// recorded): from the wakeup on, nothing says where the time went.
#[test]
fn an_unblocked_wait_whose_return_was_lost_is_unexplained_from_the_wakeup() {
    let a = account(&Timeline::new(woken_on_its_cpu()), &unblocked_window());
    assert_parts!(a, Entry 300, Slack 50_000, TimerIrq 26_700, Unexplained 8_400);
    assert!(!a.traced && !a.blocked);
}

/// On its way to sleep the scheduler armed a timer of its own in the thread's context
/// (the deadline server's); it never expired: the sleep's timer is still the one found.
#[test]
fn a_timer_the_scheduler_armed_on_the_way_to_sleep_is_passed_over() {
    let dl_server = ev(
        1_000_450,
        0,
        TID,
        Kind::TimerStart {
            timer: 0xd1,
            soft_ns: 1_900_000,
            hard_ns: 1_900_000,
        },
    );
    let mut events = PLAIN.events();
    events.push(dl_server);
    let a = account(&Timeline::new(events), &plain_window());
    assert_eq!(a.parts.get(Component::Slack), 50_000);
    assert_eq!(a.parts.get(Component::TimerIrq), 6_200);
    assert!(a.traced);
}

/// A timer wait that began after its deadline returns at once: it cannot block, and
/// from its start it was in the kernel until the call returned. Two ticks in one wake:
/// the second's window is empty, all overrun, and nothing is left to trace.
#[test]
fn a_wait_begun_after_its_deadline_is_the_call_and_an_empty_one_is_all_overrun() {
    let tl = Timeline::new(vec![exit(2_001_500)]);
    let w = Window::until(TID, 2_000_000, 1_900_000, 2_002_000);
    let a = account(&tl, &w);
    assert_parts!(a, Overrun 100_000, KernelExit 1_500, Return 500);
    assert!(a.traced && !a.blocked);
    // Its return lost: the call's time is unexplained.
    let a = account(&Timeline::new(vec![]), &w);
    assert_eq!(a.parts.get(Component::Unexplained), 2_000);
    assert!(!a.traced);
    // An empty window: all overrun, fully accounted.
    let empty = Window::until(TID, 2_000_000, 1_900_000, 2_000_000);
    let a = account(&Timeline::new(vec![]), &empty);
    assert_parts!(a, Overrun 100_000);
    assert!(a.traced && !a.blocked);
}
