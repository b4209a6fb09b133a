//! `sleeplab_ticker`: a drift-free periodic schedule `start + k·period` on a precise
//! sleeper, with tokio's missed-tick behaviours.

use std::ffi::c_int;

use sleeplab_core::precise::{MissedTickBehavior, Ticker as CoreTicker};

use crate::error::{Error, guard};
use crate::handle::{Owned, ThreadOwner, free, into_out, read_into, with_mut};
use crate::options::{Options, builder_from};
use crate::types::{Budget, Stats, Tick, TickerState};

/// Missed ticks fire at once, one per call, until caught up; the grid is kept.
pub const SLEEPLAB_MISSED_BURST: c_int = 0;
/// After a late tick the schedule restarts from it: next = now + period.
pub const SLEEPLAB_MISSED_DELAY: c_int = 1;
/// Missed ticks are dropped: next = the first grid instant after now.
pub const SLEEPLAB_MISSED_SKIP: c_int = 2;
/// The default missed-tick behaviour, the one for a frame loop: `SLEEPLAB_MISSED_SKIP`
/// (drop the missed ticks, keep the grid), unlike tokio, whose default is Burst. The
/// Python binding's `Ticker` defaults to it too.
pub const SLEEPLAB_MISSED_DEFAULT: c_int = SLEEPLAB_MISSED_SKIP;

fn behavior_from(code: c_int) -> Result<MissedTickBehavior, Error> {
    match code {
        SLEEPLAB_MISSED_BURST => Ok(MissedTickBehavior::Burst),
        SLEEPLAB_MISSED_DELAY => Ok(MissedTickBehavior::Delay),
        SLEEPLAB_MISSED_SKIP => Ok(MissedTickBehavior::Skip),
        other => Err(Error::Invalid(format!(
            "missed must be SLEEPLAB_MISSED_BURST ({SLEEPLAB_MISSED_BURST}), \
             SLEEPLAB_MISSED_DELAY ({SLEEPLAB_MISSED_DELAY}) or SLEEPLAB_MISSED_SKIP \
             ({SLEEPLAB_MISSED_SKIP}), got {other}"
        ))),
    }
}

fn behavior_code(b: MissedTickBehavior) -> c_int {
    match b {
        MissedTickBehavior::Burst => SLEEPLAB_MISSED_BURST,
        MissedTickBehavior::Delay => SLEEPLAB_MISSED_DELAY,
        MissedTickBehavior::Skip => SLEEPLAB_MISSED_SKIP,
    }
}

/// A periodic ticker (opaque). Belongs to the thread that created it.
#[derive(Debug)]
pub struct Ticker {
    owner: ThreadOwner,
    inner: CoreTicker,
}

impl Owned for Ticker {
    const NAME: &'static str = "sleeplab_ticker";
    fn owner(&self) -> ThreadOwner {
        self.owner
    }
}

/// A ticker whose tick `k` is due at `now + k·period_ns` (the first one at once), with
/// the missed-tick behaviour `missed` (`SLEEPLAB_MISSED_*`; `SLEEPLAB_MISSED_DEFAULT` is
/// `SLEEPLAB_MISSED_SKIP`, unlike tokio, whose default is Burst) and a sleeper built from
/// `options` (NULL: the defaults), written to `*out`. Returns 0, or `SLEEPLAB_EFAULT`
/// (`out` NULL), `SLEEPLAB_EINVAL` (period 0, unknown behaviour, inconsistent options).
///
/// # Safety
/// `options` is NULL or live options; `out` is NULL or valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_new(
    options: *const Options,
    period_ns: u64,
    missed: c_int,
    out: *mut *mut Ticker,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(Error::Null);
        }
        let behavior = behavior_from(missed)?;
        if period_ns == 0 {
            return Err(Error::Invalid("period_ns must be positive, got 0".into()));
        }
        // SAFETY: forwarded from the caller.
        let builder = unsafe { builder_from(options) }?;
        let mut sleeper = builder.build()?;
        let start = sleeper.now_ns();
        let inner = CoreTicker::with_sleeper_at_ns(sleeper, start, period_ns)
            .with_missed_tick_behavior(behavior);
        let ticker = Ticker {
            owner: ThreadOwner::current(),
            inner,
        };
        // SAFETY: `out` is non-null and writable (the caller's contract).
        unsafe { into_out(ticker, out) }
    })
}

/// Frees a ticker (NULL is ignored). Any thread may free it while no call on it runs.
///
/// # Safety
/// `ticker` is NULL or a ticker from this library not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_free(ticker: *mut Ticker) {
    // SAFETY: forwarded from the caller.
    unsafe { free(ticker) }
}

