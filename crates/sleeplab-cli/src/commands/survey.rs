//! `sleeplab survey`, and `sleeplab` with no arguments: every experiment in short, then
//! a report directory (`index.html`, `results.json`, `samples.csv`) and the findings.

use super::args::{self, List};
use super::hints::WORDING;
use super::outputs::{DEFAULT_DIR, prepare_dir};
use crate::error::UsageError;
use crate::interrupt::EXIT_INTERRUPTED;
use crate::model::{ResultFile, RunStart, host_noise, write_json};
use crate::parse::Names;
use crate::report::{self, Results, units};
use crate::settings::ThreadSettings;
use crate::survey::{self, Level, PlanEnv, StagePlan, StageState, StageStatus, SurveyOutcome};
use clap::Args;
use sleeplab_stats::{atomic_write, new_table};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `sleeplab survey` (also the arguments of `sleeplab` without a subcommand).
#[derive(Debug, Clone, Args)]
pub struct SurveyArgs {
    /// The thorough version: more durations, loads and samples, and a tune stage (what
    /// timer slack and keeping the CPU awake do to a wait) (several minutes).
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,
    /// With --full, as root: the tune stage also tries every system-wide setting that
    /// applies (each undone after it, and on every exit), not only the per-process ones.
    #[arg(long, requires = "full")]
    pub tune_system: bool,
    /// A glance (QUICK_RUN_TIME).
    #[arg(long, help = format!("A glance ({})", survey::QUICK_RUN_TIME))]
    pub quick: bool,
    /// The report directory: index.html, results.json and samples.csv go there.
    #[arg(short = 'o', long = "output", value_name = "DIR", default_value = DEFAULT_DIR)]
    pub output: PathBuf,
    /// Run only these stages, comma-separated (e.g. sweep,sweep-slack).
    #[arg(long, value_name = "LIST", value_parser = args::names("stage list"))]
    pub stages: Option<List<String>>,
    /// After the answer, print the sweep's table, every finding and the notes too (the
    /// report holds them either way).
    #[arg(short, long)]
    pub verbose: bool,
}

/// None: the survey saves a report directory (`-o`), not `--json` (its Ctrl-C test is its own).
pub const LONG_RUN: Option<&str> = None;

impl Default for SurveyArgs {
    fn default() -> Self {
        Self {
            full: false,
            tune_system: false,
            quick: false,
            output: PathBuf::from(DEFAULT_DIR),
            stages: None,
            verbose: false,
        }
    }
}

impl SurveyArgs {
    /// The first survey option given on the command line, if any (they are accepted at
    /// the top level for `sleeplab --quick`, and must not be mixed with a subcommand).
    pub fn given_flag(&self) -> Option<&'static str> {
        if self.full {
            Some("--full")
        } else if self.tune_system {
            Some("--tune-system")
        } else if self.quick {
            Some("--quick")
        } else if self.stages.is_some() {
            Some("--stages")
        } else if self.verbose {
            Some("--verbose")
        } else if self.output != Path::new(DEFAULT_DIR) {
            Some("--output")
        } else {
            None
        }
    }

    /// The level the flags ask for.
    pub fn level(&self) -> Level {
        if self.full {
            Level::Full
        } else if self.quick {
            Level::Quick
        } else {
            Level::Normal
        }
    }
}

/// Keeps the planned stages named in `only` (all when `None`), or fails naming the
/// unknown one.
pub fn select(
    plan: Vec<StagePlan>,
    only: Option<&List<String>>,
) -> Result<Vec<StagePlan>, UsageError> {
    let Some(only) = only else {
        return Ok(plan);
    };
    let names: Vec<&str> = plan.iter().map(|s| s.name).collect();
    let known = Names::new("stage", names.iter().copied())
        .otherwise(format!("stages here: {}", names.join(", ")));
    known.resolve(&only.0)?;
    Ok(plan
        .into_iter()
        .filter(|s| only.0.iter().any(|n| n == s.name))
        .collect())
}

/// Runs `sleeplab survey`.
pub fn run(args: &SurveyArgs, quiet: bool) -> anyhow::Result<i32> {
    let level = args.level();
    let start = RunStart::now();
    let env = PlanEnv::detect(start.fingerprint.cpu_count);
    let mut stages = survey::plan(level, &env);
    if args.tune_system {
        for s in stages.iter_mut().filter(|s| s.name == "tune") {
            *s = survey::tune_stage(env.cpus, true);
        }
    }
    let stages = select(stages, args.stages.as_ref())?;
    prepare_dir(&args.output)?;
    execute(start, level, &stages, args, quiet)
}

