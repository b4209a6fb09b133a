//! The grid engine: every (strategy, interval, model) cell is a pure function of the
//! configuration — a fresh strategy from the library's registry
//! ([`strategy_by_name::<VirtualEnv>`](sleeplab::lab::strategy_by_name)), a fresh
//! [`VirtualEnv`] whose native sleeps follow the cell's model with its own seeded
//! generator, `warmup` unmeasured sleeps, then `sleeps` measured ones. Cells run on
//! worker threads and are put back in config order, so the thread count never changes
//! the result.

use super::data::{SimCell, SimulateConfig, SimulateData};
use super::models::Model;
use super::rng::rng_for;
use crate::experiments::{Context, Outcome};
use crate::settings::RunSettings;
use sleeplab::lab::{VirtualEnv, strategy_by_name};
use sleeplab_stats::{Ci, ci_sorted_u64, quantile_sorted, tail_quantile};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The virtual clock's reading when a cell starts, ns (one second, so that no
/// arithmetic in a strategy meets time 0).
pub const START_NS: u64 = 1_000_000_000;

/// Why a cell cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    /// A strategy name the library does not know.
    #[error(transparent)]
    UnknownStrategy(#[from] sleeplab::lab::UnknownStrategy),
    /// The configuration's models and the loaded ones differ in number.
    #[error("{specs} model specs but {models} loaded models")]
    ModelMismatch {
        /// Specs in the config.
        specs: usize,
        /// Loaded models.
        models: usize,
    },
}

/// The cells of a configuration, as (strategy, interval, model) indices in order.
pub fn cell_indices(config: &SimulateConfig) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    for s in 0..config.strategies.len() {
        for i in 0..config.intervals_ns.len() {
            for m in 0..config.models.len() {
                v.push((s, i, m));
            }
        }
    }
    v
}

/// The word that tells the host's stream from the native wakes' in the seed mix.
const HOST_STREAM: u64 = 0x484F_5354;

/// A cell's outcome on a worker thread: the cell (`None` if stopped before measuring).
type CellOutcome = Result<Option<SimCell>, GridError>;

/// How often (in sleeps) a running cell checks whether it should stop.
const STOP_CHECK_EVERY: u64 = 256;

/// Simulates one cell (see the module docs): a pure function of its arguments.
pub fn run_cell(
    config: &SimulateConfig,
    model: &Model,
    strategy: &str,
    requested_ns: u64,
    model_index: usize,
) -> Result<SimCell, GridError> {
    let cell = run_cell_until(config, model, strategy, requested_ns, model_index, &|| {
        false
    })?;
    Ok(cell.expect("a cell that is never stopped always finishes"))
}

