//! `sdl-precise`: the idea of SDL3's `SDL_DelayPrecise`.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::{ONE_MS, SpinStrategy, native_sleep_for_from, spin_until};

/// Within each call: sleep 1 ms at a time while the remaining time exceeds the longest
/// 1 ms sleep seen *in this call* (starting at 1 ms), then spin with a pause instruction.
/// No memory across calls, so every call pays for its own learning.
#[derive(Debug, Clone, Copy, Default)]
pub struct SdlPrecise;

impl SdlPrecise {
    /// Registry name.
    pub const NAME: &'static str = "sdl-precise";
}

impl WaitFrom for SdlPrecise {
    const NAME: &'static str = SdlPrecise::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let mut now = start;
        let mut max_sleep = ONE_MS;
        let mut oversleep = None;
        while now.saturating_add(max_sleep) < deadline {
            let t = native_sleep_for_from(env, now, ONE_MS);
            max_sleep = max_sleep.max(t - now);
            oversleep = Some((t - now).saturating_sub(ONE_MS));
            now = t;
        }
        let spun = spin_until(env, now, deadline, SpinStrategy::Spin);
        SleepReport::from_instants(start, deadline, now, spun.woke, oversleep, max_sleep)
            .with_spin_gap(spun.max_gap_ns)
    }
}
