//! The oracle: the best *fixed* margin in hindsight on a recorded [`Trace`], for each CPU
//! budget. Its (CPU %, p99 lateness) curve is the frontier no online estimator can be
//! expected to beat on that trace (an adaptive one can, where the trace changes regime).

use super::summary::WaitSummary;
use super::trace::Trace;

/// One fixed margin and what it does on a trace.
///
/// A fixed margin `m` replays each wait `(r, o)` (native sleep asked for, its oversleep)
/// as a sleep to `deadline − m` followed by a spin to the deadline, assuming the oversleep
/// does not depend on how long the native sleep was:
///
/// | case | lateness | spin | span (start to return) |
/// |---|---|---|---|
/// | `r > m` (native phase) | `max(o − m, 0)` | `max(m − o, 0)` | `r + lateness` |
/// | `r ≤ m` (spin only) | 0 | `r` | `r` |
///
/// CPU % is `100 · Σ spin / Σ span`. Lateness never grows and CPU never falls as `m`
/// grows, so the best margin within a CPU budget is the largest one that fits, and the
/// cheapest margin for a lateness target is the smallest one that meets it: both are
/// found by bisection. Pure functions, no clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrontierPoint {
    /// The fixed margin, ns.
    pub margin_ns: u64,
    /// Lateness and CPU of the trace replayed with that margin.
    pub summary: WaitSummary,
}

/// Replays `trace` with the fixed margin `margin_ns` (see [`FrontierPoint`]).
pub fn fixed_margin_on_trace(trace: &Trace, margin_ns: u64) -> FrontierPoint {
    let m = margin_ns;
    let summary = WaitSummary::from_waits(trace.waits.iter().map(|w| {
        let (r, o) = (w.requested_ns, w.oversleep_ns);
        if r > m {
            let late = o.saturating_sub(m);
            (late, m.saturating_sub(o), r.saturating_add(late))
        } else {
            (0, r, r)
        }
    }));
    FrontierPoint {
        margin_ns: m,
        summary,
    }
}

/// The best fixed margin within a CPU budget: the largest margin whose CPU % is at most
/// `cpu_percent` (margin 0 when even that exceeds it, which only an empty budget does).
pub fn oracle_at_cpu(trace: &Trace, cpu_percent: f64) -> FrontierPoint {
    let fits = |m: u64| fixed_margin_on_trace(trace, m).summary.cpu_percent() <= cpu_percent;
    let (mut lo, mut hi) = (0u64, max_requested(trace));
    if fits(hi) {
        return fixed_margin_on_trace(trace, hi);
    }
    // Invariant: fits(lo) or lo == 0; !fits(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    fixed_margin_on_trace(trace, lo)
}

/// The cheapest fixed margin whose p99 lateness is at most `p99_ns`: the smallest margin
/// that meets it. `None` when the trace is too short for a p99 (fewer than 100 waits).
pub fn oracle_at_p99(trace: &Trace, p99_ns: u64) -> Option<FrontierPoint> {
    let meets = |m: u64| {
        fixed_margin_on_trace(trace, m)
            .summary
            .p99_ns
            .is_some_and(|p| p <= p99_ns)
    };
    let top = max_requested(trace);
    if !meets(top) {
        return None;
    }
    let (mut lo, mut hi) = (0u64, top);
    if meets(lo) {
        return Some(fixed_margin_on_trace(trace, lo));
    }
    // Invariant: !meets(lo); meets(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) { hi = mid } else { lo = mid }
    }
    Some(fixed_margin_on_trace(trace, hi))
}

/// The frontier as points: margin 0 and the margins at the oversleep's quantiles
/// `i / steps` for `i = 1..=steps` (distinct, ascending), each replayed. Where p99 or CPU
/// repeats between neighbouring margins, the larger margin is the dominated one.
pub fn oracle_frontier(trace: &Trace, steps: usize) -> Vec<FrontierPoint> {
    let mut over: Vec<u64> = trace.waits.iter().map(|w| w.oversleep_ns).collect();
    over.sort_unstable();
    let steps = steps.max(1);
    let mut margins = vec![0];
    if !over.is_empty() {
        for i in 1..=steps {
            let rank = (i * over.len()).div_ceil(steps).max(1);
            margins.push(over[rank - 1]);
        }
    }
    margins.dedup();
    margins
        .into_iter()
        .map(|m| fixed_margin_on_trace(trace, m))
        .collect()
}

