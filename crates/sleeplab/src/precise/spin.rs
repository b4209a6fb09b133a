//! The building blocks every strategy is made of: a native sleep that resumes after early
//! returns, and a spin loop that returns at the first clock read at or after a deadline.

use crate::clock::Env;

/// The fixed native sleep of the seed and SDL strategies: one millisecond, in ns.
pub(crate) const ONE_MS: u64 = 1_000_000;

/// How the final phase of a wait burns its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpinStrategy {
    /// Busy-wait with a pause instruction between clock reads ([`Env::spin_pause`]): the
    /// most precise, keeps the core busy.
    #[default]
    Spin,
    /// Call `sched_yield` between clock reads ([`Env::yield_now`]): lets another runnable
    /// thread on this core go first, at the risk of returning a little later. On an idle
    /// core it costs as much CPU as spinning.
    YieldSpin,
}

/// Spins until the clock reads at or after `deadline`; returns that reading.
#[inline]
pub(crate) fn spin_until<E: Env>(env: &mut E, deadline: u64, strategy: SpinStrategy) -> u64 {
    loop {
        let now = env.now();
        if now >= deadline {
            return now;
        }
        match strategy {
            SpinStrategy::Spin => env.spin_pause(),
            SpinStrategy::YieldSpin => env.yield_now(),
        }
    }
}

/// Absolute native sleep until `target`, sleeping again after early (interrupted)
/// returns; returns the first clock reading at or after `target`.
#[inline]
pub(crate) fn native_sleep_until<E: Env>(env: &mut E, target: u64) -> u64 {
    loop {
        env.sleep_until(target);
        let now = env.now();
        if now >= target {
            return now;
        }
    }
}

/// Relative native sleep of `ns` from `from`, resuming with the remaining time after early
/// returns (what `nanosleep` with its remainder, `std::thread::sleep` and
/// `std::this_thread::sleep_for` do); returns the first reading at or after `from + ns`.
#[inline]
pub(crate) fn native_sleep_for_from<E: Env>(env: &mut E, from: u64, ns: u64) -> u64 {
    let end = from.saturating_add(ns);
    let mut now = from;
    while now < end {
        env.sleep_for(end - now);
        now = env.now();
    }
    now
}
