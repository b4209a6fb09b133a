//! `sleeplab advise`: which way of waiting meets a tolerance at the lowest CPU here.
//!
//! It measures every candidate for the user's case — a periodic loop (`--period`, run
//! as `pace` does: absolute deadlines) or one-shot waits (`--duration`, run as `cpu`
//! does: relative sleeps) — under 1 ns timer slack, plus the plain absolute sleep at the
//! slack the thread inherited (what a program gets without changing anything). The
//! choice is a pure function of those measurements ([`choose`]).
//!
//! A candidate *meets* the tolerance only where the 95 % interval of its p99 over its
//! [`BLOCKS`] blocks (`stats::units`) lies below it, and *misses* it only where the
//! interval lies above; in between the run cannot tell, and the reason says so
//! ([`reason`], every claim checked). "The lowest CPU" is a verdict too: over the CPU's
//! intervals across the blocks.

mod snippet;

pub use sleeplab_results::advise::*;
pub use snippet::snippet;

use crate::experiments::cpu::{self, CpuConfig};
use crate::experiments::pace::{self, PaceConfig};
use crate::experiments::tune::sentence::advise_sentence;
use crate::experiments::tune::{CellSpec, TuneConfig};
use crate::experiments::{Context, Experiment, Outcome};
use sleeplab_stats::{Ci, Summary, UnitIntervals};

/// What to measure and decide.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviseConfig {
    /// The case.
    pub need: Need,
    /// Acceptable p99 lateness, ns.
    pub tolerance_ns: u64,
    /// Measuring time per candidate, ns.
    pub seconds_ns: u64,
    /// Whether to measure afterwards what the per-process machine settings do to the
    /// chosen way of waiting (a short `tune` of it at the case's wait).
    pub tune: bool,
}

/// What one candidate's run measured: its lateness, its CPU, and their intervals over
/// its blocks.
struct Measured<'a> {
    error: &'a Summary,
    cpu_percent: f64,
    units: Option<&'a UnitIntervals>,
    cpu_ci_percent: Option<Ci>,
}

/// A strategy measured under `slack` in `waits` waits.
fn candidate_of(strategy: &str, slack: u64, waits: u64, m: Measured) -> Candidate {
    Candidate {
        strategy: strategy.to_string(),
        timer_slack_ns: slack,
        waits,
        p50_ns: m.error.median_ns,
        p50_ci_ns: m.error.median_ci_ns,
        p99_ns: m.error.p99_ns,
        p99_ci_ns: m.error.p99_ci_ns,
        max_ns: m.error.max_ns,
        cpu_percent: m.cpu_percent,
        units: m.units.cloned(),
        cpu_ci_percent: m.cpu_ci_percent,
    }
}

/// The candidates run under 1 ns slack (pure spin last: the reference, at 100 % CPU).
pub const CANDIDATES: [&str; 7] = [
    "clock-nanosleep-abs",
    "fixed-margin",
    "spin-sleep",
    "sdl-precise",
    "seed-hybrid",
    "precise",
    "spin",
];
/// Blocks each candidate's measuring time is split into, the candidates taking turns:
/// the units its verdicts rest on (`stats::units` needs 8).
pub const BLOCKS: u64 = 20;

/// Frames per candidate of a periodic case: `seconds / period`, within 20 and a million.
fn frames(seconds_ns: u64, period_ns: u64) -> u64 {
    (seconds_ns / period_ns).clamp(20, 1_000_000)
}

/// `sleeplab advise`.
impl Experiment for AdviseConfig {
    const NAME: &'static str = sleeplab_results::advise::NAME;
    type Data = AdviseData;
    const HOST_NOISE_LINE: bool = true;

