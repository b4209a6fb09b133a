//! Statistics shared by every experiment, numbers only: a bounded-memory recorder of
//! samples, the summary it produces, confidence intervals (of a mean; of a quantile,
//! from order statistics: [`quantile_ci`]), quantiles under the quantile rule, the named
//! statistics ([`Stat`]) and the re-check of quantiles read from files. What a sentence
//! may say about these numbers lives beside the report (`claim`).

mod ci;
pub mod quantile;
pub mod quantile_ci;
mod recheck;
mod recorder;
mod stat;
mod summary;
pub mod units;

pub use ci::{mean_ci, t_quantile};
pub use quantile::{min_samples, quantile_sorted, resolves, tail_quantile, tail_quantile_i64};
pub use quantile_ci::{CI_LEVEL, Ci, ci_below};
pub use recheck::recheck_quantiles;
pub use recorder::{Recorder, RecorderConfig};
pub use stat::Stat;
pub use summary::{Summary, summarize};
pub use units::{MIN_RUNS, MIN_UNITS, Unit, UnitIntervals, ratio_ci};
