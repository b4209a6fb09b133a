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
//!   [`MissedTickBehavior`]s; the arithmetic is the pure function [`next_tick`].
//! * [`WaitStrategy`]: the interface shared by our [`Precise`] strategy and the
//!   contenders it is measured against (`std-sleep`, `clock-nanosleep-abs`, `spin`,
//!   `seed-hybrid`, `sdl-precise`, `fixed-margin`), listed by [`strategies`] and built by
//!   name with [`strategy_by_name`], or at any setting with [`strategy_by_setting`]
//!   (`seed-hybrid:x=2`, `fixed-margin:250us`, `precise:q=0.999`; [`ContenderSetting`]).
//! * [`Trace`]: a recorded native-oversleep trace (the `record_trace` example records
//!   one); [`replay`] runs any strategy through it in virtual time, and the oracle
//!   ([`oracle_at_cpu`], [`oracle_at_p99`], [`oracle_frontier`]) gives the best fixed
//!   margin in hindsight on it, the frontier no online estimator can be expected to beat.
//! * [`VirtualEnv`]: a virtual clock with scripted oversleeps, interruptions and CPU
//!   accounting, on which all of the above run unchanged (tests, the simulator).
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
//! assert!(report.woke >= report.deadline); // never early
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
//!     assert_eq!((tick.scheduled - ticker.start_ns()) % 1_000_000, 0);
//!     assert!(tick.woke >= tick.scheduled);
//! }
//! ```
//!
//! # The same code in virtual time
//!
//! ```
//! use sleeplab::precise::{PreciseSleeper, VirtualEnv, Wake};
//!
//! // Native sleeps oversleep 30 µs, then one is interrupted by a signal after 1 µs.
//! let env = VirtualEnv::starting_at(1_000_000)
//!     .with_script(vec![Wake::Late(30_000), Wake::Interrupted(1_000)]);
//! let mut sleeper = PreciseSleeper::new_virtual(env);
//! for _ in 0..100 {
//!     let r = sleeper.sleep_for_ns(16_666_667);
//!     assert!(r.woke >= r.deadline);
//! }
//! println!("margin learned: {} ns", sleeper.margin_ns());
//! ```

mod contenders;
mod contention;
mod estimator;
mod oracle;
mod precise_strategy;
mod replay;
mod sleep_report;
mod sleeper;
mod spin;
mod summary;
mod ticker;
mod trace;
mod tradeoff;
pub mod virtual_env;
mod wait_strategy;
mod window;

pub use contenders::{
    AbsSleep, ContenderSetting, FixedMargin, ParamInfo, PureSpin, STRATEGIES, SdlPrecise,
    SeedHybrid, SettingError, StdSleep, StrategyInfo, UnknownStrategy, parse_duration_ns,
    strategies, strategy_by_name, strategy_by_setting,
};
pub use contention::Contention;
pub use estimator::{EstimatorConfig, MarginEstimator, Observation};
pub use oracle::{
    FrontierPoint, fixed_margin_on_trace, oracle_at_cpu, oracle_at_p99, oracle_frontier,
};
pub use precise_strategy::Precise;
pub use replay::{REPLAY_COSTS, REPLAY_RESOLUTION_NS, Replay, replay, replay_with_preemption};
pub use sleep_report::{SleepReport, SleepStats};
pub use sleeper::{PreciseSleeper, PreciseSleeperBuilder, SlackPolicy};
pub use spin::SpinStrategy;
pub use summary::{WaitSummary, quantile_ns};
pub use ticker::{MissedTickBehavior, Tick, Ticker, next_tick};
pub use trace::{TRACE_COLUMNS, TRACE_MAGIC, Trace, TraceError, TraceWait};
pub use tradeoff::{ContentionPolicy, CpuBudget, SlicePolicy, Tradeoff};
pub use virtual_env::{SleepCall, VirtualCosts, VirtualEnv, Wake};
pub use wait_strategy::WaitStrategy;
