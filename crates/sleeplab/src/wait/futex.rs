//! Timed waits on synchronisation primitives nobody signals: a futex word and a
//! `std::sync::Condvar`.

use super::{errno, remaining};
use crate::clock::{monotonic_ns, ns_to_timespec};
use std::sync::atomic::AtomicU32;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A futex word that stays 0 and is never woken.
pub(super) struct FutexWord(Box<AtomicU32>);

impl FutexWord {
    pub(super) fn new() -> Self {
        Self(Box::new(AtomicU32::new(0)))
    }

    /// FUTEX_WAIT (private) with a relative timeout; after `EINTR` (or a spurious
    /// return) it waits again for the time left until the same deadline.
    pub(super) fn wait(&mut self, ns: u64) {
        let deadline = monotonic_ns().saturating_add(ns);
        let mut left = ns;
        loop {
            let ts = ns_to_timespec(left);
            // SAFETY: the word lives as long as self; valid timespec.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.0.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    0u32,
                    &ts as *const libc::timespec,
                )
            };
            if r < 0 && errno() == libc::ETIMEDOUT {
                return;
            }
            match remaining(deadline) {
                Some(l) => left = l,
                None => return,
            }
        }
    }
}

/// A mutex and condition variable nobody notifies.
pub(super) struct CondvarPair {
    lock: Mutex<()>,
    cv: Condvar,
}

impl CondvarPair {
    pub(super) fn new() -> Self {
        Self {
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// `Condvar::wait_timeout` until the deadline, waiting again after spurious wakeups.
    pub(super) fn wait(&mut self, ns: u64) {
        let deadline = monotonic_ns().saturating_add(ns);
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut left = ns;
        loop {
            let (g, res) = self
                .cv
                .wait_timeout(guard, Duration::from_nanos(left))
                .unwrap_or_else(|e| e.into_inner());
            guard = g;
            match remaining(deadline) {
                Some(l) if !res.timed_out() || l > 0 => left = l,
                _ => return,
            }
        }
    }
}
