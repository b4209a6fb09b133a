//! Probe conformance: every probe whose runtime is installed is built through the
//! catalog and checked against `spec/probe-protocol.md` — its `--list` parses and has
//! methods, a tiny one-shot run and (where it has periodic methods) a tiny periodic run
//! parse with exactly the counts asked for, and bad arguments exit 2 with nothing on
//! stdout and a message on stderr. With `--timestamps` (every probe but Windows offers
//! it), each available method's calls lie on `CLOCK_MONOTONIC` in order, without
//! overlapping, between the test's own clock reads around the run; the header's `tid`
//! is there where the probe promises it and is a thread of the probe process. No
//! latency is asserted, only counts, order and protocol.
//!
//! A runtime that is not installed is skipped with a printed reason, except under CI
//! (`CI` set), where `scripts/install-deps.sh` installs every runtime and a skip fails.
//!
//! The harness itself, with fake probes, is tested in `probes_harness.rs`.

use sleeplab_cli::probe::catalog::{Catalog, Preparation, RuntimeId};
use sleeplab_cli::probe::child::ChildSettings;
use sleeplab_cli::probe::command::ProbeCommand;
use sleeplab_cli::probe::protocol::{self, Kind, ListOutput, MethodInfo, OPTION_TIMESTAMPS};
use sleeplab_cli::probe::runner::{self, Limits, RunOutput, Termination};
use std::time::{Duration, Instant};

const LIMITS: Limits = Limits {
    timeout: Duration::from_secs(120),
    output_cap: 16 << 20,
};

fn args(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

/// Runs the probe.
fn run_probe(cmd: &ProbeCommand, a: &[String]) -> RunOutput {
    runner::run(cmd, a, ChildSettings::default(), LIMITS)
        .unwrap_or_else(|e| panic!("{}: {e}", cmd.words(a).join(" ")))
}

/// Runs the probe and returns (exit code, stdout, stderr).
fn invoke(cmd: &ProbeCommand, a: &[String]) -> (Termination, Vec<u8>, String) {
    let out = run_probe(cmd, a);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.termination, out.stdout, err)
}

/// Whether the probe of `id` names its measuring thread (`tid`) in a measurement's
/// header: all but Go (its goroutine moves between threads, and locking it would change
/// what is measured; probes/go/README.md) and Windows (a Win32 thread id is not the
/// kernel's).
fn promises_tid(id: RuntimeId) -> bool {
    !matches!(id, RuntimeId::Go | RuntimeId::Windows)
}

/// Whether the probe of `id` offers `--timestamps`: all but Windows, whose clock under
/// Wine is not the host's `CLOCK_MONOTONIC`.
fn offers_timestamps(id: RuntimeId) -> bool {
    id != RuntimeId::Windows
}

/// `CLOCK_MONOTONIC` now, ns: the clock of the probes' starts and of a kernel trace.
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec on the stack and touches nothing else.
    assert_eq!(
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) },
        0
    );
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The header's measuring thread is present exactly where the probe promises one.
fn check_tid(id: RuntimeId, what: &str, m: &protocol::Measurement) {
    assert_eq!(
        m.header.tid.is_some(),
        promises_tid(id),
        "{id} {what}: tid {:?}",
        m.header.tid
    );
}

/// A run of `m` long enough (≥ 0.3 s) that its threads are read while it measures (a
/// short run may be over by then, its measuring thread gone): its `tid`, where
/// promised, is one of them.
fn tid_is_a_thread_of_the_probe(id: RuntimeId, cmd: &ProbeCommand, m: &MethodInfo) {
    let a = match m.kind {
        Kind::Periodic => format!("--method {} --period-ns 100000000 --count 3", m.method),
        _ => format!("--method {} --durations-ns 300000000 --count 1", m.method),
    };
    let (meas, out) = measured(id, cmd, &m.method, m.kind, &a);
    // Nothing to check where the probe names no thread (its absence is `check_tid`'s):
    // Windows under Wine once came out with no threads read at all (a flaky failure).
    let Some(tid) = meas.header.tid else {
        return;
    };
    let threads = out
        .threads
        .unwrap_or_else(|| panic!("{id} {a}: the probe's threads were not read while it ran"));
    assert!(
        threads.contains(&tid),
        "{id} {a}: tid {tid} is not a thread of process {} ({threads:?})",
        out.pid
    );
}

