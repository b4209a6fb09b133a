//! A strict parser of probe output, exactly as `spec/probe-protocol.md` defines it
//! (`sleeplab-probe/1`): the `--list` output and the measurement output.
//!
//! Every deviation is an error naming the 1-based line and what was wrong. Parsing never
//! panics, whatever the bytes (a property test feeds it random input). The parser keeps
//! every sample; the harness caps the size of what it reads before parsing.

mod error;
mod json;
mod lines;
mod parse;
#[cfg(test)]
mod tests;

pub use error::{ErrorKind, ProtocolError};
pub use parse::{Stopped, parse_list, parse_measurement, parse_output, parse_stopped};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// The protocol this parser speaks.
pub const PROTOCOL: &str = "sleeplab-probe/1";

/// The longest excerpt of a bad line quoted in an error message.
const EXCERPT: usize = 60;

/// The kind of a method in `--list` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A wait for a requested duration.
    Oneshot,
    /// Gives up the CPU; no duration (the harness passes 0).
    Yield,
    /// A ticker-like API, measured in periodic mode.
    Periodic,
}

impl Kind {
    /// The protocol's name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Oneshot => "oneshot",
            Kind::Yield => "yield",
            Kind::Periodic => "periodic",
        }
    }

    /// The measurement mode a method of this kind runs in.
    pub fn mode(self) -> Mode {
        match self {
            Kind::Oneshot | Kind::Yield => Mode::Oneshot,
            Kind::Periodic => Mode::Periodic,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The mode of a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Cells of `s` samples: elapsed ns of one call each.
    Oneshot,
    /// One cell of `t` samples: arrival times since t0.
    Periodic,
}

impl Mode {
    /// The protocol's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Oneshot => "oneshot",
            Mode::Periodic => "periodic",
        }
    }

    /// The sample line type of this mode.
    pub fn sample_type(self) -> &'static str {
        match self {
            Mode::Oneshot => "s",
            Mode::Periodic => "t",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The header line: which runtime measured, with which clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    /// Short runtime id (`c`, `cpp`, `go`, `python`, `java`, `node`, `ruby`, `windows`).
    pub runtime: String,
    /// The implementation (`CPython`, `MRI`, `JRuby`, `OpenJDK`, `wine`, …).
    pub implementation: String,
    /// The runtime's version, free text.
    pub runtime_version: String,
    /// The clock the probe reads.
    pub clock: String,
    /// The platform, free text.
    pub platform: String,
    /// The method measured (measurement output only).
    pub method: Option<String>,
    /// The measurement mode (measurement output only).
    pub mode: Option<Mode>,
    /// The kernel thread id of the probe's measuring thread (measurement output's `tid`),
    /// where the probe names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    /// Whether the output carries each call's start on `CLOCK_MONOTONIC` (measurement
    /// output's `"timestamps":true`: the probe was given `--timestamps`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timestamps: bool,
    /// Fields beyond the protocol's (e.g. `timerslack_ns`, `options`), kept as given.
    pub extra: BTreeMap<String, Value>,
}

/// The probe's arguments, as the protocol's invocation spells them: the probe's command
/// line, not sleeplab's (some share a name with one of sleeplab's flags).
pub mod arg {
    /// List the methods: the header and one line per method.
    pub const LIST: &str = "--list";
    /// The method to measure.
    pub const METHOD: &str = "--method";
    /// One-shot cells: the requested durations, ns.
    pub const DURATIONS_NS: &str = "--durations-ns";
    /// Periodic mode: the period, ns.
    pub const PERIOD_NS: &str = "--period-ns";
    /// Exactly this many measured samples per cell.
    pub const COUNT: &str = "--count";
    /// Measure until the samples of a cell add up to this many ns.
    pub const BUDGET_NS: &str = "--budget-ns";
    /// With a budget: at most this many samples per cell.
    pub const MAX_COUNT: &str = "--max-count";
    /// Calls (or ticks) before the measured ones in each cell.
    pub const WARMUP: &str = "--warmup";
    /// Lock all memory before measuring (optional: [`OPTION_MLOCK`](super::OPTION_MLOCK)).
    pub const MLOCK: &str = "--mlock";
    /// Give each call's start on `CLOCK_MONOTONIC` (optional:
    /// [`OPTION_TIMESTAMPS`](super::OPTION_TIMESTAMPS)).
    pub const TIMESTAMPS: &str = "--timestamps";
}

/// The optional argument `--mlock` (the probe locks its memory before measuring), as
/// the `--list` header's `options` names it.
pub const OPTION_MLOCK: &str = "mlock";

/// The optional argument `--timestamps` (each call's start on `CLOCK_MONOTONIC`, for a
/// kernel trace), as the `--list` header's `options` names it.
pub const OPTION_TIMESTAMPS: &str = "timestamps";

impl Header {
    /// The optional arguments the probe takes (the `--list` header's `options`, an array
    /// of strings the parser checked), e.g. [`OPTION_MLOCK`].
    pub fn options(&self) -> Vec<&str> {
        self.extra
            .get("options")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// One method of a `--list` output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MethodInfo {
    /// The name passed to `--method`.
    pub method: String,
    /// Its kind.
    pub kind: Kind,
    /// Whether it can be measured here.
    pub available: bool,
    /// Why not, when unavailable.
    pub reason: Option<String>,
    /// What exactly it calls.
    pub description: String,
}

/// A parsed `--list` output.
#[derive(Debug, Clone, PartialEq)]
pub struct ListOutput {
    /// The header (no `method`/`mode`).
    pub header: Header,
    /// The methods, in the probe's order.
    pub methods: Vec<MethodInfo>,
}

/// A `#` line: a note the probe knows of (a clamp, a rounding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// 1-based line number.
    pub line: usize,
    /// The text after `#` (and one space, if any).
    pub text: String,
}

/// One cell of a measurement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Requested duration (oneshot) or period (periodic), ns.
    pub value_ns: u64,
    /// The `w` lines, in order.
    pub warmup: Vec<u64>,
    /// The `s` (oneshot) or `t` (periodic) lines, in order.
    pub samples: Vec<u64>,
    /// With timestamps, one-shot: each `w` call's start on `CLOCK_MONOTONIC`, ns (the
    /// lines' second field, parallel to `warmup`).
    pub warmup_starts_ns: Option<Vec<u64>>,
    /// With timestamps, one-shot: each `s` call's start on `CLOCK_MONOTONIC`, ns
    /// (parallel to `samples`).
    pub starts_ns: Option<Vec<u64>>,
    /// With timestamps, periodic: t0 on `CLOCK_MONOTONIC` (the `t0` line), ns.
    pub t0_ns: Option<u64>,
    /// Comments inside the cell or between the previous cell and this one.
    pub comments: Vec<Comment>,
    /// Line number of the `cell` line.
    pub line: usize,
}

/// A parsed measurement output.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The header (with `method` and `mode`).
    pub header: Header,
    /// The method (from the header).
    pub method: String,
    /// The mode (from the header).
    pub mode: Mode,
    /// The cells, in order.
    pub cells: Vec<Cell>,
    /// Comments after the last cell.
    pub trailing_comments: Vec<Comment>,
}

/// Either kind of probe output.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `--list` output.
    List(ListOutput),
    /// Measurement output.
    Measurement(Measurement),
}
