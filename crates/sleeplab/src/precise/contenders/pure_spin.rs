//! `spin`: busy-wait the whole time.

use crate::clock::Env;
use crate::precise::sleep_report::SleepReport;
use crate::precise::spin::{SpinStrategy, spin_until};
use crate::precise::wait_strategy::WaitStrategy;

/// Busy-waits with a pause instruction until the deadline: the precision floor, at the
/// cost of a whole core.
#[derive(Debug, Clone, Copy, Default)]
pub struct PureSpin;

impl PureSpin {
    /// Registry name.
    pub const NAME: &'static str = "spin";
}

impl<E: Env> WaitStrategy<E> for PureSpin {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        let start = env.now();
        if start >= deadline {
            return SleepReport::already_past(start, deadline);
        }
        let spun = spin_until(env, start, deadline, SpinStrategy::Spin);
        SleepReport::from_instants(start, deadline, start, spun.woke, None, deadline - start)
            .with_spin_gap(spun.max_gap_ns)
    }
}
