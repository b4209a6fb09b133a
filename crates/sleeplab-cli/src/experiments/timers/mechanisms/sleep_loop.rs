//! Sleep loops: `clock-nanosleep-abs` sleeps to each absolute deadline `t0 + k·P`
//! (cyclictest's method, drift-free); `nanosleep-loop` sleeps a relative `P` after every
//! wake, so each wake's lateness adds to the next (it drifts). For both, a wake that finds
//! later deadlines already passed stands for them too (they are missed), and the loop
//! goes on with the first deadline still ahead. Timer slack applies to both.

use super::sys::os_err_code;
use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::experiments::timers::accounting::passed_deadlines;
use crate::interrupt::interrupted;
use sleeplab::clock::{monotonic_ns, ns_to_timespec};

/// `clock-nanosleep-abs`.
pub struct ClockNanosleepAbs;

impl Periodic for ClockNanosleepAbs {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let p = plan.period_ns;
        let t0 = monotonic_ns();
        let mut report = RunReport {
            t0_ns: t0,
            ..RunReport::default()
        };
        let mut covered = 0u64;
        while covered < plan.ticks {
            let deadline = ns_to_timespec(t0 + (covered + 1) * p);
            // SAFETY: valid timespec; no remainder is needed for TIMER_ABSTIME.
            let r = unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &deadline,
                    std::ptr::null_mut(),
                )
            };
            let now = monotonic_ns();
            if r == 0 {
                let n = passed_deadlines(t0, p, covered, now);
                wakes.push(Wake {
                    wake_ns: now,
                    expirations: n,
                });
                covered += n;
                report.end_ns = now;
            } else if r != libc::EINTR {
                return Err(os_err_code("clock_nanosleep", r));
            }
            if interrupted() {
                report.interrupted = covered < plan.ticks;
                break;
            }
        }
        Ok(report)
    }
}

/// `nanosleep-loop`.
pub struct NanosleepLoop;

impl Periodic for NanosleepLoop {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let p = plan.period_ns;
        let t0 = monotonic_ns();
        let mut report = RunReport {
            t0_ns: t0,
            ..RunReport::default()
        };
        let mut covered = 0u64;
        let period = ns_to_timespec(p);
        while covered < plan.ticks {
            // A naive loop: sleep P; after a signal, sleep the remainder.
            let mut req = period;
            let mut rem = ns_to_timespec(0);
            // SAFETY: valid timespecs.
            while unsafe { libc::nanosleep(&req, &mut rem) } != 0 && !interrupted() {
                req = rem;
            }
            let now = monotonic_ns();
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
