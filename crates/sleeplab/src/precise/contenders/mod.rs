//! The strategies [`Precise`](super::Precise) is measured against, one small type each,
//! all implementing [`WaitStrategy`](super::WaitStrategy) over any
//! [`Env`](crate::clock::Env).

mod abs_sleep;
mod fixed_margin;
mod pure_spin;
mod sdl_precise;
mod seed_hybrid;
mod std_sleep;

pub use abs_sleep::AbsSleep;
pub use fixed_margin::FixedMargin;
pub use pure_spin::PureSpin;
pub use sdl_precise::SdlPrecise;
pub use seed_hybrid::SeedHybrid;
pub use std_sleep::StdSleep;

use super::report::SleepReport;

/// One millisecond in ns: the fixed sleep quantum of the seed and SDL strategies.
pub(crate) const ONE_MS: u64 = 1_000_000;

/// The report of a wait whose deadline had already passed when it began.
pub(crate) fn already_past(start: u64, deadline: u64) -> SleepReport {
    SleepReport::from_instants(start, deadline, start, start, None, 0)
}
