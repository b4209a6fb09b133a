//! `sleeplab_options`: the builder options of the Rust `PreciseSleeperBuilder`, set one by
//! one through functions so that new options never change a struct layout.
//!
//! This file is the only place that maps C values onto the library's builder: a new
//! builder option is a field, a setter and one line in [`Options::builder`].

use std::ffi::c_int;

use sleeplab_core::precise::{
    CpuBudget, EstimatorConfig, PreciseSleeperBuilder, SlackPolicy, SlicePolicy, SpinStrategy,
    Tradeoff,
};

use crate::error::{Error, guard, guard_value};

/// Spin phase: busy-wait with a pause instruction between clock reads (the default).
pub const SLEEPLAB_SPIN_PAUSE: c_int = 0;
/// Spin phase: `sched_yield()` between clock reads.
pub const SLEEPLAB_SPIN_YIELD: c_int = 1;

/// Timer slack: set the creating thread's slack to 1 ns (the default).
pub const SLEEPLAB_SLACK_SET_MINIMAL: c_int = 0;
/// Timer slack: leave the creating thread's slack as it is.
pub const SLEEPLAB_SLACK_LEAVE_ALONE: c_int = 1;

/// Scheduler slice: ask EEVDF for its shortest slice (100 µs) on the creating thread, so
/// that a wakeup preempts a busy thread at once (the default).
pub const SLEEPLAB_SLICE_SHORT: c_int = 0;
/// Scheduler slice: leave the creating thread's slice as it is.
pub const SLEEPLAB_SLICE_INHERIT: c_int = 1;

/// CPU budget: spin at most 5 % of each wait, at least 500 µs, lifted to the cap when
/// most native wakeups take half of that (coarse schedulers). The default.
pub const SLEEPLAB_BUDGET_AUTO: c_int = 0;
/// CPU budget: spin at most the given percentage (0–100) of each wait.
pub const SLEEPLAB_BUDGET_PERCENT: c_int = 1;
/// CPU budget: no ceiling but the estimator's cap.
pub const SLEEPLAB_BUDGET_UNLIMITED: c_int = 2;

/// Options for a sleeper or ticker (opaque; `sleeplab_options_new`, the setters,
/// `sleeplab_options_free`). Plain data: any thread may use it, one at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    spin: SpinStrategy,
    slack: SlackPolicy,
    estimator: EstimatorConfig,
    tradeoff: Tradeoff,
}

impl Options {
    /// The library builder these options describe, or [`Error::Invalid`] when the
    /// estimator parameters are inconsistent (the prior above the cap).
    pub(crate) fn builder(&self) -> Result<PreciseSleeperBuilder, Error> {
        if self.estimator.normalized() != self.estimator {
            return Err(Error::Invalid);
        }
        Ok(PreciseSleeperBuilder::default()
            .spin_strategy(self.spin)
            .slack_policy(self.slack)
            .estimator(self.estimator)
            .tradeoff(self.tradeoff))
    }

    /// Applies `change` to the estimator parameters if the changed field is within its
    /// documented range (the library's `EstimatorConfig::normalized` leaves it as is);
    /// the prior is checked against the cap only when a sleeper is built.
    fn set_estimator(&mut self, change: impl FnOnce(&mut EstimatorConfig)) -> Result<(), Error> {
        let mut next = self.estimator;
        change(&mut next);
        let probe = EstimatorConfig {
            prior_ns: 0,
            ..next
        };
        if probe.normalized() != probe {
            return Err(Error::Invalid);
        }
        self.estimator = next;
        Ok(())
    }
}

/// Runs a setter on `*options` behind the panic guard.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
unsafe fn set(options: *mut Options, f: impl FnOnce(&mut Options) -> Result<(), Error>) -> c_int {
    guard(|| {
        // SAFETY: the caller passes NULL or a live, exclusively used options object.
        let o = unsafe { options.as_mut() }.ok_or(Error::Null)?;
        f(o)
    })
}

