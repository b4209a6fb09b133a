//! The pace loop: one load level after another, the contenders interleaved in blocks
//! within each level.

use super::evidence::{Evidence, LATE_FRAME_NS, Probe};
use super::{PaceConfig, PaceData, PaceResult, PaceRun};
use crate::contenders::strategies::{self, RealStrategy};
use crate::experiments::{Context, Outcome, histogram};
use crate::load::LoadThreads;
use crate::rusage::ThreadUsage;
use crate::settings::set_slack;
use sleeplab::clock::{Env, RealEnv};
use sleeplab::system::timer_slack_ns;
use sleeplab_account::{Follow, Recording, WakeLog, Window};
use sleeplab_stats::{Ci, Recorder, RecorderConfig, Unit, UnitIntervals, ratio_ci};

struct State<'a> {
    name: &'a str,
    strategy: RealStrategy,
    rec: Recorder,
    missed: u64,
    actual_total: u64,
    wall: u64,
    spin: u64,
    usage: ThreadUsage,
    evidence: Evidence,
    /// CPU of the evidence snapshots, ns (taken out of `usage`).
    evidence_cpu: u64,
    /// CPU its helper threads spent during its blocks, ns (added to `usage`).
    helper_cpu: u64,
    /// Its frames' windows, when traced.
    log: WakeLog,
    /// Per block: its frames, its CPU time (without the evidence snapshots) and its wall
    /// time, ns: the units its verdicts rest on.
    blocks: Vec<BlockTally>,
}

/// One block of one contender.
#[derive(Debug, Clone, Copy)]
struct BlockTally {
    frames: u64,
    cpu_ns: u64,
    wall_ns: u64,
}

/// Runs `config` on a dedicated measuring thread with the context's settings applied.
pub fn run(config: &PaceConfig, ctx: &Context) -> anyhow::Result<Outcome<PaceData>> {
    Outcome::measure_placed(ctx, "sleeplab-pace", config.trace, &config.loads, |ctx| {
        measure(config, ctx)
    })
}

fn measure(config: &PaceConfig, ctx: &Context) -> anyhow::Result<Outcome<PaceData>> {
    let _slack = set_slack(config.timer_slack_ns)?;
    let slack_in_force = timer_slack_ns();
    let mut tracing = Recording::start(config.trace, Follow::ThisThread);
    let mut first: Option<(Vec<PaceResult>, Vec<WakeLog>)> = None;
    let mut runs = Vec::new();
    let mut complete = true;
    for run in 0..config.repeat.max(1) {
        if ctx.stopped() {
            complete = false;
            break;
        }
        // The first run's frames are the ones explained (the results keep that run).
        let traced = (run == 0 && tracing.wanted()).then_some(&mut tracing);
        let (results, logs, done) = measure_once(config, ctx, traced)?;
        complete &= done;
        runs.push(PaceRun::of(&results, &config.loads));
        first.get_or_insert((results, logs));
        if !done {
            break;
        }
    }
    let (timeline, status) = tracing.finish();
    let first = first.map(|(mut results, logs)| {
        if status.is_some() {
            for (r, log) in results.iter_mut().zip(&logs) {
                r.explanation =
                    Some(log.explain_late(timeline.as_ref(), Some(slack_in_force), LATE_FRAME_NS));
            }
        }
        results
    });
    let (runs, repeat) = if config.repeat > 1 {
        (runs.clone(), super::repeat::ranges(&runs))
    } else {
        (Vec::new(), Vec::new())
    };
    let data = PaceData {
        config: config.clone(),
        results: first.unwrap_or_default(),
        runs,
        repeat,
        tracing: status,
    };
    Ok(Outcome::new(data, ctx.threads.record(), complete))
}