/// Waits for the next tick (never returns before it is due) and writes it to `*out` if
/// `out` is not NULL. Returns 0, or `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_tick(ticker: *mut Ticker, out: *mut Tick) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(ticker, |t| {
            let tick = Tick::from(t.inner.tick());
            if !out.is_null() {
                // SAFETY: non-null and writable (the caller's contract).
                out.write(tick);
            }
            Ok(())
        })
    }
}

/// Restarts the grid: tick `k`, counting from the next call, is due at
/// `start_ns + k·period`. Tick and missed counts are kept. Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_reset_at_ns(ticker: *mut Ticker, start_ns: u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(ticker, |t| {
            t.inner.reset_at_ns(start_ns);
            Ok(())
        })
    }
}

/// Changes the missed-tick behaviour (`SLEEPLAB_MISSED_*`). Returns 0, or
/// `SLEEPLAB_EINVAL`, `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_set_missed(ticker: *mut Ticker, missed: c_int) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_mut(ticker, |t| {
            t.inner.set_missed_tick_behavior(behavior_from(missed)?);
            Ok(())
        })
    }
}

/// Writes where the ticker stands (period, grid origin, next deadline, counts) to
/// `*out`. Returns 0, or `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_get_state(
    ticker: *const Ticker,
    out: *mut TickerState,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_into(ticker, out, |t| {
            let i = &t.inner;
            Ok(TickerState {
                period_ns: i.period_ns(),
                start_ns: i.start_ns(),
                next_ns: i.next_scheduled_ns(),
                ticks: i.ticks(),
                missed_ticks: i.missed_ticks(),
                missed_behavior: behavior_code(i.missed_tick_behavior()),
            })
        })
    }
}

/// Writes the running statistics of the ticker's sleeper to `*out`. Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_stats(ticker: *const Ticker, out: *mut Stats) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { read_into(ticker, out, |t| Ok(t.inner.sleeper().stats().into())) }
}

/// Writes whether the CPU budget of the ticker's sleeper covers the tail of this
/// machine's wakeups to `*out` (see `sleeplab_sleeper_budget`). Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_budget(ticker: *const Ticker, out: *mut Budget) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        read_into(ticker, out, |t| {
            Ok(crate::sleeper::budget_of(t.inner.sleeper()))
        })
    }
}

