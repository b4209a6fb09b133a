//! The experiments. Each is a function from a plain config to a result value
//! ([`Experiment`]); printing and saving are separate renderers of that value, run by
//! the command's tail or by a survey stage.
//!
//! Nothing here knows the command line: configs are plain values, errors name values
//! (the command layer maps them to its flags), a sentence that asks for a flag holds a
//! [`Hint`] the command layer words, and thread settings arrive in the [`Context`].

mod context;
mod experiment;
pub(crate) mod rounds;

pub(crate) mod advise;
pub(crate) mod cpu;
pub mod explain;
pub mod pace;
pub mod runtimes;
pub mod short;
pub mod simulate;
pub mod sweep;
pub mod timers;
pub(crate) mod tune;

pub use context::{Context, Stop, load_note};
pub use experiment::{Experiment, Outcome};
pub use sleeplab_results::{Hint, KeyPart, Metric, Point, ResultData, Sample, Wording, histogram};

pub use sleeplab_results::{OLDEST_READABLE_VERSION, SCHEMA_VERSION};
