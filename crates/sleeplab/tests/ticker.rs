//! The ticker: the pure next-tick arithmetic for all three missed-tick behaviours,
//! scripted stalls in virtual time (exact instants and missed counts), the default
//! behaviour (Skip), a zero period refused, no drift over 10 000 ticks, and overflow
//! safety near `u64::MAX`.

use std::time::Duration;

use sleeplab::lab::{VirtualCosts, VirtualEnv};
use sleeplab::precise::{
    MissedTickBehavior::{self, Burst, Delay, Skip},
    PreciseSleeper, Ticker, TickerError, next_tick,
};
use sleeplab::system::{set_timer_slack_ns, timer_slack_ns};

const MS: u64 = 1_000_000;

#[test]
fn next_tick_on_time_or_slightly_late_keeps_the_grid() {
    for b in [Burst, Delay, Skip] {
        assert_eq!(next_tick(0, MS, 3 * MS, 3 * MS, b), (4 * MS, 0));
        assert_eq!(next_tick(0, MS, 3 * MS, 3 * MS + 999_999, b), (4 * MS, 0));
        // Woken before its time (cannot happen via Ticker, still well defined).
        assert_eq!(next_tick(0, MS, 3 * MS, 0, b), (4 * MS, 0));
    }
}

#[test]
fn next_tick_burst_delay_skip() {
    // Tick due at 2 ms fired at 4.5 ms: 2.5 periods late.
    let now = 4 * MS + MS / 2;
    assert_eq!(next_tick(0, MS, 2 * MS, now, Burst), (3 * MS, 1));
    assert_eq!(next_tick(0, MS, 2 * MS, now, Delay), (now + MS, 2));
    assert_eq!(next_tick(0, MS, 2 * MS, now, Skip), (5 * MS, 2));
    // Exactly one period late.
    assert_eq!(next_tick(0, MS, 2 * MS, 3 * MS, Burst), (3 * MS, 1));
    assert_eq!(next_tick(0, MS, 2 * MS, 3 * MS, Delay), (4 * MS, 1));
    assert_eq!(next_tick(0, MS, 2 * MS, 3 * MS, Skip), (4 * MS, 1));
    // Skip uses the original grid, offset by `start`.
    assert_eq!(
        next_tick(300, MS, 300 + 2 * MS, 300 + 7 * MS, Skip),
        (300 + 8 * MS, 5)
    );
}

#[test]
fn next_tick_is_overflow_safe() {
    let m = u64::MAX;
    for b in [Burst, Delay, Skip] {
        assert_eq!(next_tick(0, 10, m - 5, m - 5, b), (m, 0));
        assert_eq!(next_tick(0, u64::MAX, m - 1, m, b).0, m);
        let (next, _) = next_tick(0, 1, 0, m, b);
        assert!(next >= 1);
        // Period 0 acts as 1 ns.
        assert_eq!(next_tick(5, 0, 5, 5, b), (6, 0));
        assert_eq!(next_tick(m, m, m, m, b), (m, 0));
    }
    assert_eq!(next_tick(0, 1, 0, m, Skip), (m, m));
    assert_eq!(next_tick(0, 1, 0, m, Delay), (m, m));
    assert_eq!(next_tick(0, 1, 0, m, Burst), (1, 1));
    assert_eq!(next_tick(m - 3, 2, m - 3, m, Skip), (m, 1));
    // `now` before `start` (a grid in the future) never underflows.
    assert_eq!(next_tick(10 * MS, MS, 0, 5 * MS, Skip), (10 * MS, 5));
}

/// A ticker at 1 ms from t = 0 over a virtual clock whose sleeps wake on time and whose
/// clock reads are free, so every on-time tick fires exactly at its instant.
fn exact_ticker(b: MissedTickBehavior) -> Ticker<VirtualEnv> {
    let env = VirtualEnv::new().with_costs(VirtualCosts::EXACT);
    Ticker::with_sleeper_at_ns(PreciseSleeper::new_virtual(env), 0, MS).with_missed_tick_behavior(b)
}

