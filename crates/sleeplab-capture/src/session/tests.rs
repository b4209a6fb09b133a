//! Sessions on the live kernel (as root), and the CPU lists.
use super::*;
use crate::test_support::started;
use std::sync::mpsc;

/// A thread of this one's, making 10 `getppid`s as it starts: its id once it ended.
fn a_child_making_getppids() -> i32 {
    std::thread::spawn(|| {
        getppids(10);
        crate::this_tid()
    })
    .join()
    .unwrap()
}

/// The system calls' returns of `tid` among `events`, at or after `from_ns`.
fn sys_exits(events: &[Event], tid: i32, from_ns: u64) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::SysExit { .. }))
        .filter(|e| e.pid == tid && e.time_ns >= from_ns)
        .count()
}

/// The switches of `tid` (in or out) among `events`, at or after `from_ns`, but
/// for those from or to `apart` (recorded for `apart` when it is followed).
fn switches(events: &[Event], tid: i32, apart: i32, from_ns: u64) -> usize {
    events
        .iter()
        .filter(|e| e.time_ns >= from_ns)
        .filter(|e| {
            matches!(e.kind, Kind::Switch { prev_pid, next_pid, .. }
                if (prev_pid == tid || next_pid == tid)
                    && prev_pid != apart && next_pid != apart)
        })
        .count()
}

/// Sleeps 1 ms twice. The message that woke this thread may have preempted the
/// other test thread on its way to `recv` (then the first sleep hands the CPU back
/// to it); by the second, the other has blocked, and this thread's switch out names
/// a third task.
fn sleep_after_the_other_blocked() {
    for _ in 0..2 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn getppids(n: usize) {
    for _ in 0..n {
        // SAFETY: no preconditions.
        unsafe { libc::getppid() };
    }
}

/// The session records the followed thread's system calls and no other's (and every
/// task's switches: who held a CPU is named from them), and a new set replaces the
/// old one: the new thread's system calls are recorded, the dropped thread's no more
/// (as root; elsewhere skipped, but not under CI, which runs as root).
#[test]
fn events_follow_exactly_the_followed_threads() {
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start(&[me])) else {
        return;
    };
    let (to_helper, orders) = mpsc::channel::<usize>();
    let (to_main, done) = mpsc::channel::<i32>();
    let helper = std::thread::spawn(move || {
        to_main.send(crate::this_tid()).unwrap();
        for n in orders {
            getppids(n);
            // Blocks while the test thread waits in `recv`: the helper leaves its CPU
            // to a task other than the test thread (idle or another), a switch that
            // concerns no followed thread.
            sleep_after_the_other_blocked();
            to_main.send(0).unwrap();
        }
    });
    let other = done.recv().unwrap();
    let mut events = Vec::new();
    getppids(10);
    to_helper.send(10).unwrap();
    done.recv().unwrap();
    s.drain(&mut events);
    assert!(sys_exits(&events, me, 0) >= 10, "{events:?}");
    assert_eq!(sys_exits(&events, other, 0), 0);
    // Every task's switches are kept (who held a CPU is named from them): the
    // helper blocked in its sleep while the test thread waited.
    assert!(switches(&events, other, me, 0) >= 1, "{events:?}");

    s.follow(&[other]).unwrap();
    let followed = sleeplab::clock::monotonic_ns();
    events.clear();
    getppids(10);
    // Blocks while the helper waits in `recv`: this thread leaves its CPU to a task
    // other than the helper, a switch kept now although this thread is not followed.
    sleep_after_the_other_blocked();
    to_helper.send(10).unwrap();
    done.recv().unwrap();
    s.drain(&mut events);
    assert_eq!(sys_exits(&events, me, followed), 0);
    assert!(sys_exits(&events, other, followed) >= 10, "{events:?}");
    assert!(switches(&events, me, other, followed) >= 1, "{events:?}");
    // The helper was asleep in `recv` when its order came: it was switched in (from
    // this thread or another, which the filter keeps now for the helper's sake).
    assert!(switches(&events, other, -1, followed) >= 1, "{events:?}");
    drop(to_helper);
    helper.join().unwrap();
}

/// A followed program's thread created after the start is recorded from its first
/// system call (its first 10 `getppid`s, made before any drain could name it), kept by
/// a filter or by the kernel's pid list; a thread that was running before, and is no
/// child of a followed one, is not kept although its pid may lie in the filter's window
/// (as root; elsewhere skipped, but not under CI).
#[test]
fn a_programs_new_threads_are_recorded_from_their_first_call() {
    for by in [SyscallsBy::Filter, SyscallsBy::PidList] {
        new_threads_recorded_from_their_first_call(by);
    }
}

fn new_threads_recorded_from_their_first_call(by: SyscallsBy) {
    let (to_other, orders) = mpsc::channel::<usize>();
    let (to_main, done) = mpsc::channel::<i32>();
    let other = std::thread::spawn(move || {
        to_main.send(crate::this_tid()).unwrap();
        for n in orders {
            getppids(n);
            to_main.send(0).unwrap();
        }
    });
    let other_tid = done.recv().unwrap();
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start_program(&[me], Detail::Light, by)) else {
        return;
    };
    assert_eq!(s.lineage.is_some(), by == SyscallsBy::Filter);
    let child = a_child_making_getppids();
    to_other.send(10).unwrap();
    done.recv().unwrap();
    let mut events = Vec::new();
    s.drain(&mut events);
    assert!(sys_exits(&events, child, 0) >= 10, "{by:?} {events:?}");
    assert_eq!(sys_exits(&events, other_tid, 0), 0, "{by:?}");
    assert_eq!(s.late_threads(), 0);
    // The child exited and its parent is still followed: a second child is too.
    let second = a_child_making_getppids();
    events.clear();
    s.drain(&mut events);
    assert!(sys_exits(&events, second, 0) >= 10, "{by:?} {events:?}");
    drop(to_other);
    other.join().unwrap();
}

