//! The survey's stages and their sizes.
//!
//! Every stage's planned time is its config's [`Estimate`](super::estimate::Estimate)
//! (requested durations × counts plus stated allowances); at the normal level they add
//! up to at most [`NORMAL_BUDGET_MS`] (a unit test). The normal level spends its samples
//! where the questions are: every cell a finding reads holds at least 100 samples (a
//! p99 needs them); long requests, which behave alike across mechanisms, are measured on
//! representatives only, and the oversubscribed load (CPUs + 3 busy threads) on the
//! first sleep call.

mod explain;
mod sweep;
mod tune;

use super::{Level, StagePlan};
use crate::contenders::{self, Origin};
use crate::experiments::cpu::{CpuConfig, HYBRIDS};
use crate::experiments::pace::{DEFAULT_STRATEGIES, PaceConfig};
use crate::experiments::runtimes::{ProbeQuota, RuntimesConfig};
use crate::experiments::short::{CONFIDENCE, MIN_BATCH, ShortConfig};
use crate::experiments::simulate::{
    DEFAULT_INTERVALS_NS, DEFAULT_PREEMPT_PROB, Models, SimulateOptions, default_periods_ns,
};
use crate::experiments::timers::{TimersConfig, mechanisms as timer_mechanisms};
use crate::probe::catalog::RuntimeId;
use explain::explain_stage;
use sleeplab::wait::Support;
pub use sweep::sweep_loads;
use sweep::{slack_stage, sweep_stage};
pub use tune::tune_stage;

/// The sum of the normal level's stage estimates never exceeds this (90 s).
pub const NORMAL_BUDGET_MS: u64 = 90_000;

/// How long the survey takes, the one figure README.md, docs/REPORT.md and `--help`
/// state (a test checks they agree; replace it with the time measured on a quiet 2-core
/// VM, within [`NORMAL_BUDGET_MS`]).
pub const RUN_TIME: &str = "about 70 s";

/// How long `--quick` takes, likewise (within [`QUICK_BUDGET_MS`]).
pub const QUICK_RUN_TIME: &str = "about 15 s";

/// The sum of the quick level's stage estimates never exceeds this (30 s).
pub const QUICK_BUDGET_MS: u64 = 30_000;

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
    /// Why the kernel cannot be traced here (`None`: it can; the `explain` stage runs).
    pub untraceable: Option<String>,
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
            untraceable: sleeplab_account::available().err().map(|e| e.to_string()),
        }
    }
}

impl PlanEnv {
    /// The machine without the rows the survey leaves to `sweep` and `timers`: those
    /// whose registry row names another as the row they vary
    /// ([`sleeplab::wait::Mechanism::variant_of`], and the periodic rows' likewise):
    /// tokio's `sleep_until` and multi-thread rows beside `tokio-sleep` (each waits a
    /// whole millisecond or more, so at 100 samples a cell they would add seconds and
    /// tell little more), the absolute io_uring timeout beside the relative one, and the
    /// variants of `tokio-interval-burst`.
    fn surveyed(&self) -> Self {
        let mut env = self.clone();
        env.mechanisms.retain(|m| !is_variant(&m.0));
        env.timer_mechanisms.retain(|m| !is_variant(m));
        env
    }
}

/// Whether the one-shot or periodic row named `name` is a variant of another row.
fn is_variant(name: &str) -> bool {
    sleeplab::wait::find(name).is_some_and(|m| m.variant_of.is_some())
        || sleeplab::wait::periodic::find(name).is_some_and(|m| m.variant_of.is_some())
}

/// The stages of a survey at `level` on the machine `env`, in running order.
pub fn plan(level: Level, env: &PlanEnv) -> Vec<StagePlan> {
    let env = &env.surveyed();
    let mut stages = vec![sweep_stage(level, env)];
    if let Some(s) = slack_stage(level, env) {
        stages.push(s);
    }
    stages.push(short_stage(level, env));
    stages.push(pace_stage(level, env.cpus));
    stages.push(cpu_stage(level, env.cpus));
    if !env.timer_mechanisms.is_empty() {
        stages.push(timers_stage(level, env));
    }
    stages.push(explain_stage(level, env));
    stages.push(simulate_stage(level, env.cpus));
    stages.push(runtimes_stage(level, env.cpus));
    // Only the thorough survey: the normal one's 90 s hold no room for it.
    if level == Level::Full {
        stages.push(tune_stage(env.cpus, false));
    }
    stages
}

/// The survey's planned time at `level` on `env`, ms: the sum of its stages' estimates
/// and the host noise probes before and after it (what the survey announces).
pub fn planned_ms(stages: &[StagePlan]) -> u64 {
    // The host noise probes, before and after the whole survey.
    let probes = crate::model::host_noise::PLANNED_MS;
    stages.iter().map(|s| s.budget_ms).sum::<u64>() + probes
}

