//! `sleeplab explain -- CMD` and `--pid PID` through the real binary: a command's
//! sleeps are found and ended by their timer, the JSON and the CSV hold every wait, a
//! thread the program starts later is followed too, a process that exits midway keeps
//! what was recorded; run as `nobody` it says what /proc tells instead and exits 0; bad
//! targets get exit 2 and one line.
//!
//! Where tracing is unavailable (not root) the traced tests say so and pass, unless `CI`
//! is set: there they fail, since CI runs as root.

mod common;
use common::exit2::assert_exit_2;
use common::tracing::{AS_NOBODY, nobodys_dir, traceable_alone};

use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

fn sleeplab(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn json(path: impl AsRef<std::path::Path>) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `sleeplab explain -q ARGS -- taskset -c 0 python3` sleeping 2 ms `n` times (on the
/// CPU whose idle task the kernel records), asserted to succeed.
fn explain_sleeps(args: &[&str], n: usize) -> Output {
    let out = Command::new(bin())
        .args(["explain", "-q"])
        .args(args)
        .args(["--", "taskset", "-c", "0", "python3", "-c"])
        .arg(format!(
            "import time\nfor _ in range({n}): time.sleep(0.002)"
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    out
}

/// `sleeplab explain --from SAVED ARGS`, asserted to succeed.
fn read_back(saved: &str, args: &[&str]) -> Output {
    let out = sleeplab(&[&["explain", "--from", saved], args].concat());
    assert!(out.status.success(), "{out:?}");
    out
}

/// Asserts that the files `a` and `b` hold the same bytes.
fn same_bytes(a: &str, b: &str) {
    assert_eq!(
        std::fs::read(a).unwrap(),
        std::fs::read(b).unwrap(),
        "{a} and {b}"
    );
}

/// The waits of `doc` whose call is `call` and whose thread is named `comm`.
fn waits<'a>(doc: &'a serde_json::Value, call: &str) -> Vec<&'a serde_json::Value> {
    doc["waits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["call"] == call)
        .collect()
}

/// A shell's `sleep` loop, started by explain: every sleep is found, ended by its
/// timer, never early, its lateness split whole; the JSON and the CSV agree.
#[test]
fn a_commands_sleeps_are_found_and_split() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (j, c) = (dir.path().join("w.json"), dir.path().join("w.csv"));
    let (js, cs) = (j.display().to_string(), c.display().to_string());
    let out = explain_sleeps(&["--json", &js, "--csv", &cs], 20);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("clock_nanosleep"), "{text}");
    assert!(text.contains("exited with status 0"), "{text}");
    let doc = json(&j);
    assert_eq!(doc["format"], "sleeplab program waits");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["syscalls_kept_by"], "filter");
    if std::env::var_os("CI").is_some() {
        // CI's kernels record them (the capture crate's tests require it there too).
        assert_eq!(doc["interrupts_recorded"], true);
    }
    let sleeps = waits(&doc, "clock_nanosleep");
    assert!(sleeps.len() >= 20, "{} sleeps: {doc}", sleeps.len());
    let timer: Vec<_> = sleeps
        .iter()
        .filter(|w| w["ending"]["by"] == "timer")
        .collect();
    assert!(
        timer.len() >= 18,
        "{} of {} ended by their timer",
        timer.len(),
        sleeps.len()
    );
    for w in &timer {
        let (exit, deadline) = (
            w["exit_ns"].as_u64().unwrap(),
            w["deadline_ns"].as_u64().unwrap(),
        );
        assert!(exit >= deadline, "returned before its deadline: {w}");
        assert!(w["hard_ns"].as_u64().unwrap() >= deadline);
    }
    let calls = doc["calls"].as_array().unwrap();
    let row = calls
        .iter()
        .find(|c| c["call"] == "clock_nanosleep")
        .unwrap();
    let counted: u64 = ["timer", "woken", "signal", "never_blocked"]
        .iter()
        .map(|k| row[k].as_u64().unwrap())
        .sum();
    assert_eq!(
        counted,
        row["waits"].as_u64().unwrap(),
        "endings add up: {row}"
    );
    assert_eq!(
        row["lateness"]["count"].as_u64().unwrap(),
        row["timer"].as_u64().unwrap()
    );
    // Python's default slack is the kernel's: the trap is named.
    assert!(
        doc["traps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["trap"] == "slack"),
        "{}",
        doc["traps"]
    );
    let csv = std::fs::read_to_string(&c).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("schema_version,tid,comm,call")
    );
    assert_eq!(lines.count(), doc["waits"].as_array().unwrap().len());
}

