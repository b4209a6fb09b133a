//! Which CPUs the kernel's tracing records fully, found by a short probe once per
//! process, and where a traced run therefore measures.
//!
//! On the kernels here (6.18 in a KVM guest) ftrace records nothing a CPU's idle task
//! emits on some CPUs (CPU 1 of the 2-vCPU VMs): the `sched_switch` from idle onto a
//! woken thread goes unrecorded, so every wake there that found its CPU idle is partly
//! unexplained. Measured independently of sleeplab with a plain-text trace: a thread
//! pinned to CPU 1 switched out 201 times and in 0 times; on CPU 0, all of them. The
//! probe asks the same question of every CPU: a thread pinned there sleeps
//! [`PROBE_SLEEPS`] times, each sleep leaving the CPU idle, and the switches back in
//! from idle are counted. A CPU kept busy by others during the probe never goes idle
//! and cannot be judged then; what an earlier run of this boot found is remembered
//! (in `/run`, which a reboot empties) and stands in for it.

use crate::event::{Event, Kind, SLEEPING_STATES};
use crate::session::{Session, online_cpus};
use crate::{TraceError, this_tid};
use std::sync::{Barrier, OnceLock, mpsc};
use std::time::Duration;

/// Sleeps of the probe thread on each CPU.
pub const PROBE_SLEEPS: u32 = 30;

/// Each probe sleep, long enough for the CPU to go idle.
const PROBE_SLEEP: Duration = Duration::from_micros(300);

/// Switches to idle a CPU must show before it is judged: fewer (a busy CPU never went
/// idle) leave it unknown.
pub const MIN_IDLE_SWITCHES: u64 = 10;

/// What the probe found on one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuProbe {
    /// The CPU.
    pub cpu: u32,
    /// The probe thread's switches out to the idle task.
    pub to_idle: u64,
    /// Its switches back in from the idle task.
    pub from_idle: u64,
}

/// How fully a CPU is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Its idle task's events are recorded (at least 9 in 10 switches back).
    Fully,
    /// Its idle task's events are lost: wakes from idle there are partly unexplained.
    LosesIdle,
    /// It never went idle during the probe (a busy CPU): not judged.
    Unknown,
}

impl CpuProbe {
    /// The verdict on this CPU.
    pub fn recorded(&self) -> Recorded {
        if self.to_idle < MIN_IDLE_SWITCHES {
            Recorded::Unknown
        } else if self.from_idle * 10 >= self.to_idle * 9 {
            Recorded::Fully
        } else {
            Recorded::LosesIdle
        }
    }
}

impl Recorded {
    /// Its name in the remembered file.
    fn name(self) -> &'static str {
        match self {
            Recorded::Fully => "fully",
            Recorded::LosesIdle => "loses-idle",
            Recorded::Unknown => "unknown",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        [Recorded::Fully, Recorded::LosesIdle, Recorded::Unknown]
            .into_iter()
            .find(|r| r.name() == s)
    }
}

/// Every online CPU's probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// One per online CPU, in CPU order.
    pub cpus: Vec<CpuProbe>,
    /// Verdicts an earlier probe of this boot reached, for CPUs this one could not judge.
    pub remembered: Vec<(u32, Recorded)>,
}

impl Coverage {
    /// The verdict on `probe`'s CPU: its own, or where it could not be judged, the one
    /// remembered.
    pub fn verdict(&self, probe: &CpuProbe) -> Recorded {
        match probe.recorded() {
            Recorded::Unknown => self
                .remembered
                .iter()
                .find(|r| r.0 == probe.cpu)
                .map_or(Recorded::Unknown, |r| r.1),
            r => r,
        }
    }

    /// The CPUs judged `r`.
    pub fn judged(&self, r: Recorded) -> Vec<u32> {
        self.cpus
            .iter()
            .filter(|p| self.verdict(p) == r)
            .map(|p| p.cpu)
            .collect()
    }

    /// The verdicts as the remembered file keeps them, for `boot` (the boot id and the
    /// kernel release).
    pub fn remember_text(&self, boot: &str) -> String {
        let mut out = format!("{boot}\n");
        for p in &self.cpus {
            out.push_str(&format!("cpu {} {}\n", p.cpu, self.verdict(p).name()));
        }
        out
    }

