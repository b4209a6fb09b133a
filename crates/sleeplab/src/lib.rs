//! # sleeplab
//!
//! Measure how long waiting really takes, and wait precisely without burning a core.
//!
//! * [`wait`]: every Linux wait mechanism as a named, listable row: one-shot
//!   [`wait::Mechanism`]s (nanosleep, clock_nanosleep, select, poll, epoll, timerfd, futex,
//!   condvar, yield, spin…) and periodic [`wait::PeriodicMechanism`]s (timerfd interval,
//!   POSIX timers, setitimer, sleep loops, busy wait, the [`precise::Ticker`]), each of
//!   which resumes toward the same deadline when a signal interrupts it.
//! * [`precise`]: the product: [`precise::PreciseSleeper`], its builder and the
//!   trade-off it states, the drift-free [`precise::Ticker`], their reports and
//!   statistics, and the option table every binding goes through.
//! * [`lab`]: what the sleeper is measured with: the strategies it is compared to (by
//!   name and setting), recorded traces, replays, the oracle, a virtual clock.
//! * [`duration`]: the one grammar of durations as text (`250us`, `1.5ms`, `1μs`) and
//!   the units they are written in.
//! * [`clock`]: the monotonic clock and the [`clock::Env`] trait that lets the same
//!   algorithms run in virtual time.
//! * [`system`]: timer slack, CPU affinity, scheduling policy, memory locking and the
//!   machine fingerprint.
//!
//! # Cargo features
//!
//! * `tokio`: the async sleeps and interval in tokio's own reactor
//!   ([`precise::asleep`]'s `ReactorTimer`, `ReactorInterval`, `sleep_until_tokio`) and
//!   the lab's tokio rows.
//! * `async-io`, `io-uring`: the lab's rows for async-io's `Timer` and io_uring's
//!   timeouts (without them those rows are listed as unavailable).
//! * `serde`, `schema`: serialization of the lab's results, and their JSON Schema.
//!
//! Items that need a feature carry its name in these docs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod clock;
pub mod duration;
pub mod lab;
pub mod precise;
mod sys;
pub mod system;
mod usage;
pub mod wait;

/// The README's Rust snippets, compiled (and run unless marked `no_run`) as doc tests, so
/// the front page cannot drift from the API. Some use `asleep`'s tokio types, so they are
/// tested with the feature `tokio` (`cargo test --workspace` turns it on: the CLI asks for
/// it); `tests/from_outside.rs` builds the README's `Cargo.toml` lines and `main` in a
/// crate of their own, warnings denied.
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../../../README.md")]
struct ReadmeSnippets;

/// docs/ASYNC.md's Rust snippets (tokio's types among them), as for the README.
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../../../docs/ASYNC.md")]
struct AsyncDocSnippets;
