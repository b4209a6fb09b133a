//! `clock-nanosleep-abs`: an absolute native sleep to the deadline.

use crate::clock::Env;
use crate::precise::sleep_report::SleepReport;
use crate::precise::spin::native_sleep_until;
use crate::precise::wait_strategy::WaitStrategy;

/// Absolute native sleep (`clock_nanosleep(TIMER_ABSTIME)`) to the deadline, again after
/// every early return, no spin. Unlike [`StdSleep`](super::StdSleep) it cannot drift by
/// the time between reading the clock and arming the timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AbsSleep;

impl AbsSleep {
    /// Registry name.
    pub const NAME: &'static str = "clock-nanosleep-abs";
}

impl<E: Env> WaitStrategy<E> for AbsSleep {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        let start = env.now();
        if start >= deadline {
            return SleepReport::already_past(start, deadline);
        }
        let woke = native_sleep_until(env, deadline);
        SleepReport::from_instants(start, deadline, woke, woke, Some(woke - deadline), 0)
    }
}
