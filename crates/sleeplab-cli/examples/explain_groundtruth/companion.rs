//! The SCHED_IDLE comparison: the same idle waits in blocks with and without a
//! SCHED_IDLE thread spinning on the measuring CPU (which then never goes idle),
//! interleaved in rounds (which side runs first alternates). Judged over blocks, not
//! pooled wakes (the wakes of one block share its moment: the host's load, the vCPU's
//! state): each block gives its medians, each round its differences, and the rounds'
//! median with its order-statistic interval decides.
//!
//! The hypothesis: with the companion, `idle_wakeup` falls to ~0, and the lateness
//! falls by what `idle_wakeup` and the halted CPU's part of `timer_irq` said without it
//! (per round: the fall of the block medians of `idle_wakeup + timer_irq`).

use crate::inject::{Companion, grid_deadline, sleep_until};
use crate::judge::{fmt_ci, fmt_dur};
use sleeplab::clock::monotonic_ns;
use sleeplab::system::SlackGuard;
use sleeplab_cli::stats::quantile_ci::ci_sorted;
use sleeplab_cli::stats::{Ci, tail_quantile_i64};
use sleeplab_cli::trace::{Component, Tracer, Window, account, this_tid};

/// Where the waits' deadlines sit on the millisecond grid: half-way between two
/// possible ticks, so that the companion's running tick never coincides with them.
const OFFSET_NS: u64 = 500_000;
/// Each wait's length (about): the gap from its clock read to its deadline.
const GAP_NS: u64 = 1_000_000;
/// With the companion, `idle_wakeup`'s median is "about zero" when its interval lies
/// at or under this.
pub const IDLE_ZERO_NS: f64 = 1_000.0;

/// One block's per-wake figures, ns.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Lateness of each wake.
    pub lateness: Vec<i64>,
    /// `idle_wakeup` of each wake.
    pub idle_wakeup: Vec<i64>,
    /// `timer_irq` of each wake.
    pub timer_irq: Vec<i64>,
    /// `run_queue` of each wake.
    pub run_queue: Vec<i64>,
    /// Wakes not fully traced.
    pub untraced: usize,
}

impl Block {
    /// The median of one figure over the block's wakes.
    fn median(v: &[i64]) -> Option<f64> {
        let mut s = v.to_vec();
        s.sort_unstable();
        tail_quantile_i64(&s, 0.5)
    }

    /// What the idle CPU's components said per wake: `idle_wakeup + timer_irq`.
    fn said(&self) -> Vec<i64> {
        self.idle_wakeup
            .iter()
            .zip(&self.timer_irq)
            .map(|(a, b)| a + b)
            .collect()
    }
}

/// Runs one block of `waits` idle waits on the calling thread (pinned to `cpu`), with
/// the SCHED_IDLE companion spinning on `cpu` when `with_companion`.
pub fn block(with_companion: bool, waits: usize, cpu: usize) -> anyhow::Result<Block> {
    let _slack = SlackGuard::set(1)?;
    let companion = if with_companion {
        Some(Companion::start(cpu)?)
    } else {
        None
    };
    let tid = this_tid();
    let tracer = Tracer::start().map_err(|e| anyhow::anyhow!("{}", e.note()))?;
    let mut windows = Vec::with_capacity(waits);
    for _ in 0..waits {
        let start_ns = monotonic_ns();
        let deadline_ns = grid_deadline(start_ns, GAP_NS, OFFSET_NS);
        sleep_until(deadline_ns);
        windows.push(Window {
            tid,
            start_ns,
            deadline_ns,
            end_ns: monotonic_ns(),
            spin_ns: 0,
        });
    }
    drop(companion);
    let (timeline, _lost) = tracer.finish();
    let mut b = Block::default();
    for w in &windows {
        let a = account(&timeline, w);
        let get = |c| a.parts.get(c) as i64;
        b.lateness.push(a.lateness_ns);
        b.idle_wakeup.push(get(Component::IdleWakeup));
        b.timer_irq.push(get(Component::TimerIrq));
        b.run_queue.push(get(Component::RunQueue));
        b.untraced += usize::from(!a.traced);
    }
    Ok(b)
}

/// Runs `rounds` rounds, each a block without and a block with the companion (the
/// order alternating); `[without, with]` per round.
pub fn run(rounds: usize, waits: usize, cpu: usize) -> anyhow::Result<Vec<[Block; 2]>> {
    let mut out = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let mut pair: [Block; 2] = Default::default();
        for k in 0..2 {
            let with = (k + r) % 2 == 1;
            pair[usize::from(with)] = block(with, waits, cpu)?;
        }
        out.push(pair);
    }
    Ok(out)
}

/// The rounds' median of `per_round` and its 95 % interval (order statistics).
fn over_rounds(mut per_round: Vec<i64>) -> (Option<f64>, Option<Ci>) {
    per_round.sort_unstable();
    (
        tail_quantile_i64(&per_round, 0.5),
        ci_sorted(&per_round, 0.5, |v| v as f64),
    )
}

