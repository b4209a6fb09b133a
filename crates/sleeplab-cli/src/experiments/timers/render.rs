//! `timers` in the terminal: seed 004's table per period (mechanism, count, avg error %,
//! σ) with lateness, missed ticks, drift, CPU and context switches beside it; per-thread
//! rows under each mechanism with `--threads`; then one-glance matrices.

use super::{TimersCell, TimersData, cells_table, most_common};
use sleeplab_stats::{fmt_ns, fmt_ns_f, fmt_pct, new_table, not_measured};
use std::fmt::Write;

fn slack_label(s: Option<u64>) -> &'static str {
    match s {
        Some(_) => "timer slack set",
        None => "timer slack as inherited",
    }
}

/// The most frequent value (the first of equals), 0 when empty.
/// Renders the result as text.
pub fn render(data: &TimersData, machine: sleeplab_account::Machine) -> String {
    let mut out = String::new();
    let cfg = &data.config;
    let mut groups: Vec<(usize, Option<u64>)> = Vec::new();
    for c in &data.cells {
        let g = (c.load, c.requested_timer_slack_ns);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for &(load, slack) in &groups {
        let in_group = |c: &&TimersCell| c.load == load && c.requested_timer_slack_ns == slack;
        for &period in &cfg.periods_ns {
            let cells: Vec<&TimersCell> = data
                .cells
                .iter()
                .filter(in_group)
                .filter(|c| c.period_ns == period)
                .collect();
            if cells.is_empty() {
                continue;
            }
            let usual = most_common(cells.iter().map(|c| c.timer_slack_ns));
            let _ = writeln!(
                out,
                "\nPeriod: {}   ({} × {} per cell, load {load}, {} ({}))",
                fmt_ns(period),
                if cfg.threads == 1 {
                    "1 thread".to_string()
                } else {
                    format!("{} threads", cfg.threads)
                },
                fmt_ns(cfg.duration_ns),
                slack_label(slack),
                fmt_ns(usual),
            );
            let t = cells_table(&cells, false).terminal();
            let _ = writeln!(out, "{t}");
        }
        if cfg.periods_ns.len() > 1 {
            out.push_str(&overview(data, load, slack));
        }
    }
    let early: Vec<String> = data
        .cells
        .iter()
        .filter(|c| c.merged.early_wakes > 0)
        .map(|c| {
            format!(
                "{} @ {}: {}",
                c.mechanism,
                fmt_ns(c.period_ns),
                c.merged.early_wakes
            )
        })
        .collect();
    if !early.is_empty() {
        let _ = writeln!(
            out,
            "\nEARLY wakes (before their deadline): {}",
            early.join("; ")
        );
    }
    out.push_str(&not_measured(
        data.skipped
            .iter()
            .map(|s| (s.mechanism.as_str(), s.period_ns, s.reason.as_str())),
    ));
    out.push_str(
        "\ncount = wakes received / ticks scheduled; avg error = mean |interval − period| / period \
         (seed 004); late = wake − (t0 + k·period) per scheduled tick; missed = ticks swallowed by \
         a later wake; end late = last wake − its tick; drift = last wake − received × period; \
         CPU = thread(s) + helpers / wall.\n",
    );
    if let Some(tracing) = &data.tracing {
        let rows: Vec<(Vec<String>, &sleeplab_account::Explanation)> = data
            .cells
            .iter()
            .filter_map(|c| {
                let key = vec![
                    c.mechanism.clone(),
                    fmt_ns(c.period_ns),
                    c.load.to_string(),
                    fmt_ns(c.timer_slack_ns),
                ];
                c.explanation.as_ref().map(|x| (key, x))
            })
            .collect();
        out.push('\n');
        out.push_str(&sleeplab_account::components_table(
            &["mechanism", "period", "load", "slack set"],
            &rows,
            tracing,
            machine,
        ));
        let untraced: Vec<&str> = data
            .cells
            .iter()
            .filter(|c| c.explanation.is_none())
            .map(|c| c.mechanism.as_str())
            .collect();
        // Also where nothing was recorded: which cells the tracer could not follow.
        if (tracing.kernel || tracing.recorded_nothing()) && !untraced.is_empty() {
            let _ = writeln!(
                out,
                "not traced: {} (their wakes come on other threads or processes than the measuring one)",
                untraced.join(", ")
            );
        }
    }
    out
}

/// Matrices over periods: avg error (the seed's figure), median and mean lateness.
fn overview(data: &TimersData, load: usize, slack: Option<u64>) -> String {
    let cfg = &data.config;
    let find = |m: &str, p: u64| {
        data.cells.iter().find(|c| {
            c.mechanism == m
                && c.period_ns == p
                && c.load == load
                && c.requested_timer_slack_ns == slack
        })
    };
    let mut s = String::new();
    for (title, cell_text) in [
        (
            "avg error (seed 004's figure)",
            (|c: &TimersCell| fmt_pct(c.merged.avg_error_pct)) as fn(&TimersCell) -> String,
        ),
        ("median lateness", |c: &TimersCell| {
            fmt_ns_f(c.merged.median_lateness_ns)
        }),
        ("mean lateness", |c: &TimersCell| {
            fmt_ns_f(c.merged.mean_lateness_ns)
        }),
    ] {
        let mut header = vec![title.to_string()];
        header.extend(cfg.periods_ns.iter().map(|&p| fmt_ns(p)));
        let mut t = new_table(header);
        for m in &cfg.mechanisms {
            let mut row = vec![m.clone()];
            row.extend(
                cfg.periods_ns
                    .iter()
                    .map(|&p| find(m, p).map_or("–".into(), cell_text)),
            );
            t.add_row(row);
        }
        let _ = writeln!(s, "\n{t}");
    }
    s
}
