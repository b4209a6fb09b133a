//! Competing load: busy threads that count forever, as in seed 000's TimerTest.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

/// N busy threads running until dropped.
pub struct LoadThreads {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
}

impl LoadThreads {
    /// Starts `n` busy threads and returns once all of them are running.
    pub fn start(n: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let running = Arc::new(AtomicUsize::new(0));
        let handles = (0..n)
            .map(|i| {
                let stop = Arc::clone(&stop);
                let running = Arc::clone(&running);
                std::thread::Builder::new()
                    .name(format!("sleeplab-load-{i}"))
                    .spawn(move || {
                        running.fetch_add(1, Ordering::SeqCst);
                        let mut x: u64 = 0;
                        while !stop.load(Ordering::Relaxed) {
                            // Mindless work the optimizer cannot remove.
                            for _ in 0..1000 {
                                x = std::hint::black_box(x.wrapping_add(1));
                            }
                        }
                    })
                    .expect("spawning a load thread")
            })
            .collect();
        while running.load(Ordering::SeqCst) < n {
            std::thread::yield_now();
        }
        Self { stop, handles }
    }

    /// Number of busy threads.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether there are no busy threads.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }
}

impl Drop for LoadThreads {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_and_stops() {
        let l = LoadThreads::start(3);
        assert_eq!(l.len(), 3);
        drop(l);
        assert!(LoadThreads::start(0).is_empty());
    }
}