/// The comparison's verdicts, from its rounds.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// With the companion: the blocks' median `idle_wakeup` (median over blocks and
    /// its interval).
    pub idle_with: (Option<f64>, Option<Ci>),
    /// The fall of the median lateness, without − with, per round.
    pub fall: (Option<f64>, Option<Ci>),
    /// The fall of the median `idle_wakeup + timer_irq`, without − with, per round.
    pub said: (Option<f64>, Option<Ci>),
    /// `fall − said` per round.
    pub residual: (Option<f64>, Option<Ci>),
}

impl Verdict {
    /// The verdicts of `rounds`.
    pub fn of(rounds: &[[Block; 2]]) -> Self {
        let per_round = |f: &dyn Fn(&Block) -> Option<f64>| -> Vec<i64> {
            rounds
                .iter()
                .filter_map(|[a, b]| Some((f(a)? - f(b)?).round() as i64))
                .collect()
        };
        let lat = |b: &Block| Block::median(&b.lateness);
        let said = |b: &Block| Block::median(&b.said());
        let fall = per_round(&lat);
        let saids = per_round(&said);
        let residual = rounds
            .iter()
            .filter_map(|[a, b]| Some((lat(a)? - lat(b)? - (said(a)? - said(b)?)).round() as i64))
            .collect();
        let idle_with = rounds
            .iter()
            .filter_map(|[_, b]| Block::median(&b.idle_wakeup).map(|v| v.round() as i64))
            .collect();
        Self {
            idle_with: over_rounds(idle_with),
            fall: over_rounds(fall),
            said: over_rounds(saids),
            residual: over_rounds(residual),
        }
    }

    /// Whether `idle_wakeup` with the companion is about zero: its interval at or under
    /// [`IDLE_ZERO_NS`] (`None`: too few rounds for an interval).
    pub fn idle_is_zero(&self) -> Option<bool> {
        let ci = self.idle_with.1?;
        Some(ci.high().is_some_and(|h| h <= IDLE_ZERO_NS))
    }

    /// Whether the fall and what the components said agree: their intervals overlap
    /// (`None`: too few rounds for intervals).
    pub fn fall_agrees(&self) -> Option<bool> {
        let (f, s) = (self.fall.1?, self.said.1?);
        Some(!f.separated(&s))
    }
}

/// The mark of a verdict: ✅ held, ❌ did not, – not judged.
fn mark(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "✅",
        Some(false) => "❌",
        None => "–",
    }
}

/// The comparison's lines: each side's medians over blocks, then the verdicts.
pub fn report(rounds: &[[Block; 2]], waits: usize) -> Vec<String> {
    let v = Verdict::of(rounds);
    let side = |i: usize, f: &dyn Fn(&Block) -> &Vec<i64>| {
        over_rounds(
            rounds
                .iter()
                .filter_map(|r| Block::median(f(&r[i])).map(|m| m.round() as i64))
                .collect(),
        )
    };
    let cell =
        |(m, ci): (Option<f64>, Option<Ci>)| format!("{} {}", fmt_dur(m), fmt_ci(ci, fmt_dur));
    let mut out = vec![
        format!(
            "{} rounds, each a block of {waits} idle waits (absolute sleeps of about {}, \
             timer slack 1 ns) without and one with a SCHED_IDLE thread spinning on the \
             measuring CPU. Per side, the median over blocks of each block's median, with \
             its 95 % interval (order statistics over blocks):",
            rounds.len(),
            fmt_dur(GAP_NS as f64)
        ),
        String::new(),
        "| side | lateness | idle_wakeup | timer_irq | run_queue | not fully traced |".into(),
        "|---|---:|---:|---:|---:|---:|".into(),
    ];
    for (i, name) in ["without companion", "with companion"].iter().enumerate() {
        let untraced: usize = rounds.iter().map(|r| r[i].untraced).sum();
        out.push(format!(
            "| {name} | {} | {} | {} | {} | {untraced} of {} |",
            cell(side(i, &|b| &b.lateness)),
            cell(side(i, &|b| &b.idle_wakeup)),
            cell(side(i, &|b| &b.timer_irq)),
            cell(side(i, &|b| &b.run_queue)),
            rounds.len() * waits,
        ));
    }
    out.push(String::new());
    out.push(format!(
        "- {} with the companion, idle_wakeup's median is {} (the rounds' median of the \
         with-blocks' medians); about zero means its interval lies at or under {}",
        mark(v.idle_is_zero()),
        cell(v.idle_with),
        fmt_dur(IDLE_ZERO_NS),
    ));
    out.push(format!(
        "- {} the median lateness fell by {} (per round, without − with); \
         idle_wakeup + timer_irq fell by {}: they agree when the intervals overlap; \
         the difference, fall − components, {}",
        mark(v.fall_agrees()),
        cell(v.fall),
        cell(v.said),
        cell(v.residual),
    ));
    out
}
