//! A private tracefs instance (`instances/sleeplab-<pid>-<n>`): its own ring buffer,
//! trace clock, enabled events and filters, apart from the top-level buffer and any
//! other tool's instance. Created with its trace clock `mono` (CLOCK_MONOTONIC, the
//! clock the measuring code reads), not recording until asked; removed when dropped.
//! An instance whose process is gone (killed before it could remove it) is removed by
//! the next one created.
//!
//! An instance is created while the machine's `options/record-cmd` is off, and the
//! option is put back at once (journaled in between: `CommJournal`). An instance takes that top-level option as it stands
//! when it is made, and with it on, every event enabled in it hooks `sched_switch` and
//! `sched_wakeup` to copy the tasks' names into the kernel's saved-comm table, under a
//! lock all CPUs share, on the way of every wake. The events kept here carry in their
//! own fields the names the account reads; the table would serve only the text `trace`
//! file, which nothing here reads.

use crate::TraceError;
use crate::tracefs::Tracefs;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

/// The name every instance of ours starts with.
const PREFIX: &str = "sleeplab-";

/// Instances created by this process so far (their names' last part).
static CREATED: AtomicU32 = AtomicU32::new(0);

/// Held while this process turns the machine's comm recording off around an
/// instance's creation, so that two threads creating instances at once never leave it
/// off.
static COMM_RECORDING: Mutex<()> = Mutex::new(());

/// The journal of the one system change this module makes: a file, written before the
/// machine's `options/record-cmd` is turned off, that holds the value to put back, in
/// the format and directory of sleeplab's journal of system changes
/// (`sleeplab-cli`'s `tuning::journal`, which every start of sleeplab replays for a
/// process that is gone), so a run killed between the two writes (SIGKILL included)
/// has the option put back by the next. Removed when dropped.
struct CommJournal(PathBuf);

impl CommJournal {
    /// Journals that `option` is to be set back to 1, in `run_dir` (the CLI's
    /// `SLEEPLAB_RUN_DIR`, else `/run/sleeplab`); `None` where it cannot be written.
    fn write(run_dir: &Path, option: &Path) -> Option<Self> {
        let pid = std::process::id();
        let start = sleeplab::system::start_ticks(pid)?;
        std::fs::create_dir_all(run_dir).ok()?;
        let file = run_dir.join(format!("trace-{pid}-{start}.jsonl"));
        let line = serde_json::json!({ "path": option, "value": "1" });
        std::fs::write(&file, format!("{line}\n")).ok()?;
        Some(Self(file))
    }

    /// The run directory journals live in.
    fn run_dir() -> PathBuf {
        std::env::var_os("SLEEPLAB_RUN_DIR").map_or_else(|| "/run/sleeplab".into(), PathBuf::from)
    }
}

impl Drop for CommJournal {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Creates the instance directory `dir` under tracefs `root` while the machine's
/// `options/record-cmd` is off (see the module's comment), then puts the option back
/// as it was, the change journaled in `run_dir` until it is. Where the option cannot
/// be read, the journal written or the option turned off, the instance is created as
/// it stands.
fn create_without_comms(root: &Path, dir: &Path, run_dir: &Path) -> std::io::Result<()> {
    let option = root.join("options/record-cmd");
    let _held = COMM_RECORDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let journal = std::fs::read_to_string(&option)
        .is_ok_and(|v| v.trim() == "1")
        .then(|| CommJournal::write(run_dir, &option))
        .flatten();
    let turned_off = journal.is_some() && std::fs::write(&option, "0").is_ok();
    let made = std::fs::create_dir(dir);
    if turned_off && std::fs::write(&option, "1").is_err() {
        // Left for the next sleeplab run to replay.
        std::mem::forget(journal);
    }
    made
}

/// One CPU's buffer, read page by page.
struct CpuPipe {
    cpu: u32,
    file: File,
}

/// A tracefs instance of ours.
pub struct Instance {
    dir: PathBuf,
    pipes: Vec<CpuPipe>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").field("dir", &self.dir).finish()
    }
}

/// The error of writing `value` to `path`, by what the kernel said.
fn write_error(path: &Path, value: &str, e: &std::io::Error) -> TraceError {
    match e.kind() {
        ErrorKind::PermissionDenied => TraceError::NotPermitted(format!(
            "not allowed to write {} (tracing needs root)",
            path.display()
        )),
        _ => TraceError::Io(format!("writing {value:?} to {}: {e}", path.display())),
    }
}

