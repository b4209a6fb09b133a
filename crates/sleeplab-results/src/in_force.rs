//! What was in force for a running probe, as a result file keeps it (the CLI's probe
//! runner reads it back from `/proc/<pid>`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The settings a probe process ran under, as the kernel reported them. A field is
/// `None` when it could not be read (the probe had already exited, or not Linux).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InForce {
    /// Scheduling policy of the probe's main thread (`other`, `fifo`, `rr`, `batch`,
    /// `idle`, `deadline`), from `/proc/<pid>/stat`.
    pub policy: Option<String>,
    /// Its real-time priority (0 for the normal policies).
    pub priority: Option<u32>,
    /// Threads of the probe whose policy or priority differ from the main thread's.
    pub threads_differing: Option<u32>,
    /// Locked memory (`VmLck` of `/proc/<pid>/status`), KiB.
    pub locked_kib: Option<u64>,
    /// Timer slack of the main thread (`/proc/<pid>/timerslack_ns`), ns.
    pub timer_slack_ns: Option<u64>,
    /// CPUs it may run on (`Cpus_allowed_list`), e.g. `0` or `0-1`.
    pub cpus: Option<String>,
}
