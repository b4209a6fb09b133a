//! `sleeplab explain`: why waits are late, from the kernel's own timestamps. Each cell
//! (a mechanism at a requested duration, under a load and a timer slack) waits
//! `iterations` times on one measuring thread while the kernel's tracepoints are
//! recorded for it; each wake's lateness is then split into its components (timer
//! slack, timer interrupt, run queue, …: [`sleeplab_account`]) and the cell summarised.
//! Cells are interleaved in rounds, as in `sweep`.
//!
//! Without tracing (not root, no tracefs, an event missing) it says why in a note and
//! gives the partial account `/proc` allows: run-queue time and timer slack.
//!
//! `program`: the same account for a program of the user's own, followed while it runs.

mod csv_out;
pub(crate) mod program;
mod render;
mod run;
pub use csv_out::{CSV_COLUMNS, to_csv};
pub use render::render;
pub use run::{WARMUP, run};

pub use sleeplab_results::explain::*;

use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab explain`.
impl Experiment for ExplainConfig {
    const NAME: &'static str = sleeplab_results::explain::NAME;
    type Data = ExplainData;

    /// One step per cell and round.
    fn steps(&self) -> u64 {
        self.cells() as u64 * self.rounds
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<ExplainData>> {
        run(self, ctx)
    }

    fn render(
        data: &ExplainData,
        machine: sleeplab_account::Machine,
        hints: crate::experiments::Wording,
    ) -> String {
        render(data, machine, hints)
    }

    fn csv(data: &ExplainData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