impl Instance {
    /// Creates an instance of `buffer_kb` KiB per CPU, trace clock `mono`, recording
    /// off, keeping no saved comms; first removes the instances of processes that no
    /// longer run.
    pub fn create(fs: &Tracefs, cpus: &[u32], buffer_kb: u32) -> Result<Self, TraceError> {
        let instances = fs.root().join("instances");
        remove_stale(&instances);
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let dir = instances.join(format!("{PREFIX}{}-{n}", std::process::id()));
        create_without_comms(fs.root(), &dir, &CommJournal::run_dir()).map_err(|e| {
            match e.kind() {
                ErrorKind::PermissionDenied => TraceError::NotPermitted(format!(
                    "not allowed to create {} (tracing needs root)",
                    dir.display()
                )),
                ErrorKind::NotFound => {
                    TraceError::NoTracefs(format!("{} does not exist", instances.display()))
                }
                _ => TraceError::Io(format!("creating {}: {e}", dir.display())),
            }
        })?;
        // From here on, dropping `instance` removes the directory again.
        let mut instance = Self {
            dir,
            pipes: Vec::new(),
        };
        instance.write("tracing_on", "0")?;
        instance.write("trace_clock", "mono")?;
        // Full buffers drop new events (counted) rather than overwrite old ones: a
        // wake is either whole or counted as partial, never silently half-gone.
        instance.write("options/overwrite", "0")?;
        instance.write("buffer_size_kb", &buffer_kb.to_string())?;
        for &cpu in cpus {
            let path = instance.cpu_dir(cpu).join("trace_pipe_raw");
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
                .map_err(|e| TraceError::Io(format!("opening {}: {e}", path.display())))?;
            instance.pipes.push(CpuPipe { cpu, file });
        }
        Ok(instance)
    }

    fn cpu_dir(&self, cpu: u32) -> PathBuf {
        self.dir.join("per_cpu").join(format!("cpu{cpu}"))
    }

    /// Writes `value` to the instance's file `rel` (e.g. `events/sched/sched_switch/enable`).
    pub fn write(&self, rel: &str, value: &str) -> Result<(), TraceError> {
        let path = self.dir.join(rel);
        std::fs::write(&path, value).map_err(|e| write_error(&path, value, &e))
    }

    /// Enables `system:event` (every occurrence).
    pub fn enable_event(&self, system: &str, event: &str) -> Result<(), TraceError> {
        self.write(&format!("events/{system}/{event}/enable"), "1")
    }

    /// Starts or stops recording.
    pub fn set_on(&self, on: bool) -> Result<(), TraceError> {
        self.write("tracing_on", if on { "1" } else { "0" })
    }

