//! `sleeplab_sleeper`: the precise sleeper, one-shot sleeps on `CLOCK_MONOTONIC`.

use std::ffi::c_int;

use sleeplab_core::clock::monotonic_ns;
use sleeplab_core::precise::{PreciseSleeper, SleepReport};

use crate::error::{Error, guard, guard_value};
use crate::handle::{Owned, ThreadOwner, free, into_out, read_into, with_mut};
use crate::options::{Options, builder_from};
use crate::types::{Budget, Report, Stats};

/// A precise sleeper (opaque). Belongs to the thread that created it.
#[derive(Debug)]
pub struct Sleeper {
    owner: ThreadOwner,
    inner: PreciseSleeper,
    last: Option<SleepReport>,
}

impl Owned for Sleeper {
    const NAME: &'static str = "sleeplab_sleeper";
    fn owner(&self) -> ThreadOwner {
        self.owner
    }
}

impl Sleeper {
    fn sleep_until(&mut self, deadline: u64) {
        self.last = Some(self.inner.sleep_until_ns(deadline));
    }
}

/// The current `CLOCK_MONOTONIC` time in nanoseconds: the time line of every deadline
/// and timestamp in this library.
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_now_ns() -> u64 {
    guard_value(0, monotonic_ns)
}

/// A sleeper with the default options; sets the calling thread's timer slack to 1 ns.
/// NULL only on an internal error. Free with `sleeplab_sleeper_free`.
#[unsafe(no_mangle)]
pub extern "C" fn sleeplab_sleeper_new() -> *mut Sleeper {
    let mut out = std::ptr::null_mut();
    // SAFETY: NULL options mean the defaults; `out` is a local.
    match unsafe { sleeplab_sleeper_new_with(std::ptr::null(), &mut out) } {
        0 => out,
        _ => std::ptr::null_mut(),
    }
}

/// A sleeper with `options` (NULL: the defaults), written to `*out`. Returns 0, or
/// `SLEEPLAB_EFAULT` (`out` NULL), `SLEEPLAB_EINVAL` (inconsistent options: the prior
/// above the cap). Applies the timer-slack option to the calling thread, which owns
/// the sleeper.
///
/// # Safety
/// `options` is NULL or live options; `out` is NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_new_with(
    options: *const Options,
    out: *mut *mut Sleeper,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Error::Null);
        }
        // SAFETY: forwarded from the caller.
        let builder = unsafe { builder_from(options) }?;
        let sleeper = Sleeper {
            owner: ThreadOwner::current(),
            inner: builder.build()?,
            last: None,
        };
        // SAFETY: `out` is non-null and writable (the caller's contract).
        unsafe { into_out(sleeper, out) }
    })
}

/// Frees a sleeper (NULL is ignored). Any thread may free it while no call on it runs.
///
/// # Safety
/// `sleeper` is NULL or a sleeper from this library not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_free(sleeper: *mut Sleeper) {
    // SAFETY: forwarded from the caller.
    unsafe { free(sleeper) }
}

/// Sleeps `ns` nanoseconds from now, precisely: a native sleep to the deadline minus the
/// learned margin, then a spin. Never returns early, signals or not (an interrupted
/// native sleep is resumed toward the same deadline). Returns 0, or `SLEEPLAB_EFAULT`,
/// `SLEEPLAB_EPERM` (not the owner thread), `SLEEPLAB_ERANGE` (now + ns overflows).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleep_ns(sleeper: *mut Sleeper, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(sleeper, |s| {
            let deadline = s.inner.now_ns().checked_add(ns).ok_or_else(|| {
                Error::Range(format!(
                    "sleep length is too large: now + {ns} ns does not fit in 64 bits"
                ))
            })?;
            s.sleep_until(deadline);
            Ok(())
        })
    }
}

/// Sleeps until `deadline_ns` on `CLOCK_MONOTONIC` (see `sleeplab_now_ns`); a deadline
/// in the past returns at once. Never returns early. Returns 0, or `SLEEPLAB_EFAULT`,
/// `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleep_until_ns(sleeper: *mut Sleeper, deadline_ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(sleeper, |s| {
            s.sleep_until(deadline_ns);
            Ok(())
        })
    }
}

/// Writes the report of the sleeper's last sleep to `*out`. Returns 0, or
/// `SLEEPLAB_ENODATA` (it never slept), `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_last_report(
    sleeper: *const Sleeper,
    out: *mut Report,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_into(sleeper, out, |s| {
            s.last
                .map(Report::from)
                .ok_or(Error::NoData("no report yet: the sleeper has not slept"))
        })
    }
}

