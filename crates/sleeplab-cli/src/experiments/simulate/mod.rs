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
//! * `setup`: from the plain [`SimulateOptions`] (what a command line or the survey
//!   asks for) to the recorded [`SimulateConfig`] and the loaded models, with the notes.
//! * `grid`: strategy × interval × model cells, each a pure function of the config.
//! * `data`: the result value ([`SimulateData`]); `render` and `csv_out` print it.
//! * [`rng`]: the seeded PCG streams and integer-only draws that make a seed give the
//!   same numbers on every machine.
//!
//! No real clock is read anywhere on this path; spinning advances virtual time by
//! [`VirtualCosts`](sleeplab::lab::VirtualCosts) and counts as virtual CPU, which is
//! how the simulator predicts CPU use too.

pub(crate) mod csv_out;
mod grid;
pub(crate) mod render;
pub(crate) mod setup;
pub use csv_out::{CSV_COLUMNS, to_csv};
pub use grid::{run as run_grid, run_cell, run_cell_until};
pub use render::render;
pub use setup::{Models, Replay, SimulateOptions};

pub use sleeplab_results::simulate::*;

use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab simulate`.
impl Experiment for SimulateOptions {
    const NAME: &'static str = sleeplab_results::simulate::NAME;
    type Data = SimulateData;

    /// One step per cell.
    fn steps(&self) -> u64 {
        self.cell_count()
    }

    /// Sets the simulation up (unknown strategies and replay mismatches are usage
    /// errors), then simulates every cell on one worker thread per CPU.
    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<SimulateData>> {
        let (config, models, notes) = self.setup()?;
        let mut out = grid::run(&config, &models, ctx, ctx.cpus)?;
        out.notes = notes;
        Ok(out)
    }

    fn render(
        data: &SimulateData,
        _machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data)
    }

    fn csv(data: &SimulateData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
