//! One stage of the survey: an experiment's survey-sized config, behind one object-safe
//! face so the plan can be a plain list.

use super::estimate::Estimate;
use crate::experiments::{Context, Experiment, Outcome};
use crate::model::ExperimentData;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What the survey asks of a stage's experiment.
trait Job: Send + Sync {
    fn experiment(&self) -> &'static str;
    fn steps(&self) -> u64;
    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<ExperimentData>>;
    fn as_any(&self) -> &dyn Any;
}

impl<C> Job for C
where
    C: Experiment,
    C::Data: Into<ExperimentData>,
{
    fn experiment(&self) -> &'static str {
        C::NAME
    }

    fn steps(&self) -> u64 {
        Experiment::steps(self)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<ExperimentData>> {
        Ok(Experiment::run(self, ctx)?.settled(ctx).map(Into::into))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One planned stage.
#[derive(Clone)]
pub struct StagePlan {
    /// Unique name, e.g. `sweep-slack`.
    pub name: &'static str,
    /// What it asks, in a few words.
    pub title: &'static str,
    /// The time it should take, ms: its config's [`Estimate`], rounded up (0 for a
    /// stage that is skipped).
    pub budget_ms: u64,
    job: Arc<dyn Job>,
    /// Why it cannot run on this machine (and what to run instead), if it cannot.
    skip: Option<String>,
}

impl StagePlan {
    /// A stage running the experiment `config` on a machine of `cpus` CPUs; its budget is
    /// the config's estimate (the one derivation of the survey's planned time).
    pub fn new<C>(name: &'static str, title: &'static str, cpus: usize, config: C) -> Self
    where
        C: Experiment + Estimate,
        C::Data: Into<ExperimentData>,
    {
        Self {
            name,
            title,
            budget_ms: config.estimate_ns(cpus).div_ceil(1_000_000),
            job: Arc::new(config),
            skip: None,
        }
    }

    /// The stage, planned but not to be run here, for `reason` (the survey records it as
    /// skipped, with the reason in its notes); it takes no time.
    pub fn skipped(self, reason: String) -> Self {
        Self {
            budget_ms: 0,
            skip: Some(reason),
            ..self
        }
    }

    /// Why it is skipped, when it is.
    pub fn skip_reason(&self) -> Option<&str> {
        self.skip.as_deref()
    }

    /// The experiment it runs, e.g. `sweep`.
    pub fn experiment(&self) -> &'static str {
        self.job.experiment()
    }

    /// The progress steps of its run.
    pub fn steps(&self) -> u64 {
        self.job.steps()
    }

    /// Its config, when it is a `C`.
    pub fn config<C: Experiment>(&self) -> Option<&C> {
        self.job.as_any().downcast_ref::<C>()
    }

    /// Runs it.
    pub fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<ExperimentData>> {
        self.job.run(ctx)
    }
}

impl fmt::Debug for StagePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagePlan")
            .field("name", &self.name)
            .field("title", &self.title)
            .field("budget_ms", &self.budget_ms)
            .field("experiment", &self.experiment())
            .field("skip", &self.skip)
            .finish()
    }
}