/// Writes the running statistics to `*out`. Returns 0, or `SLEEPLAB_EFAULT`,
/// `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_stats(sleeper: *const Sleeper, out: *mut Stats) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { read_into(sleeper, out, |s| Ok(s.inner.stats().into())) }
}

/// Writes whether the CPU budget covers the tail of this machine's wakeups to `*out`:
/// the sleeps it cut short of what the learned quantile called for, the largest margin
/// they wanted and the budget that would have covered it. Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_budget(
    sleeper: *const Sleeper,
    out: *mut Budget,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { read_into(sleeper, out, |s| Ok(budget_of(&s.inner))) }
}

/// The budget view of `sleeper`.
pub(crate) fn budget_of(sleeper: &PreciseSleeper) -> Budget {
    let wanted = sleeper
        .estimator()
        .margin_ns()
        .saturating_sub(sleeper.tradeoff().lateness_tolerance_ns);
    Budget::of(sleeper.stats(), wanted)
}

/// Clears the running statistics (the learned margin is kept). Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_reset_stats(sleeper: *mut Sleeper) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(sleeper, |s| {
            s.inner.reset_stats();
            Ok(())
        })
    }
}

/// Writes the learned margin the next sleep will spin, ns, to `*out`. Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_margin_ns(
    sleeper: *const Sleeper,
    out: *mut u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { read_into(sleeper, out, |s| Ok(s.inner.margin_ns())) }
}

