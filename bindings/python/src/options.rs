//! The keyword options of `PreciseSleeper(...)` and `Ticker(...)`, mapped onto the Rust
//! `PreciseSleeperBuilder`. The only place that does so: a new builder option is one
//! match arm here and one line in the stub.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use sleeplab::precise::{
    CpuBudget, EstimatorConfig, PreciseSleeperBuilder, SlackPolicy, SlicePolicy, SpinStrategy,
    Tradeoff,
};

use crate::duration::{ns_to_seconds, seconds_to_ns};

/// The option names, in the order the docs list them.
pub(crate) const NAMES: &[&str] = &[
    "spin",
    "timer_slack",
    "sched_slice",
    "prior",
    "cap",
    "window",
    "quantile",
    "half_life",
    "headroom",
    "lateness_tolerance",
    "cpu_budget",
    "early_tolerance",
];

/// Parsed options.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    spin: SpinStrategy,
    slack: SlackPolicy,
    estimator: EstimatorConfig,
    tradeoff: Tradeoff,
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
            "sched_slice" => {
                self.tradeoff.slice = match value.extract::<String>()?.as_str() {
                    "short" => SlicePolicy::Short,
                    "inherit" => SlicePolicy::Inherit,
                    other => return Err(bad(key, other, "'short' or 'inherit'")),
                }
            }
            "prior" => e.prior_ns = seconds_to_ns(value.extract()?, key)?,
            "cap" => e.cap_ns = seconds_to_ns(value.extract()?, key)?,
            "headroom" => e.headroom_ns = seconds_to_ns(value.extract()?, key)?,
            "window" => e.window = value.extract()?,
            "quantile" => e.quantile = value.extract()?,
            "half_life" => e.half_life = value.extract()?,
            "lateness_tolerance" => {
                self.tradeoff.lateness_tolerance_ns = seconds_to_ns(value.extract()?, key)?;
            }
            "early_tolerance" => {
                self.tradeoff.early_tolerance_ns = seconds_to_ns(value.extract()?, key)?;
            }
            "cpu_budget" => self.tradeoff.cpu_budget = cpu_budget(value)?,
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
            .tradeoff(self.tradeoff)
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
    d.set_item("sched_slice", "short")?;
    d.set_item("prior", ns_to_seconds(e.prior_ns))?;
    d.set_item("cap", ns_to_seconds(e.cap_ns))?;
    d.set_item("window", e.window)?;
    d.set_item("quantile", e.quantile)?;
    d.set_item("half_life", e.half_life)?;
    d.set_item("headroom", ns_to_seconds(e.headroom_ns))?;
    let t = Tradeoff::default();
    d.set_item("lateness_tolerance", ns_to_seconds(t.lateness_tolerance_ns))?;
    d.set_item("cpu_budget", "auto")?;
    d.set_item("early_tolerance", ns_to_seconds(t.early_tolerance_ns))?;
    Ok(d)
}

/// `cpu_budget`: "auto" (5 % of each wait, at least 500 µs, lifted on coarse
/// schedulers), "none" (unlimited: up to the cap) or a percentage of each wait (0–100).
fn cpu_budget(value: &Bound<'_, PyAny>) -> PyResult<CpuBudget> {
    if let Ok(name) = value.extract::<String>() {
        return match name.as_str() {
            "auto" => Ok(CpuBudget::Auto),
            "none" => Ok(CpuBudget::Unlimited),
            other => Err(bad("cpu_budget", other, "'auto', 'none' or a percentage")),
        };
    }
    let percent: f64 = value.extract()?;
    if (0.0..=100.0).contains(&percent) {
        Ok(CpuBudget::Percent(percent))
    } else {
        Err(PyValueError::new_err(format!(
            "option cpu_budget is out of range (want 0..=100 percent), got {}",
            crate::duration::float_repr(percent)
        )))
    }
}

fn bad(key: &str, got: &str, want: &str) -> PyErr {
    PyValueError::new_err(format!("option {key} must be {want}, got '{got}'"))
}
