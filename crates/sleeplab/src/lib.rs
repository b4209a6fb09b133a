//! # sleeplab
//!
//! Measure how long waiting really takes, and wait precisely without burning a core.
//!
//! * [`wait`]: every Linux wait mechanism as a named, listable row: one-shot
//!   [`wait::Mechanism`]s (nanosleep, clock_nanosleep, select, poll, epoll, timerfd, futex,
//!   condvar, yield, spin…) and periodic [`wait::PeriodicMechanism`]s (timerfd interval,
//!   POSIX timers, setitimer, sleep loops, busy wait, the [`precise::Ticker`]), each of
//!   which resumes toward the same deadline when a signal interrupts it.
//! * [`precise`]: [`precise::PreciseSleeper`] and the drift-free [`precise::Ticker`], plus
//!   the contender strategies they are measured against.
//! * [`clock`]: the monotonic clock and the [`clock::Env`] trait that lets the same
//!   algorithms run in virtual time.
//! * [`system`]: timer slack, CPU affinity, scheduling policy, memory locking and the
//!   machine fingerprint.

pub mod clock;
pub mod precise;
mod sys;
pub mod system;
pub mod wait;