/// Seed 002 figure 4: the strategies under virtual schedulers of 1–10 ms, in virtual
/// time (CPU-bound, no waiting); `simulate`'s defaults but for the strategies and sizes.
fn simulate_stage(level: Level, cpus: usize) -> StagePlan {
    let (strategies, sleeps, warmup): (&[&str], u64, u64) = match level {
        Level::Quick => (&["precise"], 40, 10),
        Level::Normal => (&["seed-hybrid", "precise"], 100, 30),
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
        host: None,
    };
    StagePlan::new(
        "simulate",
        "the strategies under virtual schedulers of 1–10 ms (seed 002)",
        cpus,
        options,
    )
}

/// Seed 003: every runtime's own sleep through its probe. The runtimes that are not
/// installed are skipped by the experiment (and say how to install them). JRuby starts
/// a JVM per method (3–5 s each), so it runs only at `--full`.
fn runtimes_stage(level: Level, cpus: usize) -> StagePlan {
    let ms = 1_000_000u64;
    // Seed 003's design: a count fixed per request (the ideal total count × request is
    // set, the actual total measured); every request up to 1 ms shares it, so each
    // method is one probe run.
    let (ids, count, ticks): (Vec<RuntimeId>, u64, u64) = match level {
        Level::Quick => (
            vec![
                RuntimeId::C,
                RuntimeId::Go,
                RuntimeId::Python,
                RuntimeId::Node,
            ],
            30,
            10,
        ),
        Level::Normal => (
            RuntimeId::ALL
                .into_iter()
                .filter(|r| *r != RuntimeId::Jruby)
                .collect(),
            100,
            20,
        ),
        Level::Full => (RuntimeId::ALL.to_vec(), 1_000, 100),
    };
    StagePlan::new(
        "runtimes",
        "each language runtime's own sleep, through its probe (seed 003)",
        cpus,
        RuntimesConfig {
            runtimes: ids.iter().map(|r| r.name().to_string()).collect(),
            durations_ns: if level == Level::Full {
                vec![100 * ms, 10 * ms, ms, 100_000, 10_000, 1_000]
            } else {
                vec![ms, 100_000, 10_000, 1_000]
            },
            quota: ProbeQuota::PerRequest {
                count,
                // Full: seed 003's second of sleep per cell; otherwise 1 ms × count.
                max_ideal_ns: if level == Level::Full {
                    1_000 * ms
                } else {
                    count * ms
                },
            },
            warmup: 2,
            period_ns: 5 * ms,
            ticks,
            json_samples: 100,
            startup_timeout_ns: 60_000_000_000,
            ..RuntimesConfig::default()
        },
    )
}

