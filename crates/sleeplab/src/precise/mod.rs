//! Precise sleeping: wake within microseconds of a deadline while using little CPU.
//!
//! * [`PreciseSleeper`]: an absolute native sleep to `deadline − margin`, then a spin to
//!   the deadline. The margin is learned online from the oversleep of the native phase
//!   by a [`MarginEstimator`] (the p99 of a 512-wait window, milliseconds included, with
//!   a bounded instant rise and a quick release), and bounded per wait by the caller's
//!   [`Tradeoff`]: a lateness tolerance, a [`CpuBudget`] (by default 5 % of the wait, at
//!   least 500 µs, lifted on coarse schedulers) and an optional early tolerance. By
//!   default the sleeper sets the thread's timer slack to 1 ns ([`SlackPolicy`]) and
//!   never returns early.
//! * [`Ticker`]: a drift-free schedule `start + k·period` on a sleeper, with tokio's
//!   [`MissedTickBehavior`]s (by default `Skip`, unlike tokio's `Burst`); a zero period
//!   is refused ([`TickerError`]); the arithmetic is the pure function [`next_tick`].
//! * [`asleep`]: precise sleeps for async code. On tokio (cargo feature `tokio`),
//!   [`ReactorInterval`] for a loop and [`ReactorTimer`] for one-shots wait in the
//!   runtime's own reactor, one kernel wake per deadline, and spin the learned margin on
//!   the worker (at most 1 % of each wait by default, `with_cpu_budget_percent` to raise
//!   it). On any executor, `sleep_until(deadline).await`: one timer thread makes one
//!   precise sleep to the earliest deadline of every task and wakes what is due.
//! * [`OPTIONS`]: every option of the sleeper once (name, kind, range, unit, doc; the
//!   default is the builder's), which the C and Python bindings and the lab's strategy
//!   settings all go through ([`PreciseSleeperBuilder::set`]).
//!
//! The lab's tools (the strategies the sleeper is measured against, recorded traces,
//! replays, the oracle, a virtual clock) are in `sleeplab::lab`.
//!
//! Everything is generic over [`Env`](crate::clock::Env) and takes time only from it.
//!
//! # Sleeping precisely
//!
//! ```
//! use std::time::Duration;
//! use sleeplab::precise::PreciseSleeper;
//!
//! let mut sleeper = PreciseSleeper::new(); // sets this thread's timer slack to 1 ns
//! let report = sleeper.sleep(Duration::from_millis(2));
//! assert!(report.woke_ns >= report.deadline_ns); // never early
//! println!(
//!     "late by {} ns, spun {} ns, margin {} ns, slack {:?} ns",
//!     report.lateness_ns, report.spin_ns, report.margin_ns, sleeper.timer_slack_ns()
//! );
//! let stats = sleeper.stats();
//! assert_eq!(stats.count, 1);
//! ```
//!
//! # A periodic loop
//!
//! ```
//! use std::time::Duration;
//! use sleeplab::precise::{MissedTickBehavior, Ticker};
//!
//! let mut ticker = Ticker::new(Duration::from_millis(1))
//!     .with_missed_tick_behavior(MissedTickBehavior::Skip);
//! for _ in 0..5 {
//!     let tick = ticker.tick();
//!     // Skip keeps the original grid start + k·period (exact integers, no drift).
//!     assert_eq!((tick.scheduled_ns - ticker.start_ns()) % 1_000_000, 0);
//!     assert!(tick.woke_ns >= tick.scheduled_ns);
//! }
//! ```
//!
//! # The same code in virtual time
//!
//! ```
//! use sleeplab::lab::{NativeWake, VirtualEnv};
//! use sleeplab::precise::PreciseSleeper;
//!
//! // Native sleeps oversleep 30 µs, then one is interrupted by a signal after 1 µs.
//! let env = VirtualEnv::starting_at(1_000_000)
//!     .with_script(vec![NativeWake::Late(30_000), NativeWake::Interrupted(1_000)]);
//! let mut sleeper = PreciseSleeper::new_virtual(env);
//! for _ in 0..100 {
//!     let r = sleeper.sleep_for_ns(16_666_667);
//!     assert!(r.woke_ns >= r.deadline_ns);
//! }
//! println!("margin learned: {} ns", sleeper.margin_ns());
//! ```
//!
#![cfg_attr(
    feature = "tokio",
    doc = "[`ReactorInterval`]: asleep::ReactorInterval\n[`ReactorTimer`]: asleep::ReactorTimer"
)]
// Without the feature the reactor types do not exist: their links lead to `asleep`.
#![cfg_attr(
    not(feature = "tokio"),
    doc = "[`ReactorInterval`]: asleep\n[`ReactorTimer`]: asleep"
)]

pub mod asleep;
mod builder;
mod by_name;
pub(crate) mod contention;
mod estimator;
pub(crate) mod options;
pub(crate) mod precise_strategy;
mod sleep_report;
mod sleeper;
pub(crate) mod spin;
pub mod spin_log;
mod ticker;
mod tradeoff;
mod window;

pub use builder::PreciseSleeperBuilder;
pub use estimator::{EstimatorConfig, MarginEstimator, Observation};
pub use options::{OPTIONS, OptionError, OptionKind, OptionValue, SleeperOption};
pub use sleep_report::{SleepReport, SleepStats};
pub use sleeper::{PreciseSleeper, SlackPolicy};
pub use spin::SpinStrategy;
pub use ticker::{MissedTickBehavior, Tick, Ticker, TickerError, next_tick};
pub use tradeoff::{ContentionPolicy, CpuBudget, HostPolicy, SlicePolicy, Tradeoff};
