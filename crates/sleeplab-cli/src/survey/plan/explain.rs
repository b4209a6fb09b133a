//! The `explain` stage: why waits were late, from the kernel's own timestamps, for a few
//! representative waits. Where the kernel cannot be traced (not root, no tracefs, an
//! event missing) the stage is planned but skipped, its reason saying why and what to
//! run instead, and the survey carries that as a note.

use super::super::{Level, StagePlan};
use super::PlanEnv;
use crate::experiments::explain::{ExplainConfig, ExplainItem};

/// The one-shot waits explained, each at [`DURATIONS_NS`]: a sleep call, a timer fd and
/// a poll-family wait (the normal and quick levels).
const MECHANISMS: [&str; 3] = ["nanosleep", "timerfd", "epoll"];

/// `--full` adds the absolute sleep and a futex wait (`explain`'s own defaults).
const MECHANISMS_FULL: [&str; 5] = [
    "nanosleep",
    "clock-nanosleep-abs",
    "timerfd",
    "epoll",
    "futex",
];

/// The requested durations of those mechanisms: 100 µs and 1 ms.
const DURATIONS_NS: [u64; 2] = [100_000, 1_000_000];

/// The precise sleeper at 60 Hz.
const PRECISE: (&str, u64) = ("precise", 16_666_667);

/// The reason the stage is skipped where the kernel cannot be traced (`why`: the error).
pub fn skip_reason(why: &str) -> String {
    format!(
        "kernel tracing unavailable: {why}; run `sudo sleeplab explain` for the kernel's account of why waits are late"
    )
}

/// The mechanisms at 100 µs and 1 ms and the precise sleeper at 60 Hz, idle and with one
/// busy thread per CPU: 40 wakes per cell at `--quick`, 100 (a p99, and so a tail, per
/// cell) normally, 300 at `--full`. The JSON keeps no per-wake records (the cells'
/// summaries hold what the report draws).
pub(super) fn explain_stage(level: Level, env: &PlanEnv) -> StagePlan {
    let names: &[&str] = match level {
        Level::Full => &MECHANISMS_FULL,
        _ => &MECHANISMS,
    };
    let (iterations, rounds) = match level {
        Level::Quick => (40, 8),
        Level::Normal => (100, 10),
        Level::Full => (300, 10),
    };
    let supported = |n: &str| env.mechanisms.iter().any(|m| m.0 == n);
    let mut items: Vec<ExplainItem> = names
        .iter()
        .filter(|n| supported(n))
        .flat_map(|n| {
            DURATIONS_NS.map(|d| ExplainItem {
                mechanism: n.to_string(),
                requested_ns: d,
            })
        })
        .collect();
    items.push(ExplainItem {
        mechanism: PRECISE.0.into(),
        requested_ns: PRECISE.1,
    });
    let stage = StagePlan::new(
        "explain",
        "why waits were late, from the kernel's own timestamps",
        env.cpus,
        ExplainConfig {
            items,
            loads: vec![0, env.cpus.max(1)],
            timer_slacks_ns: vec![],
            iterations,
            rounds,
            json_wakes: 0,
            trace: true,
        },
    );
    match &env.untraceable {
        Some(why) => stage.skipped(skip_reason(why)),
        None => stage,
    }
}
