//! The latency histogram in the format of cyclictest's `-h`/`--histfile`: one row per
//! 1 µs bucket, `bucket count count …` (six-digit zero-padded, counts tab-separated),
//! then `# Total:`, `# Min Latencies:`, `# Avg Latencies:`, `# Max Latencies:`,
//! `# Histogram Overflows:` and `# Histogram Overflow at cycle number:` lines, as
//! cyclictest prints them, so scripts written for cyclictest read it unchanged.
//!
//! cyclictest has one column per thread; here a column is one thread of one cell
//! (mechanism × period × load × slack), named in `# column` comment lines before
//! `# Histogram`. Lateness is per scheduled tick (see `crate::ticks`); a tick at or beyond
//! `max_us` µs is an overflow, and its cycle number is its 0-based tick index. An early
//! tick (negative lateness, never expected) is counted in bucket 0 and reported in an
//! extra `# Early ticks:` line.

use super::TimersData;
use sleeplab_stats::{atomic_write, fmt_ns};
use std::fmt::Write;
use std::path::Path;

/// One column: a thread of a cell.
struct Column {
    label: String,
    lateness: Vec<i64>,
}

/// The histogram text for every thread of every cell, buckets 0..`max_us` µs.
pub fn histogram_text(data: &TimersData, max_us: u64) -> String {
    let columns: Vec<Column> = data
        .cells
        .iter()
        .flat_map(|c| {
            c.threads.iter().map(move |t| Column {
                label: format!(
                    "{} period {} load {} slack {} thread {}",
                    c.mechanism,
                    fmt_ns(c.period_ns),
                    c.load,
                    fmt_ns(t.timer_slack_ns),
                    t.thread
                ),
                lateness: t.ticks.iter().map(|r| r.lateness_ns).collect(),
            })
        })
        .collect();
    let max = usize::try_from(max_us).unwrap_or(usize::MAX).max(1);
    let mut hist = vec![vec![0u64; max]; columns.len()];
    let mut overflow_at: Vec<Vec<usize>> = vec![Vec::new(); columns.len()];
    let mut overflows = vec![0u64; columns.len()];
    let mut early = vec![0u64; columns.len()];
    for (ci, col) in columns.iter().enumerate() {
        for (k, &ns) in col.lateness.iter().enumerate() {
            if ns < 0 {
                early[ci] += 1;
            }
            let us = usize::try_from(ns.max(0) / 1_000).unwrap_or(usize::MAX);
            if us >= max {
                overflows[ci] += 1;
                if overflow_at[ci].len() < max {
                    overflow_at[ci].push(k);
                }
            } else {
                hist[ci][us] += 1;
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# sleeplab timers: latency = wake - (t0 + k*period) per scheduled tick, 1 us buckets up to {max_us} us"
    );
    for (i, c) in columns.iter().enumerate() {
        let _ = writeln!(out, "# column {}: {}", i + 1, c.label);
    }
    out.push_str("# Histogram\n");
    for b in 0..max {
        let _ = write!(out, "{b:06} ");
        let row: Vec<String> = hist.iter().map(|h| format!("{:06}", h[b])).collect();
        out.push_str(&row.join("\t"));
        out.push('\n');
    }
    let line = |out: &mut String, title: &str, values: Vec<String>| {
        let _ = writeln!(
            out,
            "# {title}:{}",
            values.iter().map(|v| format!(" {v}")).collect::<String>()
        );
    };
    line(
        &mut out,
        "Total",
        hist.iter()
            .map(|h| format!("{:09}", h.iter().sum::<u64>()))
            .collect(),
    );
    let us = |ns: i64| ns.max(0) / 1_000;
    line(
        &mut out,
        "Min Latencies",
        columns
            .iter()
            .map(|c| format!("{:05}", c.lateness.iter().copied().min().map_or(0, us)))
            .collect(),
    );
    line(
        &mut out,
        "Avg Latencies",
        columns
            .iter()
            .map(|c| {
                let n = c.lateness.len().max(1) as i128;
                let sum: i128 = c.lateness.iter().map(|&x| i128::from(x)).sum();
                format!("{:05}", (sum / n).max(0) / 1_000)
            })
            .collect(),
    );
    line(
        &mut out,
        "Max Latencies",
        columns
            .iter()
            .map(|c| format!("{:05}", c.lateness.iter().copied().max().map_or(0, us)))
            .collect(),
    );
    line(
        &mut out,
        "Histogram Overflows",
        overflows.iter().map(|o| format!("{o:05}")).collect(),
    );
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, at) in overflow_at.iter().enumerate() {
        let _ = write!(out, "# Thread {i}:");
        for k in at {
            let _ = write!(out, " {k:05}");
        }
        if (at.len() as u64) < overflows[i] {
            let _ = write!(out, " # {:05} others", overflows[i] - at.len() as u64);
        }
        out.push('\n');
    }
    if early.iter().any(|&e| e > 0) {
        line(
            &mut out,
            "Early ticks",
            early.iter().map(|e| format!("{e:05}")).collect(),
        );
    }
    out
}

/// Writes [`histogram_text`] to `path`, whole or not at all.
pub fn write_histogram(path: &Path, data: &TimersData, max_us: u64) -> anyhow::Result<()> {
    atomic_write(path, histogram_text(data, max_us).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::super::{ThreadResult, TickStats, TimersCell, TimersConfig};
    use super::*;
    use sleeplab_results::TickRecord;

    fn thread(i: usize, lateness: &[i64]) -> ThreadResult {
        ThreadResult {
            thread: i,
            stats: TickStats::default(),
            timer_slack_ns: 50_000,
            wall_ns: 0,
            cpu_ns: 0,
            helper_cpu_ns: 0,
            cpu_pct: 0.0,
            voluntary_csw: 0,
            involuntary_csw: 0,
            lateness_ns: vec![],
            ticks: lateness
                .iter()
                .map(|&l| TickRecord {
                    lateness_ns: l,
                    wake: 0,
                    missed: false,
                })
                .collect(),
        }
    }

    #[test]
    fn cyclictest_layout() {
        let cell = TimersCell {
            mechanism: "clock-nanosleep-abs".into(),
            period_ns: 1_000_000,
            load: 0,
            timer_slack_ns: 50_000,
            requested_timer_slack_ns: None,
            complete: true,
            merged: TickStats::default(),
            cpu_pct: 0.0,
            voluntary_csw: 0,
            involuntary_csw: 0,
            threads: vec![
                // 1.2 µs, 1.9 µs, 3 µs, 5 µs (overflow at max 5), 7.5 µs (overflow)
                thread(0, &[1_200, 1_900, 3_000, 5_000, 7_500]),
                thread(1, &[0, 999, 4_999]),
            ],
            explanation: None,
        };
        let data = TimersData {
            config: TimersConfig {
                mechanisms: vec!["clock-nanosleep-abs".into()],
                periods_ns: vec![1_000_000],
                duration_ns: 1_000_000_000,
                threads: 2,
                loads: vec![0],
                timer_slacks_ns: vec![],
                json_samples: 0,
                trace: false,
            },
            cells: vec![cell],
            skipped: vec![],
            tracing: None,
        };
        let text = histogram_text(&data, 5);
        let lines: Vec<&str> = text.lines().collect();
        let start = lines.iter().position(|l| *l == "# Histogram").unwrap();
        assert!(lines[..start].iter().all(|l| l.starts_with('#')));
        assert!(lines[1].contains(
            "column 1: clock-nanosleep-abs period 1.000 ms load 0 slack 50.00 µs thread 0"
        ));
        let rows = &lines[start + 1..start + 6];
        assert_eq!(
            rows,
            &[
                "000000 000000\t000002",
                "000001 000002\t000000",
                "000002 000000\t000000",
                "000003 000001\t000000",
                "000004 000000\t000001",
            ]
        );
        let rest = &lines[start + 6..];
        assert_eq!(rest[0], "# Total: 000000003 000000003");
        assert_eq!(rest[1], "# Min Latencies: 00001 00000");
        // Means 3.72 µs and 1.999 µs, truncated as cyclictest does.
        assert_eq!(rest[2], "# Avg Latencies: 00003 00001");
        assert_eq!(rest[3], "# Max Latencies: 00007 00004");
        assert_eq!(rest[4], "# Histogram Overflows: 00002 00000");
        assert_eq!(rest[5], "# Histogram Overflow at cycle number:");
        assert_eq!(rest[6], "# Thread 0: 00003 00004");
        assert_eq!(rest[7], "# Thread 1:");
        assert_eq!(rest.len(), 8, "no early line without early ticks");
        // Every data row parses as numbers, as cyclictest plotting scripts expect.
        for row in rows {
            assert!(row.split_whitespace().all(|f| f.parse::<u64>().is_ok()));
        }
    }
}
