//! The host noise of the moment, through the real binary: every experiment's result
//! carries one probe before and one after its run, once, in the envelope (a survey in
//! its own envelope, none in its stages); pace and advise print the line beside their
//! verdicts, and `compare` prints each result's.

mod common;

use common::{load_checked_result, sleeplab};
use std::path::Path;

/// A cheap run of every experiment kind that saves a result.
const RUNS: [&[&str]; 9] = [
    &[
        "sweep",
        "--mechanisms",
        "nanosleep",
        "--durations",
        "100us",
        "--iterations",
        "20",
        "--rounds",
        "1",
        "--load",
        "0",
    ],
    &[
        "pace",
        "--strategies",
        "std-sleep,precise",
        "--rate",
        "1000",
        "--frames",
        "40",
        "--block",
        "10",
    ],
    &[
        "cpu",
        "--strategies",
        "std-sleep",
        "--intervals",
        "1ms",
        "--seconds",
        "0.05",
    ],
    &[
        "advise",
        "--period",
        "1ms",
        "--tolerance",
        "100us",
        "--seconds",
        "0.1",
    ],
    &[
        "short",
        "--mechanisms",
        "nanosleep",
        "--batch",
        "10",
        "--repetitions",
        "2",
    ],
    &[
        "timers",
        "--mechanisms",
        "ticker",
        "--periods",
        "1ms",
        "--seconds",
        "0.05",
    ],
    &[
        "simulate",
        "--strategies",
        "precise",
        "--sleeps",
        "20",
        "--warmup",
        "2",
    ],
    &[
        "explain",
        "--no-trace",
        "--mechanisms",
        "nanosleep@100us",
        "--iterations",
        "10",
        "--rounds",
        "1",
        "--load",
        "0",
    ],
    &[
        "runtimes",
        "--runtimes",
        "c",
        "--durations",
        "1ms",
        "--count",
        "5",
    ],
];

fn run(args: &[&str], json: &Path) -> (bool, String) {
    let out = sleeplab()
        .args(args)
        .arg("-q")
        .arg("--json")
        .arg(json)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_experiments_result_carries_the_probe_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut saved = Vec::new();
    for args in RUNS {
        let json = dir.path().join(format!("{}.json", args[0]));
        let (ok, stdout) = run(args, &json);
        if !ok && args[0] == "runtimes" && common::which("cc").is_none() {
            // The C probe needs a compiler (under CI its absence fails).
            common::missing_dependency("a C compiler (cc) for the runtimes probe");
            continue;
        }
        assert!(ok, "{args:?}");
        let r = load_checked_result(&json);
        let h = r
            .host_noise
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no host_noise", args[0]));
        assert!(
            !h.before.is_empty() && h.before.len() == h.after.len(),
            "{}",
            args[0]
        );
        assert!(
            h.before.iter().all(|c| c.wall_ns >= h.probe_ns / 2),
            "{}",
            args[0]
        );
        let line = stdout.contains("host noise before/after: ");
        assert_eq!(
            line,
            matches!(args[0], "pace" | "advise"),
            "{}: {stdout}",
            args[0]
        );
        saved.push(json);
    }
    // compare prints each result's line (two runs of the same sweep).
    let again = dir.path().join("sweep-again.json");
    assert!(run(RUNS[0], &again).0);
    let out = sleeplab()
        .arg("compare")
        .arg(&saved[0])
        .arg(&again)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.matches("host noise before/after: ").count(),
        2,
        "{text}"
    );
}

/// Pinned, the run probes the one CPU it measures on.
#[test]
fn a_pinned_run_probes_its_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("short.json");
    let pinned: Vec<&str> = RUNS[4].iter().copied().chain(["--pin", "0"]).collect();
    let (ok, _) = run(&pinned, &json);
    assert!(ok);
    let h = load_checked_result(&json).host_noise.unwrap();
    assert_eq!(h.cpus(), vec![0]);
}
