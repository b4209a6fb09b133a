//! io_uring's timeouts and `futex_waitv` against `clock_nanosleep`: whether either wakes
//! sooner here, only where the 95 % intervals of the medians separate.

use super::{Finding, Results, and_list, short_request};
use sleeplab_stats::{
    Claim, Est, INDISTINGUISHABLE, Order, Sentence, Stat, basis_note, order, small_n, units::ns,
};

/// The waits compared, in the order the sentence names them.
const NEWER: [&str; 4] = [
    "io-uring-timeout",
    "io-uring-timeout-abs",
    "io-uring-wait",
    "futex-waitv",
];

/// What they are compared with.
const BASELINE: &str = "clock-nanosleep";

/// "Asked for 1 µs idle, io-uring-timeout took a median 21 µs, … against clock-nanosleep's
/// 69 µs: io-uring-timeout and futex-waitv faster (95 % intervals apart), …": at the main
/// sweep's shortest request, idle, each measured newer wait's median against
/// clock_nanosleep's, faster or slower only where the intervals separate. Where the thread
/// had a timer slack above 1 ns it adds that the kernel arms their timers without it.
pub fn newer_waits(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let d = short_request(&m)?;
    let base = m.cell(BASELINE, d, 0).filter(|c| c.summary.count > 0)?;
    let cells: Vec<_> = NEWER
        .iter()
        .filter_map(|n| m.cell(n, d, 0).filter(|c| c.summary.count > 0))
        .collect();
    if cells.is_empty() {
        return None;
    }
    // Over the sweep's rounds: a median of pooled samples decides nothing (a result
    // without rounds says so beside "indistinguishable").
    let est = |c: &sleeplab_results::sweep::SweepCell| {
        c.est(Stat::Median)
            .unwrap_or(Est::pooled(c.summary.median_ns, None))
    };
    let mut s = Sentence::default();
    let quote = |s: &mut Sentence, c: &sleeplab_results::sweep::SweepCell| {
        let shown = ns(c.summary.median_ns);
        s.claim(Claim::Quote {
            stat: Stat::Median,
            n: c.summary.count,
            shown: shown.clone(),
        });
        format!("{} {shown}{}", c.mechanism, small_n(c.summary.count))
    };
    let medians: Vec<String> = cells.iter().map(|c| quote(&mut s, c)).collect();
    let base_text = quote(&mut s, base);
    let (mut faster, mut slower, mut tied) = (Vec::new(), Vec::new(), Vec::new());
    let mut undecided: Vec<Est> = Vec::new();
    for c in &cells {
        let stated = order(&est(c), &est(base));
        s.claim(Claim::Verdict {
            stat: Stat::Median,
            a: est(c),
            b: est(base),
            stated,
        });
        match stated {
            Order::Below => faster.push(c.mechanism.clone()),
            Order::Above => slower.push(c.mechanism.clone()),
            Order::Indistinguishable => {
                tied.push(c.mechanism.clone());
                undecided.push(est(c));
            }
        }
    }
    let mut verdicts = Vec::new();
    if !faster.is_empty() {
        verdicts.push(format!("{} faster", and_list(&faster)));
    }
    if !slower.is_empty() {
        verdicts.push(format!("{} slower", and_list(&slower)));
    }
    if !tied.is_empty() {
        // Why no interval decided (too few rounds, or none in this result), if so.
        undecided.push(est(base));
        let why = basis_note(&undecided.iter().collect::<Vec<_>>());
        verdicts.push(format!("{} {INDISTINGUISHABLE}{why}", and_list(&tied)));
    }
    s.push(&format!(
        "io_uring and futex_waitv against clock_nanosleep: asked for {} idle, {} took a median of {} against {base_text}: {} (faster or slower only where the 95 % intervals of the medians over the sweep's rounds separate)",
        ns(d as f64),
        if cells.len() == 1 { "it" } else { "they" },
        and_list(&medians),
        verdicts.join(", ")
    ));
    if base.timer_slack_ns > 1 && !faster.is_empty() {
        s.push(&format!(
            "; the kernel arms their timers without the thread's timer slack ({} here), clock_nanosleep's with it, which alone can make them faster",
            ns(base.timer_slack_ns as f64)
        ));
    }
    s.push(".");
    Some(Finding::new("newer-waits", s))
}
