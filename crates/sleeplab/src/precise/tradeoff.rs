//! [`Tradeoff`]: what the caller states about lateness against CPU, and how it turns the
//! estimator's margin into the margin of one wait.

use super::estimator::MarginEstimator;

/// How much of a wait may be spun.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum CpuBudget {
    /// The default. The margin is at most 5 % of the wait ([`AUTO_PERCENT`]) but at least
    /// 500 µs ([`AUTO_FLOOR_NS`]): 833 µs of a 60 Hz frame, 500 µs of a 1 ms tick. The
    /// ceiling is lifted to the estimator's cap while more than half
    /// ([`COARSE_SHARE`]) of the recent native wakeups (at least [`COARSE_MIN_SAMPLES`])
    /// overslept beyond half of it: there the machine's *ordinary* wakeup takes most of
    /// what the ceiling allows (a tick-driven scheduler, 1–15 ms on some VMs, phones and
    /// old Windows), a sleep alone cannot be precise, and only spinning the tick helps. A
    /// loaded machine, whose wakeups are mostly quick with a millisecond mode, keeps
    /// the ceiling until more than half of its wakeups are in that mode.
    ///
    /// [`AUTO_PERCENT`]: Tradeoff::AUTO_PERCENT
    /// [`AUTO_FLOOR_NS`]: Tradeoff::AUTO_FLOOR_NS
    /// [`COARSE_SHARE`]: Tradeoff::COARSE_SHARE
    /// [`COARSE_MIN_SAMPLES`]: Tradeoff::COARSE_MIN_SAMPLES
    #[default]
    Auto,
    /// Spin at most this percentage of each wait (0–100), never lifted: the margin of a
    /// wait of `w` ns is at most `w · percent / 100`, and so is its spin (to within one
    /// spin iteration).
    Percent(f64),
    /// No ceiling but the estimator's cap.
    Unlimited,
}

/// What the spin does when it keeps losing its CPU (see
/// [`Contention`](super::contention::Contention)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContentionPolicy {
    /// The default: after preemptions while spinning, cap the margin at what recent
    /// spins survived (sleep closer to the deadline).
    #[default]
    Adapt,
    /// Keep the margin whatever happens to the spin (the behaviour before the contended
    /// regime existed; for comparison).
    Ignore,
}

/// Whether a spin that loses its CPU to the host counts (see
/// [`Contention`](super::contention::Contention)): on a virtual machine the host may deschedule
/// a spinning vCPU, on bare metal the hardware (SMIs) stops it; a gap in the spin that
/// the guest's own run queue does not account for is theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostPolicy {
    /// The default: such losses count like the scheduler's (shorten the spin, stop it
    /// while shortened spins keep losing) once they come in about one wait of a hundred,
    /// so a host that punishes spinning vCPUs makes the sleeper sleep closer to the
    /// deadline, a host that takes the vCPU at random now and then changes nothing, and a
    /// quiet one gets its spin back.
    #[default]
    Adapt,
    /// Only the guest's own scheduler counts (the behaviour before; for comparison).
    Ignore,
}

/// Whether the waiting thread asks the scheduler for a short slice (see
/// [`system::slice`](crate::system::set_sched_slice_ns)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlicePolicy {
    /// The default: ask EEVDF for its shortest slice
    /// ([`MIN_SLICE_NS`](crate::system::MIN_SLICE_NS), 100 µs), so that a wakeup
    /// preempts a busy thread on its CPU at once instead of waiting for the end of that
    /// thread's slice (milliseconds). It does not change the thread's share of the CPU.
    #[default]
    Short,
    /// Keep the thread's slice as it is (the kernel's default unless the caller set one).
    Inherit,
}

impl SlicePolicy {
    /// The slice to request on the waiting thread, ns; `None`: the kernel's default.
    pub fn request_ns(self) -> Option<u64> {
        match self {
            Self::Short => Some(crate::system::MIN_SLICE_NS),
            Self::Inherit => None,
        }
    }
}

/// The caller's trade-off between lateness and CPU; see each field. The default is the
/// never-early, cover-the-quantile sleeper with the [`CpuBudget::Auto`] ceiling.
///
/// The margin of a wait that has `w` ns left to its (possibly advanced) target is
/// `min(estimator margin − lateness tolerance, ceiling(w))`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tradeoff {
    /// Lateness the caller accepts at the estimator's quantile, ns (default 0): the
    /// margin is that much shorter, so a wakeup at the quantile returns up to this late,
    /// and each wait spins up to this much less.
    pub lateness_tolerance_ns: u64,
    /// How much of a wait may be spun (default [`CpuBudget::Auto`]).
    pub cpu_budget: CpuBudget,
    /// "Early rather than late": the wait targets `deadline − early_tolerance_ns` and may
    /// return up to that much before the deadline, never earlier (default 0: never
    /// early). At the same CPU every late wakeup is up to this much less late.
    pub early_tolerance_ns: u64,
    /// Whether the margin shrinks while spins keep being preempted (default
    /// [`ContentionPolicy::Adapt`]).
    pub contention: ContentionPolicy,
    /// Whether losses to the host (or the hardware) count as contention (default
    /// [`HostPolicy::Adapt`]; only with [`ContentionPolicy::Adapt`]).
    pub host: HostPolicy,
    /// Whether the waiting thread asks for a short scheduler slice (default
    /// [`SlicePolicy::Short`]); applied when a
    /// `PreciseSleeper` is built, on the building thread.
    pub slice: SlicePolicy,
}

