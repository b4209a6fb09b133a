//! The interval's schedule in virtual time (hand-computed arm times, one arming for a
//! whole run, stale wakes, the spin, what it learns, the missed-tick behaviours), and
//! its ticks on real tokio runtimes.

use super::schedule::{Arm, Begin, REARM_MIN_NS, Schedule, Woke, needs_rearm};
use super::*;

const MS: u64 = 1_000_000;

fn one_percent(start_ns: u64, period_ns: u64) -> Schedule {
    Schedule::new(
        start_ns,
        period_ns,
        Tradeoff {
            cpu_budget: CpuBudget::Percent(1.0),
            ..Tradeoff::default()
        },
    )
}

/// By hand: the estimator's prior margin (200 µs + 10 µs of headroom) bounded by 1 % of
/// the 1 ms period is 10 µs, so the timerfd is armed once, periodic, 10 µs before each
/// tick; a wake 4 µs after the fire time spins 6 µs; 1000 ticks later it was never
/// re-armed.
#[test]
fn it_arms_once_for_a_whole_run() {
    let mut s = one_percent(MS, MS);
    assert_eq!(
        s.begin(0),
        Begin::Wait(Some(Arm {
            first_fire_ns: MS - 10_000,
            period_ns: MS
        }))
    );
    for k in 1..=1000u64 {
        let tick = k * MS;
        if k > 1 {
            assert_eq!(s.begin(tick - MS + 50_000), Begin::Wait(None), "tick {k}");
        }
        assert_eq!(s.woke(tick - 6_000), Woke::SpinTo(tick));
        let t = s.fire(tick, 6_000);
        assert_eq!((t.index, t.scheduled_ns, t.lateness_ns), (k - 1, tick, 0));
        assert_eq!((t.missed, t.spun_ns), (0, 6_000));
    }
    assert_eq!(s.arms, 1);
    assert_eq!(s.estimator.samples(), 1000, "each wake learned 4 µs");
}

/// An expiry before this tick's fire time (left by a tick that fired without waiting)
/// is stale: nothing is learned and the task waits again.
#[test]
fn a_stale_wake_changes_nothing() {
    let mut s = one_percent(MS, MS);
    s.begin(0);
    assert_eq!(s.woke(500_000), Woke::Stale);
    assert_eq!(s.estimator.samples(), 0);
    assert_eq!(s.ticks(), 0);
    assert_eq!(s.woke(MS + 3_000), Woke::Due, "a late wake fires at once");
    assert_eq!(s.estimator.samples(), 1);
}

/// A tick called within its margin spins to it without a wait; one called after it is due fires at once; neither arms the timerfd.
#[test]
fn a_late_call_spins_or_fires_without_arming() {
    let mut s = one_percent(MS, MS);
    assert_eq!(s.begin(MS - 5_000), Begin::SpinTo(MS));
    assert_eq!(s.begin(MS + 1), Begin::Due);
    assert_eq!(
        (s.arms, s.estimator.samples()),
        (0, 0),
        "nothing armed or learned"
    );
}

/// What it learns: the wake's delay after the fire time, only when the task waited, and
/// the timerfd was armed, before that time.
#[test]
fn it_learns_only_from_wakes_it_waited_for() {
    let mut s = one_percent(MS, MS);
    s.begin(0);
    s.woke(MS - 10_000 + 7_000);
    assert_eq!(s.estimator.samples(), 1);
    s.fire(MS, 3_000);
    // Armed with a 12 µs margin, within the hysteresis of the 10 µs wanted: kept. The
    // next call comes 11 µs before its tick, after the 12 µs fire time (the task was
    // busy): the expiry is already there, and its wake is no native wait.
    s.armed = s.armed.map(|a| super::schedule::Armed {
        margin_ns: 12_000,
        ..a
    });
    assert_eq!(s.begin(2 * MS - 11_000), Begin::Wait(None));
    assert_eq!(s.woke(2 * MS - 10_900), Woke::SpinTo(2 * MS));
    assert_eq!(s.estimator.samples(), 1, "nothing learned");
}

