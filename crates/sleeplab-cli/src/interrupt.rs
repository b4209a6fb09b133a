//! Ctrl-C: the first SIGINT asks the running experiment to stop and keep what it has
//! measured (the run is then marked incomplete and the process exits 130); a second
//! one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit code after an interruption (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Installs the SIGINT/SIGTERM handler. Safe to call more than once.
pub fn install() {
    // An error here means a handler is already installed; that one does the job.
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the user means it.
            std::process::exit(EXIT_INTERRUPTED);
        }
        eprintln!("\nsleeplab: interrupted; saving what was measured (Ctrl-C again to quit now)");
    });
}

/// Whether the user asked to stop.
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Marks the run as interrupted (used by tests and by stages that fail hard).
pub fn request_stop() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}
