//! Which threads a followed program has, and the event filter that records their
//! system calls and (nearly) no other thread's.
//!
//! The kernel can follow a program itself (`set_event_pid` with `event-fork`), but
//! its pid list hooks every switch and wakeup on the machine, and on the 2-core VM
//! the list added about 0.5–1 µs more to each wake of the followed thread than this
//! filter does (docs/BENCHMARKS.md, "What the tracer costs"). An event filter on
//! `common_pid` costs the followed thread nothing beyond the records, but it
//! names pids, and the kernel has no filter field for a thread's process: a thread
//! the program creates would go unrecorded until a drain had seen it born.
//!
//! So the filter names the program's threads known so far *and a window of pids the
//! kernel has not handed out yet* ([`Window`]): pids are allocated cyclically upward,
//! so every thread created after the window's floor has a pid in the window, up to
//! [`HEADROOM`] creations on the machine later, and past the wrap to the lowest free pids
//! (from [`RESERVED_PIDS`]) when the window reaches `pid_max`. The drain reads the
//! kernel's fork and exit events (`sched_process_fork`, `sched_process_exit`, every
//! task's, in time order), adds each child of a known thread to the program, keeps the
//! system calls of the program's threads only (other tasks in the window are dropped),
//! and moves the window's floor up to the newest pid the *previous* drain saw: a fork
//! writes its event before the child runs, so by the next drain every thread born
//! below the floor is known by name. A child born outside the filter in force (the
//! machine made more than [`HEADROOM`] tasks between two drains) is counted
//! ([`Lineage::late`]): its first calls may be missing.

use std::collections::BTreeSet;

use crate::format::{Format, FormatError, IntField};

/// The lowest pid the kernel hands out after `pid_max` wraps (`RESERVED_PIDS`).
pub const RESERVED_PIDS: i32 = 300;

/// How many tasks the machine may create between two rewrites of the filter before
/// one falls outside its window: two drains apart ([`crate::DRAIN_EVERY`]), this is
/// 51 200 tasks a second.
pub const HEADROOM: i32 = 2048;

/// The longest filter written: the kernel refuses a write of a page (4 KiB) or more.
const MAX_FILTER: usize = 3800;

/// The pids not handed out yet, as of a drain: `(after, through]`, and after a wrap
/// `[RESERVED_PIDS, low_through]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The newest pid handed out (the floor, exclusive).
    pub after: i32,
    /// The highest pid the window holds.
    pub through: i32,
    /// Where the window wraps: the highest pid of its part from [`RESERVED_PIDS`].
    pub low_through: Option<i32>,
}

impl Window {
    /// The window past `newest`, on a machine of `tasks` tasks (each may hold a pid the
    /// kernel skips) whose pids end below `pid_max`.
    pub fn after(newest: i32, tasks: i32, pid_max: i32) -> Self {
        let span = tasks.max(0).saturating_add(HEADROOM);
        let end = newest.saturating_add(span);
        if end < pid_max {
            return Self {
                after: newest,
                through: end,
                low_through: None,
            };
        }
        Self {
            after: newest,
            through: pid_max - 1,
            low_through: Some(RESERVED_PIDS.saturating_add(span)),
        }
    }

    /// Whether `pid` lies in the window.
    pub fn holds(self, pid: i32) -> bool {
        (pid > self.after && pid <= self.through)
            || self
                .low_through
                .is_some_and(|t| (RESERVED_PIDS..=t).contains(&pid))
    }
}

/// The filter text that keeps the events of `known` and of `window`'s pids: runs of
/// known pids as ranges, the closest runs merged (other pids between them recorded,
/// then dropped by the drain) until the text fits a filter write.
pub fn filter_text(known: &BTreeSet<i32>, window: Window) -> String {
    let mut runs: Vec<(i32, i32)> = Vec::new();
    for &pid in known.iter().filter(|&&p| p > 0 && !window.holds(p)) {
        match runs.last_mut() {
            Some((_, hi)) if *hi + 1 == pid => *hi = pid,
            _ => runs.push((pid, pid)),
        }
    }
    loop {
        let text = render(&runs, window);
        if text.len() <= MAX_FILTER || runs.len() < 2 {
            return text;
        }
        // Merge across the narrowest gap.
        let i = (1..runs.len())
            .min_by_key(|&i| runs[i].0 - runs[i - 1].1)
            .unwrap_or(1);
        runs[i - 1].1 = runs[i].1;
        runs.remove(i);
    }
}

fn render(runs: &[(i32, i32)], window: Window) -> String {
    let range = |lo: i32, hi: i32| {
        if lo == hi {
            format!("common_pid == {lo}")
        } else {
            format!("(common_pid >= {lo} && common_pid <= {hi})")
        }
    };
    let mut parts: Vec<String> = runs.iter().map(|&(lo, hi)| range(lo, hi)).collect();
    parts.push(format!(
        "(common_pid > {} && common_pid <= {})",
        window.after, window.through
    ));
    if let Some(t) = window.low_through {
        parts.push(range(RESERVED_PIDS, t));
    }
    parts.join(" || ")
}

/// A fork or an exit, as drained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Fork { parent: i32, child: i32 },
    Exit { pid: i32 },
}

/// The layouts of `sched:sched_process_fork` and `sched:sched_process_exit`.
#[derive(Debug, Clone, Copy)]
pub struct LineageDecoders {
    fork_id: u16,
    parent: IntField,
    child: IntField,
    exit_id: u16,
    exit_pid: IntField,
}

impl LineageDecoders {
    /// Reads the two layouts.
    pub fn from_formats(fork: &Format, exit: &Format) -> Result<Self, FormatError> {
        Ok(Self {
            fork_id: fork.id as u16,
            parent: fork.int("parent_pid")?,
            child: fork.int("child_pid")?,
            exit_id: exit.id as u16,
            exit_pid: exit.int("pid")?,
        })
    }
}

