//! The probe harness, with fake probes (shell scripts): one that crashes, one that
//! hangs, one that prints garbage, one that floods stdout, one that is missing — each is
//! reported and the run goes on; `--timestamps` is passed only to a probe that offers
//! it. (The real probes' conformance is `probes_conformance.rs`.)

use sleeplab_cli::experiments::Wording;
use sleeplab_cli::experiments::runtimes::{
    self, MethodStatus, ProbeQuota, RuntimeStatus, RuntimesConfig, RuntimesOutcome, Target,
};
use sleeplab_cli::probe::catalog::Preparation;
use sleeplab_cli::probe::command::ProbeCommand;
use sleeplab_stats::Progress;
use std::path::Path;
use std::time::{Duration, Instant};

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
    fake_listing(dir, name, LIST, body)
}

/// [`fake`] with its own `--list` output.
fn fake_listing(dir: &Path, name: &str, list: &str, body: &str) -> ProbeCommand {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --list ]; then\ncat <<'EOF'\n{list}\nEOF\nexit 0\nfi\n{body}\n"
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

/// Lists and measures `targets` under `config`, quietly (hints by their names).
fn measure(config: &RuntimesConfig, targets: Vec<Target>) -> RuntimesOutcome {
    runtimes::run(config, targets, true, &Progress::hidden(), Wording::NAMES).unwrap()
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
    let out = measure(&config, targets);
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
    let text = runtimes::render(&out.data, sleeplab_account::Machine::Host);
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

/// A fake probe's measurement header, with `extra` fields after `mode`.
fn fake_header(extra: &str) -> String {
    format!(
        r#"{{"protocol":"sleeplab-probe/1","runtime":"fake","implementation":"sh","runtime_version":"1","clock":"date","platform":"test","method":"sleep","mode":"oneshot"{extra}}}"#
    )
}

/// `RuntimesConfig::timestamps` passes `--timestamps` to the probes whose `--list`
/// offers it, and only to them; their starts and measuring thread (checked to be one
/// of the probe's) are kept in the run's data, not in the JSON.
#[test]
fn timestamps_are_asked_only_of_probes_that_offer_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let offering = LIST.replacen(
        r#""platform":"test""#,
        r#""platform":"test","options":["timestamps"]"#,
        1,
    );
    // The shell is the probe process: `$$` is its pid, its only thread.
    let body = |check: &str, extra: &str, cell: &str| {
        format!(
            "{check}\ncat <<EOF\n{}\ncell 1000\n{cell}done 1000 2\nend\nEOF",
            fake_header(extra)
        )
    };
    let stamped_body = body(
        "case \" $* \" in *\" --timestamps \"*) ;; *) echo 'not asked for timestamps' >&2; exit 9;; esac",
        r#","tid":$$,"timestamps":true"#,
        "s 1500 7000000\ns 900 7002000\n",
    );
    // Offers nothing: --timestamps would be an unknown flag (exit 2).
    let plain_body = body(
        "case \" $* \" in *\" --timestamps \"*) echo \"unknown flag '--timestamps'\" >&2; exit 2;; esac",
        r#","tid":$$"#,
        "s 1500\ns 900\n",
    );
    // Names a thread that is not its own (pid 1's).
    let wrong_tid_body = body(
        "",
        r#","tid":1,"timestamps":true"#,
        "s 1500 7000000\ns 900 7002000\n",
    );
    let targets = || {
        vec![
            target(
                "stamped",
                fake_listing(d, "stamped", &offering, &stamped_body),
            ),
            target("plain", fake(d, "plain", &plain_body)),
            target(
                "wrongtid",
                fake_listing(d, "wrongtid", &offering, &wrong_tid_body),
            ),
        ]
    };
    let config = RuntimesConfig {
        runtimes: vec!["stamped".into(), "plain".into(), "wrongtid".into()],
        durations_ns: vec![1000],
        quota: ProbeQuota::Count { count: 2 },
        warmup: 0,
        json_samples: 10,
        startup_timeout_ns: 10_000_000_000,
        timestamps: true,
        ..RuntimesConfig::default()
    };
    let out = measure(&config, targets());
    let method = |id: &str| {
        let r = out.data.runtimes.iter().find(|r| r.id == id).unwrap();
        assert_eq!(r.methods.len(), 1, "{id}");
        r.methods[0].clone()
    };
    let stamped = method("stamped");
    assert_eq!(
        stamped.status,
        MethodStatus::Measured,
        "{:?}",
        stamped.notes
    );
    assert_eq!(stamped.timing.len(), stamped.cells.len());
    let t = &stamped.timing[0];
    assert_eq!(t.starts_ns.as_deref(), Some(&[7_000_000, 7_002_000][..]));
    assert_eq!(t.warmup_starts_ns.as_deref(), Some(&[][..]));
    assert!(t.pid.is_some() && t.tid == t.pid, "{t:?}");
    // Without the option the probe was not given the flag, and its tid is kept.
    let plain = method("plain");
    assert_eq!(plain.status, MethodStatus::Measured, "{:?}", plain.status);
    assert_eq!(plain.timing[0].starts_ns, None);
    assert!(plain.timing[0].tid.is_some() && plain.timing[0].tid == plain.timing[0].pid);
    // A thread that is not the probe's is dropped with a note.
    let wrong = method("wrongtid");
    assert_eq!(wrong.status, MethodStatus::Measured);
    assert_eq!(wrong.timing[0].tid, None);
    assert!(
        wrong
            .notes
            .iter()
            .any(|n| n.contains("named thread 1") && n.contains("a thread of process 1,")),
        "{:?}",
        wrong.notes
    );
    // Nothing of it reaches the JSON.
    let json = serde_json::to_string(&out.data).unwrap();
    assert!(
        !json.contains("7002000") && !json.contains("starts"),
        "{json}"
    );

    // Not asked for: no probe gets the flag (the stamped one would exit 9).
    let config = RuntimesConfig {
        timestamps: false,
        ..config
    };
    let out = measure(&config, targets());
    let r = out
        .data
        .runtimes
        .iter()
        .find(|r| r.id == "stamped")
        .unwrap();
    match &r.methods[0].status {
        MethodStatus::Failed { reason } => assert!(reason.contains("exit code 9"), "{reason}"),
        other => panic!("stamped without timestamps: {other:?}"),
    }
    let plain = out.data.runtimes.iter().find(|r| r.id == "plain").unwrap();
    assert_eq!(plain.methods[0].status, MethodStatus::Measured);
}
