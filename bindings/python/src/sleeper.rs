//! `PreciseSleeper` and the module-level `sleep`, `sleep_until`, `sleep_until_ns` (one
//! lazily built sleeper per thread).

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use sleeplab::clock::monotonic_ns;
use sleeplab::precise::{PreciseSleeper, PreciseSleeperBuilder, SleepReport};

use crate::duration::{deadline_after, deadline_at, ns_to_seconds};
use crate::options::Options;
use crate::owner::Owned;
use crate::report::{PySleepReport, PySleepStats};
use crate::wait::{GilEnv, build_sleeper, wait_then};

/// The sleepers of this module: on the real clock, called with the GIL held.
type Sleeper = PreciseSleeper<GilEnv>;

/// A sleeper with the default options (sets this thread's timer slack to 1 ns).
fn default_sleeper() -> Sleeper {
    PreciseSleeperBuilder::default()
        .build_with_env(GilEnv)
        .expect("the default options are in range")
}

/// The sleeper behind the module-level functions and the report of its last wait.
struct ThreadSleeper {
    sleeper: Sleeper,
    last: Option<SleepReport>,
}

thread_local! {
    /// The sleeper behind the module-level functions, one per thread (timer slack and
    /// the learned margin are per thread).
    static THREAD_SLEEPER: RefCell<Option<ThreadSleeper>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's sleeper, building it on first use (which sets this thread's
/// timer slack to 1 ns).
pub(crate) fn with_thread_sleeper<R>(f: impl FnOnce(&mut Sleeper) -> R) -> R {
    THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            let t = slot.get_or_insert_with(|| ThreadSleeper {
                sleeper: default_sleeper(),
                last: None,
            });
            f(&mut t.sleeper)
        }
        // A signal handler that the wait's warm-up ran (see `warm`) waits on this thread:
        // it gets a sleeper of its own; never a panic.
        Err(_) => f(&mut default_sleeper()),
    })
}

/// Notes `report` as this thread's last module-level wait (kept only once the thread's
/// sleeper exists, which every wait that reports has built).
fn set_thread_last(report: SleepReport) {
    THREAD_SLEEPER.with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut()
            && let Some(t) = slot.as_mut()
        {
            t.last = Some(report);
        }
    });
}

/// Waits until `deadline` on `sleeper` (see `wait::wait_then`) and reports the whole
/// wait, coarse slices included, from `start`.
fn sleep_until_on(
    py: Python<'_>,
    start: u64,
    deadline: u64,
    precise: impl FnOnce(u64) -> SleepReport,
) -> PyResult<SleepReport> {
    let last = wait_then(py, deadline, move || precise(deadline))?;
    let start = start.min(last.start_ns);
    let native_end = last.start_ns + last.native_ns;
    Ok(SleepReport::from_instants(
        start,
        deadline,
        native_end,
        last.woke_ns,
        last.native_oversleep_ns,
        last.margin_ns,
    )
    .with_spin_gap(last.max_spin_gap_ns)
    .with_wanted_margin(last.wanted_margin_ns, last.budget_limited))
}

/// Waits until `deadline` on this thread's sleeper and keeps the report for
/// `last_report()`. Keeping it costs a thread-local store (tens of ns) on the way back.
fn thread_sleep_until(py: Python<'_>, start: u64, deadline: u64) -> PyResult<()> {
    let report = sleep_until_on(py, start, deadline, |d| {
        with_thread_sleeper(|s| s.sleep_until_ns(d))
    })?;
    set_thread_last(report);
    Ok(())
}

/// Sleeps `seconds` precisely, never returning early (a native sleep to the deadline
/// minus a learned margin, then a short spin). Releases the GIL while waiting; Ctrl-C
/// raises KeyboardInterrupt within about 50 ms. Raises ValueError for negative, NaN or
/// infinite lengths. Uses one sleeper per thread, which sets that thread's timer slack
/// to 1 ns on first use.
#[pyfunction]
pub(crate) fn sleep(py: Python<'_>, seconds: f64) -> PyResult<()> {
    let start = monotonic_ns();
    let deadline = deadline_after(seconds)?;
    thread_sleep_until(py, start, deadline)
}

/// Sleeps until `t`, a time on `time.monotonic()`'s clock in seconds (CLOCK_MONOTONIC;
/// rounded up to the nanosecond). A time in the past returns at once. Otherwise as
/// `sleep`.
#[pyfunction]
pub(crate) fn sleep_until(py: Python<'_>, t: f64) -> PyResult<()> {
    sleep_until_ns(py, deadline_at(t)?)
}

/// Sleeps until `deadline_ns` on `time.monotonic_ns()`'s clock (exact integers).
/// Otherwise as `sleep_until`.
#[pyfunction]
pub(crate) fn sleep_until_ns(py: Python<'_>, deadline_ns: u64) -> PyResult<()> {
    thread_sleep_until(py, monotonic_ns(), deadline_ns)
}

/// The SleepReport of this thread's last `sleep`, `sleep_until` or `sleep_until_ns`
/// (None before the first): the margin it planned, its native oversleep, its spin, its
/// own wake reading (compare with a `time.monotonic_ns()` read after the call to see the
/// return path). Interrupted waits leave the previous report.
#[pyfunction]
pub(crate) fn last_report() -> Option<PySleepReport> {
    THREAD_SLEEPER.with(|cell| {
        cell.try_borrow()
            .ok()
            .and_then(|slot| slot.as_ref().and_then(|t| t.last))
            .map(PySleepReport::from)
    })
}

