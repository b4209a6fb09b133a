//! Python seconds (floats) to nanoseconds on `CLOCK_MONOTONIC`, with the errors Python
//! users expect: `ValueError` for negative, NaN and infinite values, `OverflowError` for
//! values beyond 64 bits of nanoseconds.

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

use sleeplab::clock::monotonic_ns;

/// `x` as Python would print a float (`-1.0`, `nan`, `inf`, `1e300`).
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{x:?}")
    }
}

/// `seconds` as whole nanoseconds, rounded up so that a sleep is never shorter than asked.
/// `what` names the value in error messages ("sleep length", "period", ...).
pub(crate) fn seconds_to_ns(seconds: f64, what: &str) -> PyResult<u64> {
    let problem = if seconds.is_nan() {
        "must be a number"
    } else if seconds.is_infinite() {
        "must be finite"
    } else if seconds < 0.0 {
        "must be non-negative"
    } else {
        ""
    };
    if !problem.is_empty() {
        let got = float_repr(seconds);
        return Err(PyValueError::new_err(format!(
            "{what} {problem}, got {got}"
        )));
    }
    let ns = (seconds * 1e9).ceil();
    // 2^64 is exactly representable; anything at or above it does not fit.
    if ns >= 18_446_744_073_709_551_616.0 {
        return Err(PyOverflowError::new_err(format!(
            "{what} is too large: {} s",
            float_repr(seconds)
        )));
    }
    Ok(ns as u64)
}

/// The deadline `seconds` from now, ns on `CLOCK_MONOTONIC`.
pub(crate) fn deadline_after(seconds: f64) -> PyResult<u64> {
    let ns = seconds_to_ns(seconds, "sleep length")?;
    monotonic_ns().checked_add(ns).ok_or_else(|| {
        PyOverflowError::new_err(format!(
            "sleep length is too large: {} s",
            float_repr(seconds)
        ))
    })
}

/// A deadline given in seconds on `time.monotonic()`'s time line, as ns (rounded up).
/// A time in the past (negative included) is returned as is, clamped at 0: the sleep
/// returns at once.
pub(crate) fn deadline_at(t: f64) -> PyResult<u64> {
    if t.is_finite() && t < 0.0 {
        return Ok(0);
    }
    seconds_to_ns(t, "deadline")
}

/// Nanoseconds as float seconds, for the convenience properties.
pub(crate) fn ns_to_seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}
