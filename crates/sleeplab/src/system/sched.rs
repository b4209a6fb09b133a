//! CPU affinity, scheduling policy and memory locking: the settings a latency
//! measurement (like cyclictest) controls.

use super::SystemError;
use std::fmt;
use std::str::FromStr;

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: usize) -> Result<(), SystemError> {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpu
        >= ncpu
            .max(libc::CPU_SETSIZE as usize)
            .min(libc::CPU_SETSIZE as usize)
    {
        return Err(SystemError::InvalidValue {
            what: "CPU",
            value: format!(
                "{cpu} (this machine has CPUs 0..{})",
                ncpu.saturating_sub(1)
            ),
        });
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET with an index below
    // CPU_SETSIZE is in bounds.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return Err(SystemError::Os {
            call: "sched_setaffinity",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// A Linux scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Policy {
    /// SCHED_OTHER, the default time-sharing policy.
    #[default]
    Other,
    /// SCHED_FIFO, real-time first-in first-out.
    Fifo,
    /// SCHED_RR, real-time round robin.
    Rr,
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
        })
    }
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "other" => Ok(Policy::Other),
            "fifo" => Ok(Policy::Fifo),
            "rr" => Ok(Policy::Rr),
            _ => Err(format!(
                "unknown scheduling policy {s:?} (expected other, fifo or rr)"
            )),
        }
    }
}

/// Sets the calling thread's scheduling policy and priority (1–99 for fifo/rr, 0 for other).
///
/// Real-time policies need CAP_SYS_NICE (or an RLIMIT_RTPRIO); the error says so.
pub fn set_policy(policy: Policy, priority: i32) -> Result<(), SystemError> {
    let (raw, range) = match policy {
        Policy::Other => (libc::SCHED_OTHER, 0..=0),
        Policy::Fifo => (libc::SCHED_FIFO, 1..=99),
        Policy::Rr => (libc::SCHED_RR, 1..=99),
    };
    if !range.contains(&priority) {
        return Err(SystemError::InvalidValue {
            what: "priority",
            value: format!(
                "{priority} (policy {policy} takes {}..={})",
                range.start(),
                range.end()
            ),
        });
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid sched_param; 0 means the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, raw, &param) };
    if r != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EPERM) {
            return Err(SystemError::InvalidValue {
                what: "scheduling policy",
                value: format!(
                    "{policy} priority {priority}: not permitted (needs root or CAP_SYS_NICE)"
                ),
            });
        }
        return Err(SystemError::Os {
            call: "sched_setscheduler",
            source: err,
        });
    }
    Ok(())
}

/// Locks all current and future memory of the process (`mlockall`), so page faults do
/// not land inside measurements.
pub fn lock_memory() -> Result<(), SystemError> {
    // SAFETY: plain syscall.
    let r = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if r != 0 {
        return Err(SystemError::Os {
            call: "mlockall",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_parses() {
        assert_eq!("fifo".parse::<Policy>(), Ok(Policy::Fifo));
        assert!("batch".parse::<Policy>().is_err());
    }

    #[test]
    fn bad_values_are_rejected() {
        assert!(pin_to_cpu(100_000).is_err());
        assert!(set_policy(Policy::Fifo, 0).is_err());
        assert!(set_policy(Policy::Other, 5).is_err());
    }

    /// The calling thread's affinity, read back with sched_getaffinity: the CPUs it may
    /// run on.
    fn affinity() -> Vec<usize> {
        // SAFETY: a zeroed cpu_set_t is a valid empty set for sched_getaffinity to fill;
        // CPU_ISSET reads indices below CPU_SETSIZE only.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let r = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            assert_eq!(r, 0, "sched_getaffinity");
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    #[test]
    fn pin_to_cpu_sets_the_affinity_it_names() {
        let last = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        for cpu in [0, last] {
            let got = std::thread::spawn(move || {
                pin_to_cpu(cpu).unwrap();
                affinity()
            })
            .join()
            .unwrap();
            assert_eq!(got, [cpu], "pinned to {cpu}");
        }
    }
}
