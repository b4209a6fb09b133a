//! The sleeplab command-line tool as a library: every experiment, the result model,
//! the renderers and the command line. The `sleeplab` binary is a thin wrapper around
//! [`app::run`]; integration tests use the modules directly.

pub mod app;
pub mod cli;
pub mod commands;
pub mod contenders;
pub mod error;
pub mod experiments;
pub mod interrupt;
pub mod load;
pub mod model;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod parse;
pub mod probe;
pub mod report;
pub mod rusage;
pub mod settings;
pub mod survey;
pub mod ticks;
pub mod tuning;
