//! `runtimes --trace`: the kernel's account of each probe call's lateness. A tracer of
//! every thread runs beside each method's probe runs (a probe names its measuring
//! thread only once it runs); afterwards each call — its start on `CLOCK_MONOTONIC`
//! from the probe's `--timestamps`, its elapsed time, its request — is a window of the
//! probe's measuring thread, split like any other wake ([`sleeplab_account`]).

use super::{MethodResult, PeriodicCell, RuntimesData};
use sleeplab_account::{
    Explanation, Follow, Recording, Recordings, Timeline, Window, explain_windows,
};

/// The note on a method whose probe names no measuring thread.
pub const NO_THREAD: &str = "not traced: the probe names no measuring thread (a Go \
     goroutine moves between threads; the Windows probe runs under Wine)";

/// Starts recording every thread for one method's probe runs (`None`: not asked for,
/// or the kernel refused before).
pub fn begin(tracing: &Recordings) -> Option<Recording> {
    tracing
        .able()
        .then(|| Recording::drained(true, Follow::EveryThread))
}

/// Stops `recording` and splits the calls of `res`.
pub fn end(tracing: &mut Recordings, recording: Option<Recording>, res: &mut MethodResult) {
    let Some(recording) = recording else { return };
    let (timeline, lost) = tracing.finish(recording);
    if let Some(tl) = timeline {
        explain_method(res, &tl, lost);
    }
}

/// Splits every call of `res` that has a start and a measuring thread.
pub fn explain_method(res: &mut MethodResult, timeline: &Timeline, lost: u64) {
    let mut unnamed = false;
    // A yield never blocks: its time is spin. Any other call can block, and one whose
    // switch-out is not on record is unexplained (no per-call context switches here).
    let never = res.kind == crate::probe::protocol::Kind::Yield;
    for (cell, timing) in res.cells.iter_mut().zip(&res.timing) {
        let (Some(tid), Some(starts)) = (timing.tid, timing.starts_ns.as_ref()) else {
            unnamed |= timing.tid.is_none();
            continue;
        };
        let windows: Vec<Window> = starts
            .iter()
            .zip(&cell.all_samples_ns)
            .map(|(&s, &d)| {
                Window::relative(tid as i32, s, cell.requested_ns, s + d).never_blocking(never)
            })
            .collect();
        cell.explanation = Some(explain_windows(timeline, &windows, lost));
    }
    if let (Some(p), Some(timing)) = (res.periodic.as_mut(), res.timing.first()) {
        match (timing.tid, timing.t0_ns) {
            (Some(tid), Some(t0)) => {
                p.explanation = Some(explain_windows(timeline, &tick_windows(p, tid, t0), lost))
            }
            (None, _) => unnamed = true,
            _ => {}
        }
    }
    if unnamed && !res.notes.iter().any(|n| n == NO_THREAD) {
        res.notes.push(NO_THREAD.into());
    }
}

/// The measured ticks of a periodic cell as windows: tick k (from 1, warm-up first) is
/// due at `t0 + k·P` and waited from the previous arrival (or t0).
pub fn tick_windows(p: &PeriodicCell, tid: u32, t0_ns: u64) -> Vec<Window> {
    let warmup = p.warmup_ns.len();
    let mut prev = t0_ns;
    let mut out = Vec::with_capacity(p.all_arrivals_ns.len());
    for (i, &a) in p.warmup_ns.iter().chain(&p.all_arrivals_ns).enumerate() {
        let end = t0_ns + a;
        if i >= warmup {
            out.push(Window::until(
                tid as i32,
                prev,
                t0_ns + (i as u64 + 1) * p.period_ns,
                end,
            ));
        }
        prev = end;
    }
    out
}

/// Every traced cell of `data`, keyed for the components table: runtime, method,
/// requested (a periodic cell: its period), load.
pub fn traced_cells(data: &RuntimesData) -> Vec<(Vec<String>, &Explanation)> {
    use sleeplab_stats::fmt_ns;
    let mut rows = Vec::new();
    for r in &data.runtimes {
        for m in &r.methods {
            let key = |requested: u64| {
                vec![
                    r.id.clone(),
                    m.method.clone(),
                    fmt_ns(requested),
                    m.load.to_string(),
                ]
            };
            for c in &m.cells {
                if let Some(x) = &c.explanation {
                    rows.push((key(c.requested_ns), x));
                }
            }
            if let Some(p) = &m.periodic {
                if let Some(x) = &p.explanation {
                    rows.push((key(p.period_ns), x));
                }
            }
        }
    }
    rows
}

/// The keys of [`traced_cells`]' rows.
pub const TRACED_KEYS: [&str; 4] = ["runtime", "method", "requested", "load"];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::runtimes::{Lateness, PeriodicCell};
    use sleeplab_stats::summarize;

    fn periodic(warmup: Vec<u64>, arrivals: Vec<u64>) -> PeriodicCell {
        PeriodicCell {
            period_ns: 1_000,
            ticks: arrivals.len() as u64,
            interval: summarize(&[1], 0),
            lateness: Lateness::default(),
            warmup_ns: warmup,
            arrivals_ns: arrivals.clone(),
            all_arrivals_ns: arrivals,
            notes: vec![],
            explanation: None,
        }
    }

    /// Warm-up ticks count toward k but are not split; each measured tick waits from
    /// the previous arrival and is due at t0 + k·P.
    #[test]
    fn ticks_are_due_on_the_grid_counting_the_warm_up() {
        let p = periodic(vec![1_050], vec![2_100, 3_020]);
        let w = tick_windows(&p, 7, 10_000);
        assert_eq!(w.len(), 2);
        assert_eq!(
            (w[0].start_ns, w[0].deadline_ns, w[0].end_ns),
            (11_050, 12_000, 12_100)
        );
        assert_eq!(
            (w[1].start_ns, w[1].deadline_ns, w[1].end_ns),
            (12_100, 13_000, 13_020)
        );
        assert!(w.iter().all(|w| w.tid == 7));
    }
}
