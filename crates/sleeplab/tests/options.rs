//! The option table seen from every Rust surface: the builder by name (typed and as
//! text) and the strategy settings (`precise:KEY=VALUE`, by key and by name) accept and
//! refuse the same samples of every option (the C setters walk the same samples in
//! `sleeplab-ffi`, the Python keywords in `bindings/python/tests/test_options.rs`).

use std::time::Duration;

use sleeplab::lab::{SettingError, StrategySetting, VirtualEnv, option_samples};
use sleeplab::precise::asleep::AsyncTimer;
use sleeplab::precise::{
    CpuBudget, EstimatorConfig, OPTIONS, OptionError, OptionValue, PreciseSleeper,
    PreciseSleeperBuilder,
};

#[test]
fn every_surface_accepts_and_refuses_the_same_samples() {
    let mut checked = 0;
    for option in OPTIONS {
        for sample in option_samples(option) {
            let what = format!("{}={}", option.name, sample.text);
            let mut b = PreciseSleeperBuilder::default();
            assert_eq!(
                b.set_text(option.name, &sample.text).is_ok(),
                sample.ok,
                "{what}"
            );
            if let Some(value) = sample.value {
                let mut b = PreciseSleeperBuilder::default();
                assert_eq!(b.set(option.name, value).is_ok(), sample.ok, "{what}");
                assert_eq!(option.check(value).is_ok(), sample.ok, "{what}");
            }
            let Some(key) = option.setting_key else {
                continue;
            };
            for k in [key, option.name] {
                let setting = format!("precise:{k}={}", sample.text);
                let parsed = StrategySetting::parse(&setting);
                assert_eq!(parsed.is_ok(), sample.ok, "{setting}: {parsed:?}");
                match parsed {
                    Ok(s) => {
                        let canonical = s.to_string();
                        let again = StrategySetting::parse(&canonical).unwrap();
                        assert_eq!(again, s, "{setting} -> {canonical}");
                    }
                    Err(e) => {
                        assert!(
                            matches!(&e, SettingError::BadValue { key: bad, value, .. }
                                if *bad == key && *value == sample.text),
                            "{setting}: {e}"
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// `option` set to `value` through the builder's typed methods; `None` where no typed
/// method can express the value (a word's index beyond the enum, a count beyond its
/// field's type) or the option is a word (an enum is never out of range).
fn typed(option: &str, value: OptionValue) -> Option<PreciseSleeperBuilder> {
    let b = PreciseSleeper::builder();
    // The estimator's fields, each with a prior of 0 so that no cap is below it.
    let estimator = |f: &dyn Fn(&mut EstimatorConfig)| {
        let mut config = EstimatorConfig {
            prior_ns: 0,
            ..EstimatorConfig::default()
        };
        f(&mut config);
        Some(PreciseSleeper::builder().estimator(config))
    };
    match (option, value) {
        ("quantile", OptionValue::Number(q)) => Some(b.quantile(q)),
        ("cpu_budget", OptionValue::Budget(CpuBudget::Percent(p))) => Some(b.cpu_budget_percent(p)),
        ("cpu_budget", OptionValue::Budget(budget)) => Some(b.cpu_budget(budget)),
        ("lateness_tolerance", OptionValue::Ns(ns)) => {
            Some(b.lateness_tolerance(Duration::from_nanos(ns)))
        }
        ("early_tolerance", OptionValue::Ns(ns)) => {
            Some(b.early_tolerance(Duration::from_nanos(ns)))
        }
        ("cap", OptionValue::Ns(ns)) => estimator(&|c| c.cap_ns = ns),
        ("prior", OptionValue::Ns(ns)) => estimator(&|c| c.prior_ns = ns),
        ("headroom", OptionValue::Ns(ns)) => estimator(&|c| c.headroom_ns = ns),
        ("window", OptionValue::Count(n)) => {
            let n = usize::try_from(n).ok()?;
            estimator(&|c| c.window = n)
        }
        ("half_life", OptionValue::Count(n)) => {
            let n = u32::try_from(n).ok()?;
            estimator(&|c| c.half_life = n)
        }
        _ => None,
    }
}

/// The typed methods take any value, and `build` refuses one out of its range with the
/// error `set` gives by name (the C setters' `SLEEPLAB_EINVAL`, Python's `ValueError`
/// text): one range and one refusal on every surface, the typed one included.
#[test]
fn the_typed_builder_refuses_what_the_table_refuses() {
    let mut checked = 0;
    for option in OPTIONS {
        for sample in option_samples(option) {
            let Some(value) = sample.value else { continue };
            let Some(builder) = typed(option.name, value) else {
                continue;
            };
            let what = format!("{}={}", option.name, sample.text);
            let built = builder.build_with_env(VirtualEnv::new());
            assert_eq!(built.is_ok(), sample.ok, "{what}");
            if let Err(e) = built {
                let by_name = PreciseSleeperBuilder::default()
                    .set(option.name, value)
                    .unwrap_err();
                assert_eq!(e.to_string(), by_name.to_string(), "{what}");
                assert_eq!(
                    builder.build().unwrap_err(),
                    e,
                    "{what}: build on the real clock"
                );
                assert_eq!(
                    AsyncTimer::with_sleeper(builder).unwrap_err(),
                    e,
                    "{what}: the async timer's sleeper"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked}");
    // The two that a C or Python user is refused and a Rust user was not.
    for (builder, message) in [
        (
            PreciseSleeper::builder().quantile(0.2),
            "bad value `0.2` for quantile: expected a quantile from 0.5 to 1",
        ),
        (
            PreciseSleeper::builder().cpu_budget_percent(250.0),
            "bad value `250%` for cpu_budget: expected auto, none, or a percentage from 0 to 100",
        ),
    ] {
        assert_eq!(builder.build().unwrap_err().to_string(), message);
    }
}

/// The timer slack is the harness's to set once for every strategy it compares.
#[test]
fn the_timer_slack_is_no_setting() {
    assert!(matches!(
        StrategySetting::parse("precise:timer_slack=leave"),
        Err(SettingError::UnknownParam { .. })
    ));
}

/// One option, one meaning in every surface: `cap` below the prior was clamped in one
/// surface and an error in another. Everywhere now: the unstated prior follows the cap
/// down, a stated one above it is an error (whichever comes first).
#[test]
fn a_prior_above_the_cap_is_refused_alike() {
    assert!(StrategySetting::parse("precise:cap=100us").is_ok());
    for setting in ["precise:prior=1ms,cap=500us", "precise:cap=500us,prior=1ms"] {
        let e = StrategySetting::parse(setting).unwrap_err();
        assert!(
            matches!(
                e,
                SettingError::Inconsistent {
                    error: OptionError::PriorAboveCap { .. },
                    ..
                }
            ),
            "{setting}: {e}"
        );
    }
    let mut b = PreciseSleeperBuilder::default();
    b.set_text("prior", "1ms").unwrap();
    b.set_text("cap", "500us").unwrap();
    assert!(matches!(
        b.validate(),
        Err(OptionError::PriorAboveCap {
            prior_ns: 1_000_000,
            cap_ns: 500_000
        })
    ));
}

/// `sleeplab::precise` is the product's front door: at most 26 names, so it stays small
/// (26 since a ticker refuses a zero period with an error of its own, `TickerError`).
#[test]
fn the_front_door_is_small() {
    let source = include_str!("../src/precise/mod.rs");
    let mut names = source
        .lines()
        .filter(|l| l.trim_start().starts_with("pub mod "))
        .count();
    // Each `pub use path::{A, B};` or `pub use path::A;` statement, however wrapped.
    for statement in source.split("pub use ").skip(1) {
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        names += match statement.split_once('{') {
            Some((_, list)) => list
                .trim_end_matches('}')
                .split(',')
                .filter(|n| !n.trim().is_empty())
                .count(),
            None => 1,
        };
    }
    assert!(
        (15..=26).contains(&names),
        "sleeplab::precise exports {names} names"
    );
}
