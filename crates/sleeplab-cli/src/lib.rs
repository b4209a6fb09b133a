//! The sleeplab command-line tool as a library: every experiment, the result model,
//! the renderers and the command line. The `sleeplab` binary is a thin wrapper around
//! [`app::run`]; integration tests use the modules directly.

pub mod app;
pub mod cli;
pub mod commands;
pub mod contenders;
pub(crate) mod error;
pub mod experiments;
pub(crate) mod interrupt;
pub(crate) mod load;
pub mod model;
#[cfg(feature = "monitor")]
pub(crate) mod monitor;
pub mod parse;
pub mod probe;
pub(crate) use sleeplab_report as report;
pub mod rusage;
pub(crate) mod settings;
pub mod survey;
pub(crate) mod ticks;
pub(crate) mod tuning;
