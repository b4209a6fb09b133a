//! Waiting from Python: the GIL released, Ctrl-C honoured, never early.
//!
//! The library's precise sleep resumes after every signal toward the same deadline, so a
//! single call could not be interrupted by Ctrl-C. A long wait is therefore cut into
//! coarse native sleeps of at most [`SLICE_NS`], each with the GIL released, and between
//! them the pending signals are handled with the GIL held (`PyErr_CheckSignals`: Python's
//! handlers run, and the default SIGINT handler raises `KeyboardInterrupt`, which ends the
//! wait). The last stretch (at most one slice) is the library's precise sleep, run on a
//! [`GilEnv`]: the GIL is released around its native sleep only and held through its
//! final spin, so taking the GIL back happens inside the margin, before the deadline,
//! instead of on the way back after it; shortly before the deadline the spin warms the
//! way back into Python (see [`warm`]). So a wait either reaches its deadline or raises;
//! it never returns early.

use pyo3::prelude::*;

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::precise::{PreciseSleeper, PreciseSleeperBuilder};

use crate::warm;

/// The longest native sleep between two signal checks: Ctrl-C is seen within about
/// this long. 20 wakeups a second cost nothing measurable, and the precise phase
/// (margin ≤ the estimator's cap, 50 ms by default) always fits in the last slice.
pub(crate) const SLICE_NS: u64 = 50_000_000;

/// The real clock (`CLOCK_MONOTONIC`, `clock_nanosleep`) for sleepers called with the
/// GIL held: each native sleep (and each yield of the yield spin) releases the GIL and
/// takes it back before returning; the busy spin keeps it. The precise phase spins for
/// at most its margin (under a millisecond at 60 Hz by default, below Python's 5 ms
/// switch interval), and when another thread holds the GIL at the native wake, waiting
/// for it uses up margin instead of adding lateness after the deadline.
///
/// Called without the GIL (it is not, in this crate), `Python::attach` would take it
/// first: still correct, only slower.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct GilEnv;

impl Env for GilEnv {
    /// Warms the way back into Python once the armed instant comes (see [`warm`]).
    #[inline]
    fn now(&mut self) -> u64 {
        warm::on_read(monotonic_ns())
    }

    fn sleep_until(&mut self, deadline: u64) {
        Python::attach(|py| py.detach(|| RealEnv.sleep_until(deadline)));
    }

    fn sleep_for(&mut self, ns: u64) {
        Python::attach(|py| py.detach(|| RealEnv.sleep_for(ns)));
    }

    #[inline]
    fn spin_pause(&mut self) {
        RealEnv.spin_pause();
    }

    fn yield_now(&mut self) {
        // A yield lets other threads run: Python threads too.
        Python::attach(|py| py.detach(|| RealEnv.yield_now()));
    }

    fn run_queue_ns(&mut self) -> Option<u64> {
        RealEnv.run_queue_ns()
    }
}

/// A sleeper on [`GilEnv`] from `builder`, with the building thread's timer slack read
/// after building whatever the slack policy (as `PreciseSleeperBuilder::build` reports it).
pub(crate) fn build_sleeper(builder: PreciseSleeperBuilder) -> (PreciseSleeper<GilEnv>, u64) {
    let sleeper = builder
        .build_with_env(GilEnv)
        .expect("Options::from_kwargs validated the options");
    let slack = sleeper
        .timer_slack_ns()
        .unwrap_or_else(sleeplab::system::timer_slack_ns);
    (sleeper, slack)
}

/// Waits until `deadline` (ns on `CLOCK_MONOTONIC`): coarse slices with the GIL released
/// while more than [`SLICE_NS`] remains, then `finish` (the precise sleep to `deadline`
/// on a [`GilEnv`] sleeper, which it must do itself) with the GIL held; signals are
/// checked after every slice and after `finish`. Returns what `finish` returned, or the
/// exception a signal handler raised.
pub(crate) fn wait_then<T, F>(py: Python<'_>, deadline: u64, finish: F) -> PyResult<T>
where
    F: FnOnce() -> T,
{
    loop {
        let now = monotonic_ns();
        if deadline.saturating_sub(now) <= SLICE_NS {
            break;
        }
        // Leave at least one slice for the precise phase.
        let target = now.saturating_add(SLICE_NS).min(deadline - SLICE_NS);
        // An absolute sleep: a signal makes it return early, which is what we want here.
        py.detach(|| RealEnv.sleep_until(target));
        py.check_signals()?;
    }
    warm::arm(deadline);
    let out = finish();
    if let Some(raised) = warm::disarm() {
        return Err(raised);
    }
    py.check_signals()?;
    Ok(out)
}
