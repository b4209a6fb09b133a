//! [`ReactorTimer`]: the precise async sleep with one wake per deadline on tokio. One
//! timerfd in the runtime's reactor is armed for the earliest deadline minus a learned
//! margin; the worker parked in `epoll_wait` wakes for it, the timer's dispatch task
//! spins the rest of the margin on that worker and wakes the sleeps that are due, which
//! the same worker then runs. No thread of its own: the kernel's timer wakes the
//! executor directly.
//!
//! [`Plan`] holds the decisions (what to arm, what is due, whether to spin, what to
//! learn) with no clock and no I/O, so they are tested in virtual time.

use super::queue::{Counts, Due, Queue, Slot, lock};
use super::{Sleep, TimerStats};
use crate::clock::{Env, RealEnv, duration_ns, instant_to_ns, monotonic_ns};
use crate::precise::estimator::MarginEstimator;
use crate::precise::spin::{SpinStrategy, spin_until};
use crate::precise::tradeoff::{CpuBudget, Tradeoff};
use crate::sys::TimerFd;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Why a [`ReactorTimer`] could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReactorError {
    /// Not called from inside a tokio runtime.
    #[error("a ReactorTimer is made inside a tokio runtime (none is running on this thread)")]
    NoRuntime,
    /// The timerfd could not be made.
    #[error("{call} for the reactor timer: {source}")]
    Os {
        /// The call that failed.
        call: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The reactor refused the timerfd.
    #[error("registering the reactor timer's timerfd: {0}")]
    Register(std::io::Error),
}

/// A precise async sleep served by the tokio runtime it was made in: the kernel's timer
/// wakes the runtime's own worker, once per distinct deadline (see the module docs of
/// [`asleep`](super)). Cheap to clone; its dispatch task ends when the last clone and
/// the last [`Sleep`] it made are gone.
///
/// What it costs against [`AsyncTimer`](super::AsyncTimer): its margin is spun on the
/// executor's thread (the dispatch task holds that worker for up to the margin, at most
/// its CPU budget of each wait, 1 % by default), and it serves one runtime's reactor.
/// What it saves: no timer thread and no wake of a worker from outside the runtime
/// (which on tokio's multi-thread runtime wakes a second worker too).
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
        let _ = self.state.timerfd.set(true, 1, 0);
    }
}

/// What the sleeps and the dispatch task share.
#[derive(Debug)]
struct State {
    plan: Mutex<Plan>,
    timerfd: TimerFd,
    counts: Counts,
    /// Time the dispatch task spun, ns.
    spun_ns: AtomicU64,
    shutdown: AtomicBool,
}

/// The timerfd, as the reactor registers it.
struct Fd(Arc<State>);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.timerfd.fd()
    }
}

impl State {
    /// A fresh state whose spin may take `percent` % of each wait, with its timerfd.
    fn new(percent: f64) -> Result<Self, ReactorError> {
        Ok(Self {
            plan: Mutex::new(Plan::new(Tradeoff {
                cpu_budget: CpuBudget::Percent(percent),
                ..Tradeoff::default()
            })),
            timerfd: TimerFd::new(true).map_err(|e| ReactorError::Os {
                call: e.call,
                source: e.source,
            })?,
            counts: Counts::default(),
            spun_ns: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
        })
    }

    /// Arms the timerfd to fire at `fire_ns` (absolute), or disarms it. Called under
    /// the plan's lock, so arms land in the order they were decided.
    fn arm(&self, fire_ns: Option<u64>) {
        // A failed settime leaves the earlier setting: the dispatch task re-arms at its
        // next wake, and no sleep is ever early (they are fired by the clock, not the fd).
        let _ = match fire_ns {
            Some(t) => self.timerfd.set(true, t.max(1), 0),
            None => self.timerfd.set(false, 0, 0),
        };
    }
}

impl ReactorTimer {
    /// The default share of each wait its dispatch task may spin, percent.
    pub const DEFAULT_CPU_BUDGET_PERCENT: f64 = 1.0;

    /// A timer on the current tokio runtime, spinning at most
    /// [`DEFAULT_CPU_BUDGET_PERCENT`](Self::DEFAULT_CPU_BUDGET_PERCENT) of each wait.
    ///
    /// # Panics
    /// If the runtime was built without I/O (`enable_io`), as tokio's own I/O types do.
    pub fn new() -> Result<Self, ReactorError> {
        Self::with_cpu_budget_percent(Self::DEFAULT_CPU_BUDGET_PERCENT)
    }

