//! The survey's stages and their sizes.
//!
//! Every stage has a time budget per [`Level`]; the configs below are sized so each stage
//! stays within it on a 2-core VM (measured numbers in `docs/REPORT.md`). The budgets of
//! the normal level add up to at most [`NORMAL_BUDGET_MS`], which leaves room under the
//! two minutes the survey promises for stages whose runtime varies (runtimes start
//! interpreters and JVMs).

use super::{Level, StagePlan};
use crate::contenders::{self, Origin};
use crate::experiments::cpu::{CpuConfig, HYBRIDS};
use crate::experiments::pace::{DEFAULT_STRATEGIES, PaceConfig};
use crate::experiments::runtimes::{ProbeQuota, RuntimesConfig};
use crate::experiments::short::{CONFIDENCE, MIN_BATCH, ShortConfig};
use crate::experiments::simulate::{
    DEFAULT_INTERVALS_NS, DEFAULT_PREEMPT_PROB, Models, SimulateOptions, default_periods_ns,
};
use crate::experiments::sweep::{DEFAULT_DURATIONS_NS, Quota, SweepConfig};
use crate::experiments::timers::{TimersConfig, mechanisms as timer_mechanisms};
use crate::probe::catalog::RuntimeId;
use sleeplab::wait::Support;

/// The sum of the normal level's stage budgets never exceeds this (90 s).
pub const NORMAL_BUDGET_MS: u64 = 90_000;

/// What the plan depends on: the machine.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEnv {
    /// Online CPUs (the highest load level).
    pub cpus: usize,
    /// The timer slack the survey starts with, ns (the "default" of the slack stage).
    pub timer_slack_ns: u64,
    /// Supported OS wait mechanisms, in listing order: (name, takes a duration, family).
    pub mechanisms: Vec<(String, bool, String)>,
    /// Supported periodic timer mechanisms (`timers`), in table order.
    pub timer_mechanisms: Vec<String>,
}

impl PlanEnv {
    /// This machine, with `cpus` online CPUs (the run's fingerprint says how many).
    pub fn detect(cpus: usize) -> Self {
        Self {
            cpus,
            timer_slack_ns: sleeplab::system::timer_slack_ns(),
            mechanisms: contenders::all()
                .into_iter()
                .filter(|i| i.origin == Origin::Os && i.support == Support::Supported)
                .map(|i| (i.name.to_string(), i.takes_duration, i.family))
                .collect(),
            timer_mechanisms: timer_mechanisms::names()
                .into_iter()
                .filter(|n| timer_mechanisms::support(n) == Support::Supported)
                .map(str::to_string)
                .collect(),
        }
    }
}

/// Durations of the main sweep at `--full`: a denser grid (1–3–10 per decade) to 100 ms.
const SWEEP_DURATIONS_FULL: [u64; 12] = [
    0,
    1_000,
    3_000,
    10_000,
    30_000,
    100_000,
    300_000,
    1_000_000,
    3_000_000,
    10_000_000,
    30_000_000,
    100_000_000,
];

/// Durations of the slack comparison: where 50 µs of slack matters.
const SLACK_DURATIONS: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// The stages of a survey at `level` on the machine `env`, in running order.
pub fn plan(level: Level, env: &PlanEnv) -> Vec<StagePlan> {
    let mut stages = vec![sweep_stage(level, env)];
    if let Some(s) = slack_stage(level, env) {
        stages.push(s);
    }
    stages.push(short_stage(level, env));
    stages.push(pace_stage(level));
    stages.push(cpu_stage(level));
    if !env.timer_mechanisms.is_empty() {
        stages.push(timers_stage(level, env));
    }
    stages.push(simulate_stage(level));
    stages.push(runtimes_stage(level));
    stages
}

