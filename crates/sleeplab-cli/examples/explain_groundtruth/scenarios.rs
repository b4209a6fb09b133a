//! The scenarios: each causes one component of a wake's lateness with a size known
//! outside the trace, waits WAKES times on the measuring CPU with the tracer on, each
//! injected wake after an uninjected one of the same shape (its size 0: the baseline
//! the other components are judged against), and splits every wake with the account
//! `explain` uses.

use crate::inject::{
    FifoHog, HOG_COMM, OFFSET_NS, grid_deadline, sleep_for, sleep_until, spin_until,
};
use sleeplab::clock::{monotonic_ns, thread_cpu_ns};
use sleeplab::system::{Policy, SlackGuard, set_policy};
use sleeplab_account::{Component, Timeline, WakeAccount, Window, account, this_tid};
use sleeplab_capture::Event;

/// The gap between a wake's clock read and its deadline (the wait itself).
const GAP_NS: u64 = 1_000_000;
/// The slack of every scenario but the slack one: 1 ns, the least a normal thread may
/// have, so that no slack blurs the injected cause.
const NO_SLACK_NS: u64 = 1;
/// How far before the deadline the FIFO thread wakes: it must be on the CPU when the
/// deadline comes (waking an idle vCPU here takes tens of µs).
pub const HOG_LEAD_NS: u64 = 200_000;
/// The paced loop's period in the overrun scenario.
const FRAME_NS: u64 = 2_000_000;
/// The measuring thread's SCHED_FIFO priority in [`Scenario::RunQueue`]: under the
/// FIFO thread's.
pub const MEASURING_PRIORITY: i32 = 1;
/// Wakes between two drains of the tracer's buffers (outside any window): a block, the
/// unit a cause's verdict counts.
pub const BLOCK_WAKES: usize = 50;

/// A cause of known size, and the component it must land in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// The thread's timer slack set to `0` ns; absolute sleeps to deadlines the tick
    /// cannot cut short ([`OFFSET_NS`]). The injected size is the setting, never read
    /// from the trace under test (another timer's interrupt that runs the wake's timer
    /// early makes that wake fail, as it should: the account then books less slack
    /// than was set).
    Slack(u64),
    /// A SCHED_FIFO thread on the measuring CPU wakes [`HOG_LEAD_NS`] before the
    /// deadline and holds the CPU until `0` ns after it; the measuring thread is
    /// SCHED_FIFO too, at a lower priority ([`MEASURING_PRIORITY`]), so that nothing but
    /// that thread holds it up (on a busy machine, SCHED_OTHER tasks woken during the
    /// burn would run before a SCHED_OTHER measuring thread: [`Scenario::RunQueueOther`]).
    RunQueue(u64),
    /// The same with the measuring thread SCHED_OTHER, as `explain` measures: other
    /// tasks of a busy machine may run between the FIFO thread and it.
    RunQueueOther(u64),
    /// A busy stretch of `0` ns between the deadline's clock read and the relative
    /// sleep's system call.
    Entry(u64),
    /// A busy stretch of `0` ns between the system call's return and the clock read.
    Return(u64),
    /// A paced frame whose work runs `0` ns past the next frame's deadline: the next
    /// wait begins that late.
    Overrun(u64),
}

impl Scenario {
    /// The component the cause must land in.
    pub fn component(self) -> Component {
        match self {
            Scenario::Slack(_) => Component::Slack,
            Scenario::RunQueue(_) | Scenario::RunQueueOther(_) => Component::RunQueue,
            Scenario::Entry(_) => Component::Entry,
            Scenario::Return(_) => Component::Return,
            Scenario::Overrun(_) => Component::Overrun,
        }
    }

    /// Whether the component is the very subtraction that injects it (overrun: the
    /// wait's start less its deadline), so that its share cannot fail: arithmetic, not
    /// judged (the other components still are).
    pub fn arithmetic(self) -> bool {
        matches!(self, Scenario::Overrun(_))
    }

    /// The same cause, nothing injected: the shape of the baseline's wakes.
    pub fn uninjected(self) -> Self {
        match self {
            Scenario::Slack(_) => Scenario::Slack(0),
            Scenario::RunQueue(_) => Scenario::RunQueue(0),
            Scenario::RunQueueOther(_) => Scenario::RunQueueOther(0),
            Scenario::Entry(_) => Scenario::Entry(0),
            Scenario::Return(_) => Scenario::Return(0),
            Scenario::Overrun(_) => Scenario::Overrun(0),
        }
    }

    /// Whether the injected size is measured per wake (the FIFO thread's clock, the busy
    /// thread's CPU time), so that the same measure over the uninjected wakes (what the
    /// measuring itself costs: the clock reads around the stretch) comes off it; the
    /// slack's size is its setting and overrun's the arithmetic itself.
    pub fn measured(self) -> bool {
        matches!(
            self,
            Scenario::RunQueue(_)
                | Scenario::RunQueueOther(_)
                | Scenario::Entry(_)
                | Scenario::Return(_)
        )
    }

