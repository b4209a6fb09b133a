//! [`ReactorTimer`]: the precise async sleep with one wake per deadline on tokio. Two
//! timerfds in the runtime's reactor are armed for the two earliest deadlines, each
//! minus a learned margin; the worker parked in `epoll_wait` wakes for the first, the
//! timer's dispatch task spins the rest of the margin on that worker and wakes the
//! sleeps that are due, which the same worker then runs. No thread of its own: the
//! kernel's timer wakes the executor directly.
//!
//! `plan.rs` holds the decisions (what to arm, what is due, whether to spin, what to
//! learn) with no clock and no I/O, so they are tested in virtual time.

mod interval;
mod plan;

pub use interval::{IntervalStats, IntervalTick, ReactorInterval};

use super::queue::{Counts, Due, Slot, lock};
use super::{Sleep, TimerStats};
use crate::clock::{Env, RealEnv, duration_ns, instant_to_ns, monotonic_ns};
use crate::precise::options::{OptionError, OptionValue, SleeperOption};
use crate::precise::spin::{SpinStrategy, spin_until};
use crate::precise::ticker::TickerError;
use crate::precise::tradeoff::{CpuBudget, Tradeoff};
use crate::sys::TimerFd;
use plan::{FDS, Plan, Step};
use std::os::fd::{AsRawFd, RawFd};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Why a [`ReactorTimer`] or a [`ReactorInterval`] could not be made.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReactorError {
    /// Not called from inside a tokio runtime.
    #[error("a {what} is made inside a tokio runtime (none is running on this thread)")]
    NoRuntime {
        /// The type that was being made: `ReactorTimer` or `ReactorInterval`.
        what: &'static str,
    },
    /// The runtime was built without its I/O driver, whose reactor the timerfds wait in.
    #[error(
        "a {what} waits in the tokio runtime's reactor, and this runtime was built without I/O: \
         call `enable_io` (or `enable_all`) on its builder"
    )]
    IoDisabled {
        /// The type that was being made: `ReactorTimer` or `ReactorInterval`.
        what: &'static str,
    },
    /// A zero period (a [`ReactorInterval`]'s), refused as a [`Ticker`](crate::precise::Ticker)
    /// refuses it.
    #[error(transparent)]
    Period(#[from] TickerError),
    /// A CPU budget out of its range (0–100 %), refused as the sleeper's option
    /// `cpu_budget` is.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// A timerfd could not be made.
    #[error("{call} for the reactor timer: {source}")]
    Os {
        /// The call that failed.
        call: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The reactor refused a timerfd.
    #[error("registering a timerfd of the reactor timer: {0}")]
    Register(std::io::Error),
}

/// The current tokio runtime, or [`ReactorError::NoRuntime`] naming `what`.
fn current_runtime(what: &'static str) -> Result<tokio::runtime::Handle, ReactorError> {
    tokio::runtime::Handle::try_current().map_err(|_| ReactorError::NoRuntime { what })
}

/// `percent` as a CPU budget, if the sleeper's option `cpu_budget` takes it (0–100).
fn budget(percent: f64) -> Result<CpuBudget, ReactorError> {
    let value = OptionValue::Budget(CpuBudget::Percent(percent));
    SleeperOption::named("cpu_budget")?.check(value)?;
    Ok(CpuBudget::Percent(percent))
}

/// Registers `fd` for readiness in the reactor of `rt`.
///
/// tokio panics, rather than returning an error, when a runtime built without I/O is asked
/// to register a descriptor; that panic (and only it) is caught here and returned as
/// [`ReactorError::IoDisabled`]. The panic hook still runs (by default it prints tokio's
/// message); with `panic = "abort"` the process aborts, as with tokio's own I/O types.
///
/// # Safety
/// `fd`'s descriptor stays open, and is not replaced, for the returned `AsyncFd`'s life.
unsafe fn register<T: AsRawFd>(
    rt: &tokio::runtime::Handle,
    fd: T,
    what: &'static str,
) -> Result<AsyncFd<T>, ReactorError> {
    let _in = rt.enter();
    // SAFETY: the caller keeps the descriptor open for the AsyncFd's life. Unwind safety:
    // tokio panics before it registers anything, and `fd` is dropped with the panic.
    let registered = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe {
        AsyncFd::register_with_interest(fd, Interest::READABLE)
    }));
    match registered {
        Ok(Ok(fd)) => Ok(fd),
        Ok(Err(e)) => Err(ReactorError::Register(std::io::Error::other(e.to_string()))),
        Err(panic) if is_io_disabled(panic.as_ref()) => Err(ReactorError::IoDisabled { what }),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Whether a panic's payload is tokio's "IO is disabled".
fn is_io_disabled(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.contains("IO is disabled")
}

/// A precise async sleep served by the tokio runtime it was made in: the kernel's timer
/// wakes the runtime's own worker, once per distinct deadline (see the module docs of
/// [`asleep`](super)). Cheap to clone; its dispatch task ends when the last clone and
/// the last [`Sleep`] it made are gone.
///
/// What it costs against [`AsyncTimer`](super::AsyncTimer): its margin is spun on the
/// executor's thread (the dispatch task holds that worker for up to the margin, at most
/// the CPU budget's share, 1 % by default, of the time from arming a timerfd to its
/// deadline; a timerfd is armed up to two deadlines ahead, so with deadlines evenly
/// spaced the spin may take up to twice that share of the time between them), and it
/// serves one runtime's reactor: its sleeps fire only while that runtime runs its
/// dispatch task (a current-thread runtime, only inside `block_on`). What it saves: no
/// timer thread and no wake of a worker from outside the runtime (which on tokio's
/// multi-thread runtime wakes a second worker too).
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug, Clone)]
pub struct ReactorTimer {
    handle: Arc<Handle>,
}

