//! The tokio runtimes the async rows wait on: one per waiter or timer, built when it is.

use super::WaitError;
use crate::usage::ThreadUsage;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::runtime::{Builder, Runtime};

/// The threads a runtime started (its workers and blocking threads), by thread id: what
/// a row that lets them drive its timer adds to the waiting thread's CPU.
#[derive(Debug, Clone, Default)]
pub(crate) struct Workers(Arc<Mutex<Vec<libc::pid_t>>>);

impl Workers {
    /// Their usage so far, summed (a thread that has ended counts no more).
    pub(crate) fn usage(&self) -> ThreadUsage {
        let tids = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total = ThreadUsage::default();
        for u in tids.iter().filter_map(|&t| ThreadUsage::of_thread(t)) {
            total.add(&u);
        }
        total
    }
}

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
        self.runtime_with_workers().map(|(rt, _)| rt)
    }

    /// A runtime of this flavor with its timer enabled, and the threads it starts.
    pub(crate) fn runtime_with_workers(self) -> Result<(Runtime, Workers), WaitError> {
        let workers = Workers::default();
        let started = workers.clone();
        let mut b = match self {
            Flavor::CurrentThread => Builder::new_current_thread(),
            Flavor::MultiThread => {
                let mut b = Builder::new_multi_thread();
                b.worker_threads(2).thread_name("sleeplab-tokio");
                b
            }
        };
        b.enable_time()
            .on_thread_start(move || {
                let tid = crate::sys::gettid();
                started
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(tid);
            })
            .build()
            .map(|rt| (rt, workers))
            .map_err(|source| WaitError::Unsupported {
                call: "tokio::runtime::Builder::build",
                source,
            })
    }
}
