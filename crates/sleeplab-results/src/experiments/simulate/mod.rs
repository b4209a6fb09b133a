//! The virtual-time scheduler simulator behind `sleeplab simulate` (seed 002, figure 4):
//! the library's production wait strategies run unchanged over
//! [`VirtualEnv`](sleeplab::lab::VirtualEnv), whose "native sleep" follows a model
//! instead of a kernel, so one can ask how a strategy fares on a machine one does not
//! have (a 7 ms scheduler, old Windows at 15.6 ms, a loaded VM) — deterministically and
//! in milliseconds.
//!
//! * `models`: seed 002's fake scheduler ([`SchedulerModel`]) and the replay of a
//!   measured sweep ([`Empirical`], built in `empirical`).
//! * `host`: a virtual machine's host ([`HostModel`]), which interrupts spins (quiet,
//!   fitted from this VM's noise probe) and may punish long ones (busy).
//! * `setup`: from the plain `SimulateOptions` (the CLI's) (what a command line or the survey
//!   asks for) to the recorded [`SimulateConfig`] and the loaded models, with the notes.
//! * `grid` (the CLI's): strategy × interval × model cells, each a pure function of the config.
//! * `data`: the result value ([`SimulateData`]); `render` and `csv_out` print it.
//! * [`rng`]: the seeded PCG streams and integer-only draws that make a seed give the
//!   same numbers on every machine.
//!
//! No real clock is read anywhere on this path; spinning advances virtual time by
//! [`VirtualCosts`](sleeplab::lab::VirtualCosts) and counts as virtual CPU, which is
//! how the simulator predicts CPU use too.

pub mod data;
pub mod empirical;
pub mod host;
pub mod models;
pub mod rng;

pub use data::{SimCell, SimCosts, SimulateConfig, SimulateData};
pub use empirical::{Empirical, ReplayAnchor, ReplayChoice, ReplayError, ReplaySource};
pub use host::{GapQuantile, HostModel, Punishment};
pub use models::{Model, ModelSpec, SchedulerModel};

use crate::experiments::{Point, ResultData};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "simulate";

/// The strategies simulated by default: seed 002's hybrid, SDL's, the fixed margin of
/// the `spin_sleep` crate, the plain sleep, and ours.
pub const DEFAULT_STRATEGIES: [&str; 5] = [
    "std-sleep",
    "fixed-margin",
    "sdl-precise",
    "seed-hybrid",
    "precise",
];

/// The default requested intervals: 1, 2, 5, 10, 20, 50, 100 ms.
pub const DEFAULT_INTERVALS_NS: [u64; 7] = sleeplab_stats::one_two_five(1_000_000);

/// The default scheduler periods: 1 to 10 ms in 1 ms steps (the seed's figure 4).
pub fn default_periods_ns() -> Vec<u64> {
    (1..=10).map(|ms| ms * 1_000_000).collect()
}

/// Seed 002's chance that another thread takes one more scheduler period.
pub const DEFAULT_PREEMPT_PROB: f64 = 0.05;

impl ResultData for SimulateData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// None: virtual time under a model is no measurement of a machine to compare.
    fn points(&self) -> Vec<Point> {
        Vec::new()
    }
}