/// Runs the planned `stages`, writes the report directory (`args.output`), prints the
/// answer (and with `args.verbose` the findings) and returns the exit code (0 ok, 1 a
/// stage failed, 130 interrupted).
fn execute(
    start: RunStart,
    level: Level,
    stages: &[StagePlan],
    args: &SurveyArgs,
    quiet: bool,
) -> anyhow::Result<i32> {
    let dir = args.output.as_path();
    let planned = survey::planned_ms(stages);
    if !quiet {
        eprintln!(
            "sleeplab survey ({}, about {} s): {} stages; Ctrl-C stops and keeps what was measured",
            level.name(),
            planned.div_ceil(1000),
            stages.len()
        );
    }
    let n = stages.len();
    let mut on_stage = |i: usize, status: Option<&StageStatus>| {
        if quiet {
            return;
        }
        match status {
            None => eprintln!(
                "[{}/{n}] {}: {} (~{} s)",
                i + 1,
                stages[i].name,
                stages[i].title,
                stages[i].budget_ms.div_ceil(1000)
            ),
            Some(s) => eprintln!(
                "      {} in {:.1} s{}",
                s.state.label(),
                s.elapsed_ms as f64 / 1000.0,
                detail(&s.state)
            ),
        }
    };
    // The host's noise once before and once after the whole survey (not per stage).
    let cpus = host_noise::cpus_to_probe(None, start.fingerprint.cpu_count);
    let mut start = start.probing(cpus);
    let outcome = survey::run(level, stages, &start, quiet, WORDING, &mut on_stage);
    start.probe_after();
    let (interrupted, complete) = (outcome.interrupted, outcome.complete);
    let (result, csv) = finish(start, outcome)?;
    let index = write_dir(dir, &result, &csv)?;
    print!("{}", summary(&result, &index, args.verbose));
    if interrupted {
        eprintln!("sleeplab: interrupted; the report holds what was measured until then");
        return Ok(EXIT_INTERRUPTED);
    }
    if !complete {
        eprintln!(
            "sleeplab: a stage failed (see above and in the report); the others' results are kept"
        );
        return Ok(1);
    }
    Ok(0)
}

fn detail(state: &StageState) -> String {
    match state {
        StageState::Failed { error } => format!(": {error}"),
        StageState::Skipped { reason } => format!(": {reason}"),
        _ => String::new(),
    }
}

/// The survey's result file and its samples CSV (written from the stages' raw samples
/// before they move into the result, which keeps only their JSON share).
fn finish(start: RunStart, outcome: SurveyOutcome) -> anyhow::Result<(ResultFile, Vec<u8>)> {
    let csv = survey::samples_csv(&outcome.data)?;
    let mut notes = Vec::new();
    for s in &outcome.data.stages {
        match &s.state {
            StageState::Failed { error } => notes.push(format!("stage {} failed: {error}", s.name)),
            StageState::Skipped { reason } => {
                notes.push(format!("stage {} skipped: {reason}", s.name))
            }
            _ => {}
        }
    }
    let result = start.finish(
        outcome.data.into(),
        ThreadSettings::default().record(),
        outcome.complete,
        notes,
    );
    Ok((result, csv))
}

/// Writes `results.json`, `samples.csv` and `index.html` into `dir`; returns the
/// path of `index.html`.
pub fn write_dir(dir: &Path, result: &ResultFile, csv: &[u8]) -> anyhow::Result<PathBuf> {
    let (json, samples) = (dir.join("results.json"), dir.join("samples.csv"));
    write_json(&json, result)?;
    atomic_write(&samples, csv)?;
    report::readable(&json);
    report::readable(&samples);
    report::write_index(dir, &report::render(result, WORDING))
}

