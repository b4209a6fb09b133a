//! `sleeplab advise`: which way of waiting meets a tolerance at the lowest CPU here.
//!
//! It measures every candidate for the user's case — a periodic loop (`--period`, run
//! as `pace` does: absolute deadlines) or one-shot waits (`--duration`, run as `cpu`
//! does: relative sleeps) — under 1 ns timer slack, plus the plain absolute sleep at the
//! slack the thread inherited (what a program gets without changing anything). The
//! choice is a pure function of those measurements ([`choose`]).

use crate::contenders::strategies::SPIN_SLEEP;
use crate::experiments::cpu::{self, CpuConfig};
use crate::experiments::pace::{self, PaceConfig};
use crate::experiments::{Context, Experiment, Outcome, Point, ResultData};
use crate::output::{fmt_ns, fmt_ns_f, fmt_pct, new_table};
use crate::stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// What the user needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Need {
    /// A periodic loop with this period.
    Period {
        /// Period, ns.
        period_ns: u64,
    },
    /// One-shot waits of this duration.
    Duration {
        /// Duration, ns.
        duration_ns: u64,
    },
}

/// What to measure and decide.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviseConfig {
    /// The case.
    pub need: Need,
    /// Acceptable p99 lateness, ns.
    pub tolerance_ns: u64,
    /// Measuring time per candidate, ns.
    pub seconds_ns: u64,
}

/// One candidate's measured behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Strategy name (as in `sleeplab pace`).
    pub strategy: String,
    /// Timer slack it ran under, ns.
    pub timer_slack_ns: u64,
    /// Waits measured.
    pub waits: u64,
    /// Median lateness (woke − deadline), ns.
    pub p50_ns: f64,
    /// 99th percentile lateness, ns; `null` below 100 waits (the quantile rule): such a
    /// candidate cannot be shown to meet a p99 tolerance.
    pub p99_ns: Option<f64>,
    /// Largest lateness, ns.
    pub max_ns: u64,
    /// CPU of one core, %.
    pub cpu_percent: f64,
}

impl Candidate {
    /// A strategy measured under `slack`: `waits` waits of lateness `error` at `cpu` %.
    fn of(strategy: &str, slack: u64, waits: u64, error: &Summary, cpu: f64) -> Self {
        Self {
            strategy: strategy.to_string(),
            timer_slack_ns: slack,
            waits,
            p50_ns: error.median_ns,
            p99_ns: error.p99_ns,
            max_ns: error.max_ns,
            cpu_percent: cpu,
        }
    }
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Advice {
    /// Index into the candidates of the recommendation.
    pub chosen: usize,
    /// Whether the recommendation meets the tolerance (false: nothing did; the best p99
    /// is recommended instead).
    pub meets_tolerance: bool,
    /// The reasoning in one paragraph, with the numbers.
    pub reason: String,
    /// A Rust snippet using the sleeplab library (or std) for the recommendation.
    pub snippet: String,
}

/// The result of `advise`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdviseData {
    /// The case.
    pub need: Need,
    /// Acceptable p99 lateness, ns.
    pub tolerance_ns: u64,
    /// Measurement time per candidate, ns.
    pub seconds_ns: u64,
    /// Every candidate, as measured.
    pub candidates: Vec<Candidate>,
    /// The recommendation.
    pub advice: Advice,
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

impl Candidate {
    /// Whether its p99 is known and within `tolerance_ns`.
    pub fn meets(&self, tolerance_ns: u64) -> bool {
        self.p99_ns.is_some_and(|p| p <= tolerance_ns as f64)
    }

    /// Its p99 for ranking: unknown ranks last.
    fn p99_rank(&self) -> f64 {
        self.p99_ns.unwrap_or(f64::INFINITY)
    }
}

/// Picks the candidate that meets `tolerance_ns` at p99 with the lowest CPU (ties: the
/// lower p99); if none does, the one with the lowest p99. `None` for no candidates.
pub fn choose(candidates: &[Candidate], tolerance_ns: u64) -> Option<(usize, bool)> {
    let meets = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.meets(tolerance_ns))
        .min_by(|(_, a), (_, b)| {
            a.cpu_percent
                .total_cmp(&b.cpu_percent)
                .then(a.p99_rank().total_cmp(&b.p99_rank()))
        });
    if let Some((i, _)) = meets {
        return Some((i, true));
    }
    candidates
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| a.p99_rank().total_cmp(&b.p99_rank()))
        .map(|(i, _)| (i, false))
}

