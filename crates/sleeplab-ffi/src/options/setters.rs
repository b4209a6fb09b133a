//! Generated from the library's option table (`sleeplab_core::precise::OPTIONS`) by
//! `options::generate`; do not edit by hand: `SLEEPLAB_BLESS=1 cargo test -p sleeplab-ffi`
//! rewrites it and regenerates `include/sleeplab.h`.

use std::ffi::c_int;

use sleeplab_core::precise::OptionValue;

use super::{Options, budget_value, choice_value, set};

/// The `quantile` option: the quantile of the native oversleep the margin covers. From 0.5
/// to 1, not NaN (default 0.99).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_quantile(options: *mut Options, value: f64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "quantile", OptionValue::Number(value)) }
}

/// The `cap` option: the largest oversleep learned and the largest margin; longer native
/// oversleeps count as stalls. In ns, at least 1 (default 50000000: 50ms).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_cap_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "cap", OptionValue::Ns(ns)) }
}

/// The `window` option: recent waits in the estimator's quantile window. From 1 to 4096
/// waits (default 512).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_window(options: *mut Options, n: u32) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "window", OptionValue::Count(u64::from(n))) }
}

/// The `lateness_tolerance` option: lateness accepted at the quantile: the margin is that
/// much shorter, and each wait spins up to that much less. In ns, at least 0 (default 0:
/// 0ns).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_lateness_tolerance_ns(
    options: *mut Options,
    ns: u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "lateness_tolerance", OptionValue::Ns(ns)) }
}

/// The `cpu_budget` option: how much of each wait may be spun: auto (5 % of the wait, at
/// least 500 µs, lifted on coarse schedulers), none (up to the cap) or a percentage.
/// `SLEEPLAB_BUDGET_AUTO` (the default), `SLEEPLAB_BUDGET_UNLIMITED`, or
/// `SLEEPLAB_BUDGET_PERCENT` with `percent` from 0 to 100 (ignored by the other two).
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
    unsafe { set(options, "cpu_budget", budget_value(budget, percent)) }
}

/// The `early_tolerance` option: return up to this long before the deadline instead of
/// spinning to it, never earlier. In ns, at least 0 (default 0: 0ns).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_early_tolerance_ns(
    options: *mut Options,
    ns: u64,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "early_tolerance", OptionValue::Ns(ns)) }
}

/// `spin` pause (the default): see `sleeplab_options_set_spin`.
pub const SLEEPLAB_SPIN_PAUSE: c_int = 0;

/// `spin` yield: see `sleeplab_options_set_spin`.
pub const SLEEPLAB_SPIN_YIELD: c_int = 1;

/// The `spin` option: how the spin phase waits between clock reads: a pause instruction, or
/// sched_yield. One of `SLEEPLAB_SPIN_PAUSE` (pause, the default) or `SLEEPLAB_SPIN_YIELD`
/// (yield).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_spin(options: *mut Options, value: c_int) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "spin", choice_value(value)) }
}

/// `contention` adapt (the default): see `sleeplab_options_set_contention`.
pub const SLEEPLAB_CONTENTION_ADAPT: c_int = 0;

/// `contention` ignore: see `sleeplab_options_set_contention`.
pub const SLEEPLAB_CONTENTION_IGNORE: c_int = 1;

/// The `contention` option: adapt: shorten or stop the spin while it keeps being preempted
/// or starved; ignore: keep the margin. One of `SLEEPLAB_CONTENTION_ADAPT` (adapt, the
/// default) or `SLEEPLAB_CONTENTION_IGNORE` (ignore).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_contention(
    options: *mut Options,
    value: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "contention", choice_value(value)) }
}

/// `host` adapt (the default): see `sleeplab_options_set_host`.
pub const SLEEPLAB_HOST_ADAPT: c_int = 0;

/// `host` ignore: see `sleeplab_options_set_host`.
pub const SLEEPLAB_HOST_IGNORE: c_int = 1;

/// The `host` option: adapt: a spin the host (or, on bare metal, the hardware) keeps
/// interrupting is shortened or stopped like one the scheduler preempts, and comes back
/// when the host is quiet; ignore: only the scheduler's preemptions count. One of
/// `SLEEPLAB_HOST_ADAPT` (adapt, the default) or `SLEEPLAB_HOST_IGNORE` (ignore).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_host(options: *mut Options, value: c_int) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "host", choice_value(value)) }
}

/// `sched_slice` short (the default): see `sleeplab_options_set_sched_slice`.
pub const SLEEPLAB_SLICE_SHORT: c_int = 0;

/// `sched_slice` inherit: see `sleeplab_options_set_sched_slice`.
pub const SLEEPLAB_SLICE_INHERIT: c_int = 1;