/// Seed 002 figure 4: the strategies under virtual schedulers of 1–10 ms, in virtual
/// time (CPU-bound, no waiting); `simulate`'s defaults but for the strategies and sizes.
fn simulate_stage(level: Level) -> StagePlan {
    let (strategies, sleeps, warmup, budget_ms): (&[&str], u64, u64, u64) = match level {
        Level::Quick => (&["precise"], 40, 10, 2_000),
        Level::Normal => (&["seed-hybrid", "precise"], 100, 30, 7_000),
        Level::Full => (
            &[
                "std-sleep",
                "fixed-margin",
                "sdl-precise",
                "seed-hybrid",
                "precise",
            ],
            300,
            50,
            30_000,
        ),
    };
    let options = SimulateOptions {
        strategies: Some(strategies.iter().map(|s| s.to_string()).collect()),
        intervals_ns: DEFAULT_INTERVALS_NS.to_vec(),
        models: Models::Schedulers {
            periods_ns: default_periods_ns(),
            preempt_prob: DEFAULT_PREEMPT_PROB,
        },
        sleeps,
        warmup,
        seed: 1,
    };
    StagePlan::new(
        "simulate",
        "the strategies under virtual schedulers of 1–10 ms (seed 002)",
        budget_ms,
        options,
    )
}

/// Seed 003: every runtime's own sleep through its probe. The runtimes that are not
/// installed are skipped by the experiment (and say how to install them). JRuby starts
/// a JVM per method (3–5 s each), so it runs only at `--full`.
fn runtimes_stage(level: Level) -> StagePlan {
    let ms = 1_000_000u64;
    let (ids, budget_ns, ticks, budget_ms): (Vec<RuntimeId>, u64, u64, u64) = match level {
        Level::Quick => (
            vec![
                RuntimeId::C,
                RuntimeId::Go,
                RuntimeId::Python,
                RuntimeId::Node,
            ],
            5 * ms,
            10,
            5_000,
        ),
        Level::Normal => (
            RuntimeId::ALL
                .into_iter()
                .filter(|r| *r != RuntimeId::Jruby)
                .collect(),
            10 * ms,
            20,
            18_000,
        ),
        Level::Full => (RuntimeId::ALL.to_vec(), 150 * ms, 100, 120_000),
    };
    StagePlan::new(
        "runtimes",
        "each language runtime's own sleep, through its probe (seed 003)",
        budget_ms,
        RuntimesConfig {
            runtimes: ids.iter().map(|r| r.name().to_string()).collect(),
            methods: None,
            durations_ns: if level == Level::Full {
                vec![100 * ms, 10 * ms, ms, 100_000, 10_000, 1_000]
            } else {
                vec![ms, 100_000, 10_000, 1_000]
            },
            quota: ProbeQuota::Budget {
                budget_ns,
                max_count: 100_000,
            },
            warmup: 2,
            period_ns: 5 * ms,
            ticks,
            loads: vec![0],
            timer_slacks_ns: vec![],
            pin_cpu: None,
            policy: Default::default(),
            priority: 0,
            mlock: false,
            json_samples: 100,
            output_cap_bytes: 64 << 20,
            startup_timeout_ns: 60_000_000_000,
            saved_files: vec![],
        },
    )
}

/// Seed 001: zero and minimal sleeps, 20 interleaved repetitions (the seed's minimum)
/// of shorter batches than `short`'s default.
fn short_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let (batch_time_ns, repetitions, budget_ms) = match level {
        Level::Quick => (1_500_000, 20, 3_000),
        Level::Normal => (4_000_000, 20, 6_000),
        Level::Full => (20_000_000, 30, 60_000),
    };
    StagePlan::new(
        "short",
        "what a zero and a minimal sleep cost (seed 001)",
        budget_ms,
        ShortConfig {
            mechanisms: env.mechanisms.iter().map(|m| m.0.clone()).collect(),
            timer_slacks_ns: vec![],
            batch: 3000,
            batch_time_ns,
            min_batch: MIN_BATCH,
            repetitions,
            seed: 1,
            confidence: CONFIDENCE,
        },
    )
}

