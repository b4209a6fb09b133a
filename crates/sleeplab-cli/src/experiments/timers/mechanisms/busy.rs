//! `busy-wait`: spin on the clock to each absolute deadline `t0 + k·P` (the seed's
//! reference). The clock read that ends the spin is the wake time. A wake that finds later
//! deadlines already passed (the thread was preempted) stands for them too.

use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::experiments::timers::accounting::passed_deadlines;
use crate::interrupt::interrupted;
use sleeplab::clock::monotonic_ns;

/// `busy-wait`.
pub struct BusyWait;

impl Periodic for BusyWait {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let p = plan.period_ns;
        let t0 = monotonic_ns();
        let mut report = RunReport {
            t0_ns: t0,
            ..RunReport::default()
        };
        let mut covered = 0u64;
        while covered < plan.ticks {
            let deadline = t0 + (covered + 1) * p;
            let now = loop {
                let now = monotonic_ns();
                if now >= deadline {
                    break now;
                }
                std::hint::spin_loop();
            };
            let n = passed_deadlines(t0, p, covered, now);
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