/// One run of the comparison: every level, contenders interleaved; the results, each
/// result's frames logged for the kernel's account (when `tracing`), and whether it ran
/// to the end.
fn measure_once(
    config: &PaceConfig,
    ctx: &Context,
    mut tracing: Option<&mut Recording>,
) -> anyhow::Result<(Vec<PaceResult>, Vec<WakeLog>, bool)> {
    let mut results = Vec::new();
    let mut logs = Vec::new();
    let mut complete = true;
    for &load in &config.loads {
        if ctx.stopped() {
            complete = false;
            break;
        }
        // Fresh contenders per level: what one learned under another load does not carry.
        let mut states = config
            .strategies
            .iter()
            .map(|name| {
                Ok(State {
                    name,
                    strategy: strategies::build(name).map_err(anyhow::Error::msg)?,
                    rec: Recorder::new(0, RecorderConfig::default()),
                    missed: 0,
                    actual_total: 0,
                    wall: 0,
                    spin: 0,
                    usage: ThreadUsage::default(),
                    evidence: Evidence::new(),
                    evidence_cpu: 0,
                    helper_cpu: 0,
                    log: WakeLog::default(),
                    blocks: Vec::new(),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let busy = LoadThreads::start(load);
        complete &= run_level(config, ctx, load, &mut states, tracing.as_deref_mut());
        drop(busy);
        for mut s in states.into_iter().filter(|s| s.rec.count() > 0) {
            logs.push(std::mem::take(&mut s.log));
            results.push(finish(s, load, config));
        }
    }
    Ok((results, logs, complete))
}

/// Every block of one level, contenders taking turns; false when stopped.
fn run_level(
    config: &PaceConfig,
    ctx: &Context,
    load: usize,
    states: &mut [State],
    mut tracing: Option<&mut Recording>,
) -> bool {
    let progress = &ctx.progress;
    let mut env = RealEnv;
    let mut probe = Probe::for_this_thread();
    let blocks = config.frames.div_ceil(config.block);
    for b in 0..blocks {
        let frames = config.block.min(config.frames - b * config.block);
        for s in states.iter_mut() {
            if ctx.stopped() {
                return false;
            }
            progress.message(format!("{} load {load} block {}/{blocks}", s.name, b + 1));
            // Each contender's own thread setting (precise asks for a short scheduler
            // slice; the others run with the kernel's default).
            crate::contenders::apply_sched_slice(s.strategy.sched_slice_ns());
            if let Some(t) = tracing.as_deref_mut() {
                s.log.add_lost(t.drain());
            }
            let usage0 = ThreadUsage::now();
            let helper0 = s.strategy.helper_cpu_ns();
            let cost0 = probe.cost_ns;
            let frames0 = s.rec.count();
            let start = env.now();
            let mut last = start;
            for k in 1..=frames {
                if config.work_ns > 0 {
                    let until = env.now() + config.work_ns;
                    while env.now() < until {
                        std::hint::spin_loop();
                    }
                }
                let deadline = start + k * config.period_ns;
                let before = probe.snapshot();
                let rq_before = tracing
                    .as_deref()
                    .map(Recording::before_wait)
                    .unwrap_or_default();
                let r = s.strategy.sleep_until(&mut env, deadline);
                let after = probe.snapshot();
                s.evidence
                    .record(Probe::frame(s.evidence.frames, before, after, &r));
                if let Some(t) = tracing.as_deref() {
                    s.log.push(Window::of_report(t.tid(), &r), rq_before);
                }
                s.rec.record(r.lateness_ns);
                s.missed += u64::from(r.lateness_ns > config.period_ns);
                s.spin += r.spin_ns;
                last = r.woke_ns;
                if ctx.stopped() {
                    break;
                }
            }
            s.actual_total += last - start;
            let wall_ns = env.now() - start;
            s.wall += wall_ns;
            let mut block = ThreadUsage::default();
            block.add_since(&usage0);
            s.usage.add_since(&usage0);
            let helper = s.strategy.helper_cpu_ns().saturating_sub(helper0);
            s.helper_cpu += helper;
            s.evidence_cpu += probe.cost_ns - cost0;
            // The block's CPU is the contender's whole cost, as its total is: the
            // measuring thread's and its helper threads' (a timer thread, a runtime's
            // workers), without the evidence snapshots.
            s.blocks.push(BlockTally {
                frames: s.rec.count() - frames0,
                cpu_ns: (block.cpu_ns + helper).saturating_sub(probe.cost_ns - cost0),
                wall_ns,
            });
            if let Some(t) = tracing.as_deref_mut() {
                s.log.add_lost(t.drain());
            }
            progress.inc(frames);
        }
    }
    true
}

/// One contender's result at one level.
fn finish(s: State, load: usize, config: &PaceConfig) -> PaceResult {
    let n = s.rec.count() as f64;
    let wall = s.wall.max(1) as f64;
    let (units, cpu_ci_percent) = block_intervals(s.rec.raw(), &s.blocks);
    PaceResult {
        strategy: s.name.to_string(),
        load,
        error: s.rec.summary(),
        missed_frames: s.missed,
        ideal_total_ns: s.rec.count() * config.period_ns,
        actual_total_ns: s.actual_total,
        cpu_percent: 100.0 * (s.usage.cpu_ns + s.helper_cpu).saturating_sub(s.evidence_cpu) as f64
            / wall,
        spin_percent: 100.0 * s.spin as f64 / wall,
        voluntary_csw_per_frame: s.usage.voluntary_csw as f64 / n,
        involuntary_csw_per_frame: s.usage.involuntary_csw as f64 / n,
        evidence: s.evidence,
        histogram: histogram(&s.rec),
        samples_ns: s
            .rec
            .raw()
            .iter()
            .take(config.json_samples)
            .copied()
            .collect(),
        all_samples_ns: s.rec.raw().to_vec(),
        explanation: None,
        units,
        cpu_ci_percent,
    }
}

/// The intervals over `blocks` of the lateness `samples` (in frame order; none unless
/// every frame was kept) and of the CPU, % of one core.
fn block_intervals(samples: &[u64], blocks: &[BlockTally]) -> (Option<UnitIntervals>, Option<Ci>) {
    let counts: Vec<u64> = blocks.iter().map(|b| b.frames).collect();
    let units = UnitIntervals::of_counted(Unit::Block, samples, &counts);
    let cpu: Vec<f64> = blocks.iter().map(|b| b.cpu_ns as f64).collect();
    let wall: Vec<f64> = blocks.iter().map(|b| b.wall_ns as f64).collect();
    let cpu_ci = ratio_ci(&cpu, &wall).map(|c| c.map(|v| 100.0 * v));
    (units, cpu_ci)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(strategies: Vec<String>, loads: Vec<usize>) -> PaceConfig {
        PaceConfig {
            strategies,
            loads,
            rate_hz: 1000.0,
            period_ns: 1_000_000,
            frames: 7,
            block: 3,
            work_ns: 100_000,
            timer_slack_ns: Some(1),
            json_samples: 5,
            repeat: 1,
            trace: false,
        }
    }

    /// A contender with a helper thread (the async sleeper's timer thread) is judged by
    /// its whole CPU: its blocks count the helper's time as its total does, so the
    /// interval over blocks holds the point value (the ratio of the same sums).
    #[test]
    fn a_contenders_blocks_count_its_helper_threads() {
        let cfg = PaceConfig {
            frames: 16,
            block: 2,
            work_ns: 0,
            ..config(vec!["asleep".into()], vec![0])
        };
        let out = run(&cfg, &Context::hidden()).unwrap();
        let r = &out.data.results[0];
        let ci = r.cpu_ci_percent.expect("8 blocks give an interval");
        let (lo, hi) = (ci.0.unwrap_or(0.0), ci.1.unwrap_or(f64::MAX));
        assert!(
            lo <= r.cpu_percent + 1e-6 && r.cpu_percent <= hi + 1e-6,
            "{} % outside [{lo}, {hi}]",
            r.cpu_percent
        );
    }

    #[test]
    fn every_contender_runs_its_frames_and_is_never_early() {
        let names: Vec<String> = strategies::names().iter().map(|s| s.to_string()).collect();
        let out = run(&config(names.clone(), vec![0]), &Context::hidden()).unwrap();
        assert!(out.complete);
        assert_eq!(out.data.results.len(), names.len());
        for r in &out.data.results {
            assert_eq!(r.error.count, 7, "{}", r.strategy);
            assert_eq!(r.error.early_count, 0);
            assert_eq!(r.samples_ns.len(), 5);
            assert_eq!(r.ideal_total_ns, 7_000_000);
            // Each of 3 blocks ends at or after its last deadline.
            assert!(r.actual_total_ns >= 7_000_000, "{}", r.strategy);
            // One thread cannot use more CPU than the wall time of its blocks (a little
            // bookkeeping around each block is counted on the CPU side only).
            assert!(
                r.cpu_percent <= 110.0,
                "{}: {} %",
                r.strategy,
                r.cpu_percent
            );
            assert!(r.spin_percent <= 100.0 + 1e-9, "{}", r.strategy);
            // 3 blocks (3, 3, 1 frames): counted, too few for any interval over them.
            let u = r.units.as_ref().expect("every frame kept");
            assert_eq!((u.units, u.median_ci_ns), (3, None), "{}", r.strategy);
            assert_eq!(r.cpu_ci_percent, None);
        }
    }

    #[test]
    fn every_load_level_runs_every_setting_in_order() {
        let names = vec!["seed-hybrid:x=2".to_string(), "precise".to_string()];
        let out = run(&config(names, vec![0, 1]), &Context::hidden()).unwrap();
        assert!(out.complete);
        let got: Vec<(usize, &str, u64)> = out
            .data
            .results
            .iter()
            .map(|r| (r.load, r.strategy.as_str(), r.error.count))
            .collect();
        assert_eq!(
            got,
            [
                (0, "seed-hybrid:x=2", 7),
                (0, "precise", 7),
                (1, "seed-hybrid:x=2", 7),
                (1, "precise", 7),
            ]
        );
        assert!(out.data.results.iter().all(|r| r.error.early_count == 0));
        assert!(
            out.data.runs.is_empty() && out.data.repeat.is_empty(),
            "one run"
        );
    }

    #[test]
    fn repeat_runs_the_comparison_again_and_counts_every_run() {
        use crate::experiments::Experiment;
        let names = vec!["std-sleep".to_string(), "precise".to_string()];
        let mut c = config(names, vec![0]);
        c.repeat = 3;
        let out = run(&c, &Context::hidden()).unwrap();
        assert!(out.complete);
        assert_eq!(out.data.runs.len(), 3);
        for run in &out.data.runs {
            let got: Vec<(&str, u64)> = run
                .points
                .iter()
                .map(|p| (p.strategy.as_str(), p.frames))
                .collect();
            assert_eq!(got, [("std-sleep", 7), ("precise", 7)]);
            // 7 frames resolve no p99: no verdict either.
            assert!(
                run.points
                    .iter()
                    .all(|p| p.p99_ns.is_none() && p.verdict == super::super::repeat::NO_P99)
            );
        }
        assert_eq!(out.data.repeat.len(), 2);
        for r in &out.data.repeat {
            assert_eq!((r.runs, r.p99_runs, r.p99_range_ns), (3, 0, None));
            assert!(r.cpu_range_percent[0] <= r.cpu_range_percent[1]);
            assert_eq!(r.verdicts.iter().map(|v| v.runs).sum::<u64>(), 3);
        }
        // The first run's full results stay, as for one run.
        assert_eq!(out.data.results.len(), 2);
        assert_eq!(c.steps(), 7 * 2 * 3);
    }
}
