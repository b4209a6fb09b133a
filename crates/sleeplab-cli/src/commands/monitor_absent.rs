//! `sleeplab monitor` in a build without the `monitor` cargo feature (no HTTP server,
//! no Prometheus encoding): whatever its arguments, one line saying how to get it, exit 2.

use crate::error::UsageError;
use clap::Args;

/// The one line `sleeplab monitor` answers in this build.
pub const ABSENT: &str = "this sleeplab was built without its monitor (the cargo feature `monitor`, on by default): build it with `cargo build --release -p sleeplab-cli --features monitor`";

/// Any arguments: the monitor's flags mean nothing without the monitor.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Ignored.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub ignored: Vec<String>,
}

/// None: the monitor serves what it measures and saves no result.
pub const LONG_RUN: Option<&str> = None;

/// Says how to get the monitor (exit 2).
pub fn run(_args: &MonitorArgs, _quiet: bool) -> anyhow::Result<i32> {
    Err(UsageError::new(ABSENT).into())
}