/// What the terminal shows at the end: the answer (one screen: how long a sleep takes
/// here, the way to wait this machine rewards, the largest causes of lateness), then with
/// `verbose` the at-a-glance table, every finding and the notes, and the report's path.
pub fn summary(result: &ResultFile, index: &Path, verbose: bool) -> String {
    let r = Results::of(result);
    let mut out = String::new();
    let answer = report::Answer::of(&r).terminal();
    if !answer.is_empty() {
        let _ = write!(out, "\n{answer}");
    }
    if verbose {
        out.push_str(&details(&r, result));
    } else if !result.notes.is_empty() || !report::findings(&r, super::hints::WORDING).is_empty() {
        let _ = writeln!(
            out,
            "\n(every finding and note: in the report, or here with --verbose)"
        );
    }
    let shown = std::fs::canonicalize(index).unwrap_or_else(|_| index.to_path_buf());
    let _ = writeln!(
        out,
        "\nReport: {}\n        (results.json and samples.csv next to it)",
        shown.display()
    );
    out
}

/// The sweep's at-a-glance table, every finding and the notes (`--verbose`).
fn details(r: &Results<'_>, result: &ResultFile) -> String {
    let mut out = String::new();
    if let Some(m) = r.main_sweep() {
        let reqs = m.requests();
        let mut header = vec!["median, no load".to_string()];
        header.extend(reqs.iter().map(|&d| units::ns(d as f64)));
        let mut t = new_table(header);
        for mech in m.mechanisms() {
            let mut row = vec![mech.to_string()];
            row.extend(reqs.iter().map(|&d| {
                m.cell(mech, d, 0)
                    .map_or("–".into(), |c| units::ns(c.summary.median_ns))
            }));
            t.add_row(row);
        }
        let _ = writeln!(out, "\n{t}");
    }
    let f = report::findings(r, super::hints::WORDING);
    if !f.is_empty() {
        let _ = writeln!(out, "\nWhat this machine says:");
        for (i, finding) in f.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}",
                wrap(&format!("{:>2}. ", i + 1), &finding.text, 100)
            );
        }
    }
    if !result.notes.is_empty() {
        let _ = writeln!(out, "\nNotes:");
        for n in &result.notes {
            let _ = writeln!(out, "{}", wrap("  • ", n, 100));
        }
    }
    out
}

/// `text` wrapped at `width` columns, the first line after `lead`, the others indented
/// to match (the report's wrapping: a number keeps its unit).
fn wrap(lead: &str, text: &str, width: usize) -> String {
    report::wrap(lead, text, width, lead.chars().count()).join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The survey's stdout on a real run (the fixture): the answer in one screen of at
    /// most 24 lines of at most 100 columns; the details only with `--verbose`.
    #[test]
    fn the_survey_answers_in_one_screen() {
        let top = sleeplab_results::testdata::survey_fixture();
        let out = summary(&top, Path::new("/tmp/sleeplab-report/index.html"), false);
        println!("{out}");
        assert!(
            out.lines().count() <= 24,
            "{} lines:\n{out}",
            out.lines().count()
        );
        for l in out.lines() {
            assert!(
                l.chars().count() <= 100,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        assert!(out.contains("Sleeping: "), "{out}");
        assert!(out.contains("Report: "), "{out}");
        assert!(!out.contains("What this machine says:"), "{out}");
        let verbose = summary(&top, Path::new("/tmp/sleeplab-report/index.html"), true);
        assert!(verbose.starts_with(&out[..out.find("\n(every finding").unwrap()]));
        assert!(verbose.contains("What this machine says:"), "{verbose}");
    }

    #[test]
    fn wraps_with_a_hanging_indent() {
        let s = wrap(" 1. ", "aaa bbb ccc ddd", 12);
        assert_eq!(s, " 1. aaa bbb\n    ccc ddd");
    }

    #[test]
    fn unknown_stage_names_the_closest() {
        let env = PlanEnv {
            cpus: 2,
            timer_slack_ns: 50_000,
            mechanisms: vec![("nanosleep".into(), true, "sleep".into())],
            timer_mechanisms: vec![],
            untraceable: None,
        };
        let plan = survey::plan(Level::Quick, &env);
        let e = select(plan.clone(), Some(&List(vec!["swep".into()]))).unwrap_err();
        assert_eq!(e.0, "unknown stage \"swep\" (did you mean sweep?)");
        let e = select(plan.clone(), Some(&List(vec!["zzzzzzzz".into()]))).unwrap_err();
        assert!(
            e.0.contains("(stages here: sweep, sweep-slack, short"),
            "{}",
            e.0
        );
        let only = select(plan, Some(&List(vec!["sweep".into()]))).unwrap();
        assert_eq!(only.len(), 1);
    }
}
