//! A program's own waits: every system call of an unmodified program's threads that
//! blocked until a timer, found in the kernel's events (`raw_syscalls:sys_enter` and
//! `sys_exit`, the timer it armed, its switch out, the timer's expiry or the wakeup that
//! came first), with its lateness past the timer's soft expiry split like any wake's.
//!
//! The deadline is the one the kernel kept: the soft expiry of the first timer the
//! thread armed inside the call (its `hrtimer_sleeper`; a timer the scheduler arms on
//! the way to sleep comes later). For a millisecond API that is the kernel's own
//! rounding of the timeout; what the program meant is not on record, which is why a
//! millisecond timeout is named as a trap rather than booked as lateness.
//!
//! Pure: a function of a timeline, as the rest of the account ([`find_waits`]).
//!
//! * `calls`: the wait calls by number, and what their arguments say ([`WaitCall`]);
//! * `summary`: a call's statistics and the traps its waits fall into ([`CallSummary`]);
//! * `kept`: the flight recorder's windows of the late waits, each checked to give the
//!   same account from its events alone ([`keep`]);
//! * `interrupts`: what the kernel ran on a late wait's CPU after its deadline, by name
//!   ([`IrqTime`]).

mod calls;
mod interrupts;
mod kept;
mod summary;

use calls::TimerfdCall;
pub use calls::{Timeout, WaitCall};
pub use interrupts::{IrqTime, IrqTotal, irq_name};
pub use kept::{KEEP_LOOKBACK_MAX_NS, KEEP_LOOKBACK_NS, Keep, Kept, keep, keep_chosen, kept_waits};
pub use summary::{
    CallSummary, HeldBy, SLACK_DEFAULT_NS, Trap, name_holder_stacks, summarise, traps,
};

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::analysis::account::{WakeAccount, account};
use crate::analysis::timeline::Timeline;
use crate::analysis::window::Window;
use crate::capture::{Event, Kind, SLEEPING_STATES};

/// How a program's wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Ending {
    /// Its timer expired and woke it: the wait reached its deadline.
    Timer,
    /// Another task (or an interrupt) woke it before its timer: an event it waited
    /// for came, or a futex was released.
    Woken {
        /// The waker's thread id (0: an interrupt or the idle task).
        waker: i32,
    },
    /// A signal ended it (`EINTR`, or the kernel's restart codes).
    Signal,
    /// It returned without blocking: its events were ready, or its timeout was zero or
    /// past.
    NeverBlocked,
    /// It blocked, and neither its timer's expiry nor a wakeup is on record (the tracer
    /// lost them): how it ended is unknown, and it is counted apart, never as woken or
    /// late.
    Unrecorded,
}

/// One wait of a program's thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramWait {
    /// The thread.
    pub tid: i32,
    /// Its name, as the scheduler last saw it.
    pub comm: String,
    /// The call.
    pub call: WaitCall,
    /// What its arguments said of the timeout.
    pub timeout: Timeout,
    /// When the call began (`sys_enter`), CLOCK_MONOTONIC ns.
    pub enter_ns: u64,
    /// When it returned (`sys_exit`), ns.
    pub exit_ns: u64,
    /// What it returned.
    pub ret: i64,
    /// The soft expiry of the timer it armed: its deadline (`None`: it armed none, or
    /// one on another clock than CLOCK_MONOTONIC).
    pub deadline_ns: Option<u64>,
    /// The timer's hard expiry: the deadline plus the thread's timer slack.
    pub hard_ns: Option<u64>,
    /// How it ended.
    pub ending: Ending,
    /// For a wait its timer ended and that returned after its deadline: the interrupts
    /// and softirqs the CPU it returned on ran between the deadline and its return, most
    /// time first (those that interrupted the idle task or the program's threads).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupts: Vec<IrqTime>,
}

impl ProgramWait {
    /// How late it returned past its deadline, ns: for a wait its timer ended only.
    pub fn lateness_ns(&self) -> Option<u64> {
        match (self.ending, self.deadline_ns) {
            (Ending::Timer, Some(d)) => Some(self.exit_ns.saturating_sub(d)),
            _ => None,
        }
    }

