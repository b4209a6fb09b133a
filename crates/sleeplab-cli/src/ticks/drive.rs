//! The one loop every periodic mechanism runs through, in a `sleeplab timers` cell and in
//! a `sleeplab monitor` burst of a `tick:` cell: arm on the absolute grid `t0 + k·P`
//! (`t0` read right before arming), collect wakes into a buffer the caller allocated
//! beforehand until `plan.ticks` deadlines are covered or the stop flag is raised
//! (Ctrl-C, the monitor's stop), disarm; estimated counts are reconciled with the wake
//! times. The timed region is the mechanism's wait and its clock read; the push into the
//! buffer and the stop check come after.

use super::{Schedule, Wake};
use crate::interrupt::Stop;
use sleeplab::wait::periodic::{Grid, PeriodicTimer, reconcile};
use sleeplab::wait::{ThreadUsage, WaitError};

/// What one run asks of a mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The period, ns (> 0).
    pub period_ns: u64,
    /// Deadlines to cover before stopping (`seconds / period`).
    pub ticks: u64,
    /// Whether the user set the timer slack (then the `ticker` leaves it alone instead
    /// of setting 1 ns as `PreciseSleeper::new` does).
    pub slack_given: bool,
}

/// What a run reports besides its wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunReport {
    /// The schedule's origin: the clock read right before arming, ns.
    pub t0_ns: u64,
    /// The clock after the last wake, ns.
    pub end_ns: u64,
    /// CPU time and context switches spent outside the measuring thread on this run's
    /// behalf (the SIGEV_THREAD callback threads, the setitimer child process).
    pub helper: ThreadUsage,
    /// The timer slack in force while waiting, when the mechanism changed it.
    pub timer_slack_ns: Option<u64>,
    /// True when the stop flag (Ctrl-C) ended the run early.
    pub interrupted: bool,
}

impl RunReport {
    /// The schedule this run of `plan` is accounted against (`Schedule::of_run`).
    pub fn schedule(&self, plan: &Plan, wakes: &[Wake]) -> Schedule {
        Schedule::of_run(
            self.t0_ns,
            plan.period_ns,
            plan.ticks,
            self.interrupted,
            wakes,
        )
    }
}

/// Runs `plan` on `timer`, appending one [`Wake`] per wake-up to `wakes` (whose capacity
/// the caller reserved for `plan.ticks`), until the plan is covered or `stop` asks to end
/// early. The timer is disarmed on every way out.
pub fn run(
    timer: &mut PeriodicTimer,
    plan: &Plan,
    wakes: &mut Vec<Wake>,
    stop: &Stop,
) -> Result<RunReport, WaitError> {
    let armed = timer.arm(plan.period_ns, plan.ticks)?;
    let exact = timer.mechanism().exact_counts;
    let last = armed
        .t0_ns
        .saturating_add(plan.ticks.saturating_mul(plan.period_ns));
    let mut report = RunReport {
        t0_ns: armed.t0_ns,
        timer_slack_ns: armed.timer_slack_ns,
        ..RunReport::default()
    };
    let covered_by = |t: &PeriodicTimer| t.grid().map_or(0, Grid::covered);
    let from = wakes.len();
    let mut stopped = false;
    let result = loop {
        // Estimated counts cannot say when the run is over; the last wake's time can.
        let over = if exact {
            covered_by(timer) >= plan.ticks
        } else {
            report.end_ns >= last
        };
        if over {
            break Ok(());
        }
        match timer.wait_batch(wakes) {
            Ok(()) => {}
            Err(WaitError::Ended) => break Ok(()),
            Err(WaitError::Interrupted) => {
                report.interrupted = true;
                break Ok(());
            }
            Err(e) => break Err(e),
        }
        if let Some(w) = wakes[from..].last() {
            report.end_ns = w.wake_ns;
        }
        if stop.requested() {
            stopped = true;
            break Ok(());
        }
    };
    let covered = covered_by(timer);
    report.helper = timer.disarm();
    result?;
    let covered = if exact {
        covered
    } else {
        settle(&mut report, plan, wakes, from)
    };
    report.interrupted |= stopped && covered < plan.ticks;
    Ok(report)
}

/// Makes estimated counts consistent with the wake times (in time order), keeps the
/// wakes up to the plan's last deadline, and ends the run at the last one kept; returns
/// the deadlines they cover.
fn settle(report: &mut RunReport, plan: &Plan, wakes: &mut Vec<Wake>, from: usize) -> u64 {
    let got = &mut wakes[from..];
    got.sort_by_key(|w| w.wake_ns);
    reconcile(report.t0_ns, plan.period_ns, got);
    let (mut covered, mut keep) = (0u64, 0usize);
    for w in got.iter() {
        if covered >= plan.ticks {
            break;
        }
        covered += w.expirations.max(1);
        keep += 1;
    }
    wakes.truncate(from + keep);
    report.end_ns = wakes[from..].last().map_or(0, |w| w.wake_ns);
    covered
}
