//! The thread settings a run measured under, as its result file keeps them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::system::Policy;

/// The thread settings a run measured under (each changes the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct RunSettings {
    /// Timer slack of the measuring thread(s), ns, as it was in force. Experiments that
    /// vary the slack record it per cell as well.
    pub timer_slack_ns: u64,
    /// CPU the measuring thread was pinned to.
    pub pin_cpu: Option<usize>,
    /// Scheduling policy of the measuring thread.
    pub policy: Policy,
    /// Scheduling priority (0 for `other`).
    pub priority: i32,
    /// Whether memory was locked with mlockall.
    pub mlock: bool,
}
