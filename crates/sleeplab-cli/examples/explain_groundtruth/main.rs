//! Ground truth for `explain`'s account (`sleeplab_account::account`): every
//! component caused with a size known outside the trace, for `scripts/explain-groundtruth.sh`.
//!
//! Each cause runs WAKES wakes of the measuring thread, pinned to CPU 0 (the kernels
//! here record nothing CPU 1's idle task emits, so a switch onto an idle CPU 1 is
//! lost), traced by `Tracer` as `explain` traces, and each wake is split by `account`:
//!
//! * timer slack set to each `--slack`, absolute sleeps to deadlines the scheduler tick
//!   cannot cut short → `slack`; the injected size is the setting, never read from
//!   the trace under test;
//! * a SCHED_FIFO thread on the measuring CPU that wakes shortly before the deadline
//!   and burns until each `--burn` after it → `run_queue`, the thread named as holder;
//!   the injected size is its own clock read as it stopped, less the deadline (or its
//!   start, when its wakeup came late). The measuring thread is SCHED_FIFO below it;
//!   `--burn-other` runs the same with the measuring thread SCHED_OTHER, as `explain`
//!   measures, where other tasks may run between;
//! * a busy stretch of each `--entry` between the deadline's clock read and a relative
//!   sleep's system call → `entry` (timer arming), and of each `--return` between the
//!   system call's return and the clock read → `return`; the injected size is the
//!   thread's own CPU time over the stretch (a preemption inside is the run queue's);
//! * a paced frame whose work runs each `--overrun` past the next frame's deadline →
//!   `overrun`, the next wait's start less its deadline (the very subtraction the
//!   account makes: arithmetic, not judged; its other components are).
//!
//! Each injected wake follows an uninjected one of the same shape (size 0): their
//! components' medians and p99s are the baseline. A wake passes when its component,
//! less its median with nothing injected, holds between 90 % and 110 % of the injected
//! size (± 2 µs) and every other component stays at or under its p99 plus 10 µs
//! (`judge`); a cause passes when at least 95 % of its
//! wakes do, judged over blocks of 50 wakes (the share's interval over blocks printed;
//! by point value below 8 blocks). Then the SCHED_IDLE comparison (`companion`):
//! `--rounds` rounds of idle waits with and without a SCHED_IDLE thread spinning on
//! the measuring CPU, judged over blocks (each round's difference of block medians):
//! the injected truth of `idle_wakeup` and `idle_delivery`, which the companion
//! removes. Prints Markdown; `--bench-doc FILE` also writes it as the
//! `explain-groundtruth` section of FILE (scripts/bench_doc.py), with this command;
//! `--events` prints the recorded events of the failing wakes shown. Runs as root.
//!
//!     cargo run --release -p sleeplab-cli --example explain_groundtruth -- --wakes 500

mod companion;
mod evidence;
mod inject;
mod judge;
mod scenarios;

use clap::Parser;
use judge::{Baseline, Row};
use scenarios::Scenario;
use sleeplab_account::{Follow, Recording};
use std::path::PathBuf;
use std::time::Duration;

/// The section of docs/BENCHMARKS.md this writes.
const SECTION: &str = "explain-groundtruth";

#[derive(Parser)]
struct Args {
    /// Wakes per cause and size.
    #[arg(long, default_value_t = 500)]
    wakes: usize,
    /// The timer slacks to inject.
    #[arg(long, default_value = "10us,50us,200us", value_delimiter = ',', value_parser = humantime::parse_duration)]
    slack: Vec<Duration>,
    /// How long the SCHED_FIFO thread holds the CPU past each deadline.
    #[arg(long, default_value = "200us,1ms", value_delimiter = ',', value_parser = humantime::parse_duration)]
    burn: Vec<Duration>,
    /// The same burns with the measuring thread SCHED_OTHER (other tasks may run between).
    #[arg(long, default_value = "200us,1ms", value_delimiter = ',', value_parser = humantime::parse_duration)]
    burn_other: Vec<Duration>,
    /// Busy stretches between the deadline's clock read and the system call.
    #[arg(long, default_value = "20us,200us", value_delimiter = ',', value_parser = humantime::parse_duration)]
    entry: Vec<Duration>,
    /// Busy stretches between the system call's return and the clock read.
    #[arg(long = "return", default_value = "20us,200us", value_delimiter = ',', value_parser = humantime::parse_duration)]
    return_: Vec<Duration>,
    /// How far a frame's work overruns its period.
    #[arg(long, default_value = "300us", value_delimiter = ',', value_parser = humantime::parse_duration)]
    overrun: Vec<Duration>,
    /// Rounds of the SCHED_IDLE comparison (0: none).
    #[arg(long, default_value_t = 40)]
    rounds: usize,
    /// Idle waits per block of the SCHED_IDLE comparison.
    #[arg(long, default_value_t = 100)]
    block_waits: usize,
    /// The measuring CPU: 0, because the kernels here record nothing CPU 1's idle task
    /// emits.
    #[arg(long, default_value_t = 0)]
    cpu: usize,
    /// Also write the tables as the `explain-groundtruth` section of this file.
    #[arg(long)]
    bench_doc: Option<PathBuf>,
    /// Also print the recorded events of each failing wake shown (not into the file).
    #[arg(long)]
    events: bool,
}