impl Tradeoff {
    /// [`CpuBudget::Auto`]'s share of a wait, percent.
    pub const AUTO_PERCENT: f64 = 5.0;
    /// [`CpuBudget::Auto`]'s smallest ceiling, ns.
    pub const AUTO_FLOOR_NS: u64 = 500_000;
    /// [`CpuBudget::Auto`] lifts its ceiling while more than this share of the recent
    /// native wakeups overslept beyond half of it.
    pub const COARSE_SHARE: f64 = 0.5;
    /// ... and the window holds at least this many native wakeups.
    pub const COARSE_MIN_SAMPLES: usize = 8;

    /// The largest margin for a wait with `wait_ns` left to its target, ns.
    pub fn ceiling_ns(&self, estimator: &MarginEstimator, wait_ns: u64) -> u64 {
        let cap = estimator.ceiling_ns();
        match self.cpu_budget {
            CpuBudget::Unlimited => cap,
            CpuBudget::Percent(p) => share_of(wait_ns, clamp_percent(p)).min(cap),
            CpuBudget::Auto => {
                let ceiling = share_of(wait_ns, Self::AUTO_PERCENT)
                    .max(Self::AUTO_FLOOR_NS)
                    .min(cap);
                if is_coarse(estimator, ceiling) {
                    cap
                } else {
                    ceiling
                }
            }
        }
    }

    /// The margin for a wait with `wait_ns` left to its target:
    /// `min(estimator margin − lateness tolerance, ceiling)`, ns.
    pub fn margin_ns(&self, estimator: &MarginEstimator, wait_ns: u64) -> u64 {
        estimator
            .margin_ns()
            .saturating_sub(self.lateness_tolerance_ns)
            .min(self.ceiling_ns(estimator, wait_ns))
    }

    /// Whether [`CpuBudget::Auto`] would lift the ceiling `ceiling_ns` now: more than
    /// [`COARSE_SHARE`](Self::COARSE_SHARE) of the window's native wakeups (at least
    /// [`COARSE_MIN_SAMPLES`](Self::COARSE_MIN_SAMPLES)) overslept beyond half of it.
    pub fn is_coarse(estimator: &MarginEstimator, ceiling_ns: u64) -> bool {
        is_coarse(estimator, ceiling_ns)
    }
}

fn is_coarse(estimator: &MarginEstimator, ceiling_ns: u64) -> bool {
    estimator.window_samples() >= Tradeoff::COARSE_MIN_SAMPLES
        && estimator.share_above(ceiling_ns / 2) > Tradeoff::COARSE_SHARE
}

/// A percentage brought into 0..=100 (NaN is 0).
fn clamp_percent(p: f64) -> f64 {
    if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) }
}

/// `percent` % of `ns`, rounded down.
fn share_of(ns: u64, percent: f64) -> u64 {
    // Exact in f64 for any wait below 2^53 ns (104 days); `as` saturates beyond.
    (ns as f64 * percent / 100.0).floor() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precise::EstimatorConfig;

    const FRAME: u64 = 16_666_667;

    fn warmed(oversleep: u64, n: usize) -> MarginEstimator {
        let mut e = MarginEstimator::default();
        for _ in 0..n {
            e.observe(oversleep);
        }
        e
    }

    #[test]
    fn auto_ceiling_is_five_percent_or_500_us() {
        let e = warmed(3_000_000, 6);
        let t = Tradeoff::default();
        assert_eq!(t.ceiling_ns(&e, FRAME), 833_333);
        assert_eq!(t.ceiling_ns(&e, 1_000_000), 500_000);
        assert_eq!(t.ceiling_ns(&e, 1_000_000_000), 50_000_000, "the cap");
    }

    #[test]
    fn auto_ceiling_lifts_when_most_wakeups_take_half_of_it() {
        // 5 of 9 wakeups beyond 416 µs: more than half, the ceiling is the cap.
        let mut e = warmed(50_000, 4);
        for _ in 0..5 {
            e.observe(3_000_000);
        }
        assert!(Tradeoff::is_coarse(&e, 833_333));
        assert_eq!(Tradeoff::default().ceiling_ns(&e, FRAME), 50_000_000);
        // 4 of 8 is not more than half.
        let mut e = warmed(50_000, 4);
        for _ in 0..4 {
            e.observe(3_000_000);
        }
        assert!(!Tradeoff::is_coarse(&e, 833_333));
        // Too few samples decide nothing.
        assert!(!Tradeoff::is_coarse(&warmed(3_000_000, 7), 833_333));
    }

    #[test]
    fn explicit_budgets_are_never_lifted() {
        let e = warmed(30_000_000, 100);
        let pct = |p| Tradeoff {
            cpu_budget: CpuBudget::Percent(p),
            ..Tradeoff::default()
        };
        assert_eq!(pct(2.0).ceiling_ns(&e, 10_000_000), 200_000);
        assert_eq!(pct(0.0).margin_ns(&e, 10_000_000), 0);
        assert_eq!(pct(250.0).ceiling_ns(&e, 10_000_000), 10_000_000);
        assert_eq!(pct(f64::NAN).ceiling_ns(&e, 10_000_000), 0);
        let unlimited = Tradeoff {
            cpu_budget: CpuBudget::Unlimited,
            ..Tradeoff::default()
        };
        assert_eq!(unlimited.ceiling_ns(&e, 1_000), 50_000_000);
    }

    #[test]
    fn lateness_tolerance_shortens_the_margin() {
        let e = MarginEstimator::new(EstimatorConfig {
            prior_ns: 300_000,
            ..EstimatorConfig::default()
        });
        let t = Tradeoff {
            lateness_tolerance_ns: 100_000,
            ..Tradeoff::default()
        };
        assert_eq!(e.margin_ns(), 310_000);
        assert_eq!(t.margin_ns(&e, FRAME), 210_000);
        let all = Tradeoff {
            lateness_tolerance_ns: u64::MAX,
            ..Tradeoff::default()
        };
        assert_eq!(all.margin_ns(&e, FRAME), 0);
    }
}
