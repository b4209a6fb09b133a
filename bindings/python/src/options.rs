//! The keyword options of `PreciseSleeper(...)` and `Ticker(...)`: the library's option
//! table (`sleeplab::precise::OPTIONS`), whose names are the keywords and whose checks
//! are the only ones. Here is only how a Python value becomes a table value (durations
//! in seconds or as a duration string, `"250us"`), and what the table gives Python:
//! `sleeplab.OPTIONS`, `sleeplab.DEFAULTS` and the stubs' keyword lines.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use sleeplab::lab::option_samples;
use sleeplab::precise::{
    CpuBudget, OPTIONS, OptionError, OptionKind, OptionValue, PreciseSleeperBuilder, SleeperOption,
};

use crate::duration::{ns_to_seconds, seconds_to_ns};

/// The option names, in the table's order.
pub(crate) fn names() -> Vec<&'static str> {
    OPTIONS.iter().map(|o| o.name).collect()
}

/// Parsed options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options(PreciseSleeperBuilder);

impl Options {
    /// Parses `**kwargs`: unknown names raise `TypeError`, values of the wrong Python
    /// type `TypeError` (a negative count `OverflowError`), values the table refuses
    /// and options that do not go together `ValueError`.
    pub(crate) fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut builder = PreciseSleeperBuilder::default();
        for (key, value) in kwargs.into_iter().flat_map(|k| k.iter()) {
            let key: String = key.extract()?;
            let option = SleeperOption::named(&key).map_err(|_| {
                PyTypeError::new_err(format!(
                    "unexpected keyword argument '{key}' (options: {})",
                    names().join(", ")
                ))
            })?;
            let value = table_value(option, &value)?;
            option.set(&mut builder, value).map_err(value_error)?;
        }
        builder.validate().map_err(value_error)?;
        Ok(Self(builder))
    }

    /// The library builder.
    pub(crate) fn builder(&self) -> PreciseSleeperBuilder {
        self.0
    }
}

fn value_error(e: OptionError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A Python value as the table's value for `option`: a word (str) for a choice; seconds
/// (a number, rounded up to the ns) or a duration string for a duration; an int for a
/// count; a float for a number; "auto", "none" or a percentage (a number or "3%") for
/// the budget. The table checks the range after.
fn table_value(option: &SleeperOption, value: &Bound<'_, PyAny>) -> PyResult<OptionValue> {
    let text = value
        .is_instance_of::<PyString>()
        .then(|| value.extract::<String>())
        .transpose()?;
    let value = match (option.kind, text) {
        (OptionKind::Choice(_), None) => {
            return Err(PyTypeError::new_err(format!(
                "option {} takes a string ({}), got {}",
                option.name,
                option.expected,
                value.get_type().name()?
            )));
        }
        (OptionKind::Count { .. } | OptionKind::Number { .. }, Some(_)) => {
            return Err(PyTypeError::new_err(format!(
                "option {} takes a number, not a string",
                option.name
            )));
        }
        (_, Some(text)) => option.parse(&text).map_err(value_error)?,
        (OptionKind::Duration { .. }, None) => OptionValue::Ns(seconds_to_ns(
            value.extract()?,
            &format!("option {}", option.name),
        )?),
        (OptionKind::Count { .. }, None) => OptionValue::Count(value.extract()?),
        (OptionKind::Number { .. }, None) => OptionValue::Number(value.extract()?),
        (OptionKind::Budget, None) => OptionValue::Budget(CpuBudget::Percent(value.extract()?)),
    };
    Ok(value)
}

/// A table value as Python takes and shows it (durations in seconds).
fn python_value<'py>(
    py: Python<'py>,
    option: &SleeperOption,
    value: OptionValue,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        OptionValue::Choice(_) | OptionValue::Budget(CpuBudget::Auto | CpuBudget::Unlimited) => {
            option.format(value).into_pyobject(py)?.into_any()
        }
        OptionValue::Ns(ns) => ns_to_seconds(ns).into_pyobject(py)?.into_any(),
        OptionValue::Count(n) => n.into_pyobject(py)?.into_any(),
        OptionValue::Number(x) | OptionValue::Budget(CpuBudget::Percent(x)) => {
            x.into_pyobject(py)?.into_any()
        }
    })
}

/// The default of every option, as `PreciseSleeper(...)` takes it (durations in seconds):
/// the library's defaults, exported as `sleeplab.DEFAULTS`.
pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for o in OPTIONS {
        d.set_item(o.name, python_value(py, o, o.default_value())?)?;
    }
    Ok(d)
}

/// Every option's samples (`sleeplab::lab::option_samples`) in Python's forms, as
/// `(name, value, ok)`: what the keyword must accept (`ok`) or refuse with `ValueError`.
/// Text samples of counts and numbers are left out (a string there is a `TypeError`).
#[pyfunction]
pub(crate) fn _option_samples(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for o in OPTIONS {
        for sample in option_samples(o) {
            let text = sample.text.as_str().into_pyobject(py)?.into_any();
            let forms = match (o.kind, sample.value) {
                (OptionKind::Choice(_), _) => vec![text],
                (OptionKind::Duration { .. }, Some(v)) => vec![text, python_value(py, o, v)?],
                (OptionKind::Budget, Some(v)) => vec![python_value(py, o, v)?],
                (OptionKind::Duration { .. } | OptionKind::Budget, None) => vec![text],
                (_, Some(v)) => vec![python_value(py, o, v)?],
                (_, None) => vec![],
            };
            for value in forms {
                out.append((o.name, value, sample.ok))?;
            }
        }
    }
    Ok(out)
}

/// Every option's kind, as `(name, kind, words)`: kind is "choice", "duration", "count",
/// "number" or "budget", words a choice's words in the table's order (their indices are
/// C's values). For the test that hands the C setters the values Python is given.
#[pyfunction]
pub(crate) fn _option_kinds() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    OPTIONS
        .iter()
        .map(|o| match o.kind {
            OptionKind::Choice(words) => (o.name, "choice", words.to_vec()),
            OptionKind::Duration { .. } => (o.name, "duration", vec![]),
            OptionKind::Count { .. } => (o.name, "count", vec![]),
            OptionKind::Number { .. } => (o.name, "number", vec![]),
            OptionKind::Budget => (o.name, "budget", vec![]),
        })
        .collect()
}

/// The keyword lines of `PreciseSleeper.__init__` and `Ticker.__init__` in the stubs
/// (`python/sleeplab/_sleeplab.pyi`), from the table: tests/test_package.py checks that
/// the stubs hold them (and rewrites them under `SLEEPLAB_BLESS=1`).
#[pyfunction]
pub(crate) fn _stub_options(py: Python<'_>) -> PyResult<String> {
    let mut lines = Vec::with_capacity(OPTIONS.len());
    for o in OPTIONS {
        let annotation = match o.kind {
            OptionKind::Choice(words) => format!(
                "Literal[{}]",
                words
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            OptionKind::Duration { .. } => "Union[float, str]".into(),
            OptionKind::Count { .. } => "int".into(),
            OptionKind::Number { .. } => "float".into(),
            OptionKind::Budget => "Union[Literal[\"auto\", \"none\"], float]".into(),
        };
        let default = python_value(py, o, o.default_value())?;
        let default = match default.extract::<String>() {
            Ok(word) => format!("\"{word}\""),
            Err(_) => default.repr()?.to_string(),
        };
        lines.push(format!("        {}: {annotation} = {default},", o.name));
    }
    Ok(lines.join("\n"))
}
