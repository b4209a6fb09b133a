//! `Ticker`: the drift-free periodic schedule, as a Python iterator of `Tick`s.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use sleeplab::precise::{MissedTickBehavior, Ticker};

use crate::duration::{deadline_at, float_repr, ns_to_seconds, seconds_to_ns};
use crate::options::Options;
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
/// PreciseSleeper. Waits release the GIL; Ctrl-C raises KeyboardInterrupt.
#[pyclass(name = "Ticker", module = "sleeplab._sleeplab")]
pub(crate) struct PyTicker {
    inner: Ticker<GilEnv>,
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
        Ok(Self { inner })
    }

    /// Waits for the next tick (never before it is due) and returns it.
    fn tick(&mut self, py: Python<'_>) -> PyResult<PyTick> {
        let due = self.inner.next_scheduled_ns();
        let inner = &mut self.inner;
        let tick = wait_then(py, due, move || inner.tick())?;
        Ok(tick.into())
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<PyTick> {
        self.tick(py)
    }

    /// Restarts the grid at `start` (seconds on `time.monotonic()`'s clock; default
    /// now): tick k, counting from the next one, is due at start + k·period.
    #[pyo3(signature = (start = None))]
    fn reset(&mut self, start: Option<f64>) -> PyResult<()> {
        let start_ns = match start {
            Some(t) => deadline_at(t)?,
            None => self.inner.sleeper_mut().now_ns(),
        };
        self.inner.reset_at_ns(start_ns);
        Ok(())
    }

    /// The period, seconds.
    #[getter]
    fn period(&self) -> f64 {
        ns_to_seconds(self.inner.period_ns())
    }

    /// The period, ns.
    #[getter]
    fn period_ns(&self) -> u64 {
        self.inner.period_ns()
    }

    /// The missed-tick behaviour: "skip" (the default), "burst" or "delay" (settable).
    #[getter]
    fn missed(&self) -> &'static str {
        behavior_name(self.inner.missed_tick_behavior())
    }

    #[setter]
    fn set_missed(&mut self, missed: &str) -> PyResult<()> {
        self.inner.set_missed_tick_behavior(behavior_from(missed)?);
        Ok(())
    }

    /// The grid origin, ns (moves when "delay" reschedules).
    #[getter]
    fn start_ns(&self) -> u64 {
        self.inner.start_ns()
    }

    /// When the next tick is due, ns.
    #[getter]
    fn next_ns(&self) -> u64 {
        self.inner.next_scheduled_ns()
    }

    /// Ticks returned so far.
    #[getter]
    fn ticks(&self) -> u64 {
        self.inner.ticks()
    }

    /// Ticks missed so far.
    #[getter]
    fn missed_ticks(&self) -> u64 {
        self.inner.missed_ticks()
    }

    /// The statistics of the ticker's sleeper.
    fn stats(&self) -> PySleepStats {
        self.inner.sleeper().stats().into()
    }

    /// The learned margin of the ticker's sleeper, seconds.
    #[getter]
    fn margin(&self) -> f64 {
        ns_to_seconds(self.inner.sleeper().margin_ns())
    }

    fn __repr__(&self) -> String {
        format!(
            "Ticker(period_ns={}, missed='{}', ticks={}, missed_ticks={})",
            self.inner.period_ns(),
            self.missed(),
            self.inner.ticks(),
            self.inner.missed_ticks()
        )
    }
}