/// Writes the learned margin of the ticker's sleeper, ns, to `*out`. Returns 0, or
/// `SLEEPLAB_EFAULT`, `SLEEPLAB_EPERM`.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `out` is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sleeplab_ticker_margin_ns(ticker: *const Ticker, out: *mut u64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { read_into(ticker, out, |t| Ok(t.inner.sleeper().margin_ns())) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::tests::last_error;
    use crate::error::{SLEEPLAB_EFAULT, SLEEPLAB_EINVAL, SLEEPLAB_OK};
    use crate::sleeper::sleeplab_now_ns;

    fn new_ticker(period_ns: u64, missed: c_int) -> *mut Ticker {
        let mut t = std::ptr::null_mut();
        // SAFETY: NULL options are the defaults; `t` is a local.
        let code = unsafe { sleeplab_ticker_new(std::ptr::null(), period_ns, missed, &mut t) };
        assert_eq!(code, SLEEPLAB_OK);
        t
    }

    #[test]
    fn ticks_lie_on_the_grid_and_are_never_early() {
        let t = new_ticker(1_000_000, SLEEPLAB_MISSED_SKIP);
        // SAFETY: `t` is live and owned by this thread.
        unsafe {
            let mut state = TickerState::default();
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            let start = state.start_ns;
            let mut tick = Tick::default();
            for k in 0..10 {
                assert_eq!(sleeplab_ticker_tick(t, &mut tick), SLEEPLAB_OK);
                assert_eq!(tick.index, k);
                assert!(sleeplab_now_ns() >= tick.scheduled_ns);
                assert!(tick.woke_ns >= tick.scheduled_ns);
                assert_eq!((tick.scheduled_ns - start) % 1_000_000, 0);
                assert_eq!(tick.lateness_ns, tick.woke_ns - tick.scheduled_ns);
            }
            assert_eq!(sleeplab_ticker_tick(t, std::ptr::null_mut()), SLEEPLAB_OK);
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            assert_eq!(state.ticks, 11);
            assert_eq!(state.missed_behavior, SLEEPLAB_MISSED_SKIP);
            let mut stats = Stats::default();
            assert_eq!(sleeplab_ticker_stats(t, &mut stats), SLEEPLAB_OK);
            assert_eq!(stats.count, 11);
            let mut margin = 0;
            assert_eq!(sleeplab_ticker_margin_ns(t, &mut margin), SLEEPLAB_OK);
            sleeplab_ticker_free(t);
        }
    }

    #[test]
    fn the_default_skips_missed_ticks_and_keeps_the_grid() {
        assert_eq!(SLEEPLAB_MISSED_DEFAULT, SLEEPLAB_MISSED_SKIP);
        let period = 2_000_000;
        let t = new_ticker(period, SLEEPLAB_MISSED_DEFAULT);
        // SAFETY: `t` is live and owned by this thread.
        unsafe {
            let mut state = TickerState::default();
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            assert_eq!(state.missed_behavior, SLEEPLAB_MISSED_SKIP);
            let mut first = Tick::default();
            assert_eq!(sleeplab_ticker_tick(t, &mut first), SLEEPLAB_OK);
            // Miss at least two whole periods.
            std::thread::sleep(std::time::Duration::from_millis(7));
            let (mut late, mut next) = (Tick::default(), Tick::default());
            assert_eq!(sleeplab_ticker_tick(t, &mut late), SLEEPLAB_OK);
            assert_eq!(sleeplab_ticker_tick(t, &mut next), SLEEPLAB_OK);
            // The late tick is the one that was due; the missed ones are dropped, not
            // fired in a burst: the next tick is the first grid instant after it fired.
            assert_eq!(late.scheduled_ns, first.scheduled_ns + period);
            assert!(late.missed >= 2, "{late:?}");
            assert_eq!((next.scheduled_ns - first.scheduled_ns) % period, 0);
            assert!(next.scheduled_ns > late.woke_ns, "{late:?} {next:?}");
            assert!(
                next.scheduled_ns <= late.woke_ns + period,
                "{late:?} {next:?}"
            );
            assert!(next.woke_ns >= next.scheduled_ns);
            sleeplab_ticker_free(t);
        }
    }

    #[test]
    fn delay_restarts_the_schedule_from_a_late_tick() {
        let t = new_ticker(2_000_000, SLEEPLAB_MISSED_DELAY);
        // SAFETY: `t` is live and owned by this thread.
        unsafe {
            let mut first = Tick::default();
            assert_eq!(sleeplab_ticker_tick(t, &mut first), SLEEPLAB_OK);
            // Miss at least two whole periods.
            std::thread::sleep(std::time::Duration::from_millis(7));
            let mut late = Tick::default();
            assert_eq!(sleeplab_ticker_tick(t, &mut late), SLEEPLAB_OK);
            assert!(late.missed >= 2, "{late:?}");
            let mut state = TickerState::default();
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            assert_eq!(state.next_ns, late.woke_ns + 2_000_000);
            assert_eq!(state.missed_ticks, late.missed);
            sleeplab_ticker_free(t);
        }
    }

    #[test]
    fn bad_arguments_return_codes() {
        let mut t = std::ptr::null_mut();
        let null = std::ptr::null_mut::<Ticker>();
        // SAFETY: NULL and live pointers only.
        unsafe {
            assert_eq!(
                sleeplab_ticker_new(std::ptr::null(), 0, 0, &mut t),
                SLEEPLAB_EINVAL
            );
            assert_eq!(last_error(), "period_ns must be positive, got 0");
            assert_eq!(
                sleeplab_ticker_new(std::ptr::null(), 1, 3, &mut t),
                SLEEPLAB_EINVAL
            );
            assert_eq!(
                last_error(),
                "missed must be SLEEPLAB_MISSED_BURST (0), SLEEPLAB_MISSED_DELAY (1) or \
                 SLEEPLAB_MISSED_SKIP (2), got 3"
            );
            let no_out = std::ptr::null_mut();
            assert_eq!(
                sleeplab_ticker_new(std::ptr::null(), 1, 0, no_out),
                SLEEPLAB_EFAULT
            );
            assert!(t.is_null());
            assert_eq!(
                sleeplab_ticker_tick(null, std::ptr::null_mut()),
                SLEEPLAB_EFAULT
            );
            assert_eq!(sleeplab_ticker_reset_at_ns(null, 0), SLEEPLAB_EFAULT);
            let t = new_ticker(1000, SLEEPLAB_MISSED_BURST);
            assert_eq!(sleeplab_ticker_set_missed(t, 9), SLEEPLAB_EINVAL);
            assert_eq!(
                sleeplab_ticker_set_missed(t, SLEEPLAB_MISSED_DELAY),
                SLEEPLAB_OK
            );
            let mut state = TickerState::default();
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            assert_eq!(state.missed_behavior, SLEEPLAB_MISSED_DELAY);
            assert_eq!(sleeplab_ticker_reset_at_ns(t, 42), SLEEPLAB_OK);
            assert_eq!(sleeplab_ticker_get_state(t, &mut state), SLEEPLAB_OK);
            assert_eq!((state.start_ns, state.next_ns), (42, 42));
            sleeplab_ticker_free(t);
            sleeplab_ticker_free(null);
        }
    }
}