/// `--light` records no interrupt and no idle state: the run says so, no wait names an
/// interrupt, every sleep is still found and ended by its timer, and the saved trace
/// reads back to the same JSON.
#[test]
fn a_light_run_names_no_interrupt_and_reads_back_the_same() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let (saved, live) = (p("light.sltrace"), p("live.json"));
    let out = explain_sleeps(&["--light", "--save", &saved, "--json", &live], 20);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("interrupts and idle states were not recorded"),
        "{text}"
    );
    let doc = json(&live);
    assert_eq!(doc["interrupts_recorded"], false);
    let sleeps = waits(&doc, "clock_nanosleep");
    assert!(sleeps.len() >= 20, "{} sleeps: {doc}", sleeps.len());
    let timer = sleeps.iter().filter(|w| w["ending"]["by"] == "timer");
    assert!(timer.count() >= 18, "{doc}");
    assert!(
        sleeps.iter().all(|w| w.get("interrupts").is_none()),
        "{doc}"
    );
    read_back(&saved, &["--json", &p("from.json")]);
    same_bytes(&p("from.json"), &live);
}

/// `--pid-list` keeps the program's system calls by the kernel's pid list, `--bpf`
/// records with the BPF recorder: either way every sleep is still found and (nearly
/// every one) ended by its timer, the run says how it was kept, and the saved trace
/// reads back to the same JSON.
#[test]
fn a_pid_list_or_bpf_run_finds_the_same_sleeps_and_says_so() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    for (flag, kept_by) in [("--pid-list", "pid_list"), ("--bpf", "bpf")] {
        // The BPF recorder needs a kernel with BTF and a build that had clang.
        if flag == "--bpf" {
            if let Err(why) = sleeplab_capture::BpfSession::usable() {
                eprintln!("--bpf skipped: {why}");
                continue;
            }
        }
        let (saved, live) = (p("list.sltrace"), p("live.json"));
        explain_sleeps(&[flag, "--save", &saved, "--json", &live], 20);
        let doc = json(&live);
        assert_eq!(doc["syscalls_kept_by"], kept_by);
        let sleeps = waits(&doc, "clock_nanosleep");
        assert!(sleeps.len() >= 20, "{} sleeps: {doc}", sleeps.len());
        let timer = sleeps.iter().filter(|w| w["ending"]["by"] == "timer");
        assert!(timer.count() >= 18, "{doc}");
        read_back(&saved, &["--json", &p("from.json")]);
        same_bytes(&p("from.json"), &live);
    }
}

/// By default the machine's interrupts are recorded but not the local timer's nor the
/// idle states; `--idle-states` records those too. Each run says which, finds its
/// sleeps ended by their timers, and its saved trace reads back to the same JSON.
#[test]
fn the_idle_states_are_recorded_only_when_asked_for() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    for (flags, idle_states) in [(&[][..], false), (&["--idle-states"][..], true)] {
        let (saved, live) = (p("run.sltrace"), p("live.json"));
        explain_sleeps(&[flags, &["--save", &saved, "--json", &live]].concat(), 20);
        let doc = json(&live);
        // Where the kernel records interrupts (x86, whose local timer has its own).
        let recorded = idle_states && doc["interrupts_recorded"] == true;
        assert_eq!(doc["idle_states_recorded"], recorded, "{doc}");
        let sleeps = waits(&doc, "clock_nanosleep");
        let timer = sleeps.iter().filter(|w| w["ending"]["by"] == "timer");
        assert!(timer.count() >= 18, "{doc}");
        read_back(&saved, &["--json", &p("from.json")]);
        same_bytes(&p("from.json"), &live);
    }
}

