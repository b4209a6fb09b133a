//! The precise-sleep contenders by name: the library's strategies
//! ([`sleeplab::precise::strategies`]) plus `spin-sleep`, the `spin_sleep` crate with its
//! default settings (a fixed 125 µs native-accuracy margin, relative deadlines).
//!
//! None of them touches the thread's timer slack: the experiment sets one slack for all
//! contenders, so they are compared under the same conditions.

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::precise::{SleepReport, WaitStrategy, strategies, strategy_by_name};
use std::time::{Duration, Instant};

/// The `spin_sleep` crate's name here.
pub const SPIN_SLEEP: &str = "spin-sleep";

/// A strategy that runs on the real machine.
pub type RealStrategy = Box<dyn WaitStrategy<RealEnv> + Send>;

/// Every contender name, ours (`precise`) last.
pub fn names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = strategies().iter().map(|s| s.name).collect();
    let precise = v.pop();
    v.push(SPIN_SLEEP);
    v.extend(precise);
    v
}

/// One line on what a contender does.
pub fn description(name: &str) -> &'static str {
    if name == SPIN_SLEEP {
        return "spin_sleep 1.3 crate, SpinSleeper::default(): native sleep to deadline - 125 µs, then spin";
    }
    strategies()
        .iter()
        .find(|s| s.name == name)
        .map_or("", |s| s.description)
}

/// Builds a fresh contender.
pub fn build(name: &str) -> Result<RealStrategy, String> {
    if name == SPIN_SLEEP {
        return Ok(Box::new(SpinSleepCrate(spin_sleep::SpinSleeper::default())));
    }
    strategy_by_name::<RealEnv>(name).map_err(|e| e.to_string())
}

/// The `spin_sleep` crate behind the [`WaitStrategy`] interface.
struct SpinSleepCrate(spin_sleep::SpinSleeper);

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
        SleepReport::from_instants(start, deadline, woke, woke, None, 125_000)
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
                assert!(r.woke >= r.deadline, "{name} early");
            }
        }
        assert!(build("nope").is_err());
        assert_eq!(names().last(), Some(&"precise"));
    }
}
