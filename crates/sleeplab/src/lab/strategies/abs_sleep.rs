//! `clock-nanosleep-abs`: an absolute native sleep to the deadline.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::native_sleep_until;

/// Absolute native sleep (`clock_nanosleep(TIMER_ABSTIME)`) to the deadline, again after
/// every early return, no spin. Unlike [`StdSleep`](super::StdSleep) it cannot drift by
/// the time between reading the clock and arming the timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct AbsSleep;

impl AbsSleep {
    /// Registry name.
    pub const NAME: &'static str = "clock-nanosleep-abs";
}

impl WaitFrom for AbsSleep {
    const NAME: &'static str = AbsSleep::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let woke = native_sleep_until(env, deadline);
        SleepReport::from_instants(start, deadline, woke, woke, Some(woke - deadline), 0)
    }
}
