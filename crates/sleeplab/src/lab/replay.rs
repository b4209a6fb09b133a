//! Replays a recorded [`Trace`] through any [`WaitStrategy`] in virtual time: wait `i`
//! asks for the trace's `requested_ns[i]` from its start, and native sleep number `k`
//! (counted over the whole replay) wakes `oversleep_ns[k]` after its target, cycling
//! through the trace (a [`VirtualEnv`] model). Deterministic, so an estimator can be
//! tuned and tested on recorded machines and compared with the
//! oracle (`oracle_at_cpu`).

use super::summary::WaitSummary;
use super::trace::Trace;
use super::virtual_env::{NativeWake, VirtualCosts, VirtualEnv};
use super::wait_strategy::WaitStrategy;
use crate::precise::SleepReport;

/// The replay's resolution: a spin ends less than this many ns after its deadline (one
/// spin iteration of [`REPLAY_COSTS`]), so lateness below it is the replay's, not the
/// strategy's.
pub const REPLAY_RESOLUTION_NS: u64 = 100;

/// The virtual costs of a replay: free clock reads and native calls, spin iterations of
/// [`REPLAY_RESOLUTION_NS`].
pub const REPLAY_COSTS: VirtualCosts = VirtualCosts {
    clock_read_ns: 0,
    spin_pause_ns: REPLAY_RESOLUTION_NS,
    yield_ns: REPLAY_RESOLUTION_NS,
    sleep_cpu_ns: 0,
};

/// The reports of a replayed trace, one per wait.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replay {
    /// One report per trace wait, in order.
    pub reports: Vec<SleepReport>,
}

impl Replay {
    /// Lateness and spin CPU over the replay (span = return − start of each wait), the
    /// same yardstick as the oracle's.
    pub fn summary(&self) -> WaitSummary {
        WaitSummary::from_waits(self.reports.iter().map(|r| {
            (
                r.lateness_ns,
                r.spin_ns,
                r.woke_ns.saturating_sub(r.start_ns),
            )
        }))
    }

    /// The earliest return before a deadline, ns (0 when no wait returned early).
    pub fn max_early_ns(&self) -> u64 {
        self.reports
            .iter()
            .map(SleepReport::early_ns)
            .max()
            .unwrap_or(0)
    }
}

/// Replays `trace` through `strategy`.
///
/// A strategy that makes one native sleep per wait (`precise` at 60 Hz, `fixed-margin`,
/// `clock-nanosleep-abs`) sees exactly the recorded wakeups, wait for wait, as the oracle
/// does. One that sleeps 1 ms at a time (`seed-hybrid`, `sdl-precise`) sees the recorded
/// wakeups in order, one per sleep: a model of its native phase (it assumes a 1 ms sleep
/// oversleeps as a frame-long one did), not a recording of it. A wait without a native
/// phase draws no wakeup.
pub fn replay<S: WaitStrategy<VirtualEnv> + ?Sized>(trace: &Trace, strategy: &mut S) -> Replay {
    run(trace, strategy, replay_env(trace))
}

/// [`replay`] on a loaded machine's scheduler: the recorded wakeups, and a preemption
/// model ([`VirtualEnv::with_preemption`]) that decides at every spin iteration, from the
/// ns run since the last wakeup, how long the spinner loses its CPU.
pub fn replay_with_preemption<S: WaitStrategy<VirtualEnv> + ?Sized>(
    trace: &Trace,
    strategy: &mut S,
    preemption: impl FnMut(u64) -> u64 + Send + 'static,
) -> Replay {
    run(
        trace,
        strategy,
        replay_env(trace).with_preemption(preemption),
    )
}

/// The replay's environment: native sleep `k` wakes `oversleep_ns[k]` late (cycled).
fn replay_env(trace: &Trace) -> VirtualEnv {
    let wakeups: Vec<u64> = trace.waits.iter().map(|w| w.oversleep_ns).collect();
    VirtualEnv::starting_at(1_000_000_000)
        .with_costs(REPLAY_COSTS)
        .with_model(move |call| {
            let k = usize::try_from(call.index).unwrap_or(usize::MAX) % wakeups.len().max(1);
            NativeWake::Late(wakeups.get(k).copied().unwrap_or(0))
        })
}

fn run<S: WaitStrategy<VirtualEnv> + ?Sized>(
    trace: &Trace,
    strategy: &mut S,
    mut env: VirtualEnv,
) -> Replay {
    let reports = trace
        .waits
        .iter()
        .map(|w| {
            let deadline = env.time().saturating_add(w.requested_ns);
            strategy.sleep_until(&mut env, deadline)
        })
        .collect();
    Replay { reports }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::{AbsSleep, FixedMargin, fixed_margin_on_trace};
    use crate::precise::SpinStrategy;

    fn trace() -> Trace {
        Trace::from_pairs((0..300u64).map(|i| (16_000_000 - i * 1_000, 50_000 + (i % 7) * 40_000)))
    }

    #[test]
    fn a_plain_sleep_is_late_by_exactly_the_recorded_oversleep() {
        let t = trace();
        let r = replay(&t, &mut AbsSleep);
        assert_eq!(r.reports.len(), t.len());
        for (rep, w) in r.reports.iter().zip(&t.waits) {
            assert_eq!(rep.deadline_ns - rep.start_ns, w.requested_ns);
            assert_eq!(rep.lateness_ns, w.oversleep_ns);
            assert_eq!(rep.spin_ns, 0);
        }
        assert_eq!(r.max_early_ns(), 0);
    }

    #[test]
    fn a_fixed_margin_matches_the_oracle_arithmetic() {
        // An absolute fixed margin is what the oracle computes; the relative `fixed-margin`
        // strategy sleeps `remaining − m` from its start, which is the same here.
        let t = trace();
        for m in [0, 100_000, 170_000, 400_000] {
            let mut s = FixedMargin::new(m, SpinStrategy::Spin);
            let got = replay(&t, &mut s).summary();
            let want = fixed_margin_on_trace(&t, m).summary;
            assert_eq!(got.late_waits, want.late_waits, "m {m}");
            assert_eq!(got.p99_ns, want.p99_ns, "m {m}");
            // Spins end within one 100 ns iteration after the deadline.
            assert!(got.spin_ns >= want.spin_ns && got.spin_ns < want.spin_ns + 100 * 300);
        }
    }
}
