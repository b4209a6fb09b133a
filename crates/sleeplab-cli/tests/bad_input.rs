//! Bad input through the real binary for every command: one table of hand-written
//! cases (durations: negative, NaN, inf, 1e400, empty, `1.5.3ms`, unknown units, empty
//! list elements, beyond a day; counts: 0, negative, huge; unknown names, conflicting
//! flags, unwritable or directory output paths, and for `report`/`compare` missing, empty,
//! truncated, non-JSON, wrong-schema-version and wrong-experiment files), and a walk of
//! clap's command tree that gives every argument of every subcommand that takes a value a
//! bad one (`walk`). Every case must exit 2 with exactly one line on stderr that names the
//! bad value, print nothing on stdout, not panic (`common::exit2`), and leave its output
//! directory empty (no half-written file, no `.sleeplab-*` temp file). The walk covers a
//! new subcommand or flag with no edit here.

mod common;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

#[path = "bad_input/cases.rs"]
mod cases;

use cases::CASES;

/// Saved traces for `explain --from`: a good one (the capture crate's test data), cut
/// in half, of a future version, and with a description that is not the run's JSON.
fn saved_traces(dir: &Path) {
    use sleeplab_capture::SavedTrace;
    let good = std::fs::read(
        common::repo_root().join("crates/sleeplab-capture/testdata/saved/sleep-2ms.sltrace"),
    )
    .unwrap();
    let trace = SavedTrace::decode(&good).unwrap();
    std::fs::write(dir.join("good.sltrace"), &good).unwrap();
    std::fs::write(dir.join("trace-truncated.sltrace"), &good[..good.len() / 2]).unwrap();
    let mut v2 = good.clone();
    v2[8..10].copy_from_slice(&2u16.to_le_bytes());
    std::fs::write(dir.join("trace-v2.sltrace"), v2).unwrap();
    let badmeta = SavedTrace {
        meta: "{\"format\": \"sleeplab saved trace\"}".into(),
        ..trace
    };
    std::fs::write(dir.join("trace-badmeta.sltrace"), badmeta.encode()).unwrap();
}

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
    saved_traces(dir);
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

/// How long a bad invocation may run: it is refused before anything is measured, so one
/// still running has taken the bad value (and is killed).
const LIMIT: Duration = Duration::from_secs(30);

/// Runs `args` in `dir` with stdout and stderr into `log`.out and `log`.err, killed
/// after [`LIMIT`].
fn output_within_limit(args: &[String], dir: &Path, log: &Path) -> Result<Output, String> {
    let log = |ext: &str| log.with_extension(ext);
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log("out")).unwrap())
        .stderr(std::fs::File::create(log("err")).unwrap())
        .spawn()
        .unwrap();
    let status = common::exit_within(&mut child, Instant::now(), LIMIT)
        .ok_or_else(|| format!("still running after {LIMIT:?} (killed): the value was taken"))?;
    Ok(Output {
        status,
        stdout: std::fs::read(log("out")).unwrap(),
        stderr: std::fs::read(log("err")).unwrap(),
    })
}

/// Runs one case (`args` and `names` with their placeholders) in a directory of its own,
/// `id`; returns what is wrong with its outcome, if anything.
fn check(args: &[&str], names: &str, root: &Path, fx: &Path, id: &str) -> Option<String> {
    let out = root.join(id);
    std::fs::create_dir(&out).unwrap();
    let logs = root.join("logs");
    let _ = std::fs::create_dir(&logs);
    let args: Vec<String> = args.iter().map(|a| expand(a, &out, fx)).collect();
    let o = match output_within_limit(&args, &out, &logs.join(id)) {
        Ok(o) => o,
        Err(why) => return Some(format!("{args:?}: {why}")),
    };
    let stderr = String::from_utf8_lossy(&o.stderr);
    let mut wrong = common::exit2::exit_2_problems(&o, &expand(names, &out, fx));
    let left: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if !left.is_empty() {
        wrong.push(format!("left files behind: {left:?}"));
    }
    (!wrong.is_empty()).then(|| format!("{args:?}: {}\n    stderr: {stderr}", wrong.join("; ")))
}