/// A running process followed by its id, whose second thread starts after the
/// recording began and which exits before the time asked for: both threads' sleeps are
/// found, and the run says it exited.
#[test]
fn a_pid_is_followed_with_its_later_threads_until_it_exits() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let mut child = Command::new("taskset")
        .args(["-c", "0", "python3", "-c"])
        .arg(
            "import threading, time\n\
             time.sleep(0.5)\n\
             t = threading.Thread(target=lambda: [time.sleep(0.003) for _ in range(30)], name='late')\n\
             t.start()\n\
             for _ in range(30): time.sleep(0.003)\n\
             t.join()\n",
        )
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("p.json");
    let out = Command::new(bin())
        .args(["explain", "-q", "--pid", &pid, "--seconds", "20", "--json"])
        .arg(&j)
        .output()
        .unwrap();
    child.wait().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("it exited after"), "{text}");
    let doc = json(&j);
    assert!(doc["exited_after_seconds"].as_f64().unwrap() < 20.0);
    let sleeps = waits(&doc, "clock_nanosleep");
    let mut tids: Vec<i64> = sleeps.iter().map(|w| w["tid"].as_i64().unwrap()).collect();
    tids.sort_unstable();
    tids.dedup();
    assert!(tids.len() >= 2, "the later thread's sleeps too: {tids:?}");
    assert!(sleeps.len() >= 60, "{} sleeps", sleeps.len());
}

/// As `nobody` the kernel cannot be traced: the note says why, /proc's counts follow,
/// no file is written, exit 0.
#[test]
fn without_root_it_says_what_proc_tells() {
    let Some(dir) = nobodys_dir() else {
        return;
    };
    let j = dir.path().join("n.json");
    let out = Command::new(AS_NOBODY[0])
        .args(&AS_NOBODY[1..])
        .arg(bin())
        .args(["explain", "-q", "--json"])
        .arg(&j)
        .args(["--", "sleep", "0.2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel tracing unavailable"), "{text}");
    assert!(text.contains("blocked (voluntary)"), "{text}");
    assert!(!j.exists(), "no file without the kernel's account");
}

#[test]
fn bad_targets_get_exit_2() {
    assert_exit_2(
        &sleeplab(&["explain", "--pid", "4000000"]),
        "no such process: 4000000",
        "a missing process",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--", "sleeplab-no-such-command"]),
        "cannot run `sleeplab-no-such-command`",
        "a command that cannot start",
    );
    assert_exit_2(&sleeplab(&["explain", "--pid", "0"]), "pid", "pid 0");
    assert_exit_2(
        &sleeplab(&["explain", "--seconds", "5"]),
        "--seconds follows a program",
        "seconds without a program",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--light"]),
        "--light follows a program",
        "light without a program",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--pid-list"]),
        "--pid-list follows a program",
        "pid list without a program",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--idle-states"]),
        "--idle-states follows a program",
        "idle states without a program",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--light", "--idle-states", "--", "true"]),
        "--idle-states",
        "light and idle states",
    );
    assert_exit_2(
        &sleeplab(&["explain", "--pid", "1", "--", "true"]),
        "--pid",
        "a pid and a command",
    );
}

