//! The pace loop.

use super::{PaceConfig, PaceData, PaceResult};
use crate::contenders::strategies::{self, RealStrategy};
use crate::experiments::{Context, Outcome, histogram};
use crate::rusage::ThreadUsage;
use crate::settings::set_slack;
use crate::stats::{Recorder, RecorderConfig};
use sleeplab::clock::{Env, RealEnv};

struct State {
    strategy: RealStrategy,
    rec: Recorder,
    missed: u64,
    actual_total: u64,
    wall: u64,
    spin: u64,
    usage: ThreadUsage,
}

/// Runs `config` on a dedicated measuring thread with the context's settings applied.
pub fn run(config: &PaceConfig, ctx: &Context) -> anyhow::Result<Outcome<PaceData>> {
    ctx.on_measuring_thread("sleeplab-pace", || measure(config, ctx))
}

fn measure(config: &PaceConfig, ctx: &Context) -> anyhow::Result<Outcome<PaceData>> {
    let progress = &ctx.progress;
    let _slack = set_slack(config.timer_slack_ns)?;
    let mut states = config
        .strategies
        .iter()
        .map(|name| {
            Ok(State {
                strategy: strategies::build(name).map_err(anyhow::Error::msg)?,
                rec: Recorder::new(0, RecorderConfig::default()),
                missed: 0,
                actual_total: 0,
                wall: 0,
                spin: 0,
                usage: ThreadUsage::default(),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut env = RealEnv;
    let mut complete = true;
    let blocks = config.frames.div_ceil(config.block);
    'blocks: for b in 0..blocks {
        let frames = config.block.min(config.frames - b * config.block);
        for s in &mut states {
            if ctx.stopped() {
                complete = false;
                break 'blocks;
            }
            progress.message(format!("{} block {}/{blocks}", s.strategy.name(), b + 1));
            let usage0 = ThreadUsage::now();
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
                let r = s.strategy.sleep_until(&mut env, deadline);
                s.rec.record(r.lateness_ns);
                s.missed += u64::from(r.lateness_ns > config.period_ns);
                s.spin += r.spin_ns;
                last = r.woke;
                if ctx.stopped() {
                    break;
                }
            }
            s.actual_total += last - start;
            s.wall += env.now() - start;
            s.usage.add_since(&usage0);
            progress.inc(frames);
        }
    }
    let results = states
        .into_iter()
        .filter(|s| s.rec.count() > 0)
        .map(|s| {
            let n = s.rec.count() as f64;
            let wall = s.wall.max(1) as f64;
            PaceResult {
                strategy: s.strategy.name().to_string(),
                error: s.rec.summary(),
                missed_frames: s.missed,
                ideal_total_ns: s.rec.count() * config.period_ns,
                actual_total_ns: s.actual_total,
                cpu_percent: 100.0 * s.usage.cpu_ns as f64 / wall,
                spin_percent: 100.0 * s.spin as f64 / wall,
                voluntary_csw_per_frame: s.usage.voluntary_csw as f64 / n,
                involuntary_csw_per_frame: s.usage.involuntary_csw as f64 / n,
                histogram: histogram(&s.rec),
                samples_ns: s
                    .rec
                    .raw()
                    .iter()
                    .take(config.json_samples)
                    .copied()
                    .collect(),
                all_samples_ns: s.rec.raw().to_vec(),
            }
        })
        .collect();
    let data = PaceData {
        config: config.clone(),
        results,
    };
    Ok(Outcome::new(data, ctx.threads.record(), complete))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_runs_its_frames_and_is_never_early() {
        let names: Vec<String> = strategies::names().iter().map(|s| s.to_string()).collect();
        let config = PaceConfig {
            strategies: names.clone(),
            rate_hz: 1000.0,
            period_ns: 1_000_000,
            frames: 7,
            block: 3,
            work_ns: 100_000,
            timer_slack_ns: Some(1),
            json_samples: 5,
        };
        let out = run(&config, &Context::hidden()).unwrap();
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
        }
    }
}
