//! `sleeplab short` through the binary: outputs, counts, files (bad input:
//! `bad_input.rs`; Ctrl-C: `interrupt_cli.rs`). Tiny `--batch`/`--repetitions` keep it
//! fast; no test asserts a latency.

mod common;

use assert_cmd::cargo::cargo_bin_cmd;
use sleeplab_cli::experiments::short::{CSV_COLUMNS, FLOOR, SYSCALL, ShortData};
use sleeplab_cli::model::{ExperimentData, load_result};

fn short_data(path: &std::path::Path) -> (sleeplab_cli::model::ResultFile, ShortData) {
    let result = load_result(path).expect("the JSON loads as a result");
    let data = match &result.data {
        ExperimentData::Short(d) => d.clone(),
        other => panic!("expected a short result, got {}", other.name()),
    };
    (result, data)
}

/// Runs `sleeplab short -q ARGS --json JSON --csv CSV` (`args` split at spaces);
/// returns what it printed.
fn short(json: &std::path::Path, csv: &std::path::Path, args: &str) -> String {
    let args = ["short", "-q"].into_iter().chain(args.split_whitespace());
    common::run_saving(args, json, csv)
}

fn csv_rows(path: &std::path::Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r.records().map(Result::unwrap).collect();
    (header, rows)
}

/// Every cell, reference and CSV row is there: repetitions × cells batches.
#[test]
fn counts_add_up_in_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("short.json");
    let csv = dir.path().join("short.csv");
    let stdout = short(
        &json,
        &csv,
        "--mechanisms nanosleep,yield,timerfd,pselect,std-sleep --batch 4 --repetitions 3",
    );
    for needle in [
        "net mean ± 99.9 % CI",
        "nanosleep @ 0 ns",
        "nanosleep @ 1 ns",
        "timerfd @ 1 ns",
        "yield @ 0 ns",
        "floor (ground truth",
        "yardstick",
        "Student's t (df = 2",
        "seed 001's Linux findings",
        "timerfd @ 0 ns (timerfd cannot express 0 ns",
        "note: 3 repetitions",
    ] {
        // Prose wraps at the terminal's width: read with its line breaks as spaces.
        let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(needle), "missing {needle:?} in:\n{stdout}");
    }

    // The JSON validates against the result schema and round-trips through the model.
    common::load_checked_result(&json);
    let (result, data) = short_data(&json);
    assert!(result.complete);
    assert_eq!(result.data.name(), "short");
    // nanosleep 0, 1 ns; yield 0; timerfd 1 ns; pselect 0, 1 ns; std-sleep 0, 1 ns.
    assert_eq!(data.cells.len(), 8);
    assert_eq!(data.references.len(), 2);
    assert_eq!(data.skipped.len(), 2);
    assert_eq!(data.findings.len(), 4);
    for c in data.cells.iter().chain(&data.references) {
        assert_eq!(c.batches.len(), 3, "{} @ {}", c.mechanism, c.requested_ns);
        assert_eq!(c.net.n, 3);
        assert!(c.net.ci_half_width_ns.is_some());
        assert!(c.batch >= 1 && c.batch <= 4);
        for b in &c.batches {
            assert_eq!(b.calls, c.batch);
            // A batch of waits is never shorter than its requests.
            assert!(b.elapsed_ns >= b.calls * c.requested_ns);
        }
    }
    assert!(data.reference(FLOOR, data.slacks()[0]).is_some());
    assert!(data.reference(SYSCALL, data.slacks()[0]).is_some());

    let (header, rows) = csv_rows(&csv);
    assert_eq!(header, CSV_COLUMNS);
    assert_eq!(rows.len(), 3 * (8 + 2));
    for row in &rows {
        let batch: f64 = row[4].parse().unwrap();
        let elapsed: f64 = row[5].parse().unwrap();
        let per_call: f64 = row[6].parse().unwrap();
        assert!((per_call - elapsed / batch).abs() < 1e-6 * per_call.max(1.0));
    }
}

/// Every timer slack gets its own cells, references and findings, and the side-by-side
/// table.
#[test]
fn timer_slack_is_an_axis() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let csv = dir.path().join("s.csv");
    let stdout = short(
        &json,
        &csv,
        "--mechanisms clock-nanosleep,timerfd-reuse --batch 3 --repetitions 2 --timer-slack 50us,1ns",
    );
    assert!(stdout.contains("timer slack 50.00 µs"), "{stdout}");
    assert!(stdout.contains("timer slack 1 ns"), "{stdout}");
    assert!(stdout.contains("timer slack side by side"), "{stdout}");
    let (_, data) = short_data(&json);
    assert_eq!(data.slacks(), vec![50_000, 1]);
    // clock-nanosleep 0, 1 ns; timerfd-reuse 1 ns → 3 cells per slack.
    assert_eq!(data.cells.len(), 6);
    assert_eq!(data.references.len(), 4);
    assert_eq!(data.findings.len(), 4 * 2);
    let (_, rows) = csv_rows(&csv);
    assert_eq!(rows.len(), 2 * 2 * (3 + 2));
    let slack_1ns = rows.iter().filter(|r| &r[2] == "1").count();
    assert_eq!(slack_1ns, 2 * (3 + 2));
}

/// The default mechanism set runs end to end (tiny batches).
#[test]
fn every_default_mechanism_runs() {
    let out = cargo_bin_cmd!("sleeplab")
        .args(["short", "-q", "--batch", "2", "--repetitions", "2"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "poll @ 1.000 ms",
        "select @ 1.000 µs",
        "spin @ 0 ns",
        "1. ",
        "4. ",
    ] {
        // Prose wraps at the terminal's width: read with its line breaks as spaces.
        let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}

/// `--help` explains the method and the batch length choice.
#[test]
fn help_explains_the_batch_choice() {
    let out = cargo_bin_cmd!("sleeplab")
        .args(["short", "--help"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "--batch-time",
        "3000",
        "Student's t",
        "--timer-slack",
        "--pin",
    ] {
        // Prose wraps at the terminal's width: read with its line breaks as spaces.
        let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
}
