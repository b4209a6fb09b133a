//! `fixed-margin`: the `spin_sleep` crate's idea with a fixed margin.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::{SpinStrategy, native_sleep_for_from, spin_until};

/// Relative native sleep of `remaining − margin` (when the remaining time exceeds the
/// margin), then spin. `spin_sleep`'s Linux defaults: a 125 µs margin ("native
/// accuracy") and a `sched_yield` spin loop. The margin never adapts. With a busy thread
/// per CPU the yield hands the CPU away for a slice (see [`SpinStrategy::YieldSpin`]);
/// `fixed-margin:…,spin=pause` spins instead.
#[derive(Debug, Clone, Copy)]
pub struct FixedMargin {
    /// The time left to the spin phase, ns.
    pub margin_ns: u64,
    /// How the spin phase waits.
    pub spin: SpinStrategy,
}

impl FixedMargin {
    /// Registry name.
    pub const NAME: &'static str = "fixed-margin";
    /// `spin_sleep`'s default native accuracy on Linux, ns.
    pub const DEFAULT_MARGIN_NS: u64 = 125_000;

    /// A fixed-margin strategy with the given margin and spin strategy.
    pub fn new(margin_ns: u64, spin: SpinStrategy) -> Self {
        Self { margin_ns, spin }
    }
}

impl Default for FixedMargin {
    fn default() -> Self {
        Self::new(Self::DEFAULT_MARGIN_NS, SpinStrategy::YieldSpin)
    }
}

impl WaitFrom for FixedMargin {
    const NAME: &'static str = FixedMargin::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let remaining = deadline - start;
        let (native_end, oversleep) = if remaining > self.margin_ns {
            let ns = remaining - self.margin_ns;
            let t = native_sleep_for_from(env, start, ns);
            (t, Some(t - (start + ns)))
        } else {
            (start, None)
        };
        let spun = spin_until(env, native_end, deadline, self.spin);
        SleepReport::from_instants(
            start,
            deadline,
            native_end,
            spun.woke,
            oversleep,
            self.margin_ns,
        )
        .with_spin_gap(spun.max_gap_ns)
    }
}
