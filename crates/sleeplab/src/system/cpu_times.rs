//! The machine's CPU time by kind, from `/proc/stat`: read in one place for everything
//! that sets a run's cost or the host's share beside its measurements (a tuning arm's
//! busy CPUs, the steal over a traced run, the tracer's own cost).

/// One `cpu` line of `/proc/stat`, in `USER_HZ` ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time in user mode.
    pub user: u64,
    /// Time in user mode at a positive nice value.
    pub nice: u64,
    /// Time in the kernel.
    pub system: u64,
    /// Time idle.
    pub idle: u64,
    /// Time idle with I/O outstanding.
    pub iowait: u64,
    /// Time serving hard interrupts.
    pub irq: u64,
    /// Time serving softirqs.
    pub softirq: u64,
    /// Time the vCPU was runnable while the host ran something else (0 on bare metal and
    /// where the hypervisor does not report it).
    pub steal: u64,
}

impl CpuTimes {
    /// The time the guest was busy: user, nice, system, irq and softirq (steal is the
    /// host's, not the guest's).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    /// The time idle, waiting for I/O included.
    pub fn idle_all(&self) -> u64 {
        self.idle + self.iowait
    }

    /// The fields of one line after its `cpu…` label; missing trailing fields (older
    /// kernels) are 0. `None` where a field is not a number or fewer than four are given.
    fn parse(fields: &str) -> Option<Self> {
        let f: Vec<u64> = fields
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if f.len() < 4 {
            return None;
        }
        let at = |i: usize| f.get(i).copied().unwrap_or(0);
        Some(Self {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        })
    }
}

/// `/proc/stat`'s CPU lines: the whole machine's and each online CPU's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// The `cpu` line: every CPU together.
    pub total: CpuTimes,
    /// The `cpuN` lines, by CPU number.
    pub cpus: Vec<(u32, CpuTimes)>,
}

impl ProcStat {
    /// `/proc/stat` now; `None` where it cannot be read or holds no `cpu` line.
    pub fn read() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// The CPU lines of a `/proc/stat` text; `None` without a readable `cpu` line.
    pub fn parse(text: &str) -> Option<Self> {
        let mut total = None;
        let mut cpus = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("cpu") else {
                continue;
            };
            if rest.starts_with(' ') {
                total = CpuTimes::parse(rest);
            } else if let Some((n, fields)) = rest.split_once(' ') {
                if let (Ok(n), Some(t)) = (n.parse(), CpuTimes::parse(fields)) {
                    cpus.push((n, t));
                }
            }
        }
        Some(Self {
            total: total?,
            cpus,
        })
    }
}

/// The length of one `USER_HZ` tick, ns (10 ms where `sysconf` cannot tell).
pub fn tick_ns() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1_000_000_000 / (if hz > 0 { hz as u64 } else { 100 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  10 1 20 300 4 5 6 7 0 0\n\
                        cpu0 4 1 10 150 2 3 4 3 0 0\n\
                        cpu1 6 0 10 150 2 2 2 4 0 0\n\
                        intr 12345 0 1\n\
                        ctxt 999\n";

    #[test]
    fn every_cpu_line_is_read_by_its_fields() {
        let s = ProcStat::parse(STAT).unwrap();
        assert_eq!(
            s.total,
            CpuTimes {
                user: 10,
                nice: 1,
                system: 20,
                idle: 300,
                iowait: 4,
                irq: 5,
                softirq: 6,
                steal: 7,
            }
        );
        assert_eq!(s.total.busy(), 10 + 1 + 20 + 5 + 6);
        assert_eq!(s.total.idle_all(), 304);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!((s.cpus[1].0, s.cpus[1].1.steal), (1, 4));
    }

    #[test]
    fn old_short_lines_read_as_zero_and_bad_text_as_none() {
        let s = ProcStat::parse("cpu  1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((s.total.steal, s.total.irq, s.cpus[0].1.idle), (0, 0, 4));
        assert!(ProcStat::parse("cpu0 1 2 3 4\n").is_none());
        assert!(ProcStat::parse("cpu  1 2 x 4\n").is_none());
        assert!(ProcStat::parse("cpu  1 2\n").is_none());
        assert!(tick_ns() > 0);
    }

    #[test]
    fn this_machine_has_its_cpus() {
        let s = ProcStat::read().expect("/proc/stat");
        assert!(!s.cpus.is_empty());
        assert!(s.total.busy() + s.total.idle_all() > 0);
    }
}