/// `Delay` restarts the grid from a late tick, so the timerfd is re-armed there; `Skip`
/// and `Burst` keep the grid, and the armed timer with it.
#[test]
fn only_a_grid_move_re_arms_among_the_behaviours() {
    for (behavior, next, rearmed) in [
        (MissedTickBehavior::Delay, 3_500_000 + MS, true),
        (MissedTickBehavior::Skip, 4 * MS, false),
        (MissedTickBehavior::Burst, 2 * MS, false),
    ] {
        let mut s = one_percent(MS, MS);
        s.behavior = behavior;
        s.begin(0);
        // Woken 2.5 periods late.
        assert_eq!(s.woke(3_500_000), Woke::Due);
        let t = s.fire(3_500_000, 0);
        assert_eq!(t.lateness_ns, 2_500_000);
        assert_eq!(s.next_ns(), next, "{behavior:?}");
        let begin = s.begin(3_600_000);
        if rearmed {
            assert_eq!(
                begin,
                Begin::Wait(Some(Arm {
                    first_fire_ns: next - 10_000,
                    period_ns: MS
                }))
            );
        } else if next > 3_600_000 {
            assert_eq!(begin, Begin::Wait(None), "{behavior:?}");
        } else {
            assert_eq!(begin, Begin::Due, "{behavior:?} catches up at once");
        }
    }
}

/// The margin re-arms only when it moved by more than a quarter and at least 1 µs.
#[test]
fn a_margin_re_arms_only_past_its_hysteresis() {
    assert!(!needs_rearm(100_000, 125_000));
    assert!(needs_rearm(100_000, 125_001));
    assert!(!needs_rearm(100_000, 75_000));
    assert!(needs_rearm(100_000, 74_999));
    assert!(!needs_rearm(2_000, 2_000 + REARM_MIN_NS - 1), "under 1 µs");
    assert!(needs_rearm(2_000, 2_000 + REARM_MIN_NS));
}

/// At 60 Hz the budget (1 % of 16.7 ms, 166 µs) lets the learned margin fall as punctual
/// wakes come in: it is re-armed a few times as it settles, never at every tick, and the
/// armed margin ends within the hysteresis of the wanted one.
#[test]
fn a_settling_margin_re_arms_a_few_times() {
    let period = 16_666_667;
    let mut s = one_percent(period, period);
    for k in 1..=600u64 {
        let tick = k * period;
        let _ = s.begin(tick - period + 1_000);
        let fire = tick - s.armed.unwrap().margin_ns;
        let woke = s.woke(fire + 20_000);
        let at = if woke == Woke::Due {
            fire + 20_000
        } else {
            tick
        };
        s.fire(at, 0);
    }
    let armed = s.armed.unwrap().margin_ns;
    assert!(armed < 166_666, "it learned a smaller margin: {armed}");
    assert!(s.arms > 1 && s.arms <= 12, "arms {}", s.arms);
    assert!(!needs_rearm(armed, s.margin_ns()));
}

/// Whatever the wake times, a tick is never fired before it is due, and the schedule
/// keeps its grid (Burst): tick k is due at start + k·period.
#[test]
fn it_never_fires_early_in_virtual_time() {
    let mut s = one_percent(MS, MS);
    let mut now = 0u64;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..5000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        now += x % 700_000;
        let due = s.next_ns();
        let fired = match s.begin(now) {
            Begin::Due => Some(now),
            Begin::SpinTo(t) => Some(t),
            Begin::Wait(_) => match s.woke(now) {
                Woke::Stale => None,
                Woke::SpinTo(t) => Some(t),
                Woke::Due => Some(now),
            },
        };
        if let Some(at) = fired {
            assert!(at >= due);
            let t = s.fire(at, 0);
            assert_eq!(t.scheduled_ns, MS * (t.index + 1));
            now = at;
        }
    }
    assert!(s.ticks() > 100);
}

