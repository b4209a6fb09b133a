//! The tokio runtimes the async rows wait on: one per waiter or timer, built when it is.

use super::WaitError;
use tokio::runtime::{Builder, Runtime};

/// Which tokio runtime a row waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `new_current_thread`: the thread that calls `block_on` drives the timer.
    CurrentThread,
    /// `new_multi_thread` with 2 workers: a worker drives the timer and wakes the
    /// thread in `block_on`.
    MultiThread,
}

impl Flavor {
    /// A runtime of this flavor with its timer enabled.
    pub(crate) fn runtime(self) -> Result<Runtime, WaitError> {
        let mut b = match self {
            Flavor::CurrentThread => Builder::new_current_thread(),
            Flavor::MultiThread => {
                let mut b = Builder::new_multi_thread();
                b.worker_threads(2).thread_name("sleeplab-tokio");
                b
            }
        };
        b.enable_time()
            .build()
            .map_err(|source| WaitError::Unsupported {
                call: "tokio::runtime::Builder::build",
                source,
            })
    }
}