/// Without the system calls' returns, none is recorded, and the followed thread's
/// switches still are (as root; elsewhere skipped, but not under CI).
#[test]
fn no_syscall_exit_records_the_rest() {
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start_with(
        &[me],
        Events::NoSyscallExit,
        Detail::Full,
    )) else {
        return;
    };
    let from = sleeplab::clock::monotonic_ns();
    for _ in 0..5 {
        getppids(10);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut events = Vec::new();
    s.drain(&mut events);
    assert_eq!(sys_exits(&events, me, 0), 0, "{events:?}");
    assert!(switches(&events, me, -1, from) >= 5, "{events:?}");
}

/// A thread that spins 30 ms is interrupted by its CPU's timer at least once (the
/// tick runs while a CPU is busy), and the session records that interrupt's entry
/// and exit with the spinner as the interrupted task, where the kernel has the
/// interrupts' tracepoints (as root; elsewhere skipped, but not under CI).
#[test]
fn a_spinners_interrupts_are_recorded() {
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start(&[me])) else {
        return;
    };
    if !records_interrupts(&s) {
        return;
    }
    let until = sleeplab::clock::monotonic_ns() + 30_000_000;
    while sleeplab::clock::monotonic_ns() < until {
        std::hint::spin_loop();
    }
    let mut events = Vec::new();
    s.drain(&mut events);
    let mine = |entry: bool| {
        events
            .iter()
            .filter(|e| e.pid == me && e.in_hardirq())
            .filter(|e| match e.kind {
                Kind::IrqEntry { .. } => entry,
                Kind::IrqExit { .. } => !entry,
                _ => false,
            })
            .count()
    };
    assert!(mine(true) >= 1 && mine(false) >= 1, "{events:?}");
    // Other threads' interrupts (not of an idle CPU) are not kept.
    assert!(events.iter().all(|e| match e.kind {
        Kind::IrqEntry { .. } | Kind::IrqExit { .. } => e.pid == me || e.pid == 0,
        _ => true,
    }));
}

/// Whether `s` records the machine's interrupts: a kernel without their tracepoints is
/// skipped with a note, but not under CI.
fn records_interrupts(s: &Session) -> bool {
    if !s.interrupts().any() {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI the kernel's interrupt tracepoints must be recorded"
        );
        eprintln!("skipped: this kernel records no interrupts");
    }
    s.interrupts().any()
}

/// Spins 30 ms (the CPU's timer interrupts the spinner), then sleeps 1 ms five times
/// (each sleep a switch out and back), and drains `s`.
fn spin_then_sleep(s: &mut Session) -> Vec<Event> {
    let until = sleeplab::clock::monotonic_ns() + 30_000_000;
    while sleeplab::clock::monotonic_ns() < until {
        std::hint::spin_loop();
    }
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut events = Vec::new();
    s.drain(&mut events);
    events
}

/// A light session records a spinner's timer ticks and an idle CPU's states not at
/// all, its sleeps' switches and system calls still (as root; elsewhere skipped,
/// but not under CI).
#[test]
fn a_light_session_records_no_interrupt_and_no_idle_state() {
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start_with(&[me], Events::All, Detail::Light)) else {
        return;
    };
    assert_eq!(s.interrupts(), InterruptsRecorded::None);
    let events = spin_then_sleep(&mut s);
    assert!(switches(&events, me, -1, 0) >= 5, "{events:?}");
    assert!(sys_exits(&events, me, 0) >= 5, "{events:?}");
    let machine = |e: &&Event| {
        matches!(
            e.kind,
            Kind::IrqEntry { .. } | Kind::IrqExit { .. } | Kind::IdleEnter { .. } | Kind::IdleExit
        )
    };
    assert_eq!(events.iter().filter(machine).count(), 0, "{events:?}");
}

/// A program's default session records the machine's interrupts but never the local
/// timer's nor an idle state, where a full one records the local timer's (as root;
/// elsewhere skipped, but not under CI).
#[test]
fn the_default_program_detail_leaves_out_the_local_timer_and_the_idle_states() {
    let me = crate::this_tid();
    let Some(mut s) = started(Session::start_program(
        &[me],
        Detail::Interrupts,
        SyscallsBy::Filter,
    )) else {
        return;
    };
    if !records_interrupts(&s) {
        return;
    }
    assert_eq!(s.interrupts(), InterruptsRecorded::ButLocalTimer);
    let events = spin_then_sleep(&mut s);
    assert!(switches(&events, me, -1, 0) >= 5, "{events:?}");
    let idle_path = |e: &&Event| match e.kind {
        Kind::IrqEntry { what, .. } | Kind::IrqExit { what, .. } => {
            what == crate::event::Interrupt::LocalTimer
        }
        Kind::IdleEnter { .. } | Kind::IdleExit => true,
        _ => false,
    };
    assert_eq!(events.iter().filter(idle_path).count(), 0, "{events:?}");
    drop(s);
    let full = Session::start_program(&[me], Detail::Full, SyscallsBy::Filter).unwrap();
    assert_eq!(
        full.interrupts().local_timer(),
        full.decoders.has(Tracepoint::LocalTimerEntry)
    );
}

#[test]
fn cpu_lists() {
    assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
    assert_eq!(parse_cpu_list("0-1,4,6-7"), vec![0, 1, 4, 6, 7]);
    assert_eq!(parse_cpu_list("3"), vec![3]);
    assert!(parse_cpu_list("").is_empty());
    assert!(parse_cpu_list("x").is_empty());
}
