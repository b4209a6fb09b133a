//! The shape every experiment shares: a plain config in, a result value out
//! ([`Experiment`]); what readers of a saved result ask of its data is
//! `sleeplab_results::ResultData`.

use super::{Context, Wording};
use crate::settings::RunSettings;
use sleeplab_results::ResultData;

/// What one run of an experiment produced.
#[derive(Debug, Clone)]
pub struct Outcome<D> {
    /// The data (partial when interrupted).
    pub data: D,
    /// The settings of the measuring thread(s), as they were in force.
    pub settings: RunSettings,
    /// False when interrupted.
    pub complete: bool,
    /// Plain-language notes about the run (e.g. more busy threads than CPUs).
    pub notes: Vec<String>,
}

impl<D> Outcome<D> {
    /// An outcome without notes.
    pub fn new(data: D, settings: RunSettings, complete: bool) -> Self {
        Self {
            data,
            settings,
            complete,
            notes: Vec::new(),
        }
    }

    /// The outcome as the run under `ctx` ends: a stop requested at any point of the run
    /// makes it incomplete, whatever the experiment's own checks between waits saw (a
    /// stop while a probe is being listed kills it without passing one). The tail and the
    /// survey settle every outcome through here.
    pub fn settled(mut self, ctx: &Context) -> Self {
        self.complete &= !ctx.stopped();
        self
    }

    /// The run of an experiment with one measuring thread among `loads` busy threads:
    /// placed for the kernel's trace where `traced` ([`Context::placed_for_trace`]),
    /// `measure` on a thread named `name` ([`Context::on_measuring_thread`]), and the
    /// notes of its placement and of a load that fills the CPUs added.
    pub fn measure_placed(
        ctx: &Context,
        name: &str,
        traced: bool,
        loads: &[usize],
        measure: impl FnOnce(&Context) -> anyhow::Result<Self> + Send,
    ) -> anyhow::Result<Self>
    where
        D: Send,
    {
        let (ctx, placed) = &ctx.placed_for_trace(traced);
        let mut out = ctx.on_measuring_thread(name, || measure(ctx))?;
        out.notes.extend(placed.clone());
        out.notes.extend(super::load_note(
            loads,
            ctx.cpus,
            "the measuring thread competes for a CPU",
        ));
        Ok(out)
    }

    /// The same outcome around other data.
    pub fn map<T>(self, f: impl FnOnce(D) -> T) -> Outcome<T> {
        Outcome {
            data: f(self.data),
            settings: self.settings,
            complete: self.complete,
            notes: self.notes,
        }
    }
}

/// An experiment: a function from a plain config to a result value. Printing and saving
/// are separate: a command's tail (`commands::tail`) or a survey stage runs it, then
/// renders, wraps the data in the result envelope and saves it.
///
/// Implemented by each experiment's config type (`SweepConfig`, …): a plain value, with
/// no command-line types, built by the command from its flags or by the survey's plan.
/// The config says what to run; the implementation, how.
pub trait Experiment: Send + Sync + 'static {
    /// The name on the command line and the `experiment` tag of its result files.
    const NAME: &'static str;
    /// What a run measures; saved in the result file.
    type Data: ResultData + Send + 'static;

    /// Whether its terminal output ends with the host noise line (the experiments whose
    /// verdicts the host's noise can sway: pace, advise).
    const HOST_NOISE_LINE: bool = false;

    /// How many progress steps a run reports.
    fn steps(&self) -> u64;

    /// Runs the experiment: measures, reporting progress and watching the stop flag of
    /// `ctx`. Errors that are the user's to fix are `crate::error::UsageError`s (or
    /// `crate::settings::SettingError`s); they name values, never command-line flags.
    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<Self::Data>>;

    /// The terminal tables; a component's words follow `machine`, the result's
    /// (`sleeplab_account::Machine`: the host on a virtual machine, the hardware on bare
    /// metal), a hint's follow `hints` (the command layer's flags). By default the data's
    /// own view (`ResultData::view`), the same the report draws; an experiment whose
    /// data has none draws its own.
    fn render(data: &Self::Data, _machine: sleeplab_account::Machine, hints: Wording) -> String {
        data.view(hints).map(|v| v.terminal()).unwrap_or_default()
    }

    /// The CSV of the raw data (`--csv`); `None` (the default) when the experiment
    /// writes none.
    fn csv(_data: &Self::Data) -> Option<anyhow::Result<Vec<u8>>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Stop;
    use crate::settings::RunSettings;

    /// A stop requested during the run makes the outcome incomplete even when the
    /// experiment's own checks missed it; without one, the experiment's word stands.
    #[test]
    fn a_stop_during_the_run_settles_the_outcome_as_incomplete() {
        let ctx = |stopped: bool| Context::hidden().with_stop(Stop::when(move || stopped));
        let out = |complete| Outcome::new((), RunSettings::default(), complete);
        assert!(!out(true).settled(&ctx(true)).complete);
        assert!(out(true).settled(&ctx(false)).complete);
        assert!(!out(false).settled(&ctx(false)).complete);
    }
}
