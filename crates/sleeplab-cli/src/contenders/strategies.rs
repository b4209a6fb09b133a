//! The precise-sleep contenders by name: the library's strategies
//! ([`sleeplab::lab::strategies`]) plus `spin-sleep`, the `spin_sleep` crate (by
//! default a fixed 125 µs native-accuracy margin, relative deadlines).
//!
//! A contender may be named with a setting, `NAME[:PARAM[,PARAM]…]`: the library's
//! grammar ([`StrategySetting`]: `seed-hybrid:x=2`, `fixed-margin:250us`,
//! `precise:q=0.999,budget=3%`), and `spin-sleep:DURATION` for the crate's native accuracy.
//!
//! None of them touches the thread's timer slack: the experiment sets one slack for all
//! contenders, so they are compared under the same conditions.

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::duration::{format_ns, parse_ns};
use sleeplab::lab::{StrategySetting, WaitStrategy, strategies, strategy_by_setting};
use sleeplab::precise::SleepReport;
use std::time::{Duration, Instant};

pub use sleeplab_results::SPIN_SLEEP;

/// The `spin_sleep` crate's default native accuracy, ns.
const SPIN_SLEEP_DEFAULT_NS: u64 = 125_000;

/// The largest native accuracy the crate takes (a `u32` of nanoseconds, under 1 s).
const SPIN_SLEEP_MAX_NS: u64 = 999_999_999;

/// A strategy that runs on the real machine.
pub type RealStrategy = Box<dyn WaitStrategy<RealEnv> + Send>;

/// Every contender name, ours (`precise`) last.
pub fn names() -> Vec<&'static str> {
    sleeplab_results::strategy_names_all()
}

/// One line on what a contender does.
pub fn description(name: &str) -> &'static str {
    if let Some(d) = super::asyncs::description(name) {
        return d;
    }
    if name == SPIN_SLEEP {
        return "spin_sleep 1.3 crate, SpinSleeper::default(): native sleep to deadline - 125 µs, then spin";
    }
    strategies()
        .iter()
        .find(|s| s.name == name)
        .map_or("", |s| s.description)
}

/// The registry name of a setting (the part before `:`).
pub fn base_name(setting: &str) -> &str {
    setting
        .split_once(':')
        .map_or(setting, |(name, _)| name)
        .trim()
}

