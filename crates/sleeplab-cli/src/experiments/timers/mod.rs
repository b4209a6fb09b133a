//! `sleeplab timers`: periodic timers compared (seed 004), validated against cyclictest.
//!
//! Each cell runs one mechanism at one period for one contiguous stretch of `seconds`
//! on `threads` measuring threads at once (each with its own timer), and accounts every
//! wake against the absolute schedule `t0 + k·P` (`crate::ticks`): ticks expected and
//! received, missed ticks (overruns), the seed's interval error, lateness per scheduled
//! tick, drift, CPU and context switches. Cells are interleaved period-major (every
//! mechanism at 100 ms, then every mechanism at 50 ms, …) inside load and timer-slack
//! levels. The result renders as the seed's table per period ([`render`]), as a
//! cyclictest-style histogram file ([`write_histogram`]), JSON and CSV.

mod csv_out;
mod experiment;
mod histogram;
pub mod mechanisms;
mod render;
mod run;
pub use csv_out::{CSV_COLUMNS, to_csv};
pub use histogram::{histogram_text, write_histogram};
pub use render::render;
pub use run::{cell_count, run};

pub use sleeplab_results::timers::*;
