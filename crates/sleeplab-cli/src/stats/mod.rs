//! Statistics shared by every experiment: a bounded-memory recorder of samples, the
//! summary it produces, confidence intervals, and quantiles.

mod ci;
mod quantile;
mod recorder;
mod summary;

pub use ci::{mean_ci, t_quantile};
pub use quantile::quantile_sorted;
pub use recorder::{Recorder, RecorderConfig};
pub use summary::{Summary, summarize};
