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

/// Two clock_nanosleeps ended by their timers: 65 µs late, then 500 µs late (thread 7
/// held the CPU after the wakeup).
#[cfg(target_arch = "x86_64")]
fn two_late() -> Timeline {
    // The first: the hand-built timeline's clock_nanosleep.
    let mut events = timeline().events()[..7].to_vec();
    events.extend([
        switch(10_000_000, 0, false, 7),
        enter(20_000_000, T, 230, [1, 1, 0x100, 0, 0, 0]),
        arm(20_000_100, T, 0xd, 21_000_000, 21_050_000),
        switch(20_000_200, T, true, 0),
        expire(21_050_000, 0xd),
        waking(21_051_000, 0, FLAG_HARDIRQ, T),
        switch(21_450_000, 7, false, T),
        exit(21_500_000, T, 230, 0),
    ]);
    Timeline::new(events)
}

#[cfg(target_arch = "x86_64")]
fn kept_of(tl: &Timeline, over_ns: u64, max_windows: usize, max_bytes: u64) -> (Found, Kept) {
    let found = find_waits(tl, Some(&[T]));
    let split = accounts(tl, &found.waits);
    let k = keep(
        tl,
        &found,
        &split,
        &Keep {
            over_ns,
            max_windows,
            max_bytes,
        },
    );
    (found, k)
}