/// A run saved whole (`--save`) reads back (`--from`) to the same JSON and CSV, byte
/// for byte; one saved by the flight recorder (`--keep-over`) reads back to the same
/// waits, each as it was live, no more than asked for and each later than the threshold.
#[test]
fn a_saved_trace_reads_back_the_same_account() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let whole = p("whole.sltrace");
    let (live_json, live_csv) = (p("live.json"), p("live.csv"));
    let out = explain_sleeps(
        &["--save", &whole, "--json", &live_json, "--csv", &live_csv],
        30,
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Saved the whole trace"));
    let (from_json, from_csv) = (p("from.json"), p("from.csv"));
    let back = read_back(&whole, &["--json", &from_json, "--csv", &from_csv]);
    assert!(String::from_utf8_lossy(&back.stdout).contains("the whole run"));
    same_bytes(&from_json, &live_json);
    same_bytes(&from_csv, &live_csv);

    let kept_trace = p("kept.sltrace");
    let keep = [
        "--keep-over",
        "1us",
        "--keep-max",
        "4",
        "--save",
        &kept_trace,
    ];
    explain_sleeps(&[&keep[..], &["--json", &p("live2.json")]].concat(), 30);
    read_back(&kept_trace, &["--json", &p("from2.json")]);
    let (live, kept) = (json(p("live2.json")), json(p("from2.json")));
    let late: Vec<&serde_json::Value> = live["waits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["ending"]["by"] == "timer")
        .filter(|w| w["exit_ns"].as_u64() > w["deadline_ns"].as_u64().map(|d| d + 1_000))
        .collect();
    let read = kept["waits"].as_array().unwrap();
    assert_eq!(read.len(), late.len().min(4), "the latest four: {kept}");
    for w in read {
        assert!(late.contains(&w), "a kept wait is the live one: {w}");
    }
    let least_kept = read
        .iter()
        .map(|w| w["exit_ns"].as_u64().unwrap() - w["deadline_ns"].as_u64().unwrap())
        .min()
        .unwrap();
    let not_kept = late
        .iter()
        .filter(|w| !read.contains(w))
        .map(|w| w["exit_ns"].as_u64().unwrap() - w["deadline_ns"].as_u64().unwrap());
    for ns in not_kept {
        assert!(
            ns <= least_kept,
            "a later wait was left out: {ns} > {least_kept}"
        );
    }
    assert_eq!(kept["untimed_calls"], live["untimed_calls"]);
    assert_eq!(kept["target"], live["target"]);
}

/// The saved trace in the capture crate's test data (two kept windows of a python
/// loop's 2 ms sleeps) reads anywhere, root or not: both waits, each later than the
/// 60 µs it was kept over; its report page holds the same table and the account's
/// chart.
#[test]
fn a_saved_trace_reads_without_root() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("w.json");
    let report = dir.path().join("report");
    let file = common::repo_root().join("crates/sleeplab-capture/testdata/saved/sleep-2ms.sltrace");
    let out = Command::new(bin())
        .args(["explain", "--from"])
        .arg(&file)
        .arg("--json")
        .arg(&j)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the windows of 2 of the 20 waits later than 60 µs"),
        "{text}"
    );
    let doc = json(&j);
    let waits = doc["waits"].as_array().unwrap();
    assert_eq!(waits.len(), 2);
    for w in waits {
        assert_eq!(w["ending"]["by"], "timer");
        let late = w["exit_ns"].as_u64().unwrap() - w["deadline_ns"].as_u64().unwrap();
        assert!(late > 60_000, "{w}");
    }
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    for needle in [
        "clock_nanosleep",
        "id=\"program-account\"",
        "<svg",
        "Lateness past the deadline",
        "late p50",
    ] {
        assert!(html.contains(needle), "the page holds {needle}");
    }
    assert!(text.contains("Report: "), "{text}");
}

/// With `--stacks`: a spinning shell pinned beside a sleeping Python holds its CPU, and
/// its kernel stack as it left the CPU is named, each frame `symbol+0xoffset`, one of
/// them the scheduler's entry; its run-queue share is its own.
#[test]
fn the_holders_kernel_stack_is_named_with_stacks() {
    let Some(_alone) = traceable_alone() else {
        return;
    };
    let mut spin = Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("w.json");
    let out = Command::new(bin())
        .args(["explain", "-q", "--stacks", "--json"])
        .arg(&j)
        .args(["--", "taskset", "-c", "0", "python3", "-c"])
        .arg("import time\nfor _ in range(40): time.sleep(0.002)")
        .output()
        .unwrap();
    let _ = spin.kill();
    let _ = spin.wait();
    assert!(out.status.success(), "{out:?}");
    let doc = json(&j);
    let holders: Vec<&serde_json::Value> = doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["holders"].as_array().unwrap())
        .collect();
    let stacked: Vec<&serde_json::Value> = holders
        .iter()
        .copied()
        .filter(|h| h.get("kernel_stack").is_some())
        .collect();
    assert!(!stacked.is_empty(), "no holder's stack: {holders:?}");
    for h in &stacked {
        let frames: Vec<&str> = h["kernel_stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(!frames.is_empty(), "{h}");
        for f in &frames {
            let (sym, off) = f.split_once("+0x").unwrap_or_else(|| panic!("{f}"));
            assert!(
                !sym.is_empty() && u64::from_str_radix(off, 16).is_ok(),
                "{f}"
            );
        }
        assert!(
            frames.iter().any(|f| f.contains("schedule")),
            "the scheduler's entry: {frames:?}"
        );
        assert!(h["run_queue_ns"].as_u64().unwrap() > 0, "{h}");
    }
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("the kernel stack of"), "{said}");
}
