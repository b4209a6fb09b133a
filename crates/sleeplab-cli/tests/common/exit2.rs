//! The one check of a bad invocation: exit code 2, exactly one line on stderr that
//! starts with `sleeplab: ` and names the bad value, no panic, nothing on stdout.

use std::process::Output;

/// What is wrong with the outcome of a bad invocation (empty: nothing).
pub fn exit_2_problems(o: &Output, needle: &str) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut wrong = Vec::new();
    if o.status.code() != Some(2) {
        wrong.push(format!("exit {:?}, not 2", o.status.code()));
    }
    if lines.len() != 1 {
        wrong.push(format!("{} lines on stderr, not 1", lines.len()));
    }
    if !stderr.contains(needle) {
        wrong.push(format!("the error does not name {needle:?}"));
    }
    if !stderr.starts_with("sleeplab: ") {
        wrong.push("the error does not start with `sleeplab: `".into());
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        wrong.push("panicked".into());
    }
    if !stdout.trim().is_empty() {
        wrong.push(format!("printed on stdout: {:?}", stdout.lines().next()));
    }
    wrong
}

/// Fails unless `o` is the outcome of a bad invocation naming `needle`.
pub fn assert_exit_2(o: &Output, needle: &str, what: &str) {
    let wrong = exit_2_problems(o, needle);
    assert!(
        wrong.is_empty(),
        "{what}: {}\n    stderr: {}",
        wrong.join("; "),
        String::from_utf8_lossy(&o.stderr)
    );
}
