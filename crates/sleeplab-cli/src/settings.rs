//! The thread settings every experiment runs under, as plain values: pinning, scheduling
//! policy, memory locking, timer slack. The command line fills them in (and names its
//! flags in errors: `commands::args`); experiments apply them in their measuring threads
//! and record what was in force ([`RunSettings`]).

use sleeplab::system::{self, Policy, SlackGuard, SystemError};
pub use sleeplab_results::RunSettings;

/// Settings that change how long waits take, applied to a measuring thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadSettings {
    /// Pin the measuring thread to this CPU.
    pub pin: Option<usize>,
    /// Scheduling policy of the measuring thread.
    pub policy: Policy,
    /// Its priority (0 for `other`, 1–99 for the real-time policies).
    pub priority: i32,
    /// Lock all memory (mlockall) so page faults stay out of the measurements.
    pub mlock: bool,
}

/// A setting the system refused. Each variant carries the value, so the command line
/// can name the flag that asked for it.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// Pinning to a CPU failed.
    #[error("cannot pin to CPU {cpu}: {cause}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// Why.
        cause: SystemError,
    },
    /// Setting the scheduling policy failed.
    #[error("cannot set scheduling policy {policy}: {cause}")]
    Policy {
        /// The policy.
        policy: Policy,
        /// Why.
        cause: SystemError,
    },
    /// Locking memory failed.
    #[error("cannot lock memory: {cause}")]
    Mlock {
        /// Why.
        cause: SystemError,
    },
    /// Setting the timer slack failed.
    #[error("cannot set timer slack {ns} ns: {cause}")]
    TimerSlack {
        /// The slack asked for, ns.
        ns: u64,
        /// Why.
        cause: SystemError,
    },
}

impl ThreadSettings {
    /// Applies the settings to the calling thread (and mlock to the process).
    pub fn apply(&self) -> Result<(), SettingError> {
        if let Some(cpu) = self.pin {
            system::pin_to_cpu(cpu).map_err(|cause| SettingError::Pin { cpu, cause })?;
        }
        if self.policy != Policy::Other {
            system::set_policy(self.policy, self.priority).map_err(|cause| {
                SettingError::Policy {
                    policy: self.policy,
                    cause,
                }
            })?;
        }
        if self.mlock {
            lock_memory()?;
        }
        Ok(())
    }

    /// These settings without memory locking (for threads of a process that already
    /// locked its memory once).
    pub fn without_mlock(self) -> Self {
        Self {
            mlock: false,
            ..self
        }
    }

    /// The settings as recorded in a result (slack as in force on this thread now).
    pub fn record(&self) -> RunSettings {
        RunSettings {
            timer_slack_ns: system::timer_slack_ns(),
            pin_cpu: self.pin,
            policy: self.policy,
            priority: self.priority,
            mlock: self.mlock,
        }
    }
}

/// Locks the process's memory (mlockall).
pub fn lock_memory() -> Result<(), SettingError> {
    system::lock_memory().map_err(|cause| SettingError::Mlock { cause })
}

/// Sets the calling thread's timer slack to `ns` until the guard drops; `None` leaves it.
pub fn set_slack(ns: Option<u64>) -> Result<Option<SlackGuard>, SettingError> {
    ns.map(|ns| SlackGuard::set(ns).map_err(|cause| SettingError::TimerSlack { ns, cause }))
        .transpose()
}

/// The timer slack levels of a run: each of `slacks`, or only the thread's own slack
/// (`None`: left as it is) when none is given.
pub fn slack_levels(slacks: &[u64]) -> Vec<Option<u64>> {
    if slacks.is_empty() {
        vec![None]
    } else {
        slacks.iter().copied().map(Some).collect()
    }
}
