//! Monotonic time in nanoseconds, and the [`Env`] trait through which every waiting
//! algorithm in this crate reads the clock and sleeps.
//!
//! Production code uses [`RealEnv`] (CLOCK_MONOTONIC via the vDSO, `clock_nanosleep`).
//! Tests and the simulator implement [`Env`] over a virtual clock, so the *same*
//! algorithm code runs in virtual time.

use crate::sys;
use std::time::{Duration, Instant};

/// Reads `CLOCK_MONOTONIC` in nanoseconds.
///
/// This is the clock `std::time::Instant` uses on Linux; a read costs about 20–40 ns
/// through the vDSO.
#[inline]
pub fn monotonic_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// Reads the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Reads the whole process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`) in nanoseconds.
#[inline]
pub fn process_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

#[inline]
fn read_clock(id: libc::clockid_t) -> u64 {
    // These clock ids always exist on Linux.
    sys::clock_ns(id).unwrap_or(0)
}

pub use crate::sys::{ns_to_timespec, timespec_to_ns};

/// Converts a `Duration` to nanoseconds, saturating at `u64::MAX` (≈ 584 years).
#[inline]
pub fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Converts a `std::time::Instant` to a [`monotonic_ns`] timestamp.
///
/// `Instant` is opaque, so this measures the offset between `Instant::now()` and
/// `monotonic_ns()`; on Linux both read `CLOCK_MONOTONIC`, so the error is the few tens
/// of nanoseconds between the two reads. Instants in the past map to earlier timestamps
/// (saturating at 0).
pub fn instant_to_ns(instant: Instant) -> u64 {
    let now_i = Instant::now();
    let now_ns = monotonic_ns();
    if instant >= now_i {
        now_ns.saturating_add(duration_ns(instant - now_i))
    } else {
        now_ns.saturating_sub(duration_ns(now_i - instant))
    }
}

/// The environment a waiting algorithm runs in: a monotonic clock and the native waits.
///
/// Implemented by [`RealEnv`] for the real machine and by virtual environments in tests
/// and in the simulator. Timestamps are nanoseconds on one monotonic time line.
///
/// Contract for implementations:
/// * [`now`](Env::now) never goes backwards.
/// * [`sleep_until`](Env::sleep_until) and [`sleep_for`](Env::sleep_for) may return late,
///   and may return *early* only when interrupted (a signal); callers that must not be
///   early re-check the clock. A virtual environment advances its clock inside them.
/// * [`spin_pause`](Env::spin_pause) is one iteration of a busy-wait loop; a virtual
///   environment advances its clock by the cost of one iteration and accounts it as CPU.
pub trait Env {
    /// The current time, ns.
    fn now(&mut self) -> u64;
    /// Native absolute sleep until `deadline` (ns, same time line as [`now`](Env::now)).
    fn sleep_until(&mut self, deadline: u64);
    /// Native relative sleep for `ns` nanoseconds (as `nanosleep` would).
    fn sleep_for(&mut self, ns: u64);
    /// One iteration of a spin loop (a `pause` instruction on x86).
    fn spin_pause(&mut self);
    /// Gives up the CPU (`sched_yield`).
    fn yield_now(&mut self);
    /// The thread's total time spent runnable but not running, ns, where the environment
    /// knows it (default `None`): a late wakeup that grew it was delayed by the
    /// scheduler, not by a timer or the host.
    fn run_queue_ns(&mut self) -> Option<u64> {
        None
    }
}

/// The real machine: `CLOCK_MONOTONIC`, `clock_nanosleep`, `sched_yield`.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealEnv;

impl Env for RealEnv {
    #[inline]
    fn now(&mut self) -> u64 {
        monotonic_ns()
    }

    fn sleep_until(&mut self, deadline: u64) {
        // An EINTR return is fine: the contract lets callers re-check the clock.
        sys::clock_nanosleep_abs(deadline);
    }

    fn sleep_for(&mut self, ns: u64) {
        let mut rem = ns_to_timespec(0);
        sys::clock_nanosleep_rel(&ns_to_timespec(ns), &mut rem);
    }

    #[inline]
    fn spin_pause(&mut self) {
        std::hint::spin_loop();
    }

    fn yield_now(&mut self) {
        sys::sched_yield();
    }

    fn run_queue_ns(&mut self) -> Option<u64> {
        crate::system::run_queue_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_never_goes_backwards() {
        let mut prev = monotonic_ns();
        for _ in 0..10_000 {
            let now = monotonic_ns();
            assert!(now >= prev);
            prev = now;
        }
    }

    #[test]
    fn timespec_round_trip() {
        for ns in [0, 1, 999_999_999, 1_000_000_000, 123_456_789_012] {
            assert_eq!(timespec_to_ns(&ns_to_timespec(ns)), ns);
        }
    }

    #[test]
    fn instant_conversion_lands_between_the_surrounding_reads() {
        // Both clocks are CLOCK_MONOTONIC: the converted instant must lie between the
        // monotonic reads taken around its creation and conversion (plus the offset),
        // however long the machine stalls in between.
        let before = monotonic_ns();
        let i = Instant::now() + Duration::from_millis(5);
        let ns = instant_to_ns(i);
        let after = monotonic_ns();
        assert!(ns >= before + 5_000_000, "{ns} < {before} + 5 ms");
        assert!(ns <= after + 5_000_000, "{ns} > {after} + 5 ms");
        let past = instant_to_ns(Instant::now() - Duration::from_millis(1));
        assert!(past <= monotonic_ns() - 1_000_000);
    }

    #[test]
    fn real_env_sleep_until_is_not_early() {
        let mut env = RealEnv;
        let deadline = env.now() + 200_000;
        env.sleep_until(deadline);
        assert!(env.now() >= deadline);
    }
}
