//! `report`, `compare` and the survey through the real binary (bad input:
//! `bad_input.rs`; Ctrl-C: `interrupt_cli.rs`).
//!
//! The fixture `tests/fixtures/survey.json` is a real `sleeplab --quick` survey of this
//! project's 2-core VM, trimmed (`tests/fixtures/trim.py`). Every assertion is about
//! structure, escaping and exit codes, never about latencies.

mod common;
use common::exit2::assert_exit_2;
use common::*;

use serde_json::Value;
use sleeplab_cli::model::{ExperimentData, ResultFile, load_result};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/survey.json")
}

fn survey() -> ResultFile {
    load_result(&fixture()).expect("the fixture loads")
}

/// The `data-chart` ids of a page, in order.
fn chart_ids(html: &str) -> Vec<String> {
    html.match_indices("data-chart=\"")
        .map(|(i, m)| {
            let rest = &html[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

fn write(path: &Path, r: &ResultFile) {
    std::fs::write(path, serde_json::to_string(r).unwrap()).unwrap();
}

#[test]
fn report_renders_the_survey_with_every_section() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = stdout_of(
        sleeplab()
            .arg("report")
            .arg(fixture())
            .arg("-o")
            .arg(dir.path()),
    );
    assert!(stdout.contains("index.html"), "{stdout}");
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let ids = chart_ids(&html);
    for id in [
        "sweep-requested-actual",
        "sweep-mechanism-nanosleep",
        "sweep-slack",
        "sweep-cpu",
        "short-cost",
        "pace-error",
        "pace-tradeoff",
        "cpu-interval",
        "timers-error",
    ] {
        assert!(
            ids.iter().any(|i| i == id),
            "chart {id} missing from {ids:?}"
        );
    }
    assert!(ids.iter().any(|i| i.starts_with("sweep-cdf-")), "{ids:?}");
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "chart ids repeat: {ids:?}");
    assert!(!html.contains("could not be drawn"));
    assert!(html.contains("What this machine says"));
    for sec in [
        "requested-vs-actual",
        "distributions",
        "timer-slack",
        "short",
        "pace",
        "cpu",
        "timers",
        "stages",
    ] {
        assert!(
            html.contains(&format!("id=\"{sec}\"")),
            "section {sec} missing"
        );
    }
}

/// The fixture with a synthetic `explain` stage (`common::explain`): its section, one
/// stacked chart for every cell (nanosleep's tails dwarf the typical wakes: a chart of
/// their own), a bar per cell, the components' legend, the cells' sentences folded below
/// (not in the findings), and the table.
#[test]
fn report_renders_an_explain_stage() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("survey.json");
    write(&json, &explain::with_explain(survey()));
    let out = dir.path().join("report");
    let html = page(&[OsStr::new("report"), json.as_os_str()], &out);
    assert!(html.contains("<section class=\"card\" id=\"explain\">"));
    assert!(html.contains("<a href=\"#explain\">"));
    let ids = chart_ids(&html);
    for id in ["explain-cells", "explain-cells-tail"] {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
    assert!(
        !ids.iter().any(|i| i.starts_with("explain-nanosleep")),
        "{ids:?}"
    );
    assert!(!html.contains("could not be drawn"));
    // A bar per cell, named with its mechanism in each chart.
    for id in ["explain-cells", "explain-cells-tail"] {
        let at = html.find(&format!("data-chart=\"{id}\"")).unwrap();
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        for mech in ["nanosleep", "timerfd"] {
            for row in [
                "100 µs, load 0",
                "100 µs, load 2",
                "1 ms, load 0",
                "1 ms, load 2",
            ] {
                assert!(svg.contains(&format!("{mech} {row}")), "{id}: {mech} {row}");
            }
        }
    }
    // The components' legend, once for the pair: what happened, the term beside.
    for (c, _) in explain::TYPICAL {
        let legend = c
            .legend(sleeplab_account::Machine::Host)
            .replace('\'', "&#39;");
        let swatch = format!("</i>{legend}</span>");
        assert_eq!(html.matches(&swatch).count(), 1, "{swatch}");
    }
    // Each cell's sentence is folded below the chart, once; none is a finding.
    let sentence = "nanosleep 100 µs (load 0): 75 µs late at the median";
    let findings = &html[html.find("id=\"findings\"").unwrap()..html.find("<nav").unwrap()];
    assert_eq!(findings.matches("late at the median").count(), 0);
    assert_eq!(html.matches(sentence).count(), 1, "folded once");
    assert_eq!(html.matches("late at the median").count(), 8);
    assert!(html.contains("From the kernel&#39;s tracepoints: 800 wakes traced"));
    assert!(html.contains("<th class=\"num\">timer slack</th>"));
}

#[test]
fn report_renders_each_experiment_saved_alone() {
    let s = explain::with_explain(survey());
    let ExperimentData::Survey(data) = &s.data else {
        panic!("the fixture is a survey");
    };
    let dir = tempfile::tempdir().unwrap();
    let expect = |name: &str| -> &[&str] {
        match name {
            "sweep" => &["sweep-requested-actual"],
            "short" => &["short-cost"],
            "pace" => &["pace-error", "pace-tradeoff"],
            "cpu" => &["cpu-interval"],
            "timers" => &["timers-error"],
            "runtimes" => &["runtimes-requested-actual", "runtimes-floor"],
            "simulate" => &["simulate-precise"],
            "explain" => &["explain-cells", "explain-cells-tail"],
            _ => &[],
        }
    };
    let mut seen = Vec::new();
    for (i, r) in data.results.iter().enumerate() {
        let name = r.data.name();
        let json = dir.path().join(format!("{i}-{name}.json"));
        write(&json, r);
        let out_dir = dir.path().join(format!("{i}-{name}"));
        let html = page(&[OsStr::new("report"), json.as_os_str()], &out_dir);
        let ids = chart_ids(&html);
        for id in expect(name) {
            assert!(
                ids.iter().any(|x| x == id),
                "{name}: {id} missing from {ids:?}"
            );
        }
        assert!(
            !html.contains("id=\"stages\""),
            "{name}: a lone result has no stages"
        );
        seen.push(name);
    }
    for e in [
        "sweep", "short", "pace", "cpu", "timers", "simulate", "runtimes", "explain",
    ] {
        assert!(seen.contains(&e), "the fixture lacks {e}: {seen:?}");
    }
}

#[test]
fn hostile_strings_are_escaped_everywhere() {
    let evil = "<script>alert(1)</script>\"'&";
    let mut s = explain::with_explain(survey());
    s.fingerprint.hostname = evil.into();
    s.fingerprint.kernel_version = evil.into();
    s.fingerprint.cpu_model = evil.into();
    s.notes.push(evil.into());
    s.command_line.push(evil.into());
    let ExperimentData::Survey(data) = &mut s.data else {
        panic!("the fixture is a survey");
    };
    data.stages[0].title = evil.into();
    for r in &mut data.results {
        r.notes.push(evil.into());
        if let ExperimentData::Sweep(sw) = &mut r.data {
            // A mechanism name that reaches legends, tick labels, tables and findings.
            for c in sw.cells.iter_mut().filter(|c| c.mechanism == "nanosleep") {
                c.mechanism = evil.into();
            }
            for m in sw
                .config
                .mechanisms
                .iter_mut()
                .filter(|m| *m == "nanosleep")
            {
                *m = evil.into();
            }
            for k in &mut sw.skipped {
                k.reason = evil.into();
            }
        }
        if let ExperimentData::Pace(p) = &mut r.data {
            p.results[0].strategy = evil.into();
        }
        if let ExperimentData::Explain(x) = &mut r.data {
            // In chart titles, legends, captions, findings and the table.
            for c in x.cells.iter_mut().filter(|c| c.mechanism == "nanosleep") {
                c.mechanism = evil.into();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("evil.json");
    write(&json, &s);
    let html = page(&[OsStr::new("report"), json.as_os_str()], dir.path());
    assert!(
        !html.to_ascii_lowercase().contains("<script"),
        "raw <script in the report"
    );
    assert!(!html.contains("alert(1)</script>"));
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"),
        "the escaped host name is shown"
    );
    // plotters escapes chart text its own way; it must still be text, not markup.
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&apos;&amp;"),
        "the escaped name in a chart"
    );
    // The comparison page too.
    let cmp = dir.path().join("cmp");
    let html = page(
        &[OsStr::new("compare"), json.as_os_str(), json.as_os_str()],
        &cmp,
    );
    assert!(!html.to_ascii_lowercase().contains("<script"));
}

#[test]
fn compare_two_surveys_shows_ratios_in_the_terminal_and_as_html() {
    let a = survey();
    let mut b = a.clone();
    let ExperimentData::Survey(data) = &mut b.data else {
        panic!("the fixture is a survey");
    };
    // b: every sweep median and p99 twice a's.
    for r in &mut data.results {
        if let ExperimentData::Sweep(sw) = &mut r.data {
            for c in &mut sw.cells {
                c.summary.median_ns *= 2.0;
                c.summary.p99_ns = c.summary.p99_ns.map(|p| p * 2.0);
            }
        }
    }
    b.fingerprint.hostname = "other-machine".into();
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    write(&pa, &a);
    write(&pb, &b);
    // Fitted to 100 columns by default; whole rows, as these checks read them, with --wide.
    let fitted = stdout_of(
        sleeplab()
            .arg("compare")
            .arg(&pa)
            .arg(&pb)
            .arg("-o")
            .arg(dir.path().join("fitted")),
    );
    assert!(fitted.lines().all(|l| l.chars().count() <= 100), "{fitted}");
    let text = stdout_of(
        sleeplab()
            .arg("compare")
            .arg("--wide")
            .arg(&pa)
            .arg(&pb)
            .arg("-o")
            .arg(dir.path().join("cmp")),
    );
    // Sweep rows doubled (median and p99), every other experiment unchanged.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" nanosleep 1 µs load 0") && l.starts_with(" sweep"))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for r in &rows {
        assert_eq!(r.matches("×2").count(), 2, "{r}");
    }
    assert!(
        text.lines().any(|l| l.starts_with(" sweep-slack ")),
        "the slack stage is matched too: {text}"
    );
    for other in ["pace", "timers", "cpu", "short"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!(" {other} ")))
            .unwrap_or_else(|| panic!("no {other} row: {text}"));
        assert!(row.contains("×1"), "{row}");
    }
    assert!(text.contains("Across "), "{text}");
    let html = std::fs::read_to_string(dir.path().join("cmp/index.html")).unwrap();
    assert!(html.contains("data-chart=\"compare-scatter\""));
    assert!(html.contains("other-machine"));
    // Without -o: terminal only.
    let text = stdout_of(sleeplab().arg("compare").arg(&pa).arg(&pa));
    assert!(text.contains("b's medians are ×1 a's"));
}

