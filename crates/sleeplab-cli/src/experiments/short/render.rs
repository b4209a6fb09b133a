//! `short` in the terminal: a table per timer slack, the floor, a side-by-side slack
//! comparison, and the seed's four findings with their verdicts.

use super::findings::mean_ci;
use super::{FLOOR, SYSCALL, ShortCell, ShortData};
use sleeplab_stats::{fmt_ns, fmt_ns_f, new_table, not_measured, t_quantile};
use std::fmt::Write;

/// "mechanism @ requested".
fn label(c: &ShortCell) -> String {
    format!("{} @ {}", c.mechanism, fmt_ns(c.requested_ns))
}

/// Renders a `short` result as text.
pub fn render(data: &ShortData) -> String {
    let mut out = String::new();
    let slacks = data.slacks();
    let reps = data
        .cells
        .iter()
        .chain(&data.references)
        .map(|c| c.net.n)
        .max()
        .unwrap_or(0);
    let conf = data.config.confidence * 100.0;
    let _ = writeln!(
        out,
        "\nmethod: each figure is one batch of N calls timed as a whole (clock read, N calls, \
         clock read) ÷ N, minus the median of the empty loops of the same N run just before \
         each batch (\"net\"); \
         {reps} interleaved repetitions in a shuffled order; ± is the {conf} % confidence \
         interval of the mean by Student's t (df = {}{}) over the per-repetition per-call \
         means; min and median are of the same means.",
        reps.saturating_sub(1),
        t_quantile(data.config.confidence, reps.saturating_sub(1))
            .map(|t| format!(", t = {t:.3}"))
            .unwrap_or_default()
    );
    for &slack in &slacks {
        let _ = writeln!(out, "\nshort sleeps, timer slack {}", fmt_ns(slack));
        let mut t = new_table([
            "mechanism @ requested",
            "calls/batch",
            &format!("net mean ± {conf} % CI"),
            "raw mean",
            "net min",
            "net median",
            "CPU/call",
            "vol csw/call",
            "invol csw/call",
        ]);
        for c in data.cells.iter().filter(|c| c.timer_slack_ns == slack) {
            t.add_row(vec![
                label(c),
                c.batch.to_string(),
                mean_ci(&c.net),
                fmt_ns_f(c.raw.mean_ns),
                fmt_ns_f(c.net.min_ns),
                fmt_ns_f(c.net.median_ns),
                fmt_ns_f(c.cpu_ns_per_call),
                format!("{:.3}", c.voluntary_csw_per_call),
                format!("{:.3}", c.involuntary_csw_per_call),
            ]);
        }
        let _ = writeln!(out, "{t}");
        if let Some(c) = data
            .cells
            .iter()
            .find(|c| c.timer_slack_ns == slack && c.mechanism == "timerfd-interval")
        {
            let _ = writeln!(
                out,
                "timerfd-interval @ {}: an interval timer with this period piles up expirations \
                 between reads; one read() collects them all and the following calls hand them \
                 out without a system call ({:.3} voluntary switches per call), so this row \
                 measures a tick counter more than a wait.",
                fmt_ns(c.requested_ns),
                c.voluntary_csw_per_call
            );
        }
        if let Some(f) = data.reference(FLOOR, slack) {
            let _ = writeln!(
                out,
                "floor (ground truth: the same loop with an empty black_box body): {} iterations \
                 take {} (min {}, median {}), {} per iteration",
                f.batch,
                mean_ci(&scaled(&f.raw, f.batch as f64)),
                fmt_ns_f(f.raw.min_ns * f.batch as f64),
                fmt_ns_f(f.raw.median_ns * f.batch as f64),
                fmt_ns_f(f.raw.mean_ns),
            );
        }
        if let Some(s) = data.reference(SYSCALL, slack) {
            let _ = writeln!(
                out,
                "yardstick: one trivial system call ({SYSCALL}) costs {} net, {} raw",
                mean_ci(&s.net),
                fmt_ns_f(s.raw.mean_ns)
            );
        }
    }
    if slacks.len() >= 2 {
        out.push_str(&side_by_side(data, &slacks));
    }
    if !data.findings.is_empty() {
        let _ = writeln!(out, "\nseed 001's Linux findings on this machine:");
        let mut last = 0;
        for f in &data.findings {
            if f.id != last {
                let _ = writeln!(out, "{}. {}", f.id, f.claim);
                last = f.id;
            }
            let _ = writeln!(
                out,
                "   slack {}: {}: {}",
                fmt_ns(f.timer_slack_ns),
                f.outcome.to_string().to_uppercase(),
                f.detail
            );
        }
    }
    out.push_str(&not_measured(
        data.skipped
            .iter()
            .map(|s| (s.mechanism.as_str(), s.requested_ns, s.reason.as_str())),
    ));
    out
}

/// The statistics of a per-call figure times `k` (for "per batch" figures).
fn scaled(s: &super::RepStats, k: f64) -> super::RepStats {
    super::RepStats {
        n: s.n,
        mean_ns: s.mean_ns * k,
        stddev_ns: s.stddev_ns * k,
        ci_half_width_ns: s.ci_half_width_ns.map(|h| h * k),
        ci_low_ns: s.ci_low_ns.map(|v| v * k),
        ci_high_ns: s.ci_high_ns.map(|v| v * k),
        min_ns: s.min_ns * k,
        median_ns: s.median_ns * k,
        median_ci_ns: s.median_ci_ns.map(|c| c.map(|v| v * k)),
        max_ns: s.max_ns * k,
    }
}

/// Net mean per cell, one column per slack, and the ratio of the first slack to each
/// other one.
fn side_by_side(data: &ShortData, slacks: &[u64]) -> String {
    let mut header = vec!["mechanism @ requested".to_string()];
    header.extend(slacks.iter().map(|&s| format!("net @ slack {}", fmt_ns(s))));
    header.extend(
        slacks[1..]
            .iter()
            .map(|&s| format!("{} ÷ {}", fmt_ns(slacks[0]), fmt_ns(s))),
    );
    let mut t = new_table(header);
    let mut seen: Vec<(String, u64)> = Vec::new();
    for c in &data.cells {
        let key = (c.mechanism.clone(), c.requested_ns);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let at = |s: u64| data.cell(&c.mechanism, c.requested_ns, s);
        let mut row = vec![label(c)];
        row.extend(
            slacks
                .iter()
                .map(|&s| at(s).map_or("–".into(), |x| mean_ci(&x.net))),
        );
        row.extend(slacks[1..].iter().map(|&s| match (at(slacks[0]), at(s)) {
            (Some(a), Some(b)) if b.net.mean_ns > 0.0 => {
                format!("{:.2}", a.net.mean_ns / b.net.mean_ns)
            }
            _ => "–".into(),
        }));
        t.add_row(row);
    }
    format!("\ntimer slack side by side (net mean per call)\n{t}\n")
}
