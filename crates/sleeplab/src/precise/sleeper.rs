//! [`PreciseSleeper`]: the [`Precise`] strategy bundled with its environment and the
//! thread settings it relies on (1 ns timer slack, a short scheduler slice), which follow
//! it to the thread that uses it.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::estimator::MarginEstimator;
use super::precise_strategy::Precise;
use super::sleep_report::{SleepReport, SleepStats};
use super::spin::SpinStrategy;
use super::tradeoff::{SlicePolicy, Tradeoff};
use crate::clock::{Env, RealEnv, duration_ns, instant_to_ns};
use crate::system::{sched_slice_ns, set_sched_slice_ns, set_timer_slack_ns, timer_slack_ns};

/// What a sleeper does with the timer slack of the thread it is built on, and of each
/// other thread it later sleeps on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlackPolicy {
    /// Set it to 1 ns (`prctl(PR_SET_TIMERSLACK, 1)`), the minimum: with the default
    /// 50 µs the kernel may defer every native wakeup by up to 50 µs, which the margin
    /// would then have to cover by spinning. A failure to set it is not an error; the
    /// sleeper reports the slack actually in force.
    #[default]
    SetMinimal,
    /// Do not touch it (virtual environments, or a caller that manages it).
    LeaveAlone,
}

/// Sleeps precisely: a native sleep on an absolute deadline until `deadline − margin`,
/// then a spin to the deadline, with the margin learned online per sleeper (see
/// [`MarginEstimator`]). It never returns before the deadline.
///
/// A sleeper follows the thread that uses it. Timer slack and the scheduler slice
/// ([`SlackPolicy`], [`SlicePolicy`]) are per-thread settings: they are applied to the
/// building thread when the sleeper is built, and again to another thread the first
/// time the sleeper sleeps there (a sleeper moved into a worker thread sets that
/// thread's slack to 1 ns before its first wait), and
/// [`timer_slack_ns`](Self::timer_slack_ns) and [`sched_slice_ns`](Self::sched_slice_ns)
/// then report that thread's. Noticing the move costs a thread-local read per sleep, no
/// system call; the thread it left keeps the settings it was given. The learned margin
/// is kept across a move: it describes the wakeups of the threads it slept on, so one
/// sleeper per thread remains the way to learn each thread's own.
///
/// Generic over [`Env`] so tests and the simulator run this exact code in virtual time
/// (the lab's `VirtualEnv`).
#[derive(Debug)]
pub struct PreciseSleeper<E: Env = RealEnv> {
    pub(super) env: E,
    pub(super) wait: Precise,
    pub(super) thread: ThreadSettings,
}

/// The per-thread settings of a sleeper: its policies, the thread they were last applied
/// to and what was read back there.
#[derive(Debug, Clone, Copy)]
pub(super) struct ThreadSettings {
    slack: SlackPolicy,
    slice: SlicePolicy,
    /// Whether the settings in force are reported where the policies leave them alone
    /// (a sleeper on the real clock).
    report: bool,
    /// [`thread_key`] of the thread they were applied to.
    thread: u64,
    slack_ns: Option<u64>,
    slice_ns: Option<u64>,
}

impl ThreadSettings {
    /// Applies `slack` and `slice` to the calling thread and reads back what is in force.
    /// A refusal (e.g. a seccomp sandbox) is not fatal: what is in force is reported.
    pub(super) fn apply(slack: SlackPolicy, slice: SlicePolicy, report: bool) -> Self {
        let slack_ns = match slack {
            SlackPolicy::SetMinimal => {
                Some(set_timer_slack_ns(1).unwrap_or_else(|_| timer_slack_ns()))
            }
            SlackPolicy::LeaveAlone => report.then(timer_slack_ns),
        };
        let slice_ns = match slice.request_ns() {
            Some(ns) => Some(set_sched_slice_ns(Some(ns)).unwrap_or_else(|_| sched_slice_ns())),
            None => report.then(sched_slice_ns),
        };
        Self {
            slack,
            slice,
            report,
            thread: thread_key(),
            slack_ns,
            slice_ns,
        }
    }

    /// Applies the settings again if the calling thread is not the one they were
    /// applied to.
    fn follow(&mut self) {
        if self.thread != thread_key() {
            *self = Self::apply(self.slack, self.slice, self.report);
        }
    }
}