    /// Reads the pages recorded so far, handing each to `on_page` with its CPU, CPU
    /// after CPU, until the buffer is empty or `on_page` says it has read enough of
    /// it (returns false: a reader's own system calls, when it follows itself, would
    /// otherwise keep its buffer from ever running dry).
    pub fn read_pages(
        &mut self,
        page: &mut [u8],
        mut on_page: impl FnMut(u32, &[u8]) -> bool,
    ) -> Result<(), TraceError> {
        for pipe in &mut self.pipes {
            loop {
                match pipe.file.read(page) {
                    Ok(0) => break,
                    Ok(n) => {
                        if !on_page(pipe.cpu, &page[..n]) {
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => return Err(TraceError::Io(format!("reading a trace buffer: {e}"))),
                }
            }
        }
        Ok(())
    }

    /// Events the buffers could not keep so far (`overrun` + `dropped events` of every
    /// CPU's `stats`).
    pub fn lost(&self) -> u64 {
        self.stats_sum(&["overrun:", "dropped events:"])
    }

    /// Events in the buffers, not yet read (`entries` of every CPU's `stats`): with
    /// nothing read since recording began, what was recorded and kept.
    pub fn entries(&self) -> u64 {
        self.stats_sum(&["entries:"])
    }

    /// The sum of the values after `keys` in every CPU's `stats`.
    fn stats_sum(&self, keys: &[&str]) -> u64 {
        self.pipes
            .iter()
            .map(|p| {
                let stats =
                    std::fs::read_to_string(self.cpu_dir(p.cpu).join("stats")).unwrap_or_default();
                keys.iter().map(|k| stat(&stats, k)).sum::<u64>()
            })
            .sum()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.set_on(false);
        // The kernel refuses to remove an instance whose files are open.
        self.pipes.clear();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The value after `key` in a `per_cpu/cpuN/stats` text (0 when absent).
fn stat(stats: &str, key: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
        .unwrap_or(0)
}

/// The pid in an instance name of ours (`sleeplab-<pid>-<n>`).
fn owner(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Removes our instances whose process is gone.
fn remove_stale(instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner(&name.to_string_lossy()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::started;

    #[test]
    fn instance_names_carry_their_owner() {
        assert_eq!(owner("sleeplab-4242-0"), Some(4242));
        assert_eq!(owner("sleeplab-17-12"), Some(17));
        assert_eq!(owner("trace-cmd"), None);
        assert_eq!(owner("sleeplab-x-1"), None);
    }

    #[test]
    fn stats_are_read_by_key() {
        let s = "entries: 5\noverrun: 3\ncommit overrun: 0\ndropped events: 2\n";
        assert_eq!(stat(s, "overrun:"), 3);
        assert_eq!(stat(s, "dropped events:"), 2);
        assert_eq!(stat(s, "read events:"), 0);
    }

    /// An instance of a process that is gone is removed; one of a live process is not
    /// (a directory laid out as tracefs' `instances/` is).
    #[test]
    fn stale_instances_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join(format!("{PREFIX}{}-0", u32::MAX - 1));
        let alive = dir.path().join(format!("{PREFIX}{}-0", std::process::id()));
        let other = dir.path().join("someone-else");
        for d in [&gone, &alive, &other] {
            std::fs::create_dir(d).unwrap();
        }
        remove_stale(dir.path());
        assert!(!gone.exists());
        assert!(alive.exists());
        assert!(other.exists());
    }

    /// An instance's events save no comms (a thread named for this test, switching
    /// while the instance records, stays out of `saved_cmdlines`), and the machine's
    /// `options/record-cmd` is as it was.
    #[test]
    fn instances_keep_no_saved_comms() {
        let Some(fs) = started(Tracefs::find_or_mount()) else {
            return;
        };
        let option = fs.root().join("options/record-cmd");
        // Read while no other thread of this process has the option turned off.
        let setting = || {
            let _held = COMM_RECORDING
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            std::fs::read_to_string(&option).unwrap_or_default()
        };
        let before = setting();
        let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
        let cpus = crate::parse_cpu_list(online.trim());
        let Some(instance) = started(Instance::create(&fs, &cpus, 64)) else {
            return;
        };
        assert_eq!(setting(), before, "the machine's record-cmd changed");
        instance.enable_event("sched", "sched_switch").unwrap();
        instance.set_on(true).unwrap();
        let name = format!("nocomm{}", std::process::id());
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(|| {
                for _ in 0..5 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            })
            .unwrap()
            .join()
            .unwrap();
        instance.set_on(false).unwrap();
        assert!(
            instance.entries() >= 5,
            "the thread's switches were not recorded"
        );
        let saved = std::fs::read_to_string(fs.root().join("saved_cmdlines")).unwrap();
        assert!(
            !saved.split_whitespace().any(|comm| comm == name),
            "{name} was saved"
        );
    }

    /// Around the creation, the option is off and journaled; after it, back on with no
    /// journal left (a directory laid out as tracefs' root is, and a run directory).
    #[test]
    fn record_cmd_is_journaled_while_off_and_put_back() {
        let root = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("options")).unwrap();
        let option = root.path().join("options/record-cmd");
        std::fs::write(&option, "1").unwrap();
        let dir = root.path().join("instance");
        create_without_comms(root.path(), &dir, run.path()).unwrap();
        assert!(dir.is_dir());
        assert_eq!(std::fs::read_to_string(&option).unwrap(), "1");
        assert_eq!(std::fs::read_dir(run.path()).unwrap().count(), 0);

        // What a run killed between the writes leaves: the option off, the journal
        // naming it with the value to put back.
        std::fs::write(&option, "1").unwrap();
        let journal = CommJournal::write(run.path(), &option).unwrap();
        let file = journal.0.clone();
        std::mem::forget(journal);
        let text = std::fs::read_to_string(&file).unwrap();
        let entry: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(entry["path"], option.to_string_lossy().as_ref());
        assert_eq!(entry["value"], "1");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(&format!("trace-{}-", std::process::id())),
            "{name}"
        );
    }
}
