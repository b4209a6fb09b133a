//! `sleeplab runtimes` as an [`Experiment`] (its config, [`RuntimesConfig`], is what
//! runs): read the saved probe outputs, find and
//! prepare (build) each runtime's probe, then list and measure them ([`super::run`]).

use super::{RuntimeResult, RuntimesConfig, RuntimesData, Target, render, run, saved_runtimes};
use crate::error::UsageError;
use crate::experiments::{Context, Experiment, Outcome, load_note};
use crate::probe::catalog::{Catalog, CatalogError, RuntimeId};
use sleeplab_stats::Progress;

/// `sleeplab runtimes`.
impl Experiment for RuntimesConfig {
    const NAME: &'static str = sleeplab_results::runtimes::NAME;
    type Data = RuntimesData;

    /// The first phase's steps (one per runtime prepared); the listing and measuring
    /// phases restart the progress with their own counts.
    fn steps(&self) -> u64 {
        self.runtimes.len() as u64
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<RuntimesData>> {
        let saved = read_saved(self)?;
        // A traced run places its probes where the kernel records their wakes fully.
        let mut config = self.clone();
        let placed = if self.trace {
            let p = sleeplab_account::placement(self.pin_cpu);
            config.pin_cpu = p.cpu;
            p.note
        } else {
            None
        };
        let config = &config;
        let targets = prepare_all(config, &ctx.progress)?;
        let mut out = run(config, targets, true, &ctx.progress, ctx.hints)?;
        out.data.runtimes.extend(saved);
        Ok(Outcome {
            data: out.data,
            settings: config.run_settings(),
            complete: out.complete,
            notes: placed
                .into_iter()
                .chain(load_note(
                    &config.loads,
                    ctx.cpus,
                    "the probes compete for a CPU",
                ))
                .collect(),
        })
    }

    fn render(
        data: &RuntimesData,
        machine: sleeplab_account::Machine,
        _hints: crate::experiments::Wording,
    ) -> String {
        render(data, machine)
    }

    fn csv(data: &RuntimesData) -> Option<anyhow::Result<Vec<u8>>> {
        Some(super::to_csv(data))
    }
}

/// Detects, prepares and lists every runtime of `config` (and reads its saved probe
/// outputs), measuring nothing: `sleeplab runtimes --list`.
pub fn list(config: &RuntimesConfig, ctx: &Context) -> anyhow::Result<RuntimesData> {
    let saved = read_saved(config)?;
    let targets = prepare_all(config, &ctx.progress)?;
    let mut out = run(config, targets, false, &ctx.progress, ctx.hints)?;
    out.data.runtimes.extend(saved);
    Ok(out.data)
}

/// The saved probe outputs of `config`, parsed (a file that cannot be read or breaks
/// the protocol is a usage error).
fn read_saved(config: &RuntimesConfig) -> anyhow::Result<Vec<RuntimeResult>> {
    let mut files = Vec::new();
    for f in &config.saved_files {
        let bytes = std::fs::read(f)
            .map_err(|e| UsageError::new(format!("cannot read saved probe output {f:?}: {e}")))?;
        files.push((f.clone(), bytes));
    }
    Ok(saved_runtimes(&files, config.json_samples)?)
}

/// Finds the probes and prepares every runtime of `config` (unknown names are left out:
/// the command line checks them).
fn prepare_all(config: &RuntimesConfig, progress: &Progress) -> anyhow::Result<Vec<Target>> {
    let catalog = Catalog::locate().map_err(|e| match e {
        CatalogError::BadEnv(_) => anyhow::Error::new(UsageError::new(e.to_string())),
        CatalogError::NotFound(_) => anyhow::Error::new(e),
    })?;
    let ids: Vec<RuntimeId> = config
        .runtimes
        .iter()
        .filter_map(|n| RuntimeId::parse(n))
        .collect();
    progress.restart("prepare", ids.len() as u64);
    Ok(ids
        .iter()
        .map(|&id| {
            progress.message(id.name());
            let t = Target {
                id: id.name().to_string(),
                title: id.title().to_string(),
                protocol_runtime: Some(id.protocol_runtime().to_string()),
                preparation: catalog.prepare(id),
            };
            progress.inc(1);
            t
        })
        .collect())
}
