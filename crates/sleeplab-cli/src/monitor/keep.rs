//! The monitor's flight recorder (`--keep-over`): a wake later than the threshold keeps
//! the kernel's trace of its wait in a saved trace (the format `explain --from` reads),
//! is counted, and is linked from its latency bucket by an OpenMetrics exemplar that
//! names the file.
//!
//! A measuring thread records each burst (its own system calls included) and, when a
//! wake of the burst crossed the threshold, hands the burst's events to the keeper
//! ([`Keeper`]), a thread of its own that does not measure: it finds the burst's waits,
//! picks the one each late wake returned from ([`choose`]), keeps those windows as
//! `explain` keeps a program's (each checked to give the same account from its events
//! alone) and writes them, whole or not at all. A burst with no late wake costs its
//! recording only. The keeper's queue is short: a burst it has no room for is counted
//! as unkept, never waited for.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::SystemTime;

use anyhow::Context as _;
use sleeplab::system::Fingerprint;
use sleeplab_account::{Found, Keep, Timeline, accounts, find_waits, keep_chosen};

use super::record::{BUCKETS_NS, Buckets};
use crate::experiments::explain::program::{
    self as explain_program, Followed, KeptBy, Run, Saving,
};

/// What the flight recorder keeps, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeepConfig {
    /// A wake later than this past its deadline keeps its wait's window, ns.
    pub over_ns: u64,
    /// The directory the saved traces are written in (it exists).
    pub dir: PathBuf,
    /// At most this many saved traces over the run; later late wakes are counted as
    /// unkept.
    pub max_files: u64,
}

/// A wake the measuring thread saw cross the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateWake {
    /// When it woke, CLOCK_MONOTONIC ns.
    pub wake_ns: u64,
    /// How late, by the monitor's own clock, ns.
    pub lateness_ns: u64,
}

/// The latest kept wake of one latency bucket: the exemplar that links the bucket to
/// its saved trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exemplar {
    /// The saved trace's file name (in the keep directory).
    pub trace: String,
    /// The wake's lateness, ns.
    pub lateness_ns: u64,
    /// When it was kept.
    pub at: SystemTime,
}

/// What one cell's flight recorder has done, read by the scrapes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeepLog {
    /// Saved traces written.
    pub traces: u64,
    /// Late wakes whose wait's window is in a saved trace.
    pub kept: u64,
    /// Late wakes not kept: no blocking wait returned for them (a spin), their account
    /// needed more than the widest lookback, a bound was reached, the keeper's queue was
    /// full, or the file could not be written.
    pub unkept: u64,
    /// The latest kept wake of each latency bucket ([`BUCKETS_NS`], then `+Inf`).
    pub exemplars: [Option<Exemplar>; BUCKETS_NS.len() + 1],
}

