//! `pace` in the terminal: one row per contender.

use super::PaceData;
use crate::output::{fmt_ns, fmt_ns_f, fmt_pct, new_table};
use std::fmt::Write;

/// Renders the pace result as text.
pub fn render(data: &PaceData) -> String {
    let c = &data.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} Hz loop ({} per frame), {} frames per contender in blocks of {}, timer slack {}",
        c.rate_hz,
        fmt_ns(c.period_ns),
        c.frames,
        c.block,
        c.timer_slack_ns.map_or("as inherited".into(), fmt_ns)
    );
    let mut t = new_table([
        "strategy", "n", "mean", "min", "p50", "p99", "p99.9", "max", "missed", "drift", "CPU",
        "spin", "csw v/i",
    ]);
    for r in &data.results {
        let e = &r.error;
        t.add_row(vec![
            r.strategy.clone(),
            e.count.to_string(),
            fmt_ns_f(e.mean_ns),
            fmt_ns(e.min_ns),
            fmt_ns_f(e.median_ns),
            fmt_ns_f(e.p99_ns),
            fmt_ns_f(e.p999_ns),
            fmt_ns(e.max_ns),
            r.missed_frames.to_string(),
            fmt_ns_f(r.actual_total_ns as f64 - r.ideal_total_ns as f64),
            fmt_pct(r.cpu_percent),
            fmt_pct(r.spin_percent),
            format!(
                "{:.2}/{:.2}",
                r.voluntary_csw_per_frame, r.involuntary_csw_per_frame
            ),
        ]);
    }
    let _ = writeln!(
        out,
        "frame error = wake − deadline on an absolute schedule\n{t}"
    );
    out
}