    /// The nominal size of the cause, ns.
    pub fn size_ns(self) -> u64 {
        match self {
            Scenario::Slack(n)
            | Scenario::RunQueue(n)
            | Scenario::RunQueueOther(n)
            | Scenario::Entry(n)
            | Scenario::Return(n)
            | Scenario::Overrun(n) => n,
        }
    }

    /// What the scenario does, for the table.
    pub fn label(self) -> String {
        let size = crate::judge::fmt_dur(self.size_ns() as f64);
        match self {
            Scenario::Slack(_) => format!("timer slack {size}"),
            Scenario::RunQueue(_) => format!("SCHED_FIFO thread burns {size} past the deadline"),
            Scenario::RunQueueOther(_) => format!(
                "SCHED_FIFO thread burns {size} past the deadline, measuring thread SCHED_OTHER"
            ),
            Scenario::Entry(_) => format!("{size} busy before the system call"),
            Scenario::Return(_) => format!("{size} busy after the system call"),
            Scenario::Overrun(_) => format!("frame work overruns its period by {size}"),
        }
    }
}

/// One wake of a scenario: the size injected (measured where the cause allows) and
/// the account's split.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The injected size for this wake, ns: where measured, net of the same measure over
    /// the uninjected wakes ([`net_of_uninjected`]).
    pub injected_ns: u64,
    /// The size as measured, ns, before anything came off (what "cut short" reads).
    pub measured_ns: u64,
    /// The account of the wake.
    pub account: WakeAccount,
    /// For a run-queue cause: whether the account named the FIFO thread as holder.
    pub holder_named: Option<bool>,
    /// The wake's window.
    pub window: Window,
    /// The recorded events of its window (`--events` prints a failing wake's).
    pub events: Vec<Event>,
}

impl Scored {
    /// What the account put in the scenario's component, ns.
    pub fn got_ns(&self, c: Component) -> u64 {
        self.account.parts.get(c)
    }
}

/// The calling thread at SCHED_FIFO [`MEASURING_PRIORITY`] while it lives, SCHED_OTHER
/// again after.
struct FifoGuard;

impl FifoGuard {
    fn set() -> anyhow::Result<Self> {
        set_policy(Policy::Fifo, MEASURING_PRIORITY)?;
        Ok(Self)
    }
}

impl Drop for FifoGuard {
    fn drop(&mut self) {
        let _ = set_policy(Policy::Other, 0);
    }
}

/// One wake as measured, before the account: its window, the injected size, and
/// whether the run queue's holder must be the FIFO thread.
struct Measured {
    window: Window,
    injected_ns: u64,
    hog: bool,
}

/// A scenario's wakes: the injected ones, and the uninjected ones of the same shape
/// interleaved with them (the baseline), each split by the account.
pub struct Run {
    /// The injected wakes.
    pub injected: Vec<Scored>,
    /// The uninjected wakes.
    pub baseline: Vec<Scored>,
    /// Events the kernel could not record (full buffers).
    pub lost: u64,
}

/// The timer slack a wake of `scenario` runs with: the injected slack, or
/// [`NO_SLACK_NS`].
fn slack_of(scenario: Scenario) -> u64 {
    match scenario {
        Scenario::Slack(s) => s.max(NO_SLACK_NS),
        _ => NO_SLACK_NS,
    }
}

/// Runs `wakes` wakes of `scenario` on the calling thread (pinned by the caller to the
/// measuring CPU `cpu`), each after an uninjected wake of the same shape, traced, and
/// splits each.
pub fn run(scenario: Scenario, wakes: usize, cpu: usize) -> anyhow::Result<Run> {
    let hog = match scenario {
        Scenario::RunQueue(_) | Scenario::RunQueueOther(_) => Some(FifoHog::start(cpu)?),
        _ => None,
    };
    let _policy = match scenario {
        Scenario::RunQueue(_) => Some(FifoGuard::set()?),
        _ => None,
    };
    let tid = this_tid();
    let mut recording = super::recording()?;
    let mut measured = Vec::with_capacity(wakes);
    let mut uninjected = Vec::with_capacity(wakes);
    let bare = scenario.uninjected();
    for k in 0..wakes {
        // The slack set for each wake, outside its window (a prctl).
        let slack = SlackGuard::set(slack_of(bare))?;
        uninjected.push(wake(bare, tid, hog.as_ref())?);
        drop(slack);
        let slack = SlackGuard::set(slack_of(scenario))?;
        measured.push(wake(scenario, tid, hog.as_ref())?);
        drop(slack);
        if k % BLOCK_WAKES == BLOCK_WAKES - 1 {
            recording.drain();
        }
    }
    drop(hog);
    let (timeline, status) = recording.finish();
    let lost = status.map_or(0, |s| s.lost_events);
    let timeline: Timeline = timeline.unwrap_or_default();
    let net = |wakes: &[Measured]| {
        let mut sizes: Vec<u64> = wakes.iter().map(|m| m.injected_ns).collect();
        if scenario.measured() {
            let bare: Vec<u64> = uninjected.iter().map(|m| m.injected_ns).collect();
            net_of_uninjected(&mut sizes, &bare);
        }
        sizes
    };
    let (net_injected, net_bare) = (net(&measured), net(&uninjected));
    let score = |(m, size): (Measured, u64)| {
        let account = account(&timeline, &m.window);
        let holder_named = m
            .hog
            .then(|| account.holder.as_ref().is_some_and(|h| h.comm == HOG_COMM));
        Scored {
            injected_ns: size,
            measured_ns: m.injected_ns,
            account,
            holder_named,
            window: m.window,
            events: timeline.range(m.window.start_ns, m.window.end_ns).to_vec(),
        }
    };
    Ok(Run {
        injected: measured.into_iter().zip(net_injected).map(score).collect(),
        baseline: uninjected.into_iter().zip(net_bare).map(score).collect(),
        lost,
    })
}

