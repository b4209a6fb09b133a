//! Helpers shared by the CLI integration tests: the binary, the repository root,
//! validation against the committed result schema (and a result file's round trip), the
//! pandas checks of CSV files, the check of a bad invocation ([`exit2`]), and a synthetic
//! `explain` stage for the report ([`explain`]), what the traced tests share
//! ([`tracing`]), and the process table ([`procs`]).

#![allow(dead_code)] // each test binary uses its own subset

pub mod exit2;
pub mod explain;
pub mod monitor;
pub mod procs;
pub mod tracing;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The `sleeplab` binary of this build.
pub fn sleeplab() -> Command {
    Command::cargo_bin("sleeplab").expect("the sleeplab binary is built")
}

/// `runtimes` arguments that keep the Python probe busy in 100 ms sleeps (for as many
/// calls as a `--count` after them says): a run to stop while a probe measures.
pub const PYTHON_SLEEPING: [&str; 6] = [
    "--runtimes",
    "python",
    "--methods",
    "time.sleep",
    "--durations",
    "100ms",
];

/// A dependency a test needs is missing: under CI (`CI` set; `scripts/test.sh` sets it,
/// since it installs every dependency first) the test fails; elsewhere it says why it
/// checks nothing and the caller returns.
pub fn missing_dependency(what: &str) {
    if std::env::var_os("CI").is_some() {
        panic!(
            "{what} is missing, and under CI (`CI` set) a test that cannot run fails: scripts/install-deps.sh installs it"
        );
    }
    eprintln!(
        "SKIPPED: {what} is missing (scripts/install-deps.sh installs it; with `CI` set this fails)"
    );
}

/// The first executable named `name` on `PATH`.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed `spec/result.schema.json` (sweep_cli checks it equals the generated one).
pub fn committed_schema() -> serde_json::Value {
    let text = std::fs::read_to_string(repo_root().join("spec/result.schema.json"))
        .expect("spec/result.schema.json is readable");
    serde_json::from_str(&text).expect("the committed schema is JSON")
}

/// Fails with the first schema errors unless `instance` validates against the committed
/// result schema; `what` names the instance in the message.
pub fn assert_matches_schema(instance: &serde_json::Value, what: &str) {
    let schema = committed_schema();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .take(5)
        .collect();
    assert!(errors.is_empty(), "{what}: schema errors: {errors:?}");
}

/// Loads the result file at `path`, failing unless it validates against the committed
/// result schema and round-trips through the model (loaded and serialised again, it is
/// the same JSON).
pub fn load_checked_result(path: &Path) -> sleeplab_cli::model::ResultFile {
    let text = std::fs::read_to_string(path).expect("the result file is readable");
    let instance: serde_json::Value = serde_json::from_str(&text).expect("the result is JSON");
    assert_matches_schema(&instance, "result");
    let result = sleeplab_cli::model::load_result(path).expect("the result loads");
    assert_eq!(serde_json::to_value(&result).unwrap(), instance);
    result
}

/// Runs `python3 -c script` (a pandas check of a CSV), failing unless it succeeds.
pub fn assert_python_check(script: &str) {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "pandas check failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits for `child` to exit, checking every 5 ms; once `limit` has passed since `t0`,
/// kills it and returns `None` (it hung).
pub fn exit_within(
    child: &mut std::process::Child,
    t0: std::time::Instant,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return Some(st);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Starts the binary with `args` in the background: no stdin, stdout discarded, stderr
/// piped for the caller to read (its progress and errors).
pub fn spawn_piping_stderr<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> std::process::Child {
    use std::process::Stdio;
    std::process::Command::new(env!("CARGO_BIN_EXE_sleeplab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sleeplab starts")
}

/// Runs `sleeplab ARGS --json JSON --csv CSV`, fails unless it succeeds, and returns its
/// stdout.
pub fn run_saving<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    json: &Path,
    csv: &Path,
) -> String {
    stdout_of(
        sleeplab()
            .args(args)
            .arg("--json")
            .arg(json)
            .arg("--csv")
            .arg(csv),
    )
}

/// Runs `cmd`, fails unless it succeeds, and returns its stdout.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("sleeplab runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs `sleeplab ARGS -o DIR` (`report` or `compare`), fails unless it succeeds, and
/// returns the page it wrote, `DIR/index.html`.
pub fn page<S: AsRef<std::ffi::OsStr>>(args: &[S], dir: &Path) -> String {
    stdout_of(sleeplab().args(args).arg("-o").arg(dir));
    std::fs::read_to_string(dir.join("index.html")).expect("index.html is written")
}
