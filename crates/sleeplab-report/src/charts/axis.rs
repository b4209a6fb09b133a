//! Axes: linear or logarithmic scale, how ticks are written, a fixed or fitted range.
//! Every chart kind (and the shared frame) takes them; `xy` re-exports them.

use crate::units;

/// An axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Logarithmic (base 10, whole decades).
    Log,
}

/// How tick values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds, shown scaled (`1 µs`, `2 ms`).
    Ns,
    /// Percent (`25 %`).
    Percent,
}

impl Unit {
    /// Formats a tick value.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Ns => units::ns(v),
            Unit::Percent => units::pct(v),
        }
    }
}

/// One axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Its description, with the unit, e.g. "requested (log)".
    pub label: String,
    /// Linear or log.
    pub scale: Scale,
    /// How ticks are written.
    pub unit: Unit,
    /// A fixed range; `None` fits the data (whole decades on log axes).
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A log axis of durations.
    pub fn log_ns(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log,
            unit: Unit::Ns,
            range: None,
        }
    }

    /// A linear axis.
    pub fn linear(label: impl Into<String>, unit: Unit) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Linear,
            unit,
            range: None,
        }
    }

    /// With a fixed range.
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }
}
