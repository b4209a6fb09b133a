//! The sweep through the real binary: its JSON validates against the committed schema
//! and round-trips, its CSV loads with pandas into the documented columns (bad input:
//! `bad_input.rs`; Ctrl-C: `interrupt_cli.rs`).

mod common;
use common::*;

use std::path::{Path, PathBuf};

fn tiny_sweep(dir: &Path) -> (PathBuf, PathBuf) {
    let json = dir.join("sweep.json");
    let csv = dir.join("sweep.csv");
    run_saving(
        [
            "sweep",
            "-q",
            "--mechanisms",
            "clock-nanosleep,yield,timerfd",
            "--durations",
            "0,10us",
            "--iterations",
            "6",
            "--rounds",
            "2",
            "--warmup",
            "2",
            "--load",
            "0,1",
            "--timer-slack",
            "50us,1ns",
        ],
        &json,
        &csv,
    );
    (json, csv)
}

#[test]
fn json_matches_schema_and_round_trips_and_csv_loads_with_pandas() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = tiny_sweep(dir.path());

    // The committed schema is the one this build generates.
    let committed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("spec/result.schema.json")).unwrap(),
    )
    .unwrap();
    assert!(
        committed == sleeplab_cli::model::result_schema(),
        "spec/result.schema.json is stale: run `cargo run -- schema --output spec/result.schema.json`"
    );

    // The result validates against it and round-trips through the model.
    let result = common::load_checked_result(&json);
    assert!(result.complete);
    let sleeplab_cli::model::ExperimentData::Sweep(data) = &result.data else {
        panic!("not a sweep");
    };
    // clock-nanosleep {0, 10us} + yield {0} + timerfd {10us} = 4 cells × 2 loads × 2 slacks.
    assert_eq!(data.cells.len(), 16);
    assert!(data.cells.iter().all(|c| c.summary.count == 6));
    assert!(
        data.cells
            .iter()
            .any(|c| c.timer_slack_ns == 1 && c.mechanism == "clock-nanosleep")
    );

    // The CSV loads with pandas into the documented columns: 16 cells × (2 warm-up + 6).
    let script = format!(
        r#"
import pandas as pd
df = pd.read_csv({path:?})
cols = {cols:?}
assert list(df.columns) == cols, list(df.columns)
assert len(df) == 16 * 8, len(df)
assert df["warmup"].dtype == bool
assert (df[~df.warmup].groupby(["mechanism","requested_ns","load","timer_slack_ns"]).size() == 6).all()
assert (df.elapsed_ns - df.requested_ns == df.overshoot_ns).all()
assert set(df["round"].unique()) == {{-1, 0, 1}}
print("ok")
"#,
        path = csv.display().to_string(),
        cols = sleeplab_cli::experiments::sweep::CSV_COLUMNS.to_vec(),
    );
    common::assert_python_check(&script);
}

#[test]
fn list_shows_every_mechanism() {
    let assert = sleeplab().arg("list").assert().success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    for m in sleeplab::wait::mechanisms() {
        assert!(stdout.contains(m.name), "{} missing from list", m.name);
    }
    for m in sleeplab_cli::experiments::timers::mechanisms::names() {
        assert!(stdout.contains(m), "{m} missing from list");
    }
    // Each row says whether it runs here: the io_uring, futex_waitv and async rows too.
    for name in [
        "io-uring-timeout-abs",
        "futex-waitv",
        "tokio-sleep-mt",
        "tokio-interval-delay",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap();
        assert!(line.contains(" yes ") || line.contains(" no: "), "{line}");
    }
    assert!(stdout.contains("timer slack"));
}
