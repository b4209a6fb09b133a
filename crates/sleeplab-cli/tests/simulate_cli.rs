//! `sleeplab simulate` through the real binary: a golden file pins one small grid
//! (same seed, same numbers, on every machine), the JSON validates against the committed
//! schema and round-trips, the CSV has one row per cell, and replay works on a freshly
//! measured sweep (bad input: `bad_input.rs`; Ctrl-C: `interrupt_cli.rs`).
//!
//! The golden files are `tests/golden/simulate_small.json` (the result's `data` part:
//! no timestamps, no machine fingerprint) and `tests/golden/simulate_small.txt` (the
//! terminal output). After an intended change to a strategy, a model or the rendering,
//! regenerate both with
//!
//! ```sh
//! UPDATE_GOLDEN=1 cargo test -p sleeplab-cli --test simulate_cli
//! ```
//!
//! and review the diff: every changed number is a changed prediction.

mod common;
use common::*;

use std::path::{Path, PathBuf};

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// The pinned grid: every default strategy, two intervals, two periods.
const SMALL: [&str; 14] = [
    "simulate",
    "-q",
    "--intervals",
    "2ms,20ms",
    "--periods",
    "1ms,7ms",
    "--sleeps",
    "40",
    "--warmup",
    "10",
    "--seed",
    "7",
    "--strategies",
    "std-sleep,fixed-margin,sdl-precise,seed-hybrid,precise",
];

fn run_small(dir: &Path) -> (String, serde_json::Value, PathBuf) {
    let json = dir.join("sim.json");
    let csv = dir.join("sim.csv");
    let text = run_saving(SMALL, &json, &csv);
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (text, value, csv)
}

#[test]
fn golden_small_grid_is_reproduced_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let (text, value, _) = run_small(dir.path());
    assert_eq!(value["experiment"], "simulate");
    let data = &value["data"];
    let (gj, gt) = (golden("simulate_small.json"), golden("simulate_small.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&gj, serde_json::to_string_pretty(data).unwrap() + "\n").unwrap();
        std::fs::write(&gt, &text).unwrap();
    }
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&gj).expect("golden JSON (UPDATE_GOLDEN=1 creates it)"),
    )
    .unwrap();
    assert!(
        *data == want,
        "simulate data differs from {} (UPDATE_GOLDEN=1 to accept an intended change)",
        gj.display()
    );
    let want_text = std::fs::read_to_string(&gt).unwrap();
    assert_eq!(
        text,
        want_text,
        "terminal output differs from {}",
        gt.display()
    );
}

#[test]
fn json_validates_round_trips_and_csv_has_a_row_per_cell() {
    let dir = tempfile::tempdir().unwrap();
    let (text, instance, csv) = run_small(dir.path());
    common::assert_matches_schema(&instance, "result");

    let result = sleeplab_cli::model::load_result(&dir.path().join("sim.json")).unwrap();
    assert!(result.complete);
    assert_eq!(serde_json::to_value(&result).unwrap(), instance);
    assert!(
        result.notes.iter().any(|n| n.contains("spin-sleep")),
        "says spin-sleep is not simulated"
    );
    let sleeplab_cli::model::ExperimentData::Simulate(data) = &result.data else {
        panic!("not a simulation");
    };
    // 5 strategies × 2 intervals × 2 periods, in config order, never early.
    assert_eq!(data.cells.len(), 20);
    // --sleeps counts the measured sleeps only: 40, after the 10 warm-up ones.
    assert!(data.cells.iter().all(|c| c.sleeps == 40), "warm-up counted");
    assert_eq!((data.config.sleeps, data.config.warmup), (40, 10));
    let help = stdout_of(sleeplab().args(["simulate", "--help"]));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("not counting the --warmup sleeps"), "{help}");
    let order: Vec<(String, u64, usize)> = data
        .cells
        .iter()
        .map(|c| (c.strategy.clone(), c.requested_ns, c.model))
        .collect();
    assert_eq!(order[0], ("std-sleep".into(), 2_000_000, 0));
    assert_eq!(order[1], ("std-sleep".into(), 2_000_000, 1));
    assert_eq!(order[2], ("std-sleep".into(), 20_000_000, 0));
    assert_eq!(order[19], ("precise".into(), 20_000_000, 1));
    for c in &data.cells {
        assert_eq!(c.early, 0, "{c:?}");
        assert_eq!(c.sleeps, 40);
        assert!(c.p50_rel_error <= c.max_rel_error);
        // The quantile rule, as every experiment applies it: 40 sleeps resolve no p99,
        // in the JSON, the CSV and the terminal alike.
        assert_eq!((c.p99_rel_error, c.p99_lateness_ns), (None, None), "{c:?}");
        assert_eq!((c.p99_rel_error_ci, c.p99_lateness_ci_ns), (None, None));
        // The median's interval holds it (40 sleeps bound a median at 95 %).
        let ci = c.p50_rel_error_ci.expect("40 sleeps bound their median");
        assert!(ci.low().unwrap() <= c.p50_rel_error && c.p50_rel_error <= ci.high().unwrap());
        assert!((0.0..=100.0 + 1e-9).contains(&c.cpu_percent), "{c:?}");
        // Relative error and lateness agree.
        let req = c.requested_ns as f64;
        assert!((c.mean_rel_error * req - c.mean_lateness_ns).abs() < 1e-6 * req);
    }
    // The plain sleep never spins; the heat tables name every strategy.
    let std = data.cell("std-sleep", 20_000_000, 1).unwrap();
    assert!(std.cpu_percent < 0.1, "{std:?}");
    for s in [
        "std-sleep",
        "fixed-margin",
        "sdl-precise",
        "seed-hybrid",
        "precise",
    ] {
        assert!(text.contains(&format!("{s}: mean relative error")), "{s}");
    }

    let mut rdr = csv::Reader::from_path(&csv).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, sleeplab_cli::experiments::simulate::CSV_COLUMNS);
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 20);
    assert_eq!(&rows[0][0], "std-sleep");
    assert_eq!(&rows[0][3], "scheduler");
    assert_eq!(&rows[0][4], "1000000");
    // The p99 columns are empty: 40 sleeps resolve no p99.
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for name in ["p99_rel_error", "p99_lateness_ns"] {
        assert!(rows.iter().all(|r| r[col(name)].is_empty()), "{name}");
    }
    assert!(rows.iter().all(|r| !r[col("p50_rel_error")].is_empty()));
    // And the terminal's p99 heat table says why.
    assert!(text.contains("std-sleep: p99 relative error"));
    assert!(text.contains("– (n = 40)"), "{text}");
}

