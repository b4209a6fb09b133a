//! The experiments. Each is a function from a plain config to a result value
//! ([`Experiment`]); printing and saving are separate renderers of that value, run by
//! the command's tail or by a survey stage.
//!
//! Nothing here knows the command line: configs are plain values, errors name values
//! (the command layer maps them to its flags), a sentence that asks for a flag holds a
//! [`Hint`] the command layer words, and thread settings arrive in the [`Context`].

mod context;
mod experiment;
mod hint;
pub mod rounds;

pub mod advise;
pub mod cpu;
pub mod explain;
pub mod pace;
pub mod runtimes;
pub mod short;
pub mod simulate;
pub mod sweep;
pub mod timers;
pub mod tune;

pub use context::{Context, Stop, load_note};
pub use experiment::{Experiment, KeyPart, Metric, Outcome, Point, ResultData, Sample, histogram};
pub use hint::{Hint, Wording};

/// The version of the result format (JSON, and the `schema_version` column of every
/// CSV). Bumped on any incompatible change; readers refuse other versions with a clear
/// message. Version 2: tail quantiles are `null` where the sample cannot resolve them
/// (the quantile rule, `stats::quantile`).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build still reads. Version-1 files load with every quantile
/// re-checked against its sample size (`stats::recheck_quantiles`).
pub const OLDEST_READABLE_VERSION: u32 = 1;
