//! `sleeplab runtimes` leaves no orphans: a SIGKILLed sleeplab (which runs no cleanup)
//! leaves no probe running, nor a probe's children and grandchildren, nor, under Wine,
//! the Windows probe (the rest of `runtimes` through the binary: `runtimes_cli.rs`).

mod common;
use common::*;

use std::time::{Duration, Instant};

/// A process seen in /proc: pid, start time (so a reused pid is not mistaken for it),
/// and its command line.
#[derive(Debug, Clone)]
struct Seen {
    pid: u32,
    start: u64,
    cmdline: String,
    env: Vec<String>,
}

/// (state, start time) from /proc/PID/stat.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.first()?.chars().next()?, f.get(19)?.parse().ok()?))
}

/// Every live process whose environment holds `entry` (`KEY=VALUE`, inherited from
/// the sleeplab the test started: probes and everything they start carry it).
fn marked(entry: &str) -> Vec<Seen> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let env: Vec<String> = env
            .split(|&b| b == 0)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        if !env.iter().any(|v| v == entry) {
            continue;
        }
        let Some((state, start)) = proc_stat(pid) else {
            continue;
        };
        if state == 'Z' {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        out.push(Seen {
            pid,
            start,
            cmdline,
            env,
        });
    }
    out
}

/// Whether `p` still runs (a zombie waiting for its reaper does not).
fn still_runs(p: &Seen) -> bool {
    matches!(proc_stat(p.pid), Some((state, start)) if start == p.start && state != 'Z')
}