/// Ends the dispatch task when the last user is gone.
#[derive(Debug)]
struct Handle {
    state: Arc<State>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.state.shutdown.store(true, Ordering::Release);
        // Fires at once: the dispatch task wakes, sees the shutdown and ends.
        let _ = self.state.timerfds[0].set(true, 1, 0);
    }
}

/// What the sleeps and the dispatch task share.
#[derive(Debug)]
struct State {
    plan: Mutex<Plan>,
    timerfds: [TimerFd; FDS],
    counts: Counts,
    /// Time the dispatch task spun, ns.
    spun_ns: AtomicU64,
    shutdown: AtomicBool,
}

/// One of the timerfds, as the reactor registers it.
struct Fd(Arc<State>, usize);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.timerfds[self.1].fd()
    }
}

impl State {
    /// A fresh state whose spin may take `cpu_budget` of each wait, with its timerfds.
    fn new(cpu_budget: CpuBudget) -> Result<Self, ReactorError> {
        let timerfd = || {
            TimerFd::new(true).map_err(|e| ReactorError::Os {
                call: e.call,
                source: e.source,
            })
        };
        Ok(Self {
            plan: Mutex::new(Plan::new(Tradeoff {
                cpu_budget,
                ..Tradeoff::default()
            })),
            timerfds: [timerfd()?, timerfd()?],
            counts: Counts::default(),
            spun_ns: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
        })
    }

    /// Applies the plan's changes to the timerfds. Called under the plan's lock, so
    /// arms land in the order they were decided.
    fn apply(&self, changes: plan::Changes) {
        for (fd, change) in self.timerfds.iter().zip(changes) {
            // A failed settime leaves the earlier setting: the dispatch task re-arms at
            // its next wake, and no sleep is ever early (the clock fires them, not a fd).
            let _ = match change {
                Some(Some(t)) => fd.set(true, t.max(1), 0),
                Some(None) => fd.set(false, 0, 0),
                None => Ok(()),
            };
        }
    }
}

impl ReactorTimer {
    /// The default share of each wait its dispatch task may spin, percent.
    pub const DEFAULT_CPU_BUDGET_PERCENT: f64 = 1.0;

    /// A timer on the current tokio runtime, spinning at most
    /// [`DEFAULT_CPU_BUDGET_PERCENT`](Self::DEFAULT_CPU_BUDGET_PERCENT) of each wait.
    ///
    /// # Errors
    /// [`ReactorError::NoRuntime`] outside a tokio runtime, [`ReactorError::IoDisabled`] on
    /// a runtime built without I/O (`enable_io`), or the system's refusal of a timerfd.
    pub fn new() -> Result<Self, ReactorError> {
        Self::with_cpu_budget_percent(Self::DEFAULT_CPU_BUDGET_PERCENT)
    }

