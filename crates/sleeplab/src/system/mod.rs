//! The process and thread settings that change how long a wait takes, and the machine
//! fingerprint recorded with every result.

mod cpu_times;
mod fingerprint;
mod hypervisor;
mod idle;
mod process;
mod run_queue;
mod sched;
mod slack;
mod slice;

pub use cpu_times::{CpuTimes, ProcStat, tick_ns};
pub use fingerprint::{Fingerprint, cpu_model_from_cpuinfo, hypervisor, preemption_from_version};
pub use idle::{
    Idle, IdleCounters, IdleState, POLL_STATE, QOS_DEFAULT_US, StateCounter, parse_qos,
};
pub use process::start_ticks;
pub use run_queue::{parse_run_delay, run_queue_ns};
pub use sched::{Policy, lock_memory, pin_to_cpu, set_policy};
pub use slack::{SlackGuard, reset_timer_slack, set_timer_slack_ns, timer_slack_ns};
pub use slice::{MIN_SLICE_NS, sched_slice_ns, set_sched_slice_ns};

/// An error from changing a system setting.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    /// A value the kernel would not accept or would misread.
    #[error("invalid {what}: {value}")]
    InvalidValue {
        /// What was being set.
        what: &'static str,
        /// The offending value, as the user gave it.
        value: String,
    },
    /// A system call failed.
    #[error("{call} failed: {source}")]
    Os {
        /// The call, e.g. `sched_setscheduler`.
        call: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
}

impl SystemError {
    /// Wraps the current `errno` for `call`.
    pub(crate) fn os(call: &'static str) -> Self {
        Self::Os {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}