/// Seed 002 figure 1: a 60 Hz loop per contender, at 1 ns slack for all.
fn pace_stage(level: Level) -> StagePlan {
    let (frames, budget_ms) = match level {
        Level::Quick => (30, 3_500),
        Level::Normal => (90, 10_000),
        Level::Full => (600, 62_000),
    };
    let rate_hz = 60.0;
    StagePlan::new(
        "pace",
        "a 60 Hz loop per precise-sleep contender (seed 002)",
        budget_ms,
        PaceConfig {
            strategies: DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect(),
            loads: vec![0],
            rate_hz,
            period_ns: (1e9 / rate_hz).round() as u64,
            frames,
            block: frames.min(30),
            work_ns: 0,
            timer_slack_ns: Some(1),
            json_samples: 200,
        },
    )
}

/// Seed 002 figure 3: CPU against the requested sleep for the hybrid strategies.
fn cpu_stage(level: Level) -> StagePlan {
    let ms = |v: &[u64]| v.iter().map(|m| m * 1_000_000).collect::<Vec<u64>>();
    let (intervals, seconds_ns, budget_ms) = match level {
        Level::Quick => (ms(&[1, 5, 20]), 100_000_000, 2_000),
        Level::Normal => (ms(&[1, 2, 3, 5, 10, 20]), 150_000_000, 5_000),
        Level::Full => (
            ms(&[1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25]),
            500_000_000,
            30_000,
        ),
    };
    StagePlan::new(
        "cpu",
        "CPU against requested sleep for the hybrids (seed 002)",
        budget_ms,
        CpuConfig {
            strategies: HYBRIDS.iter().map(|s| s.to_string()).collect(),
            intervals_ns: intervals,
            seconds_ns,
            timer_slack_ns: Some(1),
        },
    )
}

/// Seed 004: periodic timers, every mechanism at a few periods.
fn timers_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let ms = |v: &[u64]| v.iter().map(|m| m * 1_000_000).collect::<Vec<u64>>();
    let (periods, duration_ns) = match level {
        Level::Quick => (ms(&[10, 1]), 100_000_000),
        Level::Normal => (ms(&[20, 5, 1]), 250_000_000),
        Level::Full => (ms(&[100, 50, 20, 10, 5, 2, 1]), 1_000_000_000),
    };
    let cells = (env.timer_mechanisms.len() * periods.len()) as u64;
    StagePlan::new(
        "timers",
        "periodic timers: error per period (seed 004)",
        cells * duration_ns / 1_000_000 + 500,
        TimersConfig {
            mechanisms: env.timer_mechanisms.clone(),
            periods_ns: periods,
            duration_ns,
            threads: 1,
            loads: vec![0],
            timer_slacks_ns: vec![],
            json_samples: 200,
        },
    )
}

fn sweep_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let mechanisms: Vec<String> = env.mechanisms.iter().map(|m| m.0.clone()).collect();
    let cpus = env.cpus.max(1);
    let (durations, loads, quota, warmup, rounds, budget_ms) = match level {
        Level::Quick => (
            DEFAULT_DURATIONS_NS[..6].to_vec(),
            vec![0, cpus],
            Quota::Budget {
                budget_ns: 12_000_000,
                min_count: 2,
                max_count: 1_000,
            },
            1,
            1,
            8_000,
        ),
        Level::Normal => (
            DEFAULT_DURATIONS_NS.to_vec(),
            vec![0, cpus],
            Quota::Budget {
                budget_ns: 45_000_000,
                min_count: 2,
                max_count: 2_000,
            },
            1,
            2,
            20_000,
        ),
        Level::Full => (
            SWEEP_DURATIONS_FULL.to_vec(),
            if cpus > 1 {
                vec![0, 1, cpus]
            } else {
                vec![0, 1]
            },
            Quota::Budget {
                budget_ns: 200_000_000,
                min_count: 5,
                max_count: 20_000,
            },
            3,
            5,
            240_000,
        ),
    };
    StagePlan::new(
        "sweep",
        "every mechanism × requested duration × load",
        budget_ms,
        SweepConfig {
            mechanisms,
            durations_ns: durations,
            loads,
            timer_slacks_ns: vec![],
            quota,
            warmup,
            rounds,
            json_samples: 100,
            raw_cap: 100_000,
        },
    )
}

