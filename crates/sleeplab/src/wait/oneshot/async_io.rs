//! async-io's `Timer` (smol's timer; the cargo feature `async-io`):
//! `Timer::after(d).await` in `async_io::block_on`.
//!
//! The wait is timed from the call that creates the future to the first line after its
//! `.await` ([`OneShot::wait_timed`]). async-io keeps its timers in one global reactor;
//! the thread in `block_on` drives it while it holds the reactor's lock (otherwise the
//! background "async-io" thread does and wakes it). The reactor waits in `epoll_wait`
//! on the `polling` crate's epoll set, whose timeout on Linux is a timerfd in that set
//! armed to the earliest timer, so it is not rounded to milliseconds. A signal does
//! not end the wait (the reactor retries).

use super::{Family, Mechanism, OneShot};

pub(super) const TIMER: Mechanism = Mechanism::ns(
    "async-io-timer",
    Family::Async,
    "async_io::Timer::after(d).await in async_io::block_on (smol's timer; polling's epoll + timerfd)",
    imp::new,
).without_slack();

#[cfg(not(feature = "async-io"))]
mod imp {
    use super::*;

    pub(super) fn new() -> Result<Box<dyn OneShot>, crate::wait::WaitError> {
        Err(crate::wait::not_built("async-io"))
    }
}

#[cfg(feature = "async-io")]
mod imp {
    use super::*;
    use crate::clock::monotonic_ns;
    use std::time::Duration;

    struct AsyncIoTimer;

    pub(super) fn new() -> Result<Box<dyn OneShot>, crate::wait::WaitError> {
        Ok(Box::new(AsyncIoTimer))
    }

    impl OneShot for AsyncIoTimer {
        fn wait(&mut self, ns: u64) {
            self.wait_timed(ns);
        }

        fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
            async_io::block_on(async {
                let t0 = monotonic_ns();
                async_io::Timer::after(Duration::from_nanos(ns)).await;
                (t0, monotonic_ns())
            })
        }
    }
}
