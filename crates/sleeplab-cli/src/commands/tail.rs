//! The tail every experiment command shares: run the experiment with a progress bar,
//! print its tables, wrap the data in the result envelope, save JSON and CSV.

use super::args::{OutputArgs, ThreadArgs, name_flags};
use super::hints::WORDING;
use super::outputs::{check_outputs, save};
use crate::error::UsageError;
use crate::experiments::{Context, Experiment, Outcome};
use crate::model::host_noise::host_noise_line;
use crate::model::{ExperimentData, RunStart, host_noise};
use crate::settings::ThreadSettings;
use sleeplab_stats::Progress;
use std::path::PathBuf;

/// The whole of a command whose experiment's config comes from its flags alone: the
/// thread settings and the output paths checked before anything runs, then `config`
/// built, measured with a progress bar titled `title` (none when `quiet`), printed and
/// saved as `outputs` ask; the exit code.
pub fn measure_and_save<E>(
    title: &str,
    quiet: bool,
    threads: &ThreadArgs,
    outputs: &OutputArgs,
    config: impl FnOnce() -> Result<E, UsageError>,
) -> anyhow::Result<i32>
where
    E: Experiment,
    E::Data: Into<ExperimentData>,
{
    let threads = threads.settings()?;
    check_outputs(&[("--json", &outputs.json), ("--csv", &outputs.csv)])?;
    let config = config()?;
    measure(&config, title, quiet, threads)?.save(outputs, vec![])
}

/// A finished run of the experiment `E`, printed, not yet saved.
pub struct Measured<E: Experiment> {
    start: RunStart,
    outcome: Outcome<E::Data>,
}

/// Runs the experiment `config` under `threads`, with a progress bar titled `title`
/// (none when `quiet`), and prints its tables. A setting the system refused is reported
/// with the flag that asked for it.
pub fn measure<E: Experiment>(
    config: &E,
    title: &str,
    quiet: bool,
    threads: ThreadSettings,
) -> anyhow::Result<Measured<E>> {
    // The host's noise on the measured CPUs, before the run and after it.
    let start = RunStart::now();
    let cpus = host_noise::cpus_to_probe(threads.pin, start.fingerprint.cpu_count);
    let mut start = start.probing(cpus);
    let ctx = Context::new(
        Progress::new(title, config.steps(), quiet),
        threads,
        start.fingerprint.cpu_count,
        WORDING,
    );
    let outcome = config.run(&ctx).map(|o| o.settled(&ctx));
    ctx.progress.finish();
    start.probe_after();
    let outcome = outcome.map_err(name_flags)?;
    // Tables fit the terminal's width themselves; the prose around them is wrapped.
    let width = sleeplab_stats::terminal_width();
    let text = E::render(
        &outcome.data,
        sleeplab_account::Machine::of(&start.fingerprint),
        WORDING,
    );
    print!("{}", sleeplab_stats::fit_lines(&text, width));
    if E::HOST_NOISE_LINE
        && let Some(h) = start.host_noise()
    {
        println!("{}", sleeplab_stats::fit_lines(&host_noise_line(&h), width));
    }
    Ok(Measured { start, outcome })
}

impl<E> Measured<E>
where
    E: Experiment,
    E::Data: Into<ExperimentData>,
{
    /// The data measured.
    pub fn data(&self) -> &E::Data {
        &self.outcome.data
    }

    /// Adds a note to the result (after the experiment's own).
    pub fn note(&mut self, note: String) {
        self.outcome.notes.push(note);
    }

    /// Saves the result as `outputs` ask (JSON, and the experiment's CSV), plus `extra`
    /// files, and returns the exit code (130 when interrupted).
    pub fn save(self, outputs: &OutputArgs, extra: Vec<(PathBuf, Vec<u8>)>) -> anyhow::Result<i32> {
        let mut files = Vec::with_capacity(extra.len() + 1);
        // Encoded before the data moves into the envelope: no copy of the data is made.
        if let Some(path) = &outputs.csv
            && let Some(csv) = E::csv(&self.outcome.data)
        {
            files.push((path.clone(), csv?));
        }
        files.extend(extra);
        let Outcome {
            data,
            settings,
            complete,
            notes,
        } = self.outcome;
        let result = self.start.finish(data.into(), settings, complete, notes);
        save(&result, outputs.json.as_deref(), &files)
    }
}