/// The frontier's next point after the chosen one: of the other contenders that also
/// meet `tolerance_ns` at p99, the one with the lowest CPU (the price of the runner-up).
pub fn runner_up(candidates: &[Candidate], tolerance_ns: u64, chosen: usize) -> Option<usize> {
    let name = &candidates.get(chosen)?.strategy;
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| &c.strategy != name && c.meets(tolerance_ns))
        .min_by(|(_, a), (_, b)| a.cpu_percent.total_cmp(&b.cpu_percent))
        .map(|(i, _)| i)
}

/// The sentence on the runner-up (see [`runner_up`]): what it needs to meet the same
/// tolerance; empty when no other contender meets it.
pub fn runner_up_sentence(candidates: &[Candidate], tolerance_ns: u64, chosen: usize) -> String {
    match runner_up(candidates, tolerance_ns, chosen) {
        Some(i) => format!(
            " The next cheapest that meets it, {}, needs {} of a core (p99 {}).",
            candidates[i].strategy,
            fmt_pct(candidates[i].cpu_percent),
            fmt_ns_f(candidates[i].p99_ns)
        ),
        None => String::new(),
    }
}

/// A Rust snippet for `strategy` and the need.
pub fn snippet(strategy: &str, need: &Need) -> String {
    let (what, ns) = match need {
        Need::Period { period_ns } => ("period", *period_ns),
        Need::Duration { duration_ns } => ("duration", *duration_ns),
    };
    match (strategy, need) {
        ("precise", Need::Period { .. }) => format!(
            "use std::time::Duration;\nuse sleeplab::precise::{{MissedTickBehavior, Ticker}};\n\n\
             // sets this thread's timer slack to 1 ns; learns its spin margin online\n\
             let mut ticker = Ticker::new(Duration::from_nanos({ns}))\n    \
             .with_missed_tick_behavior(MissedTickBehavior::Skip);\n\
             loop {{\n    let tick = ticker.tick(); // wakes at start + k·{what}\n    \
             // ... work ...\n}}\n"
        ),
        ("precise", Need::Duration { .. }) => format!(
            "use std::time::Duration;\nuse sleeplab::precise::PreciseSleeper;\n\n\
             let mut sleeper = PreciseSleeper::new(); // one per thread; sets slack to 1 ns\n\
             sleeper.sleep(Duration::from_nanos({ns}));\n"
        ),
        (SPIN_SLEEP, _) => format!(
            "// the spin_sleep crate, default settings (125 µs margin)\n\
             let sleeper = spin_sleep::SpinSleeper::default();\n\
             sleeper.sleep(std::time::Duration::from_nanos({ns})); // {what} {}\n",
            fmt_ns(ns)
        ),
        _ => {
            let body = match need {
                Need::Period { .. } => format!(
                    "let mut next = env.now();\nloop {{\n    next += {ns}; // absolute deadlines: no drift\n    \
                     wait.sleep_until(&mut env, next);\n    // ... work ...\n}}\n"
                ),
                Need::Duration { .. } => {
                    format!("wait.sleep_for(&mut env, {ns}); // {}\n", fmt_ns(ns))
                }
            };
            format!(
                "use sleeplab::clock::{{Env, RealEnv}};\nuse sleeplab::lab::strategy_by_name;\n\
                 use sleeplab::system::set_timer_slack_ns;\n\n\
                 set_timer_slack_ns(1)?; // as measured\n\
                 let mut env = RealEnv;\nlet mut wait = strategy_by_name::<RealEnv>(\"{strategy}\")?;\n{body}"
            )
        }
    }
}

/// Frames per candidate of a periodic case: `seconds / period`, within 20 and a million.
fn frames(seconds_ns: u64, period_ns: u64) -> u64 {
    (seconds_ns / period_ns).clamp(20, 1_000_000)
}

