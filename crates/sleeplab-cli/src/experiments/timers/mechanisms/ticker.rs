//! `ticker`: sleeplab's own [`Ticker`] (a [`PreciseSleeper`] to each deadline of the grid
//! `start + k·P`) with [`MissedTickBehavior::Skip`], so a late tick reports the grid
//! instants it passed (`Tick::missed`) and the next tick is the first one still ahead,
//! as a kernel interval timer does.
//!
//! `PreciseSleeper::new` sets the thread's timer slack to 1 ns, as a user of the library
//! gets it; sleeplab puts the previous slack back after the run. When the user gave
//! `--timer-slack`, the sleeper leaves the slack alone instead.

use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::interrupt::interrupted;
use sleeplab::clock::monotonic_ns;
use sleeplab::precise::{MissedTickBehavior, PreciseSleeper, SlackPolicy, Ticker};
use sleeplab::system::{set_timer_slack_ns, timer_slack_ns};

/// `ticker`.
pub struct TickerMechanism;

impl Periodic for TickerMechanism {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let p = plan.period_ns;
        let slack_before = timer_slack_ns();
        let sleeper = if plan.slack_given {
            PreciseSleeper::builder()
                .slack_policy(SlackPolicy::LeaveAlone)
                .build()
        } else {
            PreciseSleeper::new()
        };
        let slack_in_force = sleeper.timer_slack_ns();
        let t0 = monotonic_ns();
        let mut ticker = Ticker::with_sleeper_at_ns(sleeper, t0 + p, p)
            .with_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut report = RunReport {
            t0_ns: t0,
            timer_slack_ns: slack_in_force,
            ..RunReport::default()
        };
        let mut covered = 0u64;
        while covered < plan.ticks {
            let tick = ticker.tick();
            let now = monotonic_ns();
            let n = 1 + tick.missed;
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
        if !plan.slack_given && slack_before > 0 {
            let _ = set_timer_slack_ns(slack_before);
        }
        Ok(report)
    }
}
