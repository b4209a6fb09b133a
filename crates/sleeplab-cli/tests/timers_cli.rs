//! `sleeplab timers` through the real binary: counts add up in the JSON, which validates
//! against the result schema and round-trips; the CSV loads with pandas; the histogram
//! file has cyclictest's layout and its totals match the tick counts; `--trace` on a run
//! that traced no cell says nothing was recorded (bad input: `bad_input.rs`).

mod common;
use common::*;

use std::path::Path;

#[test]
fn json_csv_and_histogram_agree() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timers.json");
    let csv = dir.path().join("timers.csv");
    let hist = dir.path().join("timers.hist");
    let assert = sleeplab()
        .args([
            "timers",
            "-q",
            "--mechanisms",
            "timerfd-interval,clock-nanosleep-abs",
            "--periods",
            "2ms,1ms",
            "--seconds",
            "40ms",
            "--threads",
            "2",
            "--histogram-max",
            "500",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .arg("--histogram")
        .arg(&hist)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(stdout.contains("Period: 2.000 ms"), "{stdout}");
    assert!(stdout.contains("avg error"), "{stdout}");
    assert!(stdout.contains("thread 1"), "{stdout}");

    // The JSON validates against the schema this build generates and round-trips.
    let result = common::load_checked_result(&json);
    assert!(result.complete);
    let sleeplab_cli::model::ExperimentData::Timers(data) = &result.data else {
        panic!("not a timers result");
    };
    assert_eq!(data.cells.len(), 4);
    let mut per_thread_expected = Vec::new();
    for c in &data.cells {
        let ticks = 40_000_000 / c.period_ns;
        assert_eq!(c.merged.expected, 2 * ticks, "{}", c.mechanism);
        assert_eq!(c.merged.received + c.merged.missed, c.merged.expected);
        assert_eq!(c.merged.early_wakes, 0, "{} woke early", c.mechanism);
        assert!(c.merged.min_lateness_ns >= 0);
        assert_eq!(c.threads.len(), 2);
        for t in &c.threads {
            assert_eq!(t.stats.expected, ticks);
            assert_eq!(t.lateness_ns.len() as u64, ticks);
            per_thread_expected.push(ticks);
        }
    }

    // The CSV has one row per scheduled tick and thread.
    let total: u64 = per_thread_expected.iter().sum();
    let script = format!(
        r#"
import pandas as pd
df = pd.read_csv({path:?})
assert list(df.columns) == {cols:?}, list(df.columns)
assert len(df) == {total}, len(df)
assert df["missed"].dtype == bool
assert (df.lateness_ns >= 0).all()
g = df.groupby(["mechanism", "period_ns", "thread"]).tick
assert (g.max() == 40_000_000 // g.max().index.get_level_values("period_ns")).all()
print("ok")
"#,
        path = csv.display().to_string(),
        cols = sleeplab_cli::experiments::timers::CSV_COLUMNS.to_vec(),
    );
    common::assert_python_check(&script);

    check_histogram(&hist, &per_thread_expected);
}

/// cyclictest's layout: `# Histogram`, 500 rows of `bucket count…`, then the summary
/// comment lines; in-range totals plus overflows equal the ticks per column.
fn check_histogram(path: &Path, expected: &[u64]) {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| *l == "# Histogram").unwrap();
    let rows: Vec<&str> = lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .copied()
        .collect();
    assert_eq!(rows.len(), 500);
    let cols = expected.len();
    let mut sums = vec![0u64; cols];
    for (b, row) in rows.iter().enumerate() {
        let fields: Vec<u64> = row.split_whitespace().map(|f| f.parse().unwrap()).collect();
        assert_eq!(fields.len(), cols + 1, "{row}");
        assert_eq!(fields[0], b as u64);
        for (s, v) in sums.iter_mut().zip(&fields[1..]) {
            *s += v;
        }
    }
    let numbers = |prefix: &str| -> Vec<u64> {
        let line = lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line"));
        line[prefix.len()..]
            .split_whitespace()
            .map(|f| f.parse().unwrap())
            .collect()
    };
    assert_eq!(numbers("# Total:"), sums);
    let overflows = numbers("# Histogram Overflows:");
    assert_eq!(numbers("# Min Latencies:").len(), cols);
    assert_eq!(numbers("# Avg Latencies:").len(), cols);
    assert_eq!(numbers("# Max Latencies:").len(), cols);
    for i in 0..cols {
        assert_eq!(sums[i] + overflows[i], expected[i], "column {i}");
    }
    assert!(text.contains("# Histogram Overflow at cycle number:"));
    assert!(text.contains(&format!("# Thread {}:", cols - 1)));
}

#[test]
fn help_names_the_knobs_and_the_total() {
    let assert = sleeplab().args(["timers", "--help"]).assert().success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    for needle in [
        "--seconds",
        "--mechanisms",
        "--periods",
        "--threads",
        "--histogram",
        "91 s",
        "clock-nanosleep-abs",
    ] {
        assert!(out.contains(needle), "help lacks {needle}: {out}");
    }
}

/// `--trace` on a run that traced no cell (setitimer skipped at a period of no whole
/// microseconds; posix-timer-thread's wakes come on its callback threads, which the
/// tracer does not follow): the result says nothing was recorded, never a kernel trace,
/// and the screen claims no account. Root or not: no tracer is ever started.
#[test]
fn a_traced_run_that_traced_no_cell_says_nothing_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("timers.json");
    let assert = sleeplab()
        .args([
            "timers",
            "-q",
            "--trace",
            "--mechanisms",
            "setitimer,posix-timer-thread",
            "--periods",
            "2000500ns",
            "--seconds",
            "20ms",
        ])
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let result = common::load_checked_result(&json);
    let sleeplab_cli::model::ExperimentData::Timers(data) = &result.data else {
        panic!("not a timers result");
    };
    assert_eq!(data.cells.len(), 1);
    assert!(data.cells[0].explanation.is_none());
    assert_eq!(data.skipped.len(), 1);
    assert_eq!(
        data.tracing,
        Some(sleeplab_account::Tracing::nothing_recorded())
    );
    let tracing = data.tracing.as_ref().unwrap();
    assert!(!tracing.kernel && tracing.lost_events == 0, "{tracing:?}");
    assert!(
        stdout.contains("Where the time went: no account (no kernel trace, no /proc account)"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("note: nothing was recorded: the run measured no cell that could be traced"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not traced: posix-timer-thread"),
        "{stdout}"
    );
    assert!(!stdout.contains("kernel's tracepoints"), "{stdout}");
    assert!(!stdout.contains("wakes traced"), "{stdout}");
}
