//! A program's waits as files: one JSON document (the run, each call's summary with its
//! components, the traps, every wait) and a CSV with a row per wait; both written whole
//! or not at all. Documented in docs/RESULTS.md ("A program's own waits").

use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sleeplab_account::{CallSummary, Ending, Found, ProgramWait, Timeout, Trap, WakeAccount};
use sleeplab_stats::atomic_write;

/// The JSON document's `format`.
pub const FORMAT: &str = "sleeplab program waits";
/// The JSON document's and the CSV's version (the CSV's `schema_version` column).
pub const VERSION: u32 = 1;

/// The program followed, as the outputs and a saved trace tell it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Followed {
    /// Its process id.
    pub pid: i32,
    /// Its name when it was found.
    pub comm: String,
    /// The command line given, for a command started for the run.
    pub command: Option<Vec<String>>,
}

/// The run, as the outputs (and a saved trace) tell it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The program followed.
    pub target: Followed,
    /// How long it was followed, s.
    pub seconds: f64,
    /// When it exited during the run, s after the start.
    pub exited_after: Option<f64>,
    /// How a command started for the run ended.
    pub ended: Option<String>,
    /// Events the kernel could not record.
    pub lost_events: u64,
    /// Whether Ctrl-C ended the run.
    pub interrupted: bool,
    /// Whether the machine's interrupts, softirqs and idle states were recorded: not with
    /// `--light`, nor where the kernel lacks their tracepoints. Only then does the
    /// account name interrupts and tell the host's share of a timer's delivery.
    #[serde(default)]
    pub interrupts: bool,
    /// Whether the local timer's interrupt and the idle loop's states were recorded
    /// with them (`--idle-states`, and traces saved before the default left them out):
    /// only then is an idle CPU's timer delivery told from the guest's polling and its
    /// interrupt entry.
    #[serde(default)]
    pub idle_states: bool,
    /// How the program's system calls were kept to it (a trace saved before the field
    /// existed was kept by the pid list).
    #[serde(default = "KeptBy::pid_list")]
    pub kept_by: KeptBy,
}

/// How a followed program's system calls were kept to it, as the outputs name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeptBy {
    /// An event filter that follows the program's forks.
    Filter,
    /// The kernel's pid list (`--pid-list`).
    PidList,
    /// The BPF recorder's map of the program's threads, which follows its forks in the
    /// kernel (`--bpf`).
    Bpf,
}

impl KeptBy {
    /// The kernel's pid list.
    fn pid_list() -> Self {
        KeptBy::PidList
    }

    /// How the run was asked to keep them.
    pub fn of(by: sleeplab_account::SyscallsBy) -> Self {
        match by {
            sleeplab_account::SyscallsBy::Filter => KeptBy::Filter,
            sleeplab_account::SyscallsBy::PidList => KeptBy::PidList,
            sleeplab_account::SyscallsBy::Bpf => KeptBy::Bpf,
        }
    }
}

/// Writes the JSON document to `path`.
pub fn write_json(
    path: &Path,
    run: &Run,
    found: &Found,
    calls: &[CallSummary],
    traps: &[Trap],
) -> anyhow::Result<()> {
    let doc = document(run, found, calls, traps);
    let bytes = serde_json::to_vec_pretty(&doc).context("encoding the JSON")?;
    atomic_write(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

/// The JSON document.
pub fn document(
    run: &Run,
    found: &Found,
    calls: &[CallSummary],
    traps: &[Trap],
) -> serde_json::Value {
    #[derive(Serialize)]
    struct TrapOut<'a> {
        #[serde(flatten)]
        trap: &'a Trap,
        sentence: String,
    }
    let traps: Vec<TrapOut<'_>> = traps
        .iter()
        .map(|t| TrapOut {
            trap: t,
            sentence: t.sentence().text,
        })
        .collect();
    json!({
        "format": FORMAT,
        "version": VERSION,
        "target": {
            "pid": run.target.pid,
            "comm": run.target.comm,
            "command": run.target.command,
        },
        "seconds": run.seconds,
        "exited_after_seconds": run.exited_after,
        "ended": run.ended,
        "interrupted": run.interrupted,
        "interrupts_recorded": run.interrupts,
        "idle_states_recorded": run.idle_states,
        "syscalls_kept_by": run.kept_by,
        "lost_events": run.lost_events,
        "untimed_calls": found.untimed,
        "unpaired_calls": found.unpaired,
        "calls": calls,
        "traps": traps,
        "waits": found.waits,
    })
}

/// The CSV's columns.
pub const CSV_COLUMNS: [&str; 18] = [
    "schema_version",
    "tid",
    "comm",
    "call",
    "timeout_ms",
    "enter_ns",
    "exit_ns",
    "ret",
    "deadline_ns",
    "slack_ns",
    "ending",
    "waker_tid",
    "lateness_ns",
    "early_ns",
    "largest_part",
    "largest_part_ns",
    "interrupt_ns",
    "top_interrupt",
];

/// Writes the CSV of every wait to `path`.
pub fn write_csv(path: &Path, found: &Found, split: &[Option<WakeAccount>]) -> anyhow::Result<()> {
    let bytes = csv_bytes(found, split)?;
    atomic_write(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

/// The CSV of every wait: one row each, empty cells where a value does not apply;
/// `split` is each wait's account by index ([`accounts`](sleeplab_account::accounts)).
pub fn csv_bytes(found: &Found, split: &[Option<WakeAccount>]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    let opt = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    for (i, wait) in found.waits.iter().enumerate() {
        let largest = split
            .get(i)
            .and_then(Option::as_ref)
            .and_then(|a| a.parts.biggest().map(|c| (c, a.parts.get(c))));
        w.write_record([
            VERSION.to_string(),
            wait.tid.to_string(),
            wait.comm.clone(),
            wait.call.name().to_string(),
            timeout_ms(wait),
            wait.enter_ns.to_string(),
            wait.exit_ns.to_string(),
            wait.ret.to_string(),
            opt(wait.deadline_ns),
            opt(wait.slack_ns()),
            ending_name(wait.ending).to_string(),
            match wait.ending {
                Ending::Woken { waker } => waker.to_string(),
                _ => String::new(),
            },
            opt(wait.lateness_ns()),
            opt(wait.early_ns()),
            largest.map_or_else(String::new, |(c, _)| c.name().to_string()),
            opt(largest.map(|(_, ns)| ns)),
            opt((!wait.interrupts.is_empty()).then(|| wait.interrupts.iter().map(|i| i.ns).sum())),
            wait.interrupts
                .first()
                .map_or_else(String::new, |i| i.name.clone()),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// A millisecond timeout as given (empty for the others).
fn timeout_ms(w: &ProgramWait) -> String {
    match w.timeout {
        Timeout::Millis(ms) => ms.to_string(),
        _ => String::new(),
    }
}

/// An ending's name in the CSV (the JSON's `by`).
pub fn ending_name(e: Ending) -> &'static str {
    match e {
        Ending::Timer => "timer",
        Ending::Woken { .. } => "woken",
        Ending::Signal => "signal",
        Ending::NeverBlocked => "never_blocked",
        Ending::Unrecorded => "unrecorded",
    }
}