    /// How long before its deadline it returned, ns, for a wait that ended early (woken
    /// or interrupted before its timer): counted apart from lateness, never mixed in.
    pub fn early_ns(&self) -> Option<u64> {
        match (self.ending, self.deadline_ns) {
            (Ending::Woken { .. } | Ending::Signal, Some(d)) if self.exit_ns < d => {
                Some(d - self.exit_ns)
            }
            _ => None,
        }
    }

    /// Its timer slack: hard − soft expiry, ns.
    pub fn slack_ns(&self) -> Option<u64> {
        Some(self.hard_ns?.saturating_sub(self.deadline_ns?))
    }

    /// The window its account splits (a wait its timer ended only).
    pub fn window(&self) -> Option<Window> {
        self.lateness_ns()?;
        Some(Window::until(
            self.tid,
            self.enter_ns,
            self.deadline_ns?,
            self.exit_ns,
        ))
    }
}

/// What [`find_waits`] found.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Every wait that armed a timer or could have (a timeout given), in the order
    /// they returned.
    pub waits: Vec<ProgramWait>,
    /// Wait calls with no timeout (waiting for an event only): counted, not explained.
    pub untimed: u64,
    /// Wait calls whose entry or return was not on record (a lost event, or the run's
    /// edges): counted, not explained.
    pub unpaired: u64,
}

impl Found {
    /// Names the device interrupts of every wait (`irq 11` → `irq 11 virtio0`) by
    /// `names` (the CLI reads `/proc/interrupts`); those it does not know keep their
    /// number alone.
    pub fn name_device_irqs(&mut self, names: impl Fn(i32) -> Option<String>) {
        for i in self.waits.iter_mut().flat_map(|w| w.interrupts.iter_mut()) {
            if let Some(name) = i.irq.and_then(&names) {
                i.name = format!("{} {name}", i.name);
            }
        }
    }
}

/// A deadline further than this from the call's start is on another clock
/// (CLOCK_REALTIME's base, for `FUTEX_CLOCK_REALTIME` or an absolute realtime sleep).
const OTHER_CLOCK_NS: u64 = 1_000_000 * 1_000_000_000;

/// A wait call begun and not yet returned.
#[derive(Debug, Clone, Copy)]
struct Open {
    call: WaitCall,
    id: i64,
    timeout: Timeout,
    enter_ns: u64,
    /// A timerfd read's fd, and its timer where known.
    timerfd: Option<(u64, Option<u64>)>,
}

/// What the program's own calls tell of its timerfds: each fd's timer (its kernel
/// address, learned from the first arming seen), and the `timerfd_settime` calls open.
#[derive(Debug, Default)]
struct Timerfds {
    timers: HashMap<u64, Option<u64>>,
    /// Per thread: the fd of its `timerfd_settime` under way, and when it began.
    settime: HashMap<i32, (u64, u64)>,
    /// Per thread: the fd of its read of an fd not known as a timerfd, and when it
    /// began (a periodic timerfd armed before the run shows itself by re-arming its
    /// timer in the read that its expiry woke).
    reads: HashMap<i32, (u64, u64)>,
}

impl Timerfds {
    /// Thread `tid` began system call `id` with `args` at `at_ns`: for a read of a
    /// timerfd, its fd and its timer (`None`: never armed while followed).
    fn enter(
        &mut self,
        tid: i32,
        id: i64,
        args: &[u64; 6],
        at_ns: u64,
    ) -> Option<(u64, Option<u64>)> {
        match TimerfdCall::of(id) {
            Some(TimerfdCall::Settime) => {
                self.settime.insert(tid, (args[0], at_ns));
            }
            Some(TimerfdCall::Close) => {
                self.timers.remove(&args[0]);
            }
            _ => {}
        }
        if Some(id) != WaitCall::TimerfdRead.number() {
            return None;
        }
        match self.timers.get(&args[0]) {
            Some(&timer) => Some((args[0], timer)),
            None => {
                self.reads.insert(tid, (args[0], at_ns));
                None
            }
        }
    }

