//! `sleeplab timers` as an [`Experiment`] (its config, [`TimersConfig`], is what runs),
//! and what readers ask of its data.

use super::{TimersConfig, TimersData, cell_count, render, run, to_csv};
use crate::experiments::{Context, Experiment, Outcome};

/// `sleeplab timers`.
impl Experiment for TimersConfig {
    const NAME: &'static str = sleeplab_results::timers::NAME;
    type Data = TimersData;

    /// One step per measured cell.
    fn steps(&self) -> u64 {
        cell_count(self)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<TimersData>> {
        let mut out = run(self, ctx)?;
        let max_load = self.loads.iter().copied().max().unwrap_or(0);
        if max_load + self.threads > ctx.cpus {
            out.notes.push(format!(
                "{max_load} busy + {} measuring threads on {} CPUs: they compete for CPUs",
                self.threads, ctx.cpus
            ));
        }
        Ok(out)
    }

    fn render(
        data: &TimersData,
        machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data, machine)
    }

    fn csv(data: &TimersData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(to_csv(data))
    }
}
