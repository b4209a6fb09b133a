//! `sleeplab tune` leaves the machine as it found it: every system value it may change
//! (idle states, halt polling, sysctls, IRQ affinity, governors, the CPU latency QoS) is
//! identical before and after a normal exit, a Ctrl-C (SIGINT), and a SIGKILL followed
//! by the next run of any command (which replays the journal the killed run left).
//!
//! System-wide settings need root: without it these tests say so and pass, and under CI
//! (`CI` set; CI runs them as root) they fail instead. Each run uses a journal directory of its own (`SLEEPLAB_RUN_DIR`), so the
//! tests do not replay each other's journals.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One test at a time: each snapshots the machine, which another's run would change.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every value tune may change, by file.
type Snapshot = Vec<(PathBuf, Vec<u8>)>;

/// The values of [`Snapshot`] now.
fn snapshot() -> Snapshot {
    let mut files: Vec<PathBuf> = Vec::new();
    let glob = |dir: &str, pick: &dyn Fn(&Path) -> Vec<PathBuf>| -> Vec<PathBuf> {
        fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|e| pick(&e.path()))
            .collect()
    };
    files.extend(glob("/sys/devices/system/cpu", &|cpu| {
        let mut v = glob(&cpu.join("cpuidle").to_string_lossy(), &|s| {
            vec![s.join("disable")]
        });
        v.push(cpu.join("cpufreq/scaling_governor"));
        v
    }));
    files.extend(glob("/proc/irq", &|irq| {
        vec![irq.join("smp_affinity_list")]
    }));
    for f in [
        "/sys/module/haltpoll/parameters/guest_halt_poll_ns",
        "/proc/sys/kernel/timer_migration",
        "/proc/sys/kernel/sched_autogroup_enabled",
        "/sys/kernel/debug/sched/base_slice_ns",
        "/dev/cpu_dma_latency",
    ] {
        files.push(f.into());
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| fs::read(&p).ok().map(|v| (p, v)))
        .collect()
}

fn tune(run_dir: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sleeplab"));
    c.env("SLEEPLAB_RUN_DIR", run_dir)
        .args([
            "-q",
            "tune",
            "--mechanisms",
            "clock-nanosleep-abs",
            "--durations",
            "1ms",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn journals(run_dir: &Path) -> usize {
    fs::read_dir(run_dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("tune-"))
                .count()
        })
        .unwrap_or(0)
}

/// Starts a long tune and waits until a system-wide change is in force (its journal
/// exists); `None` (after killing it) where none shows up within 60 s.
fn start_until_changed(run_dir: &Path) -> Option<Child> {
    let mut child = tune(run_dir, &["--rounds", "1000", "--budget", "30ms"])
        .spawn()
        .expect("spawn sleeplab");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if journals(run_dir) > 0 {
            return Some(child);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn assert_same(before: &Snapshot, after: &Snapshot) {
    let paths = |s: &Snapshot| s.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(paths(before), paths(after), "the files read differ");
    for ((p, a), (_, b)) in before.iter().zip(after) {
        assert_eq!(a, b, "{} changed", p.display());
    }
}

/// As root, the machine's values, then a long tune with a system-wide change in force;
/// `None` (said, and a failure under CI) without root or where no system-wide setting
/// applies.
fn with_a_change_in_force(run_dir: &Path) -> Option<(Snapshot, Child)> {
    if !root() {
        common::missing_dependency("root (system-wide settings)");
        return None;
    }
    let before = snapshot();
    match start_until_changed(run_dir) {
        Some(child) => Some((before, child)),
        None => {
            common::missing_dependency("a system-wide setting that applies here");
            None
        }
    }
}

#[test]
fn a_normal_exit_restores_every_system_value() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !root() {
        return common::missing_dependency("root (system-wide settings)");
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tune.json");
    let before = snapshot();
    let out = tune(dir.path(), &["--rounds", "3", "--budget", "2ms", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_same(&before, &snapshot());
    assert_eq!(journals(dir.path()), 0, "the journal is removed");
    // A restore of nothing proves nothing: some system-wide setting was in force.
    let result: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    let ran_system = result["data"]["arms"].as_array().unwrap().iter().any(|a| {
        a["setting"]["scope"] == "system" && a["error"].is_null() && a["rounds"].as_u64() > Some(0)
    });
    if !ran_system {
        common::missing_dependency("a system-wide setting that applies here");
    }
}

#[test]
fn ctrl_c_restores_every_system_value() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let Some((before, child)) = with_a_change_in_force(dir.path()) else {
        return;
    };
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_same(&before, &snapshot());
    assert_eq!(journals(dir.path()), 0, "the journal is removed");
}

#[test]
fn after_a_sigkill_the_next_run_restores_every_system_value() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let Some((before, mut child)) = with_a_change_in_force(dir.path()) else {
        return;
    };
    child.kill().unwrap(); // SIGKILL: nothing of it runs again
    child.wait().unwrap();
    assert_eq!(journals(dir.path()), 1, "the killed run's journal is left");
    let out = Command::new(env!("CARGO_BIN_EXE_sleeplab"))
        .env("SLEEPLAB_RUN_DIR", dir.path())
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("restored"));
    assert_same(&before, &snapshot());
    assert_eq!(
        journals(dir.path()),
        0,
        "the journal is replayed and removed"
    );
}
