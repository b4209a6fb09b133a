//! Probe conformance: every probe whose runtime is installed is built through the
//! catalog and checked against `spec/probe-protocol.md` — its `--list` parses and has
//! methods, a tiny one-shot run and (where it has periodic methods) a tiny periodic run
//! parse with exactly the counts asked for, and bad arguments exit 2 with nothing on
//! stdout and a message on stderr. No latency is asserted, only counts and protocol.
//!
//! A runtime that is not installed is skipped with a printed reason, except under CI
//! (`CI` set), where `scripts/install-deps.sh` installs every runtime and a skip fails.
//!
//! Then the harness itself, with fake probes (shell scripts): one that crashes, one that
//! hangs, one that prints garbage, one that floods stdout, one that is missing — each is
//! reported and the run goes on.

use sleeplab_cli::experiments::runtimes::{
    self, MethodStatus, ProbeQuota, RuntimeStatus, RuntimesConfig, Target,
};
use sleeplab_cli::output::Progress;
use sleeplab_cli::probe::catalog::{Catalog, Preparation, RuntimeId};
use sleeplab_cli::probe::child::ChildSettings;
use sleeplab_cli::probe::command::ProbeCommand;
use sleeplab_cli::probe::protocol::{self, Kind, ListOutput};
use sleeplab_cli::probe::runner::{self, Limits, Termination};
use std::path::Path;
use std::time::{Duration, Instant};

const LIMITS: Limits = Limits {
    timeout: Duration::from_secs(120),
    output_cap: 16 << 20,
};