/// The `sched_slice` option: short: ask the scheduler for a 100 µs slice on the building
/// thread, so a wakeup preempts a busy thread; inherit: leave it. One of
/// `SLEEPLAB_SLICE_SHORT` (short, the default) or `SLEEPLAB_SLICE_INHERIT` (inherit).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_sched_slice(
    options: *mut Options,
    value: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "sched_slice", choice_value(value)) }
}

/// The `prior` option: the margin's estimate before any data, at most the cap (unstated:
/// 200 µs or the cap, whichever is less). In ns, at least 0 (default 200000: 200us).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_prior_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "prior", OptionValue::Ns(ns)) }
}

/// The `half_life` option: waits for the margin's excess over the baseline to halve. From 1
/// to 4294967295 waits (default 8).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_half_life(options: *mut Options, n: u32) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "half_life", OptionValue::Count(u64::from(n))) }
}

/// The `headroom` option: added to the estimate to form the margin (the clock reads and
/// wakeup path the oversleep does not see). In ns, at least 0 (default 10000: 10us).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_headroom_ns(options: *mut Options, ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "headroom", OptionValue::Ns(ns)) }
}

/// `timer_slack` minimal (the default): see `sleeplab_options_set_timer_slack`.
pub const SLEEPLAB_SLACK_SET_MINIMAL: c_int = 0;

/// `timer_slack` leave: see `sleeplab_options_set_timer_slack`.
pub const SLEEPLAB_SLACK_LEAVE_ALONE: c_int = 1;

/// The `timer_slack` option: minimal: set the building thread's timer slack to 1 ns; leave:
/// do not touch it. One of `SLEEPLAB_SLACK_SET_MINIMAL` (minimal, the default) or
/// `SLEEPLAB_SLACK_LEAVE_ALONE` (leave).
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_options_set_timer_slack(
    options: *mut Options,
    value: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set(options, "timer_slack", choice_value(value)) }
}

/// Calls the setter of option `name` with `value` in its C form; `None` for a value of
/// another kind or one C cannot express. For the tests that walk the table.
///
/// # Safety
/// `options` is NULL or a live pointer from `sleeplab_options_new`.
#[cfg(test)]
pub(super) unsafe fn call_setter(
    options: *mut Options,
    name: &str,
    value: OptionValue,
) -> Option<c_int> {
    // SAFETY: forwarded from the caller.
    match (name, value) {
        ("quantile", OptionValue::Number(v)) => {
            Some(unsafe { sleeplab_options_set_quantile(options, v) })
        }
        ("cap", OptionValue::Ns(v)) => Some(unsafe { sleeplab_options_set_cap_ns(options, v) }),
        ("window", OptionValue::Count(v)) => {
            Some(unsafe { sleeplab_options_set_window(options, u32::try_from(v).ok()?) })
        }
        ("lateness_tolerance", OptionValue::Ns(v)) => {
            Some(unsafe { sleeplab_options_set_lateness_tolerance_ns(options, v) })
        }
        ("cpu_budget", OptionValue::Budget(v)) => {
            let v = super::tests::c_budget(v);
            Some(unsafe { sleeplab_options_set_cpu_budget(options, v.0, v.1) })
        }
        ("early_tolerance", OptionValue::Ns(v)) => {
            Some(unsafe { sleeplab_options_set_early_tolerance_ns(options, v) })
        }
        ("spin", OptionValue::Choice(v)) => {
            Some(unsafe { sleeplab_options_set_spin(options, c_int::try_from(v).ok()?) })
        }
        ("contention", OptionValue::Choice(v)) => {
            Some(unsafe { sleeplab_options_set_contention(options, c_int::try_from(v).ok()?) })
        }
        ("host", OptionValue::Choice(v)) => {
            Some(unsafe { sleeplab_options_set_host(options, c_int::try_from(v).ok()?) })
        }
        ("sched_slice", OptionValue::Choice(v)) => {
            Some(unsafe { sleeplab_options_set_sched_slice(options, c_int::try_from(v).ok()?) })
        }
        ("prior", OptionValue::Ns(v)) => Some(unsafe { sleeplab_options_set_prior_ns(options, v) }),
        ("half_life", OptionValue::Count(v)) => {
            Some(unsafe { sleeplab_options_set_half_life(options, u32::try_from(v).ok()?) })
        }
        ("headroom", OptionValue::Ns(v)) => {
            Some(unsafe { sleeplab_options_set_headroom_ns(options, v) })
        }
        ("timer_slack", OptionValue::Choice(v)) => {
            Some(unsafe { sleeplab_options_set_timer_slack(options, c_int::try_from(v).ok()?) })
        }
        _ => None,
    }
}
