//! tokio's timers (the cargo feature `tokio`): `tokio::time::sleep(d).await` and
//! `sleep_until(Instant::now() + d).await`, on a current-thread runtime and on a
//! multi-thread runtime (2 workers) of the waiter's own.
//!
//! Each wait is `runtime.block_on(async { t0 = now; sleep(d).await; t1 = now })`: the
//! wait is timed from the call that creates the future to the first line after its
//! `.await` ([`OneShot::wait_timed`]), so entering and leaving `block_on` is not part of
//! it. On the current-thread runtime the measuring thread drives tokio's timer itself:
//! it parks in `epoll_wait` with the wheel's next expiry as the timeout, in whole
//! milliseconds, rounded up. On the multi-thread runtime the future still runs on the
//! measuring thread (`block_on`), but a worker thread drives the timer and wakes it
//! (a futex wake): the kernel sees the measuring thread wait on a futex with no
//! timeout, woken by another thread.
//!
//! tokio's wheel has a resolution of 1 ms: a deadline is rounded up to the next whole
//! millisecond of the runtime's clock, so a 50 µs sleep takes about 1 ms. A signal does
//! not end a tokio sleep (the runtime retries `epoll_wait`).

use super::{Family, Mechanism, OneShot};
#[cfg(not(feature = "tokio"))]
use crate::wait::WaitError;

pub(super) const SLEEP: Mechanism = Mechanism::ns(
    "tokio-sleep",
    Family::Async,
    "tokio::time::sleep(d).await on a current-thread runtime (the 1 ms wheel, epoll_wait)",
    || imp::new(imp::Flavor::CurrentThread, false),
);

pub(super) const SLEEP_UNTIL: Mechanism = Mechanism::ns(
    "tokio-sleep-until",
    Family::Async,
    "tokio::time::sleep_until(Instant::now() + d).await on a current-thread runtime",
    || imp::new(imp::Flavor::CurrentThread, true),
)
.variant_of("tokio-sleep");

pub(super) const SLEEP_MT: Mechanism = Mechanism::ns(
    "tokio-sleep-mt",
    Family::Async,
    "tokio::time::sleep(d).await in block_on of a multi-thread runtime (2 workers drive the timer)",
    || imp::new(imp::Flavor::MultiThread, false),
)
.without_slack()
.variant_of("tokio-sleep");

pub(super) const SLEEP_UNTIL_MT: Mechanism = Mechanism::ns(
    "tokio-sleep-until-mt",
    Family::Async,
    "tokio::time::sleep_until(Instant::now() + d).await in block_on of a multi-thread runtime",
    || imp::new(imp::Flavor::MultiThread, true),
)
.without_slack()
.variant_of("tokio-sleep");

#[cfg(not(feature = "tokio"))]
mod imp {
    use super::*;

    pub(super) enum Flavor {
        CurrentThread,
        MultiThread,
    }

    pub(super) fn new(_: Flavor, _until: bool) -> Result<Box<dyn OneShot>, WaitError> {
        Err(crate::wait::not_built("tokio"))
    }
}

#[cfg(feature = "tokio")]
mod imp {
    use super::*;
    use crate::clock::monotonic_ns;
    use crate::wait::WaitError;
    use std::time::Duration;
    use tokio::runtime::Runtime;
    use tokio::time::{Instant, sleep, sleep_until};

    pub(super) use crate::wait::async_rt::Flavor;

    struct TokioSleep {
        rt: Runtime,
        until: bool,
    }

    pub(super) fn new(flavor: Flavor, until: bool) -> Result<Box<dyn OneShot>, WaitError> {
        Ok(Box::new(TokioSleep {
            rt: flavor.runtime()?,
            until,
        }))
    }

    impl OneShot for TokioSleep {
        fn wait(&mut self, ns: u64) {
            self.wait_timed(ns);
        }

        fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
            let d = Duration::from_nanos(ns);
            let until = self.until;
            self.rt.block_on(async move {
                let t0 = monotonic_ns();
                if until {
                    sleep_until(Instant::now() + d).await;
                } else {
                    sleep(d).await;
                }
                (t0, monotonic_ns())
            })
        }
    }
}