/// Seed 001: zero and minimal sleeps, 20 interleaved repetitions (the seed's minimum)
/// of shorter batches than `short`'s default; not the async runtimes' timers (tokio's
/// shortest sleep is a millisecond: the sweep has them).
fn short_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let (batch_time_ns, repetitions) = match level {
        Level::Quick => (1_500_000, 20),
        Level::Normal => (4_000_000, 20),
        Level::Full => (20_000_000, 30),
    };
    StagePlan::new(
        "short",
        "what a zero and a minimal sleep cost (seed 001)",
        env.cpus,
        ShortConfig {
            mechanisms: env
                .mechanisms
                .iter()
                .filter(|m| m.2 != "async")
                .map(|m| m.0.clone())
                .collect(),
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
fn pace_stage(level: Level, cpus: usize) -> StagePlan {
    // Normal: 100 frames per contender, the fewest whose p99 resolves, in 10 blocks (the
    // verdicts rest on intervals over blocks, which need 8).
    let (frames, block) = match level {
        Level::Quick => (30, 3),
        Level::Normal => (100, 10),
        Level::Full => (600, 30),
    };
    let rate_hz = 60.0;
    StagePlan::new(
        "pace",
        "a 60 Hz loop per precise-sleep contender (seed 002)",
        cpus,
        PaceConfig {
            strategies: DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect(),
            loads: vec![0],
            rate_hz,
            period_ns: (1e9 / rate_hz).round() as u64,
            frames,
            block,
            work_ns: 0,
            timer_slack_ns: Some(1),
            json_samples: 200,
            repeat: 1,
            trace: false,
        },
    )
}

/// Seed 002 figure 3: CPU against the requested sleep for the hybrid strategies.
fn cpu_stage(level: Level, cpus: usize) -> StagePlan {
    let ms = |v: &[u64]| v.iter().map(|m| m * 1_000_000).collect::<Vec<u64>>();
    let (intervals, seconds_ns) = match level {
        Level::Quick => (ms(&[1, 5, 20]), 100_000_000),
        Level::Normal => (ms(&[1, 2, 3, 5, 10, 20]), 150_000_000),
        Level::Full => (ms(&[1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25]), 500_000_000),
    };
    StagePlan::new(
        "cpu",
        "CPU against requested sleep for the hybrids (seed 002)",
        cpus,
        CpuConfig {
            strategies: HYBRIDS.iter().map(|s| s.to_string()).collect(),
            intervals_ns: intervals,
            seconds_ns,
            timer_slack_ns: Some(1),
            blocks: 1,
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
    StagePlan::new(
        "timers",
        "periodic timers: error per period (seed 004)",
        env.cpus,
        TimersConfig {
            mechanisms: env.timer_mechanisms.clone(),
            periods_ns: periods,
            duration_ns,
            threads: 1,
            loads: vec![0],
            timer_slacks_ns: vec![],
            json_samples: 200,
            trace: false,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::sweep::SweepConfig;

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
            untraceable: None,
        }
    }

    /// Every OS mechanism the library knows (supported here or not), 10 periodic timers:
    /// the largest plan a Linux machine gets.
    fn every_mechanism(cpus: usize) -> PlanEnv {
        PlanEnv {
            cpus,
            timer_slack_ns: 50_000,
            mechanisms: contenders::all()
                .into_iter()
                .filter(|i| i.origin == Origin::Os)
                .map(|i| (i.name.to_string(), i.takes_duration, i.family))
                .collect(),
            timer_mechanisms: (0..10).map(|i| format!("timer-{i}")).collect(),
            untraceable: None,
        }
    }

    /// The main sweep has the io_uring, futex_waitv and async rows that cost what the
    /// others do; their near-copies are left to `sweep` and `timers`.
    #[test]
    fn the_survey_keeps_the_cheap_new_waits_and_leaves_their_copies() {
        use crate::experiments::sweep::SweepConfig;
        let mut e = every_mechanism(2);
        e.timer_mechanisms = vec![
            "ticker".into(),
            "tokio-interval-burst".into(),
            "tokio-interval-delay".into(),
        ];
        let p = plan(Level::Normal, &e);
        let sweep = p[0].config::<SweepConfig>().unwrap();
        for m in [
            "futex-waitv",
            "io-uring-timeout",
            "io-uring-wait",
            "tokio-sleep",
            "async-io-timer",
        ] {
            assert!(sweep.mechanisms.iter().any(|x| x == m), "{m}");
        }
        for m in [
            "tokio-sleep-until",
            "tokio-sleep-mt",
            "tokio-sleep-until-mt",
            "io-uring-timeout-abs",
        ] {
            assert!(!sweep.mechanisms.iter().any(|x| x == m), "{m}");
        }
        let timers = p.iter().find(|s| s.name == "timers").unwrap();
        let timers = timers.config::<TimersConfig>().unwrap();
        assert_eq!(timers.mechanisms, ["ticker", "tokio-interval-burst"]);
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
        for cpus in [1, 2, 4, 8, 64] {
            let e = every_mechanism(cpus);
            let normal = planned_ms(&plan(Level::Normal, &e));
            assert!(normal <= NORMAL_BUDGET_MS, "{cpus} CPUs: {normal} ms");
            let quick = planned_ms(&plan(Level::Quick, &e));
            assert!(quick <= QUICK_BUDGET_MS, "{cpus} CPUs: {quick} ms");
        }
    }

    /// The explain stage: nanosleep, timerfd and epoll at 100 µs and 1 ms and the
    /// precise sleeper at 60 Hz, idle and with a busy thread per CPU; 40 wakes per cell at
    /// --quick, 100 (a p99, so a tail) normally; a few seconds. Where the kernel cannot
    /// be traced it is skipped, saying why and what to run.
    #[test]
    fn explain_stage_takes_seconds_and_is_skipped_without_tracing() {
        use crate::experiments::explain::ExplainConfig;
        let mut e = every_mechanism(2);
        for (level, wakes, max_ms) in [(Level::Quick, 40, 3_000), (Level::Normal, 100, 6_000)] {
            let p = plan(level, &e);
            let s = p.iter().find(|s| s.name == "explain").unwrap();
            assert_eq!(s.skip_reason(), None);
            let c = s.config::<ExplainConfig>().unwrap();
            assert_eq!((c.iterations, c.loads.clone()), (wakes, vec![0, 2]));
            let items: Vec<(&str, u64)> = c
                .items
                .iter()
                .map(|i| (i.mechanism.as_str(), i.requested_ns))
                .collect();
            assert_eq!(
                items,
                [
                    ("nanosleep", 100_000),
                    ("nanosleep", 1_000_000),
                    ("timerfd", 100_000),
                    ("timerfd", 1_000_000),
                    ("epoll", 100_000),
                    ("epoll", 1_000_000),
                    ("precise", 16_666_667)
                ]
            );
            assert!(
                (1_000..=max_ms).contains(&s.budget_ms),
                "{level:?}: {} ms",
                s.budget_ms
            );
        }
        let full = plan(Level::Full, &e);
        let c = full
            .iter()
            .find_map(|s| s.config::<ExplainConfig>())
            .unwrap();
        assert_eq!((c.iterations, c.items.len()), (300, 11));
        // A mechanism this machine lacks is left out.
        e.mechanisms.retain(|m| m.0 != "epoll");
        let p = plan(Level::Normal, &e);
        let c = p.iter().find_map(|s| s.config::<ExplainConfig>()).unwrap();
        assert!(c.items.iter().all(|i| i.mechanism != "epoll"));
        e.untraceable = Some("not allowed to trace timer:hrtimer_start".into());
        let p = plan(Level::Normal, &e);
        let s = p.iter().find(|s| s.name == "explain").unwrap();
        assert_eq!(s.budget_ms, 0);
        let why = s.skip_reason().unwrap();
        assert!(
            why.contains("not allowed to trace") && why.contains("`sudo sleeplab explain`"),
            "{why}"
        );
    }

    /// The runtimes stage follows seed 003: 100 calls at every request, fixed before
    /// measuring (one probe run per method: every request shares the count).
    #[test]
    fn runtimes_stage_fixes_the_count_per_request() {
        let p = plan(Level::Normal, &every_mechanism(2));
        let rt = p.iter().find(|s| s.name == "runtimes").unwrap();
        let c = rt.config::<RuntimesConfig>().unwrap();
        for &d in &c.durations_ns {
            assert_eq!(c.quota.count_for(d), Some(100), "{d} ns");
        }
    }

    /// Every budget is the estimate of the stage's own config (one derivation).
    #[test]
    fn stage_budgets_are_their_configs_estimates() {
        use super::super::Estimate;
        let p = plan(Level::Normal, &every_mechanism(2));
        let sweep = p[0].config::<SweepConfig>().unwrap();
        assert_eq!(p[0].budget_ms, sweep.estimate_ns(2).div_ceil(1_000_000));
        assert!(p.iter().all(|s| s.budget_ms > 0));
    }

    /// The normal sweep: every cell at least 100 samples; 100 ms on the sleep call only,
    /// idle; 10 ms on two representatives; oversubscribed on the sleep call up to 10 ms.
    #[test]
    fn normal_sweep_cells_resolve_a_p99_where_the_questions_are() {
        use crate::survey::estimate::samples;
        let p = plan(Level::Normal, &every_mechanism(2));
        let c = p[0].config::<SweepConfig>().unwrap();
        let cells = c.planned_cells();
        for &(m, d, load, q) in &cells {
            assert!(
                samples(q, 1) >= 100 && samples(q, u64::MAX) >= 100,
                "{m} {d} {load}"
            );
        }
        let at = |d: u64, load: usize| -> Vec<&str> {
            cells
                .iter()
                .filter(|c| c.1 == d && c.2 == load)
                .map(|c| c.0)
                .collect()
        };
        assert_eq!(at(100_000_000, 0), vec!["nanosleep"]);
        assert!(at(100_000_000, 2).is_empty() && at(100_000_000, 5).is_empty());
        assert_eq!(at(10_000_000, 0), vec!["nanosleep", "poll"]);
        assert_eq!(at(10_000_000, 2), vec!["nanosleep", "poll"]);
        assert_eq!(at(10_000_000, 5), vec!["nanosleep"]);
        assert_eq!(at(1_000_000, 5), vec!["nanosleep"]);
        assert!(at(1_000_000, 0).len() > 10, "every mechanism at 1 ms");
        assert_eq!(at(1_000_000, 0), at(1_000_000, 2));
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
    fn main_sweep_loads_every_cpu_and_oversubscribes() {
        let p = plan(Level::Normal, &env());
        let c = p[0].config::<SweepConfig>().expect("a sweep");
        assert_eq!(c.loads, vec![0, 2, 5]);
        assert!(c.timer_slacks_ns.is_empty());
        assert_eq!(sweep_loads(Level::Full, 1), vec![0, 1, 4]);
        assert_eq!(sweep_loads(Level::Full, 4), vec![0, 1, 4, 7]);
        assert_eq!(sweep_loads(Level::Quick, 0), vec![0, 1, 4]);
    }
}
