//! The automatic CPU ceiling (`CpuBudget::Auto`) and its coarse-scheduler lift: the margin
//! of a wait is at most 5 % of it (at least 500 µs) unless more than half of the recent
//! wakeups overslept beyond that, as on a tick-driven scheduler, where the ceiling lifts
//! to the estimator's cap and the p99 of the oversleep is spun. Rare or huge stalls and
//! an explicit budget never lift it.

mod support;

use sleeplab::lab::{NativeWake, SleepCall, VirtualCosts, VirtualEnv};
use sleeplab::precise::{CpuBudget, MarginEstimator, Observation, PreciseSleeper, Tradeoff};
use support::rng::Rng;

const MS: u64 = 1_000_000;
const FRAME: u64 = 16_666_667;
const BASE: u64 = 20_000;

/// A sleeper whose native sleeps wake as `model` says, with coarse spin iterations so
/// long spins stay cheap to simulate.
fn sleeper(
    model: impl FnMut(&SleepCall) -> NativeWake + Send + 'static,
) -> PreciseSleeper<VirtualEnv> {
    let env = VirtualEnv::starting_at(MS)
        .with_costs(VirtualCosts {
            clock_read_ns: 100,
            spin_pause_ns: 900,
            ..VirtualCosts::default()
        })
        .with_model(model);
    PreciseSleeper::new_virtual(env)
}

/// U(0, 10 ms): seed 002's scheduler at a 10 ms tick, without preemption.
fn ten_ms_tick(seed: u64) -> impl FnMut(&SleepCall) -> NativeWake + Send + 'static {
    let mut rng = Rng(seed);
    move |_| NativeWake::Late(rng.next() % (10 * MS))
}

#[test]
fn rare_stalls_keep_the_ceiling() {
    // One wakeup in five is 3 ms late: 20 % is not more than half.
    let mut s = sleeper(|c| NativeWake::Late(if c.index % 5 == 4 { 3 * MS } else { BASE }));
    for _ in 0..2_000 {
        let r = s.sleep_for_ns(FRAME);
        assert!(r.margin_ns <= 833_333, "margin {}", r.margin_ns);
        assert!(r.woke_ns >= r.deadline_ns);
    }
    // Every 3 ms wakeup was beyond any margin the ceiling allowed.
    assert_eq!(s.stats().stalls, 400);
    assert!((s.estimator().share_above(833_333) - 0.2).abs() < 0.01);
}

#[test]
fn a_ten_ms_tick_lifts_the_ceiling_and_learns_its_p99() {
    let mut s = sleeper(ten_ms_tick(0x5eed_0002));
    let mut first_lifted = None;
    for i in 0..600u64 {
        let r = s.sleep_for_ns(30 * MS);
        if r.margin_ns > 1_500_000 {
            first_lifted.get_or_insert(i);
        }
        if i == 20 {
            s.reset_stats();
        }
    }
    // Decided once 8 samples were in: 85 % of U(0, 10 ms) lie beyond 1.5 ms.
    assert!(
        first_lifted.is_some_and(|i| (8..20).contains(&i)),
        "{first_lifted:?}"
    );
    assert!(Tradeoff::is_coarse(s.estimator(), 1_500_000));
    // The 6th largest of 512 uniform samples on 10 ms is ≈ 9.9 ms (bucket edge ≤ +12.5 %).
    let m = s.margin_for_ns(30 * MS);
    assert!((9_500_000..=11_400_000).contains(&m), "margin {m}");
    assert_eq!(
        s.stats().stalls,
        0,
        "once lifted, tick wakeups are not stalls"
    );
}

#[test]
fn the_sleeper_is_on_time_on_a_ten_ms_tick() {
    let mut s = sleeper(ten_ms_tick(0xabc));
    for _ in 0..50 {
        s.sleep_for_ns(30 * MS);
    }
    s.reset_stats();
    let mut late = 0;
    for _ in 0..500 {
        let r = s.sleep_for_ns(30 * MS);
        assert!(r.woke_ns >= r.deadline_ns);
        late += u32::from(r.lateness_ns > 2_000);
    }
    // The margin is about the window's p99 oversleep: about 1 % of waits are late.
    assert!(late <= 10, "{late} of 500 late");
}

#[test]
fn the_lift_ends_when_the_machine_calms_down() {
    let calm = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&calm);
    let mut tick = ten_ms_tick(7);
    let mut s = sleeper(move |c| {
        if flag.load(std::sync::atomic::Ordering::Relaxed) {
            NativeWake::Late(BASE)
        } else {
            tick(c)
        }
    });
    for _ in 0..300 {
        s.sleep_for_ns(FRAME);
    }
    assert!(s.margin_for_ns(FRAME) > 833_333, "lifted");
    calm.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut waits = 0;
    while s.margin_for_ns(FRAME) > 833_333 {
        s.sleep_for_ns(FRAME);
        waits += 1;
        assert!(waits < 512, "must come back within a window");
    }
    // Back under the ceiling at once, then down to the calm machine's p99.
    for _ in 0..2_000 {
        let r = s.sleep_for_ns(FRAME);
        assert!(r.margin_ns <= 833_333);
    }
    assert!(
        s.margin_for_ns(FRAME) < 40_000,
        "{}",
        s.margin_for_ns(FRAME)
    );
}

#[test]
fn huge_stalls_never_lift_the_ceiling() {
    let mut s = sleeper(|c| {
        // 40 % of wakeups 0.1–2 s late: a suspended VM, not a scheduler tick.
        NativeWake::Late(if c.index % 5 < 2 {
            100 * MS + c.index * MS
        } else {
            BASE
        })
    });
    for _ in 0..500 {
        let r = s.sleep_for_ns(FRAME);
        assert!(r.margin_ns <= 833_333);
    }
    assert_eq!(
        s.estimator().stalls(),
        200,
        "beyond the 50 ms cap: not learned"
    );
    let mut e = MarginEstimator::default();
    assert_eq!(e.observe(60 * MS), Observation::Stall);
}

#[test]
fn an_explicit_budget_is_never_lifted() {
    let env = VirtualEnv::starting_at(MS)
        .with_costs(VirtualCosts {
            spin_pause_ns: 900,
            ..VirtualCosts::default()
        })
        .with_model(ten_ms_tick(3));
    let mut s = PreciseSleeper::builder()
        .cpu_budget_percent(5.0)
        .slack_policy(sleeplab::precise::SlackPolicy::LeaveAlone)
        .build_with_env(env)
        .unwrap();
    assert_eq!(s.tradeoff().cpu_budget, CpuBudget::Percent(5.0));
    for _ in 0..600 {
        let r = s.sleep_for_ns(30 * MS);
        assert!(r.margin_ns <= 1_500_000, "margin {}", r.margin_ns);
        // The spin stays within the budget (plus one spin iteration and a clock read).
        assert!(r.spin_ns <= 1_500_000 + 900 + 20, "spin {}", r.spin_ns);
    }
}
