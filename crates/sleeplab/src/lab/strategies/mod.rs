//! The strategies [`Precise`](crate::lab::Precise) is measured against, one small type
//! each, all implementing [`WaitStrategy`](crate::lab::WaitStrategy) over any
//! [`Env`](crate::clock::Env); their registry and their settings by name.

mod abs_sleep;
mod fixed_margin;
mod pure_spin;
mod registry;
mod sdl_precise;
mod seed_hybrid;
mod setting_name;
mod settings;
mod std_sleep;
mod wait_from;

pub use abs_sleep::AbsSleep;
pub use fixed_margin::FixedMargin;
pub use pure_spin::PureSpin;
pub use registry::{STRATEGIES, StrategyInfo, strategies};
pub use sdl_precise::SdlPrecise;
pub use seed_hybrid::SeedHybrid;
pub use settings::{
    ParamInfo, SettingError, StrategySetting, UnknownStrategy, strategy_by_name,
    strategy_by_setting,
};
pub use std_sleep::StdSleep;
