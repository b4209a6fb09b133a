//! Every Linux wait mechanism, one-shot and periodic, each a named row in a registry.
//!
//! * [`oneshot`]: waits for a requested duration, call by call (`nanosleep`, `select`,
//!   `poll`, `epoll`, timerfd, futex, condvar, yield, spin…). A [`Mechanism`] row names
//!   and describes one and carries its constructor; [`Waiter`] is its per-thread state.
//! * [`periodic`]: timers that fire on an absolute grid `t0 + k·P` (timerfd interval,
//!   epoll on a timerfd, POSIX timers with signal and thread notification, setitimer,
//!   absolute and relative sleep loops, busy wait, the library's [`Ticker`]). A
//!   [`PeriodicMechanism`] row carries its constructor; [`PeriodicTimer`] is armed, waited
//!   on tick by tick, and disarmed.
//!
//! Rules every mechanism follows:
//! * A signal that interrupts a wait does not end it: the wait resumes toward the same
//!   deadline (so an `EINTR` never shows up as an early wakeup).
//! * APIs with a coarse unit (µs for `select`, ms for `poll`/`epoll`) get the request
//!   rounded *up* to that unit, so they never return before the requested time; the
//!   rounding is a finding the sweep shows (a 100 µs `poll` waits at least 1 ms).
//! * The registries are checked when the crate compiles: a row carries its constructor
//!   (no name is matched at run time), and two rows with one name are a compile error.
//!
//! [`Ticker`]: crate::precise::Ticker

#[cfg(feature = "tokio")]
mod async_rt;
pub mod oneshot;
pub mod periodic;

pub use crate::usage::ThreadUsage;
pub use oneshot::{Family, Mechanism, OneShot, Waiter, find, mechanisms};
pub use periodic::{Expiry, Periodic, PeriodicMechanism, PeriodicTimer, Wake};

use crate::sys::OsError;

/// Whether a mechanism works on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// It works.
    Supported,
    /// It does not; the reason says why (e.g. `epoll_pwait2: ENOSYS (kernel < 5.11)`).
    Unsupported(String),
}

impl Support {
    /// `Supported` when `built` succeeded, else the error as the reason.
    pub fn of<T>(built: Result<T, WaitError>) -> Self {
        match built {
            Ok(_) => Support::Supported,
            Err(e) => Support::Unsupported(e.to_string()),
        }
    }
}

/// An error creating or running a wait mechanism.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The name is not a known mechanism.
    #[error("unknown wait mechanism {0:?}")]
    Unknown(String),
    /// The mechanism exists but this machine cannot create it.
    #[error("{call}: {source}")]
    Unsupported {
        /// The call that failed.
        call: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A system call failed while arming or waiting.
    #[error("{call} failed: {source}")]
    Failed {
        /// The call that failed.
        call: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The mechanism cannot do what was asked (e.g. a period it cannot express).
    #[error("{0}")]
    Unavailable(String),
    /// The timer is not armed, or its run ended on its own (it covered the ticks it was
    /// armed for, or stopped firing and was given up).
    #[error("the timer is not running")]
    Ended,
    /// The timer's run was cut short by SIGINT or SIGTERM (delivered to a helper process).
    #[error("stopped by SIGINT or SIGTERM")]
    Interrupted,
}

impl WaitError {
    /// A constructor's failure: this machine cannot do the mechanism.
    pub(crate) fn unsupported(e: OsError) -> Self {
        WaitError::Unsupported {
            call: e.call,
            source: e.source,
        }
    }
}

impl From<OsError> for WaitError {
    fn from(e: OsError) -> Self {
        WaitError::Failed {
            call: e.call,
            source: e.source,
        }
    }
}

/// Why a row whose code a cargo feature of this crate leaves out cannot run: the
/// row is listed all the same, as unavailable.
#[cfg_attr(
    all(feature = "tokio", feature = "io-uring", feature = "async-io"),
    allow(dead_code)
)]
pub(crate) fn not_built(feature: &str) -> WaitError {
    WaitError::Unavailable(format!(
        "built without the cargo feature `{feature}` of the sleeplab crate"
    ))
}

/// Whether two names are equal, in a `const` context.
pub(crate) const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Fails the build when two rows of the registry `$rows` (a slice of structs with a
/// `name` field) share a name.
macro_rules! assert_unique_names {
    ($rows:expr) => {
        const _: () = {
            let rows = $rows;
            let mut i = 0;
            while i < rows.len() {
                let mut j = i + 1;
                while j < rows.len() {
                    assert!(
                        !$crate::wait::same_name(rows[i].name, rows[j].name),
                        "two wait mechanisms share a name"
                    );
                    j += 1;
                }
                i += 1;
            }
        };
    };
}
pub(crate) use assert_unique_names;

/// Checks a registry's variants, given as (name, variant_of, family) per row: each names a
/// row of its own (not itself a variant) of the same family, and at least one row is a
/// variant (the field is in use).
#[cfg(test)]
pub(crate) fn assert_variants_name_rows<F: PartialEq + std::fmt::Debug>(
    rows: &[(&str, Option<&str>, F)],
) {
    for (name, of, family) in rows {
        if let Some(of) = of {
            let base = rows.iter().find(|r| r.0 == *of);
            let (_, base_of, base_family) = base.unwrap_or_else(|| panic!("{name}: no row {of}"));
            assert_eq!((base_of, base_family), (&None, family), "{name}");
        }
    }
    assert!(rows.iter().any(|r| r.1.is_some()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_name_comparison() {
        assert!(same_name("poll", "poll"));
        assert!(!same_name("poll", "ppoll"));
        assert!(!same_name("epoll", "ppoll"));
        assert!(same_name("", ""));
    }

    #[test]
    fn errors_read_as_before() {
        let os = || OsError::code("epoll_pwait2", libc::ENOSYS);
        let e = WaitError::unsupported(os()).to_string();
        assert!(e.starts_with("epoll_pwait2: "), "{e}");
        let e = WaitError::from(os()).to_string();
        assert!(e.starts_with("epoll_pwait2 failed: "), "{e}");
        assert_eq!(
            Support::of::<()>(Err(WaitError::Unavailable("no".into()))),
            Support::Unsupported("no".into())
        );
        assert_eq!(Support::of(Ok(1)), Support::Supported);
    }
}
