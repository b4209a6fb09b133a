//! The common interface of every wait strategy.

use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::precise_strategy::Precise;

/// A way of waiting until a deadline, written once and run over any [`Env`]: the real
/// machine ([`RealEnv`](crate::clock::RealEnv)) or a virtual clock (the tests' and the
/// simulator's [`VirtualEnv`](super::VirtualEnv)).
///
/// Implementations in this module never return before the deadline: they re-read the
/// clock after every native wakeup, whether or not a signal cut it short. A strategy may
/// keep learned state between calls (the seed's Welford estimate, our margin); build a
/// fresh one to start over.
pub trait WaitStrategy<E: Env> {
    /// The registry name, e.g. `"precise"`.
    fn name(&self) -> &'static str;

    /// Waits until `deadline` (ns on `env`'s time line) and reports how it went.
    /// A deadline in the past returns at once.
    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport;

    /// The scheduler slice this strategy asks for on the thread that waits, ns
    /// (see [`set_sched_slice_ns`](crate::system::set_sched_slice_ns)); `None`, the
    /// default: the kernel's. A harness running several strategies on one thread applies
    /// it before each one's turn.
    fn sched_slice_ns(&self) -> Option<u64> {
        None
    }

    /// CPU time spent on this strategy's behalf so far by threads other than the one
    /// that waits (an async runtime's workers, a timer thread), ns; 0, the default, for
    /// a strategy that does everything on the waiting thread. A harness adds what it
    /// grew by to the waiting thread's own CPU.
    fn helper_cpu_ns(&self) -> u64 {
        0
    }

    /// Waits for `ns` from now (saturating at `u64::MAX`).
    fn sleep_for(&mut self, env: &mut E, ns: u64) -> SleepReport {
        let deadline = env.now().saturating_add(ns);
        self.sleep_until(env, deadline)
    }
}

/// The sleeper's algorithm as a strategy, beside the ones it is measured against.
impl<E: Env> WaitStrategy<E> for Precise {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        self.wait_until(env, deadline)
    }

    fn sched_slice_ns(&self) -> Option<u64> {
        self.tradeoff().slice.request_ns()
    }
}
