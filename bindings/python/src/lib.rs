//! `sleeplab._sleeplab`: the native half of the `sleeplab` Python package (PyO3).
//!
//! * `sleeper`: `sleep`, `sleep_until`, `sleep_until_ns`, `last_report` and `PreciseSleeper`.
//! * `ticker`: `Ticker`, an iterator of `Tick`s.
//! * `report`: the read-only records (`SleepReport`, `SleepStats`, `Tick`).
//! * `wait`: how a wait releases the GIL and honours Ctrl-C without returning early.
//! * `warm`: the way back into Python, warmed just before the deadline.
//! * `options`: keyword options through the library's option table.
//! * `owner`: the thread rule of `PreciseSleeper` and `Ticker` (the C library's).
//! * `duration`: seconds → nanoseconds with Python's errors.

use pyo3::prelude::*;

mod duration;
mod options;
mod owner;
mod report;
mod sleeper;
mod ticker;
mod wait;
mod warm;

/// Precise sleep for Python (native module; import `sleeplab`).
#[pymodule]
fn _sleeplab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sleeper::sleep, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::sleep_until, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::sleep_until_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::last_report, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::_deadline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::_direct_zero_sleeps_ns, m)?)?;
    m.add_function(wrap_pyfunction!(warm::_warm_lead_ns, m)?)?;
    m.add_function(wrap_pyfunction!(options::_option_samples, m)?)?;
    m.add_function(wrap_pyfunction!(options::_option_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(options::_stub_options, m)?)?;
    m.add_class::<sleeper::PySleeper>()?;
    m.add_class::<ticker::PyTicker>()?;
    m.add_class::<report::PySleepReport>()?;
    m.add_class::<report::PySleepStats>()?;
    m.add_class::<report::PyTick>()?;
    // The package's version is the crate's (pyproject.toml takes it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SLICE_NS", wait::SLICE_NS)?;
    m.add("OPTIONS", options::names())?;
    m.add("DEFAULTS", options::defaults(m.py())?)?;
    Ok(())
}
