//! A progress bar on stderr that `-q` (or a non-terminal stderr) silences.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// A progress bar for a stage of known length, or nothing when quiet.
#[derive(Clone)]
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
        bar.enable_steady_tick(Duration::from_millis(200));
        Self { bar: Some(bar) }
    }

    /// A progress that shows nothing.
    pub fn hidden() -> Self {
        Self { bar: None }
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

    /// Prints a line above the bar (or plainly to stderr when hidden and not quiet).
    pub fn println(&self, line: impl AsRef<str>) {
        match &self.bar {
            Some(b) => b.println(line.as_ref()),
            None => eprintln!("{}", line.as_ref()),
        }
    }
}