    /// The verdicts in `text` (from [`Coverage::remember_text`]) when it is of `boot`.
    pub fn remembered_from(text: &str, boot: &str) -> Vec<(u32, Recorded)> {
        let mut lines = text.lines();
        if lines.next() != Some(boot) {
            return Vec::new();
        }
        lines
            .filter_map(|l| {
                let mut f = l.split(' ');
                match (f.next(), f.next(), f.next()) {
                    (Some("cpu"), Some(c), Some(r)) => {
                        Some((c.parse().ok()?, Recorded::from_name(r)?))
                    }
                    _ => None,
                }
            })
            .filter(|r| r.1 != Recorded::Unknown)
            .collect()
    }

    /// Counts the probe threads' switches to and from idle in `events`; `tids[i]` ran
    /// on `cpus[i]`.
    pub fn of_events(cpus: &[u32], tids: &[i32], events: &[Event]) -> Self {
        let probes = cpus
            .iter()
            .zip(tids)
            .map(|(&cpu, &tid)| {
                let (mut to_idle, mut from_idle) = (0, 0);
                for e in events {
                    if let Kind::Switch {
                        prev_pid,
                        prev_state,
                        next_pid,
                        ..
                    } = e.kind
                    {
                        if prev_pid == tid && next_pid == 0 && prev_state & SLEEPING_STATES != 0 {
                            to_idle += 1;
                        } else if prev_pid == 0 && next_pid == tid {
                            from_idle += 1;
                        }
                    }
                }
                CpuProbe {
                    cpu,
                    to_idle,
                    from_idle,
                }
            })
            .collect();
        Self {
            cpus: probes,
            remembered: Vec::new(),
        }
    }
}

/// Where verdicts are remembered between runs of one boot.
const REMEMBERED: &str = "/run/sleeplab/trace-coverage";

/// Writes `bytes` to `path` whole or not at all (a temporary file beside it, renamed).
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// This boot and kernel, as the remembered file's first line.
fn this_boot() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    format!(
        "boot {} kernel {}",
        read("/proc/sys/kernel/random/boot_id").trim(),
        read("/proc/sys/kernel/osrelease").trim()
    )
}