impl KeepLog {
    fn add(log: &Mutex<Self>, f: impl FnOnce(&mut Self)) {
        f(&mut log.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// One burst with late wakes, as its measuring thread hands it to the keeper.
pub struct Burst {
    /// The measuring thread.
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// The burst's span, s.
    pub seconds: f64,
    /// The cell's requested wait, ns.
    pub requested_ns: u64,
    /// What the tracer recorded over the burst.
    pub timeline: Timeline,
    /// Events the kernel could not record.
    pub lost: u64,
    /// The wakes that crossed the threshold.
    pub late: Vec<LateWake>,
}

/// A burst and the cell it is of, queued for the keeper.
struct Job {
    cell: usize,
    burst: Burst,
}

/// A measuring thread's way to the keeper.
#[derive(Debug, Clone)]
pub struct KeepSender {
    tx: SyncSender<Job>,
    cell: usize,
    log: Arc<Mutex<KeepLog>>,
    /// The threshold, ns.
    pub over_ns: u64,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("cell", &self.cell)
            .field("late", &self.burst.late.len())
            .finish_non_exhaustive()
    }
}

impl KeepSender {
    /// Hands a burst's events and its late wakes to the keeper; a burst it has no room
    /// for counts its late wakes as unkept.
    pub fn send(&self, burst: Burst) {
        let n = burst.late.len() as u64;
        let job = Job {
            cell: self.cell,
            burst,
        };
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(job) {
            KeepLog::add(&self.log, |l| l.unkept += n);
        }
    }
}

/// The keeper thread and the cells' logs.
#[derive(Debug)]
pub struct Keeper {
    tx: Option<SyncSender<Job>>,
    handle: Option<JoinHandle<()>>,
    /// Each cell's log, by cell index.
    pub logs: Vec<Arc<Mutex<KeepLog>>>,
}

/// Bursts waiting for the keeper at most (each holds a burst's events).
const QUEUE: usize = 4;

impl Keeper {
    /// Starts the keeper for `cells` (their names, by index) writing by `config`.
    pub fn start(config: KeepConfig, cells: Vec<String>) -> anyhow::Result<Self> {
        let logs: Vec<Arc<Mutex<KeepLog>>> = cells.iter().map(|_| Arc::default()).collect();
        let (tx, rx) = sync_channel(QUEUE);
        let shared = logs.clone();
        let handle = std::thread::Builder::new()
            .name("monitor-keep".into())
            .spawn(move || run(&rx, &config, &cells, &shared))
            .context("cannot start the flight recorder's thread")?;
        Ok(Self {
            tx: Some(tx),
            handle: Some(handle),
            logs,
        })
    }

    /// The sender of cell `i`, with the threshold.
    pub fn sender(&self, i: usize, over_ns: u64) -> Option<KeepSender> {
        Some(KeepSender {
            tx: self.tx.clone()?,
            cell: i,
            log: Arc::clone(self.logs.get(i)?),
            over_ns,
        })
    }

    /// Lets the keeper finish the bursts it holds, then ends it (after the measuring
    /// threads ended: they hold the other senders).
    pub fn stop(mut self) {
        self.tx = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The keeper's life: one burst at a time until every sender is gone.
fn run(rx: &Receiver<Job>, config: &KeepConfig, cells: &[String], logs: &[Arc<Mutex<KeepLog>>]) {
    let machine = Fingerprint::collect();
    let mut files = 0u64;
    for job in rx {
        let Some(log) = logs.get(job.cell) else {
            continue;
        };
        let late = job.burst.late.len() as u64;
        if files >= config.max_files {
            KeepLog::add(log, |l| l.unkept += late);
            continue;
        }
        let cell = cells.get(job.cell).map_or("cell", String::as_str);
        match keep_burst(&job.burst, cell, config, &machine) {
            Ok(Some((trace, kept))) => {
                files += 1;
                KeepLog::add(log, |l| {
                    l.traces += 1;
                    l.kept += kept.len() as u64;
                    l.unkept += late - kept.len() as u64;
                    let at = SystemTime::now();
                    for w in &kept {
                        l.exemplars[Buckets::index_of(w.lateness_ns)] = Some(Exemplar {
                            trace: trace.clone(),
                            lateness_ns: w.lateness_ns,
                            at,
                        });
                    }
                });
            }
            Ok(None) => KeepLog::add(log, |l| l.unkept += late),
            Err(e) => {
                eprintln!("sleeplab monitor: {e:#}");
                KeepLog::add(log, |l| l.unkept += late);
            }
        }
    }
}

/// Keeps the windows of `burst`'s late wakes in a saved trace of their own: its file name
/// and the late wakes kept; `None` when none could be.
fn keep_burst(
    burst: &Burst,
    cell: &str,
    config: &KeepConfig,
    machine: &Fingerprint,
) -> anyhow::Result<Option<(String, Vec<LateWake>)>> {
    let tl = &burst.timeline;
    let found = find_waits(tl, None);
    let picks = choose(&found, burst.tid, burst.requested_ns, &burst.late);
    let mut chosen: Vec<usize> = picks.iter().flatten().copied().collect();
    chosen.sort_unstable();
    chosen.dedup();
    if chosen.is_empty() {
        return Ok(None);
    }
    let split = accounts(tl, &found.waits);
    let keep = Keep {
        over_ns: config.over_ns,
        max_windows: chosen.len(),
        max_bytes: explain_program::KEEP_MAX_BYTES,
    };
    let kept = keep_chosen(tl, &found, &split, &chosen, &keep);
    let is_kept = |i: usize| {
        let w = &found.waits[i];
        kept.windows
            .iter()
            .any(|k| k.tid == w.tid && k.to_ns == w.exit_ns)
    };
    let kept_wakes: Vec<LateWake> = burst
        .late
        .iter()
        .zip(&picks)
        .filter(|(_, pick)| pick.is_some_and(is_kept))
        .map(|(w, _)| *w)
        .collect();
    if kept_wakes.is_empty() {
        return Ok(None);
    }
    let name = file_name(cell, SystemTime::now());
    let run = Run {
        target: Followed {
            pid: std::process::id() as i32,
            comm: burst.comm.clone(),
            command: None,
        },
        seconds: burst.seconds,
        exited_after: None,
        ended: None,
        lost_events: burst.lost,
        interrupted: false,
        interrupts: tl.records_interrupts(),
        idle_states: tl.records_local_timer(),
        // The monitor's recorder keeps its thread's calls by the pid list.
        kept_by: KeptBy::PidList,
    };
    let saving = Saving::Kept {
        timeline: tl,
        kept: &kept,
        keep,
        found: &found,
        monitor_cell: Some(cell),
    };
    explain_program::write_saved(
        &config.dir.join(&name),
        &run,
        &explain_program::irq_names_now(),
        machine,
        saving,
    )?;
    Ok(Some((name, kept_wakes)))
}

/// For each late wake (in order), the index in `found` of the wait of thread `tid` it
/// returned from: the last to return at or before the wake and after the deadline's
/// `requested_ns` before it began (the wait began after that: a one-shot wait of
/// `requested_ns`, or a period). `None` where no wait returned in that span (the wake
/// came from a spin, or the wait's events were lost).
pub fn choose(found: &Found, tid: i32, requested_ns: u64, late: &[LateWake]) -> Vec<Option<usize>> {
    late.iter()
        .map(|l| {
            let deadline = l.wake_ns.saturating_sub(l.lateness_ns);
            let after = deadline.saturating_sub(requested_ns);
            found
                .waits
                .iter()
                .enumerate()
                .filter(|(_, w)| w.tid == tid && w.exit_ns > after && w.exit_ns <= l.wake_ns)
                .max_by_key(|(_, w)| w.exit_ns)
                .map(|(i, _)| i)
        })
        .collect()
}

/// The saved trace's file name: the cell's name in letters, digits, `.`, `-` and `_`
/// (the rest `-`, at most 60 of them) and the time in ms since the epoch; short enough
/// for an OpenMetrics exemplar's 128 characters.
pub fn file_name(cell: &str, at: SystemTime) -> String {
    let safe: String = cell
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let ms = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{safe}-{ms}.sltrace")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_short() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123);
        assert_eq!(
            file_name("tick:clock-nanosleep-abs@1ms", at),
            "tick-clock-nanosleep-abs-1ms-1700000000123.sltrace"
        );
        let long = "x/".repeat(100);
        let name = file_name(&long, at);
        assert!(name.len() <= 60 + 1 + 13 + 8, "{name}");
        assert!(!name.contains('/'));
    }

    fn wait(tid: i32, enter_ns: u64, exit_ns: u64) -> sleeplab_account::ProgramWait {
        sleeplab_account::ProgramWait {
            tid,
            comm: "monitor-0".into(),
            call: sleeplab_account::WaitCall::ClockNanosleep,
            timeout: sleeplab_account::Timeout::InMemory,
            enter_ns,
            exit_ns,
            ret: 0,
            deadline_ns: Some(exit_ns.saturating_sub(10)),
            hard_ns: None,
            ending: sleeplab_account::Ending::Timer,
            interrupts: Vec::new(),
        }
    }

    /// Each late wake is given the wait of its own thread that returned last before it,
    /// within the span its wait began in; a wake with none there (a spin) gets none.
    #[test]
    fn each_late_wake_gets_the_wait_it_returned_from() {
        let found = Found {
            waits: vec![
                wait(7, 0, 1_000),
                wait(8, 1_000, 2_100), // another thread's
                wait(7, 1_000, 2_050),
                wait(7, 2_100, 3_500),
            ],
            ..Found::default()
        };
        let late = |wake_ns, lateness_ns| LateWake {
            wake_ns,
            lateness_ns,
        };
        // Deadline 2_000: tid 7's wait that returned at 2_050 (not tid 8's at 2_100).
        // Deadline 3_000: the wait that returned at 3_500 came after the wake at 3_400;
        // the one at 2_050 returned after 2_000 (the deadline less 1_000), so it is the
        // one. Deadline 8_000: none returned in (7_000, 9_000].
        let picks = choose(
            &found,
            7,
            1_000,
            &[late(2_060, 60), late(3_400, 400), late(9_000, 1_000)],
        );
        assert_eq!(picks, vec![Some(2), Some(2), None]);
        // The same wakes on a thread with no waits: none.
        assert_eq!(choose(&found, 9, 1_000, &[late(2_060, 60)]), vec![None]);
    }
}
