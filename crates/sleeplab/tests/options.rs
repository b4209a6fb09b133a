//! The option table seen from every Rust surface: the builder by name (typed and as
//! text) and the strategy settings (`precise:KEY=VALUE`, by key and by name) accept and
//! refuse the same samples of every option (the C setters walk the same samples in
//! `sleeplab-ffi`, the Python keywords in `bindings/python/tests/test_options.rs`).

use sleeplab::lab::{SettingError, StrategySetting, option_samples};
use sleeplab::precise::{OPTIONS, OptionError, PreciseSleeperBuilder};

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

/// `sleeplab::precise` is the product's front door: at most 25 names, so it stays small.
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
        (15..=25).contains(&names),
        "sleeplab::precise exports {names} names"
    );
}
