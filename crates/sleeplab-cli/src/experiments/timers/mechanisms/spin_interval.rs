//! `spin-sleep-interval`: [`spin_sleep_util::Interval`] with its default
//! [`MissedTickBehavior::Skip`](spin_sleep_util::MissedTickBehavior): a native sleep
//! (`std::thread::sleep`, so timer slack applies) to the deadline minus the crate's fixed
//! 125 µs accuracy margin, then a spin. After a late tick, `Interval` returns the next
//! (already due) tick at once, then skips to the grid.
//!
//! `Interval` works on `Instant`s. The schedule's origin in nanoseconds is read *before*
//! the `Instant` anchor, so each tick's deadline in nanoseconds is at most the few tens of
//! nanoseconds between the two reads earlier than the `Instant` it sleeps to: lateness is
//! over-, never under-estimated. Each tick stands for the grid instants since the previous
//! tick (`k_i − k_{i−1}`, from the `Instant` it returns).

use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::interrupt::interrupted;
use sleeplab::clock::monotonic_ns;
use std::time::{Duration, Instant};

/// `spin-sleep-interval`.
pub struct SpinSleepInterval;

impl Periodic for SpinSleepInterval {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let p = plan.period_ns.max(1);
        let period = Duration::from_nanos(p);
        let t0 = monotonic_ns();
        let anchor = Instant::now();
        let mut interval = spin_sleep_util::interval_at(anchor + period, period);
        let mut report = RunReport {
            t0_ns: t0,
            ..RunReport::default()
        };
        let mut covered = 0u64;
        while covered < plan.ticks {
            let tick = interval.tick();
            let now = monotonic_ns();
            let since = u64::try_from((tick - anchor).as_nanos()).unwrap_or(u64::MAX);
            let k = since / p;
            let n = k.saturating_sub(covered).max(1);
            wakes.push(Wake {
                wake_ns: now,
                expirations: n,
            });
            covered += n;
            report.end_ns = now;
            if interrupted() {
                report.interrupted = covered < plan.ticks;
                break;
            }
        }
        Ok(report)
    }
}
