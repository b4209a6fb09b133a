//! `sleeplab timers` as an [`Experiment`] (its config, [`TimersConfig`], is what runs),
//! and what readers ask of its data.

use super::{TimersConfig, TimersData, cell_count, render, run, to_csv};
use crate::experiments::{Context, Experiment, KeyPart, Outcome, Point, ResultData};
use sleeplab_account::{CellAccount, TracedCells};

/// `sleeplab timers`.
impl Experiment for TimersConfig {
    const NAME: &'static str = "timers";
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

impl ResultData for TimersData {
    fn experiment(&self) -> &'static str {
        TimersConfig::NAME
    }

    fn traced(&self) -> Option<TracedCells<'_>> {
        let cells = self.cells.iter().filter_map(|c| {
            Some(CellAccount {
                mechanism: (&c.mechanism).into(),
                requested_ns: c.period_ns,
                load: c.load,
                timer_slack_ns: c.timer_slack_ns,
                explanation: c.explanation.as_ref()?,
            })
        });
        Some(TracedCells {
            subject: "the periodic timers' ticks",
            on_request: true,
            tracing: self.tracing.as_ref()?,
            cells: cells.collect(),
        })
    }

    /// Each cell's lateness against its schedule, all threads merged.
    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .filter(|c| c.merged.received > 0)
            .map(|c| Point {
                key: vec![
                    KeyPart::text(format!("{} every", c.mechanism)),
                    KeyPart::Ns(c.period_ns),
                    KeyPart::text(format!("load {} (lateness)", c.load)),
                ],
                n: c.merged.received,
                median_ns: c.merged.median_lateness_ns,
                median_ci_ns: c.merged.median_lateness_ci_ns,
                p99_ns: c.merged.p99_lateness_ns,
                p99_ci_ns: c.merged.p99_lateness_ci_ns,
                units: None,
            })
            .collect()
    }
}
