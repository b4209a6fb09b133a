//! What waiting costs the waiting thread: CPU time and context switches
//! (getrusage(RUSAGE_THREAD) and CLOCK_THREAD_CPUTIME_ID).

use sleeplab::clock::thread_cpu_ns;

/// A snapshot of (or a difference between snapshots of) the calling thread's usage.
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
        // SAFETY: a zeroed rusage is valid for getrusage to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer; RUSAGE_THREAD is Linux-specific and always present.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        Self {
            cpu_ns: thread_cpu_ns(),
            voluntary_csw: ru.ru_nvcsw.max(0) as u64,
            involuntary_csw: ru.ru_nivcsw.max(0) as u64,
        }
    }

    /// Adds what the calling thread used since `start` (a snapshot from [`Self::now`]).
    pub fn add_since(&mut self, start: &ThreadUsage) {
        let now = Self::now();
        self.cpu_ns += now.cpu_ns.saturating_sub(start.cpu_ns);
        self.voluntary_csw += now.voluntary_csw.saturating_sub(start.voluntary_csw);
        self.involuntary_csw += now.involuntary_csw.saturating_sub(start.involuntary_csw);
    }
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
}
