//! A tracer drained on a thread of its own, for waits whose threads are not ours to
//! drain between: a probe process measuring on its own, or measuring threads that run
//! their whole plan at once (a periodic timer's threads).

use crate::event::Captured;
use crate::{TraceError, Tracer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the kernel's buffers are emptied: well before 2 MiB per CPU fill up on a
/// busy machine.
pub const DRAIN_EVERY: Duration = Duration::from_millis(20);

/// A tracer's events, drained every [`DRAIN_EVERY`] until [`Drainer::finish`].
#[derive(Debug)]
pub struct Drainer {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Captured>,
}

impl Drainer {
    /// Drains `tracer` on a thread of its own from now on.
    pub fn start(mut tracer: Tracer) -> Result<Self, TraceError> {
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
    pub fn finish(self) -> Captured {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}
