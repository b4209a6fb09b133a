//! One-shot waits: every Linux call that waits for a requested duration, as a registry
//! of named rows.
//!
//! A [`Mechanism`] row describes one way to wait (its name, what it calls, the unit its
//! API takes, whether it takes a duration at all) and carries its constructor.
//! [`Waiter::new`] creates the per-thread state it needs (an epoll or timer fd, a futex
//! word…), and [`Waiter::wait`] waits for a requested number of nanoseconds.
//!
//! `timerfd-interval` is a periodic timer measured call by call: armed once, each call
//! takes one expiration. A read returns every expiration since the last read, so a call
//! returns at once while expirations that passed before it are still unread, and a
//! single call can be shorter than requested. That is reported, never hidden.
//!
//! # Adding a mechanism
//! Write a type implementing [`OneShot`] and its `const` row in the family file, and
//! list the row in [`MECHANISMS`] below (listing order). Nothing else names it.

mod async_io;
mod futex;
mod poll;
mod sleep;
mod spin;
mod timerfd;
mod tokio;
mod uring;

pub(crate) use spin::spin_until;

use super::{Support, WaitError, assert_unique_names};
use std::fmt;

/// What a mechanism family waits on, for grouping in listings and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Sleep calls: `nanosleep`, `clock_nanosleep`, `std::thread::sleep`.
    Sleep,
    /// The timeout of an I/O multiplexer: `select`, `poll`, `epoll`.
    Poll,
    /// A timer file descriptor read to expiry.
    Timerfd,
    /// A timed wait on a synchronisation primitive: futex, condition variable.
    Sync,
    /// No sleep at all: yielding or spinning.
    Busy,
    /// An io_uring timeout: an `IORING_OP_TIMEOUT` request, or `io_uring_enter`'s own.
    Uring,
    /// An async runtime's timer (tokio, async-io), awaited on a runtime of its own.
    Async,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Sleep => "sleep",
            Family::Poll => "poll",
            Family::Timerfd => "timerfd",
            Family::Sync => "sync",
            Family::Busy => "busy",
            Family::Uring => "io_uring",
            Family::Async => "async",
        })
    }
}

/// The per-thread state of a one-shot mechanism: waits for a requested duration.
pub trait OneShot: Send {
    /// Waits for `ns` nanoseconds (never less, except where the module documentation
    /// says so); a signal does not end the wait.
    fn wait(&mut self, ns: u64);

    /// Waits for `ns` nanoseconds; the clock reads that bound the wait, ns. By default
    /// read around [`wait`](Self::wait); an async mechanism reads them inside its
    /// future, from the call that creates the future to the first line after its
    /// `.await`, so entering and leaving the runtime is not part of the wait.
    #[inline]
    fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
        let t0 = crate::clock::monotonic_ns();
        self.wait(ns);
        (t0, crate::clock::monotonic_ns())
    }
}

/// Creates a mechanism's per-thread state, or says why this machine cannot.
pub type NewOneShot = fn() -> Result<Box<dyn OneShot>, WaitError>;

/// A named wait mechanism: a row of the registry, carrying its constructor.
#[derive(Clone, Copy)]
pub struct Mechanism {
    /// The name used on the command line and in results, e.g. `clock-nanosleep-abs`.
    pub name: &'static str,
    /// One line on what it calls.
    pub description: &'static str,
    /// Which family it belongs to.
    pub family: Family,
    /// The granularity of the API's timeout argument in ns (1 for ns APIs, 1000 for
    /// `select`, 1 000 000 for `poll`/`epoll`); requests are rounded up to it.
    pub unit_ns: u64,
    /// The smallest request it accepts (timerfd cannot express 0: a zero timer is a
    /// disarmed timer, and a read would block forever).
    pub min_ns: u64,
    /// False for mechanisms that ignore the duration (`yield`): they are measured at 0 only.
    pub takes_duration: bool,
    /// Whether the calling thread's timer slack delays its wake: false where the kernel
    /// arms the timer without the thread's slack (a timerfd's expiry, an io_uring
    /// timeout, `futex_waitv`, unlike `FUTEX_WAIT`), where the call never sleeps (the
    /// busy ones), and where another thread's timer wakes it (a multi-thread runtime's
    /// worker; async-io's timerfd).
    pub slack_applies: bool,
    /// The row this one is a near-copy of (the same wait through another entry point or
    /// runtime flavour: `tokio-sleep-until` of `tokio-sleep`), which a short survey
    /// measures in its place; `None` for a row of its own.
    pub variant_of: Option<&'static str>,
    /// Creates the per-thread state.
    pub new: NewOneShot,
}

impl Mechanism {
    /// Whether a wait of this mechanism can block (put the thread to sleep): all but
    /// the [`Family::Busy`] ones, which yield or spin.
    pub fn blocks(&self) -> bool {
        self.family != Family::Busy
    }