#[cfg(target_arch = "x86_64")]
#[test]
fn kept_windows_give_back_the_live_waits_and_accounts() {
    // Recorded without interrupts, with all, and with all but the local timer's (an
    // idle CPU's delivery then runs to the handler's clock: a window read back on
    // its own must be read the same way).
    use crate::InterruptsRecorded as Recorded;
    for recorded in [Recorded::None, Recorded::All, Recorded::ButLocalTimer] {
        let tl = two_late().with_interrupts_recorded(recorded);
        let (found, k) = kept_of(&tl, 10_000, 10, u64::MAX);
        assert_eq!(
            (k.over, k.dropped, k.unequal, k.windows.len()),
            (2, 0, 0, 2)
        );
        assert!(k.events.len() <= tl.len());
        let read = Timeline::new(k.events.clone()).recorded_as(&tl);
        assert_eq!(read.interrupts_recorded(), recorded);
        let again = kept_waits(&find_waits(&read, None), &k.windows);
        assert_eq!(again.waits, found.waits, "the kept waits are the live ones");
        assert_eq!(
            accounts(&read, &again.waits),
            accounts(&tl, &found.waits),
            "and so are their accounts"
        );
        for w in &k.windows {
            let wait = found.waits.iter().find(|x| x.exit_ns == w.to_ns).unwrap();
            assert!(
                w.from_ns <= wait.enter_ns,
                "a window starts before its wait: {w:?}"
            );
            assert_eq!(w.tid, T);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn only_waits_later_than_the_threshold_are_kept_the_latest_first() {
    let tl = two_late();
    let (_, k) = kept_of(&tl, 100_000, 10, u64::MAX);
    assert_eq!((k.over, k.windows.len()), (1, 1));
    assert_eq!(k.windows[0].to_ns, 21_500_000, "the 500 µs one");
    // A lateness equal to the threshold is not over it.
    let (_, k) = kept_of(&tl, 500_000, 10, u64::MAX);
    assert_eq!((k.over, k.windows.len()), (0, 0));
    assert!(k.events.is_empty());
    // One window allowed: the latest is kept, the other counted as dropped.
    let (_, k) = kept_of(&tl, 10_000, 1, u64::MAX);
    assert_eq!((k.over, k.dropped, k.windows.len()), (2, 1, 1));
    assert_eq!(k.windows[0].to_ns, 21_500_000);
    // No room for any event: both dropped, none kept.
    let (_, k) = kept_of(&tl, 10_000, 10, 1);
    assert_eq!((k.over, k.dropped, k.windows.len()), (2, 2, 0));
}

/// A read of timerfd `fd` from `t`: it blocks, timer `timer` expires at `t + 1_000`,
/// the read returns at `t + 3_000`, re-arming the timer for `rearm` (a periodic one)
/// when given.
#[cfg(target_arch = "x86_64")]
fn timerfd_read(t: u64, fd: u64, timer: u64, rearm: Option<i64>) -> Vec<Event> {
    let mut v = vec![
        enter(t, T, 0, [fd, 0x500, 8, 0, 0, 0]),
        switch(t + 100, T, true, 0),
        expire(t + 1_000, timer),
        waking(t + 1_100, 0, FLAG_HARDIRQ, T),
        switch(t + 1_200, 0, false, T),
    ];
    if let Some(soft) = rearm {
        v.push(arm(t + 2_000, T, timer, soft, soft + 50_000));
    }
    v.push(exit(t + 3_000, T, 0, 8));
    v
}

/// timerfd_create (fd 5), timerfd_settime, then reads: each a wait for the timer
/// armed before it; after close(5) a read of fd 5 is no wait. A periodic timerfd
/// armed before the run (fd 7) shows itself in its first read, and its later reads
/// are waits.
#[cfg(target_arch = "x86_64")]
#[test]
fn timerfd_reads_wait_for_the_timer_armed_before_them() {
    let mut events = vec![
        enter(1_000, T, 283, [1, 0, 0, 0, 0, 0]),
        exit(1_100, T, 283, 5),
        enter(2_000, T, 286, [5, 0, 0x600, 0, 0, 0]),
        arm(2_100, T, 0xf, 10_000, 60_000),
        exit(2_200, T, 286, 0),
    ];
    // Read 1 waits for the settime's arming (soft 10 µs); it re-arms (periodic).
    events.extend(timerfd_read(9_500, 5, 0xf, Some(20_000)));
    // Read 2 waits for the re-arming.
    events.extend(timerfd_read(19_500, 5, 0xf, Some(30_000)));
    events.extend([
        enter(25_000, T, 3, [5, 0, 0, 0, 0, 0]),
        exit(25_100, T, 3, 0),
    ]);
    // fd 5 closed: its next read is any read.
    events.extend(timerfd_read(29_500, 5, 0xf, None));
    // fd 7, never created or set while followed: its first read shows it re-arming
    // timer 0x77 after that timer woke it, the second is a wait.
    events.extend(timerfd_read(40_000, 7, 0x77, Some(50_000)));
    events.extend(timerfd_read(49_500, 7, 0x77, Some(60_000)));
    let found = find_waits(&Timeline::new(events), Some(&[T]));
    let reads: Vec<(u64, Option<u64>, Ending)> = found
        .waits
        .iter()
        .map(|w| {
            assert_eq!(w.call, WaitCall::TimerfdRead);
            assert_eq!(w.timeout, Timeout::Armed);
            (w.enter_ns, w.deadline_ns, w.ending)
        })
        .collect();
    assert_eq!(
        reads,
        vec![
            (9_500, Some(10_000), Ending::Timer),
            (19_500, Some(20_000), Ending::Timer),
            (49_500, Some(50_000), Ending::Timer),
        ]
    );
    assert_eq!(found.waits[0].slack_ns(), Some(50_000));
    assert_eq!(found.waits[0].lateness_ns(), Some(2_500));
    assert_eq!((found.untimed, found.unpaired), (0, 0));
}

/// A read of a timerfd created and never armed waits for nothing: counted as a call
/// with no timeout.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_read_of_an_unarmed_timerfd_is_untimed() {
    let mut events = vec![
        enter(1_000, T, 283, [1, 0, 0, 0, 0, 0]),
        exit(1_100, T, 283, 5),
    ];
    events.extend(timerfd_read(9_500, 5, 0xf, None));
    let found = find_waits(&Timeline::new(events), Some(&[T]));
    assert!(found.waits.is_empty());
    assert_eq!(found.untimed, 1);
}

/// The holder's kernel stack is the one recorded at the switch that took it off the CPU
/// in the wait it held: not another task's, and none where no stacks were recorded.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_holders_stack_is_the_one_it_left_the_cpu_with() {
    use crate::capture::{Captured, Events, SwitchStack};
    let events = vec![
        enter(1_000, T, 230, [1, 1, 0x100, 0, 0, 0]),
        arm(1_100, T, 0xa, 1_001_000, 1_001_000),
        // The app sleeps; thread 9 runs, and holds the CPU after the app's wakeup.
        switch(1_200, T, true, 9),
        expire(1_001_000, 0xa),
        waking(1_001_100, 9, FLAG_HARDIRQ, T),
        switch(1_050_000, 9, false, T),
        exit(1_051_000, T, 230, 0),
    ];
    let stack = |time_ns, frame| SwitchStack {
        cpu: 0,
        time_ns,
        frames: vec![frame],
    };
    let captured = Captured {
        events: events.clone(),
        recorded: Events::Program,
        stacks: vec![stack(1_050_000, 0xffff_0001), stack(1_200, 0xffff_0002)],
        ..Captured::default()
    };
    let hex = |f: &[u64]| f.iter().map(|a| format!("{a:#x}")).collect::<Vec<_>>();
    for (tl, want) in [
        (Timeline::of(captured), vec!["0xffff0001".to_string()]),
        (Timeline::new(events), vec![]),
    ] {
        let found = find_waits(&tl, Some(&[T]));
        let split = accounts(&tl, &found.waits);
        let mut calls = summarise(&found, &split, 0);
        name_holder_stacks(&mut calls, &tl, &found, &split, hex);
        let h = &calls[0].holders[0];
        assert_eq!((h.pid, h.run_queue_ns), (9, 48_900));
        assert_eq!(h.kernel_stack, want);
    }
}
