//! Timed waits on synchronisation primitives nobody signals: a futex word (`FUTEX_WAIT`
//! and `futex_waitv`) and a `std::sync::Condvar`.

use super::{Family, Mechanism, OneShot, remaining};
use crate::clock::{monotonic_ns, ns_to_timespec};
use crate::sys;
use std::sync::atomic::AtomicU32;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A futex word that stays 0 and is never woken.
struct FutexWord(Box<AtomicU32>);

impl OneShot for FutexWord {
    /// FUTEX_WAIT (private) with a relative timeout; after `EINTR` (or a spurious
    /// return) it waits again for the time left until the same deadline.
    fn wait(&mut self, ns: u64) {
        let deadline = monotonic_ns().saturating_add(ns);
        let mut left = ns;
        loop {
            let ts = ns_to_timespec(left);
            let r = sys::futex_wait(&self.0, 0, Some(&ts), true);
            if r < 0 && sys::errno() == libc::ETIMEDOUT {
                return;
            }
            match remaining(deadline) {
                Some(l) => left = l,
                None => return,
            }
        }
    }
}

pub(super) const FUTEX: Mechanism = Mechanism::ns(
    "futex",
    Family::Sync,
    "FUTEX_WAIT with a timeout on a private word nobody wakes",
    || Ok(Box::new(FutexWord(Box::new(AtomicU32::new(0))))),
);

/// `futex_waitv` on one private word that stays 0, nobody wakes it.
struct FutexWaitv(Box<AtomicU32>);

impl OneShot for FutexWaitv {
    /// `futex_waitv` with the absolute CLOCK_MONOTONIC deadline now + `ns` (its timeout
    /// is always absolute); after `EINTR` it waits again to the same deadline.
    fn wait(&mut self, ns: u64) {
        let deadline = monotonic_ns().saturating_add(ns);
        loop {
            let r = sys::futex_waitv_until(&self.0, 0, deadline);
            if r < 0 && sys::errno() == libc::ETIMEDOUT || remaining(deadline).is_none() {
                return;
            }
        }
    }
}

pub(super) const FUTEX_WAITV: Mechanism = Mechanism::ns(
    "futex-waitv",
    Family::Sync,
    "futex_waitv(2) on one private word nobody wakes, absolute CLOCK_MONOTONIC timeout (Linux 5.16+)",
    || {
        let word = Box::new(AtomicU32::new(0));
        // A word that differs from the expected value returns EAGAIN at once where the
        // call exists, and ENOSYS where the kernel lacks it (Linux < 5.16).
        if sys::futex_waitv_until(&word, 1, 0) < 0 && sys::errno() == libc::ENOSYS {
            return Err(crate::wait::WaitError::unsupported(sys::OsError::last(
                "futex_waitv",
            )));
        }
        Ok(Box::new(FutexWaitv(word)))
    },
).without_slack();

/// A mutex and condition variable nobody notifies.
struct CondvarPair {
    lock: Mutex<()>,
    cv: Condvar,
}

impl OneShot for CondvarPair {
    /// `Condvar::wait_timeout` until the deadline, waiting again after spurious wakeups.
    fn wait(&mut self, ns: u64) {
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

pub(super) const CONDVAR: Mechanism = Mechanism::ns(
    "condvar",
    Family::Sync,
    "std::sync::Condvar::wait_timeout, nobody notifies (loops over spurious wakeups)",
    || {
        Ok(Box::new(CondvarPair {
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }))
    },
);