/// The fixture with every sweep median and p99 scaled by `k`.
fn scaled(k: f64) -> ResultFile {
    let mut r = survey();
    let ExperimentData::Survey(data) = &mut r.data else {
        panic!("the fixture is a survey");
    };
    for r in &mut data.results {
        if let ExperimentData::Sweep(sw) = &mut r.data {
            for c in &mut sw.cells {
                c.summary.median_ns *= k;
                c.summary.p99_ns = c.summary.p99_ns.map(|p| p * k);
            }
        }
    }
    r
}

#[test]
fn compare_sides_of_three_runs_take_the_runs_as_the_units() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, k) in [
        ("a1", 1.0),
        ("a2", 1.05),
        ("a3", 0.95),
        ("b1", 2.0),
        ("b2", 2.1),
        ("b3", 1.9),
    ] {
        let p = dir.path().join(format!("{name}.json"));
        write(&p, &scaled(k));
        paths.push(p);
    }
    let text = stdout_of(
        sleeplab()
            .arg("compare")
            .arg("--wide")
            .args(&paths[..3])
            .arg("--against")
            .args(&paths[3..])
            .arg("-o")
            .arg(dir.path().join("cmp")),
    );
    assert!(text.contains("the runs are the units"), "{text}");
    let slower: usize = text
        .split("more than 10 % slower in ")
        .nth(1)
        .and_then(|t| t.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(slower > 0, "{text}");
    assert!(text.contains("Biggest slow-down: "), "{text}");
    let html = std::fs::read_to_string(dir.path().join("cmp/index.html")).unwrap();
    assert!(html.contains("The 6 runs"));
    // One a side is the pair: within-run intervals, said so.
    let text = stdout_of(
        sleeplab()
            .arg("compare")
            .arg(&paths[0])
            .arg("--against")
            .arg(&paths[3]),
    );
    assert!(
        text.contains("within-run intervals; run-to-run variation not included"),
        "{text}"
    );
}

