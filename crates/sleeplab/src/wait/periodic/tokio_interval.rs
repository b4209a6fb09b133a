//! tokio's `Interval` (the cargo feature `tokio`): `interval_at(start + P, P)` with
//! `MissedTickBehavior::Burst` (tokio's default) or `Delay`, each tick awaited in
//! `block_on` of a current-thread or multi-thread runtime of the timer's own.
//!
//! `t0` is read right before `Instant::now()` gives tokio its start `s`, so tokio's
//! deadlines are at or after the grid's `t0 + k·P`. A tick's wake time is the first line
//! after `interval.tick().await`; the tick stands for the grid's deadlines up to the
//! latest at or before the instant tokio says it was scheduled for (`tick()`'s value
//! `v`: deadline `⌊(v − s)/P⌋`, tokio's first being `s + P`). With `Burst` (and any tick less than 5 ms late,
//! which tokio does not count as missed) that is one deadline per tick, the ticks after
//! a late one returned at once; with `Delay` a tick more than 5 ms late moves tokio's
//! schedule to its own time + P, so later ticks drift off the grid, and a tick stands for
//! the grid deadlines its drifted instant passed.
//! Timer slack delays the current-thread rows (the measuring thread's `epoll_wait`), and
//! the multi-thread rows through the workers' own slack, which is not the measuring
//! thread's. The multi-thread row's workers drive its timer: their CPU from arm to disarm
//! is the row's helper usage.

use super::{Armed, Options, Periodic, PeriodicMechanism, Wake};
#[cfg(feature = "tokio")]
use crate::wait::async_rt::Flavor;
use crate::wait::{ThreadUsage, WaitError};

/// How the rows are built: the runtime and the missed-tick behaviour.
#[derive(Debug, Clone, Copy)]
struct Setup {
    multi_thread: bool,
    burst: bool,
}

fn build(setup: Setup) -> Result<Box<dyn Periodic>, WaitError> {
    imp::new(setup)
}

pub(super) const BURST: PeriodicMechanism = PeriodicMechanism::row(
    "tokio-interval-burst",
    "tokio",
    "tokio::time::interval_at, MissedTickBehavior::Burst (the default), current-thread runtime",
    true,
    |_: &Options| {
        build(Setup {
            multi_thread: false,
            burst: true,
        })
    },
);

pub(super) const DELAY: PeriodicMechanism = PeriodicMechanism::row(
    "tokio-interval-delay",
    "tokio",
    "tokio::time::interval_at, MissedTickBehavior::Delay (moves its schedule), current-thread runtime",
    true,
    |_: &Options| {
        build(Setup {
            multi_thread: false,
            burst: false,
        })
    },
).variant_of("tokio-interval-burst");

pub(super) const BURST_MT: PeriodicMechanism = PeriodicMechanism::row(
    "tokio-interval-burst-mt",
    "tokio",
    "tokio::time::interval_at (Burst) in block_on of a multi-thread runtime: a worker fires it",
    false,
    |_: &Options| {
        build(Setup {
            multi_thread: true,
            burst: true,
        })
    },
)
.variant_of("tokio-interval-burst");

#[cfg(not(feature = "tokio"))]
mod imp {
    use super::*;

    pub(super) fn new(setup: Setup) -> Result<Box<dyn Periodic>, WaitError> {
        // The types the built rows use, named so a build without them stays warning-free.
        let _ = (setup.multi_thread, setup.burst);
        let _ = (Armed::at(0), Wake::default(), ThreadUsage::default());
        Err(crate::wait::not_built("tokio"))
    }
}

#[cfg(feature = "tokio")]
mod imp {
    use super::*;
    use crate::clock::{duration_ns, monotonic_ns};
    use crate::wait::async_rt::Workers;
    use std::time::Duration;
    use tokio::runtime::Runtime;
    use tokio::time::{Instant, Interval, MissedTickBehavior, interval_at};

    struct TokioInterval {
        rt: Runtime,
        /// The runtime's threads, and their usage when the run was armed.
        workers: Workers,
        at_arm: ThreadUsage,
        burst: bool,
        /// The interval, tokio's start instant, the period and the deadlines covered.
        run: Option<Run>,
    }

    struct Run {
        interval: Interval,
        start: Instant,
        period_ns: u64,
        covered: u64,
    }

    pub(super) fn new(setup: Setup) -> Result<Box<dyn Periodic>, WaitError> {
        let flavor = if setup.multi_thread {
            Flavor::MultiThread
        } else {
            Flavor::CurrentThread
        };
        let (rt, workers) = flavor.runtime_with_workers()?;
        Ok(Box::new(TokioInterval {
            rt,
            workers,
            at_arm: ThreadUsage::default(),
            burst: setup.burst,
            run: None,
        }))
    }

    impl Periodic for TokioInterval {
        fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
            let _in_runtime = self.rt.enter();
            self.at_arm = self.workers.usage();
            let period = Duration::from_nanos(period_ns);
            let t0 = monotonic_ns();
            let start = Instant::now();
            let mut interval = interval_at(start + period, period);
            interval.set_missed_tick_behavior(if self.burst {
                MissedTickBehavior::Burst
            } else {
                MissedTickBehavior::Delay
            });
            self.run = Some(Run {
                interval,
                start,
                period_ns,
                covered: 0,
            });
            Ok(Armed::at(t0))
        }

        fn wait(&mut self) -> Result<Wake, WaitError> {
            let run = self.run.as_mut().ok_or(WaitError::Ended)?;
            let interval = &mut run.interval;
            let (now, scheduled) = self.rt.block_on(async {
                let scheduled = interval.tick().await;
                (monotonic_ns(), scheduled)
            });
            let k = duration_ns(scheduled - run.start) / run.period_ns.max(1);
            let expirations = k.saturating_sub(run.covered).max(1);
            run.covered += expirations;
            Ok(Wake {
                wake_ns: now,
                expirations,
            })
        }

        fn disarm(&mut self) -> ThreadUsage {
            self.run = None;
            // A current-thread runtime starts no threads of its own: nothing to add.
            self.workers.usage().since(&self.at_arm)
        }
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::super::PeriodicTimer;
    use super::*;

    /// The multi-thread row's workers drive its timer, so their CPU is its helper usage;
    /// the current-thread row starts no thread, so it has none.
    #[test]
    fn the_multi_thread_row_counts_its_workers() {
        for (name, workers_run) in [
            ("tokio-interval-burst-mt", true),
            ("tokio-interval-burst", false),
        ] {
            let mut t = PeriodicTimer::new(name, &Options::default()).unwrap();
            t.arm(1_000_000, 5).unwrap();
            for _ in 0..5 {
                t.wait().unwrap();
            }
            let used = t.disarm();
            assert_eq!(used.cpu_ns > 0, workers_run, "{name}: {used:?}");
            assert_eq!(used.voluntary_csw > 0, workers_run, "{name}: {used:?}");
        }
    }
}
