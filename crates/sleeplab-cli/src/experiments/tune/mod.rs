//! `sleeplab tune`: what changing a setting of this machine does to the same waits, and
//! what it costs the whole machine.
//!
//! Every setting that applies here ([`crate::tuning::catalogue`]) is an *arm*, beside
//! "as is" (nothing changed). Each round visits every arm once, in an order rotated
//! round by round: the arm's setting is put in force, every cell (a mechanism at a
//! requested duration) waits for its share of the round, the setting is undone
//! (system-wide ones through the journal). A round is the unit of the intervals
//! (`stats::units`): p50 and p99 of each arm's cells over the rounds, their change
//! against as is (the interval of the difference), and the CPU the whole machine burnt
//! while the arm ran (all CPUs' busy time from `/proc/stat`, helper threads included,
//! plus the time idle CPUs spent in a polling idle state, which `/proc/stat` books as
//! idle: holding `/dev/cpu_dma_latency` at 0 or raising haltpoll's window makes every
//! idle vCPU spin), with its change against as is.
//!
//! The change of a cell's p50 or p99 against as is is *paired* over rounds: each round
//! gives the difference between the arm's statistic and as is's in the same round, and
//! the interval is over those differences ([`sleeplab_stats::paired_ci`]), which
//! cancels what the round's moment did to both. Where a round cannot resolve the
//! statistic (a p99 of fewer than 100 waits), the change falls back to the difference of
//! the arms' values, its interval from each arm's own interval over rounds.
//!
//! The verdict on a cell is on its p99's change: *helps* where its interval lies below
//! zero, *hurts* where above, *no effect* where it lies within ±[`NO_EFFECT_SHARE`] of
//! as is's p99, else *undecided* ([`verdict_of_change`]).

mod render;
mod run;
pub use render::{csv, render};
pub use run::{catalogue, plan};
#[cfg(test)]
mod tests;

pub use sleeplab_results::tune::*;

use crate::experiments::{Context, Experiment, Outcome};

impl Experiment for TuneConfig {
    const NAME: &'static str = sleeplab_results::tune::NAME;
    type Data = TuneData;

    /// One per arm and round (the arms are known once the machine is read: the steps
    /// count every setting that could apply; the bar ends early where fewer do).
    fn steps(&self) -> u64 {
        self.rounds * run::arms_here(self).len() as u64
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<TuneData>> {
        run::run(self, ctx)
    }

    fn render(
        data: &TuneData,
        _machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data)
    }

    fn csv(data: &TuneData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(csv(data))
    }
}
