//! `sleeplab_options`: the options of the library's `PreciseSleeperBuilder`, set one by
//! one through functions so that new options never change a struct layout.
//!
//! The setters are generated from the library's option table
//! (`sleeplab_core::precise::OPTIONS`): [`setters`] is written by [`generate`] (a test
//! fails when it is stale; `SLEEPLAB_BLESS=1 cargo test -p sleeplab-ffi --lib` rewrites
//! it), one `sleeplab_options_set_<name>` per option (`_ns` for durations), each
//! handing its typed argument to the table, which checks it as it does for every other
//! surface. A new option in the table is a new setter after a bless (and a line in
//! [`CHOICE_NAMES`] for a choice).

use std::ffi::c_int;

use sleeplab_core::precise::{CpuBudget, OptionValue, PreciseSleeperBuilder};

use crate::error::{Error, guard, guard_value};

#[cfg(test)]
mod generate;
mod setters;

pub use setters::*;

/// The C constants of each choice option's words, in the table's order: each one's
/// value is its word's index, which is what the table's choice setters take (read by
/// [`generate`], which writes the constants).
#[cfg(test)]
pub(crate) const CHOICE_NAMES: &[(&str, &[&str])] = &[
    ("spin", &["SLEEPLAB_SPIN_PAUSE", "SLEEPLAB_SPIN_YIELD"]),
    (
        "contention",
        &["SLEEPLAB_CONTENTION_ADAPT", "SLEEPLAB_CONTENTION_IGNORE"],
    ),
    ("host", &["SLEEPLAB_HOST_ADAPT", "SLEEPLAB_HOST_IGNORE"]),
    (
        "sched_slice",
        &["SLEEPLAB_SLICE_SHORT", "SLEEPLAB_SLICE_INHERIT"],
    ),
    (
        "timer_slack",
        &["SLEEPLAB_SLACK_SET_MINIMAL", "SLEEPLAB_SLACK_LEAVE_ALONE"],
    ),
];

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
pub struct Options(PreciseSleeperBuilder);

impl Options {
    /// The library builder these options describe, or [`Error::Option`] when they do
    /// not go together (a prior above the cap).
    pub(crate) fn builder(&self) -> Result<PreciseSleeperBuilder, Error> {
        self.0.validate()?;
        Ok(self.0)
    }
}

/// Sets option `name` of `*options` to `value` behind the panic guard: the table checks
/// it (`SLEEPLAB_EINVAL` and nothing changed when it is out of range; the table's words
/// become the last error).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
unsafe fn set(options: *mut Options, name: &str, value: OptionValue) -> c_int {
    guard(|| {
        // SAFETY: the caller passes NULL or a live, exclusively used options object.
        let o = unsafe { options.as_mut() }.ok_or(Error::Null)?;
        Ok(o.0.set(name, value)?)
    })
}

/// A choice setter's argument: the index of a word (a negative one is no word).
fn choice_value(value: c_int) -> OptionValue {
    OptionValue::Choice(usize::try_from(value).unwrap_or(usize::MAX))
}

