//! `sleeplab pace --load` through the binary: the per-frame evidence of why frames were
//! late adds up, lands in the JSON (valid against the committed schema), the terminal
//! and the HTML report. A short fast loop; no test asserts a latency.

mod common;

use sleeplab_cli::experiments::pace::PaceData;
use sleeplab_cli::experiments::pace::evidence::{LATE_FRAME_NS, LATE_FRAMES_KEPT};
use sleeplab_cli::model::ExperimentData;

const FRAMES: u64 = 120;

#[test]
fn evidence_counts_add_up_in_every_result() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pace.json");
    let stdout = common::stdout_of(
        common::sleeplab()
            .args([
                "-q", "pace", "--rate", "500", "--block", "40", "--load", "0,1",
            ])
            .args(["--frames", &FRAMES.to_string()])
            .args([
                "--strategies",
                "std-sleep,spin,precise,precise:contention=ignore",
            ])
            .arg("--json")
            .arg(&json),
    );
    for needle in [
        "Why frames were late",
        "preempted spinning",
        "woken late",
        "Load 1:",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    let result = common::load_checked_result(&json);
    let ExperimentData::Pace(data) = &result.data else {
        panic!("a pace result");
    };
    let data: &PaceData = data;
    assert_eq!(data.results.len(), 8, "4 contenders × 2 levels");
    for r in &data.results {
        let e = &r.evidence;
        let who = r.label();
        assert_eq!(e.frames, r.error.count, "{who}");
        assert_eq!(e.frames, FRAMES, "{who}");
        assert_eq!(e.late_threshold_ns, LATE_FRAME_NS);
        assert_eq!(
            e.late_started_late
                + e.late_preempted_while_spinning
                + e.late_woken_late
                + e.late_other,
            e.late_frames,
            "{who}: causes add up"
        );
        assert!(e.late_involuntary_switched <= e.late_frames, "{who}");
        assert!(e.late_runqueue_wait.unwrap_or(0) <= e.late_frames, "{who}");
        assert!(e.preempted_while_spinning <= e.frames && e.woken_late <= e.frames);
        assert!(e.late_preempted_while_spinning <= e.preempted_while_spinning);
        assert_eq!(
            e.worst.len() as u64,
            e.late_frames.min(LATE_FRAMES_KEPT as u64),
            "{who}"
        );
        assert!(e.worst.windows(2).all(|w| w[0].frame < w[1].frame), "{who}");
        for f in &e.worst {
            assert!(f.lateness_ns > LATE_FRAME_NS && f.frame < FRAMES, "{who}");
            assert!(f.lateness_ns <= r.error.max_ns, "{who}");
        }
        match r.strategy.as_str() {
            // A plain sleep has no spin phase; a pure spin has no native phase.
            "std-sleep" => assert_eq!((e.preempted_while_spinning, e.max_spin_gap_ns), (0, 0)),
            "spin" => assert_eq!(e.woken_late, 0),
            _ => {}
        }
    }
    // The HTML report shows the frontier of each level and the evidence table.
    let html = common::page(
        &[std::ffi::OsStr::new("report"), json.as_os_str()],
        &dir.path().join("report"),
    );
    for needle in [
        "data-chart=\"pace-frontier-load-0\"",
        "data-chart=\"pace-frontier-load-1\"",
        "Why frames were late",
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
}

/// One duration grammar on the command line: `1μs` (U+03BC) is read alike by
/// a flag and by a strategy setting, and the setting's canonical name writes it `1us`.
/// (`0.5ns` is refused in both places: `tests/bad_input.rs`.)
#[test]
fn a_greek_mu_reads_alike_in_flags_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    common::sleeplab()
        .args(["-q", "sweep", "--mechanisms", "clock-nanosleep-abs"])
        .args(["--durations", "0,1μs", "--iterations", "5", "--rounds", "1"])
        .args(["--warmup", "0", "--json"])
        .arg(&sweep)
        .assert()
        .success();
    let result = common::load_checked_result(&sweep);
    let ExperimentData::Sweep(data) = &result.data else {
        panic!("a sweep result");
    };
    let requested: Vec<u64> = data.cells.iter().map(|c| c.requested_ns).collect();
    assert_eq!(requested, [0, 1_000]);

    let pace = dir.path().join("pace.json");
    common::sleeplab()
        .args([
            "-q", "pace", "--rate", "500", "--frames", "5", "--block", "5",
        ])
        .args(["--strategies", "precise:tol=1μs,spin-sleep:1μs", "--json"])
        .arg(&pace)
        .assert()
        .success();
    let result = common::load_checked_result(&pace);
    let ExperimentData::Pace(data) = &result.data else {
        panic!("a pace result");
    };
    let names: Vec<&str> = data.results.iter().map(|r| r.strategy.as_str()).collect();
    assert_eq!(names, ["precise:tol=1us", "spin-sleep:1us"]);
}