    /// Thread `tid`'s call `id` returned `ret` at `at_ns`: a new timerfd's fd, or the
    /// timer its `timerfd_settime` armed (the first the thread armed inside the call).
    fn exit(&mut self, tl: &Timeline, tid: i32, id: i64, ret: i64, at_ns: u64) {
        match TimerfdCall::of(id) {
            Some(TimerfdCall::Create) if ret >= 0 => {
                self.timers.insert(ret as u64, None);
            }
            Some(TimerfdCall::Settime) => {
                if let Some((fd, from)) = self.settime.remove(&tid)
                    && let Some(timer) = own_arming(tl.range(from, at_ns), tid)
                {
                    self.timers.insert(fd, Some(timer));
                }
            }
            _ if Some(id) == WaitCall::TimerfdRead.number() => {
                if let Some((fd, from)) = self.reads.remove(&tid)
                    && let Some(timer) = own_arming(tl.range(from, at_ns), tid)
                    && tl.expiry_of(timer, from, at_ns).is_some()
                {
                    self.timers.insert(fd, Some(timer));
                }
            }
            _ => {}
        }
    }
}

/// The first timer thread `tid` armed itself (in task context) among `events`.
fn own_arming(events: &[Event], tid: i32) -> Option<u64> {
    events.iter().find_map(|e| match e.kind {
        Kind::TimerStart { timer, .. } if e.pid == tid && e.in_task() => Some(timer),
        _ => None,
    })
}

/// Every wait of the threads `tids` (all threads with system calls on record when
/// `None`) on `tl`, found from their system calls.
pub fn find_waits(tl: &Timeline, tids: Option<&[i32]>) -> Found {
    let followed = |tid: i32| tid > 0 && tids.is_none_or(|t| t.contains(&tid));
    let mut open: HashMap<i32, Open> = HashMap::new();
    let mut comms: HashMap<i32, String> = HashMap::new();
    let mut timerfds = Timerfds::default();
    let mut found = Found::default();
    for e in tl.events() {
        match e.kind {
            Kind::Switch {
                prev_pid,
                prev_comm,
                next_pid,
                next_comm,
                ..
            } => {
                for (pid, comm) in [(prev_pid, prev_comm), (next_pid, next_comm)] {
                    if followed(pid) {
                        comms.insert(pid, comm.as_string());
                    }
                }
            }
            Kind::SysEnter { id, args } if followed(e.pid) => {
                let timerfd = timerfds.enter(e.pid, id, &args, e.time_ns);
                match WaitCall::of(id, &args) {
                    // A read of a timerfd never armed waits for nothing but an event.
                    None if matches!(timerfd, Some((_, None))) => {
                        found.unpaired += u64::from(open.remove(&e.pid).is_some());
                        found.untimed += 1;
                    }
                    None if timerfd.is_some() => {
                        found.unpaired += u64::from(open.remove(&e.pid).is_some());
                        open.insert(
                            e.pid,
                            Open {
                                call: WaitCall::TimerfdRead,
                                id,
                                timeout: Timeout::Armed,
                                enter_ns: e.time_ns,
                                timerfd,
                            },
                        );
                    }
                    Some(call) => {
                        let timeout = call.timeout(&args);
                        if timeout == Timeout::None {
                            found.untimed += 1;
                            open.remove(&e.pid);
                        } else {
                            open.insert(
                                e.pid,
                                Open {
                                    call,
                                    id,
                                    timeout,
                                    enter_ns: e.time_ns,
                                    timerfd: None,
                                },
                            );
                        }
                    }
                    None => {
                        // Another call began: one still open lost its return.
                        found.unpaired += u64::from(open.remove(&e.pid).is_some());
                    }
                }
            }
            Kind::SysExit { id, ret } if followed(e.pid) => {
                timerfds.exit(tl, e.pid, id, ret, e.time_ns);
                if let Some(o) = open.remove(&e.pid) {
                    if o.id == id {
                        let comm = comms.get(&e.pid).cloned().unwrap_or_default();
                        found.waits.push(close(tl, e, o, ret, comm));
                    } else {
                        found.unpaired += 1;
                    }
                }
            }
            _ => {}
        }
    }
    found.unpaired += open.len() as u64;
    // A thread's name may first show after its first waits.
    for w in &mut found.waits {
        if w.comm.is_empty() {
            w.comm = comms.get(&w.tid).cloned().unwrap_or_default();
        }
    }
    found
}

