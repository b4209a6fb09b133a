//! `std-sleep`: what `std::thread::sleep(deadline - now)` does.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::native_sleep_for_from;

/// Relative native sleep of the remaining time, resumed after early returns, no spin.
/// Always late by the native oversleep; uses almost no CPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdSleep;

impl StdSleep {
    /// Registry name.
    pub const NAME: &'static str = "std-sleep";
}

impl WaitFrom for StdSleep {
    const NAME: &'static str = StdSleep::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let woke = native_sleep_for_from(env, start, deadline - start);
        SleepReport::from_instants(start, deadline, woke, woke, Some(woke - deadline), 0)
    }
}