fn max_requested(trace: &Trace) -> u64 {
    trace
        .waits
        .iter()
        .map(|w| w.requested_ns)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 waits of 10 ms: 97 oversleep 100 µs, two 300 µs, one 2 ms.
    fn hand_made() -> Trace {
        Trace::from_pairs((0..100).map(|i| {
            let o = match i {
                10 | 50 => 300_000,
                70 => 2_000_000,
                _ => 100_000,
            };
            (10_000_000, o)
        }))
    }

    #[test]
    fn a_fixed_margin_by_hand() {
        let t = hand_made();
        // m = 0: every wait is late by its oversleep, nothing spun.
        let p = fixed_margin_on_trace(&t, 0).summary;
        assert_eq!((p.late_waits, p.spin_ns, p.max_ns), (100, 0, 2_000_000));
        assert_eq!(p.p50_ns, Some(100_000));
        // p99 at position 0.99 · 99 = 98.01 of 97×100 µs, 2×300 µs, 1×2 ms: between the
        // 99th (300 µs) and the 100th (2 ms): 300 + 0.01 · 1700 = 317 µs.
        assert_eq!(p.p99_ns, Some(317_000));
        // m = 150 µs: 97 waits spin 50 µs; 3 late by 150, 150, 1850 µs.
        let p = fixed_margin_on_trace(&t, 150_000).summary;
        assert_eq!(p.late_waits, 3);
        assert_eq!(p.spin_ns, 97 * 50_000);
        assert_eq!(p.span_ns, 100 * 10_000_000 + 150_000 + 150_000 + 1_850_000);
        // 150 + 0.01 · (1850 − 150) = 167 µs.
        assert_eq!(p.p99_ns, Some(167_000));
        assert_eq!(p.max_ns, 1_850_000);
        // m = 300 µs: only the 2 ms wait is late, by 1.7 ms: p99 = 0 + 0.01 · 1.7 ms.
        let p = fixed_margin_on_trace(&t, 300_000).summary;
        assert_eq!(
            (p.late_waits, p.p99_ns, p.max_ns),
            (1, Some(17_000), 1_700_000)
        );
        assert_eq!(p.spin_ns, 97 * 200_000);
        // A margin longer than the wait: spin only, never late.
        let p = fixed_margin_on_trace(&t, 20_000_000).summary;
        assert_eq!((p.late_waits, p.spin_ns), (0, 100 * 10_000_000));
        assert_eq!(p.cpu_percent(), 100.0);
    }

    #[test]
    fn best_margin_within_a_cpu_budget() {
        let t = hand_made();
        // CPU of m = 300 µs: 97 × 200 µs / (100 × 10 ms + 1.7 ms) = 1.9368 %.
        let cpu300 = 100.0 * (97.0 * 200_000.0) / (1e9 + 1_700_000.0);
        let best = oracle_at_cpu(&t, cpu300);
        assert_eq!(best.margin_ns, 300_000);
        assert_eq!(best.summary.p99_ns, Some(17_000));
        // A hair less budget: the largest margin that fits is 299 999 ns; the two 300 µs
        // waits are 1 ns late: p99 = 1 + 0.01 · (1 700 001 − 1) ns.
        let below = oracle_at_cpu(&t, cpu300 - 1e-9);
        assert_eq!(below.margin_ns, 299_999);
        assert_eq!(below.summary.p99_ns, Some(17_001));
        // No budget: margin 0. All the budget there is: the longest wait.
        assert_eq!(
            oracle_at_cpu(&t, 0.0).margin_ns,
            100_000,
            "spins nothing up to o"
        );
        assert_eq!(oracle_at_cpu(&t, 100.0).margin_ns, 10_000_000);
    }

    #[test]
    fn cheapest_margin_for_a_p99_target() {
        let t = hand_made();
        // Below 300 µs the p99 (position 98.01) is 0.99 · (300 µs − m) + 0.01 · (2 ms − m)
        // = 317 µs − m; from 300 µs on, 0.01 · (2 ms − m), which rounds to 0 ns from
        // m = 2 ms − 49 ns on (0.49 ns).
        assert_eq!(oracle_at_p99(&t, 0).unwrap().margin_ns, 1_999_951);
        assert_eq!(oracle_at_p99(&t, 100_000).unwrap().margin_ns, 217_000);
        assert_eq!(oracle_at_p99(&t, 300_000).unwrap().margin_ns, 17_000);
        let short = Trace::from_pairs([(1_000, 5); 99]);
        assert_eq!(oracle_at_p99(&short, 0), None, "99 waits give no p99");
    }

    #[test]
    fn frontier_points_are_ordered() {
        let t = hand_made();
        let f = oracle_frontier(&t, 100);
        let margins: Vec<u64> = f.iter().map(|p| p.margin_ns).collect();
        assert_eq!(margins, vec![0, 100_000, 300_000, 2_000_000]);
        for w in f.windows(2) {
            assert!(w[1].summary.cpu_percent() >= w[0].summary.cpu_percent());
            assert!(w[1].summary.p99_ns <= w[0].summary.p99_ns);
        }
        assert_eq!(oracle_frontier(&Trace::default(), 5).len(), 1);
    }
}
