//! The SCHED_IDLE comparison: the same idle waits in blocks with and without a
//! SCHED_IDLE thread spinning on the measuring CPU (which then never goes idle),
//! interleaved in rounds (which side runs first alternates). Judged over blocks, not
//! pooled wakes (the wakes of one block share its moment: the host's load, the vCPU's
//! state): each block gives its medians, each round its differences, and the rounds'
//! median with its order-statistic interval decides.
//!
//! The hypothesis: with the companion, `idle_wakeup` and `idle_delivery` (an idle CPU's
//! timer delivery) fall to ~0, and the lateness falls by what `idle_wakeup`,
//! `idle_delivery` and `timer_irq` said without it (per round: the fall of the block
//! medians of their sum; the delivery and the interrupt are summed because on a busy
//! CPU whatever delivery is left is booked to the interrupt). This is the delivery's
//! injected truth, two-sided at the level of a round's medians: the companion takes the
//! idle CPU away (so the delivery is zero by its rule), and the lateness must fall by
//! what the components said, no more and no less, within the interval. It does not
//! tell the delivery from the rest of the timer interrupt: only the sum is checked.

use crate::inject::{Companion, grid_deadline, sleep_until};
use crate::judge::{fmt_ci, fmt_dur};
use crate::scenarios::window;
use sleeplab::clock::monotonic_ns;
use sleeplab::system::SlackGuard;
use sleeplab_account::{Component, Parts, account, this_tid};
use sleeplab_stats::{Ci, ci_sorted, tail_quantile_i64};

/// Where the waits' deadlines sit on the millisecond grid: half-way between two
/// possible ticks, so that the companion's running tick never coincides with them.
const OFFSET_NS: u64 = 500_000;
/// Each wait's length (about): the gap from its clock read to its deadline.
const GAP_NS: u64 = 1_000_000;
/// With the companion, `idle_wakeup`'s (and `idle_delivery`'s) median is "about zero"
/// when its interval lies at or under this.
pub const IDLE_ZERO_NS: f64 = 1_000.0;
/// The components whose change the lateness's fall is checked against: those an idle
/// CPU's wake passes (which the companion takes away) and the run queue, which the
/// companion adds: a woken thread waits there for the SCHED_IDLE spinner to be
/// preempted (named as its holder). Without it the check would book that wait as a
/// disagreement.
const SAID: [Component; 4] = [
    Component::IdleDelivery,
    Component::TimerIrq,
    Component::IdleWakeup,
    Component::RunQueue,
];

/// The components shown per side, where an idle CPU and a busy one differ: those of a
/// wake's path from the host to the return to user space ([`Component::ALL`]'s order).
fn shown() -> impl Iterator<Item = Component> {
    Component::ALL
        .into_iter()
        .skip_while(|&c| c != Component::IdleDelivery)
        .take_while(|&c| c != Component::Spin)
}

/// One block's wakes.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Lateness of each wake, ns.
    pub lateness: Vec<i64>,
    /// The account's split of each wake.
    pub parts: Vec<Parts>,
    /// Wakes not fully traced.
    pub untraced: usize,
}

impl Block {
    /// The median of `v` (unsorted).
    fn median(v: &[i64]) -> Option<f64> {
        let mut s = v.to_vec();
        s.sort_unstable();
        tail_quantile_i64(&s, 0.5)
    }

    /// The median over the block's wakes of the sum of `cs`, ns.
    fn median_of(&self, cs: &[Component]) -> Option<f64> {
        let v: Vec<i64> = self
            .parts
            .iter()
            .map(|p| cs.iter().map(|&c| p.get(c) as i64).sum())
            .collect();
        Self::median(&v)
    }