    /// A timer on the current tokio runtime whose dispatch task spins at most `percent`
    /// (0–100) of each wait.
    ///
    /// # Panics
    /// If the runtime was built without I/O (`enable_io`).
    pub fn with_cpu_budget_percent(percent: f64) -> Result<Self, ReactorError> {
        let rt = tokio::runtime::Handle::try_current().map_err(|_| ReactorError::NoRuntime)?;
        let state = Arc::new(State::new(percent)?);
        let fd = {
            let _in = rt.enter();
            // SAFETY: the descriptor is the state's timerfd, which the `Fd` keeps open
            // (it holds the state) and which is never replaced, for the AsyncFd's life.
            unsafe { AsyncFd::register_with_interest(Fd(Arc::clone(&state)), Interest::READABLE) }
                .map_err(|e| ReactorError::Register(std::io::Error::other(e.to_string())))?
        };
        rt.spawn(dispatch(fd));
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

    /// Queues `slot` for `deadline_ns`, arming the timerfd when it comes first.
    pub(super) fn register(&self, deadline_ns: u64, slot: Arc<Slot>) {
        let s = &self.handle.state;
        let mut plan = lock(&s.plan);
        if let Some(fire) = plan.register(monotonic_ns(), deadline_ns, slot) {
            s.arm(Some(fire));
        }
    }

    /// A registered sleep was dropped before it fired.
    pub(super) fn note_cancelled(&self) {
        lock(&self.handle.state.plan).queue.note_cancelled();
    }
}

/// The dispatch task: each time the timerfd is readable, one [`turn`].
async fn dispatch(fd: AsyncFd<Fd>) {
    let state = Arc::clone(&fd.get_ref().0);
    loop {
        let Ok(mut ready) = fd.readable().await else {
            return;
        };
        // Reads the expiry (a second read finds none), then waits for the next edge.
        while let Ok(Some(_)) = state.timerfd.read() {}
        ready.clear_ready();
        if state.shutdown.load(Ordering::Acquire) {
            return;
        }
        turn(&state, &mut RealEnv);
    }
}

/// One wake of the dispatch task: fire what is due (spinning first to a deadline within
/// the margin it armed for), wake it outside the lock, arm for the earliest left.
fn turn<E: Env>(state: &State, env: &mut E) {
    let mut due = Due::default();
    let step = lock(&state.plan).wake(env.now(), &mut due, &state.counts);
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
    let fire = plan.rearm(env.now());
    state.arm(fire);
}

/// What a wake of the dispatch task does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// It fired sleeps (or none is near): wake them and re-arm.
    Done,
    /// None was due yet, and the earliest deadline is within the margin armed for it:
    /// spin to it, then fire.
    SpinTo(u64),
}

/// The deadline the timerfd is armed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Armed {
    /// The sleep's deadline, ns.
    pub(crate) deadline_ns: u64,
    /// When the timerfd fires: the deadline minus the margin, ns.
    pub(crate) fire_ns: u64,
    /// The clock when it was armed, ns (a fire time already past fires at once: its
    /// wake is late only from here).
    pub(crate) set_ns: u64,
}

/// The reactor timer's decisions, with no clock and no I/O.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) queue: Queue,
    estimator: MarginEstimator,
    tradeoff: Tradeoff,
    /// What the timerfd is armed for (`None`: disarmed, or fired and not re-armed).
    pub(crate) armed: Option<Armed>,
}

impl Plan {
    pub(crate) fn new(tradeoff: Tradeoff) -> Self {
        Self {
            queue: Queue::default(),
            estimator: MarginEstimator::default(),
            tradeoff,
            armed: None,
        }
    }

    /// The margin for a deadline `wait_ns` away: the estimator's, bounded by the budget.
    pub(crate) fn margin_ns(&self, wait_ns: u64) -> u64 {
        self.tradeoff
            .margin_ns(&self.estimator, wait_ns)
            .min(wait_ns)
    }

    fn arm_for(&mut self, now_ns: u64, deadline_ns: u64) -> u64 {
        let fire_ns = deadline_ns - self.margin_ns(deadline_ns.saturating_sub(now_ns));
        self.armed = Some(Armed {
            deadline_ns,
            fire_ns,
            set_ns: now_ns,
        });
        fire_ns
    }

    /// Queues a sleep at `now_ns`; the time to arm the timerfd for when it comes before
    /// the deadline armed (or nothing is armed).
    pub(crate) fn register(
        &mut self,
        now_ns: u64,
        deadline_ns: u64,
        slot: Arc<Slot>,
    ) -> Option<u64> {
        self.queue.push(deadline_ns, slot);
        match self.armed {
            Some(a) if a.deadline_ns <= deadline_ns => None,
            _ => Some(self.arm_for(now_ns, deadline_ns)),
        }
    }

    /// The dispatch task woke at `now_ns`: learns how late the wake came after the fire
    /// time armed (the kernel's and the executor's delay, which the margin covers), fires
    /// what is due into `due`, and says whether to spin to the next deadline first.
    pub(crate) fn wake(&mut self, now_ns: u64, due: &mut Due, counts: &Counts) -> Step {
        let armed = self.armed.take();
        if let Some(a) = armed.filter(|a| now_ns >= a.fire_ns) {
            // Never negative: the fire time is past and the arming was before now.
            self.estimator.observe(now_ns - a.fire_ns.max(a.set_ns));
        }
        self.queue.take_due(now_ns, due, counts);
        match (armed, due.next_ns) {
            (Some(a), Some(next))
                if due.wakers.is_empty() && next == a.deadline_ns && now_ns >= a.fire_ns =>
            {
                Step::SpinTo(next)
            }
            _ => Step::Done,
        }
    }

    /// After a wake at `now_ns`: the time to arm the timerfd for the earliest deadline
    /// left (`None`: nothing is queued; disarm).
    pub(crate) fn rearm(&mut self, now_ns: u64) -> Option<u64> {
        match self.queue.next_ns() {
            Some(next) => Some(self.arm_for(now_ns, next)),
            None => {
                self.armed = None;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