/// `sleeplab advise`.
impl Experiment for AdviseConfig {
    const NAME: &'static str = "advise";
    type Data = AdviseData;

    /// Frames (periodic) or points (one-shot) of every candidate, and of the plain
    /// sleep at the inherited slack.
    fn steps(&self) -> u64 {
        let per_candidate = match self.need {
            Need::Period { period_ns } => frames(self.seconds_ns, period_ns),
            Need::Duration { .. } => 1,
        };
        per_candidate * (CANDIDATES.len() as u64 + 1)
    }

    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<AdviseData>> {
        run(self, ctx)
    }

    fn render(data: &AdviseData) -> String {
        render(data)
    }

    /// None: the evidence is the candidates' summaries, in the JSON.
    fn csv(_: &AdviseData) -> Option<anyhow::Result<Vec<u8>>> {
        None
    }
}

impl ResultData for AdviseData {
    fn experiment(&self) -> &'static str {
        AdviseConfig::NAME
    }

    /// None: the candidates are measured for one case only; `pace` and `cpu` results
    /// compare the same strategies across runs.
    fn points(&self) -> Vec<Point> {
        Vec::new()
    }
}

/// Measures the candidates and decides.
pub fn run(config: &AdviseConfig, ctx: &Context) -> anyhow::Result<Outcome<AdviseData>> {
    let AdviseConfig {
        need,
        tolerance_ns,
        seconds_ns,
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
                    block: (frames / 5).max(1),
                    work_ns: 0,
                    timer_slack_ns: Some(slack),
                    json_samples: 0,
                };
                let out = pace::run(&config, ctx)?;
                complete &= out.complete;
                settings = out.settings;
                candidates.extend(out.data.results.iter().map(|r| {
                    Candidate::of(&r.strategy, slack, r.error.count, &r.error, r.cpu_percent)
                }));
            }
            Need::Duration { duration_ns } => {
                let config = CpuConfig {
                    strategies: names,
                    intervals_ns: vec![*duration_ns],
                    seconds_ns,
                    timer_slack_ns: Some(slack),
                };
                let out = cpu::run(&config, ctx)?;
                complete &= out.complete;
                settings = out.settings;
                candidates.extend(
                    out.data.points.iter().map(|p| {
                        Candidate::of(&p.strategy, slack, p.sleeps, &p.error, p.cpu_percent)
                    }),
                );
            }
        }
    }
    let (chosen, meets) = choose(&candidates, tolerance_ns).unwrap_or((0, false));
    let c = candidates.get(chosen).cloned();
    let reason = match &c {
        None => "nothing was measured (interrupted)".to_string(),
        Some(c) if meets => {
            format!(
                "{} (timer slack {}) meets p99 ≤ {} with p99 {} at {} of a core, the lowest CPU of the {} candidates that do.",
                c.strategy,
                fmt_ns(c.timer_slack_ns),
                fmt_ns(tolerance_ns),
                fmt_ns_f(c.p99_ns),
                fmt_pct(c.cpu_percent),
                candidates.iter().filter(|x| x.meets(tolerance_ns)).count()
            ) + &runner_up_sentence(&candidates, tolerance_ns, chosen)
        }
        Some(c) => format!(
            "no candidate met p99 ≤ {} here; the best p99 was {} ({} at {} of a core). \
             This machine cannot promise that tolerance; consider a real-time policy \
             (--policy fifo), an isolated CPU, or a looser tolerance.",
            fmt_ns(tolerance_ns),
            c.strategy,
            fmt_ns_f(c.p99_ns),
            fmt_pct(c.cpu_percent)
        ),
    };
    let snippet = c
        .as_ref()
        .map(|c| snippet(&c.strategy, need))
        .unwrap_or_default();
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
        },
    };
    Ok(Outcome::new(data, settings, complete))
}

