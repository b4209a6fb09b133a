//! The one preamble every contender shares: its registry name, and a deadline already
//! past returns at once. A contender implements [`WaitFrom`] (the wait from a clock
//! reading before its deadline) and gets [`WaitStrategy`] from the blanket impl here.

use crate::clock::Env;
use crate::lab::WaitStrategy;
use crate::precise::SleepReport;

/// A contender's wait, from `start` (a clock reading) to `deadline`, called only when
/// `start < deadline`. Public in a private module: the contenders' own, not an extension
/// point (implement [`WaitStrategy`] directly instead).
pub trait WaitFrom {
    /// The registry name.
    const NAME: &'static str;

    /// Waits from `start` until `deadline` (`start < deadline`) and reports how it went.
    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport;
}

impl<E: Env, T: WaitFrom> WaitStrategy<E> for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        let start = env.now();
        if start >= deadline {
            return SleepReport::already_past(start, deadline);
        }
        self.wait_from(env, start, deadline)
    }
}
