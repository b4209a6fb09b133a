//! Ctrl-C through the real binary, for every measuring command and the survey (the one
//! suite for it; the other commands only read and write files): spawned
//! with settings that would run for many seconds, sent SIGINT once it is measuring, it
//! must exit 130 within a few seconds, leave a JSON file that loads with
//! `model::load_result` and says `complete: false`, a CSV that parses (where the command
//! writes one), no child process alive (probes are killed with their process group), and
//! `sleeplab report` renders the partial result, marked incomplete.
//! Two SIGINTs in a row exit at once, even in the middle of a 30 s wait that one SIGINT
//! lets finish (a wait is never cut short: that would be an early return). SIGTERM is
//! handled like SIGINT (results kept, probes killed).
//!
//! No latency bound on the measurements is asserted; the stop times asserted are coarse
//! (seconds) against runs that would take tens of seconds or more.

mod common;

use common::procs::{alive, cmdline, descendants};

use sleeplab_cli::experiments::short::ShortData;
use sleeplab_cli::model::SurveyData;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a command may take to stop after the first SIGINT.
const STOP_LIMIT: Duration = Duration::from_secs(15);

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sleeplab")
}

/// A running sleeplab with its stderr collected in the background.
struct Running {
    child: Child,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn start(args: &[String]) -> Self {
        let mut child = common::spawn_piping_stderr(args);
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().expect("stderr is piped");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Self { child, stderr }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid; no memory is touched.
        assert_eq!(unsafe { libc::kill(self.pid(), sig) }, 0, "kill failed");
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until `cond` holds (checked every 10 ms) or `limit` passes; whether it held.
    fn wait_until(&mut self, limit: Duration, mut cond: impl FnMut(&mut Self) -> bool) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if cond(self) {
                return true;
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!(
                    "sleeplab exited ({st}) before it was interrupted; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Waits for the exit; kills and fails after `limit`.
    fn finish(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        let t0 = Instant::now();
        match common::exit_within(&mut self.child, t0, limit) {
            Some(st) => (st, t0.elapsed()),
            None => panic!(
                "still running {limit:?} after the signal (killed); stderr:\n{}",
                self.stderr()
            ),
        }
    }
}

fn s(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

/// Asserts that a CSV file parses whole; returns its number of data rows.
fn csv_rows(path: &Path) -> usize {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("{} does not open as CSV: {e}", path.display()));
    let headers = r.headers().expect("a CSV header").len();
    assert!(
        headers > 1,
        "{}: header of {headers} columns",
        path.display()
    );
    r.records()
        .map(|rec| {
            let rec = rec.unwrap_or_else(|e| panic!("{}: bad CSV row: {e}", path.display()));
            assert_eq!(rec.len(), headers, "{}: ragged row", path.display());
        })
        .count()
}

/// Asserts that no file named `.sleeplab-*` (a temp file of an atomic write) is left.
fn no_temp_files(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(".sleeplab-"))
        .collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
}

/// When to send the signal.
enum Trigger {
    /// After a fixed delay (the command measures from its first millisecond).
    Delay(Duration),
    /// Once a child process whose command line contains this text exists, plus a delay.
    Child(&'static str, Duration),
    /// Once stderr holds this text, plus a delay.
    Stderr(&'static str, Duration),
}

/// What an interrupted run printed on stderr.
struct Interrupted {
    stderr: String,
}

/// Runs `args`, interrupts it with `sig` at `trigger`, checks exit 130, no surviving
/// child process and no temp file in `dir`.
fn interrupt(args: Vec<String>, trigger: Trigger, sig: libc::c_int, dir: &Path) -> Interrupted {
    let mut run = Running::start(&args);
    let pid = run.pid();
    match trigger {
        Trigger::Delay(d) => {
            run.wait_until(d, |_| false);
        }
        Trigger::Child(text, d) => {
            let found = run.wait_until(Duration::from_secs(30), |_| {
                descendants(pid)
                    .iter()
                    .any(|p| cmdline(p.pid).contains(text))
            });
            assert!(
                found,
                "no child running {text:?} within 30 s: {}",
                run.stderr()
            );
            run.wait_until(d, |_| false);
        }
        Trigger::Stderr(text, d) => {
            let found = run.wait_until(Duration::from_secs(30), |r| r.stderr().contains(text));
            assert!(found, "{text:?} never appeared on stderr: {}", run.stderr());
            run.wait_until(d, |_| false);
        }
    }
    let children = descendants(pid);
    run.signal(sig);
    let (status, stop) = run.finish(STOP_LIMIT);
    let stderr = run.stderr();
    assert_eq!(
        status.code(),
        Some(130),
        "{args:?}: exit {status}, stderr:\n{stderr}"
    );
    // Children are killed (with their process group) before sleeplab exits; give the
    // kernel a moment to finish tearing them down.
    let t0 = Instant::now();
    while children.iter().any(|&c| alive(c)) && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<String> = children
        .iter()
        .filter(|&&c| alive(c))
        .map(|c| format!("{} {}", c.pid, cmdline(c.pid)))
        .collect();
    assert!(
        survivors.is_empty(),
        "still running after exit: {survivors:?}"
    );
    no_temp_files(dir);
    eprintln!("{}: stopped {stop:?} after the signal", args[0]);
    Interrupted { stderr }
}

/// Interrupts an experiment command (its arguments: `args`, split at spaces) with
/// `--json` (and `--csv` when `csv`), checks both files; returns the CSV's data rows.
fn experiment(command: &str, args: &str, csv: bool, trigger: Trigger) -> usize {
    experiment_result(command, args, csv, trigger).1
}

/// [`experiment`], with the partial result it saved.
fn experiment_result(
    command: &str,
    args: &str,
    csv: bool,
    trigger: Trigger,
) -> (sleeplab_cli::model::ResultFile, usize) {
    match interrupted_result(command, args, csv, trigger) {
        (result, Some(Some(rows))) => (result, rows),
        (_, Some(None)) => panic!("{command}: no CSV written"),
        (result, None) => (result, 0),
    }
}

/// Interrupts `command` as [`experiment`] does; returns the partial result and, when
/// `csv` asked for one, the CSV's data rows (`None`: the command wrote none).
fn interrupted_result(
    command: &str,
    args: &str,
    csv: bool,
    trigger: Trigger,
) -> (sleeplab_cli::model::ResultFile, Option<Option<usize>>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let csv_path = dir.path().join("out.csv");
    let mut full = s(&[command, "-q"]);
    full.extend(args.split_whitespace().map(String::from));
    full.extend([String::from("--json"), path_arg(&json)]);
    if csv {
        full.extend([String::from("--csv"), path_arg(&csv_path)]);
    }
    let out = interrupt(full, trigger, libc::SIGINT, dir.path());
    let result = sleeplab_cli::model::load_result(&json)
        .unwrap_or_else(|e| panic!("{command}: {e}\nstderr:\n{}", out.stderr));
    assert!(!result.complete, "{command}: complete after an interrupt");
    assert_eq!(result.data.name(), command);
    // What was kept is usable: the report renders it (marked incomplete).
    let report = dir.path().join("report");
    let r = Command::new(bin())
        .args(["report", "-q"])
        .arg(&json)
        .arg("-o")
        .arg(&report)
        .output()
        .unwrap();
    assert!(
        r.status.success(),
        "{command}: report of the partial result: {r:?}"
    );
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        html.contains("incomplete"),
        "{command}: the report does not say incomplete"
    );
    let rows = csv.then(|| csv_path.exists().then(|| csv_rows(&csv_path)));
    (result, rows)
}

const SOON: Duration = Duration::from_millis(400);

#[test]
fn sweep_keeps_what_it_measured() {
    let rows = experiment(
        "sweep",
        "--mechanisms nanosleep,yield,spin-sleep --durations 0,1ms --iterations 5000 --load 0,1",
        true,
        Trigger::Delay(SOON),
    );
    assert!(rows > 0, "no sample kept");
}

/// Interrupted, explain still splits the wakes it measured (traced or not).
#[test]
fn explain_keeps_what_it_measured() {
    let rows = experiment(
        "explain",
        "--mechanisms nanosleep,timerfd --durations 1ms --iterations 100000 --load 0,1",
        true,
        // Past the host noise probe before the run (40 ms per CPU, up to 4) and the
        // tracer's setup.
        Trigger::Delay(SOON * 3),
    );
    assert!(rows > 0, "no wake kept");
}

/// Every cell ends short of its repetitions by at most one. Interrupted during the
/// calibration there are no batches yet, which says nothing: it waits longer and tries
/// again, and fails if it never gets past the calibration.
#[test]
fn short_keeps_what_it_measured() {
    for delay_ms in [400, 1_000, 2_500, 6_000] {
        let (result, _) = experiment_result(
            "short",
            "--mechanisms nanosleep,spin --batch 200 --batch-time 0 --repetitions 100000",
            true,
            Trigger::Delay(Duration::from_millis(delay_ms)),
        );
        let data = <&ShortData>::try_from(&result.data).expect("a short result");
        let counts: Vec<usize> = data
            .cells
            .iter()
            .chain(&data.references)
            .map(|c| c.batches.len())
            .collect();
        let (Some(lo), Some(hi)) = (counts.iter().min(), counts.iter().max()) else {
            eprintln!("short: stopped in the calibration after {delay_ms} ms; again, later");
            continue;
        };
        assert!(hi - lo <= 1, "{counts:?}");
        assert!(*hi < 100_000);
        return;
    }
    panic!("short never got past its calibration in 6 s");
}

#[test]
fn pace_keeps_what_it_measured() {
    let rows = experiment(
        "pace",
        "--strategies spin,precise --frames 100000",
        true,
        Trigger::Delay(SOON),
    );
    assert!(rows > 0, "no frame kept");
}

#[test]
fn cpu_keeps_what_it_measured() {
    experiment(
        "cpu",
        "--strategies precise,seed-hybrid --intervals 1ms,2ms --seconds 60s",
        true,
        Trigger::Delay(SOON),
    );
}

#[test]
fn advise_keeps_what_it_measured() {
    experiment(
        "advise",
        "--duration 1ms --tolerance 50us --seconds 60s",
        false,
        Trigger::Delay(SOON),
    );
}

/// Interrupted, tune keeps the rounds it measured (its system settings restored: the
/// restore tests are in tune_restore.rs).
#[test]
fn tune_keeps_what_it_measured() {
    experiment(
        "tune",
        "--no-system --rounds 1000 --budget 50ms --durations 1ms",
        true,
        Trigger::Delay(SOON),
    );
}

#[test]
fn timers_keeps_what_it_measured() {
    let rows = experiment(
        "timers",
        "--mechanisms timerfd-interval,busy-wait --periods 1ms --seconds 60 --load 1",
        true,
        Trigger::Delay(SOON),
    );
    assert!(rows > 0, "no tick kept");
}

#[test]
fn simulate_keeps_what_it_measured() {
    experiment("simulate", "--sleeps 10000000", true, Trigger::Delay(SOON));
}

#[test]
fn runtimes_kills_its_probe_and_keeps_what_it_measured() {
    // The Python probe runs from source (nothing to build); 100 × 100 ms per cell.
    experiment(
        "runtimes",
        "--runtimes python --methods time.sleep --durations 100ms --count 100",
        true,
        Trigger::Child("--method", Duration::from_millis(300)),
    );
}

#[test]
fn sigterm_is_handled_like_ctrl_c_and_kills_the_probe() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let mut full = s(&["runtimes", "-q"]);
    full.extend(s(&common::PYTHON_SLEEPING));
    full.extend(s(&["--count", "100", "--json"]));
    full.push(path_arg(&json));
    interrupt(
        full,
        Trigger::Child("--method", Duration::from_millis(300)),
        libc::SIGTERM,
        dir.path(),
    );
    assert!(!sleeplab_cli::model::load_result(&json).unwrap().complete);
}

/// The survey stops the stage in progress (its state `interrupted`, its result kept),
/// runs no other, and still writes the whole report directory.
#[test]
fn survey_writes_an_incomplete_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    interrupt(
        vec![
            "survey".into(),
            "--quick".into(),
            "-o".into(),
            path_arg(&out),
        ],
        // The survey announces each stage on stderr as it starts.
        Trigger::Stderr("[1/", Duration::from_millis(500)),
        libc::SIGINT,
        dir.path(),
    );
    let result = sleeplab_cli::model::load_result(&out.join("results.json")).unwrap();
    assert!(!result.complete);
    assert_eq!(result.data.name(), "survey");
    let data = <&SurveyData>::try_from(&result.data).expect("a survey");
    let states: Vec<&str> = data.stages.iter().map(|s| s.state.label()).collect();
    assert!(states.contains(&"interrupted"), "{states:?}");
    assert!(
        states
            .iter()
            .all(|s| ["ok", "interrupted", "not run"].contains(s)),
        "{states:?}"
    );
    assert_eq!(
        data.results.len(),
        data.stages.iter().filter(|s| s.result.is_some()).count()
    );
    csv_rows(&out.join("samples.csv"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("</html>"), "index.html is not whole");
    assert!(
        html.contains("incomplete"),
        "the report does not say incomplete"
    );
    no_temp_files(&out);
}

#[test]
fn a_second_ctrl_c_exits_at_once() {
    // One 30 s wait: a single Ctrl-C lets the wait finish (cutting it short would be an
    // early return); the second exits now.
    let dir = tempfile::tempdir().unwrap();
    let mut run = Running::start(&s(&[
        "sweep",
        "-q",
        "--mechanisms",
        "nanosleep",
        "--durations",
        "30s",
        "--iterations",
        "1",
        "--warmup",
        "0",
        "--rounds",
        "1",
        "--json",
        &path_arg(&dir.path().join("out.json")),
    ]));
    run.wait_until(SOON, |_| false);
    let t0 = Instant::now();
    run.signal(libc::SIGINT);
    run.wait_until(Duration::from_millis(200), |_| false);
    run.signal(libc::SIGINT);
    let (status, _) = run.finish(STOP_LIMIT);
    let took = t0.elapsed();
    assert_eq!(status.code(), Some(130), "stderr:\n{}", run.stderr());
    assert!(
        took < Duration::from_secs(10),
        "two Ctrl-C took {took:?} to exit a 30 s run"
    );
    no_temp_files(dir.path());
    eprintln!("two Ctrl-C: exited {took:?} after the first");
}

/// Every measuring command — the ones whose module gives a long run
/// (`Command::long_runs`) — interrupted a second into it with `--json`: exit 130, a whole
/// result that loads and says `complete: false`, and the report of it marked incomplete.
/// A new experiment's command is covered here with no edit; the tests above look closer
/// at each (and at their CSV). Every command with `--csv` (a measured result) must have a
/// long run, and every one that has a long run writes `--json`.
#[test]
fn every_measuring_command_keeps_what_it_measured() {
    use clap::CommandFactory;
    let cli = sleeplab_cli::cli::Cli::command();
    let flag = |name: &str, long: &str| {
        cli.find_subcommand(name)
            .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some(long)))
    };
    let runs = sleeplab_cli::commands::Command::long_runs();
    for (name, run) in &runs {
        assert_eq!(
            run.is_some(),
            flag(name, "csv"),
            "{name}: a command that writes --csv measures, and gives a LONG_RUN"
        );
        assert!(run.is_none() || flag(name, "json"), "{name}: no --json");
    }
    for (name, run) in runs {
        let Some(args) = run else { continue };
        let t0 = Instant::now();
        interrupted_result(&name, args, false, Trigger::Delay(Duration::from_secs(1)));
        eprintln!("{name}: interrupted and checked in {:?}", t0.elapsed());
    }
}

/// A reader that goes away (`sleeplab list | head -1`): the binary ends on the broken
/// pipe (SIGPIPE, as any command-line tool does), never with a panic in `println!`.
#[test]
fn a_closed_stdout_ends_the_binary_without_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for args in [&["list"][..], &["schema"][..]] {
        let mut child = Command::new(bin())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before the binary has written (it takes milliseconds to
        // start), so its first write finds no reader.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}
