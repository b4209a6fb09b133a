//! `sleeplab pace`: a fixed-rate loop (seed 002's 60 FPS game loop, figure 1 and the CPU
//! table) run by every precise-sleep contender, interleaved in blocks.
//!
//! Each frame waits until its deadline on an absolute schedule (`block start + k·period`),
//! so every contender targets the same instants; the error of a frame is how late it
//! woke (`woke − deadline`, never negative for these strategies). CPU is the measuring
//! thread's CPU time over the wall time of its blocks. With `--load`, each level's busy
//! threads run while the contenders take their turns at that level.

mod csv_out;
mod run;
pub use csv_out::to_csv;
pub use run::run;

pub use sleeplab_results::pace::*;

use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab pace`.
impl Experiment for PaceConfig {
    const NAME: &'static str = sleeplab_results::pace::NAME;
    type Data = PaceData;
    const HOST_NOISE_LINE: bool = true;

    /// One step per frame of every contender at every load level, in every run.
    fn steps(&self) -> u64 {
        self.frames
            * self.strategies.len() as u64
            * self.loads.len().max(1) as u64
            * self.repeat.max(1)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<PaceData>> {
        run(self, ctx)
    }

    fn render(
        data: &PaceData,
        machine: sleeplab_account::Machine,
        hints: crate::experiments::Wording,
    ) -> String {
        render(data, machine, hints)
    }

    fn csv(data: &PaceData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
