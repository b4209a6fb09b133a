//! `spin-sleep-interval`: [`spin_sleep_util::Interval`] with its default
//! [`MissedTickBehavior::Skip`](spin_sleep_util::MissedTickBehavior): a native sleep
//! (`std::thread::sleep`, so timer slack applies) to the deadline minus the crate's fixed
//! 125 µs accuracy margin, then a spin. After a late tick, `Interval` returns the next
//! (already due) tick at once, then skips to the grid.
//!
//! `Interval` works on `Instant`s. The grid's origin in nanoseconds is read *before* the
//! `Instant` anchor, so each tick's deadline in nanoseconds is at most the few tens of
//! nanoseconds between the two reads earlier than the `Instant` it sleeps to: lateness is
//! over-, never under-estimated. Each tick stands for the grid instants since the previous
//! tick (`k_i − k_{i−1}`, from the `Instant` it returns).
//!
//! The library stays lean (no `spin_sleep` dependency), so this row lives here and plugs
//! into the library's [`Periodic`] interface.

use sleeplab::clock::monotonic_ns;
use sleeplab::wait::ThreadUsage;
use sleeplab::wait::WaitError;
use sleeplab::wait::periodic::{Armed, Periodic, PeriodicMechanism, Wake};
use std::time::{Duration, Instant};

/// An armed interval.
struct Run {
    interval: spin_sleep_util::Interval,
    anchor: Instant,
    period_ns: u64,
    covered: u64,
}

/// `spin-sleep-interval`.
struct SpinSleepInterval {
    run: Option<Run>,
}

impl Periodic for SpinSleepInterval {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        let period_ns = period_ns.max(1);
        let period = Duration::from_nanos(period_ns);
        let t0 = monotonic_ns();
        let anchor = Instant::now();
        self.run = Some(Run {
            interval: spin_sleep_util::interval_at(anchor + period, period),
            anchor,
            period_ns,
            covered: 0,
        });
        Ok(Armed::at(t0))
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let run = self.run.as_mut().ok_or(WaitError::Ended)?;
        let tick = run.interval.tick();
        let now = monotonic_ns();
        let since = u64::try_from((tick - run.anchor).as_nanos()).unwrap_or(u64::MAX);
        let n = (since / run.period_ns).saturating_sub(run.covered).max(1);
        run.covered += n;
        Ok(Wake {
            wake_ns: now,
            expirations: n,
        })
    }

    fn disarm(&mut self) -> ThreadUsage {
        self.run = None;
        ThreadUsage::default()
    }
}

/// Its row.
pub const SPIN_SLEEP_INTERVAL: PeriodicMechanism = PeriodicMechanism::row(
    "spin-sleep-interval",
    "spin-interval",
    "spin_sleep_util::Interval (its default Skip): native sleep to deadline − 125 µs, then spin",
    true,
    |_| Ok(Box::new(SpinSleepInterval { run: None })),
);
