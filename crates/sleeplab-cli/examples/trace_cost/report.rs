//! The trace_cost report: each side pooled over its blocks ([`Side`]), the table per
//! loop, and the verdicts on the targets, judged on the rounds' median and its interval.

use super::{Block, MODES, Mode};
use sleeplab_stats::{Ci, ci_sorted, tail_quantile_i64};

/// The target on the median: at most this much added by tracing.
const MEDIAN_TARGET_NS: f64 = 2_000.0;
/// The target on the CPU: at most this share of a core, in %, at 1 kHz.
const CPU_TARGET_PCT: f64 = 1.0;

/// How a measured difference stands against its target, judged on its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The whole interval at or under the target.
    Met,
    /// The whole interval above it.
    Missed,
    /// The interval straddles it: indistinguishable in this run.
    Undecided,
}

impl Outcome {
    /// `interval` against `target` (at most): `None` without an interval.
    pub(crate) fn of(interval: Option<Ci>, target: f64) -> Option<Self> {
        let c = interval?;
        Some(if c.high().is_some_and(|h| h <= target) {
            Outcome::Met
        } else if c.low().is_some_and(|l| l > target) {
            Outcome::Missed
        } else {
            Outcome::Undecided
        })
    }

    /// The mark a verdict line starts with (as scripts/bench_doc.py marks them).
    pub(crate) fn mark(outcome: Option<Self>) -> &'static str {
        match outcome {
            Some(Outcome::Met) => "✅",
            Some(Outcome::Missed) => "❌",
            Some(Outcome::Undecided) => "⚪",
            None => "–",
        }
    }
}

/// One side (a [`Mode`]) of one loop, pooled over its blocks.
#[derive(Debug, Clone)]
pub(crate) struct Side {
    /// Wakes measured.
    pub(crate) n: u64,
    /// The median lateness of every wake pooled, ns.
    pub(crate) median_ns: Option<f64>,
    /// The median's 95 % interval (order statistics).
    pub(crate) interval: Option<Ci>,
    /// Their p99 where n ≥ 100, ns.
    pub(crate) p99_ns: Option<f64>,
    /// The whole machine's busy time, % of a core.
    pub(crate) busy_pct: f64,
    /// The measuring process's own CPU time, % of a core.
    pub(crate) process_pct: f64,
    /// Events recorded per second of run.
    pub(crate) events_per_s: f64,
    /// Events the kernel lost.
    pub(crate) lost: u64,
    /// The drain's time per event, ns.
    pub(crate) drain_ns_per_event: Option<f64>,
    /// Wakes that blocked with every event of their way on record.
    pub(crate) traced_wakes: u64,
    /// Whether the machine was busy nearly all the time (≥ 95 % of every CPU): then its
    /// busy time cannot grow with what the tracer adds.
    pub(crate) saturated: bool,
}

impl Side {
    pub(crate) fn of(blocks: &[&Block]) -> Self {
        let mut all: Vec<i64> = blocks.iter().flat_map(|b| b.lateness_ns.clone()).collect();
        all.sort_unstable();
        let n = all.len() as u64;
        let wall: u64 = blocks.iter().map(|b| b.wall_ns).sum();
        let pct = |ns: u64| 100.0 * ns as f64 / wall.max(1) as f64;
        let events: u64 = blocks.iter().map(|b| b.events).sum();
        let drain: u64 = blocks.iter().map(|b| b.drain_ns).sum();
        let busy_pct = pct(blocks.iter().map(|b| b.busy_ns).sum());
        let cpus = blocks.iter().map(|b| b.cpus).max().unwrap_or(1).max(1);
        Self {
            n,
            median_ns: tail_quantile_i64(&all, 0.5),
            interval: ci_sorted(&all, 0.5, |v| v as f64),
            p99_ns: tail_quantile_i64(&all, 0.99),
            busy_pct,
            process_pct: pct(blocks.iter().map(|b| b.process_ns).sum()),
            events_per_s: events as f64 * 1e9 / wall.max(1) as f64,
            lost: blocks.iter().map(|b| b.lost).sum(),
            drain_ns_per_event: (events > 0).then(|| drain as f64 / events as f64),
            traced_wakes: blocks.iter().map(|b| b.traced_wakes).sum(),
            saturated: busy_pct >= 95.0 * f64::from(cpus),
        }
    }
}

/// `ns` in µs, or in ms from a millisecond on.
pub(crate) fn fmt_us(ns: f64) -> String {
    if ns.abs() >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.2} µs", ns / 1e3)
    }
}

/// `ns` as [`fmt_us`] writes it, or "–" where there is none.
fn opt_us(ns: Option<f64>) -> String {
    ns.map_or("–".into(), fmt_us)
}

/// `[a–b]`, `[≥ a]`, `[≤ b]` or `[–]`, each end written by `f`.
pub(crate) fn fmt_ci(c: Option<Ci>, f: impl Fn(f64) -> String) -> String {
    match c.map(|c| (c.low(), c.high())) {
        Some((Some(l), Some(h))) => format!("[{} – {}]", f(l), f(h)),
        Some((Some(l), None)) => format!("[≥ {}]", f(l)),
        Some((None, Some(h))) => format!("[≤ {}]", f(h)),
        _ => "[–]".into(),
    }
}

