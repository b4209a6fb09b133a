//! Helpers shared by the CLI integration tests: the binary, the repository root,
//! validation against the committed result schema, and the check of a bad invocation
//! ([`exit2`]).

#![allow(dead_code)] // each test binary uses its own subset

pub mod exit2;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The `sleeplab` binary of this build.
pub fn sleeplab() -> Command {
    Command::cargo_bin("sleeplab").expect("the sleeplab binary is built")
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