/// A followed program's threads, as forks and exits make and end them.
#[derive(Debug, Clone)]
pub struct Lineage {
    decoders: LineageDecoders,
    known: BTreeSet<i32>,
    /// Forks and exits drained, not applied yet.
    changes: Vec<(u64, Change)>,
    /// The newest pid a fork handed out, as of the last drain.
    newest: i32,
    /// The newest as of the drain before: the next window's floor.
    floor: i32,
    /// The window written last, the one before it, and the known threads named.
    window: Window,
    previous: Window,
    written_known: BTreeSet<i32>,
    pid_max: i32,
    late: u64,
}

impl Lineage {
    /// A program of the threads `tids`, the newest pid handed out being `newest`, on a
    /// machine of `tasks` tasks whose pids end below `pid_max`.
    pub fn new(
        decoders: LineageDecoders,
        tids: &[i32],
        newest: i32,
        tasks: i32,
        pid_max: i32,
    ) -> Self {
        Self {
            decoders,
            known: tids.iter().copied().filter(|&t| t > 0).collect(),
            changes: Vec::new(),
            newest,
            floor: newest,
            window: Window::after(newest, tasks, pid_max),
            previous: Window::after(newest, tasks, pid_max),
            written_known: BTreeSet::new(),
            pid_max,
            late: 0,
        }
    }

    /// Makes the threads `tids` the program's (replacing the set).
    pub fn set_known(&mut self, tids: &[i32]) {
        self.known = tids.iter().copied().filter(|&t| t > 0).collect();
    }

    /// Takes a fork or exit record recorded at `time_ns` (true), or leaves any other
    /// record alone (false).
    pub fn take(&mut self, raw: &[u8], time_ns: u64) -> bool {
        let Some(id) = raw.get(..2).map(|b| u16::from_le_bytes([b[0], b[1]])) else {
            return false;
        };
        let d = self.decoders;
        let change = if id == d.fork_id {
            d.parent
                .read(raw)
                .zip(d.child.read(raw))
                .map(|(p, c)| Change::Fork {
                    parent: p as i32,
                    child: c as i32,
                })
        } else if id == d.exit_id {
            d.exit_pid.read(raw).map(|p| Change::Exit { pid: p as i32 })
        } else {
            return false;
        };
        if let Some(change) = change {
            self.changes.push((time_ns, change));
        }
        true
    }

    /// Applies the forks and exits taken since the last call, in time order, and says
    /// which threads were the program's at some point since: the ones whose system
    /// calls the drain keeps.
    pub fn apply(&mut self) -> BTreeSet<i32> {
        self.changes.sort_by_key(|&(t, _)| t);
        let mut kept = self.known.clone();
        let mut exited = Vec::new();
        let (window, previous) = (self.window, self.previous);
        for (_, change) in std::mem::take(&mut self.changes) {
            match change {
                Change::Fork { parent, child } => {
                    if self.known.contains(&parent) && self.known.insert(child) {
                        kept.insert(child);
                        // Born outside both filters this drain's events were recorded under.
                        let covered = window.holds(child)
                            || previous.holds(child)
                            || self.written_known.contains(&child);
                        if !covered {
                            self.late += 1;
                        }
                    }
                    self.newest = child;
                }
                Change::Exit { pid } => exited.push(pid),
            }
        }
        for pid in exited {
            self.known.remove(&pid);
        }
        kept
    }

    /// The filter to write now, if it changed: the known threads and the window past
    /// the newest pid the previous drain saw (`floor`), on a machine of `tasks` tasks.
    pub fn filter(&mut self, floor: i32, tasks: i32) -> Option<String> {
        // The window moves on with every pid handed out (a task born after it was written
        // is recorded, then dropped, until it moves past it), and back after a wrap.
        let moved = floor != self.window.after;
        if !moved && self.known.is_subset(&self.written_known) {
            return None;
        }
        if moved {
            self.previous = self.window;
            self.window = Window::after(floor, tasks, self.pid_max);
        }
        self.written_known = self.known.clone();
        Some(filter_text(&self.written_known, self.window))
    }

    /// The filter to write after a drain, if it changed: its window past the newest pid
    /// the drain before saw ([`Lineage::filter`]), on a machine of `tasks` tasks.
    pub fn next_filter(&mut self, tasks: i32) -> Option<String> {
        let floor = std::mem::replace(&mut self.floor, self.newest);
        self.filter(floor, tasks)
    }

    /// The filter for the threads known at the start.
    pub fn initial_filter(&mut self) -> String {
        self.written_known = self.known.clone();
        filter_text(&self.written_known, self.window)
    }

    /// The newest pid a fork handed out, as of the last [`Lineage::apply`].
    #[cfg(test)]
    pub fn newest(&self) -> i32 {
        self.newest
    }

    /// Children of the program born outside the filter in force: their first calls may
    /// be missing.
    pub fn late(&self) -> u64 {
        self.late
    }
}

/// This machine's `pid_max`, its newest pid and its task count, read from /proc
/// (`kernel.pid_max`, `kernel.ns_last_pid`, the fourth field of `loadavg`).
pub fn machine_pids() -> (i32, i32, i32) {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let pid_max = read("/proc/sys/kernel/pid_max")
        .trim()
        .parse()
        .unwrap_or(4_194_304);
    let newest = read("/proc/sys/kernel/ns_last_pid")
        .trim()
        .parse()
        .unwrap_or(0);
    (pid_max, newest, tasks())
}

/// The machine's task count (threads included), from `/proc/loadavg`.
pub fn tasks() -> i32 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests;