/// `sleeplab_options_set_cpu_budget`'s arguments: one of `SLEEPLAB_BUDGET_*`, and the
/// percentage for `SLEEPLAB_BUDGET_PERCENT` (ignored otherwise). An unknown kind is a
/// percentage no budget has (refused by the table).
fn budget_value(kind: c_int, percent: f64) -> OptionValue {
    OptionValue::Budget(match kind {
        SLEEPLAB_BUDGET_AUTO => CpuBudget::Auto,
        SLEEPLAB_BUDGET_UNLIMITED => CpuBudget::Unlimited,
        SLEEPLAB_BUDGET_PERCENT => CpuBudget::Percent(percent),
        _ => CpuBudget::Percent(f64::NAN),
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
pub(crate) mod tests {
    use super::*;
    use crate::error::tests::last_error;
    use crate::error::{SLEEPLAB_EFAULT, SLEEPLAB_EINVAL, SLEEPLAB_OK};
    use sleeplab_core::lab::option_samples;
    use sleeplab_core::precise::{
        ContentionPolicy, EstimatorConfig, OPTIONS, SlackPolicy, SlicePolicy, SpinStrategy,
        Tradeoff,
    };

    /// A budget in the C form of `sleeplab_options_set_cpu_budget`.
    pub(crate) fn c_budget(b: CpuBudget) -> (c_int, f64) {
        match b {
            CpuBudget::Auto => (SLEEPLAB_BUDGET_AUTO, 0.0),
            CpuBudget::Unlimited => (SLEEPLAB_BUDGET_UNLIMITED, 0.0),
            CpuBudget::Percent(p) => (SLEEPLAB_BUDGET_PERCENT, p),
        }
    }

    fn with_options(f: impl FnOnce(*mut Options)) {
        let o = sleeplab_options_new();
        assert!(!o.is_null());
        f(o);
        // SAFETY: `o` came from sleeplab_options_new and is freed once.
        unsafe { sleeplab_options_free(o) };
    }

    /// The resolved estimator parameters, trade-off and spin of `o`.
    ///
    /// # Safety
    /// `o` is live.
    unsafe fn state(o: *mut Options) -> (EstimatorConfig, Tradeoff, SpinStrategy) {
        // SAFETY: forwarded from the caller.
        let s = unsafe { (*o).0 }.strategy();
        (*s.estimator().config(), s.tradeoff(), s.spin_strategy())
    }

    /// The C setters accept and refuse what every other surface of the option table
    /// does: each option's samples (the ends of its range, the values beyond them),
    /// through the generated C functions; a refusal changes nothing.
    #[test]
    fn every_option_accepts_and_refuses_what_the_table_does() {
        let mut walked = 0;
        for option in OPTIONS {
            for sample in option_samples(option) {
                let Some(value) = sample.value else { continue };
                with_options(|o| {
                    // SAFETY: `o` is live.
                    let Some(code) = (unsafe { call_setter(o, option.name, value) }) else {
                        // C's own type cannot hold it (a count beyond u32): refused there.
                        assert!(!sample.ok, "{}={}", option.name, sample.text);
                        return;
                    };
                    let expected = if sample.ok {
                        SLEEPLAB_OK
                    } else {
                        SLEEPLAB_EINVAL
                    };
                    assert_eq!(code, expected, "{}={}", option.name, sample.text);
                    // SAFETY: `o` is live.
                    let now = unsafe { (*o).0 };
                    if sample.ok {
                        assert_eq!(now.get(option.name), Ok(value), "{}", option.name);
                    } else {
                        assert_eq!(now, PreciseSleeperBuilder::default(), "{}", option.name);
                        // The last error is the table's words for the value (Python's).
                        let refusal = option.check(value).unwrap_err().to_string();
                        assert_eq!(last_error(), refusal, "{}={}", option.name, sample.text);
                        assert!(refusal.contains(option.name), "{refusal}");
                    }
                    walked += 1;
                });
            }
        }
        assert!(walked >= 3 * OPTIONS.len(), "{walked}");
        with_options(|o| {
            // SAFETY: `o` is live.
            unsafe {
                assert_eq!(sleeplab_options_set_spin(o, -1), SLEEPLAB_EINVAL);
                assert_eq!(sleeplab_options_set_contention(o, 2), SLEEPLAB_EINVAL);
                let code = sleeplab_options_set_contention(o, SLEEPLAB_CONTENTION_IGNORE);
                assert_eq!(code, SLEEPLAB_OK);
                assert_eq!(state(o).1.contention, ContentionPolicy::Ignore);
            }
        });
    }

    #[test]
    fn choice_constants_are_their_words_indices() {
        for (name, value, word) in [
            ("spin", SLEEPLAB_SPIN_PAUSE, "pause"),
            ("spin", SLEEPLAB_SPIN_YIELD, "yield"),
            ("contention", SLEEPLAB_CONTENTION_ADAPT, "adapt"),
            ("contention", SLEEPLAB_CONTENTION_IGNORE, "ignore"),
            ("sched_slice", SLEEPLAB_SLICE_SHORT, "short"),
            ("sched_slice", SLEEPLAB_SLICE_INHERIT, "inherit"),
            ("timer_slack", SLEEPLAB_SLACK_SET_MINIMAL, "minimal"),
            ("timer_slack", SLEEPLAB_SLACK_LEAVE_ALONE, "leave"),
        ] {
            let option = sleeplab_core::precise::SleeperOption::named(name).unwrap();
            assert_eq!(option.parse(word), Ok(choice_value(value)), "{name}={word}");
        }
    }

    #[test]
    fn null_options_are_an_error_not_a_crash() {
        let null = std::ptr::null_mut();
        // SAFETY: NULL is an allowed argument.
        unsafe {
            assert_eq!(sleeplab_options_set_spin(null, 0), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_options_set_sched_slice(null, 0), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_options_set_contention(null, 0), SLEEPLAB_EFAULT);
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
                let (estimator, tradeoff, spin) = state(o);
                assert_eq!(estimator, EstimatorConfig::default());
                assert_eq!(tradeoff, Tradeoff::default());
                assert_eq!(spin, SpinStrategy::Spin);
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
                assert_eq!(state(o).1.slice, SlicePolicy::Inherit);
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
                assert_eq!(state(o).0, expected);
                let budget = |kind, pct| sleeplab_options_set_cpu_budget(o, kind, pct);
                assert_eq!(budget(SLEEPLAB_BUDGET_UNLIMITED, f64::NAN), SLEEPLAB_OK);
                assert_eq!(state(o).1.cpu_budget, CpuBudget::Unlimited);
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
                assert_eq!(state(o).1, tradeoff);
                assert_eq!((*o).builder().unwrap().strategy().tradeoff(), tradeoff);
                assert_eq!(state(o).2, SpinStrategy::YieldSpin);
                assert_eq!(
                    (*o).0.get("timer_slack"),
                    Ok(OptionValue::Choice(1)),
                    "{:?}",
                    SlackPolicy::LeaveAlone
                );
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
                let e = (*o).builder().unwrap_err();
                assert_eq!(e.code(), SLEEPLAB_EINVAL);
                assert_eq!(
                    e.to_string(),
                    "prior 50000001ns is above the cap 50ms: the estimate before any data \
                     is at most the largest margin"
                );
                assert_eq!(sleeplab_options_set_cap_ns(o, above), SLEEPLAB_OK);
                assert!(builder_from(o).is_ok());
            }
        });
        // A cap below the default prior alone is fine: the unstated prior follows it.
        with_options(|o| {
            // SAFETY: `o` is live.
            unsafe {
                assert_eq!(sleeplab_options_set_cap_ns(o, 100_000), SLEEPLAB_OK);
                let b = builder_from(o).unwrap();
                assert_eq!(b.strategy().estimator().config().prior_ns, 100_000);
            }
        });
        // SAFETY: NULL means the defaults.
        assert!(unsafe { builder_from(std::ptr::null()) }.is_ok());
    }
}
