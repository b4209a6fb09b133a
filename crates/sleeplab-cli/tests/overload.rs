//! Overload: every experiment that takes `--load` (sweep, timers, runtimes) run with 4×
//! as many busy threads as this machine has cores, with small settings. Each must finish
//! (a watchdog kills it after a generous limit: a hang fails the test), exit 0, and
//! report every cell at that load, complete, with the counts it was asked for. No
//! latency bound is asserted: under this load anything may be late.
//!
//! The three runs take turns (one lock), so each sees exactly 4× cores of load.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest any one overloaded run may take before it counts as hung.
const WATCHDOG: Duration = Duration::from_secs(90);

static TURN: Mutex<()> = Mutex::new(());

fn load_level() -> usize {
    4 * std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Runs sleeplab with `args` under the watchdog; returns the loaded JSON result.
fn run(args: &[String], json: &Path) -> Value {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sleeplab"))
        .args(args)
        .arg("--json")
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = common::exit_within(&mut child, t0, WATCHDOG)
        .unwrap_or_else(|| panic!("{args:?} hung: still running after {WATCHDOG:?} (killed)"));
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "{args:?}: {status}\n{err}");
    eprintln!(
        "{} under load {}: {:.1} s",
        args[0],
        load_level(),
        t0.elapsed().as_secs_f64()
    );
    let result = sleeplab_cli::model::load_result(json).unwrap();
    assert!(result.complete, "{args:?}: incomplete");
    serde_json::to_value(&result).unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn sweep_completes_under_overload() {
    let dir = tempfile::tempdir().unwrap();
    let load = load_level().to_string();
    let v = run(
        &args(&[
            "sweep",
            "-q",
            "--mechanisms",
            "nanosleep,timerfd,yield,spin,precise",
            "--durations",
            "0,100us",
            "--iterations",
            "20",
            "--rounds",
            "2",
            "--warmup",
            "1",
            "--load",
            &format!("0,{load}"),
        ]),
        &dir.path().join("sweep.json"),
    );
    let cells = v["data"]["cells"].as_array().unwrap();
    // nanosleep, spin, precise: 2 durations; timerfd: 100 µs only; yield: 0 only.
    assert_eq!(cells.len(), 8 * 2, "cells: {}", cells.len());
    for c in cells {
        assert_eq!(c["summary"]["count"], 20, "{c:?}");
        assert_eq!(
            c["summary"]["early_count"], 0,
            "early under load: {}",
            c["mechanism"]
        );
    }
    let loaded = cells
        .iter()
        .filter(|c| c["load"].as_u64() == Some(load_level() as u64));
    assert_eq!(loaded.count(), 8);
}

#[test]
fn timers_complete_under_overload() {
    let dir = tempfile::tempdir().unwrap();
    let load = load_level().to_string();
    let v = run(
        &args(&[
            "timers",
            "-q",
            "--mechanisms",
            "timerfd-interval,clock-nanosleep-abs,posix-timer-thread,busy-wait,ticker",
            "--periods",
            "1ms",
            "--seconds",
            "0.2",
            "--load",
            &load,
        ]),
        &dir.path().join("timers.json"),
    );
    let cells = v["data"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 5);
    for c in cells {
        assert_eq!(c["load"].as_u64(), Some(load_level() as u64));
        assert_eq!(c["complete"], true, "{}", c["mechanism"]);
    }
}

#[test]
fn runtimes_complete_under_overload() {
    let dir = tempfile::tempdir().unwrap();
    let load = load_level().to_string();
    let v = run(
        &args(&[
            "runtimes",
            "-q",
            "--runtimes",
            "c,python",
            "--durations",
            "1ms",
            "--count",
            "10",
            "--warmup",
            "1",
            "--period",
            "1ms",
            "--ticks",
            "10",
            "--load",
            &load,
        ]),
        &dir.path().join("runtimes.json"),
    );
    let mut measured = 0;
    let runtimes = v["data"]["runtimes"].as_array().unwrap();
    assert_eq!(runtimes.len(), 2, "c and python, measured or skipped");
    for r in runtimes {
        if r["status"] != "measured" {
            // Not installed here: reported as skipped, which is not a hang (but under CI,
            // where scripts/install-deps.sh installs both, it fails).
            eprintln!("{}: {}", r["id"], r["status"]);
            if std::env::var_os("CI").is_some() {
                panic!("{} not measured under CI: {}", r["id"], r["status"]);
            }
            continue;
        }
        for m in r["methods"].as_array().unwrap() {
            assert_eq!(
                m["status"], "measured",
                "{} {}: {}",
                r["id"], m["method"], m["status"]
            );
            assert_eq!(m["load"].as_u64(), Some(load_level() as u64));
            measured += 1;
        }
    }
    eprintln!("runtimes under load: {measured} methods measured");
    // C's probe needs only a C compiler, which the build itself needs: something was
    // measured, or the test checked nothing.
    assert!(measured > 0, "no runtime measured under overload: {v}");
}
