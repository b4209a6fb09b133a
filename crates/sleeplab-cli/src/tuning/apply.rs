//! A setting in force for one stretch of waits, on the measuring thread, and undone
//! after ([`Applied::revert`]): a per-process setting by the call that undoes it, a
//! system-wide one by rolling the journal back to where it stood. Dropped without
//! [`Applied::revert`] (a panic), the per-process parts still undo themselves and the
//! journal restores the rest when it drops.

use super::catalogue::{Change, Setting};
use super::journal::Journal;
use crate::settings::ThreadSettings;
use sleeplab::system::{self, Policy};
use std::fs::File;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// A SCHED_IDLE thread spinning on one CPU until stopped.
#[derive(Debug)]
struct Companion {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Companion {
    fn start(cpu: usize) -> Result<Self, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("sleeplab-awake".into())
            .spawn(move || {
                let ok = system::pin_to_cpu(cpu)
                    .map_err(|e| e.to_string())
                    .and_then(|_| {
                        let p = libc::sched_param { sched_priority: 0 };
                        // SAFETY: a valid sched_param for the calling thread.
                        match unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &p) } {
                            0 => Ok(()),
                            _ => Err(format!("SCHED_IDLE: {}", std::io::Error::last_os_error())),
                        }
                    });
                let go = ok.is_ok();
                let _ = tx.send(ok);
                while go && !flag.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
            .map_err(|e| e.to_string())?;
        let mut c = Self {
            stop,
            handle: Some(handle),
        };
        match rx.recv() {
            Ok(Ok(())) => Ok(c),
            Ok(Err(e)) => {
                c.end();
                Err(e)
            }
            Err(_) => Err("the keep-awake thread ended".into()),
        }
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Companion {
    fn drop(&mut self) {
        self.end();
    }
}

/// The calling thread's CPU affinity, to restore after pinning.
struct Affinity(libc::cpu_set_t);

impl Affinity {
    fn now() -> Option<Self> {
        // SAFETY: a zeroed cpu_set_t is valid; the kernel fills it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then_some(Self(set))
        }
    }

    fn restore(&self) {
        // SAFETY: a valid set read by sched_getaffinity.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0) };
    }
}

/// The nice value of the calling thread.
fn nice_now() -> i32 {
    // SAFETY: getpriority/gettid have no preconditions; errno distinguishes −1.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

fn set_nice(n: i32) -> Result<(), String> {
    // SAFETY: as above; PRIO_PROCESS with a tid sets that thread's nice on Linux.
    match unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, n) } {
        0 => Ok(()),
        _ => Err(format!(
            "setpriority({n}): {}",
            std::io::Error::last_os_error()
        )),
    }
}

/// A setting in force; [`Applied::revert`] undoes it.
pub struct Applied {
    base: ThreadSettings,
    change: Change,
    affinity: Option<Affinity>,
    slack: Option<system::SlackGuard>,
    nice: Option<i32>,
    companion: Option<Companion>,
    dma: Option<File>,
    mark: Option<usize>,
}

/// Puts `setting` in force on the calling (measuring) thread, pinned to `cpu` where the
/// setting is about one CPU; system files through `journal`. `base`: the thread's
/// settings to come back to. An error says why it could not be applied (nothing of it
/// is then left in force).
pub fn apply(
    setting: &Setting,
    cpu: usize,
    base: ThreadSettings,
    journal: &mut Journal,
) -> Result<Applied, String> {
    let pins = matches!(setting.change, Change::Pin | Change::Companion)
        || setting.info.name == "irq-affinity";
    let mut a = Applied {
        base,
        change: setting.change.clone(),
        affinity: None,
        slack: None,
        nice: None,
        companion: None,
        dma: None,
        mark: None,
    };
    if pins {
        a.affinity = Affinity::now();
        system::pin_to_cpu(cpu).map_err(|e| e.to_string())?;
    }
    let r = match &setting.change {
        Change::Slack => system::SlackGuard::set(1)
            .map(|g| a.slack = Some(g))
            .map_err(|e| e.to_string()),
        Change::RealTime(p) => system::set_policy(*p, 1).map_err(|e| e.to_string()),
        Change::Nice(n) => {
            a.nice = Some(nice_now());
            set_nice(*n)
        }
        Change::Slice(ns) => system::set_sched_slice_ns(Some(*ns))
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Change::Pin => Ok(()),
        Change::Companion => Companion::start(cpu).map(|c| a.companion = Some(c)),
        Change::Mlock => system::lock_memory().map_err(|e| e.to_string()),
        Change::DmaLatency(path) => File::options()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(&0i32.to_ne_bytes()).map(|_| f))
            .map(|f| a.dma = Some(f))
            .map_err(|e| format!("{}: {e}", path.display())),
        Change::Writes(files) => {
            a.mark = Some(journal.len());
            let mut changed = 0;
            let mut last = None;
            for (path, value) in files {
                match journal.change(path, value) {
                    Ok(()) => changed += 1,
                    // Some files refuse (per-CPU interrupts): the rest still count.
                    Err(e) => last = Some(e.to_string()),
                }
            }
            match (changed, last) {
                (0, Some(e)) => Err(e),
                _ => Ok(()),
            }
        }
    };
    match r {
        Ok(()) => Ok(a),
        Err(e) => {
            a.revert(journal);
            Err(e)
        }
    }
}

impl Applied {
    /// Undoes the setting; the system files that could not be written back, with why.
    pub fn revert(mut self, journal: &mut Journal) -> Vec<String> {
        self.undo_process();
        self.mark
            .take()
            .map(|m| journal.rollback(m))
            .unwrap_or_default()
    }

    fn undo_process(&mut self) {
        self.slack.take();
        self.companion.take();
        self.dma.take();
        match self.change {
            Change::RealTime(_) => {
                let _ = system::set_policy(self.base.policy, self.base.priority);
                if self.base.policy == Policy::Other {
                    // Back to SCHED_OTHER, the thread's slice returns to the default too.
                    let _ = system::set_sched_slice_ns(None);
                }
            }
            Change::Slice(_) => {
                let _ = system::set_sched_slice_ns(None);
            }
            Change::Mlock if !self.base.mlock => {
                // SAFETY: munlockall has no preconditions.
                unsafe { libc::munlockall() };
            }
            _ => {}
        }
        if let Some(n) = self.nice.take() {
            let _ = set_nice(n);
        }
        if let Some(a) = self.affinity.take() {
            a.restore();
        }
    }
}

impl Drop for Applied {
    fn drop(&mut self) {
        self.undo_process();
    }
}
