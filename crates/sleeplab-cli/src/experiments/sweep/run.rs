//! The sweep engine: interleaved passes over every cell on one measuring thread.

use super::{Quota, SkippedCell, SweepCell, SweepConfig, SweepData};
use crate::contenders::{self, Wait};
use crate::error::UsageError;
use crate::experiments::rounds::{Grid, Placed, interleave, share};
use crate::experiments::{Context, Outcome, histogram};
use crate::rusage::ThreadUsage;
use crate::settings::slack_levels;
use sleeplab_account::{Follow, Recording, WakeLog, Window};
use sleeplab_stats::{Recorder, RecorderConfig, Unit, UnitIntervals, fmt_ns};

/// One cell's accumulating state.
struct CellState {
    mechanism: usize,
    requested_ns: u64,
    load: usize,
    quota: Quota,
    slack: Option<u64>,
    slack_in_force: u64,
    rec: Recorder,
    first_calls: Vec<u64>,
    usage: ThreadUsage,
    round_counts: Vec<u64>,
    log: WakeLog,
}

impl Placed for CellState {
    fn place(&self) -> (usize, Option<u64>) {
        (self.load, self.slack)
    }
}

/// Runs `config` on a dedicated measuring thread with the context's settings applied.
pub fn run(config: &SweepConfig, ctx: &Context) -> anyhow::Result<Outcome<SweepData>> {
    Outcome::measure_placed(
        ctx,
        "sleeplab-measure",
        config.trace,
        &config.loads,
        |ctx| measure(config, ctx),
    )
}

fn measure(config: &SweepConfig, ctx: &Context) -> anyhow::Result<Outcome<SweepData>> {
    let progress = &ctx.progress;
    let mut tracing = Recording::start(config.trace, Follow::ThisThread);
    let mut waiters: Vec<Box<dyn Wait>> = Vec::with_capacity(config.mechanisms.len());
    for name in &config.mechanisms {
        waiters.push(contenders::build(name).map_err(|e| UsageError::new(format!("{name}: {e}")))?);
    }

    // Build the cells in reporting order, and the list of skipped ones.
    let slacks = slack_levels(&config.timer_slacks_ns);
    let mut cells = Vec::new();
    let mut skipped = Vec::new();
    for (mi, name) in config.mechanisms.iter().enumerate() {
        for &d in &config.durations_ns {
            if let Some(reason) = contenders::skip_reason(name, d) {
                skipped.push(SkippedCell {
                    mechanism: name.clone(),
                    requested_ns: d,
                    reason,
                });
                continue;
            }
            for &slack in &slacks {
                for &load in &config.loads {
                    let Some(quota) = config.cell_quota(name, d, load) else {
                        continue;
                    };
                    cells.push(CellState {
                        mechanism: mi,
                        requested_ns: d,
                        load,
                        quota,
                        slack,
                        slack_in_force: 0,
                        rec: Recorder::new(
                            d,
                            RecorderConfig {
                                raw_cap: config.raw_cap,
                            },
                        ),
                        first_calls: Vec::new(),
                        usage: ThreadUsage::default(),
                        round_counts: Vec::new(),
                        log: WakeLog::default(),
                    });
                }
            }
        }
    }

    let grid = Grid::new(config.rounds, &config.loads, &slacks);
    let complete = interleave(ctx, grid, &mut cells, |cell, v| {
        let waiter = &mut waiters[cell.mechanism];
        progress.message(format!(
            "{} {} load {}{} round {}/{}",
            config.mechanisms[cell.mechanism],
            fmt_ns(cell.requested_ns),
            cell.load,
            cell.slack
                .map(|s| format!(" slack {}", fmt_ns(s)))
                .unwrap_or_default(),
            v.round + 1,
            config.rounds
        ));
        cell.slack_in_force = v.slack_in_force;
        // Each contender's own slice (precise asks for a short one), as in pace.
        contenders::apply_sched_slice(waiter.sched_slice_ns());
        if v.round == 0 {
            for _ in 0..config.warmup {
                let (t0, t1) = waiter.wait_timed(cell.requested_ns);
                cell.first_calls.push(t1 - t0);
            }
        }
        let before = cell.rec.count();
        cell.log.add_lost(tracing.drain());
        let usage0 = ThreadUsage::now();
        run_chunk(waiter.as_mut(), cell, config, v.round, ctx, &tracing);
        cell.usage.add_since(&usage0);
        cell.log.add_lost(tracing.drain());
        cell.round_counts.push(cell.rec.count() - before);
        progress.inc(1);
        Ok(())
    })?;

    let settings = ctx.threads.record();
    let (timeline, status) = tracing.finish();
    let cells = cells
        .into_iter()
        .filter(|c| c.rec.count() > 0)
        .map(|c| {
            let calls = c.rec.count().max(1) as f64;
            let raw = c.rec.raw();
            SweepCell {
                mechanism: config.mechanisms[c.mechanism].clone(),
                requested_ns: c.requested_ns,
                load: c.load,
                timer_slack_ns: c.slack_in_force,
                summary: c.rec.summary(),
                first_calls_ns: c.first_calls,
                cpu_ns_per_call: c.usage.cpu_ns as f64 / calls,
                voluntary_csw_per_call: c.usage.voluntary_csw as f64 / calls,
                involuntary_csw_per_call: c.usage.involuntary_csw as f64 / calls,
                histogram: histogram(&c.rec),
                units: UnitIntervals::of_counted(Unit::Round, raw, &c.round_counts),
                round_counts: c.round_counts,
                samples_ns: raw[..raw.len().min(config.json_samples)].to_vec(),
                all_samples_ns: raw.to_vec(),
                explanation: status.as_ref().map(|_| {
                    let slack = contenders::slack_applies(&config.mechanisms[c.mechanism])
                        .then_some(c.slack_in_force);
                    c.log.explain(timeline.as_ref(), slack)
                }),
            }
        })
        .collect();
    let data = SweepData {
        config: config.clone(),
        cells,
        skipped,
        tracing: status,
    };
    Ok(Outcome::new(data, settings, complete))
}