/// Renders the evidence table, the recommendation and the snippet.
pub fn render(data: &AdviseData) -> String {
    let mut out = String::new();
    let case = match &data.need {
        Need::Period { period_ns } => format!("a periodic loop every {}", fmt_ns(*period_ns)),
        Need::Duration { duration_ns } => format!("one-shot waits of {}", fmt_ns(*duration_ns)),
    };
    let _ = writeln!(
        out,
        "\nadvice for {case}, tolerance p99 ≤ {}\n",
        fmt_ns(data.tolerance_ns)
    );
    let mut t = new_table(["", "strategy", "slack", "waits", "p50", "p99", "max", "CPU"]);
    for (i, c) in data.candidates.iter().enumerate() {
        let mark = if i == data.advice.chosen {
            "→"
        } else if c.meets(data.tolerance_ns) {
            "✓"
        } else {
            ""
        };
        t.add_row(vec![
            mark.to_string(),
            c.strategy.clone(),
            fmt_ns(c.timer_slack_ns),
            c.waits.to_string(),
            fmt_ns_f(c.p50_ns),
            fmt_ns_f(c.p99_ns),
            fmt_ns(c.max_ns),
            fmt_pct(c.cpu_percent),
        ]);
    }
    let _ = writeln!(out, "{t}\n{}\n", data.advice.reason);
    if !data.advice.snippet.is_empty() {
        let _ = writeln!(out, "in Rust:\n\n{}", data.advice.snippet);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(strategy: &str, p99: f64, cpu: f64) -> Candidate {
        Candidate {
            strategy: strategy.into(),
            timer_slack_ns: 1,
            waits: 100,
            p50_ns: p99 / 2.0,
            p99_ns: Some(p99),
            max_ns: p99 as u64 * 2,
            cpu_percent: cpu,
        }
    }

    #[test]
    fn chooses_lowest_cpu_that_meets_the_tolerance() {
        let c = [
            cand("clock-nanosleep-abs", 80_000.0, 0.1),
            cand("precise", 1_500.0, 0.9),
            cand("seed-hybrid", 3_000.0, 5.0),
            cand("spin", 100.0, 99.0),
        ];
        assert_eq!(choose(&c, 20_000), Some((1, true)));
        assert_eq!(choose(&c, 100_000), Some((0, true)));
        assert_eq!(choose(&c, 500), Some((3, true)));
        // Nothing meets 50 ns: the best p99 is recommended, flagged.
        assert_eq!(choose(&c, 50), Some((3, false)));
        assert_eq!(choose(&[], 50), None);
    }

    #[test]
    fn the_runner_up_meets_the_tolerance_at_no_less_cpu_and_is_another_contender() {
        let c = [
            cand("clock-nanosleep-abs", 80_000.0, 0.1),
            cand("precise", 1_500.0, 0.9),
            cand("precise", 1_200.0, 1.1),
            cand("sdl-precise", 3_000.0, 7.0),
            cand("seed-hybrid", 30_000.0, 5.0),
            cand("spin", 100.0, 99.0),
        ];
        let (chosen, meets) = choose(&c, 20_000).unwrap();
        assert!(meets);
        let i = runner_up(&c, 20_000, chosen).unwrap();
        assert_eq!(c[i].strategy, "sdl-precise");
        assert!(c[i].cpu_percent >= c[chosen].cpu_percent && c[i].meets(20_000));
        assert_eq!(
            runner_up_sentence(&c, 20_000, chosen),
            " The next cheapest that meets it, sdl-precise, needs 7.00 % of a core (p99 3.000 µs)."
        );
        // Nothing else meets 500 ns.
        assert_eq!(runner_up(&c, 500, 5), None);
        assert_eq!(runner_up_sentence(&c, 500, 5), "");
    }

    #[test]
    fn ties_on_cpu_go_to_the_lower_p99() {
        let c = [cand("a", 900.0, 1.0), cand("b", 500.0, 1.0)];
        assert_eq!(choose(&c, 1_000), Some((1, true)));
    }

    #[test]
    fn snippets_name_the_strategy() {
        let p = Need::Period {
            period_ns: 1_000_000,
        };
        assert!(snippet("precise", &p).contains("Ticker::new"));
        let d = Need::Duration {
            duration_ns: 500_000,
        };
        assert!(snippet("precise", &d).contains("PreciseSleeper"));
        assert!(snippet("spin-sleep", &d).contains("SpinSleeper"));
        assert!(snippet("seed-hybrid", &d).contains("\"seed-hybrid\""));
    }
}
