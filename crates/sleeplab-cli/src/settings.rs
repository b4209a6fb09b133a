//! The thread settings shared by every experiment: pinning, scheduling policy, memory
//! locking. Validated before measuring, applied in the measuring thread.

use crate::error::UsageError;
use crate::model::RunSettings;
use clap::Args;
use sleeplab::system::{self, Policy};

/// Settings that change how long waits take.
#[derive(Debug, Clone, Args, Default)]
pub struct ThreadArgs {
    /// Pin the measuring thread to this CPU.
    #[arg(long, value_name = "CPU")]
    pub pin: Option<usize>,
    /// Scheduling policy of the measuring thread: other, fifo or rr.
    #[arg(long, default_value = "other", value_parser = parse_policy)]
    pub policy: Policy,
    /// Priority for fifo/rr (1–99).
    #[arg(long, value_name = "P")]
    pub priority: Option<i32>,
    /// Lock all memory (mlockall) so page faults stay out of the measurements.
    #[arg(long)]
    pub mlock: bool,
}

fn parse_policy(s: &str) -> Result<Policy, String> {
    s.parse()
}

impl ThreadArgs {
    /// Checks the values before any measuring starts.
    pub fn validate(&self) -> Result<(), UsageError> {
        if let Some(cpu) = self.pin {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            if cpu >= n {
                return Err(UsageError::new(format!(
                    "invalid --pin {cpu}: this machine has CPUs 0..{}",
                    n - 1
                )));
            }
        }
        let prio = self.priority();
        match self.policy {
            Policy::Other if prio != 0 => Err(UsageError::new(format!(
                "invalid --priority {prio}: policy other takes no priority (use --policy fifo or rr)"
            ))),
            Policy::Fifo | Policy::Rr if !(1..=99).contains(&prio) => {
                Err(UsageError::new(format!(
                    "invalid --priority {prio}: policy {} takes 1..=99",
                    self.policy
                )))
            }
            _ => Ok(()),
        }
    }

    /// The priority in effect (default 1 for real-time policies, 0 otherwise).
    pub fn priority(&self) -> i32 {
        self.priority.unwrap_or(match self.policy {
            Policy::Other => 0,
            _ => 1,
        })
    }

    /// Applies the settings to the calling thread (and mlock to the process).
    pub fn apply(&self) -> Result<(), UsageError> {
        if let Some(cpu) = self.pin {
            system::pin_to_cpu(cpu).map_err(|e| UsageError::new(format!("--pin {cpu}: {e}")))?;
        }
        if self.policy != Policy::Other {
            system::set_policy(self.policy, self.priority())
                .map_err(|e| UsageError::new(format!("--policy {}: {e}", self.policy)))?;
        }
        if self.mlock {
            system::lock_memory().map_err(|e| UsageError::new(format!("--mlock: {e}")))?;
        }
        Ok(())
    }

    /// The settings as recorded in a result (slack as in force on this thread now).
    pub fn record(&self) -> RunSettings {
        RunSettings {
            timer_slack_ns: system::timer_slack_ns(),
            pin_cpu: self.pin,
            policy: self.policy,
            priority: self.priority(),
            mlock: self.mlock,
        }
    }
}