/// Takes this round's share of samples for one cell. The timed region is a clock read,
/// the wait, a clock read (an async mechanism reads them inside its future: from the
/// call that creates it to the first line after its `.await`); recording and the stop
/// checks happen outside it.
fn run_chunk(
    waiter: &mut dyn Wait,
    cell: &mut CellState,
    config: &SweepConfig,
    round: u64,
    ctx: &Context,
    tracing: &Recording,
) {
    if tracing.wanted() {
        let n = traced_share(cell, config, round);
        return run_traced_chunk(waiter, cell, n, ctx, tracing);
    }
    let d = cell.requested_ns;
    match cell.quota {
        Quota::Iterations { count } => {
            for _ in 0..share(count, config.rounds, round) {
                let (t0, t1) = waiter.wait_timed(d);
                cell.rec.record(t1 - t0);
                if ctx.stopped() {
                    break;
                }
            }
        }
        Quota::Budget {
            budget_ns,
            min_count,
            max_count,
        } => {
            let budget = share(budget_ns, config.rounds, round);
            let min = share(min_count, config.rounds, round).max(1);
            let max = share(max_count, config.rounds, round).max(min);
            let mut spent = 0u64;
            let mut n = 0u64;
            while n < max && (n < min || spent < budget) {
                let (t0, t1) = waiter.wait_timed(d);
                cell.rec.record(t1 - t0);
                spent = spent.saturating_add(t1 - t0);
                n += 1;
                if ctx.stopped() {
                    break;
                }
            }
        }
    }
}

/// A traced round's share of a cell, by count: a budget's share is taken as the calls
/// the budget buys, within the quota's counts (traced runs are for the account, not the
/// budget).
fn traced_share(cell: &CellState, config: &SweepConfig, round: u64) -> u64 {
    let d = cell.requested_ns;
    match cell.quota {
        Quota::Iterations { count } => share(count, config.rounds, round),
        Quota::Budget {
            budget_ns,
            min_count,
            max_count,
        } => {
            let by_budget = budget_ns / d.max(1);
            share(by_budget.clamp(min_count, max_count), config.rounds, round).max(1)
        }
    }
}

