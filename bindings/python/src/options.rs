//! The keyword options of `PreciseSleeper(...)` and `Ticker(...)`, mapped onto the Rust
//! `PreciseSleeperBuilder`. The only place that does so: a new builder option is one
//! match arm here and one line in the stub.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use sleeplab::precise::{EstimatorConfig, PreciseSleeperBuilder, SlackPolicy, SpinStrategy};

use crate::duration::{ns_to_seconds, seconds_to_ns};

/// The option names, in the order the docs list them.
pub(crate) const NAMES: &[&str] = &[
    "spin",
    "timer_slack",
    "prior",
    "cap",
    "window",
    "quantile",
    "half_life",
    "headroom",
];

/// Parsed options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    spin: SpinStrategy,
    slack: SlackPolicy,
    estimator: EstimatorConfig,
}

impl Options {
    /// Parses `**kwargs`: unknown names raise `TypeError`, bad values `ValueError`.
    pub(crate) fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut o = Options::default();
        let Some(kwargs) = kwargs else {
            return Ok(o);
        };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            o.set(&key, &value)?;
        }
        o.check()?;
        Ok(o)
    }

    fn set(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let e = &mut self.estimator;
        match key {
            "spin" => {
                self.spin = match value.extract::<String>()?.as_str() {
                    "pause" => SpinStrategy::Spin,
                    "yield" => SpinStrategy::YieldSpin,
                    other => return Err(bad(key, other, "'pause' or 'yield'")),
                }
            }
            "timer_slack" => {
                self.slack = match value.extract::<String>()?.as_str() {
                    "minimal" => SlackPolicy::SetMinimal,
                    "leave" => SlackPolicy::LeaveAlone,
                    other => return Err(bad(key, other, "'minimal' or 'leave'")),
                }
            }
            "prior" => e.prior_ns = seconds_to_ns(value.extract()?, key)?,
            "cap" => e.cap_ns = seconds_to_ns(value.extract()?, key)?,
            "headroom" => e.headroom_ns = seconds_to_ns(value.extract()?, key)?,
            "window" => e.window = value.extract()?,
            "quantile" => e.quantile = value.extract()?,
            "half_life" => e.half_life = value.extract()?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "unexpected keyword argument '{key}' (options: {})",
                    NAMES.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Every estimator parameter within the range the library documents (its
    /// `EstimatorConfig::normalized` leaves it unchanged).
    fn check(&self) -> PyResult<()> {
        let c = self.estimator;
        let n = c.normalized();
        let fields = [
            ("cap", c.cap_ns != n.cap_ns, "at least 1 ns"),
            ("window", c.window != n.window, "1..=4096 waits"),
            (
                "quantile",
                c.quantile.to_bits() != n.quantile.to_bits(),
                "0.5..=1.0",
            ),
            ("half_life", c.half_life != n.half_life, "at least 1 wait"),
            ("prior", c.prior_ns != n.prior_ns, "at most the cap"),
        ];
        match fields.iter().find(|f| f.1) {
            Some((name, _, range)) => Err(PyValueError::new_err(format!(
                "option {name} is out of range (want {range})"
            ))),
            None => Ok(()),
        }
    }

    /// The library builder.
    pub(crate) fn builder(&self) -> PreciseSleeperBuilder {
        PreciseSleeperBuilder::default()
            .spin_strategy(self.spin)
            .slack_policy(self.slack)
            .estimator(self.estimator)
    }
}

/// The default of every option, as `PreciseSleeper(...)` takes it (durations in seconds):
/// the library's defaults, exported as `sleeplab.DEFAULTS` so the stubs can be checked
/// against them.
pub(crate) fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let e = EstimatorConfig::default();
    let d = PyDict::new(py);
    d.set_item("spin", "pause")?;
    d.set_item("timer_slack", "minimal")?;
    d.set_item("prior", ns_to_seconds(e.prior_ns))?;
    d.set_item("cap", ns_to_seconds(e.cap_ns))?;
    d.set_item("window", e.window)?;
    d.set_item("quantile", e.quantile)?;
    d.set_item("half_life", e.half_life)?;
    d.set_item("headroom", ns_to_seconds(e.headroom_ns))?;
    Ok(d)
}

fn bad(key: &str, got: &str, want: &str) -> PyErr {
    PyValueError::new_err(format!("option {key} must be {want}, got '{got}'"))
}