/// Puts back together settings that a comma-separated list split apart: a part without
/// `:` that is not a contender name continues the setting before it (`precise:q=0.999`
/// then `budget=3%`), when that one has parameters.
pub fn join_settings(parts: &[String]) -> Vec<String> {
    let known = names();
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    for part in parts {
        let part = part.trim();
        match out.last_mut() {
            Some(prev) if prev.contains(':') && !part.contains(':') && !known.contains(&part) => {
                prev.push(',');
                prev.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// The spin_sleep crate's native accuracy in `spin-sleep[:DURATION]`, ns.
fn spin_sleep_accuracy(setting: &str) -> Result<u64, String> {
    let Some((_, value)) = setting.split_once(':') else {
        return Ok(SPIN_SLEEP_DEFAULT_NS);
    };
    let value = value.trim();
    let value = value.strip_prefix("accuracy=").unwrap_or(value);
    match parse_ns(value) {
        Ok(ns) if ns <= SPIN_SLEEP_MAX_NS => Ok(ns),
        _ => Err(format!(
            "bad value `{value}` for `{SPIN_SLEEP}`: expected the native accuracy, a duration under 1s (e.g. 50us)"
        )),
    }
}

/// The canonical name of a setting (parameters that differ from the defaults, in a fixed
/// order), or why it is refused.
pub fn canonical(setting: &str) -> Result<String, String> {
    if super::asyncs::description(base_name(setting)).is_some() {
        return match setting.split_once(':') {
            None => Ok(setting.trim().to_string()),
            Some((name, _)) => Err(format!("`{}` takes no setting", name.trim())),
        };
    }
    if base_name(setting) == SPIN_SLEEP {
        return spin_sleep_accuracy(setting).map(|ns| {
            if ns == SPIN_SLEEP_DEFAULT_NS {
                SPIN_SLEEP.to_string()
            } else {
                format!("{SPIN_SLEEP}:{}", format_ns(ns))
            }
        });
    }
    StrategySetting::parse(setting)
        .map(|s| s.to_string())
        .map_err(|e| e.to_string())
}

/// Builds a fresh contender from a name or a setting.
pub fn build(setting: &str) -> Result<RealStrategy, String> {
    if super::asyncs::description(setting).is_some() {
        return super::asyncs::build(setting);
    }
    if base_name(setting) == SPIN_SLEEP {
        let ns = spin_sleep_accuracy(setting)?;
        // spin_sleep_accuracy keeps ns under 1 s, so it fits the crate's u32.
        let sleeper = spin_sleep::SpinSleeper::new(ns as u32);
        return Ok(Box::new(SpinSleepCrate(sleeper, ns)));
    }
    strategy_by_setting::<RealEnv>(setting).map_err(|e| e.to_string())
}

/// The `spin_sleep` crate behind the [`WaitStrategy`] interface, with its native
/// accuracy in ns.
struct SpinSleepCrate(spin_sleep::SpinSleeper, u64);

impl WaitStrategy<RealEnv> for SpinSleepCrate {
    fn name(&self) -> &'static str {
        SPIN_SLEEP
    }

    fn sleep_until(&mut self, env: &mut RealEnv, deadline: u64) -> SleepReport {
        let start = env.now();
        if deadline > start {
            // Instant and monotonic_ns read the same clock; the Instant is taken after
            // `start`, so the converted deadline is never earlier than ours.
            let target = Instant::now() + Duration::from_nanos(deadline - start);
            self.0.sleep_until(target);
        }
        let mut woke = monotonic_ns();
        while woke < deadline {
            woke = monotonic_ns();
        }
        // The crate does not expose where its native phase ended: all time is reported
        // as native, and CPU is measured by the experiment with the thread CPU clock.
        SleepReport::from_instants(start, deadline, woke, woke, None, self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_and_is_never_early() {
        let mut env = RealEnv;
        for name in names() {
            let mut s = build(name).unwrap();
            assert_eq!(s.name(), name);
            assert!(!description(name).is_empty());
            for ns in [0, 1_000, 300_000] {
                let r = s.sleep_for(&mut env, ns);
                assert!(r.woke_ns >= r.deadline_ns, "{name} early");
            }
        }
        assert!(build("nope").is_err());
        assert_eq!(names().last(), Some(&"precise"));
    }

    #[test]
    fn settings_build_and_read_back_as_their_canonical_name() {
        let mut env = RealEnv;
        for (given, canon) in [
            ("spin-sleep", "spin-sleep"),
            ("spin-sleep:125us", "spin-sleep"),
            ("spin-sleep:50us", "spin-sleep:50us"),
            ("spin-sleep:accuracy=1ms", "spin-sleep:1ms"),
            ("spin-sleep:50μs", "spin-sleep:50us"),
            ("precise:tol=1μs", "precise:tol=1us"),
            ("seed-hybrid:x=2", "seed-hybrid:x=2"),
            ("precise", "precise"),
        ] {
            assert_eq!(canonical(given).as_deref(), Ok(canon), "{given}");
            assert_eq!(canonical(canon).as_deref(), Ok(canon), "{canon}");
            let r = build(given).unwrap().sleep_for(&mut env, 10_000);
            assert!(r.woke_ns >= r.deadline_ns, "{given} early");
        }
        for bad in [
            "spin-sleep:2s",
            "spin-sleep:soon",
            "spin-sleep:0.5ns",
            "precise:tol=0.5ns",
            "seed-hybrid:y=1",
            "nope:1",
        ] {
            assert!(canonical(bad).is_err(), "{bad}");
            assert!(build(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn split_settings_are_joined_back_and_names_start_a_new_one() {
        let parts: Vec<String> = [
            "precise:q=0.999",
            "budget=3%",
            "spin",
            "fixed-margin:250us",
            "spin=pause",
            "precise",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            join_settings(&parts),
            [
                "precise:q=0.999,budget=3%",
                "spin",
                "fixed-margin:250us,spin=pause",
                "precise"
            ]
        );
        // A part after a bare name is its own (and fails later as an unknown name).
        let parts = vec!["spin".to_string(), "q=1".to_string()];
        assert_eq!(join_settings(&parts), ["spin", "q=1"]);
    }
}
