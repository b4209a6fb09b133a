//! Waiting from Python: the GIL released, Ctrl-C honoured, never early.
//!
//! The library's precise sleep resumes after every signal toward the same deadline, so a
//! single call could not be interrupted by Ctrl-C. A long wait is therefore cut into
//! coarse native sleeps of at most [`SLICE_NS`], each with the GIL released, and between
//! them the pending signals are handled with the GIL held (`PyErr_CheckSignals`: Python's
//! handlers run, and the default SIGINT handler raises `KeyboardInterrupt`, which ends the
//! wait). The last stretch (at most one slice) is the library's precise sleep. So a wait
//! either reaches its deadline or raises; it never returns early.

use pyo3::prelude::*;

use sleeplab::clock::{Env, RealEnv, monotonic_ns};

/// The longest native sleep between two signal checks: Ctrl-C is seen within about
/// this long. 20 wakeups a second cost nothing measurable, and the precise phase
/// (margin ≤ the estimator's cap, 50 ms by default) always fits in the last slice.
pub(crate) const SLICE_NS: u64 = 50_000_000;

/// Waits until `deadline` (ns on `CLOCK_MONOTONIC`): coarse slices while more than
/// [`SLICE_NS`] remains, then `finish` (the precise sleep to `deadline`, which it must
/// do itself), all with the GIL released; signals are checked after every slice and
/// after `finish`. Returns what `finish` returned, or the exception a signal handler
/// raised.
pub(crate) fn wait_then<T, F>(py: Python<'_>, deadline: u64, finish: F) -> PyResult<T>
where
    F: FnOnce() -> T + Send,
    T: Send,
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
    let out = py.detach(finish);
    py.check_signals()?;
    Ok(out)
}
