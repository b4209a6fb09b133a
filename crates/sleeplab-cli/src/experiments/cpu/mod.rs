//! `sleeplab cpu`: CPU usage against requested sleep for the hybrid (sleep + spin)
//! strategies (seed 002, figure 3). Each point sleeps the interval over and over
//! (relative sleeps, as in the seed) for `seconds`, and divides the thread's CPU time
//! by the wall time. With `blocks` above 1 (`advise` asks for 20), each point's time is
//! split into that many blocks, the contenders taking turns block by block, and each
//! point carries its intervals over the blocks.

mod run;
pub use run::{render, run, to_csv};

pub use sleeplab_results::cpu::*;

use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab cpu`.
impl Experiment for CpuConfig {
    const NAME: &'static str = sleeplab_results::cpu::NAME;
    type Data = CpuData;

    /// One step per (strategy, interval) point.
    fn steps(&self) -> u64 {
        (self.strategies.len() * self.intervals_ns.len()) as u64 * self.blocks.max(1)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<CpuData>> {
        run(self, ctx)
    }

    fn render(
        data: &CpuData,
        _machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data)
    }

    fn csv(data: &CpuData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
