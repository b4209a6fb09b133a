//! What waiting costs a thread: CPU time and context switches (`getrusage` and the
//! thread CPU clocks), of the calling thread or of another thread of this process.

use crate::clock::thread_cpu_ns;
use crate::sys;

/// A snapshot of (or a difference between snapshots of) a thread's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadUsage {
    /// CPU time, ns.
    pub cpu_ns: u64,
    /// Voluntary context switches (the thread blocked).
    pub voluntary_csw: u64,
    /// Involuntary context switches (the thread was preempted).
    pub involuntary_csw: u64,
}

impl ThreadUsage {
    /// The calling thread's usage so far.
    pub fn now() -> Self {
        let (voluntary_csw, involuntary_csw) = sys::context_switches(libc::RUSAGE_THREAD);
        Self {
            cpu_ns: thread_cpu_ns(),
            voluntary_csw,
            involuntary_csw,
        }
    }

    /// Adds what the calling thread used since `start` (a snapshot from [`Self::now`]).
    pub fn add_since(&mut self, start: &ThreadUsage) {
        self.add(&Self::now().since(start));
    }

    /// Adds `other` to this usage (saturating).
    pub fn add(&mut self, other: &ThreadUsage) {
        self.cpu_ns = self.cpu_ns.saturating_add(other.cpu_ns);
        self.voluntary_csw = self.voluntary_csw.saturating_add(other.voluntary_csw);
        self.involuntary_csw = self.involuntary_csw.saturating_add(other.involuntary_csw);
    }

    /// What was used between the snapshot `earlier` and this one (0 where a counter went
    /// backwards).
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
        }
    }

    /// The usage so far of thread `tid` of this process: its CPU clock and the context
    /// switches in `/proc/self/task/<tid>/status`. `None` when it is gone.
    pub fn of_thread(tid: libc::pid_t) -> Option<Self> {
        let cpu_ns = sys::clock_ns(thread_cpu_clock(tid))?;
        let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        Some(Self {
            cpu_ns,
            voluntary_csw: field("voluntary_ctxt_switches:"),
            involuntary_csw: field("nonvoluntary_ctxt_switches:"),
        })
    }
}

/// The CPU clock id of thread `tid` of this process (the kernel's
/// `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`), readable with `clock_gettime`.
fn thread_cpu_clock(tid: libc::pid_t) -> libc::clockid_t {
    const CPUCLOCK_SCHED: libc::clockid_t = 2;
    const CPUCLOCK_PERTHREAD_MASK: libc::clockid_t = 4;
    (!tid << 3) | CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeping_switches_voluntarily() {
        let start = ThreadUsage::now();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let mut u = ThreadUsage::default();
        u.add_since(&start);
        assert!(u.voluntary_csw >= 5, "{u:?}");
    }

    #[test]
    fn reads_own_thread_by_tid() {
        let mine = ThreadUsage::now();
        let u = ThreadUsage::of_thread(sys::gettid()).expect("own thread is readable");
        assert!(u.cpu_ns >= mine.cpu_ns);
        assert!(u.voluntary_csw + 1 >= mine.voluntary_csw);
        assert!(ThreadUsage::of_thread(i32::MAX - 7).is_none());
    }

    #[test]
    fn differences_saturate() {
        let a = ThreadUsage {
            cpu_ns: 10,
            voluntary_csw: 3,
            involuntary_csw: 1,
        };
        let b = ThreadUsage {
            cpu_ns: 4,
            voluntary_csw: 5,
            involuntary_csw: 1,
        };
        assert_eq!(
            a.since(&b),
            ThreadUsage {
                cpu_ns: 6,
                voluntary_csw: 0,
                involuntary_csw: 0
            }
        );
        let mut c = a;
        c.add(&b);
        assert_eq!((c.cpu_ns, c.voluntary_csw, c.involuntary_csw), (14, 8, 2));
    }
}
