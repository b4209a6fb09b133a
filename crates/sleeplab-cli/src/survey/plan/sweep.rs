//! The main sweep's stage (every mechanism × request × load, with its `focus` rules)
//! and the timer-slack comparison: which cells each level measures, and how often.

use super::super::{Level, StagePlan};
use super::PlanEnv;
use crate::experiments::sweep::{DEFAULT_DURATIONS_NS, Focus, Quota, SweepConfig};

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

/// The first sleep call among the machine's mechanisms (the findings quote it): the
/// representative of long requests and of the oversubscribed load.
const SLEEP_CALLS: [&str; 3] = ["nanosleep", "clock-nanosleep", "std-sleep"];

/// A second representative at 10 ms, of the millisecond-rounding calls.
const MS_CALL: &str = "poll";

/// The loads of the main sweep: idle, one busy thread per CPU, and oversubscribed (CPUs
/// + 3, seed 000's regime); `--full` adds one busy thread.
pub fn sweep_loads(level: Level, cpus: usize) -> Vec<usize> {
    let cpus = cpus.max(1);
    let mut loads = vec![0];
    if level == Level::Full {
        loads.push(1);
    }
    loads.extend([cpus, cpus + 3]);
    loads.dedup();
    loads
}

/// Every mechanism × 0 … 100 ms × [`sweep_loads`]. Requests up to 1 ms at load 0 and at
/// the CPU count: every mechanism, at least 100 samples (normal). 10 ms: the sleep call
/// and poll, 100 samples; 100 ms: the sleep call, idle only. Oversubscribed: the sleep
/// call at every request up to 10 ms (each wake-up there waits for a CPU).
pub(super) fn sweep_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let mechanisms: Vec<String> = env.mechanisms.iter().map(|m| m.0.clone()).collect();
    let cpus = env.cpus.max(1);
    let loads = sweep_loads(level, cpus);
    let over = cpus + 3;
    let has = |n: &str| mechanisms.iter().any(|m| m == n);
    let sleep_call: Vec<String> = SLEEP_CALLS
        .iter()
        .find(|n| has(n))
        .map(|n| vec![n.to_string()])
        .unwrap_or_default();
    let mut long_pair = sleep_call.clone();
    if has(MS_CALL) {
        long_pair.push(MS_CALL.to_string());
    }
    let not_over: Vec<usize> = loads.iter().copied().filter(|&l| l != over).collect();
    let loaded: Vec<usize> = loads.iter().copied().filter(|&l| l > 0).collect();
    let ms = 1_000_000;
    let (durations, quota, warmup, rounds, long_count, over_count) = match level {
        Level::Quick => (
            DEFAULT_DURATIONS_NS[..6].to_vec(),
            Quota::Budget {
                budget_ns: 12_000_000,
                min_count: 2,
                max_count: 1_000,
            },
            1,
            8,
            10,
            20,
        ),
        Level::Normal => (
            DEFAULT_DURATIONS_NS.to_vec(),
            Quota::Budget {
                budget_ns: 30_000_000,
                min_count: 100,
                max_count: 2_000,
            },
            1,
            10,
            100,
            100,
        ),
        Level::Full => (
            SWEEP_DURATIONS_FULL.to_vec(),
            Quota::Budget {
                budget_ns: 200_000_000,
                min_count: 100,
                max_count: 20_000,
            },
            3,
            10,
            100,
            200,
        ),
    };
    let mut focus = Vec::new();
    if level != Level::Full {
        let long: Vec<u64> = durations
            .iter()
            .copied()
            .filter(|&d| d >= 10 * ms)
            .collect();
        // 100 ms: the sleep call, idle only; 10 ms: two representatives at every load
        // but the oversubscribed one.
        focus.push(Focus {
            requests_ns: long.iter().copied().filter(|&d| d >= 100 * ms).collect(),
            loads: vec![0],
            mechanisms: sleep_call.clone(),
            count: long_count,
        });
        focus.push(Focus {
            requests_ns: long.iter().copied().filter(|&d| d >= 100 * ms).collect(),
            loads: loaded,
            mechanisms: vec![],
            count: 0,
        });
        focus.push(Focus {
            requests_ns: long,
            loads: not_over,
            mechanisms: long_pair,
            count: long_count,
        });
    }
    if loads.contains(&over) {
        let (upto, none_above): (Vec<u64>, Vec<u64>) =
            durations.iter().partition(|&&d| d <= 10 * ms);
        focus.push(Focus {
            requests_ns: upto,
            loads: vec![over],
            mechanisms: sleep_call,
            count: over_count,
        });
        focus.push(Focus {
            requests_ns: none_above,
            loads: vec![over],
            mechanisms: vec![],
            count: 0,
        });
    }
    focus.retain(|f| !f.requests_ns.is_empty() && !f.loads.is_empty());
    StagePlan::new(
        "sweep",
        "every mechanism × requested duration × load (up to oversubscribed)",
        cpus,
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
            focus,
            trace: false,
        },
    )
}

/// The sweep at the default slack and at 1 ns, interleaved in one run so the two are
/// measured under the same conditions. `None` when the slack is already 1 ns.
pub(super) fn slack_stage(level: Level, env: &PlanEnv) -> Option<StagePlan> {
    if env.timer_slack_ns <= 1 {
        return None;
    }
    // Everything that sleeps in the kernel with a duration and takes the thread's slack:
    // not spin or yield, not the interval timer (its calls wait for the next period, not
    // for the request), not io_uring's or futex_waitv's hrtimers (armed without the
    // slack), not the async runtimes (the sweep has them).
    let mechanisms: Vec<String> = env
        .mechanisms
        .iter()
        .filter(|(name, takes, family)| {
            *takes
                && !["busy", "io_uring", "async"].contains(&family.as_str())
                && !["timerfd-interval", "futex-waitv"].contains(&name.as_str())
        })
        .map(|m| m.0.clone())
        .collect();
    let (budget_ns, rounds, min_count) = match level {
        Level::Quick => (8_000_000, 8, 2),
        Level::Normal => (30_000_000, 10, 100),
        Level::Full => (150_000_000, 10, 100),
    };
    Some(StagePlan::new(
        "sweep-slack",
        "the same waits at the default timer slack and at 1 ns",
        env.cpus,
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
            focus: vec![],
            trace: false,
        },
    ))
}
