//! The sweep in the terminal: seed-000-style mean and σ tables per mechanism (rows:
//! requested duration, columns: load level), then a percentile table per mechanism.

use super::{SweepCell, SweepData};
use sleeplab_account::{CELL_KEYS, cell_key, components_table};
use sleeplab_stats::{fmt_ns, fmt_ns_f, new_table, not_measured};
use std::fmt::Write;

/// Renders the sweep as text.
pub fn render(data: &SweepData, machine: sleeplab_account::Machine) -> String {
    let mut out = String::new();
    let slacks = distinct(data.cells.iter().map(|c| c.timer_slack_ns));
    let loads = distinct(data.cells.iter().map(|c| c.load as u64));
    for mech in &data.config.mechanisms {
        let cells: Vec<&SweepCell> = data.cells.iter().filter(|c| &c.mechanism == mech).collect();
        if cells.is_empty() {
            continue;
        }
        for &slack in &slacks {
            let cells: Vec<&SweepCell> = cells
                .iter()
                .copied()
                .filter(|c| c.timer_slack_ns == slack)
                .collect();
            if cells.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{mech}  (timer slack {})", fmt_ns(slack));
            // Mean and σ tables, rows = requested, columns = load.
            let mut header = vec!["requested".to_string()];
            header.extend(loads.iter().map(|l| format!("mean @ load {l}")));
            header.extend(loads.iter().map(|l| format!("σ @ load {l}")));
            let mut t = new_table(header);
            for d in distinct(cells.iter().map(|c| c.requested_ns)) {
                let find = |l: u64| {
                    cells
                        .iter()
                        .find(|c| c.requested_ns == d && c.load as u64 == l)
                };
                let mut row = vec![fmt_ns(d)];
                row.extend(
                    loads
                        .iter()
                        .map(|&l| find(l).map_or("–".into(), |c| fmt_ns_f(c.summary.mean_ns))),
                );
                row.extend(
                    loads
                        .iter()
                        .map(|&l| find(l).map_or("–".into(), |c| fmt_ns_f(c.summary.stddev_ns))),
                );
                t.add_row(row);
            }
            let _ = writeln!(out, "{t}");
            // Percentiles and costs, one row per (requested, load).
            let mut header = vec!["requested", "load"];
            header.extend(SweepCell::QUANTILE_COLUMNS);
            header.extend(["overshoot", "early", "CPU/call", "csw v/i"]);
            let mut t = new_table(header);
            // A row is a (request, load): both lead each part of a split table.
            t.set_keys(2);
            for c in &cells {
                let s = &c.summary;
                let mut row = vec![fmt_ns(c.requested_ns), c.load.to_string()];
                row.extend(c.quantiles(fmt_ns_f));
                row.extend([
                    fmt_ns_f(s.mean_overshoot_ns),
                    if s.early_count > 0 {
                        format!("{} !", s.early_count)
                    } else {
                        "0".into()
                    },
                    fmt_ns_f(c.cpu_ns_per_call),
                    format!(
                        "{:.2}/{:.2}",
                        c.voluntary_csw_per_call, c.involuntary_csw_per_call
                    ),
                ]);
                t.add_row(row);
            }
            let _ = writeln!(out, "{t}");
            let slow_first: Vec<String> = cells
                .iter()
                .filter(|c| {
                    c.first_calls_ns
                        .first()
                        .zip(c.summary.p99_ns)
                        .is_some_and(|(&f, p99)| f as f64 > 2.0 * p99.max(1.0) && f > 100_000)
                })
                .map(|c| {
                    format!(
                        "{} @ load {}: first call {} vs p99 {}",
                        fmt_ns(c.requested_ns),
                        c.load,
                        fmt_ns(c.first_calls_ns[0]),
                        fmt_ns_f(c.summary.p99_ns)
                    )
                })
                .collect();
            if !slow_first.is_empty() {
                let _ = writeln!(
                    out,
                    "slow first calls (kept out of the statistics): {}",
                    slow_first.join("; ")
                );
            }
        }
    }
    if loads.len() == 1 && slacks.len() == 1 {
        out.push_str(&overview(data));
    }
    out.push_str(&not_measured(
        data.skipped
            .iter()
            .map(|s| (s.mechanism.as_str(), s.requested_ns, s.reason.as_str())),
    ));
    if let Some(tracing) = &data.tracing {
        let rows: Vec<(Vec<String>, &sleeplab_account::Explanation)> = data
            .cells
            .iter()
            .filter_map(|c| {
                let x = c.explanation.as_ref()?;
                Some((
                    cell_key(&c.mechanism, c.requested_ns, c.load, c.timer_slack_ns),
                    x,
                ))
            })
            .collect();
        out.push('\n');
        out.push_str(&components_table(&CELL_KEYS, &rows, tracing, machine));
    }
    out
}

/// A one-glance matrix: median elapsed per mechanism (rows) and request (columns).
fn overview(data: &SweepData) -> String {
    let durations = distinct(data.cells.iter().map(|c| c.requested_ns));
    let mut header = vec!["median elapsed".to_string()];
    header.extend(durations.iter().map(|&d| fmt_ns(d)));
    let mut t = new_table(header);
    for mech in &data.config.mechanisms {
        let mut row = vec![mech.clone()];
        row.extend(durations.iter().map(|&d| {
            data.cells
                .iter()
                .find(|c| &c.mechanism == mech && c.requested_ns == d)
                .map_or("–".into(), |c| fmt_ns_f(c.summary.median_ns))
        }));
        t.add_row(row);
    }
    format!("\noverview (median of every cell)\n{t}\n")
}

fn distinct(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}