    /// A timer on the current tokio runtime whose dispatch task spins at most `percent`
    /// (0–100) of the time from arming a timerfd to its deadline.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`ReactorError::Option`] for a `percent` out of 0–100
    /// (the sleeper's `cpu_budget` refusal).
    pub fn with_cpu_budget_percent(percent: f64) -> Result<Self, ReactorError> {
        const WHAT: &str = "ReactorTimer";
        let cpu_budget = budget(percent)?;
        let rt = current_runtime(WHAT)?;
        let state = Arc::new(State::new(cpu_budget)?);
        let register = |i| {
            // SAFETY: the descriptor is one of the state's timerfds, which the `Fd` keeps
            // open (it holds the state) and which is never replaced, for the AsyncFd's life.
            unsafe { register(&rt, Fd(Arc::clone(&state), i), WHAT) }
        };
        let fds = [register(0)?, register(1)?];
        rt.spawn(dispatch(fds));
        Ok(Self {
            handle: Arc::new(Handle { state }),
        })
    }

    /// A sleep that ends at `deadline` (at once if it has passed).
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        self.sleep_until_ns(instant_to_ns(deadline))
    }

    /// A sleep that ends `duration` from now.
    pub fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until_ns(monotonic_ns().saturating_add(duration_ns(duration)))
    }

    /// A sleep that ends at `deadline_ns` on [`monotonic_ns`]'s time line.
    pub fn sleep_until_ns(&self, deadline_ns: u64) -> Sleep {
        Sleep::new(deadline_ns, super::Backend::Reactor(self.clone()))
    }

    /// The counts so far; `cpu_ns` is the time its dispatch task spun on the executor's
    /// threads (the wakes themselves are the executor's).
    pub fn stats(&self) -> TimerStats {
        let s = &self.handle.state;
        s.counts
            .stats(lock(&s.plan).queue.len(), s.spun_ns.load(Ordering::Relaxed))
    }

    /// Queues `slot` for `deadline_ns`, arming a timerfd for it when it is among the
    /// two earliest deadlines.
    pub(super) fn register(&self, deadline_ns: u64, slot: Arc<Slot>) {
        let s = &self.handle.state;
        let mut plan = lock(&s.plan);
        s.apply(plan.register(monotonic_ns(), deadline_ns, slot));
    }

    /// A registered sleep was dropped before it fired.
    pub(super) fn note_cancelled(&self) {
        lock(&self.handle.state.plan).queue.note_cancelled();
    }
}

/// The dispatch task: each time one of the timerfds is readable, one [`turn`].
async fn dispatch(fds: [AsyncFd<Fd>; FDS]) {
    let state = Arc::clone(&fds[0].get_ref().0);
    loop {
        let ready = std::future::poll_fn(|cx| {
            for (i, fd) in fds.iter().enumerate() {
                if let Poll::Ready(r) = fd.poll_read_ready(cx) {
                    return Poll::Ready(r.map(|guard| (i, guard)));
                }
            }
            Poll::Pending
        });
        let Ok((i, mut guard)) = ready.await else {
            return;
        };
        // One read takes every expiry so far. Readiness is cleared even after a read
        // that found one: an expiry after it comes with an edge of its own (tokio keeps
        // readiness that arrived since this guard was made), so no second read, which
        // would only find nothing, is needed.
        let _ = state.timerfds[i].read();
        guard.clear_ready();
        if state.shutdown.load(Ordering::Acquire) {
            return;
        }
        turn(&state, i, &mut RealEnv);
    }
}

/// One wake of the dispatch task by timerfd `fd`: fire what is due (spinning first to
/// the deadline it was armed for when that is within its margin), wake it outside the
/// lock, arm for the earliest deadlines left.
fn turn<E: Env>(state: &State, fd: usize, env: &mut E) {
    let mut due = Due::default();
    let step = lock(&state.plan).wake(fd, env.now(), &mut due, &state.counts);
    if let Step::SpinTo(deadline) = step {
        let from = env.now();
        let spun = spin_until(env, from, deadline, SpinStrategy::Spin);
        state
            .spun_ns
            .fetch_add(spun.woke.saturating_sub(from), Ordering::Relaxed);
        lock(&state.plan)
            .queue
            .take_due(spun.woke, &mut due, &state.counts);
    }
    for w in due.wakers.drain(..) {
        w.wake();
    }
    let mut plan = lock(&state.plan);
    let changes = plan.rearm(env.now());
    state.apply(changes);
}

#[cfg(test)]
mod tests;
