//! What a simulation is asked for ([`SimulateOptions`], plain values), and how it
//! becomes the recorded [`SimulateConfig`] with its loaded models and notes.

use super::empirical::{Empirical, ReplayChoice};
use super::host::HostModel;
use super::models::{Model, ModelSpec, SchedulerModel};
use super::{DEFAULT_PREEMPT_PROB, DEFAULT_STRATEGIES, SimCosts, SimulateConfig};
use crate::contenders::strategies::SPIN_SLEEP;
use crate::error::UsageError;
use crate::experiments::sweep::SweepData;
use crate::parse::{Names, dedup};
use sleeplab::lab::{VirtualCosts, strategies};
use sleeplab_stats::{Sentence, fmt_ns};
use std::sync::Arc;

/// The native-sleep models to simulate under: the grid's columns.
#[derive(Debug, Clone, PartialEq)]
pub enum Models {
    /// Seed 002's scheduler at each period.
    Schedulers {
        /// Scheduler periods, ns.
        periods_ns: Vec<u64>,
        /// Chance that another thread takes one more period, each time.
        preempt_prob: f64,
    },
    /// The oversleeps of a measured sweep, replayed (one column).
    Replay(Replay),
}

/// The sweeps of a result file to replay, and which of their cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// Which cells (the file's name is in it).
    pub choice: ReplayChoice,
    /// What the file holds (`sweep`, `survey`, …), for the message when it has no sweep.
    pub experiment: String,
    /// Its sweeps: the file's own, or a survey's sweep stages.
    pub sweeps: Vec<SweepData>,
}

/// What a simulation is asked for, as plain values.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulateOptions {
    /// Strategies by the library's names (`None`: [`DEFAULT_STRATEGIES`]).
    pub strategies: Option<Vec<String>>,
    /// Requested intervals: the grid's rows, ns.
    pub intervals_ns: Vec<u64>,
    /// The grid's columns.
    pub models: Models,
    /// Measured sleeps per cell.
    pub sleeps: u64,
    /// Unmeasured sleeps per cell before them.
    pub warmup: u64,
    /// The seed.
    pub seed: u64,
    /// A virtual machine's host that interrupts spins, or none.
    pub host: Option<HostModel>,
}

impl SimulateOptions {
    /// The strategies asked for, checked against the library's registry: a typo gets a
    /// suggestion, `spin-sleep` (a real-clock crate) an explanation.
    pub fn strategies(&self) -> Result<Vec<String>, UsageError> {
        let Some(given) = &self.strategies else {
            return Ok(DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect());
        };
        let known = Names::new("strategy", strategies().iter().map(|s| s.name));
        for name in given {
            if name == SPIN_SLEEP {
                return Err(UsageError::new(format!(
                    "strategy {SPIN_SLEEP:?} cannot be simulated: the spin_sleep crate reads the real clock and really sleeps; fixed-margin is its algorithm (125 µs margin, yield-spin)"
                )));
            }
            known.check(name)?;
        }
        Ok(dedup(given))
    }

    /// Cells the simulation will have: strategies × intervals × models.
    pub fn cell_count(&self) -> u64 {
        let strategies = self
            .strategies
            .as_ref()
            .map_or(DEFAULT_STRATEGIES.len(), |s| dedup(s).len());
        let models = match &self.models {
            Models::Schedulers { periods_ns, .. } => dedup(periods_ns).len(),
            Models::Replay(_) => 1,
        };
        (strategies * dedup(&self.intervals_ns).len() * models) as u64
    }

    /// The recorded configuration, the models ready to run, and the notes for the
    /// result. Bad names and replays that do not fit are the user's to fix.
    pub fn setup(&self) -> anyhow::Result<(SimulateConfig, Vec<Model>, Vec<String>)> {
        let strategies = self.strategies()?;
        let mut notes = vec![format!(
            "{SPIN_SLEEP} (the spin_sleep crate) is not simulated: it reads the real clock and really sleeps; fixed-margin runs its algorithm (125 µs margin, yield-spin) in virtual time"
        )];
        let (specs, models) = match &self.models {
            Models::Replay(replay) => {
                let (dist, source) =
                    Empirical::from_sweeps(&replay.sweeps, &replay.experiment, &replay.choice)?;
                notes.extend(source.anchors.iter().filter_map(|a| {
                    if a.from == "histogram" {
                        Some(format!(
                            "replay: the {} cell kept no raw samples; its oversleeps come from √2-wide histogram buckets (coarse)",
                            fmt_ns(a.requested_ns)
                        ))
                    } else if a.samples < 20 {
                        Some(format!(
                            "replay: the {} cell has only {} samples; its tail is a guess",
                            fmt_ns(a.requested_ns),
                            a.samples
                        ))
                    } else {
                        None
                    }
                }));
                (
                    vec![ModelSpec::Replay(source)],
                    vec![Model::Replay(Arc::new(dist))],
                )
            }
            Models::Schedulers {
                periods_ns,
                preempt_prob,
            } => {
                let ms: Vec<SchedulerModel> = dedup(periods_ns)
                    .into_iter()
                    .map(|period_ns| SchedulerModel {
                        period_ns,
                        preempt_prob: *preempt_prob,
                    })
                    .collect();
                (
                    ms.iter().copied().map(ModelSpec::Scheduler).collect(),
                    ms.into_iter().map(Model::Scheduler).collect(),
                )
            }
        };
        if let Models::Schedulers { preempt_prob, .. } = &self.models
            && *preempt_prob != DEFAULT_PREEMPT_PROB
        {
            notes.push(format!(
                "preemption probability {preempt_prob} (seed 002 used {DEFAULT_PREEMPT_PROB})"
            ));
        }
        if let Some(h) = &self.host {
            notes.push(host_note(h).text);
        }
        let config = SimulateConfig {
            strategies,
            intervals_ns: dedup(&self.intervals_ns),
            models: specs,
            sleeps: self.sleeps,
            warmup: self.warmup,
            seed: self.seed,
            costs: SimCosts::from(VirtualCosts::default()),
            host: self.host.clone(),
        };
        Ok((config, models, notes))
    }
}

/// What the result says about its host model: the model's own numbers (no claim about a
/// measurement).
pub fn host_note(h: &HostModel) -> Sentence {
    let mut note = format!(
        "host {}: spins lose their CPU {:.0} times per second of running (gaps of {} to {}, {:.2} % of the time); sleeps are woken as the model says",
        h.name,
        h.gaps_per_s,
        h.gap_quantiles.first().map_or("–".into(), |g| fmt_ns(g.ns)),
        h.gap_quantiles.last().map_or("–".into(), |g| fmt_ns(g.ns)),
        100.0 * h.noise_share(),
    );
    if let Some(p) = h.punishment {
        note.push_str(&format!(
            "; after {} of running since a wake, {:.0} deschedules of {} to {} per second of further running",
            fmt_ns(p.after_run_ns),
            p.per_s,
            fmt_ns(p.min_ns),
            fmt_ns(p.max_ns),
        ));
    }
    Sentence::new(note)
}