/// Starts `sleeplab runtimes ARGS` marked with a unique environment entry, waits until
/// `ready` holds for the marked processes, SIGKILLs sleeplab, and returns the marked
/// processes seen just before the kill (sleeplab itself left out) and the entry.
fn sigkill_sleeplab_when(
    args: &[&str],
    env: &[(&str, std::ffi::OsString)],
    ready: impl Fn(&[Seen]) -> bool,
) -> (Vec<Seen>, String) {
    let entry = format!("SLEEPLAB_TEST_MARKER={}-{}", std::process::id(), rand_tag());
    let (key, value) = entry.split_once('=').unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sleeplab"))
        .arg("runtimes")
        .args(args)
        .env(key, value)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let before = loop {
        let seen = marked(&entry);
        if ready(&seen) {
            break seen;
        }
        if let Some(st) = child.try_wait().unwrap() {
            panic!("sleeplab exited ({st}) before the probes were up: {seen:?}");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the probes never came up: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap(); // SIGKILL: no handler runs, nothing is cleaned up by sleeplab
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let others: Vec<Seen> = before.into_iter().filter(|p| p.pid != child.id()).collect();
    assert!(!others.is_empty(), "nothing but sleeplab was running");
    (others, entry)
}

/// A tag that differs between runs of the test binary.
fn rand_tag() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Waits up to `limit` for every process of `procs` to be gone; the survivors.
fn survivors_after(procs: &[Seen], limit: Duration) -> Vec<String> {
    let t0 = Instant::now();
    while procs.iter().any(still_runs) && t0.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    procs
        .iter()
        .filter(|p| still_runs(p))
        .map(|p| format!("{} {}", p.pid, p.cmdline))
        .collect()
}

/// Fails unless every process of `procs` is gone within `limit` of sleeplab's death.
fn assert_all_gone_within(procs: &[Seen], limit: Duration) {
    let left = survivors_after(procs, limit);
    assert!(
        left.is_empty(),
        "still running after sleeplab died: {left:?}"
    );
}

/// SIGKILL of `sleeplab runtimes` while the Python probe measures: the probe (and the
/// watchdog of its group) are gone within seconds.
#[test]
fn a_sigkilled_sleeplab_leaves_no_probe_running() {
    let (procs, _) = sigkill_sleeplab_when(
        &[&["-q"], &PYTHON_SLEEPING[..], &["--count", "300"]].concat(),
        &[],
        |seen| {
            seen.iter()
                .any(|p| p.cmdline.contains("--method time.sleep"))
        },
    );
    assert!(
        procs.iter().any(|p| p.cmdline.contains("probe.py")),
        "{procs:?}"
    );
    assert_all_gone_within(&procs, Duration::from_secs(5));
}

/// A probe that starts processes of its own (a child, a child's child, and an orphan
/// re-parented away from it by a double fork, as launchers and `go run` do): none of
/// them outlives a SIGKILLed sleeplab.
#[test]
fn a_sigkilled_sleeplab_leaves_no_grandchild_running() {
    let dir = tempfile::tempdir().unwrap();
    let py = dir.path().join("python");
    std::fs::create_dir(&py).unwrap();
    std::fs::write(
        py.join("probe.py"),
        r#"import json, os, subprocess, sys, time
H = {"protocol": "sleeplab-probe/1", "runtime": "python", "implementation": "fake",
     "runtime_version": "1", "clock": "none", "platform": "test"}
if sys.argv[1:] == ["--list"]:
    print(json.dumps(H))
    print(json.dumps({"method": "family", "kind": "oneshot", "available": True,
                      "description": "starts a child, a grandchild and an orphan"}))
    print("end")
    sys.exit(0)
subprocess.Popen(["sleep", "301"])
subprocess.Popen(["sh", "-c", "sleep 302 & wait"])
os.system("sh -c 'sleep 303 &'")
print(json.dumps(dict(H, method="family", mode="oneshot")), flush=True)
time.sleep(300)
"#,
    )
    .unwrap();
    let (procs, _) = sigkill_sleeplab_when(
        &[
            "-q",
            "--runtimes",
            "python",
            "--durations",
            "1ms",
            "--count",
            "1",
        ],
        &[("SLEEPLAB_PROBES", dir.path().into())],
        |seen| {
            ["sleep 301", "sleep 302", "sleep 303"]
                .iter()
                .all(|s| seen.iter().any(|p| p.cmdline.trim_end() == *s))
        },
    );
    assert_all_gone_within(&procs, Duration::from_secs(5));
}

/// The Windows probe under Wine: the probe dies with sleeplab; Wine's server and
/// services (sessions of their own, started for the probe) exit once their last client
/// is gone — unless another Wine program of the same prefix (another test run) still
/// uses them, which is said and not counted against the probe.
#[test]
fn a_sigkilled_sleeplab_leaves_no_wine_probe_running() {
    if which("wine").is_none() || which("x86_64-w64-mingw32-gcc").is_none() {
        common::missing_dependency("wine or mingw-w64 (for the Windows probe)");
        return;
    }
    let (procs, entry) = sigkill_sleeplab_when(
        &[
            "-q",
            "--runtimes",
            "windows",
            "--methods",
            "Sleep",
            "--durations",
            "100ms",
            "--count",
            "300",
        ],
        &[],
        |seen| seen.iter().any(|p| p.cmdline.contains("--method Sleep")),
    );
    let (probe, server): (Vec<Seen>, Vec<Seen>) = procs
        .into_iter()
        .partition(|p| p.cmdline.contains("probe.exe") || p.cmdline.contains("sleeplab"));
    assert!(!probe.is_empty(), "no probe.exe among {server:?}");
    assert_all_gone_within(&probe, Duration::from_secs(5));
    let prefix = probe
        .iter()
        .flat_map(|p| p.env.iter())
        .find(|v| v.starts_with("WINEPREFIX="))
        .cloned()
        .expect("the probe runs with a WINEPREFIX");
    let left = survivors_after(&server, Duration::from_secs(20));
    if !left.is_empty() {
        let other_clients: Vec<Seen> = other_wine_clients(&prefix, &entry);
        assert!(
            !other_clients.is_empty(),
            "Wine processes of the probe still run with no other client of {prefix}: {left:?}"
        );
        eprintln!(
            "windows: {} Wine server processes stay up for other clients of {prefix}: {:?}",
            left.len(),
            other_clients.iter().map(|p| p.pid).collect::<Vec<_>>()
        );
    }
}

/// Live Wine programs of `prefix` (`WINEPREFIX=…`) not started by this test.
fn other_wine_clients(prefix: &str, entry: &str) -> Vec<Seen> {
    marked(prefix)
        .into_iter()
        .filter(|p| !p.env.iter().any(|v| v == entry) && p.cmdline.contains(".exe"))
        .collect()
}