/// Builds the probe of `id`, or explains why it is skipped (`None`).
fn prepared(id: RuntimeId) -> Option<ProbeCommand> {
    let catalog = Catalog::locate().expect("the repository's probes/ directory");
    match catalog.prepare(id) {
        Preparation::Ready { command, .. } => Some(command),
        Preparation::Skipped { reason, install } => {
            let msg = format!("{id}: skipped: {reason} (install: {install})");
            if std::env::var_os("CI").is_some() {
                panic!("{msg}; CI installs every runtime (scripts/install-deps.sh)");
            }
            eprintln!("{msg}");
            None
        }
        Preparation::Failed { reason } => panic!("{id}: cannot prepare the probe: {reason}"),
    }
}

fn list(id: RuntimeId, cmd: &ProbeCommand) -> ListOutput {
    let (term, stdout, stderr) = invoke(cmd, &args("--list"));
    assert_eq!(term, Termination::Exited(0), "{id} --list: {stderr}");
    let l = protocol::parse_list(&stdout).unwrap_or_else(|e| {
        panic!(
            "{id} --list breaks the protocol: {e}\n{}",
            String::from_utf8_lossy(&stdout)
        )
    });
    assert!(!l.methods.is_empty(), "{id} lists no method");
    assert_eq!(
        l.header.runtime,
        id.protocol_runtime(),
        "{id} header runtime"
    );
    l
}

/// A run that must succeed and follow the protocol with exactly the asked-for counts.
fn measure(
    id: RuntimeId,
    cmd: &ProbeCommand,
    method: &str,
    kind: Kind,
    a: &str,
) -> protocol::Measurement {
    measured(id, cmd, method, kind, a).0
}