/// Runs every case on two workers (each case is a process start and a validation) with
/// the fixtures in place; returns the failures. The fixtures are read, never written.
fn run_cases(cases: &[(Vec<&str>, &str)], prefix: &str) -> Vec<String> {
    let root = tempfile::tempdir().unwrap();
    let fx = root.path().join("fixtures");
    std::fs::create_dir(&fx).unwrap();
    fixtures(&fx);
    let fixture_files = listing(&fx);
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (root, fx) = (root.path(), fx.as_path());
                s.spawn(move || {
                    cases
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == w)
                        .filter_map(|(i, (args, names))| {
                            check(args, names, root, fx, &format!("{prefix}{i}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(listing(&fx), fixture_files, "fixture directory changed");
    failures
}

#[test]
fn every_bad_invocation_exits_2_with_one_line_and_leaves_no_file() {
    // Without the `monitor` feature, `sleeplab monitor` takes any arguments and answers
    // one line naming the feature (exit 2): its cases expect that line instead.
    let monitor_built = cfg!(feature = "monitor");
    let cases: Vec<(Vec<&str>, &str)> = CASES
        .iter()
        .map(|c| match (c.args.first(), monitor_built) {
            (Some(&"monitor"), false) => (c.args.to_vec(), "the cargo feature `monitor`"),
            _ => (c.args.to_vec(), c.names),
        })
        .collect();
    let failures = run_cases(&cases, "case");
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

/// The walk's cases. For the top level (the survey's options) and every subcommand: an
/// unknown flag, and for every argument that takes a value (hidden ones aside) a bad
/// value chosen by its value hint — a path (clap's hint for every `PathBuf`): one below
/// a regular file, which no command can read or write; anything else: a word that is no
/// number, duration, list or name — put into the command's long run
/// (`Command::long_runs`: the good arguments of a run; the defaults where there is none)
/// in place of the argument's own value there. An argument clap says needs others that
/// are missing (a required result file, `--replay-mechanism` needing `--replay`) gets
/// them: a path is a real result (the sweep fixture; a pair where it takes several).
fn walk() -> Vec<(Vec<String>, String)> {
    let mut cli = sleeplab_cli::cli::Cli::command();
    // Built, so that clap's value hints and the arguments' actions are filled in.
    cli.build();
    let runs: BTreeMap<String, Option<&str>> = sleeplab_cli::commands::Command::long_runs()
        .into_iter()
        .collect();
    let mut cases = bad_values(&cli, &cli, None, &[]);
    for sub in cli.get_subcommands().filter(|c| c.get_name() != "help") {
        let base: Vec<&str> = runs[sub.get_name()]
            .map(|r| r.split_whitespace().collect())
            .unwrap_or_default();
        cases.extend(bad_values(&cli, sub, Some(sub.get_name()), &base));
    }
    cases
}

/// [`walk`]'s cases for `cmd` (a subcommand of `cli` named `name`, or `cli` itself), its
/// good arguments `base`.
fn bad_values(
    cli: &clap::Command,
    cmd: &clap::Command,
    name: Option<&str>,
    base: &[&str],
) -> Vec<(Vec<String>, String)> {
    // The command's name, its good arguments without `flag`'s (the flag and its value),
    // then `tail`, and what clap says is missing.
    let line = |flag: Option<&str>, tail: &[&str], tested: Option<&clap::Arg>| {
        let mut args: Vec<String> = name.into_iter().map(String::from).collect();
        let mut good = base.iter();
        while let Some(&a) = good.next() {
            if flag == Some(a) {
                good.next();
            } else if !flag.is_some_and(|f| a.starts_with(&format!("{f}="))) {
                args.push(a.to_string());
            }
        }
        args.extend(tail.iter().map(|t| t.to_string()));
        with_what_it_needs(cli, cmd, tested, args, name.is_some() as usize)
    };
    let mut cases = Vec::new();
    // An unknown flag; a command that takes any arguments (`monitor` built without its
    // feature) refuses it with its one line naming the feature.
    let named = match cmd.get_arguments().any(|a| a.is_trailing_var_arg_set()) {
        true => "the cargo feature",
        false => "--no-such-flag",
    };
    cases.push((line(None, &["--no-such-flag"], None), named.into()));
    for arg in cmd.get_arguments() {
        if !arg.get_action().takes_values() || arg.is_hide_set() {
            continue;
        }
        let bad = match arg.get_value_hint() {
            clap::ValueHint::AnyPath
            | clap::ValueHint::FilePath
            | clap::ValueHint::DirPath
            | clap::ValueHint::ExecutablePath => "%file/below-a-file",
            _ => "no-such-value",
        };
        let flag = arg
            .get_long()
            .map(|l| format!("--{l}"))
            .or_else(|| arg.get_short().map(|c| format!("-{c}")));
        let tail: Vec<&str> = flag.as_deref().into_iter().chain([bad]).collect();
        cases.push((line(flag.as_deref(), &tail, Some(arg)), bad.to_string()));
    }
    cases
}

/// Whether `arg` takes several values.
fn takes_several(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// `args` (a bad value for `tested`) with what clap says they miss (required arguments,
/// or arguments another requires), each a real result file (every such argument here is
/// a path), put in at `at` (after the subcommand's name, before any flag that takes
/// several values). One that takes several values gets a pair (`compare`'s two results),
/// or one where `tested` takes several too (`compare --against`: one result a side).
fn with_what_it_needs(
    cli: &clap::Command,
    cmd: &clap::Command,
    tested: Option<&clap::Arg>,
    mut args: Vec<String>,
    at: usize,
) -> Vec<String> {
    for _ in 0..3 {
        let argv = std::iter::once("sleeplab".to_string()).chain(args.iter().cloned());
        let Err(e) = cli.clone().try_get_matches_from(argv) else {
            return args;
        };
        if e.kind() != ErrorKind::MissingRequiredArgument {
            return args;
        }
        let Some(ContextValue::Strings(missing)) = e.get(ContextKind::InvalidArg) else {
            return args;
        };
        for m in missing.clone() {
            let arg = cmd
                .get_arguments()
                .find(|a| a.to_string() == m)
                .unwrap_or_else(|| panic!("{args:?}: clap misses {m}, which is not an argument"));
            assert_eq!(
                arg.get_value_hint(),
                clap::ValueHint::AnyPath,
                "{args:?} needs {m}, which is no path: give the command a LONG_RUN that holds it"
            );
            let files = if takes_several(arg) && !tested.is_some_and(takes_several) {
                2
            } else {
                1
            };
            let flag = arg.get_long().map(|l| format!("--{l}"));
            let files = std::iter::repeat_n("%sweep".to_string(), files);
            args.splice(at..at, flag.into_iter().chain(files));
        }
    }
    panic!("{args:?}: clap still misses arguments")
}

#[test]
fn every_flag_refuses_a_bad_value() {
    let walked = walk();
    let cases: Vec<(Vec<&str>, &str)> = walked
        .iter()
        .map(|(args, names)| (args.iter().map(String::as_str).collect(), names.as_str()))
        .collect();
    let failures = run_cases(&cases, "walk");
    eprintln!(
        "the walk: {} invocations tried, {} wrong",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every subcommand (and the survey's options at the top) has bad-input cases: the
/// table's, and the walk's for every argument that takes a value.
#[test]
fn every_command_has_a_bad_input_case() {
    let commands: BTreeSet<String> = sleeplab_cli::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    let walked: BTreeSet<String> = walk()
        .iter()
        .filter_map(|(args, _)| args.first().cloned())
        .filter(|a| commands.contains(a))
        .collect();
    assert_eq!(walked, commands, "the walk misses a command");
    let covered: BTreeSet<String> = CASES.iter().map(|c| c.args[0].to_string()).collect();
    assert!(
        covered.contains("--quick"),
        "no case for the survey's options"
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
