//! `Ticker`: the drift-free periodic schedule, as a Python iterator of `Tick`s.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use sleeplab::precise::{MissedTickBehavior, Ticker};

use crate::duration::{deadline_at, float_repr, ns_to_seconds, seconds_to_ns};
use crate::options::Options;
use crate::owner::Owned;
use crate::report::{PySleepStats, PyTick};
use crate::wait::{GilEnv, build_sleeper, wait_then};

/// The missed-tick behaviour of a `Ticker` built without `missed`: skip, the one for a
/// frame loop, stated here rather than taken from the Rust library's default.
const DEFAULT_MISSED: &str = "skip";

fn behavior_from(name: &str) -> PyResult<MissedTickBehavior> {
    match name {
        "burst" => Ok(MissedTickBehavior::Burst),
        "delay" => Ok(MissedTickBehavior::Delay),
        "skip" => Ok(MissedTickBehavior::Skip),
        other => Err(PyValueError::new_err(format!(
            "missed must be 'burst', 'delay' or 'skip', got '{other}'"
        ))),
    }
}

fn behavior_name(b: MissedTickBehavior) -> &'static str {
    match b {
        MissedTickBehavior::Burst => "burst",
        MissedTickBehavior::Delay => "delay",
        MissedTickBehavior::Skip => "skip",
    }
}

/// A drift-free periodic schedule: tick k is due at start + k·period (exact integer
/// nanoseconds), the first one at once. Iterate over it (forever) or call tick().
///
/// Ticker(period, missed="skip", **options): period in seconds (> 0); missed says what
/// happens after a tick a whole period late: "skip" (the default, the one for a frame
/// loop; unlike tokio, whose default is Burst) drops the missed ticks and waits for the
/// next grid instant, "burst" fires them at once until caught up (the grid is kept),
/// "delay" restarts the schedule from the late tick. options are those of
/// PreciseSleeper. It belongs to the thread that created it: a call from any other
/// thread raises RuntimeError. Waits release the GIL; Ctrl-C raises KeyboardInterrupt.
#[pyclass(name = "Ticker", module = "sleeplab._sleeplab", frozen)]
pub(crate) struct PyTicker {
    inner: Owned<Ticker<GilEnv>>,
}

#[pymethods]
impl PyTicker {
    #[new]
    #[pyo3(signature = (period, missed = DEFAULT_MISSED, **options))]
    fn new(period: f64, missed: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let period_ns = seconds_to_ns(period, "period")?;
        if period_ns == 0 {
            return Err(PyValueError::new_err(format!(
                "period must be positive, got {}",
                float_repr(period)
            )));
        }
        let behavior = behavior_from(missed)?;
        let (mut sleeper, _) = build_sleeper(Options::from_kwargs(options)?.builder());
        let start = sleeper.now_ns();
        let inner = Ticker::with_sleeper_at_ns(sleeper, start, period_ns)
            .with_missed_tick_behavior(behavior);
        Ok(Self {
            inner: Owned::new("Ticker", inner),
        })
    }

    /// Waits for the next tick (never before it is due) and returns it.
    fn tick(&self, py: Python<'_>) -> PyResult<PyTick> {
        let mut inner = self.inner.lock()?;
        let due = inner.next_scheduled_ns();
        let inner = &mut *inner;
        let tick = wait_then(py, due, move || inner.tick())?;
        Ok(tick.into())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<PyTick> {
        self.tick(py)
    }

    /// Restarts the grid at `start` (seconds on `time.monotonic()`'s clock; default
    /// now): tick k, counting from the next one, is due at start + k·period.
    #[pyo3(signature = (start = None))]
    fn reset(&self, start: Option<f64>) -> PyResult<()> {
        let mut inner = self.inner.lock()?;
        let start_ns = match start {
            Some(t) => deadline_at(t)?,
            None => inner.sleeper_mut().now_ns(),
        };
        inner.reset_at_ns(start_ns);
        Ok(())
    }

    /// The period, seconds.
    #[getter]
    fn period(&self) -> PyResult<f64> {
        Ok(ns_to_seconds(self.inner.lock()?.period_ns()))
    }

    /// The period, ns.
    #[getter]
    fn period_ns(&self) -> PyResult<u64> {
        Ok(self.inner.lock()?.period_ns())
    }

    /// The missed-tick behaviour: "skip" (the default), "burst" or "delay" (settable).
    #[getter]
    fn missed(&self) -> PyResult<&'static str> {
        Ok(behavior_name(self.inner.lock()?.missed_tick_behavior()))
    }

    #[setter]
    fn set_missed(&self, missed: &str) -> PyResult<()> {
        let behavior = behavior_from(missed)?;
        self.inner.lock()?.set_missed_tick_behavior(behavior);
        Ok(())
    }

    /// The grid origin, ns (moves when "delay" reschedules).
    #[getter]
    fn start_ns(&self) -> PyResult<u64> {
        Ok(self.inner.lock()?.start_ns())
    }

    /// When the next tick is due, ns.
    #[getter]
    fn next_ns(&self) -> PyResult<u64> {
        Ok(self.inner.lock()?.next_scheduled_ns())
    }

    /// Ticks returned so far.
    #[getter]
    fn ticks(&self) -> PyResult<u64> {
        Ok(self.inner.lock()?.ticks())
    }

    /// Ticks missed so far.
    #[getter]
    fn missed_ticks(&self) -> PyResult<u64> {
        Ok(self.inner.lock()?.missed_ticks())
    }

    /// The statistics of the ticker's sleeper.
    fn stats(&self) -> PyResult<PySleepStats> {
        Ok(self.inner.lock()?.sleeper().stats().into())
    }

    /// The learned margin of the ticker's sleeper, seconds.
    #[getter]
    fn margin(&self) -> PyResult<f64> {
        Ok(ns_to_seconds(self.inner.lock()?.sleeper().margin_ns()))
    }

    /// From any thread (it changes nothing).
    fn __repr__(&self) -> String {
        match self.inner.peek() {
            Some(t) => format!(
                "Ticker(period_ns={}, missed='{}', ticks={}, missed_ticks={})",
                t.period_ns(),
                behavior_name(t.missed_tick_behavior()),
                t.ticks(),
                t.missed_ticks()
            ),
            None => "Ticker(<in a call>)".to_owned(),
        }
    }
}