/// Ticks 0 and 1 on time, then a 3.5 ms stall (work that overran), then 4 more ticks.
fn run_with_stall(b: MissedTickBehavior) -> (Vec<(u64, u64, u64)>, u64) {
    run_stalled(exact_ticker(b))
}

/// [`run_with_stall`] on the ticker `t`.
fn run_stalled(mut t: Ticker<VirtualEnv>) -> (Vec<(u64, u64, u64)>, u64) {
    let mut out = Vec::new();
    for i in 0..6 {
        let tick = t.tick();
        assert_eq!(tick.index, i);
        assert!(tick.woke_ns >= tick.scheduled_ns);
        assert_eq!(tick.lateness_ns, tick.woke_ns - tick.scheduled_ns);
        out.push((tick.scheduled_ns, tick.woke_ns, tick.missed));
        if i == 1 {
            t.sleeper_mut().env_mut().advance(3 * MS + MS / 2);
        }
    }
    (out, t.missed_ticks())
}

/// After the stall, each behaviour's ticks `(scheduled, woke, missed)`; every one counts
/// the two ticks the stall missed.
#[test]
fn each_missed_tick_behavior_after_a_stall() {
    let stalled = 4 * MS + MS / 2;
    let cases = [
        // Burst fires the missed ticks at once until caught up.
        (
            Burst,
            vec![
                (0, 0, 0),
                (MS, MS, 0),
                (2 * MS, stalled, 1),
                (3 * MS, stalled, 1),
                (4 * MS, stalled, 0),
                (5 * MS, 5 * MS, 0),
            ],
        ),
        // Delay reschedules from the late tick.
        (
            Delay,
            vec![
                (0, 0, 0),
                (MS, MS, 0),
                (2 * MS, stalled, 2),
                (stalled + MS, stalled + MS, 0),
                (stalled + 2 * MS, stalled + 2 * MS, 0),
                (stalled + 3 * MS, stalled + 3 * MS, 0),
            ],
        ),
        // Skip jumps to the next instant of the original grid.
        (
            Skip,
            vec![
                (0, 0, 0),
                (MS, MS, 0),
                (2 * MS, stalled, 2),
                (5 * MS, 5 * MS, 0),
                (6 * MS, 6 * MS, 0),
                (7 * MS, 7 * MS, 0),
            ],
        ),
    ];
    for (behavior, expected) in cases {
        let (ticks, missed) = run_with_stall(behavior);
        assert_eq!(ticks, expected, "{behavior:?}");
        assert_eq!(missed, 2, "{behavior:?}");
    }
}

/// A frame loop's default: a stall's missed ticks are dropped and the grid kept (Skip),
/// unlike tokio, whose default is Burst.
#[test]
fn the_default_behavior_is_skip() {
    assert_eq!(MissedTickBehavior::default(), Skip);
    let env = VirtualEnv::new().with_costs(VirtualCosts::EXACT);
    let t = Ticker::with_sleeper_at_ns(PreciseSleeper::new_virtual(env), 0, MS);
    assert_eq!(t.missed_tick_behavior(), Skip);
    assert_eq!(run_stalled(t), run_with_stall(Skip));
    let env = VirtualEnv::new().with_costs(VirtualCosts::EXACT);
    let t = Ticker::with_sleeper(PreciseSleeper::new_virtual(env), Duration::from_millis(1));
    assert_eq!(t.missed_tick_behavior(), Skip);
}

/// A zero period is refused, as C (`SLEEPLAB_EINVAL`) and Python (`ValueError`, this
/// text) refuse it, instead of a 1 ns busy loop; before any sleeper is built, so the
/// thread's timer slack is left as it was.
#[test]
fn a_zero_period_is_refused() {
    std::thread::spawn(|| {
        let _ = set_timer_slack_ns(50_000);
        let before = timer_slack_ns();
        let e = Ticker::try_new(Duration::ZERO).unwrap_err();
        assert_eq!(e, TickerError::ZeroPeriod);
        assert_eq!(e.to_string(), "period must be positive, got 0.0");
        assert_eq!(timer_slack_ns(), before, "no sleeper was built");
        let sleeper = PreciseSleeper::new_virtual(VirtualEnv::new());
        assert_eq!(
            Ticker::try_with_sleeper(sleeper, Duration::ZERO).unwrap_err(),
            TickerError::ZeroPeriod
        );
        // The shortest period there is still ticks.
        let sleeper = PreciseSleeper::new_virtual(VirtualEnv::new());
        let mut t = Ticker::try_with_sleeper(sleeper, Duration::from_nanos(1)).unwrap();
        assert_eq!(t.period_ns(), 1);
        let tick = t.tick();
        assert!(tick.woke_ns >= tick.scheduled_ns);
    })
    .join()
    .unwrap();
}

