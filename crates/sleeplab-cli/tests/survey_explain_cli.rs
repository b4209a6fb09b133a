//! The survey's `explain` stage through the real binary: run where the kernel can be
//! traced (as root, as CI runs), and skipped with a note as `nobody`. Apart from
//! `explain_cli.rs` because the stage loads every CPU: cargo runs test binaries one after
//! another, so it cannot disturb that file's measurements.

mod common;
use common::tracing::{AS_NOBODY, nobodys_dir, traceable};

use sleeplab_cli::experiments::explain::ExplainData;
use sleeplab_cli::model::{ExperimentData, ResultFile, StageState};
use std::path::Path;
use std::process::{Command, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

/// Runs `sleeplab -q --quick --stages explain -o DIR` (through `prefix`, e.g. setpriv);
/// its output and the survey's result.
fn survey_explain(prefix: &[&str], dir: &Path) -> (String, ResultFile) {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    let out = cmd
        // --verbose: the findings and notes these tests read follow the answer.
        .args(["-q", "--quick", "--verbose", "--stages", "explain", "-o"])
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let result = common::load_checked_result(&dir.join("results.json"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), result)
}

/// The survey's explain stage, traced: 40 wakes per cell at --quick, idle and loaded,
/// its section and charts in the report, each cell's sentence folded there.
#[test]
fn the_survey_explains_when_the_kernel_can_be_traced() {
    if !traceable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_stdout, result) = survey_explain(&[], dir.path());
    let ExperimentData::Survey(s) = &result.data else {
        panic!("a survey");
    };
    assert_eq!(s.stages[0].name, "explain");
    assert_eq!(s.stages[0].state, StageState::Ok);
    let data = <&ExplainData>::try_from(&s.results[0].data).unwrap();
    assert!(data.tracing.kernel);
    assert!(data.cells.iter().all(|c| c.explanation.wakes == 40));
    assert!(data.cells.iter().any(|c| c.mechanism == "precise"));
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("id=\"explain\"") && html.contains("data-chart=\"explain-cells\""));
    assert!(
        html.contains("late at the median"),
        "each cell's sentence, folded"
    );
}

/// Run as `nobody`, the survey skips its explain stage, and says why and what to run in
/// its result's notes and after its findings.
#[test]
fn an_unprivileged_survey_skips_explain_with_a_note() {
    let Some(dir) = nobodys_dir() else {
        return;
    };
    let (stdout, result) = survey_explain(&AS_NOBODY, dir.path());
    let ExperimentData::Survey(s) = &result.data else {
        panic!("a survey");
    };
    let StageState::Skipped { reason } = &s.stages[0].state else {
        panic!("not skipped: {:?}", s.stages[0]);
    };
    assert!(reason.contains("kernel tracing unavailable"), "{reason}");
    assert!(s.results.is_empty());
    let note = format!("stage explain skipped: {reason}");
    assert_eq!(result.notes, vec![note]);
    // The terminal wraps long notes: compare the words.
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Notes: • stage explain skipped: kernel tracing unavailable")
            && words.contains("`sudo sleeplab explain`"),
        "{stdout}"
    );
}