/// Takes off each measured size in `sizes` the median (lower middle) of the same measure
/// over the uninjected wakes `bare`: the clock reads that bound a busy stretch cost CPU
/// time in both, and the account's component, judged less its own uninjected median,
/// holds that cost in both too (a 20 µs stretch measured 22.4 µs here, with a little
/// over 2 µs of it in the uninjected wakes' reads). Nothing comes off where `bare` is
/// empty.
pub fn net_of_uninjected(sizes: &mut [u64], bare: &[u64]) {
    let mut bare = bare.to_vec();
    bare.sort_unstable();
    let Some(&median) = bare.get(bare.len().saturating_sub(1) / 2) else {
        return;
    };
    for s in sizes {
        *s = s.saturating_sub(median);
    }
}

/// The window of a wait by thread `tid` that read the clock at `start_ns`, asked to
/// wake at `deadline_ns` (before `start_ns` too: an overrun) and read it again at
/// `end_ns`; built through `Window::relative`, so fields the window gains keep their
/// defaults.
pub fn window(tid: i32, start_ns: u64, deadline_ns: u64, end_ns: u64) -> Window {
    Window {
        deadline_ns,
        ..Window::relative(tid, start_ns, 0, end_ns)
    }
}

/// One wake of `scenario` by thread `tid`.
fn wake(scenario: Scenario, tid: i32, hog: Option<&FifoHog>) -> anyhow::Result<Measured> {
    let window = |start_ns, deadline_ns, end_ns| window(tid, start_ns, deadline_ns, end_ns);
    let m = match scenario {
        Scenario::Slack(slack_ns) => {
            let start = monotonic_ns();
            let d = grid_deadline(start, GAP_NS, OFFSET_NS);
            sleep_until(d);
            Measured {
                window: window(start, d, monotonic_ns()),
                injected_ns: slack_ns,
                hog: false,
            }
        }
        Scenario::RunQueue(burn_ns) | Scenario::RunQueueOther(burn_ns) => {
            let hog = hog.expect("the run-queue scenario has its FIFO thread");
            let start = monotonic_ns();
            let d = grid_deadline(start, 2 * GAP_NS, OFFSET_NS);
            hog.order(d - HOG_LEAD_NS, d + burn_ns);
            sleep_until(d);
            let end = monotonic_ns();
            let burn = hog.burn()?;
            Measured {
                window: window(start, d, end),
                // The FIFO thread's own clock reads: from the deadline (or from its
                // start, when its wakeup came late) until it stopped, the measuring
                // thread could not run.
                injected_ns: burn.end_ns.saturating_sub(d.max(burn.start_ns)),
                hog: true,
            }
        }
        Scenario::Entry(delay_ns) => {
            let start = monotonic_ns();
            let cpu0 = thread_cpu_ns();
            spin_until(start + delay_ns);
            let cpu1 = thread_cpu_ns();
            sleep_for(GAP_NS);
            Measured {
                window: window(start, start + GAP_NS, monotonic_ns()),
                // The thread's own CPU time over the stretch between the deadline's
                // clock read and the call: a preemption inside it is the run queue's
                // where it reaches past the deadline.
                injected_ns: cpu1 - cpu0,
                hog: false,
            }
        }
        Scenario::Return(busy_ns) => {
            let start = monotonic_ns();
            let d = grid_deadline(start, GAP_NS, OFFSET_NS);
            sleep_until(d);
            let cpu0 = thread_cpu_ns();
            spin_until(monotonic_ns() + busy_ns);
            let cpu1 = thread_cpu_ns();
            Measured {
                window: window(start, d, monotonic_ns()),
                // The thread's own CPU time over the stretch: a preemption inside it
                // is the run queue's, not the return path's.
                injected_ns: cpu1 - cpu0,
                hog: false,
            }
        }
        Scenario::Overrun(over_ns) => {
            let d0 = grid_deadline(monotonic_ns(), GAP_NS, OFFSET_NS);
            sleep_until(d0);
            // The frame's work, from its scheduled start: its period and `over_ns`
            // more, so the next wait begins that far past its deadline.
            let d = d0 + FRAME_NS;
            let start = spin_until(d + over_ns);
            sleep_until(d);
            Measured {
                window: window(start, d, monotonic_ns()),
                injected_ns: start - d,
                hog: false,
            }
        }
    };
    Ok(m)
}
