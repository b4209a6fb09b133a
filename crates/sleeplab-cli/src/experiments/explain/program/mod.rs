//! `explain` for a program of the user's own: follow every thread of a running
//! process (or of a command started for it), threads created later included, record the
//! kernel's events with their system calls' entries and returns, then find every wait
//! that blocked on a timer and split the lateness of each its timer ended
//! ([`sleeplab_account::find_waits`]). Prints a summary per call with the traps found,
//! and writes every wait as JSON or CSV on request.
//!
//! Without kernel tracing (not root, no tracefs) it says why and what `/proc` still
//! tells: each thread's voluntary and involuntary context switches over the run and its
//! wait channel; that is not an error (exit 0).
//!
//! * `target`: the process or command followed ([`Target`]);
//! * `render`: the terminal summary;
//! * `output`: the JSON document and the CSV of every wait; `page`: the report page;
//! * `saved`: the run as a saved trace (`--save`, `--keep-over`), read back (`--from`).

mod output;
mod page;
mod render;
mod saved;
mod target;

pub use saved::KEEP_MAX_BYTES;
// What the monitor's flight recorder writes its saved traces with.
#[cfg(feature = "monitor")]
pub use output::{Followed, KeptBy, Run};
#[cfg(feature = "monitor")]
pub use saved::{Saving, write as write_saved};
pub use target::{Target, TargetSpec};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use sleeplab::system::Fingerprint;
use sleeplab_account::{
    Detail, Follow, Found, KEEP_LOOKBACK_MAX_NS, Keep, Machine, Recording, Symbols, SyscallsBy,
    Timeline, WakeAccount, accounts, find_waits, keep, kept_waits, name_holder_stacks, summarise,
    traps,
};
use sleeplab_stats::units::ns;

use crate::error::UsageError;
use crate::experiments::Wording;
use crate::interrupt::{EXIT_INTERRUPTED, interrupted};

/// What to follow, for how long, and where to write.
#[derive(Debug, Clone)]
pub struct ProgramConfig {
    /// The process or command.
    pub target: TargetSpec,
    /// How long to follow it (`None`: until it exits, or Ctrl-C).
    pub seconds: Option<f64>,
    /// Where to write the JSON document.
    pub json: Option<PathBuf>,
    /// Where to write the CSV of every wait.
    pub csv: Option<PathBuf>,
    /// The report directory to draw the page in.
    pub report: Option<PathBuf>,
    /// Where to save the trace (`--save`).
    pub save: Option<PathBuf>,
    /// Save only the windows of the waits later than a threshold (`--keep-over`).
    pub keep: Option<Keep>,
    /// The command line that reads the saved trace back, as the command layer words it.
    pub read_back: String,
    /// Record the kernel stack of each task as it leaves a CPU, and name the holders'.
    pub stacks: bool,
    /// What of the machine's own work is recorded too: its interrupts but the local
    /// timer's (the default), none (`--light`), or all and the idle states
    /// (`--idle-states`).
    pub detail: Detail,
    /// How the program's system calls are kept to it (`--pid-list`: the kernel's).
    pub syscalls_by: SyscallsBy,
    /// How the summary's sentences name the command line's flags.
    pub hints: Wording,
}

/// Where the account's outputs go.
#[derive(Debug, Clone, Copy)]
pub struct Outputs<'a> {
    /// The JSON document of every wait.
    pub json: Option<&'a Path>,
    /// The CSV of every wait.
    pub csv: Option<&'a Path>,
    /// The report directory (its `index.html`).
    pub report: Option<&'a Path>,
    /// How the summary's sentences, on the terminal and the page, name the command
    /// line's flags.
    pub hints: Wording,
}

/// How often the run checks whether to stop.
const POLL: Duration = Duration::from_millis(50);