#[test]
fn the_seed_decides_the_numbers() {
    let run = |seed: &str| {
        let out = sleeplab()
            .args([
                "simulate",
                "-q",
                "--intervals",
                "5ms",
                "--periods",
                "3ms",
                "--sleeps",
                "30",
                "--warmup",
                "0",
                "--strategies",
                "std-sleep,precise",
                "--seed",
                seed,
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    assert_eq!(run("3"), run("3"));
    assert_ne!(run("3"), run("4"));
}

#[test]
fn replays_a_sweep_measured_on_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    sleeplab()
        .args([
            "sweep",
            "-q",
            "--mechanisms",
            "clock-nanosleep-abs",
            "--durations",
            "0,20us,200us",
            "--iterations",
            "20",
            "--rounds",
            "1",
            "--warmup",
            "0",
        ])
        .arg("--json")
        .arg(&sweep)
        .assert()
        .success();
    let json = dir.path().join("sim.json");
    let text = stdout_of(
        sleeplab()
            .args("simulate -q --intervals 100us,1ms --sleeps 50 --warmup 5 --strategies std-sleep,fixed-margin,precise --replay".split_whitespace())
            .arg(&sweep)
            .arg("--json")
            .arg(&json),
    );
    assert!(text.contains("replay of"), "{text}");
    let result = sleeplab_cli::model::load_result(&json).unwrap();
    let sleeplab_cli::model::ExperimentData::Simulate(data) = &result.data else {
        panic!("not a simulation");
    };
    assert_eq!(data.config.models.len(), 1);
    let sleeplab_cli::experiments::simulate::ModelSpec::Replay(src) = &data.config.models[0] else {
        panic!("not a replay");
    };
    assert_eq!(src.mechanism, "clock-nanosleep-abs");
    assert_eq!(
        src.anchors
            .iter()
            .map(|a| a.requested_ns)
            .collect::<Vec<_>>(),
        vec![0, 20_000, 200_000]
    );
    assert!(
        src.anchors
            .iter()
            .all(|a| a.samples == 20 && a.from == "samples")
    );
    // 20 oversleeps per anchor resolve a median but no p99 (the quantile rule).
    assert!(
        src.anchors
            .iter()
            .all(|a| a.p99_oversleep_ns.is_none() && a.p99_oversleep_ci_ns.is_none()),
        "{:?}",
        src.anchors
    );
    assert_eq!(data.cells.len(), 6);
    assert!(data.cells.iter().all(|c| c.early == 0));
    // A real oversleep is never zero: the plain sleep is late every time.
    let std = data.cell("std-sleep", 1_000_000, 0).unwrap();
    assert!(std.p50_rel_error > 0.0);

    // A mechanism the file does not have, and a file that is not a sweep: exit 2.
    let bad = sleeplab()
        .args(["simulate", "-q", "--replay-mechanism", "poll", "--replay"])
        .arg(&sweep)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let msg = String::from_utf8(bad).unwrap();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(
        msg.contains("poll") && msg.contains("clock-nanosleep-abs"),
        "{msg}"
    );
    let bad = sleeplab()
        .args(["simulate", "-q", "--replay"])
        .arg(&json)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8(bad).unwrap().contains("holds no sweep"));
}