/// The probe's result, run on first use (about 15 ms) and kept for the process.
pub fn coverage() -> Result<&'static Coverage, TraceError> {
    static ONCE: OnceLock<Result<Coverage, TraceError>> = OnceLock::new();
    ONCE.get_or_init(|| {
        let mut c = probe()?;
        let boot = this_boot();
        c.remembered = std::fs::read_to_string(REMEMBERED)
            .map(|t| Coverage::remembered_from(&t, &boot))
            .unwrap_or_default();
        // Best effort: a run that cannot write it only forgets for the next one.
        let path = std::path::Path::new(REMEMBERED);
        if path
            .parent()
            .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        {
            let _ = write_whole(path, c.remember_text(&boot).as_bytes());
        }
        Ok(c)
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// One thread pinned to each online CPU sleeps while a session follows them all.
fn probe() -> Result<Coverage, TraceError> {
    let cpus = online_cpus();
    let start = Barrier::new(cpus.len() + 1);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|s| {
        let threads: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (tx, start) = (tx.clone(), &start);
                s.spawn(move || {
                    let pinned = sleeplab::system::pin_to_cpu(cpu as usize).is_ok();
                    let _ = tx.send((cpu, pinned.then(this_tid)));
                    // Sleep once the session follows every probe thread.
                    start.wait();
                    start.wait();
                    if pinned {
                        for _ in 0..PROBE_SLEEPS {
                            std::thread::sleep(PROBE_SLEEP);
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        let mut placed: Vec<(u32, Option<i32>)> = rx.iter().take(cpus.len()).collect();
        placed.sort_unstable();
        let tids: Vec<i32> = placed.iter().map(|p| p.1.unwrap_or(-1)).collect();
        start.wait();
        let session = Session::start(&tids);
        start.wait();
        for t in threads {
            let _ = t.join();
        }
        let mut session = session?;
        let mut events = Vec::new();
        session.drain(&mut events);
        let cpus: Vec<u32> = placed.iter().map(|p| p.0).collect();
        Ok(Coverage::of_events(&cpus, &tids, &events))
    })
}

/// Where a traced run measures, and what it says about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// The CPU to measure on (`None`: leave the threads where they are).
    pub cpu: Option<usize>,
    /// What the run says about it (where it moved, or why a requested CPU is a poor
    /// place to trace).
    pub note: Option<String>,
}

impl Placement {
    /// The placement for a run pinned to `requested` (or not pinned), on `coverage`:
    /// a pinned run stays (warned on a CPU that loses its idle task's events); an
    /// unpinned one moves to the first CPU recorded fully, or, none judged (every CPU
    /// busy during the probe), to the first one not known to lose events; it stays
    /// unpinned where every CPU is recorded fully.
    pub fn of(coverage: &Coverage, requested: Option<usize>) -> Self {
        let fully = coverage.judged(Recorded::Fully);
        let lossy = coverage.judged(Recorded::LosesIdle);
        let unknown = coverage.judged(Recorded::Unknown);
        let loses = (!lossy.is_empty()).then(|| {
            format!(
                "this kernel does not record the idle task's events of {} (a switch onto it \
                 from idle goes unseen), where wakes would be partly unexplained",
                cpu_list(&lossy)
            )
        });
        let busy = (!unknown.is_empty()).then(|| {
            format!(
                "{} too busy during the probe to check",
                match unknown.len() {
                    1 => format!("CPU {} was", unknown[0]),
                    _ => format!("{} were", cpu_list(&unknown)),
                }
            )
        });
        let joined =
            |parts: [Option<String>; 2]| parts.into_iter().flatten().collect::<Vec<_>>().join("; ");
        match requested {
            Some(cpu) if lossy.contains(&(cpu as u32)) => Self {
                cpu: Some(cpu),
                note: Some(format!(
                    "traced on CPU {cpu}, whose idle task's events this kernel does not record \
                     (a switch onto it from idle goes unseen): wakes there that found it idle \
                     are partly unexplained{}",
                    match fully.first() {
                        Some(f) => format!("; CPU {f} records them"),
                        None => String::new(),
                    }
                )),
            },
            Some(cpu) => Self {
                cpu: Some(cpu),
                note: None,
            },
            None if lossy.is_empty() && unknown.is_empty() => Self::default(),
            None => match fully.first().or(unknown.first()) {
                Some(&c) => Self {
                    cpu: Some(c as usize),
                    note: Some(format!("measured on CPU {c}: {}", joined([loses, busy]))),
                },
                None => Self {
                    cpu: None,
                    note: loses,
                },
            },
        }
    }
}

/// `CPU 1`, `CPU 1, CPU 3`.
fn cpu_list(cpus: &[u32]) -> String {
    cpus.iter()
        .map(|c| format!("CPU {c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The placement of a traced run pinned to `requested` (or not), from the probe; none
/// where the kernel cannot be traced (the run says so itself).
pub fn placement(requested: Option<usize>) -> Placement {
    match coverage() {
        Ok(c) => Placement::of(c, requested),
        Err(_) => Placement {
            cpu: requested,
            note: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Comm;

    fn switch(prev: i32, state: i64, next: i32) -> Event {
        Event {
            time_ns: 0,
            cpu: 0,
            pid: prev,
            flags: 0,
            kind: Kind::Switch {
                prev_pid: prev,
                prev_state: state,
                prev_comm: Comm::new("a"),
                next_pid: next,
                next_comm: Comm::new("b"),
            },
        }
    }

    fn probe(cpu: u32, to_idle: u64, from_idle: u64) -> CpuProbe {
        CpuProbe {
            cpu,
            to_idle,
            from_idle,
        }
    }

    #[test]
    fn switches_to_and_from_idle_are_counted_per_probe_thread() {
        let mut events = Vec::new();
        for _ in 0..12 {
            events.push(switch(10, 1, 0));
            events.push(switch(0, 0, 10));
            events.push(switch(11, 1, 0));
        }
        // Preempted (runnable) or onto another task: not a switch to idle.
        events.push(switch(10, 0, 0));
        events.push(switch(10, 1, 77));
        let c = Coverage::of_events(&[0, 1], &[10, 11], &events);
        assert_eq!(c.cpus, vec![probe(0, 12, 12), probe(1, 12, 0)]);
        assert_eq!(c.judged(Recorded::Fully), vec![0]);
        assert_eq!(c.judged(Recorded::LosesIdle), vec![1]);
    }

    #[test]
    fn a_cpu_is_judged_on_enough_switches_with_nine_in_ten_back() {
        assert_eq!(probe(0, 30, 27).recorded(), Recorded::Fully);
        assert_eq!(probe(0, 30, 26).recorded(), Recorded::LosesIdle);
        assert_eq!(probe(0, 9, 0).recorded(), Recorded::Unknown);
        assert_eq!(probe(0, 10, 9).recorded(), Recorded::Fully);
    }

    #[test]
    fn an_unpinned_run_moves_to_a_fully_recorded_cpu_and_says_so() {
        let c = Coverage {
            cpus: vec![probe(0, 30, 30), probe(1, 30, 0)],
            remembered: vec![],
        };
        let p = Placement::of(&c, None);
        assert_eq!(p.cpu, Some(0));
        let note = p.note.unwrap();
        assert!(
            note.starts_with("measured on CPU 0") && note.contains("CPU 1"),
            "{note}"
        );
        // Pinned by request to the losing CPU: stays, with a warning naming the other.
        let p = Placement::of(&c, Some(1));
        assert_eq!(p.cpu, Some(1));
        let note = p.note.unwrap();
        assert!(note.contains("partly unexplained") && note.contains("CPU 0 records them"));
        // Pinned to a good CPU, or nothing lost anywhere: no note, nothing moved.
        assert_eq!(
            Placement::of(&c, Some(0)),
            Placement {
                cpu: Some(0),
                note: None
            }
        );
        let all_good = Coverage {
            cpus: vec![probe(0, 30, 30), probe(1, 30, 29)],
            remembered: vec![],
        };
        assert_eq!(Placement::of(&all_good, None), Placement::default());
        // Only losing CPUs: nowhere to move, and said.
        let none_good = Coverage {
            cpus: vec![probe(0, 30, 1), probe(1, 30, 0)],
            remembered: vec![],
        };
        let p = Placement::of(&none_good, None);
        assert_eq!(p.cpu, None);
        assert!(p.note.unwrap().contains("CPU 0, CPU 1"));
        // Every CPU busy during the probe: the first not known to lose events.
        let busy = Coverage {
            cpus: vec![probe(0, 3, 3), probe(1, 30, 0)],
            remembered: vec![],
        };
        let p = Placement::of(&busy, None);
        assert_eq!(p.cpu, Some(0));
        let note = p.note.unwrap();
        assert!(
            note.contains("of CPU 1") && note.contains("CPU 0 was too busy"),
            "{note}"
        );
    }

    /// A CPU kept busy during the probe takes the verdict an earlier probe of this boot
    /// reached; one of another boot or kernel is not used, and unknowns are not kept.
    #[test]
    fn an_unjudged_cpu_takes_the_verdict_remembered_from_this_boot() {
        let earlier = Coverage {
            cpus: vec![probe(0, 30, 30), probe(1, 30, 0), probe(2, 0, 0)],
            remembered: vec![],
        };
        let text = earlier.remember_text("boot b kernel k");
        assert_eq!(
            text,
            "boot b kernel k\ncpu 0 fully\ncpu 1 loses-idle\ncpu 2 unknown\n"
        );
        let busy = Coverage {
            cpus: vec![probe(0, 2, 2), probe(1, 1, 1), probe(2, 3, 3)],
            remembered: Coverage::remembered_from(&text, "boot b kernel k"),
        };
        assert_eq!(busy.judged(Recorded::Fully), vec![0]);
        assert_eq!(busy.judged(Recorded::LosesIdle), vec![1]);
        assert_eq!(busy.judged(Recorded::Unknown), vec![2]);
        assert_eq!(Placement::of(&busy, None).cpu, Some(0));
        assert!(Coverage::remembered_from(&text, "boot other kernel k").is_empty());
        assert!(Coverage::remembered_from("", "boot b kernel k").is_empty());
        // A fresh verdict wins over the remembered one.
        let now = Coverage {
            cpus: vec![probe(1, 30, 30)],
            remembered: vec![(1, Recorded::LosesIdle)],
        };
        assert_eq!(now.judged(Recorded::Fully), vec![1]);
    }

    /// The probe runs where the kernel can be traced (as root; elsewhere skipped, but
    /// not under CI, which runs as root) and judges every online CPU.
    #[test]
    fn the_probe_judges_every_online_cpu() {
        let c = match coverage() {
            Ok(c) => c,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        eprintln!("coverage: {c:?}");
        assert_eq!(c.cpus.len(), online_cpus().len());
        // Each switch back in follows one of the thread's switches out: its sleeps, the
        // barrier that releases it (already waiting when the session starts: the +1) and
        // that barrier's lock. A switch back in from idle need not follow a switch out *to*
        // idle (on a busy CPU another task can run between), so the two counts are not
        // ordered; each is bounded by the thread's blocking.
        let blocks = u64::from(PROBE_SLEEPS) + 4;
        for p in &c.cpus {
            assert!(p.to_idle <= blocks && p.from_idle <= blocks, "{p:?}");
        }
    }
}
