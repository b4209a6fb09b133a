//! `sleeplab sweep`: requested duration × mechanism × load (× timer slack) → how long
//! the wait really took. The rigorous successor of seed 000's TimerTest.
//!
//! Cells are interleaved: the run makes `rounds` passes over every cell, each pass
//! taking a share of the cell's samples, so a slow drift of the machine spreads over
//! all cells instead of biasing one. Within a pass, load levels are the outer loop (the
//! busy threads are started once per level), then timer slack, then mechanism and
//! duration.

mod csv_out;
mod render;
mod run;
pub use csv_out::{CSV_COLUMNS, to_csv};
pub use render::render;
pub use run::run;

pub use sleeplab_results::sweep::*;

use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab sweep`.
impl Experiment for SweepConfig {
    const NAME: &'static str = sleeplab_results::sweep::NAME;
    type Data = SweepData;

    /// One step per measured cell and round.
    fn steps(&self) -> u64 {
        self.planned_cells().len() as u64 * self.timer_slacks_ns.len().max(1) as u64 * self.rounds
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<SweepData>> {
        run(self, ctx)
    }

    fn render(
        data: &SweepData,
        machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data, machine)
    }

    fn csv(data: &SweepData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