/// The wait `o` of thread `exit.pid`, returned at `exit` with `ret`.
fn close(tl: &Timeline, exit: &Event, o: Open, ret: i64, comm: String) -> ProgramWait {
    let tid = exit.pid;
    let events = tl.range(o.enter_ns, exit.time_ns);
    let timer = match o.timerfd {
        // A timerfd's read waits for the timer armed before it (by timerfd_settime, or
        // re-armed by the read before): its last arming before the call began.
        Some((_, timer)) => timer.and_then(|t| {
            let a = tl.arming_before(t, o.enter_ns)?;
            Some((t, a.soft_ns, a.hard_ns))
        }),
        // The first timer the thread armed in the call (in task context): the wait's own.
        None => events.iter().find_map(|e| match e.kind {
            Kind::TimerStart {
                timer,
                soft_ns,
                hard_ns,
            } if e.pid == tid && e.in_task() => Some((timer, soft_ns, hard_ns)),
            _ => None,
        }),
    };
    let block = events.iter().find(|e| {
        matches!(e.kind, Kind::Switch { prev_pid, prev_state, .. }
            if prev_pid == tid && prev_state & SLEEPING_STATES != 0)
    });
    let on_this_clock = |ns: i64| {
        u64::try_from(ns)
            .ok()
            .filter(|&t| t + OTHER_CLOCK_NS > o.enter_ns && t < o.enter_ns + OTHER_CLOCK_NS)
    };
    let deadline_ns = timer.and_then(|(_, soft, _)| on_this_clock(soft));
    let hard_ns = timer
        .and_then(|(_, _, hard)| on_this_clock(hard))
        .filter(|_| deadline_ns.is_some());
    let ending = match block {
        None => Ending::NeverBlocked,
        Some(b) => {
            let woken = events[..].iter().find(|e| {
                e.time_ns >= b.time_ns && matches!(e.kind, Kind::Waking { pid, .. } if pid == tid)
            });
            let expired = timer.and_then(|(t, _, _)| tl.expiry_of(t, b.time_ns, exit.time_ns));
            match (expired, woken) {
                // The timer's interrupt wakes the thread: its wakeup follows the expiry.
                (Some(x), w) if w.is_none_or(|w| w.time_ns >= x.time_ns) => Ending::Timer,
                _ if is_signal(ret) => Ending::Signal,
                (_, Some(w)) => Ending::Woken {
                    waker: if w.in_task() { w.pid } else { 0 },
                },
                // Blocked, with neither an expiry nor a wakeup on record.
                (_, None) => Ending::Unrecorded,
            }
        }
    };
    // What the kernel ran on the CPU it returned on, between its deadline and then.
    let interrupts = match (ending, deadline_ns) {
        (Ending::Timer, Some(d)) if exit.time_ns > d => {
            interrupts::interrupts_on(events, exit.cpu, d, exit.time_ns)
        }
        _ => Vec::new(),
    };
    ProgramWait {
        interrupts,
        tid,
        comm,
        call: o.call,
        timeout: o.timeout,
        enter_ns: o.enter_ns,
        exit_ns: exit.time_ns,
        ret,
        deadline_ns,
        hard_ns,
        ending,
    }
}

/// Whether a system call's return says a signal ended it: `EINTR`, or the restart
/// codes the kernel returns before the signal is handled (`ERESTARTSYS`,
/// `ERESTARTNOINTR`, `ERESTARTNOHAND`, `ERESTART_RESTARTBLOCK`).
fn is_signal(ret: i64) -> bool {
    matches!(ret, -4 | -512 | -513 | -514 | -516)
}

/// Each wait's account (the components of its lateness), by the wait's index: `None`
/// for a wait its timer did not end. Computed once, read by the summary and the CSV.
pub fn accounts(tl: &Timeline, waits: &[ProgramWait]) -> Vec<Option<WakeAccount>> {
    waits
        .iter()
        .map(|w| Some(account(tl, &w.window()?)))
        .collect()
}

#[cfg(test)]
mod tests;