/// The report's lines for one loop: `rounds` holds each round's blocks, one per
/// [`Mode`] in [`Mode::ALL`] order.
pub(crate) fn report(label: &str, rounds: &[[Block; MODES]], period_ns: u64) -> Vec<String> {
    let sides: Vec<Side> = (0..Mode::ALL.len())
        .map(|m| Side::of(&rounds.iter().map(|r| &r[m]).collect::<Vec<_>>()))
        .collect();
    let mut out = vec![
        format!("**{label}** ({} rounds):", rounds.len()),
        String::new(),
        "| | n | median lateness [95 %] | p99 | machine busy, % of a core | \
         process CPU, % of a core | events/s | drain per event | wakes blocked and fully traced |"
            .into(),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ];
    for (mode, s) in Mode::ALL.iter().zip(&sides) {
        let traced = if matches!(*mode, Mode::Untraced | Mode::Bare) {
            "–".into()
        } else {
            format!("{} of {}", s.traced_wakes, s.n)
        };
        out.push(format!(
            "| {} | {} | {} {} | {} | {:.3} | {:.3} | {:.0} | {} | {traced} |",
            mode.label(),
            s.n,
            opt_us(s.median_ns),
            fmt_ci(s.interval, fmt_us),
            opt_us(s.p99_ns),
            s.busy_pct,
            s.process_pct,
            s.events_per_s,
            s.drain_ns_per_event
                .map_or("–".into(), |ns| format!("{ns:.0} ns")),
        ));
    }
    out.push(String::new());
    let off = &sides[0];
    for (m, mode) in Mode::ALL.iter().enumerate().skip(1) {
        out.extend(verdicts(mode.label(), off, &sides[m], rounds, m, period_ns));
    }
    out
}

/// The mark of a verdict judged on the rounds' median: its interval `ci` against
/// `target`, or why there is none (too few `rounds` to bound the median).
fn rounds_verdict(ci: Option<Ci>, rounds: usize, target: f64) -> String {
    match ci {
        None => format!("– (not judged: {rounds} rounds give the rounds' median no interval)"),
        Some(_) => Outcome::mark(Outcome::of(ci, target)).to_string(),
    }
}

/// The verdict lines of the side in column `m` against the untraced one (column 0).
fn verdicts(
    name: &str,
    off: &Side,
    on: &Side,
    rounds: &[[Block; MODES]],
    m: usize,
    period_ns: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    // Judged on the rounds, not on the pooled wakes: wakes of one block share its
    // moment (the host's load, the CPUs' idle states), so pooled intervals would be
    // too narrow; each round's pair of blocks ran back to back.
    let mut median_diffs: Vec<i64> = rounds
        .iter()
        .filter_map(|r| Some((r[m].median_ns()? - r[0].median_ns()?).round() as i64))
        .collect();
    median_diffs.sort_unstable();
    if let Some(d) = tail_quantile_i64(&median_diffs, 0.5) {
        let ci = ci_sorted(&median_diffs, 0.5, |v| v as f64);
        let mark = rounds_verdict(ci, median_diffs.len(), MEDIAN_TARGET_NS);
        out.push(format!(
            "- {mark} {name}: median lateness, traced − untraced: {} {} (per round, the traced \
             block's median less the untraced block's; the rounds' median); target ≤ {}",
            fmt_us(d),
            fmt_ci(ci, fmt_us),
            fmt_us(MEDIAN_TARGET_NS),
        ));
    }
    // Each round's difference, in ns of busy time per s of run (1e7 is 1 % of a core).
    let mut per_round: Vec<i64> = rounds
        .iter()
        .map(|r| {
            let (a, b) = (&r[0], &r[m]);
            (1e9 * (b.busy_ns as f64 / b.wall_ns.max(1) as f64
                - a.busy_ns as f64 / a.wall_ns.max(1) as f64)) as i64
        })
        .collect();
    per_round.sort_unstable();
    let round_ci = ci_sorted(&per_round, 0.5, |v| v as f64 / 1e7);
    let pct = |v: f64| format!("{v:.3}");
    let verdict = if off.saturated || on.saturated {
        "– (not judged: the machine was busy ≥ 95 % of the time, so its busy time cannot \
         show the tracer's; rerun on a quiet machine)"
            .to_string()
    } else {
        rounds_verdict(round_ci, per_round.len(), CPU_TARGET_PCT)
    };
    out.push(format!(
        "- {verdict} {name}: machine CPU at {:.0} Hz, traced − untraced: {} {} % of a core \
         (per round, the whole machine's busy time; the rounds' median); target ≤ \
         {CPU_TARGET_PCT} %; the measuring process's own CPU, traced − untraced over the \
         run: {:.3} %",
        1e9 / period_ns as f64,
        tail_quantile_i64(&per_round, 0.5).map_or("–".into(), |v| pct(v / 1e7)),
        fmt_ci(round_ci, pct),
        on.process_pct - off.process_pct,
    ));
    if on.lost > 0 {
        out.push(format!("- {name}: events the kernel lost: {}", on.lost));
    }
    out
}