/// A number for the calling thread, unique in the process for its life: a thread-local
/// read after the first call on a thread (no system call).
fn thread_key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static KEY: Cell<u64> = const { Cell::new(0) };
    }
    KEY.with(|key| match key.get() {
        0 => {
            let k = NEXT.fetch_add(1, Ordering::Relaxed);
            key.set(k);
            k
        }
        k => k,
    })
}

impl PreciseSleeper<RealEnv> {
    /// Sleeps until `deadline` (returns at once if it has passed).
    pub fn sleep_until(&mut self, deadline: Instant) -> SleepReport {
        let ns = instant_to_ns(deadline);
        self.sleep_until_ns(ns)
    }
}

impl<E: Env> PreciseSleeper<E> {
    /// Sleeps for `duration` from now (saturating at `u64::MAX` ns).
    pub fn sleep(&mut self, duration: Duration) -> SleepReport {
        self.sleep_for_ns(duration_ns(duration))
    }

    /// Sleeps for `ns` nanoseconds from now (saturating).
    pub fn sleep_for_ns(&mut self, ns: u64) -> SleepReport {
        let deadline = self.env.now().saturating_add(ns);
        self.sleep_until_ns(deadline)
    }

    /// Sleeps until `deadline` on the environment's time line (for [`RealEnv`],
    /// [`monotonic_ns`](crate::clock::monotonic_ns)). A deadline in the past returns at once.
    /// On a thread the sleeper has not slept on before, its thread settings are applied
    /// there first (see [`PreciseSleeper`]).
    pub fn sleep_until_ns(&mut self, deadline: u64) -> SleepReport {
        self.thread.follow();
        self.wait.wait_until(&mut self.env, deadline)
    }

    /// [`sleep_until_ns`](Self::sleep_until_ns) that gives up after an early return of
    /// the native sleep when `interrupted` says so (`None`: nothing learned).
    pub(crate) fn sleep_until_ns_or(
        &mut self,
        deadline: u64,
        interrupted: impl FnMut(&mut E) -> bool,
    ) -> Option<SleepReport> {
        self.thread.follow();
        self.wait
            .wait_until_or(&mut self.env, deadline, interrupted)
    }

    /// The current time on the environment's clock, ns.
    pub fn now_ns(&mut self) -> u64 {
        self.env.now()
    }

    /// Running statistics: count, mean/max lateness, spin and native totals, stalls.
    pub fn stats(&self) -> SleepStats {
        self.wait.stats()
    }

    /// Clears the running statistics (the learned margin is kept).
    pub fn reset_stats(&mut self) {
        self.wait.reset_stats();
    }

    /// The margin the next sleep will use if it is long (no CPU ceiling applies), ns.
    pub fn margin_ns(&self) -> u64 {
        self.wait.margin_ns()
    }

    /// The margin the next sleep will use with `wait_ns` left to its target, ns.
    pub fn margin_for_ns(&self, wait_ns: u64) -> u64 {
        self.wait.margin_for_ns(wait_ns)
    }

    /// The trade-off between lateness and CPU in force.
    pub fn tradeoff(&self) -> Tradeoff {
        self.wait.tradeoff()
    }

    /// The margin estimator (read-only).
    pub fn estimator(&self) -> &MarginEstimator {
        self.wait.estimator()
    }

    /// How the spin phase waits.
    pub fn spin_strategy(&self) -> SpinStrategy {
        self.wait.spin_strategy()
    }

    /// The timer slack of the thread the sleeper last slept on (until its first sleep,
    /// the building thread's), read right after setting it there under
    /// [`SlackPolicy::SetMinimal`], ns; `None` when a sleeper over a non-real environment
    /// left it alone.
    pub fn timer_slack_ns(&self) -> Option<u64> {
        self.thread.slack_ns
    }

    /// The scheduler slice of the thread the sleeper last slept on (until its first
    /// sleep, the building thread's), read right after requesting the short one there
    /// under [`SlicePolicy::Short`], ns (0: the kernel reports none); `None` when a
    /// sleeper over a non-real environment left it alone.
    pub fn sched_slice_ns(&self) -> Option<u64> {
        self.thread.slice_ns
    }

    /// The underlying strategy.
    pub fn strategy(&self) -> &Precise {
        &self.wait
    }

    /// The environment.
    pub fn env(&self) -> &E {
        &self.env
    }

    /// The environment, mutably (e.g. to inject a stall into the lab's `VirtualEnv`).
    pub fn env_mut(&mut self) -> &mut E {
        &mut self.env
    }

    /// Takes the environment back.
    pub fn into_env(self) -> E {
        self.env
    }
}
