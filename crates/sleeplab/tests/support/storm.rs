//! A signal storm for the never-early tests: a no-op SIGUSR1 handler installed WITHOUT
//! `SA_RESTART` (so blocking calls really fail with EINTR), and a thread that sends
//! SIGUSR1 to one target thread on an absolute schedule until stopped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use sleeplab::clock::{Env, RealEnv};
use sleeplab::system::set_timer_slack_ns;

/// Signals delivered to this process's handler so far.
pub static DELIVERED: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_sigusr1(_: libc::c_int) {
    DELIVERED.fetch_add(1, Ordering::Relaxed);
}

/// Installs the counting no-op SIGUSR1 handler, without `SA_RESTART`.
pub fn install_handler_without_restart() {
    // SAFETY: a zeroed sigaction is valid; the handler only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigusr1 as *const () as libc::sighandler_t;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
}

/// Sends SIGUSR1 to a thread every `interval_ns` until stopped or dropped.
pub struct Storm {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl Storm {
    /// Starts the storm at `target` (which must outlive it: stop it before the target exits).
    pub fn start(target: libc::pthread_t, interval_ns: u64) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&sent));
        let handle = std::thread::spawn(move || {
            let _ = set_timer_slack_ns(1);
            let mut env = RealEnv;
            let mut next = env.now();
            while !flag.load(Ordering::Relaxed) {
                // SAFETY: `target` outlives the storm (joined in `stop`/`drop`).
                unsafe { libc::pthread_kill(target, libc::SIGUSR1) };
                count.fetch_add(1, Ordering::Relaxed);
                next += interval_ns;
                env.sleep_until(next);
            }
        });
        Self {
            stop,
            sent,
            handle: Some(handle),
        }
    }

    /// Stops the storm and returns how many signals it sent.
    pub fn stop(mut self) -> u64 {
        self.halt();
        self.sent.load(Ordering::Relaxed)
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Storm {
    fn drop(&mut self) {
        self.halt();
    }
}
