//! Ctrl-C: the first SIGINT asks the running experiment to stop and keep what it has
//! measured (the run is then marked incomplete and the process exits 130); a second
//! one exits at once. A measurement asks whether to stop through a [`Stop`] (Ctrl-C, or
//! a condition a test or the monitor injects).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What the first Ctrl-C or SIGTERM prints, when a command has nothing to save.
static STOP_MESSAGE: OnceLock<&'static str> = OnceLock::new();

/// Replaces the first interruption's "saving what was measured" line with `message`
/// (for a command that saves nothing, e.g. `monitor`). The first call wins.
#[cfg(feature = "monitor")]
pub fn say_on_stop(message: &'static str) {
    let _ = STOP_MESSAGE.set(message);
}

/// The exit code after an interruption (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Installs the SIGINT/SIGTERM handler. Safe to call more than once.
pub fn install() {
    // An error here means a handler is already installed; that one does the job.
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the user means it; the system settings a `tune` changed are
            // put back first (what this misses, the next run restores).
            crate::tuning::journal::restore_active();
            std::process::exit(EXIT_INTERRUPTED);
        }
        match STOP_MESSAGE.get() {
            Some(message) => eprintln!("\n{message}"),
            None => eprintln!(
                "\nsleeplab: interrupted; saving what was measured (Ctrl-C again to quit now)"
            ),
        }
    });
}

/// Whether the user asked to stop.
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Asks a running measurement (an experiment, the monitor, a periodic run) to stop and
/// keep what it has measured.
#[derive(Clone)]
pub struct Stop(Arc<dyn Fn() -> bool + Send + Sync>);

impl Stop {
    /// Stops on Ctrl-C (SIGINT, SIGTERM): what the commands and the survey use.
    pub fn on_interrupt() -> Self {
        Self(Arc::new(interrupted))
    }

    /// Stops once `when` says so (tests: "after the third batch").
    pub fn when(when: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(when))
    }

    /// Whether to stop now.
    #[inline]
    pub fn requested(&self) -> bool {
        (self.0)()
    }
}

impl fmt::Debug for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stop")
    }
}
