//! The finder on hand-built timelines: each kind of ending, the counts apart, and the
//! split of a timer-ended wait adding up to its lateness.

use super::*;
use crate::capture::{Comm, FLAG_HARDIRQ};

const T: i32 = 5;

fn ev(time_ns: u64, pid: i32, flags: u8, kind: Kind) -> Event {
    Event {
        time_ns,
        cpu: 0,
        pid,
        flags,
        kind,
    }
}

fn enter(t: u64, tid: i32, id: i64, args: [u64; 6]) -> Event {
    ev(t, tid, 0, Kind::SysEnter { id, args })
}

fn exit(t: u64, tid: i32, id: i64, ret: i64) -> Event {
    ev(t, tid, 0, Kind::SysExit { id, ret })
}

fn arm(t: u64, tid: i32, timer: u64, soft: i64, hard: i64) -> Event {
    ev(
        t,
        tid,
        0,
        Kind::TimerStart {
            timer,
            soft_ns: soft,
            hard_ns: hard,
        },
    )
}

fn switch(t: u64, prev: i32, sleeping: bool, next: i32) -> Event {
    ev(
        t,
        prev,
        0,
        Kind::Switch {
            prev_pid: prev,
            prev_state: i64::from(sleeping),
            prev_comm: Comm::new(if prev == T { "app" } else { "other" }),
            next_pid: next,
            next_comm: Comm::new(if next == T { "app" } else { "other" }),
        },
    )
}

fn expire(t: u64, timer: u64) -> Event {
    ev(
        t,
        0,
        FLAG_HARDIRQ,
        Kind::TimerExpire {
            timer,
            now_ns: t as i64,
        },
    )
}

fn waking(t: u64, by: i32, flags: u8, pid: i32) -> Event {
    ev(t, by, flags, Kind::Waking { pid, target_cpu: 0 })
}

/// x86_64's numbers, the ones the hand-built calls use.
#[cfg(target_arch = "x86_64")]
fn timeline() -> Timeline {
    Timeline::new(vec![
        // clock_nanosleep ended by its timer, 50 µs of slack, 65 µs late.
        enter(1_000, T, 230, [1, 1, 0x100, 0, 0, 0]),
        arm(1_100, T, 0xa, 1_001_000, 1_051_000),
        switch(1_200, T, true, 0),
        expire(1_060_000, 0xa),
        waking(1_061_000, 0, FLAG_HARDIRQ, T),
        switch(1_062_000, 0, false, T),
        exit(1_066_000, T, 230, 0),
        // A futex wait with a timeout, woken by thread 7 long before its deadline.
        enter(2_000_000, T, 202, [0x10, 128, 1, 0x1000, 0, 0]),
        arm(2_000_100, T, 0xb, 12_000_000, 12_000_000),
        switch(2_000_200, T, true, 7),
        waking(3_000_000, 7, 0, T),
        switch(3_000_500, 7, false, T),
        exit(3_001_000, T, 202, 0),
        // poll with a zero timeout: returns at once.
        enter(4_000_000, T, 7, [0x20, 1, 0, 0, 0, 0]),
        exit(4_000_500, T, 7, 0),
        // nanosleep cut short by a signal.
        enter(5_000_000, T, 35, [0x30, 0, 0, 0, 0, 0]),
        arm(5_000_100, T, 0xc, 15_000_000, 15_050_000),
        switch(5_000_200, T, true, 0),
        waking(6_000_000, 0, FLAG_HARDIRQ, T),
        switch(6_000_100, 0, false, T),
        exit(6_000_300, T, 35, -514),
        // epoll_wait with no timeout: waits for an event only.
        enter(7_000_000, T, 232, [3, 0x40, 8, u64::MAX, 0, 0]),
        exit(7_500_000, T, 232, 1),
        // Another thread's wait: followed only when no set is given.
        enter(8_000_000, 9, 35, [0; 6]),
        exit(8_100_000, 9, 35, 0),
        // A wait whose return was lost: another call began.
        enter(9_000_000, T, 35, [0; 6]),
        enter(9_500_000, T, 0, [0; 6]),
        exit(9_500_100, T, 0, 1),
    ])
}