#[test]
fn the_fixture_and_a_fresh_survey_validate_against_the_committed_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("spec/result.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&fixture)
        .map(|e| e.to_string())
        .take(3)
        .collect();
    assert!(errors.is_empty(), "fixture: {errors:?}");

    // A tiny real survey: one stage, ~1 s.
    let dir = tempfile::tempdir().unwrap();
    let out = sleeplab()
        .args(["-q", "--quick", "--stages", "sweep-slack", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The answer first, in one screen; every finding only with --verbose.
    assert!(stdout.contains("Sleeping: "), "{stdout}");
    assert!(!stdout.contains("What this machine says:"), "{stdout}");
    assert!(stdout.lines().count() <= 24, "{stdout}");
    assert!(stdout.contains("index.html"));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| e.to_string())
        .take(3)
        .collect();
    assert!(errors.is_empty(), "survey: {errors:?}");
    let r = load_result(&dir.path().join("results.json")).unwrap();
    assert!(r.complete);
    let ExperimentData::Survey(data) = &r.data else {
        panic!("not a survey");
    };
    assert_eq!(data.stages.len(), 1);
    assert_eq!(data.stages[0].name, "sweep-slack");
    assert_eq!(data.results.len(), 1);
    let csv = std::fs::read_to_string(dir.path().join("samples.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "stage,experiment,series,requested_ns,load,timer_slack_ns,round,index,warmup,metric,value_ns,overshoot_ns,early,schema_version"
        )
    );
    // One row per kept sample (and warm-up call) of the stage.
    let ExperimentData::Sweep(sw) = &data.results[0].data else {
        panic!("not a sweep");
    };
    let counted: u64 = sw
        .cells
        .iter()
        .map(|c| c.summary.count + c.first_calls_ns.len() as u64)
        .sum();
    assert_eq!(lines.count() as u64, counted);
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("data-chart=\"sweep-slack\""));
}