    /// The median lateness, ns.
    fn median_lateness(&self) -> Option<f64> {
        Self::median(&self.lateness)
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
    let recording = super::recording()?;
    let mut windows = Vec::with_capacity(waits);
    for _ in 0..waits {
        let start_ns = monotonic_ns();
        let deadline_ns = grid_deadline(start_ns, GAP_NS, OFFSET_NS);
        sleep_until(deadline_ns);
        windows.push(window(tid, start_ns, deadline_ns, monotonic_ns()));
    }
    drop(companion);
    let (timeline, _) = recording.finish();
    let timeline = timeline.unwrap_or_default();
    let mut b = Block::default();
    for w in &windows {
        let a = account(&timeline, w);
        b.lateness.push(a.lateness_ns);
        b.parts.push(a.parts);
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

/// One figure of one side (`0` without the companion, `1` with it): the rounds' median
/// of its block medians, and its interval.
fn side(
    rounds: &[[Block; 2]],
    i: usize,
    f: &dyn Fn(&Block) -> Option<f64>,
) -> (Option<f64>, Option<Ci>) {
    over_rounds(
        rounds
            .iter()
            .filter_map(|r| f(&r[i]).map(|m| m.round() as i64))
            .collect(),
    )
}

/// How far one figure fell with the companion: per round, its block median without
/// less its block median with; the rounds' median and its interval.
fn fall(rounds: &[[Block; 2]], f: &dyn Fn(&Block) -> Option<f64>) -> (Option<f64>, Option<Ci>) {
    over_rounds(
        rounds
            .iter()
            .filter_map(|[a, b]| Some((f(a)? - f(b)?).round() as i64))
            .collect(),
    )
}

/// The comparison's verdicts, from its rounds.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// With the companion: the blocks' median `idle_wakeup` (median over blocks and
    /// its interval).
    pub idle_with: (Option<f64>, Option<Ci>),
    /// With the companion: the blocks' median `idle_delivery`.
    pub delivery_with: (Option<f64>, Option<Ci>),
    /// Without the companion: the blocks' median `idle_delivery` (what it claimed).
    pub delivery_without: (Option<f64>, Option<Ci>),
    /// The fall of the median lateness, without − with, per round.
    pub fall: (Option<f64>, Option<Ci>),
    /// The fall of the median `idle_wakeup + timer_irq + idle_delivery + run_queue`,
    /// without − with, per round.
    pub said: (Option<f64>, Option<Ci>),
    /// `fall − said` per round.
    pub residual: (Option<f64>, Option<Ci>),
}

impl Verdict {
    /// The verdicts of `rounds`.
    pub fn of(rounds: &[[Block; 2]]) -> Self {
        let lat = |b: &Block| b.median_lateness();
        let said = |b: &Block| b.median_of(&SAID);
        let residual = |b: &Block| Some(lat(b)? - said(b)?);
        let delivery = |b: &Block| b.median_of(&[Component::IdleDelivery]);
        Self {
            idle_with: side(rounds, 1, &|b| b.median_of(&[Component::IdleWakeup])),
            delivery_with: side(rounds, 1, &delivery),
            delivery_without: side(rounds, 0, &delivery),
            fall: fall(rounds, &lat),
            said: fall(rounds, &said),
            residual: fall(rounds, &residual),
        }
    }

    /// Whether `idle_wakeup` with the companion is about zero: its interval at or under
    /// [`IDLE_ZERO_NS`] (`None`: too few rounds for an interval).
    pub fn idle_is_zero(&self) -> Option<bool> {
        let ci = self.idle_with.1?;
        Some(ci.high().is_some_and(|h| h <= IDLE_ZERO_NS))
    }

    /// Whether `idle_delivery` with the companion is about zero (as
    /// [`Verdict::idle_is_zero`]).
    pub fn delivery_is_zero(&self) -> Option<bool> {
        let ci = self.delivery_with.1?;
        Some(ci.high().is_some_and(|h| h <= IDLE_ZERO_NS))
    }

    /// Whether the components account for the fall: the interval of the per-round
    /// difference, fall − components, holds zero (the rounds pair their blocks, so the
    /// paired difference is judged; `None`: too few rounds for an interval).
    pub fn fall_agrees(&self) -> Option<bool> {
        let ci = self.residual.1?;
        Some(ci.low().is_none_or(|l| l <= 0.0) && ci.high().is_none_or(|h| h >= 0.0))
    }

    /// Whether the intervals of the fall and of what the components said overlap (the
    /// weaker reading; `None`: too few rounds).
    pub fn intervals_overlap(&self) -> Option<bool> {
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

/// The comparison's lines: each side's medians over blocks and how far each fell,
/// then the verdicts.
pub fn report(rounds: &[[Block; 2]], waits: usize) -> Vec<String> {
    let v = Verdict::of(rounds);
    let cell =
        |(m, ci): (Option<f64>, Option<Ci>)| format!("{} {}", fmt_dur(m), fmt_ci(ci, fmt_dur));
    // The lateness (`None`), then each shown component.
    let figures: Vec<Option<Component>> = std::iter::once(None).chain(shown().map(Some)).collect();
    let median = |fig: Option<Component>| {
        move |b: &Block| match fig {
            None => b.median_lateness(),
            Some(c) => b.median_of(&[c]),
        }
    };
    let names: Vec<&str> = figures
        .iter()
        .map(|f| f.map_or("lateness", Component::name))
        .collect();
    let mut out = vec![
        format!(
            "{} rounds, each a block of {waits} idle waits (absolute sleeps of about {}, \
             timer slack 1 ns) without and one with a SCHED_IDLE thread spinning on the \
             measuring CPU. Per side, the median over blocks of each block's median, and per \
             round how far it fell (without − with), each with its 95 % interval (order \
             statistics over blocks or rounds; medians do not add up):",
            rounds.len(),
            fmt_dur(GAP_NS as f64)
        ),
        String::new(),
        format!("| | {} | not fully traced |", names.join(" | ")),
        format!("|---|{}---:|", "---:|".repeat(names.len())),
    ];
    for (i, name) in ["without companion", "with companion"].iter().enumerate() {
        let cells: Vec<String> = figures
            .iter()
            .map(|&f| cell(side(rounds, i, &median(f))))
            .collect();
        let untraced: usize = rounds.iter().map(|r| r[i].untraced).sum();
        out.push(format!(
            "| {name} | {} | {untraced} of {} |",
            cells.join(" | "),
            rounds.len() * waits
        ));
    }
    let cells: Vec<String> = figures
        .iter()
        .map(|&f| cell(fall(rounds, &median(f))))
        .collect();
    out.push(format!("| fell by | {} | |", cells.join(" | ")));
    out.push(String::new());
    out.push(format!(
        "- {} with the companion, idle_wakeup's median is {} (the rounds' median of the \
         with-blocks' medians); about zero means its interval lies at or under {}",
        mark(v.idle_is_zero()),
        cell(v.idle_with),
        fmt_dur(IDLE_ZERO_NS),
    ));
    out.push(format!(
        "- {} with the companion, idle_delivery's median is {} (without it {}); about zero \
         as above",
        mark(v.delivery_is_zero()),
        cell(v.delivery_with),
        cell(v.delivery_without),
    ));
    out.push(format!(
        "- {} the median lateness fell by {} (per round, without − with), idle_wakeup + \
         timer_irq + idle_delivery + run_queue by {} (the run queue rises: the woken thread \
         waits for the companion to be preempted); per round the difference, fall − \
         components, is {}: the components account for the fall when that interval holds \
         zero ({}; the table's last row shows where the rest went)",
        mark(v.fall_agrees()),
        cell(v.fall),
        cell(v.said),
        cell(v.residual),
        match v.intervals_overlap() {
            Some(true) => "the two intervals overlap",
            Some(false) => "the two intervals are apart",
            None => "no intervals",
        },
    ));
    out
}