#[cfg(target_arch = "x86_64")]
#[test]
fn each_ending_is_found_and_counted_apart() {
    let tl = timeline();
    let found = find_waits(&tl, Some(&[T]));
    let endings: Vec<(WaitCall, Ending)> = found.waits.iter().map(|w| (w.call, w.ending)).collect();
    assert_eq!(
        endings,
        vec![
            (WaitCall::ClockNanosleep, Ending::Timer),
            (WaitCall::Futex, Ending::Woken { waker: 7 }),
            (WaitCall::Poll, Ending::NeverBlocked),
            (WaitCall::Nanosleep, Ending::Signal),
        ]
    );
    assert_eq!((found.untimed, found.unpaired), (1, 1));
    let [sleep, futex, poll, signal] = &found.waits[..] else {
        panic!("{found:?}")
    };
    assert_eq!(sleep.comm, "app");
    assert_eq!(sleep.deadline_ns, Some(1_001_000));
    assert_eq!(sleep.lateness_ns(), Some(65_000));
    assert_eq!(sleep.slack_ns(), Some(50_000));
    assert_eq!(sleep.early_ns(), None);
    // Early waits are counted apart: no lateness, their earliness instead.
    assert_eq!(futex.lateness_ns(), None);
    assert_eq!(futex.early_ns(), Some(12_000_000 - 3_001_000));
    assert_eq!(poll.timeout, Timeout::Millis(0));
    assert_eq!((poll.deadline_ns, poll.lateness_ns()), (None, None));
    assert_eq!(signal.early_ns(), Some(15_000_000 - 6_000_300));
    // Without a set, every thread with system calls on record is followed.
    assert_eq!(find_waits(&tl, None).waits.len(), 5);
}

/// A timer-ended wait's split adds up to its lateness, and its window is the call's.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_timer_ended_wait_is_split_whole() {
    let tl = timeline();
    let found = find_waits(&tl, Some(&[T]));
    let split = accounts(&tl, &found.waits);
    assert_eq!(split.len(), found.waits.len(), "one entry a wait, by index");
    assert!(
        split[1..].iter().all(Option::is_none),
        "only the timer-ended wait is split"
    );
    let a = split[0].as_ref().expect("the timer-ended wait's account");
    assert_eq!(a.lateness_ns, 65_000);
    assert_eq!(a.parts.total() as i64, a.lateness_ns);
    assert!(a.blocked);
    let w = found.waits[0].window().unwrap();
    assert_eq!(
        (w.start_ns, w.deadline_ns, w.end_ns),
        (1_000, 1_001_000, 1_066_000)
    );
}

/// A wait that blocked with neither its timer's expiry nor a wakeup on record (the tracer
/// lost them) ends `Unrecorded`: not woken (by no one), not late, not early, not split;
/// the summary counts it apart.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_wait_with_no_expiry_or_wakeup_on_record_is_unrecorded() {
    let tl = Timeline::new(vec![
        enter(1_000, T, 230, [1, 1, 0x100, 0, 0, 0]),
        arm(1_100, T, 0xa, 1_001_000, 1_001_000),
        switch(1_200, T, true, 0),
        // Lost: the expiry, the wakeup and the switch back.
        exit(1_070_000, T, 230, 0),
    ]);
    let found = find_waits(&tl, Some(&[T]));
    let [w] = &found.waits[..] else {
        panic!("{found:?}")
    };
    assert_eq!(w.ending, Ending::Unrecorded);
    assert_eq!(
        (w.lateness_ns(), w.early_ns(), w.window()),
        (None, None, None)
    );
    let split = accounts(&tl, &found.waits);
    assert_eq!(split, vec![None]);
    let calls = summarise(&found, &split, 3);
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!((c.waits, c.unrecorded, c.woken, c.timer), (1, 1, 0, 0));
    assert_eq!(c.lateness.count, 0);
}

/// A timer on another clock (CLOCK_REALTIME's base) gives no deadline: the wait is kept,
/// unexplained, never given a lateness it did not have.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_realtime_timer_gives_no_deadline() {
    let realtime: i64 = 1_764_000_000 * 1_000_000_000;
    let tl = Timeline::new(vec![
        enter(
            1_000,
            T,
            202,
            [0x10, 9 | 256, 1, 0x1000, 0, u64::from(u32::MAX)],
        ),
        arm(1_100, T, 0xd, realtime, realtime + 50_000),
        switch(1_200, T, true, 0),
        expire(2_000_000, 0xd),
        waking(2_000_100, 0, FLAG_HARDIRQ, T),
        exit(2_001_000, T, 202, -110),
    ]);
    let found = find_waits(&tl, None);
    assert_eq!(found.waits.len(), 1);
    let w = &found.waits[0];
    assert_eq!(
        (w.ending, w.deadline_ns, w.hard_ns),
        (Ending::Timer, None, None)
    );
    assert_eq!((w.lateness_ns(), w.window()), (None, None));
}
