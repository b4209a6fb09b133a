//! The runner against real processes: exit codes, signals, timeouts, floods, process
//! groups, and what the child is given and read back.

use super::*;
use sleeplab::system::Policy;

fn sh(script: &str) -> ProbeCommand {
    ProbeCommand::new("/bin/sh").with_args(["-c", script])
}

fn limits(ms: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(ms),
        output_cap: 1 << 20,
    }
}

#[test]
fn captures_stdout_and_maps_exit_codes() {
    let r = run(
        &sh("echo hello; echo oops >&2"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.stdout, b"hello\n");
    assert_eq!(r.verdict(), Verdict::Ok);
    let r = run(
        &sh("echo 'bad --count x' >&2; exit 2"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(
        r.verdict(),
        Verdict::BadArguments("bad arguments (exit 2): bad --count x".into())
    );
    let r = run(
        &sh("echo 'no such clock' >&2; exit 3"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.verdict(), Verdict::Unavailable("no such clock".into()));
    let r = run(
        &sh("echo first >&2; echo last >&2; exit 7"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.verdict(), Verdict::Failed("exit code 7: last".into()));
}

#[test]
fn signals_timeouts_and_floods_are_failures() {
    let r = run(
        &sh("kill -SEGV $$"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.termination, Termination::Signaled(libc::SIGSEGV));
    assert!(matches!(r.verdict(), Verdict::Failed(m) if m.contains("SIGSEGV")));
    let t0 = Instant::now();
    let r = run(&sh("sleep 30"), &[], ChildSettings::default(), limits(300)).unwrap();
    assert_eq!(r.termination, Termination::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(matches!(r.verdict(), Verdict::Failed(m) if m.contains("hung")));
    let r = run(&sh("yes"), &[], ChildSettings::default(), limits(20_000)).unwrap();
    assert_eq!(r.termination, Termination::OutputCapped);
    assert!(r.stdout.len() <= (1 << 20) + 64 * 1024);
}

#[test]
fn a_hang_in_a_grandchild_is_killed_with_the_group() {
    // The shell starts a background sleeper that holds the pipes, then hangs itself.
    let t0 = Instant::now();
    let r = run(
        &sh("sleep 30 & sleep 30"),
        &[],
        ChildSettings::default(),
        limits(300),
    )
    .unwrap();
    assert_eq!(r.termination, Termination::TimedOut);
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_leftover_holding_stderr_does_not_delay_the_result() {
    // The shell leaves a sleeper behind that keeps stderr (not stdout) open.
    let t0 = Instant::now();
    let r = run(
        &sh("echo out; echo err >&2; sleep 5 >/dev/null & exit 0"),
        &[],
        ChildSettings::default(),
        limits(20_000),
    )
    .unwrap();
    assert_eq!(r.verdict(), Verdict::Ok);
    assert_eq!(r.stdout, b"out\n");
    assert_eq!(r.stderr_last_line(), "err");
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
}

#[test]
fn what_the_probe_leaves_in_its_group_is_killed_when_the_run_ends() {
    use crate::probe::child::tests::{gone_within, stat};
    // A double fork: the leftover is re-parented away from the probe at once.
    let r = run(
        &sh("(sleep 30 >/dev/null 2>&1 & echo $!)"),
        &[],
        ChildSettings::default(),
        limits(20_000),
    )
    .unwrap();
    assert_eq!(r.verdict(), Verdict::Ok);
    let pid: u32 = String::from_utf8_lossy(&r.stdout).trim().parse().unwrap();
    // Started by the probe and still running, or already gone: either way it must
    // not outlive the run by more than a moment.
    if let Some((_, start)) = stat(pid) {
        assert!(
            gone_within(pid, start, Duration::from_secs(10)),
            "the leftover {pid} survived"
        );
    }
}

#[test]
fn an_endless_timeout_does_not_overflow() {
    let l = Limits {
        timeout: Duration::MAX,
        output_cap: 1024,
    };
    let r = run(&sh("exit 0"), &[], ChildSettings::default(), l).unwrap();
    assert_eq!(r.verdict(), Verdict::Ok);
}

#[test]
fn missing_program_is_a_spawn_error() {
    let e = run(
        &ProbeCommand::new("/nonexistent/sleeplab-probe"),
        &[],
        ChildSettings::default(),
        limits(1000),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot start /nonexistent/sleeplab-probe"),
        "{e}"
    );
}

#[test]
fn child_inherits_timer_slack_and_affinity() {
    let settings = ChildSettings {
        timer_slack_ns: Some(12_345),
        pin_cpu: Some(0),
        scheduling: None,
    };
    // /proc/self/timerslack_ns is the task's own slack; Cpus_allowed_list the affinity.
    let r = run(
        &sh("cat /proc/self/timerslack_ns; grep Cpus_allowed_list /proc/self/status"),
        &[],
        settings,
        limits(5000),
    )
    .unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    assert_eq!(r.verdict(), Verdict::Ok, "{out}");
    if !out.starts_with("cat:") {
        assert!(
            out.lines().next().is_some_and(|l| l.trim() == "12345"),
            "{out}"
        );
    }
    assert!(out.contains("Cpus_allowed_list:\t0\n"), "{out}");
}

/// Whether this process may use a real-time policy (tried on a throwaway thread).
fn realtime_permitted() -> bool {
    std::thread::spawn(|| sleeplab::system::set_policy(Policy::Fifo, 1).is_ok())
        .join()
        .unwrap()
}

#[test]
fn what_was_in_force_is_read_back_once_the_first_line_is_out() {
    let settings = ChildSettings {
        timer_slack_ns: None,
        pin_cpu: Some(0),
        scheduling: Some((Policy::Fifo, 3)),
    };
    let script = sh("echo header; sleep 0.5; echo body");
    if !realtime_permitted() {
        let e = run(&script, &[], settings, limits(5000)).unwrap_err();
        assert!(e.to_string().contains("not permitted"), "{e}");
        return;
    }
    let r = run(&script, &[], settings, limits(5000)).unwrap();
    assert_eq!(r.verdict(), Verdict::Ok);
    let f = r.in_force.expect("read back after the first line");
    assert_eq!(f.policy.as_deref(), Some("fifo"), "{f:?}");
    assert_eq!(f.priority, Some(3));
    assert_eq!(f.threads_differing, Some(0));
    assert_eq!(f.cpus.as_deref(), Some("0"));
    assert_eq!(f.locked_kib, Some(0));
    // The slack, under the normal policy (real-time threads get none).
    let settings = ChildSettings {
        timer_slack_ns: Some(23_456),
        ..ChildSettings::default()
    };
    let r = run(&script, &[], settings, limits(5000)).unwrap();
    let f = r.in_force.expect("read back after the first line");
    assert_eq!(f.timer_slack_ns, Some(23_456));
    assert_eq!(f.policy.as_deref(), Some("other"));
    // Nothing printed, nothing read.
    let r = run(&sh("sleep 0.1"), &[], settings, limits(5000)).unwrap();
    assert_eq!(r.in_force, None);
}

#[test]
fn the_threads_are_read_back_with_the_first_line() {
    // A shell has one thread: itself. `exec` keeps the pid, so the probe is the child.
    let r = run(
        &sh("echo header; sleep 0.3"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.threads, Some(vec![r.pid]));
    let r = run(
        &sh("sleep 0.1"),
        &[],
        ChildSettings::default(),
        limits(5000),
    )
    .unwrap();
    assert_eq!(r.threads, None);
}

#[test]
fn words_show_env_program_and_args() {
    let c = ProbeCommand::new("wine")
        .with_args(["probe.exe"])
        .with_env("WINEDEBUG", "-all");
    assert_eq!(
        c.words(&["--list".into()]),
        ["WINEDEBUG=-all", "wine", "probe.exe", "--list"]
    );
}