/// The sweep at the default slack and at 1 ns, interleaved in one run so the two are
/// measured under the same conditions. `None` when the slack is already 1 ns.
fn slack_stage(level: Level, env: &PlanEnv) -> Option<StagePlan> {
    if env.timer_slack_ns <= 1 {
        return None;
    }
    // Everything that sleeps in the kernel with a duration: not spin or yield, and not
    // the interval timer (its calls wait for the next period, not for the request).
    let mechanisms: Vec<String> = env
        .mechanisms
        .iter()
        .filter(|(name, takes, family)| *takes && family != "busy" && name != "timerfd-interval")
        .map(|m| m.0.clone())
        .collect();
    let (budget_ns, rounds, min_count, budget_ms) = match level {
        Level::Quick => (8_000_000, 1, 2, 3_000),
        Level::Normal => (30_000_000, 2, 3, 8_000),
        Level::Full => (150_000_000, 5, 5, 60_000),
    };
    Some(StagePlan::new(
        "sweep-slack",
        "the same waits at the default timer slack and at 1 ns",
        budget_ms,
        SweepConfig {
            mechanisms,
            durations_ns: SLACK_DURATIONS.to_vec(),
            loads: vec![0],
            timer_slacks_ns: vec![env.timer_slack_ns, 1],
            quota: Quota::Budget {
                budget_ns,
                min_count,
                max_count: 5_000,
            },
            warmup: 1,
            rounds,
            json_samples: 100,
            raw_cap: 100_000,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> PlanEnv {
        PlanEnv {
            cpus: 2,
            timer_slack_ns: 50_000,
            mechanisms: vec![
                ("nanosleep".into(), true, "sleep".into()),
                ("poll".into(), true, "poll".into()),
                ("yield".into(), false, "busy".into()),
                ("spin".into(), true, "busy".into()),
            ],
            timer_mechanisms: (0..10).map(|i| format!("timer-{i}")).collect(),
        }
    }

    #[test]
    fn names_are_unique_and_normal_fits_its_budget() {
        for level in [Level::Quick, Level::Normal, Level::Full] {
            let p = plan(level, &env());
            let mut names: Vec<_> = p.iter().map(|s| s.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), p.len());
        }
        let total: u64 = plan(Level::Normal, &env())
            .iter()
            .map(|s| s.budget_ms)
            .sum();
        assert!(total <= NORMAL_BUDGET_MS, "{total} ms");
        let quick: u64 = plan(Level::Quick, &env()).iter().map(|s| s.budget_ms).sum();
        assert!(quick <= 30_000, "{quick} ms");
    }

    #[test]
    fn slack_stage_compares_default_with_one_ns_on_sleeping_mechanisms() {
        let p = plan(Level::Normal, &env());
        let s = p.iter().find(|s| s.name == "sweep-slack").unwrap();
        let c = s.config::<SweepConfig>().expect("a sweep");
        assert_eq!(c.timer_slacks_ns, vec![50_000, 1]);
        assert_eq!(c.mechanisms, vec!["nanosleep", "poll"]);
        // Already at 1 ns: nothing to compare.
        let mut e = env();
        e.timer_slack_ns = 1;
        assert!(
            plan(Level::Normal, &e)
                .iter()
                .all(|s| s.name != "sweep-slack")
        );
    }

    #[test]
    fn main_sweep_loads_every_cpu() {
        let p = plan(Level::Normal, &env());
        let c = p[0].config::<SweepConfig>().expect("a sweep");
        assert_eq!(c.loads, vec![0, 2]);
        assert!(c.timer_slacks_ns.is_empty());
    }
}
