//! The strategy registry: every listed name builds, names are unique and match, unknown
//! names are a clear error, and the contenders behave as their descriptions say.

use sleeplab::clock::RealEnv;
use sleeplab::lab::{
    FixedMargin, SeedHybrid, VirtualCosts, VirtualEnv, WaitStrategy, strategies, strategy_by_name,
};
use sleeplab::precise::SpinStrategy;

#[test]
fn every_listed_strategy_builds_under_its_name() {
    let names: Vec<_> = strategies().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "std-sleep",
            "clock-nanosleep-abs",
            "spin",
            "seed-hybrid",
            "sdl-precise",
            "fixed-margin",
            "precise"
        ]
    );
    for info in strategies() {
        assert!(!info.description.is_empty());
        assert_eq!(
            strategy_by_name::<VirtualEnv>(info.name).unwrap().name(),
            info.name
        );
        assert_eq!(
            strategy_by_name::<RealEnv>(info.name).unwrap().name(),
            info.name
        );
    }
}

#[test]
fn unknown_names_are_a_clear_error() {
    let err = strategy_by_name::<RealEnv>("spin_sleep").err().unwrap();
    assert_eq!(err.name, "spin_sleep");
    let msg = err.to_string();
    assert!(msg.contains("unknown wait strategy `spin_sleep`"), "{msg}");
    assert!(
        msg.contains("precise") && msg.contains("seed-hybrid"),
        "{msg}"
    );
    assert!(strategy_by_name::<RealEnv>("").is_err());
    assert!(strategy_by_name::<RealEnv>("PRECISE").is_err());
}

fn env(oversleep: u64) -> VirtualEnv {
    VirtualEnv::new()
        .with_oversleeps([oversleep])
        .with_costs(VirtualCosts::EXACT)
}

#[test]
fn pure_sleeps_are_late_by_the_oversleep_and_never_spin() {
    for name in ["std-sleep", "clock-nanosleep-abs"] {
        let mut e = env(70_000);
        let mut s = strategy_by_name::<VirtualEnv>(name).unwrap();
        let r = s.sleep_until(&mut e, 5_000_000);
        assert_eq!((r.lateness_ns, r.spin_ns), (70_000, 0), "{name}");
        assert_eq!(r.native_oversleep_ns, Some(70_000));
        assert_eq!(e.spin_pauses(), 0);
    }
}

#[test]
fn spin_never_sleeps() {
    let mut e = env(0);
    let r = strategy_by_name::<VirtualEnv>("spin")
        .unwrap()
        .sleep_until(&mut e, 300_000);
    assert_eq!(
        (r.lateness_ns, r.spin_ns, e.native_sleeps()),
        (0, 300_000, 0)
    );
}

#[test]
fn fixed_margin_sleeps_relative_then_yield_spins() {
    let mut e = env(20_000);
    let mut s = FixedMargin::default();
    assert_eq!((s.margin_ns, s.spin), (125_000, SpinStrategy::YieldSpin));
    let r = s.sleep_until(&mut e, 1_000_000);
    assert_eq!(r.native_ns, 1_000_000 - 125_000 + 20_000);
    assert_eq!(r.lateness_ns, 0);
    assert!(e.yields() > 0);
    // An oversleep beyond the margin is simply late: it never adapts.
    let mut e = env(200_000);
    let r = s.sleep_until(&mut e, 1_000_000);
    assert_eq!(r.lateness_ns, 75_000);
    let r = s.sleep_until(&mut e, 2_000_000);
    assert_eq!(r.lateness_ns, 75_000);
}

#[test]
fn seed_hybrid_starts_at_5ms_and_learns_mean_plus_sigma() {
    let mut s = SeedHybrid::new();
    assert_eq!(s.estimate_ns(), 5e6);
    let mut e = env(100_000); // every 1 ms sleep takes 1.1 ms
    // 4 ms < 5 ms estimate: spins the whole way.
    let r = s.sleep_until(&mut e, 4_000_000);
    assert_eq!(e.native_sleeps(), 0);
    assert_eq!(r.spin_ns, 4_000_000);
    // A 16.67 ms frame: 1 ms sleeps while remaining > mean + 1σ, then spin.
    let r = s.sleep_until(&mut e, 4_000_000 + 16_666_667);
    assert!(e.native_sleeps() >= 10);
    assert_eq!(r.lateness_ns, 0);
    assert!(s.estimate_ns() < 5e6 && s.estimate_ns() > 1.1e6);
    // Each 1 ms sleep overslept 100 µs.
    assert_eq!(r.native_oversleep_ns, Some(100_000));
}

#[test]
fn sdl_precise_learns_within_a_call_only() {
    let mut e = env(300_000); // every 1 ms sleep takes 1.3 ms
    let mut s = strategy_by_name::<VirtualEnv>("sdl-precise").unwrap();
    let r = s.sleep_until(&mut e, 10_000_000);
    assert_eq!(r.lateness_ns, 0);
    assert_eq!(r.margin_ns, 1_300_000, "worst 1 ms sleep of this call");
    let before = e.native_sleeps();
    let r = s.sleep_until(&mut e, 20_000_000);
    // Starts again from 1 ms: sleeps while now + 1 ms < deadline, first sleep included.
    assert!(e.native_sleeps() > before);
    assert_eq!(r.margin_ns, 1_300_000);
}

/// Both wait-mechanism registries: names are unique (also checked when the crate
/// compiles), every row is found under its name, and every row either constructs or
/// reports why this machine cannot (never a panic, never an unknown-name error).
#[test]
fn every_wait_mechanism_row_constructs_or_says_why_not() {
    use sleeplab::wait::periodic::{self, Options, PeriodicTimer};
    use sleeplab::wait::{Support, WaitError, Waiter, find, mechanisms};

    let oneshot: Vec<_> = mechanisms().iter().map(|m| m.name).collect();
    let periodic: Vec<_> = periodic::mechanisms().iter().map(|m| m.name).collect();
    for names in [&oneshot, &periodic] {
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
    }
    assert!(oneshot.contains(&"timerfd-interval") && periodic.contains(&"setitimer"));

    for m in mechanisms() {
        assert_eq!(find(m.name), Some(m));
        assert!(!m.description.is_empty() && m.unit_ns >= 1, "{}", m.name);
        match (m.support(), Waiter::of(m)) {
            (Support::Supported, Ok(w)) => assert_eq!(w.mechanism(), m),
            (Support::Unsupported(why), Err(e)) => {
                assert_eq!(why, e.to_string());
                assert!(!matches!(e, WaitError::Unknown(_)), "{}", m.name);
            }
            (s, w) => panic!("{}: support {s:?} but construction {w:?}", m.name),
        }
    }
    for m in periodic::mechanisms() {
        assert_eq!(periodic::find(m.name), Some(m));
        assert!(
            !m.description.is_empty() && m.period_unit_ns >= 1,
            "{}",
            m.name
        );
        match (m.support(), m.build(&Options::default())) {
            (Support::Supported, Ok(t)) => assert_eq!(t.mechanism(), m),
            (Support::Unsupported(why), Err(e)) => {
                assert_eq!(why, e.to_string());
                assert!(!matches!(e, WaitError::Unknown(_)), "{}", m.name);
            }
            (s, t) => panic!("{}: support {s:?} but construction {t:?}", m.name),
        }
    }
    assert!(matches!(
        Waiter::new("setitimer"),
        Err(WaitError::Unknown(_))
    ));
    assert!(matches!(
        PeriodicTimer::new("timerfd", &Options::default()),
        Err(WaitError::Unknown(_))
    ));
}
