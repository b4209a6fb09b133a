//! `spin`: busy-wait the whole time.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::{SpinStrategy, spin_until};

/// Busy-waits with a pause instruction until the deadline: the precision floor, at the
/// cost of a whole core.
#[derive(Debug, Clone, Copy, Default)]
pub struct PureSpin;

impl PureSpin {
    /// Registry name.
    pub const NAME: &'static str = "spin";
}

impl WaitFrom for PureSpin {
    const NAME: &'static str = PureSpin::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let spun = spin_until(env, start, deadline, SpinStrategy::Spin);
        SleepReport::from_instants(start, deadline, start, spun.woke, None, deadline - start)
            .with_spin_gap(spun.max_gap_ns)
    }
}