/// `new` panics on a zero period with the same text, as tokio's `interval` does.
#[test]
#[should_panic(expected = "period must be positive, got 0.0")]
fn new_panics_on_a_zero_period() {
    let _ = Ticker::new(Duration::ZERO);
}

/// So does the constructor in nanoseconds.
#[test]
#[should_panic(expected = "period must be positive, got 0.0")]
fn with_sleeper_at_ns_panics_on_a_zero_period() {
    let sleeper = PreciseSleeper::new_virtual(VirtualEnv::new());
    let _ = Ticker::with_sleeper_at_ns(sleeper, 0, 0);
}

#[test]
fn drift_free_over_ten_thousand_ticks() {
    for b in [Burst, Delay, Skip] {
        // Oversleeps 0–190 µs, never a whole period: no tick is missed.
        let env = VirtualEnv::starting_at(123_456_789)
            .with_model(|c| sleeplab::lab::NativeWake::Late((c.index * 7_919) % 190_000))
            .with_costs(VirtualCosts {
                clock_read_ns: 25,
                spin_pause_ns: 200,
                ..VirtualCosts::default()
            });
        let period = 1_000_003; // not a round number, to catch rounding
        let mut t =
            Ticker::with_sleeper_at_ns(PreciseSleeper::new_virtual(env), 200_000_000, period)
                .with_missed_tick_behavior(b);
        for k in 0..10_000u64 {
            let tick = t.tick();
            assert_eq!(
                tick.scheduled_ns,
                200_000_000 + k * period,
                "{b:?} tick {k}"
            );
            assert!(tick.woke_ns >= tick.scheduled_ns);
            assert_eq!(tick.missed, 0);
        }
        assert_eq!(t.next_scheduled_ns(), 200_000_000 + 10_000 * period);
        assert_eq!((t.ticks(), t.missed_ticks()), (10_000, 0));
    }
}

#[test]
fn ticking_into_the_end_of_time_saturates() {
    for b in [Burst, Delay, Skip] {
        let env = VirtualEnv::starting_at(u64::MAX - 5 * MS / 2).with_costs(VirtualCosts {
            spin_pause_ns: 1_000,
            ..VirtualCosts::default()
        });
        let sleeper = PreciseSleeper::new_virtual(env);
        let mut t = Ticker::with_sleeper(sleeper, std::time::Duration::from_millis(1))
            .with_missed_tick_behavior(b);
        for _ in 0..6 {
            let tick = t.tick();
            assert!(tick.woke_ns >= tick.scheduled_ns);
        }
        assert_eq!(t.next_scheduled_ns(), u64::MAX);
        assert_eq!(t.sleeper().env().time(), u64::MAX);
    }
}

#[test]
fn reset_restarts_the_grid() {
    let mut t = exact_ticker(Burst);
    t.tick();
    t.tick();
    t.reset_at_ns(10 * MS);
    assert_eq!(t.tick().scheduled_ns, 10 * MS);
    assert_eq!(t.tick().scheduled_ns, 11 * MS);
    assert_eq!(t.ticks(), 4);
    assert_eq!(t.period_ns(), MS);
    assert_eq!(t.missed_tick_behavior(), Burst);
}

#[test]
fn real_ticker_is_never_early() {
    let mut t = Ticker::new(std::time::Duration::from_micros(700));
    for _ in 0..10 {
        let tick = t.tick();
        assert!(tick.woke_ns >= tick.scheduled_ns);
    }
}
