//! What `tune` may change on the machine, and how every change is undone.
//!
//! * [`catalogue`]: the settings that apply here, each with what it does and the
//!   command that applies it for good; the ones that do not (and why); the boot-time
//!   ones, reported only;
//! * [`mod@apply`]: a setting in force for one stretch of waits, and undone after: a
//!   per-process one on the measuring thread, a system-wide one through the journal;
//! * [`journal`]: every system-wide write recorded with the value it replaces before it
//!   is made, restored on exit, on Ctrl-C, and after a SIGKILL by the next run.

pub(crate) mod apply;
pub(crate) mod catalogue;
pub(crate) mod journal;

pub use apply::apply;
pub use catalogue::Change;
pub use journal::Journal;

use std::path::PathBuf;

/// Where journals live: `SLEEPLAB_RUN_DIR` when set (tests), else
/// [`journal::DEFAULT_DIR`].
pub fn journal_dir() -> PathBuf {
    std::env::var_os("SLEEPLAB_RUN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(journal::DEFAULT_DIR))
}

/// At the start of every run: restores what a `tune` killed before it could restore
/// left changed, and says so on stderr.
pub fn replay_at_startup() {
    for note in journal::replay_stale(&journal_dir()) {
        eprintln!("sleeplab: {note}");
    }
}

/// Whether this process runs as root (system-wide settings need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