/// [`measure`], and the run's output (its pid and threads).
fn measured(
    id: RuntimeId,
    cmd: &ProbeCommand,
    method: &str,
    kind: Kind,
    a: &str,
) -> (protocol::Measurement, RunOutput) {
    let a = args(a);
    let out = run_probe(cmd, &a);
    let line = a.join(" ");
    assert_eq!(
        out.termination,
        Termination::Exited(0),
        "{id} {line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = protocol::parse_measurement(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{id} {line} breaks the protocol: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(m.method, method, "{id}");
    assert_eq!(m.mode, kind.mode(), "{id} {method}");
    assert_eq!(m.header.runtime, id.protocol_runtime(), "{id}");
    assert_eq!(
        m.header.timestamps,
        line.contains("--timestamps"),
        "{id} {line}"
    );
    check_tid(id, &line, &m);
    (m, out)
}

/// Runs `m` with `--timestamps` (`a` asks for the rest) between two reads of the test's
/// own `CLOCK_MONOTONIC`: every call's start and end lie between them, starts never
/// decrease and no call ends after the next one starts; a periodic cell's t0 and its
/// ticks (t0 + arrival) lie between them too.
fn timestamped(id: RuntimeId, cmd: &ProbeCommand, m: &MethodInfo, a: &str) {
    let a = format!("--method {} {a} --timestamps", m.method);
    let before = mono_ns();
    let (meas, _) = measured(id, cmd, &m.method, m.kind, &a);
    let after = mono_ns();
    let what = format!("{id} {a}");
    assert!(!meas.cells.is_empty(), "{what}");
    if m.kind == Kind::Periodic {
        for c in &meas.cells {
            let t0 = c.t0_ns.unwrap_or_else(|| panic!("{what}: no t0"));
            let last = c.samples.last().or(c.warmup.last()).copied().unwrap_or(0);
            assert!(
                before <= t0 && t0 + last <= after,
                "{what}: t0 {t0} + last tick {last} outside [{before}, {after}]"
            );
        }
        return;
    }
    // (start, elapsed) of every call, in the order they were made.
    let calls: Vec<(u64, u64)> = meas
        .cells
        .iter()
        .flat_map(|c| {
            let starts =
                |s: &Option<Vec<u64>>| s.clone().unwrap_or_else(|| panic!("{what}: no starts"));
            let warm = starts(&c.warmup_starts_ns)
                .into_iter()
                .zip(c.warmup.clone());
            warm.chain(starts(&c.starts_ns).into_iter().zip(c.samples.clone()))
        })
        .collect();
    let (first, (last, last_elapsed)) = (calls[0].0, calls[calls.len() - 1]);
    assert!(
        before <= first,
        "{what}: first start {first} before the run ({before})"
    );
    assert!(
        last + last_elapsed <= after,
        "{what}: the last call ends at {} after the run ({after})",
        last + last_elapsed
    );
    for (i, w) in calls.windows(2).enumerate() {
        let ((s0, e0), (s1, _)) = (w[0], w[1]);
        assert!(
            s0 <= s1,
            "{what}: call {} starts at {s1}, before call {i}'s {s0}",
            i + 1
        );
        assert!(
            s0 + e0 <= s1,
            "{what}: call {i} ({s0} + {e0} ns) overlaps call {} starting at {s1}",
            i + 1
        );
    }
}

/// Bad arguments: exit 2, nothing on stdout, a message on stderr.
fn rejects(id: RuntimeId, cmd: &ProbeCommand, a: &[String]) {
    let (term, stdout, stderr) = invoke(cmd, a);
    let line = a.join(" ");
    assert_eq!(
        term,
        Termination::Exited(2),
        "{id} {line}: must exit 2 (stderr: {stderr})"
    );
    assert!(
        stdout.is_empty(),
        "{id} {line}: printed on stdout: {}",
        String::from_utf8_lossy(&stdout)
    );
    assert!(
        !stderr.trim().is_empty(),
        "{id} {line}: no message on stderr"
    );
}

/// The whole conformance check of one runtime. `full` false checks one bad argument
/// and timestamps of one method of each kind only (JRuby runs the same probe source as
/// MRI, which gets the full set).
fn conformance(id: RuntimeId, full: bool) {
    let t0 = Instant::now();
    let Some(cmd) = prepared(id) else { return };
    let l = list(id, &cmd);
    let stamps = l.header.options().contains(&OPTION_TIMESTAMPS);
    assert_eq!(stamps, offers_timestamps(id), "{id} --list options");
    let oneshot = l
        .methods
        .iter()
        .find(|m| m.available && m.kind == Kind::Oneshot)
        .unwrap_or_else(|| panic!("{id} has no available oneshot method"));
    let m = measure(
        id,
        &cmd,
        &oneshot.method,
        Kind::Oneshot,
        &format!(
            "--method {} --durations-ns 0,1000000 --count 3 --warmup 1",
            oneshot.method
        ),
    );
    let cells: Vec<(u64, usize, usize)> = m
        .cells
        .iter()
        .map(|c| (c.value_ns, c.warmup.len(), c.samples.len()))
        .collect();
    assert_eq!(
        cells,
        [(0, 1, 3), (1_000_000, 1, 3)],
        "{id} {}",
        oneshot.method
    );

    tid_is_a_thread_of_the_probe(id, &cmd, oneshot);
    let periodic = l
        .methods
        .iter()
        .find(|m| m.available && m.kind == Kind::Periodic);
    if let Some(p) = periodic {
        tid_is_a_thread_of_the_probe(id, &cmd, p);
    }
    if let Some(p) = periodic {
        let m = measure(
            id,
            &cmd,
            &p.method,
            Kind::Periodic,
            &format!(
                "--method {} --period-ns 2000000 --count 5 --warmup 1",
                p.method
            ),
        );
        assert_eq!(m.cells.len(), 1, "{id} {}", p.method);
        let c = &m.cells[0];
        assert_eq!(
            (c.value_ns, c.warmup.len(), c.samples.len()),
            (2_000_000, 1, 5),
            "{id} {}",
            p.method
        );
    }

    // Every available method (or, not `full`, the first of each kind) with timestamps:
    // counted cells, then a budget cell.
    let mut stamped = 0;
    if stamps {
        let mut kinds_seen = Vec::new();
        for m in l.methods.iter().filter(|m| m.available) {
            if !full && kinds_seen.contains(&m.kind) {
                continue;
            }
            kinds_seen.push(m.kind);
            if m.kind == Kind::Periodic {
                timestamped(id, &cmd, m, "--period-ns 2000000 --count 3 --warmup 1");
                stamped += 1;
            } else {
                timestamped(id, &cmd, m, "--durations-ns 0,100000 --count 2 --warmup 1");
                timestamped(
                    id,
                    &cmd,
                    m,
                    "--durations-ns 100000 --budget-ns 1 --max-count 2",
                );
                stamped += 2;
            }
        }
    }

    let om = &oneshot.method;
    let mut bad = vec![args("--no-such-flag")];
    if !stamps {
        // Not offered: an unknown flag.
        bad.push(args(&format!(
            "--method {om} --durations-ns 0 --count 1 --timestamps"
        )));
    }
    if full {
        if stamps {
            bad.extend([
                args("--list --timestamps"),
                args(&format!(
                    "--method {om} --durations-ns 0 --count 1 --timestamps --timestamps"
                )),
            ]);
        }
        bad.extend([
            args("--method no-such-method-xyz --durations-ns 0 --count 1"),
            args(&format!("--method {om} --durations-ns 1x --count 1")),
            args(&format!("--method {om} --durations-ns -5 --count 1")),
            args(&format!("--method {om} --durations-ns 0,,5 --count 1")),
            args(&format!("--method {om} --durations-ns 0 --count 0")),
            args(&format!(
                "--method {om} --durations-ns 0 --count 1 --budget-ns 5"
            )),
            args(&format!("--method {om} --durations-ns 0")),
            args(&format!("--method {om} --period-ns 1000000 --count 1")),
            args(&format!(
                "--method {om} --durations-ns 0 --count 18446744073709551616"
            )),
        ]);
        if let Some(p) = periodic {
            bad.push(args(&format!(
                "--method {} --durations-ns 0 --count 1",
                p.method
            )));
        }
    }
    for a in &bad {
        rejects(id, &cmd, a);
    }
    eprintln!(
        "{id}: conforms ({} methods, {stamped} runs with timestamps, {} bad-argument runs) in {:.1} s",
        l.methods.len(),
        bad.len(),
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn c_probe_conforms() {
    conformance(RuntimeId::C, true);
}

#[test]
fn cpp_probe_conforms() {
    conformance(RuntimeId::Cpp, true);
}

#[test]
fn go_probe_conforms() {
    conformance(RuntimeId::Go, true);
}

#[test]
fn python_probe_conforms() {
    conformance(RuntimeId::Python, true);
}

#[test]
fn java_probe_conforms() {
    conformance(RuntimeId::Java, true);
}

#[test]
fn node_probe_conforms() {
    conformance(RuntimeId::Node, true);
}

#[test]
fn ruby_probe_conforms_on_mri() {
    conformance(RuntimeId::Ruby, true);
}

#[test]
fn ruby_probe_conforms_on_jruby() {
    conformance(RuntimeId::Jruby, false);
}

#[test]
fn windows_probe_conforms_under_wine() {
    conformance(RuntimeId::Windows, true);
}
