//! `std-sleep`: what `std::thread::sleep(deadline - now)` does.

use crate::clock::Env;
use crate::precise::sleep_report::SleepReport;
use crate::precise::spin::native_sleep_for_from;
use crate::precise::wait_strategy::WaitStrategy;

/// Relative native sleep of the remaining time, resumed after early returns, no spin.
/// Always late by the native oversleep; uses almost no CPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdSleep;

impl StdSleep {
    /// Registry name.
    pub const NAME: &'static str = "std-sleep";
}

impl<E: Env> WaitStrategy<E> for StdSleep {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        let start = env.now();
        if start >= deadline {
            return SleepReport::already_past(start, deadline);
        }
        let woke = native_sleep_for_from(env, start, deadline - start);
        SleepReport::from_instants(start, deadline, woke, woke, Some(woke - deadline), 0)
    }
}
