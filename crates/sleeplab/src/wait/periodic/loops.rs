//! Loops on the grid `t0 + k·P`: `clock-nanosleep-abs` sleeps to each absolute deadline
//! (cyclictest's method, drift-free); `nanosleep-loop` sleeps a relative `P` after every
//! wake, so each wake's lateness adds to the next (it drifts); `busy-wait` spins on the
//! clock to each absolute deadline (the seed's reference). For all three, a wake that
//! finds later deadlines already passed stands for them too (they are missed), and the
//! loop goes on with the first deadline still ahead. Timer slack applies to the sleeps.

use super::{Armed, Grid, Periodic, PeriodicMechanism, Wake};
use crate::clock::monotonic_ns;
use crate::sys::{self, OsError};
use crate::wait::oneshot::spin_until;
use crate::wait::{ThreadUsage, WaitError};

/// How one loop waits for the next deadline of its grid; returns the clock read that
/// ends the wait.
type Step = fn(&Grid) -> Result<u64, WaitError>;

/// A loop: its grid while armed, and its step.
struct Loop {
    grid: Option<Grid>,
    step: Step,
}

impl Periodic for Loop {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        let t0 = monotonic_ns();
        self.grid = Some(Grid::new(t0, period_ns));
        Ok(Armed::at(t0))
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let grid = self.grid.as_mut().ok_or(WaitError::Ended)?;
        let now = (self.step)(grid)?;
        let wake = Wake {
            wake_ns: now,
            expirations: grid.passed(now),
        };
        grid.advance(wake);
        Ok(wake)
    }

    fn disarm(&mut self) -> ThreadUsage {
        self.grid = None;
        ThreadUsage::default()
    }
}

fn looping(step: Step) -> Box<dyn Periodic> {
    Box::new(Loop { grid: None, step })
}

/// Absolute `clock_nanosleep` to the next deadline, again to the same one after `EINTR`.
fn sleep_abs(grid: &Grid) -> Result<u64, WaitError> {
    match sys::sleep_until(grid.next_deadline()) {
        0 => Ok(monotonic_ns()),
        r => Err(OsError::code("clock_nanosleep", r).into()),
    }
}

pub(super) const CLOCK_NANOSLEEP_ABS: PeriodicMechanism = PeriodicMechanism::row(
    "clock-nanosleep-abs",
    "sleep-loop",
    "clock_nanosleep(TIMER_ABSTIME) to t0 + k·P: cyclictest's method",
    true,
    |_| Ok(looping(sleep_abs)),
);

/// A naive loop: `nanosleep(P)`; after a signal, the remainder.
fn sleep_rel(grid: &Grid) -> Result<u64, WaitError> {
    sys::nanosleep_resuming(grid.period_ns());
    Ok(monotonic_ns())
}

pub(super) const NANOSLEEP: PeriodicMechanism = PeriodicMechanism::row(
    "nanosleep-loop",
    "sleep-loop",
    "nanosleep(P) after every wake: relative, so it drifts",
    true,
    |_| Ok(looping(sleep_rel)),
);

/// Spins to the next deadline; the clock read that ends the spin is the wake time.
fn spin(grid: &Grid) -> Result<u64, WaitError> {
    Ok(spin_until(grid.next_deadline()))
}

pub(super) const BUSY_WAIT: PeriodicMechanism = PeriodicMechanism::row(
    "busy-wait",
    "busy",
    "spin on clock_gettime to each absolute deadline",
    false,
    |_| Ok(looping(spin)),
);