/// [`run_chunk`] when tracing: the same timed region for `n` calls, each wake's window
/// logged (with the spin a strategy reports).
fn run_traced_chunk(
    waiter: &mut dyn Wait,
    cell: &mut CellState,
    n: u64,
    ctx: &Context,
    tracing: &Recording,
) {
    let d = cell.requested_ns;
    let tid = tracing.tid();
    for _ in 0..n {
        let before = tracing.before_wait();
        let (t0, t1, spin_ns) = waiter.wait_timed_spin(d);
        cell.rec.record(t1 - t0);
        cell.log.push(
            Window::relative(tid, t0, d, t1)
                .spinning(spin_ns)
                .never_blocking(!waiter.blocks()),
            before,
        );
        if ctx.stopped() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_config(mechanisms: &[&str], durations: &[u64], quota: Quota) -> SweepConfig {
        SweepConfig {
            loads: vec![0, 1],
            warmup: 2,
            rounds: 3,
            json_samples: 4,
            raw_cap: 1000,
            ..SweepConfig::new(mechanisms, durations, quota)
        }
    }

    #[test]
    fn counts_add_up_and_nothing_is_early() {
        let config = tiny_config(
            &["clock-nanosleep", "yield", "timerfd", "poll"],
            &[0, 20_000],
            Quota::Iterations { count: 10 },
        );
        let out = run(&config, &Context::hidden()).unwrap();
        assert!(out.complete);
        let d = &out.data;
        // yield skips 20 µs, timerfd skips 0: 4 mechanisms × 2 durations − 2 = 6 cells × 2 loads.
        assert_eq!(d.cells.len(), 12);
        assert_eq!(d.skipped.len(), 2);
        for c in &d.cells {
            assert_eq!(c.summary.count, 10, "{}", c.mechanism);
            assert_eq!(c.round_counts.iter().sum::<u64>(), 10);
            assert_eq!(c.round_counts.len(), 3);
            // 3 rounds: too few for intervals over them, but the cell says how many.
            let units = c.units.as_ref().unwrap();
            assert_eq!(
                (units.unit, units.units, units.median_ci_ns),
                (Unit::Round, 3, None)
            );
            assert_eq!(c.first_calls_ns.len(), 2);
            assert_eq!(c.samples_ns.len(), 4);
            assert_eq!(c.all_samples_ns.len(), 10);
            assert_eq!(c.summary.early_count, 0, "{} was early", c.mechanism);
            assert!(c.summary.min_ns >= c.requested_ns);
            let hist_total: u64 = c.histogram.iter().map(|b| b[1]).sum();
            assert_eq!(hist_total, 10);
        }
    }

    /// Stopped part-way, a sweep is incomplete and keeps what it measured, each cell's
    /// samples assigned to the rounds they were taken in.
    #[test]
    fn a_stopped_sweep_keeps_what_it_measured() {
        use crate::experiments::Stop;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let config = tiny_config(&["yield", "spin"], &[0], Quota::Iterations { count: 30 });
        let checks = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&checks);
        let ctx =
            Context::hidden().with_stop(Stop::when(move || c.fetch_add(1, Ordering::SeqCst) >= 25));
        let out = run(&config, &ctx).unwrap();
        assert!(!out.complete);
        let total: u64 = out.data.cells.iter().map(|c| c.summary.count).sum();
        assert!(total > 0 && total < 4 * 30, "{total}");
        for c in &out.data.cells {
            assert_eq!(c.round_counts.iter().sum::<u64>(), c.summary.count);
        }
    }

    #[test]
    fn budget_respects_min_and_max() {
        let mut config = tiny_config(
            &["spin"],
            &[0, 1_000_000],
            Quota::Budget {
                budget_ns: 3_000_000,
                min_count: 6,
                max_count: 30,
            },
        );
        config.loads = vec![0];
        let out = run(&config, &Context::hidden()).unwrap();
        for c in &out.data.cells {
            let n = c.summary.count;
            assert!((6..=30).contains(&n), "{} ns: {n} samples", c.requested_ns);
        }
        // 0 ns spins are ~free: the budget is never reached, so the max applies.
        assert_eq!(out.data.cells[0].summary.count, 30);
    }

    /// Focus rules leave cells out and give the covered ones their own count; the
    /// progress steps and the planned cells agree with what was measured.
    #[test]
    fn focus_rules_choose_cells_and_counts() {
        use super::super::Focus;
        use crate::experiments::Experiment;
        let config = SweepConfig {
            focus: vec![
                Focus {
                    requests_ns: vec![20_000],
                    loads: vec![1],
                    mechanisms: vec!["spin".into()],
                    count: 4,
                },
                Focus {
                    requests_ns: vec![20_000],
                    loads: vec![0, 1],
                    mechanisms: vec![],
                    count: 9,
                },
            ],
            ..tiny_config(
                &["clock-nanosleep", "spin"],
                &[0, 20_000],
                Quota::Iterations { count: 6 },
            )
        };
        let planned = config.planned_cells();
        assert_eq!(config.steps(), planned.len() as u64 * 3);
        let out = run(&config, &Context::hidden()).unwrap();
        let keys: Vec<_> = out
            .data
            .cells
            .iter()
            .map(|c| {
                (
                    c.mechanism.as_str(),
                    c.requested_ns,
                    c.load,
                    c.summary.count,
                )
            })
            .collect();
        // 0 ns by the quota everywhere; 20 µs only spin at load 1 (the first rule), 4 samples.
        assert_eq!(
            keys,
            vec![
                ("clock-nanosleep", 0, 0, 6),
                ("clock-nanosleep", 0, 1, 6),
                ("spin", 0, 0, 6),
                ("spin", 0, 1, 6),
                ("spin", 20_000, 1, 4),
            ]
        );
        assert_eq!(planned.len(), keys.len());
    }
}
