//! The BPF recorder on the live kernel (as root, with BTF), against ftrace's record of
//! the same waits.
use super::BpfSession;
use crate::event::{Detail, Event, Kind, SyscallsBy};
use crate::test_support;
use crate::{Session, TraceError, this_tid};
use sleeplab::clock::monotonic_ns;

/// The BPF session `opened`, or `None` where it cannot run here: not root, or a kernel
/// without BTF (whatever CI says: a kernel may lack BTF); else as
/// [`test_support::started`].
fn started<T>(opened: Result<T, TraceError>) -> Option<T> {
    if let Err(why) = BpfSession::usable() {
        eprintln!("skipped: {why}");
        return None;
    }
    test_support::started(opened)
}

/// `tid`'s system calls among `events`: (entry or return, number).
fn calls(events: &[Event], tid: i32) -> Vec<(bool, i64)> {
    let mut v: Vec<&Event> = events.iter().filter(|e| e.pid == tid).collect();
    v.sort_by_key(|e| e.time_ns);
    v.iter()
        .filter_map(|e| match e.kind {
            Kind::SysEnter { id, .. } => Some((true, id)),
            Kind::SysExit { id, .. } => Some((false, id)),
            _ => None,
        })
        .collect()
}

const NANOSLEEP: i64 = 35;
const CLOCK_NANOSLEEP: i64 = 230;
const GETPPID: i64 = 110;

fn getppids(n: usize) {
    for _ in 0..n {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() };
    }
}

#[test]
fn it_records_the_followed_threads_calls_and_their_childrens_only() {
    let tid = this_tid();
    let from = monotonic_ns();
    let Some(mut bpf) = started(BpfSession::start_program(&[tid], Detail::Interrupts)) else {
        return;
    };
    getppids(5);
    // A thread this one creates is followed from its first call.
    let child = std::thread::spawn(|| {
        getppids(10);
        this_tid()
    })
    .join()
    .unwrap();
    // A process this thread starts is followed too, from its first call.
    let mut forked = std::process::Command::new("true").spawn().unwrap();
    let forked_pid = forked.id() as i32;
    assert!(forked.wait().unwrap().success());
    let mut events = Vec::new();
    let drained = bpf.drain(&mut events);
    assert_eq!(drained.lost, 0, "no record lost");
    assert_eq!(drained.events, events.len());
    let mine = calls(&events, tid);
    assert!(mine.iter().filter(|c| **c == (true, GETPPID)).count() >= 5);
    assert!(mine.iter().filter(|c| **c == (false, GETPPID)).count() >= 5);
    let its = calls(&events, child);
    assert_eq!(its.iter().filter(|c| **c == (true, GETPPID)).count(), 10);
    assert_eq!(its.iter().filter(|c| **c == (false, GETPPID)).count(), 10);
    // Only the followed threads' calls: this one's, its thread's and the `true` it
    // started, never another thread's (the test harness's others among them).
    let callers: std::collections::BTreeSet<i32> = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::SysEnter { .. } | Kind::SysExit { .. }))
        .map(|e| e.pid)
        .collect();
    assert!(callers.contains(&tid) && callers.contains(&child));
    for pid in callers {
        assert!(
            pid == tid || pid == child || pid == forked_pid,
            "thread {pid}'s calls were kept"
        );
    }
    // Nothing from before the recorder started.
    assert!(events.iter().all(|e| e.time_ns >= from));
    assert_eq!(bpf.late_threads(), 0);
    // Runs the kernel skipped are read, to be counted lost.
    assert!(bpf.misses_told());
    assert_eq!(bpf.lost(), 0);
}

