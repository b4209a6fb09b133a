//! Bad input, one table through the real binary for every command: durations
//! (negative, NaN, inf, 1e400, empty, `1.5.3ms`, unknown units, empty list elements,
//! beyond a day), counts (0, negative, huge), unknown names, conflicting flags,
//! unwritable or directory output paths, and for `report`/`compare` missing, empty,
//! truncated, non-JSON, wrong-schema-version and wrong-experiment files. Every case must
//! exit 2 with exactly one line on stderr that names the bad value, print nothing on
//! stdout, not panic (`common::exit2`), and leave its output directory empty (no
//! half-written file, no `.sleeplab-*` temp file). Every subcommand has a case.

mod common;

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

#[path = "bad_input/cases.rs"]
mod cases;

use cases::{CASES, Case};

/// Runs the binary, asserting success; for making fixtures.
fn make(args: &[&str]) {
    let out = Command::new(bin()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes the fixture files into `dir`: a real sweep and simulate result, and broken ones.
fn fixtures(dir: &Path) {
    let p = |name: &str| dir.join(name).display().to_string();
    make(&[
        "sweep",
        "-q",
        "--mechanisms",
        "yield",
        "--durations",
        "0",
        "--iterations",
        "3",
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--json",
        &p("sweep.json"),
    ]);
    make(&[
        "simulate",
        "-q",
        "--strategies",
        "std-sleep",
        "--intervals",
        "1ms",
        "--periods",
        "1ms",
        "--sleeps",
        "3",
        "--warmup",
        "0",
        "--json",
        &p("simulate.json"),
    ]);
    let good = std::fs::read_to_string(dir.join("sweep.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&good).unwrap();
    let with = |key: &str, v: serde_json::Value| {
        let mut x = value.clone();
        x[key] = v;
        x.to_string()
    };
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("empty.json", vec![]),
        ("blank.json", b"  \n\t\n".to_vec()),
        ("truncated.json", good.as_bytes()[..good.len() / 2].to_vec()),
        ("notjson.json", b"hello, world\n".to_vec()),
        ("array.json", b"[1, 2, 3]".to_vec()),
        ("noversion.json", b"{\"experiment\": \"sweep\"}".to_vec()),
        ("v999.json", with("schema_version", 999.into()).into_bytes()),
        (
            "vstring.json",
            with("schema_version", "1".into()).into_bytes(),
        ),
        (
            "wrongexp.json",
            with("experiment", "teleport".into()).into_bytes(),
        ),
        (
            "baddata.json",
            with("data", serde_json::json!({"cells": "none"})).into_bytes(),
        ),
        ("binary.json", b"\xff\xfe\x00\x01garbage".to_vec()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::create_dir(dir.join("dir")).unwrap();
    std::fs::write(dir.join("file"), "x").unwrap();
    std::fs::write(dir.join("hello.json"), "{\"hello\": 1}").unwrap();
    // A probe output that breaks the protocol (`runtimes --saved`).
    std::fs::copy(
        common::repo_root().join("spec/vectors/invalid/count_mismatch.txt"),
        dir.join("count_mismatch.txt"),
    )
    .unwrap();
    // A real survey (the report fixture), and files made from it.
    let survey = std::fs::read_to_string(
        common::repo_root().join("crates/sleeplab-cli/tests/fixtures/survey.json"),
    )
    .unwrap();
    std::fs::write(dir.join("survey.json"), &survey).unwrap();
    std::fs::write(
        dir.join("survey-truncated.json"),
        &survey[..survey.len() / 2],
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&survey).unwrap();
    for stage in ["sweep", "timers"] {
        let result = v["data"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["experiment"] == stage)
            .unwrap()
            .to_string();
        std::fs::write(dir.join(format!("survey-{stage}.json")), result).unwrap();
    }
    v["schema_version"] = 99.into();
    std::fs::write(dir.join("survey-v99.json"), v.to_string()).unwrap();
    // Another run's report: an index and the results it was rendered from.
    let other = dir.join("other-report");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("index.html"), "<html></html>").unwrap();
    std::fs::copy(dir.join("survey.json"), other.join("results.json")).unwrap();
}

/// An argument (or the text to name) with its placeholder filled in.
fn expand(a: &str, out: &Path, fx: &Path) -> String {
    match a {
        "@J" => out.join("out.json").display().to_string(),
        "@C" => out.join("out.csv").display().to_string(),
        "@D" => out.display().to_string(),
        "@O" => out.join("report").display().to_string(),
        "@M" => out.join("no/such/dir/out.json").display().to_string(),
        a if a.starts_with('%') => {
            let name = &a[1..];
            let file = if fx.join(name).exists() {
                name.to_string()
            } else {
                format!("{name}.json")
            };
            fx.join(file).display().to_string()
        }
        a => a.to_string(),
    }
}

/// Runs one case; returns what is wrong with its outcome, if anything.
fn check(c: &Case, root: &Path, fx: &Path, i: usize) -> Option<String> {
    let out = root.join(format!("case{i}"));
    std::fs::create_dir(&out).unwrap();
    let args: Vec<String> = c.args.iter().map(|a| expand(a, &out, fx)).collect();
    let o = Command::new(bin())
        .args(&args)
        .current_dir(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut wrong = common::exit2::exit_2_problems(&o, &expand(c.names, &out, fx));
    let left: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if !left.is_empty() {
        wrong.push(format!("left files behind: {left:?}"));
    }
    (!wrong.is_empty()).then(|| format!("{args:?}: {}\n    stderr: {stderr}", wrong.join("; ")))
}

#[test]
fn every_bad_invocation_exits_2_with_one_line_and_leaves_no_file() {
    let root = tempfile::tempdir().unwrap();
    let fx = root.path().join("fixtures");
    std::fs::create_dir(&fx).unwrap();
    fixtures(&fx);
    let fixture_files = listing(&fx);
    // Two workers: each case is a process start and a validation.
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (root, fx) = (root.path(), fx.as_path());
                s.spawn(move || {
                    CASES
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == w)
                        .filter_map(|(i, c)| check(c, root, fx, i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    // The fixtures are read, never written.
    assert_eq!(listing(&fx), fixture_files, "fixture directory changed");
    eprintln!(
        "bad input: {} invocations tried, {} wrong",
        CASES.len(),
        failures.len()
    );
    assert!(CASES.len() >= 200);
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// The files of a directory with their sizes, sorted.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The table has a case for every subcommand (and for the survey's options at the top).
#[test]
fn every_command_has_a_bad_input_case() {
    let commands: BTreeSet<String> = sleeplab_cli::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    let covered: BTreeSet<String> = CASES.iter().map(|c| c.args[0].to_string()).collect();
    let missing: Vec<&String> = commands.difference(&covered).collect();
    assert!(missing.is_empty(), "no bad-input case for {missing:?}");
    assert!(
        covered.contains("--quick"),
        "no case for the survey's options"
    );
}
