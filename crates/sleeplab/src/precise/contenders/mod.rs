//! The strategies [`Precise`](super::Precise) is measured against, one small type each,
//! all implementing [`WaitStrategy`](super::WaitStrategy) over any
//! [`Env`](crate::clock::Env).

mod abs_sleep;
mod fixed_margin;
mod pure_spin;
mod registry;
mod sdl_precise;
mod seed_hybrid;
mod std_sleep;

pub use abs_sleep::AbsSleep;
pub use fixed_margin::FixedMargin;
pub use pure_spin::PureSpin;
pub use registry::{STRATEGIES, StrategyInfo, UnknownStrategy, strategies, strategy_by_name};
pub use sdl_precise::SdlPrecise;
pub use seed_hybrid::SeedHybrid;
pub use std_sleep::StdSleep;
