//! Findings about the sweep's cells one by one: long sleeps' accuracy, what spinning
//! costs, early wake-ups, and slow first calls.

use super::{Finding, Results, blocked, count, n_clause, quote, sleep_call};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Extreme, RankBy, Sentence, Stat, units::ns, units::pct,
};

/// A long sleep is "accurate" when its median overshoot is under this share.
const ACCURATE_PCT: f64 = 1.0;

/// "Long sleeps are accurate: a 100 ms sleep overshoots by X (Y %)": the largest request
/// of 1 ms or more of the first sleep call, idle; the median overshoot, with the 1 %
/// line stated and a small sample named.
pub fn long_sleeps(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let mech = sleep_call(&m)?;
    let d = m.requests().into_iter().rev().find(|&d| {
        d >= 1_000_000
            && m.cell(mech, d, 0)
                .is_some_and(|c| c.summary.count > 0 && blocked(c))
    })?;
    let c = m.cell(mech, d, 0)?;
    let over = c.summary.median_ns - d as f64;
    let rel = 100.0 * over / d as f64;
    let mut s = Sentence::default();
    let shown = ns(over);
    s.claim(Claim::Quote {
        stat: Stat::Median,
        n: c.summary.count,
        shown: shown.clone(),
    });
    let line = pct(ACCURATE_PCT);
    s.claim(Claim::Threshold {
        shown: line.clone(),
    });
    let sizes = n_clause(c.summary.count);
    s.push(&if rel < ACCURATE_PCT {
        format!(
            "Long sleeps are accurate: a {} {mech} overshot by a median {shown} ({}, under {line} of the request{sizes}); only short sleeps suffer.",
            ns(d as f64),
            pct(rel),
        )
    } else {
        format!(
            "Even long sleeps are late here: a {} {mech} overshot by a median {shown} ({}, {line} or more of the request{sizes}).",
            ns(d as f64),
            pct(rel),
        )
    });
    Some(Finding::new("long-sleeps", s))
}

/// CPU used while waiting, % of one core: CPU time per call over the mean elapsed per
/// call, as measured (not capped: see [`CPU_NOTE`]).
pub fn cpu_pct(c: &SweepCell) -> f64 {
    100.0 * c.cpu_ns_per_call / c.summary.mean_ns.max(1.0)
}

/// Why CPU per call can exceed the time per call: CPU time is read around each batch
/// of calls (getrusage and the thread CPU clock), so it includes the loop's own clock
/// reads and recording, while elapsed covers only the call.
pub const CPU_NOTE: &str = "CPU time is read around each batch of calls, so it includes the measuring loop's own clock reads and recording; elapsed time covers the call alone, so for calls shorter than that overhead CPU per call exceeds the time per call";

/// [`CPU_NOTE`] when `pct` is above 100 %, else nothing.
pub fn cpu_note(pct: f64) -> &'static str {
    if pct > 100.0 { CPU_NOTE } else { "" }
}

/// "Spinning burns a core: spin used X % of a CPU while waiting 1 ms; nanosleep Y %."
pub fn spin_cost(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cell("spin", d, 0).is_some_and(|c| c.summary.count > 0))?;
    let spin = m.cell("spin", d, 0)?;
    let mut s = Sentence::new(format!(
        "Spinning burns the CPU it waits on: spin used {} of a core while waiting {}",
        pct(cpu_pct(spin)),
        ns(d as f64)
    ));
    let mut over = cpu_pct(spin);
    match sleep_call(&m).and_then(|n| m.cell(n, d, 0)) {
        Some(c) => {
            over = over.max(cpu_pct(c));
            s.push(&format!(", {} used {}.", c.mechanism, pct(cpu_pct(c))));
        }
        None => {
            s.push(".");
        }
    }
    let note = cpu_note(over);
    if !note.is_empty() {
        s.push(&format!(" ({note}.)"));
    }
    Some(Finding::new("spin-cost", s))
}

/// "No wait returned early in N calls" or "K of N calls returned early, all in X".
pub fn early_wakeups(r: &Results<'_>) -> Option<Finding> {
    let cells: Vec<&SweepCell> = r
        .sweeps()
        .into_iter()
        .flat_map(|s| s.cells.iter())
        .collect();
    let total: u64 = cells.iter().map(|c| c.summary.count).sum();
    if total == 0 {
        return None;
    }
    let early: u64 = cells.iter().map(|c| c.summary.early_count).sum();
    if early == 0 {
        return Some(Finding::new(
            "early-wakeups",
            Sentence::new(format!(
                "No wait returned before its time in {} measured calls.",
                count(total)
            )),
        ));
    }
    let mut by_mech: Vec<(&str, u64)> = Vec::new();
    for c in cells.iter().filter(|c| c.summary.early_count > 0) {
        match by_mech.iter_mut().find(|(m, _)| *m == c.mechanism) {
            Some(e) => e.1 += c.summary.early_count,
            None => by_mech.push((&c.mechanism, c.summary.early_count)),
        }
    }
    let list: Vec<String> = by_mech
        .iter()
        .map(|(m, n)| format!("{m} {}", count(*n)))
        .collect();
    let why = if by_mech.iter().all(|(m, _)| *m == "timerfd-interval") {
        " — a periodic timer's next expiry does not wait for the caller"
    } else {
        ""
    };
    Some(Finding::new(
        "early-wakeups",
        Sentence::new(format!(
            "{} of {} calls returned before the requested time ({}){why}.",
            count(early),
            count(total),
            list.join(", ")
        )),
    ))
}

/// A first call is "slow" above this multiple of its cell's p99 …
const SLOW_RATIO: f64 = 3.0;
/// … and above this duration (shorter ones are noise whatever the ratio).
const SLOW_FLOOR_NS: u64 = 100_000;

/// Seed 000's slow first calls: a cell's first (warm-up) call over 3× the cell's p99
/// and over 100 µs (both stated), among the cells whose sample resolves a p99 (n ≥ 100).
pub fn first_calls(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let judged: Vec<(&SweepCell, u64, f64)> = m
        .cells()
        .filter_map(|c| Some((c, *c.first_calls_ns.first()?, c.summary.p99_ns?)))
        .collect();
    let slow: Vec<&(&SweepCell, u64, f64)> = judged
        .iter()
        .filter(|(_, f, p99)| *f > SLOW_FLOOR_NS && *f as f64 > SLOW_RATIO * p99.max(1.0))
        .collect();
    let ratios: Vec<f64> = slow
        .iter()
        .map(|(_, f, p99)| *f as f64 / p99.max(1.0))
        .collect();
    let i = sleeplab_stats::extreme_index(&ratios, Extreme::Most, RankBy::Signed)?;
    let (worst, first, _) = slow[i];
    let mut s = Sentence::default();
    let p = quote(&mut s, &worst.summary, Stat::P99)?;
    s.rank_by_point(Extreme::Most, i, &ratios);
    let floor = ns(SLOW_FLOOR_NS as f64);
    s.claim(Claim::Threshold {
        shown: floor.clone(),
    });
    s.push(&format!(
        "First calls can be slow (seed 000 saw it too): in {} of the {} cells with a p99 (100 calls or more), the first call took over {}× the cell's p99 and over {floor}; the furthest out {BY_POINT_VALUE} was {} {} at load {}: {} against a p99 of {p}. Warm up before timing matters.",
        slow.len(),
        judged.len(),
        sleeplab_stats::units::num(SLOW_RATIO),
        worst.mechanism,
        ns(worst.requested_ns as f64),
        worst.load,
        ns(*first as f64),
    ));
    Some(Finding::new("first-calls", s))
}
