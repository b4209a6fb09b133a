//! A progress bar on stderr that `-q` (or a non-terminal stderr) silences.
//!
//! It has no ticker thread: the bar redraws when the measuring loop reports progress
//! ([`Progress::inc`], [`Progress::message`]), at most as often as indicatif's terminal
//! target allows (20 times a second), so nothing but the measurement runs while it
//! measures.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar for a stage of known length, or nothing when quiet.
#[derive(Clone, Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `len` steps titled `stage`; hidden when `quiet`.
    pub fn new(stage: &str, len: u64, quiet: bool) -> Self {
        if quiet {
            return Self { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>9.bold} [{bar:30}] {pos}/{len} {elapsed_precise} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(stage.to_string());
        Self { bar: Some(bar) }
    }

    /// A progress that shows nothing.
    pub fn hidden() -> Self {
        Self { bar: None }
    }

    /// Starts the bar over as a new phase of the same run: `stage`, `len` steps.
    pub fn restart(&self, stage: &str, len: u64) {
        if let Some(b) = &self.bar {
            b.set_prefix(stage.to_string());
            b.set_length(len);
            b.set_position(0);
            b.set_message("");
        }
    }

    /// Advances by `n` steps.
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Sets the message shown after the bar.
    pub fn message(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