/// Follows the program, then prints and writes its account; returns the exit code
/// (130 after Ctrl-C, with what was recorded kept).
pub fn run(cfg: &ProgramConfig, quiet: bool) -> anyhow::Result<i32> {
    let mut target = Target::open(&cfg.target)?;
    let mut tids = match &target.command {
        Some(_) => vec![target.pid],
        None => target.threads(),
    };
    let follow = |tids: &[i32]| {
        if cfg.stacks {
            Follow::ProgramStacks(tids.to_vec(), cfg.detail, cfg.syscalls_by)
        } else {
            Follow::Program(tids.to_vec(), cfg.detail, cfg.syscalls_by)
        }
    };
    let mut recording = Recording::drained(true, follow(&tids));
    // A running process may create a thread between the reading of its threads and the
    // moment the recorder follows their forks. The kernel's pid list and the BPF
    // recorder follow forks from then on only: start again with it, a few times at
    // most. Ftrace's filter names the pids not handed out yet, so it has the thread
    // already; a held command has not run yet.
    let follows_forks_from_attach =
        matches!(cfg.syscalls_by, SyscallsBy::PidList | SyscallsBy::Bpf);
    for _ in 0..3 {
        if target.command.is_some() || !follows_forks_from_attach || !recording.kernel() {
            break;
        }
        let now = target.threads();
        if now.iter().all(|t| tids.contains(t)) {
            break;
        }
        drop(recording.finish());
        tids = now;
        recording = Recording::drained(true, follow(&tids));
    }
    // Without the kernel: /proc's counts at the start, and the last ones read while the
    // program ran (a program that exits takes its /proc entries with it).
    let before = (!recording.kernel()).then(|| target::thread_counts(target.pid));
    let mut last = before.clone();
    let started = Instant::now();
    target.release();
    let bar = progress(cfg.seconds, &target, quiet);
    let mut exited_after = None;
    loop {
        std::thread::sleep(POLL);
        let elapsed = started.elapsed().as_secs_f64();
        if let Some(b) = &bar {
            b.set_position((elapsed * 10.0) as u64);
        }
        if interrupted() || cfg.seconds.is_some_and(|s| elapsed >= s) {
            break;
        }
        if last.is_some() {
            let now = target::thread_counts(target.pid);
            if !now.is_empty() {
                last = Some(now);
            }
        }
        if !target.alive() {
            exited_after = Some(elapsed);
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = last;
    let (timeline, status) = recording.finish();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let ended = target.finish();
    let run = output::Run {
        target: target.followed(),
        seconds,
        exited_after,
        ended,
        lost_events: status.as_ref().map_or(0, |s| s.lost_events),
        interrupted: interrupted(),
        interrupts: timeline.as_ref().is_some_and(Timeline::records_interrupts),
        idle_states: timeline.as_ref().is_some_and(Timeline::records_local_timer),
        kept_by: output::KeptBy::of(cfg.syscalls_by),
    };
    let code = if run.interrupted { EXIT_INTERRUPTED } else { 0 };
    let Some(tl) = timeline else {
        // No kernel account: why, and what /proc tells of each thread instead.
        let note = status.and_then(|s| s.note).unwrap_or_default();
        let (before, after) = (before.unwrap_or_default(), after.unwrap_or_default());
        print!("{}", render::proc_only(&note, &run, &before, &after));
        for path in [&cfg.json, &cfg.csv, &cfg.save, &cfg.report]
            .into_iter()
            .flatten()
        {
            eprintln!(
                "sleeplab: {} not written: a program's waits need the kernel's account",
                path.display()
            );
        }
        return Ok(code);
    };
    let found = find_waits(&tl, None);
    let irq_names = irq_names_now();
    // The machine, read once: the account's words, the saved trace, the page.
    let machine = Fingerprint::collect();
    // Each wait's account, once: the summary, the CSV and the flight recorder read it.
    let split = accounts(&tl, &found.waits);
    let saved_note = match &cfg.save {
        Some(path) => Some(save(
            path, &run, &tl, &found, &split, &irq_names, &machine, cfg,
        )?),
        None => None,
    };
    let outputs = Outputs {
        json: cfg.json.as_deref(),
        csv: cfg.csv.as_deref(),
        report: cfg.report.as_deref(),
        hints: cfg.hints,
    };
    explain(&run, &tl, found, &split, &irq_names, &machine, outputs)?;
    if let Some(note) = saved_note {
        println!("{note}");
    }
    Ok(code)
}

/// Reads the saved trace at `path` and prints (and writes) the account it holds: the
/// same as the live run's, for the whole run or for each kept wait. `prepare` runs once
/// the file has been read, before anything is written (it makes the report directory).
pub fn replay(
    path: &Path,
    outputs: Outputs<'_>,
    prepare: impl FnOnce() -> Result<(), UsageError>,
) -> anyhow::Result<i32> {
    let (meta, captured, windows) = saved::read(path)?;
    prepare()?;
    let events = captured.events.len();
    // The file's header says what was recorded (a description written before the
    // field existed leaves it out).
    let run = output::Run {
        interrupts: captured.interrupts.any(),
        idle_states: captured.interrupts.local_timer(),
        ..meta.run.clone()
    };
    let tl = Timeline::of(captured);
    let mut found = find_waits(&tl, None);
    let what = match &meta.kept {
        None => format!("the whole run, {events} events"),
        Some(k) => {
            found = kept_waits(&found, &windows);
            found.untimed = k.untimed;
            found.unpaired = k.unpaired;
            match &k.monitor_cell {
                None => format!(
                    "the windows of {} of the {} waits later than {} past their deadline (of {} waits with a timeout); the account below is of those waits alone",
                    found.waits.len(),
                    k.over,
                    ns(k.over_ns as f64),
                    k.waits
                ),
                Some(cell) => format!(
                    "the windows of {} of the {} waits the monitor's cell {cell} woke from later than {} by its own clock (of {} waits with a timeout); the account below is of those waits alone",
                    found.waits.len(),
                    k.over,
                    ns(k.over_ns as f64),
                    k.waits
                ),
            }
        }
    };
    println!("From the saved trace {}: {what}.", path.display());
    let split = accounts(&tl, &found.waits);
    explain(
        &run,
        &tl,
        found,
        &split,
        &meta.irq_names,
        &meta.fingerprint,
        outputs,
    )?;
    Ok(0)
}

/// Prints the account of the waits `found` on `tl` (each split in `split`, by index)
/// on `machine` and writes the files asked for.
fn explain(
    run: &output::Run,
    tl: &Timeline,
    mut found: Found,
    split: &[Option<WakeAccount>],
    irq_names: &BTreeMap<i32, String>,
    machine: &Fingerprint,
    outputs: Outputs<'_>,
) -> anyhow::Result<()> {
    found.name_device_irqs(|n| irq_names.get(&n).cloned());
    let mut calls = summarise(&found, split, run.lost_events);
    if tl.records_stacks() {
        let symbols = Symbols::load();
        name_holder_stacks(&mut calls, tl, &found, split, |f| symbols.shown(f));
    }
    let trapped = traps(&found.waits);
    let words = Machine::of(machine);
    print!(
        "{}",
        render::render(run, &found, &calls, &trapped, words, outputs.hints)
    );
    if tl.unpaired_stacks() > 0 {
        println!(
            "{} kernel stacks followed no switch on their CPU (a record lost between them) and were dropped.",
            tl.unpaired_stacks()
        );
    }
    if tl.late_threads() > 0 {
        println!(
            "{} threads of the program were born faster than the tracer could follow: their first system calls, and any wait among them, may be missing.",
            tl.late_threads()
        );
    }

    if let Some(path) = outputs.json {
        output::write_json(path, run, &found, &calls, &trapped)?;
    }
    if let Some(path) = outputs.csv {
        output::write_csv(path, &found, split)?;
    }
    if let Some(dir) = outputs.report {
        let index = page::write(dir, run, &found, &calls, &trapped, machine, outputs.hints)?;
        println!("Report: {}", index.display());
    }
    Ok(())
}

/// Saves the run's trace to `path` (the kept windows only, with `keep`); the line that
/// says what was saved.
#[allow(clippy::too_many_arguments)]
fn save(
    path: &Path,
    run: &output::Run,
    tl: &Timeline,
    found: &Found,
    split: &[Option<WakeAccount>],
    irq_names: &BTreeMap<i32, String>,
    machine: &Fingerprint,
    cfg: &ProgramConfig,
) -> anyhow::Result<String> {
    let Some(k) = cfg.keep else {
        let (events, _) = saved::write(path, run, irq_names, machine, saved::Saving::Whole(tl))?;
        return Ok(format!(
            "Saved the whole trace to {} ({events} events): `{}` reads it back.",
            path.display(),
            cfg.read_back
        ));
    };
    let kept = keep(tl, found, split, &k);
    let saving = saved::Saving::Kept {
        timeline: tl,
        kept: &kept,
        keep: k,
        found,
        monitor_cell: None,
    };
    let (events, windows) = saved::write(path, run, irq_names, machine, saving)?;
    let mut line = format!(
        "Kept {windows} of the {} waits later than {} past their deadline in {} ({events} events)",
        kept.over,
        ns(k.over_ns as f64),
        path.display()
    );
    if kept.dropped > 0 {
        line.push_str(&format!(
            "; {} less late ones not kept (at most {} windows of {} MiB, or tried)",
            kept.dropped,
            k.max_windows,
            k.max_bytes >> 20
        ));
    }
    if windows > 0 {
        line.push_str(&format!(": `{}` reads them back", cfg.read_back));
    }
    if kept.unequal > 0 {
        line.push_str(&format!(
            "; {} not kept: their account needed events from more than {} before the wait",
            kept.unequal,
            ns(KEEP_LOOKBACK_MAX_NS as f64)
        ));
    }
    line.push('.');
    Ok(line)
}

/// A bar over the seconds asked for, or a spinner until the program exits; `None` when
/// quiet.
fn progress(seconds: Option<f64>, target: &Target, quiet: bool) -> Option<ProgressBar> {
    if quiet {
        return None;
    }
    let what = format!("following {} (pid {})", target.comm, target.pid);
    let bar = match seconds {
        Some(s) => {
            let b = ProgressBar::new((s * 10.0).ceil() as u64);
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        }
        None => ProgressBar::new_spinner(),
    };
    bar.set_message(what);
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// The device interrupts' names by number, from `/proc/interrupts` now (none where it
/// cannot be read).
pub fn irq_names_now() -> BTreeMap<i32, String> {
    device_irq_names(&std::fs::read_to_string("/proc/interrupts").unwrap_or_default())
}

/// The device interrupts' names by number, from the text of `/proc/interrupts`: the
/// last word of each numbered line (the handler's name, `virtio0-input.0`); none where
/// the file is unreadable.
fn device_irq_names(text: &str) -> BTreeMap<i32, String> {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let number = words.next()?.strip_suffix(':')?.parse::<i32>().ok()?;
            let name = words.last()?;
            (name.parse::<u64>().is_err()).then(|| (number, name.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod irq_names_tests {
    use super::device_irq_names;

    #[test]
    fn numbered_lines_give_their_last_word() {
        let text = "           CPU0       CPU1\n  4:         12          0   IO-APIC   4-edge      ttyS0\n 24:          0          3  PCI-MSI 49152-edge      virtio0-config\nNMI:          0          0   Non-maskable interrupts\n 30:          0          0\n";
        let n = device_irq_names(text);
        assert_eq!(n.get(&4).map(String::as_str), Some("ttyS0"));
        assert_eq!(n.get(&24).map(String::as_str), Some("virtio0-config"));
        assert_eq!(
            n.len(),
            2,
            "NMI is not numbered; a line of counts alone has no name: {n:?}"
        );
    }
}