    /// A row for a mechanism that takes any duration in ns (the common case); the
    /// others set the fields by struct update.
    pub(crate) const fn ns(
        name: &'static str,
        family: Family,
        description: &'static str,
        new: NewOneShot,
    ) -> Self {
        Self {
            name,
            description,
            family,
            unit_ns: 1,
            min_ns: 0,
            takes_duration: true,
            slack_applies: true,
            variant_of: None,
            new,
        }
    }

    /// This row, its wake not delayed by the thread's timer slack.
    pub(crate) const fn without_slack(self) -> Self {
        Self {
            slack_applies: false,
            ..self
        }
    }

    /// This row, a near-copy of the row named `of`.
    pub(crate) const fn variant_of(self, of: &'static str) -> Self {
        Self {
            variant_of: Some(of),
            ..self
        }
    }

    /// Checks whether this machine supports the mechanism by creating its state once.
    pub fn support(&self) -> Support {
        Support::of((self.new)())
    }

    /// Whether a request of `ns` is meaningful for this mechanism.
    pub fn accepts(&self, ns: u64) -> bool {
        ns >= self.min_ns && (self.takes_duration || ns == 0)
    }
}

impl PartialEq for Mechanism {
    /// Rows are equal when their names are (names are unique in the registry).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Mechanism {}

impl fmt::Debug for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mechanism")
            .field("name", &self.name)
            .field("family", &self.family)
            .field("unit_ns", &self.unit_ns)
            .field("min_ns", &self.min_ns)
            .field("takes_duration", &self.takes_duration)
            .field("slack_applies", &self.slack_applies)
            .field("variant_of", &self.variant_of)
            .finish_non_exhaustive()
    }
}

/// The registry, in listing order.
pub const MECHANISMS: &[Mechanism] = &[
    sleep::STD_SLEEP,
    sleep::NANOSLEEP,
    sleep::CLOCK_NANOSLEEP,
    sleep::CLOCK_NANOSLEEP_ABS,
    poll::SELECT,
    poll::PSELECT,
    poll::POLL,
    poll::PPOLL,
    poll::EPOLL,
    poll::EPOLL_PWAIT2,
    timerfd::FRESH,
    timerfd::REUSE,
    timerfd::INTERVAL,
    futex::FUTEX,
    futex::FUTEX_WAITV,
    futex::CONDVAR,
    uring::TIMEOUT,
    uring::TIMEOUT_ABS,
    uring::WAIT,
    tokio::SLEEP,
    tokio::SLEEP_UNTIL,
    tokio::SLEEP_MT,
    tokio::SLEEP_UNTIL_MT,
    async_io::TIMER,
    spin::YIELD,
    spin::SPIN,
];

assert_unique_names!(MECHANISMS);

/// Every one-shot mechanism this crate knows, in a stable order.
pub fn mechanisms() -> &'static [Mechanism] {
    MECHANISMS
}

/// Looks a mechanism up by name.
pub fn find(name: &str) -> Option<&'static Mechanism> {
    MECHANISMS.iter().find(|m| m.name == name)
}

/// The per-thread state of one mechanism, ready to wait.
///
/// Create one per thread (it owns fds and is not `Sync`), then call [`wait`](Self::wait)
/// as often as needed. Dropping it releases its fds.
pub struct Waiter {
    mechanism: &'static Mechanism,
    state: Box<dyn OneShot>,
}

impl fmt::Debug for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiter")
            .field("mechanism", &self.mechanism.name)
            .finish()
    }
}

impl Waiter {
    /// Creates the state for mechanism `name`.
    pub fn new(name: &str) -> Result<Self, WaitError> {
        let mechanism = find(name).ok_or_else(|| WaitError::Unknown(name.to_string()))?;
        Self::of(mechanism)
    }

    /// Creates the state for the row `mechanism`.
    pub fn of(mechanism: &'static Mechanism) -> Result<Self, WaitError> {
        Ok(Self {
            mechanism,
            state: (mechanism.new)()?,
        })
    }

    /// The mechanism this waiter implements.
    pub fn mechanism(&self) -> &'static Mechanism {
        self.mechanism
    }

    /// Waits for `ns` nanoseconds with this mechanism.
    ///
    /// Mechanisms that cannot express the request (see [`Mechanism::accepts`]) treat it
    /// as their minimum; the sweep never asks them to.
    #[inline]
    pub fn wait(&mut self, ns: u64) {
        self.state.wait(ns);
    }

    /// Waits for `ns` nanoseconds; the clock reads that bound the wait (see
    /// [`OneShot::wait_timed`]): around the call, or for an async mechanism inside its
    /// future.
    #[inline]
    pub fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
        self.state.wait_timed(ns)
    }
}

/// Rounds `ns` up to a whole number of `unit`s, saturating.
#[inline]
pub(crate) fn ceil_div(ns: u64, unit: u64) -> u64 {
    ns / unit + u64::from(ns % unit != 0)
}