/// New options holding the defaults (those of `sleeplab_sleeper_new`). NULL only on an
/// internal error. Free with `sleeplab_options_free`.
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_options_new() -> *mut Options {
    guard_value(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(Options::default()))
    })
}

/// Frees options (NULL is ignored). Sleepers and tickers built from them keep their own
/// copy, so the options may be freed right after building.
///
/// # Safety
/// `options` is NULL or a pointer from `sleeplab_options_new` not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_free(options: *mut Options) {
    if !options.is_null() {
        // SAFETY: the caller passes a pointer from `Box::into_raw`, freed once.
        guard_value((), || drop(unsafe { Box::from_raw(options) }));
    }
}

/// How the spin phase waits: `SLEEPLAB_SPIN_PAUSE` or `SLEEPLAB_SPIN_YIELD`.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_spin(options: *mut Options, spin: c_int) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.spin = match spin {
                SLEEPLAB_SPIN_PAUSE => SpinStrategy::Spin,
                SLEEPLAB_SPIN_YIELD => SpinStrategy::YieldSpin,
                _ => return Err(Error::Invalid),
            };
            Ok(())
        })
    }
}

/// What building does with the calling thread's timer slack:
/// `SLEEPLAB_SLACK_SET_MINIMAL` or `SLEEPLAB_SLACK_LEAVE_ALONE`.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_timer_slack(
    options: *mut Options,
    policy: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.slack = match policy {
                SLEEPLAB_SLACK_SET_MINIMAL => SlackPolicy::SetMinimal,
                SLEEPLAB_SLACK_LEAVE_ALONE => SlackPolicy::LeaveAlone,
                _ => return Err(Error::Invalid),
            };
            Ok(())
        })
    }
}

/// What building does with the calling thread's scheduler slice:
/// `SLEEPLAB_SLICE_SHORT` or `SLEEPLAB_SLICE_INHERIT`.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_sched_slice(
    options: *mut Options,
    policy: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.tradeoff.slice = match policy {
                SLEEPLAB_SLICE_SHORT => SlicePolicy::Short,
                SLEEPLAB_SLICE_INHERIT => SlicePolicy::Inherit,
                _ => return Err(Error::Invalid),
            };
            Ok(())
        })
    }
}

/// The margin estimate before any data, ns (default 200 µs; at most the cap, checked
/// when a sleeper is built).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_prior_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, |o| o.set_estimator(|c| c.prior_ns = ns)) }
}

/// The largest oversleep learned and the largest margin, ns (default 50 ms; at least
/// 1). Larger native oversleeps are counted as stalls.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_cap_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, |o| o.set_estimator(|c| c.cap_ns = ns)) }
}

/// Number of recent waits in the estimator's quantile window (default 512; 1..=4096).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_window(options: *mut Options, waits: u32) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            let window = usize::try_from(waits).map_err(|_| Error::Invalid)?;
            o.set_estimator(|c| c.window = window)
        })
    }
}

/// The window quantile used as the margin's baseline (default 0.99; 0.5..=1.0, not NaN).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_quantile(options: *mut Options, q: f64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, |o| o.set_estimator(|c| c.quantile = q)) }
}

/// Waits for the margin's excess over the baseline to halve (default 8; at least 1).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_half_life(
    options: *mut Options,
    waits: u32,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, |o| o.set_estimator(|c| c.half_life = waits)) }
}

/// Added to the estimate to form the margin, ns (default 10 µs).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_headroom_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, |o| o.set_estimator(|c| c.headroom_ns = ns)) }
}

/// Lateness accepted at the quantile, ns (default 0): the margin is shortened by it, so
/// the sleeper spins only as much as needed to be within it late.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_lateness_tolerance_ns(
    options: *mut Options,
    ns: u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.tradeoff.lateness_tolerance_ns = ns;
            Ok(())
        })
    }
}

