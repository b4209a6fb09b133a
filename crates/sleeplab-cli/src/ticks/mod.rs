//! Periodic runs, tick by tick, as `sleeplab timers` and `sleeplab monitor` both count
//! them: the one loop that drives a periodic timer through a plan of deadlines
//! ([`run`]), and the accounting of the wakes against the absolute schedule `t0 + k·P`
//! ([`account`]): every scheduled tick a wake delivered, each with its own lateness, the
//! missed ticks and the early wakes. The monitor's precise cells account the precise
//! sleeper's wakes on its grid the same way, so a lateness or a missed tick means one
//! thing in both commands.

mod drive;

pub use drive::{Plan, RunReport, run};
pub use sleeplab_results::{Schedule, Wake, account, windows};