/// `ticks` ticks of a 2 ms interval on `rt`: never early, on the grid, numbered.
fn real_ticks(rt: tokio::runtime::Runtime, ticks: u64) {
    rt.block_on(async {
        let start = monotonic_ns() + 2 * MS;
        let mut iv = ReactorInterval::new_at_ns(start, 2 * MS).unwrap();
        for k in 0..ticks {
            let t = iv.tick().await;
            assert!(monotonic_ns() >= t.scheduled_ns);
            assert!(t.woke_ns >= t.scheduled_ns, "early: {t:?}");
            assert_eq!(t.index, k);
            assert_eq!(t.scheduled_ns, start + k * 2 * MS, "{t:?}");
        }
        let st = iv.stats();
        assert_eq!(st.ticks, ticks);
        assert!(st.arms >= 1 && st.margin_ns <= 20_000, "{st:?}");
    });
}

#[test]
fn real_ticks_on_both_runtimes_are_never_early() {
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    real_ticks(current, 20);
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    real_ticks(multi, 20);
}

/// A tick future dropped while it waits leaves its tick due for the next call.
#[test]
fn a_dropped_tick_leaves_the_tick_due() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let start = monotonic_ns() + 200 * MS;
        let mut iv = ReactorInterval::new_at_ns(start, 10 * MS).unwrap();
        // One poll (it arms the timerfd and waits), then the tick future is dropped.
        let cut = {
            let mut tick = std::pin::pin!(iv.tick());
            std::future::poll_fn(|cx| std::task::Poll::Ready(tick.as_mut().poll(cx).is_pending()))
                .await
        };
        assert!(cut, "the tick cannot come 200 ms early");
        let t = iv.tick().await;
        assert_eq!((t.index, t.scheduled_ns), (0, start));
        assert!(t.woke_ns >= start);
    });
}

/// Outside a runtime: an error that names the interval (it named the reactor timer).
#[test]
fn outside_a_runtime_it_is_an_error() {
    let e = ReactorInterval::new(Duration::from_millis(1)).unwrap_err();
    assert!(
        matches!(
            e,
            ReactorError::NoRuntime {
                what: "ReactorInterval"
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "a ReactorInterval is made inside a tokio runtime (none is running on this thread)"
    );
}

/// On a runtime without I/O: the error, not tokio's panic.
#[test]
fn on_a_runtime_without_io_it_is_an_error() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let e = rt
        .block_on(async { ReactorInterval::new(Duration::from_millis(1)) })
        .unwrap_err();
    assert!(
        matches!(
            e,
            ReactorError::IoDisabled {
                what: "ReactorInterval"
            }
        ),
        "{e:?}"
    );
}

/// A zero period is refused as a `Ticker` refuses it (tokio's `interval` panics), and a
/// budget out of 0–100 % as the sleeper's `cpu_budget` option is.
#[test]
fn a_zero_period_and_a_bad_budget_are_refused() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let e = ReactorInterval::new(Duration::ZERO).unwrap_err();
        assert!(
            matches!(e, ReactorError::Period(TickerError::ZeroPeriod)),
            "{e:?}"
        );
        assert_eq!(e.to_string(), TickerError::ZeroPeriod.to_string());
        let iv = ReactorInterval::new(Duration::from_millis(1)).unwrap();
        let e = iv.with_cpu_budget_percent(101.0).unwrap_err();
        assert!(matches!(e, ReactorError::Option(_)), "{e:?}");
        let iv = ReactorInterval::new(Duration::from_millis(1)).unwrap();
        let iv = iv.with_cpu_budget_percent(3.0).unwrap();
        assert_eq!(iv.schedule.tradeoff.cpu_budget, CpuBudget::Percent(3.0));
    });
}

/// Once its runtime is gone, a tick still comes, from the clock alone, never early.
#[test]
fn after_its_runtime_shut_down_a_tick_still_comes_on_time() {
    use std::task::{Context, Poll, Waker};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = monotonic_ns() + 5 * MS;
    let mut iv = rt
        .block_on(async { ReactorInterval::new_at_ns(start, 5 * MS) })
        .unwrap();
    drop(rt);
    let mut tick = std::pin::pin!(iv.tick());
    let mut cx = Context::from_waker(Waker::noop());
    let t = loop {
        if let Poll::Ready(t) = tick.as_mut().poll(&mut cx) {
            break t;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(t.scheduled_ns, start);
    assert!(t.woke_ns >= start && monotonic_ns() >= start);
}