/// [`run_cell`], checking `stop` every few hundred sleeps: a stopped cell keeps the
/// sleeps measured so far (`sleeps` below the configured count), or is `None` when it
/// stopped before measuring any.
pub fn run_cell_until(
    config: &SimulateConfig,
    model: &Model,
    strategy: &str,
    requested_ns: u64,
    model_index: usize,
    stop: &dyn Fn() -> bool,
) -> Result<Option<SimCell>, GridError> {
    let mut s = strategy_by_name::<VirtualEnv>(strategy)?;
    let [a, b] = config.models[model_index].seed_parts();
    // The stream depends on the cell's interval and model, not on the strategy: every
    // strategy in a row of the grid starts from the same draws.
    let rng = rng_for(config.seed, &[requested_ns, a, b, model_index as u64]);
    let mut env = VirtualEnv::starting_at(START_NS)
        .with_costs(config.costs.into())
        .with_model(model.wake_fn(rng));
    if let Some(host) = &config.host {
        // A stream of its own: adding a host changes no native wake.
        let rng = rng_for(
            config.seed,
            &[requested_ns, a, b, model_index as u64, HOST_STREAM],
        );
        // The guest's own scheduler delays nothing: a lost spin is the host's.
        env = env
            .with_preemption_at(host.preempt_fn(rng))
            .with_empty_run_queue();
    }
    for k in 0..config.warmup {
        if k % STOP_CHECK_EVERY == 0 && stop() {
            return Ok(None);
        }
        let deadline = env.time().saturating_add(requested_ns);
        s.sleep_until(&mut env, deadline);
    }
    let (cpu0, wall0, native0) = (env.cpu_ns(), env.time(), env.native_sleeps());
    let mut lateness = Vec::with_capacity(config.sleeps.min(1 << 16) as usize);
    let mut early = 0u64;
    for k in 0..config.sleeps {
        if k % STOP_CHECK_EVERY == 0 && k > 0 && stop() {
            break;
        }
        let deadline = env.time().saturating_add(requested_ns);
        s.sleep_until(&mut env, deadline);
        // The virtual clock is the truth, not the strategy's report.
        let now = env.time();
        early += u64::from(now < deadline);
        lateness.push(now.saturating_sub(deadline));
    }
    let n = lateness.len();
    let wall = env.time() - wall0;
    let cpu = env.cpu_ns() - cpu0;
    lateness.sort_unstable();
    let req = requested_ns.max(1) as f64;
    let total: u128 = lateness.iter().map(|&l| u128::from(l)).sum();
    let mean = if n == 0 { 0.0 } else { total as f64 / n as f64 };
    let q = |p: f64| quantile_sorted(&lateness, p).unwrap_or(0.0);
    // The tail under the quantile rule, as every other experiment reports it.
    let p99 = tail_quantile(&lateness, 0.99);
    let ci = |p: f64| ci_sorted_u64(&lateness, p);
    let rel = |c: Option<Ci>| c.map(|c| c.map(|v| v / req));
    let max = lateness.last().copied().unwrap_or(0);
    Ok(Some(SimCell {
        strategy: strategy.to_string(),
        requested_ns,
        model: model_index,
        sleeps: n as u64,
        mean_rel_error: mean / req,
        p50_rel_error: q(0.5) / req,
        p50_rel_error_ci: rel(ci(0.5)),
        p99_rel_error: p99.map(|v| v / req),
        p99_rel_error_ci: rel(ci(0.99)),
        max_rel_error: max as f64 / req,
        mean_lateness_ns: mean,
        p99_lateness_ns: p99,
        p99_lateness_ci_ns: ci(0.99),
        max_lateness_ns: max,
        cpu_percent: if wall == 0 {
            0.0
        } else {
            100.0 * cpu as f64 / wall as f64
        },
        native_sleeps_per_wait: if n == 0 {
            0.0
        } else {
            (env.native_sleeps() - native0) as f64 / n as f64
        },
        early,
    }))
}

/// Simulates every cell on `threads` worker threads (at least 1), advancing the
/// context's progress by one per cell. When stopped (Ctrl-C) it stops within a few
/// hundred sleeps and keeps what was measured: finished cells, and the cells in progress
/// with the sleeps measured so far. The outcome is incomplete then; it has no thread
/// settings (nothing ran on the real clock) and no notes.
pub fn run(
    config: &SimulateConfig,
    models: &[Model],
    ctx: &Context,
    threads: usize,
) -> Result<Outcome<SimulateData>, GridError> {
    let stop = || ctx.stopped();
    if models.len() != config.models.len() {
        return Err(GridError::ModelMismatch {
            specs: config.models.len(),
            models: models.len(),
        });
    }
    // Fail on an unknown name before starting any thread.
    for s in &config.strategies {
        strategy_by_name::<VirtualEnv>(s)?;
    }
    let cells = cell_indices(config);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, CellOutcome)>> = Mutex::new(Vec::new());
    let threads = threads.clamp(1, cells.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    if stop() {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(s, i, m)) = cells.get(k) else {
                        break;
                    };
                    let cell = run_cell_until(
                        config,
                        &models[m],
                        &config.strategies[s],
                        config.intervals_ns[i],
                        m,
                        &stop,
                    );
                    done.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((k, cell));
                    ctx.progress.inc(1);
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(k, _)| *k);
    let mut complete = done.len() == cells.len();
    let mut kept = Vec::with_capacity(done.len());
    for (_, c) in done {
        match c? {
            Some(c) => {
                complete &= c.sleeps == config.sleeps;
                kept.push(c);
            }
            None => complete = false,
        }
    }
    let cells = kept;
    let data = SimulateData {
        config: config.clone(),
        cells,
    };
    Ok(Outcome::new(data, RunSettings::default(), complete))
}