/// Writes the owner thread's timer slack read when the sleeper was built, ns, to `*out`.
/// Returns 0, or `SLEEPLAB_ENODATA` (not known), `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_sleeper_timer_slack_ns(
    sleeper: *const Sleeper,
    out: *mut u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_into(sleeper, out, |s| {
            s.inner
                .timer_slack_ns()
                .ok_or(Error::NoData("the timer slack could not be read"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::tests::last_error;
    use crate::error::{SLEEPLAB_EFAULT, SLEEPLAB_EINVAL, SLEEPLAB_ENODATA, SLEEPLAB_EPERM};
    use crate::error::{SLEEPLAB_ERANGE, SLEEPLAB_OK};
    use crate::options::{sleeplab_options_free, sleeplab_options_new};
    use crate::options::{sleeplab_options_set_cap_ns, sleeplab_options_set_prior_ns};

    #[test]
    fn a_budget_too_small_for_the_margin_says_so() {
        use crate::options::sleeplab_options_set_cpu_budget;
        // SAFETY: every pointer is live and owned by this thread.
        unsafe {
            let o = sleeplab_options_new();
            // 0.1 % of a 2 ms sleep is 2 µs, far below the 210 µs the prior calls for.
            assert_eq!(
                sleeplab_options_set_cpu_budget(o, crate::options::SLEEPLAB_BUDGET_PERCENT, 0.1),
                SLEEPLAB_OK
            );
            let mut s = std::ptr::null_mut();
            assert_eq!(sleeplab_sleeper_new_with(o, &mut s), SLEEPLAB_OK);
            sleeplab_options_free(o);
            let mut b = Budget::default();
            assert_eq!(sleeplab_sleeper_budget(s, &mut b), SLEEPLAB_OK);
            assert_eq!((b.limited_sleeps, b.wanted_percent), (0, 0.0));
            for _ in 0..3 {
                assert_eq!(sleeplab_sleep_ns(s, 2_000_000), SLEEPLAB_OK);
            }
            assert_eq!(sleeplab_sleeper_budget(s, &mut b), SLEEPLAB_OK);
            assert_eq!(b.limited_sleeps, 3);
            assert!(b.wanted_margin_ns >= 200_000, "{b:?}");
            assert!((1_990_000..=2_000_000).contains(&b.wanted_wait_ns), "{b:?}");
            assert!(b.wanted_percent > 10.0, "{b:?}");
            assert!(b.quantile_margin_ns > 0);
            assert_eq!(
                sleeplab_sleeper_budget(s, std::ptr::null_mut()),
                SLEEPLAB_EFAULT
            );
            sleeplab_sleeper_free(s);
        }
    }

    #[test]
    fn sleeps_are_never_early_and_counted() {
        let s = sleeplab_sleeper_new();
        assert!(!s.is_null());
        // SAFETY: `s` is live and owned by this thread.
        unsafe {
            let mut report = Report::default();
            assert_eq!(
                sleeplab_sleeper_last_report(s, &mut report),
                SLEEPLAB_ENODATA
            );
            for i in 0..20u64 {
                let before = sleeplab_now_ns();
                let ns = (i % 5) * 300_000;
                assert_eq!(sleeplab_sleep_ns(s, ns), SLEEPLAB_OK);
                assert!(sleeplab_now_ns() >= before + ns);
                assert_eq!(sleeplab_sleeper_last_report(s, &mut report), SLEEPLAB_OK);
                assert!(report.woke_ns >= report.deadline_ns);
                assert!(report.deadline_ns >= before + ns);
                assert_eq!(report.woke_ns - report.deadline_ns, report.lateness_ns);
                assert_eq!(
                    report.native_ns + report.spin_ns,
                    report.woke_ns - report.start_ns
                );
            }
            let deadline = sleeplab_now_ns() + 1_000_000;
            assert_eq!(sleeplab_sleep_until_ns(s, deadline), SLEEPLAB_OK);
            assert!(sleeplab_now_ns() >= deadline);
            // A deadline in the past returns at once, and still counts.
            assert_eq!(sleeplab_sleep_until_ns(s, 0), SLEEPLAB_OK);

            let mut stats = Stats::default();
            assert_eq!(sleeplab_sleeper_stats(s, &mut stats), SLEEPLAB_OK);
            assert_eq!(stats.count, 22);
            assert!(stats.max_lateness_ns as f64 >= stats.mean_lateness_ns);
            let mut margin = 0;
            assert_eq!(sleeplab_sleeper_margin_ns(s, &mut margin), SLEEPLAB_OK);
            assert!(margin > 0);
            let mut slack = 0;
            assert_eq!(sleeplab_sleeper_timer_slack_ns(s, &mut slack), SLEEPLAB_OK);
            assert_eq!(sleeplab_sleeper_reset_stats(s), SLEEPLAB_OK);
            assert_eq!(sleeplab_sleeper_stats(s, &mut stats), SLEEPLAB_OK);
            assert_eq!(stats.count, 0);
            sleeplab_sleeper_free(s);
        }
    }

    #[test]
    fn bad_arguments_return_codes() {
        let null = std::ptr::null_mut::<Sleeper>();
        let s = sleeplab_sleeper_new();
        // SAFETY: NULL and live pointers only.
        unsafe {
            assert_eq!(sleeplab_sleep_ns(null, 1), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_sleep_until_ns(null, 1), SLEEPLAB_EFAULT);
            assert_eq!(
                sleeplab_sleeper_stats(null, &mut Stats::default()),
                SLEEPLAB_EFAULT
            );
            assert_eq!(
                sleeplab_sleeper_stats(s, std::ptr::null_mut()),
                SLEEPLAB_EFAULT
            );
            assert_eq!(
                sleeplab_sleeper_margin_ns(s, std::ptr::null_mut()),
                SLEEPLAB_EFAULT
            );
            assert_eq!(sleeplab_sleeper_reset_stats(null), SLEEPLAB_EFAULT);
            assert_eq!(sleeplab_sleep_ns(s, u64::MAX), SLEEPLAB_ERANGE);
            assert_eq!(
                last_error(),
                "sleep length is too large: now + 18446744073709551615 ns does not fit in 64 bits"
            );
            let mut report = Report::default();
            assert_eq!(
                sleeplab_sleeper_last_report(s, &mut report),
                SLEEPLAB_ENODATA
            );
            assert_eq!(last_error(), "no report yet: the sleeper has not slept");
            assert_eq!(
                sleeplab_sleeper_new_with(std::ptr::null(), std::ptr::null_mut()),
                SLEEPLAB_EFAULT
            );
            let o = sleeplab_options_new();
            assert_eq!(sleeplab_options_set_cap_ns(o, 1000), SLEEPLAB_OK);
            assert_eq!(sleeplab_options_set_prior_ns(o, 2000), SLEEPLAB_OK);
            let mut built = std::ptr::null_mut();
            assert_eq!(sleeplab_sleeper_new_with(o, &mut built), SLEEPLAB_EINVAL);
            assert!(built.is_null());
            assert_eq!(
                last_error(),
                "prior 2us is above the cap 1us: the estimate before any data is at most \
                 the largest margin"
            );
            sleeplab_options_free(o);
            sleeplab_sleeper_free(s);
            sleeplab_sleeper_free(null);
        }
    }

    #[test]
    fn a_sleeper_belongs_to_its_thread() {
        let addr = sleeplab_sleeper_new() as usize;
        let (code, words) = std::thread::spawn(move || {
            // SAFETY: the sleeper is live; its owner does not use it meanwhile.
            let code = unsafe { sleeplab_sleep_ns(addr as *mut Sleeper, 1000) };
            (code, last_error())
        })
        .join()
        .unwrap();
        assert_eq!(code, SLEEPLAB_EPERM);
        assert_eq!(
            words,
            "the object belongs to another thread: a sleeplab_sleeper is used only from the \
             thread that created it"
        );
        // SAFETY: freed once, from the owner.
        unsafe { sleeplab_sleeper_free(addr as *mut Sleeper) };
    }
}
