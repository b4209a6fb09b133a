//! A tracer of every thread that drains itself on a thread of its own, for waits whose
//! threads are not ours to drain between (a probe process measuring on its own).

use super::{Timeline, TraceError, Tracer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the kernel's buffers are emptied: well before 2 MiB per CPU fill up on a
/// busy machine.
const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// Every thread's events, recorded until [`Background::finish`].
#[derive(Debug)]
pub struct Background {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(Timeline, u64)>,
}

impl Background {
    /// Starts recording (fails when the kernel cannot be traced).
    pub fn start() -> Result<Self, TraceError> {
        let mut tracer = Tracer::every_thread()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("sleeplab-trace".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    tracer.drain();
                    std::thread::sleep(DRAIN_EVERY);
                }
                tracer.finish()
            })
            .map_err(|e| TraceError::Io(format!("starting the tracing thread: {e}")))?;
        Ok(Self { stop, handle })
    }

    /// Stops: everything recorded, and the events the kernel lost.
    pub fn finish(self) -> (Timeline, u64) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .join()
            .unwrap_or_else(|_| (Timeline::new(Vec::new()), 0))
    }
}
