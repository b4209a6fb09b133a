//! The CPU-vs-interval loop and its table.

use super::{CpuConfig, CpuData, CpuPoint};
use crate::contenders::strategies;
use crate::experiments::rounds::share;
use crate::experiments::{Context, Outcome, SCHEMA_VERSION};
use crate::rusage::ThreadUsage;
use crate::settings::set_slack;
use sleeplab::clock::{Env, RealEnv};
use sleeplab_stats::{
    Recorder, RecorderConfig, Unit, UnitIntervals, csv_bytes, fmt_ns, fmt_pct, new_table, ratio_ci,
};
use std::fmt::Write;

/// Runs the experiment on a dedicated measuring thread with the context's settings.
pub fn run(config: &CpuConfig, ctx: &Context) -> anyhow::Result<Outcome<CpuData>> {
    ctx.on_measuring_thread("sleeplab-cpu", || measure(config, ctx))
}

fn measure(config: &CpuConfig, ctx: &Context) -> anyhow::Result<Outcome<CpuData>> {
    let progress = &ctx.progress;
    let _slack = set_slack(config.timer_slack_ns)?;
    // One instance per contender for the whole run, so learned state carries over as in
    // a real program.
    let mut contenders = config
        .strategies
        .iter()
        .map(|n| {
            strategies::build(n)
                .map(|s| (n, s))
                .map_err(anyhow::Error::msg)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut env = RealEnv;
    let mut points = Vec::new();
    let mut complete = true;
    let blocks = config.blocks.max(1);
    'all: for &interval in &config.intervals_ns {
        let mut tallies: Vec<Tally> = contenders.iter().map(|_| Tally::new()).collect();
        for b in 0..blocks {
            let seconds = share(config.seconds_ns, blocks, b);
            // Named by the setting it was built from (`seed-hybrid:x=2`), not the registry
            // name.
            for ((name, s), t) in contenders.iter_mut().zip(&mut tallies) {
                if ctx.stopped() {
                    complete = false;
                    points.extend(finish(&config.strategies, interval, tallies, blocks));
                    break 'all;
                }
                progress.message(format!("{name} {}", fmt_ns(interval)));
                // Each contender's own slice (precise asks for a short one), as in pace.
                crate::contenders::apply_sched_slice(s.sched_slice_ns());
                let before = t.rec.count();
                let usage0 = ThreadUsage::now();
                let start = env.now();
                let end = start + seconds;
                while env.now() < end && !ctx.stopped() {
                    let r = s.sleep_for(&mut env, interval);
                    t.rec.record(r.lateness_ns);
                }
                let wall = (env.now() - start).max(1);
                let mut usage = ThreadUsage::default();
                usage.add_since(&usage0);
                t.counts.push(t.rec.count() - before);
                t.cpu_ns.push(usage.cpu_ns as f64);
                t.wall_ns.push(wall as f64);
                progress.inc(1);
            }
        }
        points.extend(finish(&config.strategies, interval, tallies, blocks));
    }
    let data = CpuData {
        config: config.clone(),
        points,
    };
    Ok(Outcome::new(data, ctx.threads.record(), complete))
}

/// One contender's blocks at one interval.
struct Tally {
    rec: Recorder,
    counts: Vec<u64>,
    cpu_ns: Vec<f64>,
    wall_ns: Vec<f64>,
}

impl Tally {
    fn new() -> Self {
        Self {
            rec: Recorder::new(0, RecorderConfig { raw_cap: 10_000 }),
            counts: Vec::new(),
            cpu_ns: Vec::new(),
            wall_ns: Vec::new(),
        }
    }
}

/// The points of one interval from each contender's blocks (those that ran at all);
/// intervals over blocks where there were more than one.
fn finish(names: &[String], interval: u64, tallies: Vec<Tally>, blocks: u64) -> Vec<CpuPoint> {
    names
        .iter()
        .zip(tallies)
        .filter(|(_, t)| !t.counts.is_empty())
        .map(|(name, t)| {
            let (cpu, wall) = (t.cpu_ns.iter().sum::<f64>(), t.wall_ns.iter().sum::<f64>());
            let units = (blocks > 1)
                .then(|| UnitIntervals::of_counted(Unit::Block, t.rec.raw(), &t.counts))
                .flatten();
            CpuPoint {
                strategy: name.clone(),
                interval_ns: interval,
                cpu_percent: 100.0 * cpu / wall.max(1.0),
                sleeps: t.rec.count(),
                error: t.rec.summary(),
                cpu_ci_percent: units
                    .as_ref()
                    .and_then(|_| ratio_ci(&t.cpu_ns, &t.wall_ns))
                    .map(|c| c.map(|v| 100.0 * v)),
                units,
            }
        })
        .collect()
}

/// Renders CPU % per interval (rows) and contender (columns), then p99 lateness.
pub fn render(data: &CpuData) -> String {
    let mut out = String::new();
    for (title, cell) in [
        ("CPU % of one core", 0),
        ("p99 lateness (woke − deadline; – below 100 sleeps)", 1),
        ("sleeps measured (n)", 2),
    ] {
        let mut header = vec!["interval".to_string()];
        header.extend(data.config.strategies.iter().cloned());
        let mut t = new_table(header);
        for &iv in &data.config.intervals_ns {
            let mut row = vec![fmt_ns(iv)];
            for s in &data.config.strategies {
                let p = data
                    .points
                    .iter()
                    .find(|p| &p.strategy == s && p.interval_ns == iv);
                row.push(p.map_or("–".into(), |p| match cell {
                    0 => fmt_pct(p.cpu_percent),
                    1 => sleeplab_stats::fmt_ns_f(p.error.p99_ns),
                    _ => p.sleeps.to_string(),
                }));
            }
            t.add_row(row);
        }
        let _ = writeln!(out, "\n{title}\n{t}");
    }
    out
}

/// One row per point: strategy, interval_ns, cpu_percent, sleeps, and the lateness
/// summary (mean, p50, p99, max), plus schema_version.
pub fn to_csv(data: &CpuData) -> anyhow::Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Row<'a> {
        strategy: &'a str,
        interval_ns: u64,
        cpu_percent: f64,
        sleeps: u64,
        mean_error_ns: f64,
        p50_error_ns: f64,
        p99_error_ns: Option<f64>,
        max_error_ns: u64,
        schema_version: u32,
    }
    let rows = data.points.iter().map(|p| Row {
        strategy: &p.strategy,
        interval_ns: p.interval_ns,
        cpu_percent: p.cpu_percent,
        sleeps: p.sleeps,
        mean_error_ns: p.error.mean_ns,
        p50_error_ns: p.error.median_ns,
        p99_error_ns: p.error.p99_ns,
        max_error_ns: p.error.max_ns,
        schema_version: SCHEMA_VERSION,
    });
    csv_bytes(None, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_cover_the_grid() {
        let config = CpuConfig {
            strategies: vec!["precise".into(), "seed-hybrid".into()],
            intervals_ns: vec![1_000_000, 2_000_000],
            seconds_ns: 20_000_000,
            timer_slack_ns: None,
            blocks: 1,
        };
        let out = run(&config, &Context::hidden()).unwrap();
        assert!(out.complete);
        let data = out.data;
        assert_eq!(data.points.len(), 4);
        for p in &data.points {
            assert!(p.sleeps >= 1);
            assert_eq!(p.error.count, p.sleeps);
            assert_eq!(p.error.early_count, 0);
            assert!(
                p.cpu_percent >= 0.0 && p.cpu_percent <= 200.0,
                "{}",
                p.cpu_percent
            );
        }
        assert!(render(&data).contains("CPU %"));
    }

    /// With blocks, the contenders take turns block by block and each point carries its
    /// intervals over them (lateness and CPU).
    #[test]
    fn blocks_take_turns_and_give_intervals_over_them() {
        use crate::experiments::Experiment;
        let config = CpuConfig {
            strategies: vec!["precise".into(), "seed-hybrid".into()],
            intervals_ns: vec![1_000_000],
            seconds_ns: 40_000_000,
            timer_slack_ns: None,
            blocks: 8,
        };
        let out = run(&config, &Context::hidden()).unwrap();
        assert!(out.complete);
        assert_eq!(out.data.points.len(), 2);
        for p in &out.data.points {
            let u = p.units.as_ref().expect("intervals over blocks");
            assert_eq!((u.unit, u.units), (Unit::Block, 8), "{}", p.strategy);
            let ci = p.cpu_ci_percent.expect("a CPU interval over 8 blocks");
            assert!(ci.low() <= Some(p.cpu_percent) && ci.high() >= Some(p.cpu_percent));
            assert_eq!(p.error.count, p.sleeps);
        }
        assert_eq!(config.steps(), 2 * 8);
    }
}