/// `seconds` as the nanoseconds `sleep` would wait (rounded up), with its errors. Used
/// by `asleep`.
#[pyfunction]
pub(crate) fn _duration_ns(seconds: f64) -> PyResult<u64> {
    crate::duration::seconds_to_ns(seconds, "sleep length")
}

/// `t`, seconds on `time.monotonic()`'s clock, as the deadline `sleep_until` would wait
/// for, ns (rounded up; a time in the past is itself, at least 0), with its errors. Used
/// by `asleep_until`.
#[pyfunction]
pub(crate) fn _deadline_ns(t: f64) -> PyResult<u64> {
    deadline_at(t)
}

/// Benchmark helper: `n` zero-length sleeps on this thread's sleeper called directly in
/// Rust (no Python in the loop); returns the total ns. The baseline against which the
/// binding's per-call overhead is measured.
#[pyfunction]
pub(crate) fn _direct_zero_sleeps_ns(n: u64) -> u64 {
    // With the GIL held, as the binding's own precise phase runs.
    with_thread_sleeper(|s| {
        let t0 = monotonic_ns();
        for _ in 0..n {
            std::hint::black_box(s.sleep_for_ns(std::hint::black_box(0)));
        }
        monotonic_ns() - t0
    })
}

/// A precise sleeper with its own learned margin and statistics.
///
/// PreciseSleeper(**options): the options are the Rust library's option table
/// (sleeplab.OPTIONS, defaults in sleeplab.DEFAULTS); durations in seconds or as a
/// string such as "250us"; cpu_budget is "auto", "none" (unlimited) or a percentage of
/// each wait; out-of-range values raise ValueError, as they fail in C and Rust.
/// Building it applies timer_slack and sched_slice to the calling thread, which owns it:
/// a call from any other thread raises RuntimeError, as the C library refuses it. The
/// GIL is released during the native sleep and held through the final spin (at most the
/// margin).
#[pyclass(name = "PreciseSleeper", module = "sleeplab._sleeplab", frozen)]
pub(crate) struct PySleeper {
    state: Owned<SleeperState>,
}

/// What a `PreciseSleeper` holds.
struct SleeperState {
    inner: Sleeper,
    slack_ns: u64,
}

#[pymethods]
impl PySleeper {
    #[new]
    #[pyo3(signature = (**options))]
    fn new(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let options = Options::from_kwargs(options)?;
        let (inner, slack_ns) = build_sleeper(options.builder());
        Ok(Self {
            state: Owned::new("PreciseSleeper", SleeperState { inner, slack_ns }),
        })
    }

    /// Sleeps `seconds` precisely (see `sleeplab.sleep`) and returns a SleepReport.
    fn sleep(&self, py: Python<'_>, seconds: f64) -> PyResult<PySleepReport> {
        let mut state = self.state.lock()?;
        let start = monotonic_ns();
        let deadline = deadline_after(seconds)?;
        let inner = &mut state.inner;
        sleep_until_on(py, start, deadline, |d| inner.sleep_until_ns(d)).map(Into::into)
    }

    /// Sleeps until `t` on `time.monotonic()`'s clock and returns a SleepReport.
    fn sleep_until(&self, py: Python<'_>, t: f64) -> PyResult<PySleepReport> {
        self.sleep_until_ns(py, deadline_at(t)?)
    }

    /// Sleeps until `deadline_ns` on `time.monotonic_ns()`'s clock and returns a
    /// SleepReport.
    fn sleep_until_ns(&self, py: Python<'_>, deadline_ns: u64) -> PyResult<PySleepReport> {
        let mut state = self.state.lock()?;
        let start = monotonic_ns();
        let inner = &mut state.inner;
        sleep_until_on(py, start, deadline_ns, |d| inner.sleep_until_ns(d)).map(Into::into)
    }

    /// Running statistics since creation or the last `reset_stats()`.
    fn stats(&self) -> PyResult<PySleepStats> {
        Ok(self.state.lock()?.inner.stats().into())
    }

    /// Clears the statistics (the learned margin is kept).
    fn reset_stats(&self) -> PyResult<()> {
        self.state.lock()?.inner.reset_stats();
        Ok(())
    }

    /// The margin the next sleep will spin before its deadline, seconds.
    #[getter]
    fn margin(&self) -> PyResult<f64> {
        Ok(ns_to_seconds(self.state.lock()?.inner.margin_ns()))
    }

    /// The margin in integer nanoseconds.
    #[getter]
    fn margin_ns(&self) -> PyResult<u64> {
        Ok(self.state.lock()?.inner.margin_ns())
    }

    /// The creating thread's timer slack read after building, ns.
    #[getter]
    fn timer_slack_ns(&self) -> PyResult<Option<u64>> {
        Ok(Some(self.state.lock()?.slack_ns))
    }

    /// From any thread (it changes nothing).
    fn __repr__(&self) -> String {
        match self.state.peek() {
            Some(s) => format!(
                "PreciseSleeper(margin_ns={}, sleeps={})",
                s.inner.margin_ns(),
                s.inner.stats().count
            ),
            None => "PreciseSleeper(<in a call>)".to_owned(),
        }
    }
}