    /// Frames (periodic) or blocks (one-shot) of every candidate, and of the plain
    /// sleep at the inherited slack.
    fn steps(&self) -> u64 {
        let per_candidate = match self.need {
            Need::Period { period_ns } => frames(self.seconds_ns, period_ns),
            Need::Duration { .. } => BLOCKS,
        };
        per_candidate * (CANDIDATES.len() as u64 + 1)
            + if self.tune {
                tune_config("clock-nanosleep-abs", &self.need).steps()
            } else {
                0
            }
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<AdviseData>> {
        run(self, ctx)
    }

    // The terminal prints the data's own view (the default render), as the report does.

    // No CSV (the default): the evidence is the candidates' summaries, in the JSON.
}

/// The most waiting time per setting and round `advise --tune` spends, ns (250 ms:
/// 100 waits up to 2.5 ms).
pub const ADVISE_TUNE_ROUND_NS: u64 = 250_000_000;

/// The short tune `advise --tune` runs on the chosen `strategy`: every per-process
/// setting that applies, 8 rounds (an interval needs 8), each round long enough for 100
/// waits of the case (a p99 in every round, so the p99's change is paired over them),
/// at least 25 ms and at most [`ADVISE_TUNE_ROUND_NS`] (longer waits: fewer, and a p99
/// change then undecided, saying why).
pub fn tune_config(strategy: &str, need: &Need) -> TuneConfig {
    let wait_ns = match need {
        Need::Period { period_ns } => *period_ns,
        Need::Duration { duration_ns } => *duration_ns,
    };
    TuneConfig {
        cells: vec![CellSpec {
            mechanism: strategy.into(),
            requested_ns: wait_ns,
        }],
        settings: None,
        system: false,
        rounds: crate::experiments::tune::DEFAULT_ROUNDS,
        budget_ns: (100 * wait_ns).clamp(
            crate::experiments::tune::QUICK_BUDGET_NS,
            ADVISE_TUNE_ROUND_NS,
        ),
        cpu: 0,
    }
}

/// Measures the candidates and decides.
pub fn run(config: &AdviseConfig, ctx: &Context) -> anyhow::Result<Outcome<AdviseData>> {
    let AdviseConfig {
        need,
        tolerance_ns,
        seconds_ns,
        tune,
    } = config;
    let (tolerance_ns, seconds_ns) = (*tolerance_ns, *seconds_ns);
    let precise_set: Vec<String> = CANDIDATES.iter().map(|s| s.to_string()).collect();
    let inherited = sleeplab::system::timer_slack_ns();
    let mut candidates = Vec::new();
    let mut complete = true;
    let mut settings = ctx.threads.record();
    // Two passes: every candidate at 1 ns slack, then the plain sleep as inherited.
    for (names, slack) in [
        (precise_set, 1u64),
        (vec!["clock-nanosleep-abs".to_string()], inherited.max(1)),
    ] {
        match need {
            Need::Period { period_ns } => {
                let frames = frames(seconds_ns, *period_ns);
                let config = PaceConfig {
                    strategies: names,
                    loads: vec![0],
                    rate_hz: 1e9 / *period_ns as f64,
                    period_ns: *period_ns,
                    frames,
                    block: (frames / BLOCKS).max(1),
                    work_ns: 0,
                    timer_slack_ns: Some(slack),
                    json_samples: 0,
                    repeat: 1,
                    trace: false,
                };
                let out = pace::run(&config, ctx)?;
                complete &= out.complete;
                settings = out.settings;
                candidates.extend(out.data.results.iter().map(|r| {
                    let m = Measured {
                        error: &r.error,
                        cpu_percent: r.cpu_percent,
                        units: r.units.as_ref(),
                        cpu_ci_percent: r.cpu_ci_percent,
                    };
                    candidate_of(&r.strategy, slack, r.error.count, m)
                }));
            }
            Need::Duration { duration_ns } => {
                let config = CpuConfig {
                    strategies: names,
                    intervals_ns: vec![*duration_ns],
                    seconds_ns,
                    timer_slack_ns: Some(slack),
                    blocks: BLOCKS,
                };
                let out = cpu::run(&config, ctx)?;
                complete &= out.complete;
                settings = out.settings;
                candidates.extend(out.data.points.iter().map(|p| {
                    let m = Measured {
                        error: &p.error,
                        cpu_percent: p.cpu_percent,
                        units: p.units.as_ref(),
                        cpu_ci_percent: p.cpu_ci_percent,
                    };
                    candidate_of(&p.strategy, slack, p.sleeps, m)
                }));
            }
        }
    }
    let (chosen, meets) = choose(&candidates, tolerance_ns).unwrap_or((0, false));
    let c = candidates.get(chosen).cloned();
    let reason = reason(&candidates, tolerance_ns, chosen, meets, ctx.hints).text;
    let snippet = c
        .as_ref()
        .map(|c| snippet(&c.strategy, need))
        .unwrap_or_default();
    let mut notes = Vec::new();
    let tuned = match (&c, *tune) {
        (Some(c), true) => {
            // As the recommendation runs: at its timer slack (the measuring thread
            // inherits this thread's), so "as is" is the snippet's own setting.
            let _slack = sleeplab::system::SlackGuard::set(c.timer_slack_ns.max(1))?;
            let out = tune_config(&c.strategy, need).run(ctx)?;
            complete &= out.complete;
            notes = out.notes;
            Some(out.data)
        }
        _ => None,
    };
    let setting = c
        .as_ref()
        .zip(tuned.as_ref())
        .and_then(|(c, t)| advise_sentence(&c.strategy, t))
        .map(|s| s.text);
    let data = AdviseData {
        need: need.clone(),
        tolerance_ns,
        seconds_ns,
        candidates,
        advice: Advice {
            chosen,
            meets_tolerance: meets,
            reason,
            snippet,
            setting,
        },
        tune: tuned,
    };
    let mut out = Outcome::new(data, settings, complete);
    out.notes = notes;
    Ok(out)
}