/// `report -o DIR` keeps a report directory to one run: it writes the input beside the
/// index as results.json, re-renders the same run in place, refuses (exit 2, naming DIR,
/// nothing changed) another run's results, and with `--force` replaces them whole.
#[test]
fn report_refuses_a_directory_holding_another_runs_report_unless_forced() {
    let s = survey();
    let ExperimentData::Survey(data) = &s.data else {
        panic!("the fixture is a survey");
    };
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("sweep.json");
    write(&other, &data.results[0]);
    let dir = tmp.path().join("out");
    let run = |input: &Path, force: bool| {
        let mut c = sleeplab();
        c.arg("report").arg(input).arg("-o").arg(&dir);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let ok = |o: &std::process::Output| {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    ok(&run(&fixture(), false));
    std::fs::write(dir.join("samples.csv"), "stage\n").unwrap();
    let fixture_bytes = std::fs::read(fixture()).unwrap();
    assert_eq!(
        std::fs::read(dir.join("results.json")).unwrap(),
        fixture_bytes
    );
    // The same run again, and from the copy in the directory itself: fine.
    ok(&run(&fixture(), false));
    ok(&run(&dir.join("results.json"), false));
    let index = std::fs::read(dir.join("index.html")).unwrap();
    // Another run: refused, nothing touched.
    let o = run(&other, false);
    assert_exit_2(&o, "out", "report into another run's directory");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read(dir.join("index.html")).unwrap(), index);
    assert_eq!(
        std::fs::read(dir.join("results.json")).unwrap(),
        fixture_bytes
    );
    // Forced: index and results both from the other run, the old run's samples gone.
    ok(&run(&other, true));
    assert_eq!(
        std::fs::read(dir.join("results.json")).unwrap(),
        std::fs::read(&other).unwrap()
    );
    assert!(!dir.join("samples.csv").exists());
    assert_ne!(std::fs::read(dir.join("index.html")).unwrap(), index);
    // An index without its results cannot be told apart from another run's.
    std::fs::remove_file(dir.join("results.json")).unwrap();
    assert_exit_2(&run(&other, false), "out", "an index without results.json");
}

/// docs/REPORT.md names exactly the stages whose raw samples are in samples.csv (the
/// fixture's survey through the same function the survey writes it with), and README,
/// REPORT.md and `--help` state the same run-time figures.
#[test]
fn docs_state_what_samples_csv_holds_and_one_run_time() {
    use sleeplab_cli::survey::{QUICK_RUN_TIME, RUN_TIME, samples_csv};
    let s = survey();
    let ExperimentData::Survey(data) = &s.data else {
        panic!("the fixture is a survey");
    };
    let csv = String::from_utf8(samples_csv(data).unwrap()).unwrap();
    let mut in_csv: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    in_csv.sort_unstable();
    in_csv.dedup();
    let report_md = std::fs::read_to_string(repo_root().join("docs/REPORT.md")).unwrap();
    let row = report_md
        .lines()
        .find(|l| l.starts_with("| `samples.csv` |"))
        .expect("REPORT.md describes samples.csv");
    let named = row.split(" (").next().unwrap();
    let mut stated: Vec<&str> = named.split('`').skip(3).step_by(2).collect();
    stated.sort_unstable();
    assert_eq!(stated, in_csv, "{row}");
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    for (what, text) in [("README.md", &readme), ("docs/REPORT.md", &report_md)] {
        assert!(
            text.contains(&format!("in {RUN_TIME}"))
                || text.contains(&format!("survey, {RUN_TIME}")),
            "{what} lacks {RUN_TIME}"
        );
        assert!(
            text.contains(QUICK_RUN_TIME),
            "{what} lacks {QUICK_RUN_TIME}"
        );
        for stale in ["about a minute", "~1 minute", "~20 s", "30-second"] {
            assert!(!text.contains(stale), "{what} still says {stale}");
        }
    }
    let help = stdout_of(sleeplab().arg("--help"));
    assert!(help.contains(&format!("({RUN_TIME})")), "{help}");
    assert!(help.contains(&format!("({QUICK_RUN_TIME})")), "{help}");
}