fn args(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

/// Runs the probe and returns (exit code, stdout, stderr).
fn invoke(cmd: &ProbeCommand, a: &[String]) -> (Termination, Vec<u8>, String) {
    let out = runner::run(cmd, a, ChildSettings::default(), LIMITS)
        .unwrap_or_else(|e| panic!("{}: {e}", cmd.words(a).join(" ")));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.termination, out.stdout, err)
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
    let a = args(a);
    let (term, stdout, stderr) = invoke(cmd, &a);
    assert_eq!(
        term,
        Termination::Exited(0),
        "{id} {}: {stderr}",
        a.join(" ")
    );
    let m = protocol::parse_measurement(&stdout).unwrap_or_else(|e| {
        panic!(
            "{id} {} breaks the protocol: {e}\n{}",
            a.join(" "),
            String::from_utf8_lossy(&stdout)
        )
    });
    assert_eq!(m.method, method, "{id}");
    assert_eq!(m.mode, kind.mode(), "{id} {method}");
    assert_eq!(m.header.runtime, id.protocol_runtime(), "{id}");
    m
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

/// The whole conformance check of one runtime. `full_bad_args` false checks one bad
/// argument only (JRuby runs the same probe source as MRI, which gets the full set).
fn conformance(id: RuntimeId, full_bad_args: bool) {
    let t0 = Instant::now();
    let Some(cmd) = prepared(id) else { return };
    let l = list(id, &cmd);
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

    let periodic = l
        .methods
        .iter()
        .find(|m| m.available && m.kind == Kind::Periodic);
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

    let om = &oneshot.method;
    let mut bad = vec![args("--no-such-flag")];
    if full_bad_args {
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
        "{id}: conforms ({} methods, {} bad-argument runs) in {:.1} s",
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

// ---- the harness, with fake probes ------------------------------------------------

const LIST: &str = r#"{"protocol":"sleeplab-probe/1","runtime":"fake","implementation":"sh","runtime_version":"1","clock":"date","platform":"test"}
{"method":"sleep","kind":"oneshot","available":true,"description":"a fake"}
{"method":"gone","kind":"oneshot","available":false,"reason":"not here","description":"a fake"}
end"#;

const MEASUREMENT: &str = r#"{"protocol":"sleeplab-probe/1","runtime":"fake","implementation":"sh","runtime_version":"1","clock":"date","platform":"test","method":"sleep","mode":"oneshot"}
# a note from the probe
cell 1000
s 1500
s 900
done 1000 2
end"#;

/// Writes an executable shell script that answers `--list` with LIST and a
/// measurement with `body`.
fn fake(dir: &Path, name: &str, body: &str) -> ProbeCommand {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --list ]; then\ncat <<'EOF'\n{LIST}\nEOF\nexit 0\nfi\n{body}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    ProbeCommand::new(path)
}

fn target(id: &str, command: ProbeCommand) -> Target {
    Target {
        id: id.into(),
        title: id.into(),
        protocol_runtime: Some("fake".into()),
        preparation: Preparation::Ready {
            command,
            note: "fake".into(),
        },
    }
}

#[test]
fn broken_probes_are_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good_body = format!("cat <<'EOF'\n{MEASUREMENT}\nEOF");
    let targets = vec![
        target("crash", fake(d, "crash", "kill -SEGV $$")),
        target(
            "exit139",
            fake(d, "exit139", "echo 'Segmentation fault' >&2; exit 139"),
        ),
        target("hang", fake(d, "hang", "sleep 600")),
        target("garbage", fake(d, "garbage", "echo hello; echo world")),
        target("flood", fake(d, "flood", "yes")),
        target("missing", ProbeCommand::new(d.join("no-such-probe"))),
        target(
            "unavailable",
            fake(d, "unavailable", "echo 'no timer here' >&2; exit 3"),
        ),
        target("good", fake(d, "good", &good_body)),
        Target {
            id: "absent".into(),
            title: "absent".into(),
            protocol_runtime: None,
            preparation: Preparation::Skipped {
                reason: "absent-runtime not found on PATH".into(),
                install: "apt-get install absent".into(),
            },
        },
    ];
    let config = RuntimesConfig {
        runtimes: targets.iter().map(|t| t.id.clone()).collect(),
        durations_ns: vec![1000],
        quota: ProbeQuota::Count { count: 2 },
        warmup: 0,
        period_ns: 1_000_000,
        ticks: 2,
        json_samples: 10,
        output_cap_bytes: 1 << 20,
        startup_timeout_ns: 1_500_000_000,
        ..RuntimesConfig::default()
    };
    let t0 = Instant::now();
    let out = runtimes::run(&config, targets, true, &Progress::hidden()).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    assert!(out.complete);
    let by_id = |id: &str| out.data.runtimes.iter().find(|r| r.id == id).unwrap();
    let failure = |id: &str| {
        let r = by_id(id);
        assert_eq!(r.status, RuntimeStatus::Measured, "{id}: listing");
        assert_eq!(r.methods.len(), 1, "{id}");
        match &r.methods[0].status {
            MethodStatus::Failed { reason } => reason.clone(),
            other => panic!("{id}: {other:?}"),
        }
    };
    assert!(failure("crash").contains("SIGSEGV"), "{}", failure("crash"));
    assert!(
        failure("exit139").contains("exit code 139: Segmentation fault"),
        "{}",
        failure("exit139")
    );
    assert!(failure("hang").contains("hung"), "{}", failure("hang"));
    assert!(
        failure("garbage").contains("line 1"),
        "{}",
        failure("garbage")
    );
    assert!(
        failure("flood").contains("flooded stdout"),
        "{}",
        failure("flood")
    );
    match &by_id("missing").status {
        RuntimeStatus::Failed { reason } => assert!(reason.contains("cannot start"), "{reason}"),
        other => panic!("missing: {other:?}"),
    }
    assert!(matches!(
        &by_id("unavailable").methods[0].status,
        MethodStatus::Unavailable { reason } if reason == "no timer here"
    ));
    assert!(matches!(
        by_id("absent").status,
        RuntimeStatus::Skipped { .. }
    ));
    // The good one was measured despite everything around it.
    let good = by_id("good");
    assert_eq!(good.methods[0].status, MethodStatus::Measured);
    let cell = &good.methods[0].cells[0];
    assert_eq!(cell.summary.count, 2);
    assert_eq!(cell.summary.early_count, 1);
    assert_eq!(cell.notes, ["a note from the probe"]);
    assert_eq!(good.unavailable.len(), 1);
    assert_eq!(good.unavailable[0].method, "gone");
    // Everything is in the rendering.
    let text = runtimes::render(&out.data);
    for needle in [
        "SIGSEGV",
        "hung",
        "flooded",
        "cannot start",
        "skipped",
        "apt-get install absent",
        "good sleep @ 1.000 µs: 1 of 2",
    ] {
        assert!(text.contains(needle), "{needle:?} not in\n{text}");
    }
}