/// The time left until `deadline`, or `None` once it has passed.
#[inline]
pub(crate) fn remaining(deadline: u64) -> Option<u64> {
    let now = crate::clock::monotonic_ns();
    (now < deadline).then(|| deadline - now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_ns;

    #[test]
    fn names_are_unique_and_findable() {
        for (i, m) in mechanisms().iter().enumerate() {
            assert_eq!(find(m.name), Some(m));
            assert!(mechanisms()[..i].iter().all(|o| o.name != m.name));
        }
        assert!(find("nope").is_none());
        assert!(matches!(Waiter::new("nope"), Err(WaitError::Unknown(_))));
    }

    /// A variant names a row of its own in the registry, of its family; a wait that
    /// never sleeps has no timer for the slack to delay.
    #[test]
    fn variants_name_rows_of_their_own_and_busy_waits_take_no_slack() {
        for m in mechanisms() {
            if let Some(of) = m.variant_of {
                let base = find(of).unwrap_or_else(|| panic!("{}: no row {of}", m.name));
                assert_eq!(
                    (base.variant_of, base.family),
                    (None, m.family),
                    "{}",
                    m.name
                );
            }
            if !m.blocks() {
                assert!(!m.slack_applies, "{}", m.name);
            }
        }
        assert!(mechanisms().iter().any(|m| m.variant_of.is_some()));
        assert!(mechanisms().iter().any(|m| !m.slack_applies));
    }

    #[test]
    fn ceil_div_rounds_up() {
        assert_eq!(ceil_div(0, 1000), 0);
        assert_eq!(ceil_div(1, 1000), 1);
        assert_eq!(ceil_div(1000, 1000), 1);
        assert_eq!(ceil_div(1001, 1000), 2);
        assert_eq!(ceil_div(u64::MAX, 1), u64::MAX);
    }

    /// The waiter of `m`, or `None` (said) where this machine or build lacks it; under
    /// CI (`CI` set, as scripts/test.sh runs it, every feature built) none may be lacking.
    fn waiter_or_skip(m: &'static Mechanism) -> Option<Waiter> {
        match Waiter::of(m) {
            Ok(w) => Some(w),
            Err(e) if std::env::var_os("CI").is_some() => panic!("{} under CI: {e}", m.name),
            Err(e) => {
                eprintln!("skipping {}: {e}", m.name);
                None
            }
        }
    }

    /// Every mechanism that takes a duration waits at least that long (timerfd-interval
    /// follows its own schedule: see its tests).
    #[test]
    fn every_mechanism_is_never_early() {
        for m in mechanisms() {
            let Some(mut w) = waiter_or_skip(m) else {
                continue;
            };
            for ns in [0u64, 1, 1_000, 50_000, 1_500_000] {
                if !m.accepts(ns) || m.name == "timerfd-interval" {
                    continue;
                }
                for _ in 0..3 {
                    let t0 = monotonic_ns();
                    w.wait(ns);
                    let dt = monotonic_ns() - t0;
                    assert!(dt >= ns, "{} waited {dt} ns for a {ns} ns request", m.name);
                }
            }
        }
    }

    /// A timed wait's own reads lie between the reads around the call and are at least
    /// the request apart (an async row reads them inside its future).
    #[test]
    fn timed_waits_lie_inside_the_call_and_are_never_early() {
        for m in mechanisms() {
            let Some(mut w) = waiter_or_skip(m) else {
                continue;
            };
            for ns in [1u64, 20_000] {
                if !m.accepts(ns) || m.name == "timerfd-interval" {
                    continue;
                }
                let before = monotonic_ns();
                let (t0, t1) = w.wait_timed(ns);
                let after = monotonic_ns();
                assert!(before <= t0 && t0 <= t1 && t1 <= after, "{}", m.name);
                assert!(
                    t1 - t0 >= ns,
                    "{} waited {} ns for {ns} ns",
                    m.name,
                    t1 - t0
                );
            }
        }
    }

    /// A row the build or the kernel lacks says why, naming the feature or the call.
    #[test]
    fn unavailable_rows_give_their_reason() {
        for m in mechanisms() {
            if let Support::Unsupported(reason) = m.support() {
                assert!(!reason.is_empty(), "{}", m.name);
                if m.family == Family::Async || m.family == Family::Uring {
                    assert!(
                        reason.contains("cargo feature") || reason.contains("io_uring"),
                        "{}: {reason}",
                        m.name
                    );
                }
            }
        }
    }

    #[test]
    fn yield_only_accepts_zero() {
        let y = find("yield").unwrap();
        assert!(y.accepts(0));
        assert!(!y.accepts(1));
        let t = find("timerfd").unwrap();
        assert!(!t.accepts(0));
        assert!(t.accepts(1));
    }
}