/// Both recorders at once on the same sleeps: the same calls, the same timers armed,
/// the same switches of the sleeping thread, at nearly the same times.
#[test]
fn it_agrees_with_ftrace_on_the_same_sleeps() {
    let tid = this_tid();
    let Some(mut ftrace) = started(Session::start_program(
        &[tid],
        Detail::Interrupts,
        SyscallsBy::PidList,
    )) else {
        return;
    };
    let Some(mut bpf) = started(BpfSession::start_program(&[tid], Detail::Interrupts)) else {
        return;
    };
    for _ in 0..20 {
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    let (mut by_ftrace, mut by_bpf) = (Vec::new(), Vec::new());
    assert_eq!(ftrace.drain(&mut by_ftrace).lost, 0);
    assert_eq!(bpf.drain(&mut by_bpf).lost, 0);
    let sleeps = |events: &[Event]| -> Vec<(u64, i64, [u64; 6])> {
        let mut v: Vec<(u64, i64, [u64; 6])> = events
            .iter()
            .filter(|e| e.pid == tid)
            .filter_map(|e| match e.kind {
                Kind::SysEnter { id, args } if id == NANOSLEEP || id == CLOCK_NANOSLEEP => {
                    Some((e.time_ns, id, args))
                }
                _ => None,
            })
            .collect();
        v.sort();
        v
    };
    let (f, b) = (sleeps(&by_ftrace), sleeps(&by_bpf));
    // Each recorder began and ended at its own moment: compare the sleeps both saw.
    let common: Vec<_> = b
        .iter()
        .filter(|(t, ..)| f.first().is_some_and(|x| x.0 <= *t + 50_000))
        .filter(|(t, ..)| f.last().is_some_and(|x| *t <= x.0 + 50_000))
        .collect();
    assert!(common.len() >= 18, "{} sleeps both saw", common.len());
    for (t, id, args) in common {
        let twin = f
            .iter()
            .find(|(ft, fid, fargs)| ft.abs_diff(*t) < 50_000 && fid == id && fargs == args);
        assert!(twin.is_some(), "ftrace has no sleep like BPF's at {t}");
    }
    // The timers this thread armed: the same expiries, to the ns.
    let armed = |events: &[Event]| -> Vec<(i64, i64)> {
        let mut v: Vec<(i64, i64)> = events
            .iter()
            .filter(|e| e.pid == tid && e.in_task())
            .filter_map(|e| match e.kind {
                Kind::TimerStart {
                    soft_ns, hard_ns, ..
                } => Some((soft_ns, hard_ns)),
                _ => None,
            })
            .collect();
        v.sort();
        v
    };
    let (fa, ba) = (armed(&by_ftrace), armed(&by_bpf));
    let both = ba.iter().filter(|x| fa.contains(x)).count();
    assert!(both >= 18, "{both} timers armed alike");
    // Its switches out asleep: in a sleeping state for both recorders.
    let asleep = |events: &[Event]| {
        events
            .iter()
            .filter(|e| {
                matches!(e.kind, Kind::Switch { prev_pid, prev_state, .. }
                if prev_pid == tid && prev_state & crate::SLEEPING_STATES != 0)
            })
            .count()
    };
    assert!(asleep(&by_bpf) >= 18, "BPF saw {} sleeps", asleep(&by_bpf));
    // The same switch, the same state, as the kernel's rule reports it to ftrace.
    let mut paired = 0;
    for e in by_bpf.iter() {
        let Kind::Switch {
            prev_pid,
            prev_state,
            next_pid,
            ..
        } = e.kind
        else {
            continue;
        };
        if prev_pid != tid {
            continue;
        }
        let twin = by_ftrace.iter().find(|f| {
            f.time_ns.abs_diff(e.time_ns) < 20_000
                && matches!(f.kind, Kind::Switch { prev_pid: p, next_pid: n, .. }
                    if p == prev_pid && n == next_pid)
        });
        if let Some(Kind::Switch { prev_state: s, .. }) = twin.map(|f| f.kind) {
            assert_eq!(s, prev_state, "the state of the switch at {}", e.time_ns);
            paired += 1;
        }
    }
    assert!(paired >= 18, "{paired} switches paired");
    // The context of each event both recorded (a timer armed, by its expiries; a
    // wakeup, by its task; on the same CPU, by the same task, at nearly the same time):
    // both read the CPU's preempt count.
    let (mut pairs, mut differ) = (0, 0);
    for e in by_bpf.iter() {
        let twin = by_ftrace.iter().find(|f| {
            f.cpu == e.cpu
                && f.pid == e.pid
                && f.time_ns.abs_diff(e.time_ns) < 20_000
                && match (e.kind, f.kind) {
                    (
                        Kind::TimerStart {
                            soft_ns, hard_ns, ..
                        },
                        Kind::TimerStart {
                            soft_ns: s,
                            hard_ns: h,
                            ..
                        },
                    ) => soft_ns == s && hard_ns == h,
                    (Kind::Waking { pid, .. }, Kind::Waking { pid: p, .. }) => pid == p,
                    _ => false,
                }
        });
        if let Some(f) = twin {
            pairs += 1;
            if f.in_task() != e.in_task() || f.in_hardirq() != e.in_hardirq() {
                differ += 1;
                eprintln!(
                    "{:?}: BPF's flags {:#x}, ftrace's {:#x}",
                    e.kind, e.flags, f.flags
                );
            }
        }
    }
    eprintln!("context: {differ} of {pairs} pairs differ");
    // Enough pairs that agreement means something (45–219 in a run here; BPF may miss a
    // CPU's events while some tasks run there, so fewer than all pair up).
    assert!(pairs >= 20, "{pairs} pairs");
    assert!(
        differ * 100 <= pairs,
        "{differ} of {pairs} differ in context"
    );
    // The timers' expiries ran in a hard interrupt, as ftrace's flags say too.
    assert!(
        by_bpf
            .iter()
            .filter(|e| matches!(e.kind, Kind::TimerExpire { .. }))
            .all(|e| e.in_hardirq())
    );
}

#[test]
fn a_paused_session_records_nothing_until_resumed() {
    let tid = this_tid();
    let Some(mut bpf) = started(BpfSession::start_program(&[tid], Detail::Light)) else {
        return;
    };
    let mut events = Vec::new();
    bpf.pause().unwrap();
    bpf.drain(&mut events);
    events.clear();
    getppids(5);
    bpf.drain(&mut events);
    assert_eq!(calls(&events, tid), Vec::new(), "recorded while paused");
    bpf.resume().unwrap();
    getppids(5);
    bpf.drain(&mut events);
    let kept = calls(&events, tid);
    assert_eq!(kept.iter().filter(|c| **c == (true, GETPPID)).count(), 5);
    assert_eq!(bpf.interrupts(), crate::InterruptsRecorded::None);
}
