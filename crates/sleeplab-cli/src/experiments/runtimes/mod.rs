//! `sleeplab runtimes`: every language runtime's own wait functions, measured the same
//! way (seeds 001, 003, 004).
//!
//! Each runtime's probe (`probes/<runtime>/`, protocol in `spec/probe-protocol.md`) is
//! built and listed, then launched once per method with every requested duration at
//! once (`--durations-ns`), a time budget per cell and a warm-up; periodic methods run in
//! periodic mode. The harness applies the same load (busy threads in this process), timer
//! slack and CPU pinning (both inherited by the probe process) as `sweep`, parses the
//! output with [`crate::probe::protocol`] and summarises it with [`sleeplab_stats`].
//! A runtime that is missing is skipped with the command that installs it; a probe that
//! crashes, hangs, floods or prints garbage is reported as failed and the run goes on.

mod csv_out;
mod experiment;
mod measure;
mod render;
mod run;
mod saved;
mod settings;
mod trace;
pub use csv_out::{CSV_COLUMNS, to_csv, write_csv};
pub use experiment::list;
pub use render::{early_returns, render, render_listing};
pub use run::{RuntimesOutcome, Target, run};
pub use saved::saved_runtimes;
pub use settings::{ProbeSettingError, ProbeSettings, in_force_notes, in_force_summary};

pub use sleeplab_results::runtimes::*;