/// "Early rather than late": a sleep may return up to `ns` before its deadline instead of
/// spinning to it, never earlier (default 0: never early).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_early_tolerance_ns(
    options: *mut Options,
    ns: u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.tradeoff.early_tolerance_ns = ns;
            Ok(())
        })
    }
}

/// How much of each wait may be spun: `SLEEPLAB_BUDGET_AUTO` (the default),
/// `SLEEPLAB_BUDGET_UNLIMITED`, or `SLEEPLAB_BUDGET_PERCENT` with `percent` in 0..=100
/// (ignored for the other two).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_cpu_budget(
    options: *mut Options,
    budget: c_int,
    percent: f64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        set(options, |o| {
            o.tradeoff.cpu_budget = match budget {
                SLEEPLAB_BUDGET_AUTO => CpuBudget::Auto,
                SLEEPLAB_BUDGET_UNLIMITED => CpuBudget::Unlimited,
                SLEEPLAB_BUDGET_PERCENT if (0.0..=100.0).contains(&percent) => {
                    CpuBudget::Percent(percent)
                }
                _ => return Err(Error::Invalid),
            };
            Ok(())
        })
    }
}

/// The builder for `options`, which may be NULL (the defaults).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
pub(crate) unsafe fn builder_from(options: *const Options) -> Result<PreciseSleeperBuilder, Error> {
    // SAFETY: forwarded from the caller.
    match unsafe { options.as_ref() } {
        Some(o) => o.builder(),
        None => Options::default().builder(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{SLEEPLAB_EFAULT, SLEEPLAB_EINVAL, SLEEPLAB_OK};

    fn with_options(f: impl FnOnce(*mut Options)) {
        let o = sleeplab_options_new();
        assert!(!o.is_null());
        f(o);
        // SAFETY: `o` came from sleeplab_options_new and is freed once.
        unsafe { sleeplab_options_free(o) };
    }

    #[test]
    fn null_options_are_an_error_not_a_crash() {
        let null = std::ptr::null_mut();
        // SAFETY: NULL is an allowed argument.
        unsafe {
            assert_eq!(sleeplab_options_set_spin(null, 0), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_options_set_sched_slice(null, 0), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_options_set_quantile(null, 0.9), SLEEPLAB_EFAULT);
            assert_eq!(
                sleeplab_options_set_cpu_budget(null, SLEEPLAB_BUDGET_AUTO, 0.0),
                SLEEPLAB_EFAULT
            );
            assert_eq!(
                sleeplab_options_set_lateness_tolerance_ns(null, 1),
                SLEEPLAB_EFAULT
            );
            assert_eq!(
                sleeplab_options_set_early_tolerance_ns(null, 1),
                SLEEPLAB_EFAULT
            );
            sleeplab_options_free(null);
        }
    }

    #[test]
    fn setters_reject_bad_values_and_keep_the_old_one() {
        with_options(|o| {
            // SAFETY: `o` is live.
            unsafe {
                assert_eq!(sleeplab_options_set_spin(o, 2), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_timer_slack(o, -1), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_sched_slice(o, 2), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_quantile(o, f64::NAN), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_quantile(o, 0.2), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_quantile(o, 1.5), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_window(o, 0), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_window(o, 5000), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_half_life(o, 0), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_cap_ns(o, 0), SLEEPLAB_EINVAL);
                for (kind, pct) in [(3, 1.0), (SLEEPLAB_BUDGET_PERCENT, 100.5)] {
                    assert_eq!(
                        sleeplab_options_set_cpu_budget(o, kind, pct),
                        SLEEPLAB_EINVAL
                    );
                }
                let nan = f64::NAN;
                let code = sleeplab_options_set_cpu_budget(o, SLEEPLAB_BUDGET_PERCENT, nan);
                assert_eq!(code, SLEEPLAB_EINVAL);
                assert_eq!((*o).estimator, EstimatorConfig::default());
                assert_eq!((*o).tradeoff, Tradeoff::default());
                assert_eq!((*o).spin, SpinStrategy::Spin);
            }
        });
    }

    #[test]
    fn setters_store_good_values() {
        with_options(|o| {
            // SAFETY: `o` is live.
            unsafe {
                assert_eq!(
                    sleeplab_options_set_spin(o, SLEEPLAB_SPIN_YIELD),
                    SLEEPLAB_OK
                );
                assert_eq!(
                    sleeplab_options_set_timer_slack(o, SLEEPLAB_SLACK_LEAVE_ALONE),
                    SLEEPLAB_OK
                );
                assert_eq!(
                    sleeplab_options_set_sched_slice(o, SLEEPLAB_SLICE_INHERIT),
                    SLEEPLAB_OK
                );
                assert_eq!((*o).tradeoff.slice, SlicePolicy::Inherit);
                assert_eq!(sleeplab_options_set_quantile(o, 0.999), SLEEPLAB_OK);
                assert_eq!(sleeplab_options_set_window(o, 4096), SLEEPLAB_OK);
                assert_eq!(sleeplab_options_set_half_life(o, 8), SLEEPLAB_OK);
                assert_eq!(sleeplab_options_set_cap_ns(o, 2_000_000), SLEEPLAB_OK);
                assert_eq!(sleeplab_options_set_prior_ns(o, 1_000_000), SLEEPLAB_OK);
                assert_eq!(sleeplab_options_set_headroom_ns(o, 0), SLEEPLAB_OK);
                let expected = EstimatorConfig {
                    prior_ns: 1_000_000,
                    cap_ns: 2_000_000,
                    window: 4096,
                    quantile: 0.999,
                    half_life: 8,
                    headroom_ns: 0,
                };
                assert_eq!((*o).estimator, expected);
                let budget = |kind, pct| sleeplab_options_set_cpu_budget(o, kind, pct);
                assert_eq!(budget(SLEEPLAB_BUDGET_UNLIMITED, f64::NAN), SLEEPLAB_OK);
                assert_eq!((*o).tradeoff.cpu_budget, CpuBudget::Unlimited);
                assert_eq!(budget(SLEEPLAB_BUDGET_PERCENT, 3.0), SLEEPLAB_OK);
                assert_eq!(
                    sleeplab_options_set_lateness_tolerance_ns(o, 50),
                    SLEEPLAB_OK
                );
                assert_eq!(sleeplab_options_set_early_tolerance_ns(o, 70), SLEEPLAB_OK);
                let tradeoff = Tradeoff {
                    lateness_tolerance_ns: 50,
                    cpu_budget: CpuBudget::Percent(3.0),
                    early_tolerance_ns: 70,
                    slice: SlicePolicy::Inherit,
                    ..Tradeoff::default()
                };
                assert_eq!((*o).tradeoff, tradeoff);
                assert_eq!((*o).builder().unwrap().strategy().tradeoff(), tradeoff);
                assert_eq!((*o).spin, SpinStrategy::YieldSpin);
                assert_eq!((*o).slack, SlackPolicy::LeaveAlone);
                assert!((*o).builder().is_ok());
            }
        });
    }

    #[test]
    fn a_prior_above_the_cap_is_refused_when_building() {
        with_options(|o| {
            // SAFETY: `o` is live.
            unsafe {
                let above = EstimatorConfig::default().cap_ns + 1;
                assert_eq!(sleeplab_options_set_prior_ns(o, above), SLEEPLAB_OK);
                assert_eq!((*o).builder().unwrap_err(), Error::Invalid);
                assert_eq!(sleeplab_options_set_cap_ns(o, above), SLEEPLAB_OK);
                assert!(builder_from(o).is_ok());
            }
        });
        // SAFETY: NULL means the defaults.
        assert!(unsafe { builder_from(std::ptr::null()) }.is_ok());
    }
}