/// Every cause the arguments ask for, in the order a wake passes its components.
fn scenarios(args: &Args) -> Vec<Scenario> {
    let ns = |d: &Duration| sleeplab::clock::duration_ns(*d);
    let mut out: Vec<Scenario> = Vec::new();
    out.extend(args.overrun.iter().map(|d| Scenario::Overrun(ns(d))));
    out.extend(args.entry.iter().map(|d| Scenario::Entry(ns(d))));
    out.extend(args.slack.iter().map(|d| Scenario::Slack(ns(d))));
    out.extend(args.burn.iter().map(|d| Scenario::RunQueue(ns(d))));
    out.extend(
        args.burn_other
            .iter()
            .map(|d| Scenario::RunQueueOther(ns(d))),
    );
    out.extend(args.return_.iter().map(|d| Scenario::Return(ns(d))));
    out
}

/// Runs every scenario of `list` for `wakes` wakes on the calling thread (pinned to
/// `cpu`); a row each.
pub fn run_all(list: &[Scenario], wakes: usize, cpu: usize) -> anyhow::Result<Vec<Row>> {
    list.iter()
        .map(|&s| {
            let run = scenarios::run(s, wakes, cpu)?;
            eprintln!("explain_groundtruth: {} done", s.label());
            let baseline = Baseline::of(run.baseline.iter().map(|w| &w.account.parts));
            Ok(Row {
                lost: run.lost,
                ..Row::of(s, &run.injected, &baseline)
            })
        })
        .collect()
}

/// The kernel's release, as `uname -r` prints it.
fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "an unknown kernel".into(), |s| s.trim().to_string())
}

/// The machine's load: the one-minute average of runnable tasks (/proc/loadavg), "?"
/// where unreadable.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// The command that reproduces this run: the example's arguments but `--bench-doc`.
fn command() -> String {
    let mut args = std::env::args().skip(1);
    let mut kept = Vec::new();
    while let Some(a) = args.next() {
        if a == "--bench-doc" {
            args.next();
        } else if !a.starts_with("--bench-doc=") {
            kept.push(a);
        }
    }
    let tail = if kept.is_empty() {
        String::new()
    } else {
        format!(" -- {}", kept.join(" "))
    };
    format!("cargo run --release -p sleeplab-cli --example explain_groundtruth{tail}")
}

/// Writes `body` as section [`SECTION`] of `doc` through scripts/bench_doc.py.
fn write_section(doc: &std::path::Path, body: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bench_doc.py");
    let mut child = std::process::Command::new("python3")
        .arg(script)
        .arg(doc)
        .arg(SECTION)
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(body.as_bytes())?;
    let status = child.wait()?;
    anyhow::ensure!(status.success(), "bench_doc.py failed: {status}");
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.wakes == 0 {
        eprintln!("explain_groundtruth: --wakes must be positive");
        std::process::exit(2);
    }
    let max_slack = Duration::from_nanos(1_000_000 - inject::OFFSET_NS);
    if args.slack.iter().any(|s| *s > max_slack) {
        eprintln!(
            "explain_groundtruth: --slack at most {max_slack:?} (the deadlines sit {} µs past a \
             millisecond, and the tick must not fall inside the slack)",
            inject::OFFSET_NS / 1000
        );
        std::process::exit(2);
    }
    if let Err(e) = sleeplab::system::pin_to_cpu(args.cpu) {
        eprintln!("explain_groundtruth: cannot pin to CPU {}: {e}", args.cpu);
        std::process::exit(2);
    }
    if let Err(e) = recording() {
        eprintln!("explain_groundtruth: {e}");
        std::process::exit(1);
    }
    let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    let load_before = load();
    let rows = run_all(&scenarios(&args), args.wakes, args.cpu)?;
    let rounds = companion::run(args.rounds, args.block_waits, args.cpu)?;
    let mut body = vec![
        format!(
            "Run {started} on {}, {} CPUs, measuring on CPU {} (`{}`; \
             `scripts/explain-groundtruth.sh` runs it); the machine's load (runnable tasks, \
             one-minute average) {load_before} at the start, {} at the end:",
            kernel(),
            // SAFETY: sysconf has no preconditions (the affinity, pinned, says 1).
            unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) },
            args.cpu,
            command(),
            load(),
        ),
        String::new(),
        "**Each cause, wake by wake**".into(),
        String::new(),
    ];
    body.extend(judge::table(&rows));
    if args.rounds > 0 {
        body.push(String::new());
        body.push("**The SCHED_IDLE companion, block by block**".into());
        body.push(String::new());
        body.extend(companion::report(&rounds, args.block_waits));
    }
    let body = body.join("\n");
    println!("{body}");
    if args.events {
        for r in &rows {
            for (f, lines) in r.failures.iter().zip(&r.evidence) {
                println!("\n{}: {f}\n  {}", r.label, lines.join("\n  "));
            }
        }
    }
    if let Some(doc) = &args.bench_doc {
        write_section(doc, &body)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

/// A recording of this thread's events, or why the kernel cannot be traced.
fn recording() -> anyhow::Result<Recording> {
    let r = Recording::start(true, Follow::ThisThread);
    if r.kernel() {
        Ok(r)
    } else {
        let (_, status) = r.finish();
        anyhow::bail!("{}", status.and_then(|s| s.note).unwrap_or_default())
    }
}
