//! Every periodic mechanism `sleeplab timers` compares: the library's
//! ([`sleeplab::wait::periodic`]) and the `spin_sleep` crate's interval
//! ([`SPIN_SLEEP_INTERVAL`]), each run through the one loop [`run`] (in
//! `crate::ticks`, which the monitor's `tick:` cells run through too).
//!
//! A mechanism arms its timer (or starts its loop) on the absolute schedule `t0 + k·P`,
//! with `t0` read right before arming, and reports one [`Wake`] per wake-up: the clock
//! read right after the wait, and how many deadlines the wake stands for (the kernel's
//! expiration or overrun count, or for loops the deadlines already passed).

mod spin_interval;

pub use crate::ticks::{Plan, RunReport, Wake, run};
pub use spin_interval::SPIN_SLEEP_INTERVAL;

use sleeplab::wait::periodic::{self, Options, PeriodicMechanism, PeriodicTimer};
use sleeplab::wait::{Support, ThreadUsage, WaitError};

/// Every mechanism, in the order tables list them: the library's, then `spin_sleep`'s.
pub fn all() -> impl Iterator<Item = &'static PeriodicMechanism> {
    periodic::mechanisms()
        .iter()
        .chain(std::iter::once(&SPIN_SLEEP_INTERVAL))
}

/// The names of every mechanism, in table order.
pub fn names() -> Vec<&'static str> {
    all().map(|m| m.name).collect()
}

/// The row of `name`.
pub fn info(name: &str) -> Option<&'static PeriodicMechanism> {
    all().find(|m| m.name == name)
}

/// Builds the mechanism `name` for a run of `plan`.
pub fn build(name: &str, plan: &Plan) -> Result<PeriodicTimer, WaitError> {
    let options = Options {
        keep_timer_slack: plan.slack_given,
    };
    info(name)
        .ok_or_else(|| WaitError::Unknown(name.to_string()))?
        .build(&options)
}

/// Whether this machine supports `name` (by building it once).
pub fn support(name: &str) -> Support {
    info(name).map_or_else(
        || Support::Unsupported(WaitError::Unknown(name.to_string()).to_string()),
        PeriodicMechanism::support,
    )
}

/// Why `name` cannot run at `period_ns`, if it cannot.
pub fn skip_reason(name: &str, period_ns: u64) -> Option<String> {
    info(name)?.skip_reason(period_ns)
}

/// Usage of a thread shared by every run of a mechanism (glibc's SIGEV_THREAD helper),
/// read before and after a cell; `None` for mechanisms without one, or when it cannot
/// be found.
pub fn shared_helper_usage(name: &str) -> Option<ThreadUsage> {
    info(name)?.shared_helper_usage?()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::Stop;
    use crate::ticks::{Schedule, account};
    use sleeplab::clock::monotonic_ns;

    /// Every mechanism delivers 20 ticks of 2 ms and no wake comes before its deadline
    /// on the absolute schedule (timerfd and POSIX timers fire at or after expiry; the
    /// loops wait for the deadline). Mechanisms run two at a time to keep the test short.
    #[test]
    fn every_mechanism_ticks_and_is_never_early() {
        let plan = Plan {
            period_ns: 2_000_000,
            ticks: 20,
            slack_given: false,
        };
        std::thread::scope(|s| {
            let mechanisms: Vec<_> = all().collect();
            for pair in mechanisms.chunks(2) {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|&m| {
                        s.spawn(move || {
                            let mut mech =
                                build(m.name, &plan).unwrap_or_else(|e| panic!("{}: {e}", m.name));
                            let mut wakes = Vec::with_capacity(plan.ticks as usize);
                            let before = monotonic_ns();
                            let r = run(&mut mech, &plan, &mut wakes, &Stop::when(|| false))
                                .unwrap_or_else(|e| panic!("{}: {e}", m.name));
                            let after = monotonic_ns();
                            (m, r, wakes, before, after)
                        })
                    })
                    .collect();
                for h in handles {
                    let (m, r, wakes, before, after) = h.join().expect("mechanism thread");
                    let name = m.name;
                    assert!(!r.interrupted, "{name}");
                    assert!(
                        before <= r.t0_ns && r.t0_ns < r.end_ns && r.end_ns <= after,
                        "{name}: {r:?}"
                    );
                    assert!(
                        !wakes.is_empty() && wakes.len() <= 20,
                        "{name}: {} wakes",
                        wakes.len()
                    );
                    let estimated = !m.exact_counts;
                    let covered: u64 = wakes.iter().map(|w| w.expirations).sum();
                    assert!(covered >= 20 || estimated, "{name}: covered {covered}");
                    assert!(
                        wakes.windows(2).all(|w| w[0].wake_ns <= w[1].wake_ns),
                        "{name}: out of order"
                    );
                    let s = Schedule {
                        t0_ns: r.t0_ns,
                        period_ns: plan.period_ns,
                        ticks: plan.ticks,
                    };
                    let a = account(&s, &wakes);
                    assert_eq!(a.received + a.missed, 20, "{name}");
                    assert_eq!(a.received as usize, wakes.len(), "{name}");
                    // Only where counts are estimates (reconciled with the times) can a
                    // deadline end up claimed by no wake; it is then counted as missed.
                    if !estimated {
                        assert_eq!(a.undelivered, 0, "{name}");
                    }
                    assert_eq!(
                        a.early,
                        0,
                        "{name}: early wake {:?}",
                        a.ticks.iter().find(|t| t.lateness_ns < 0)
                    );
                    assert!(a.ticks.iter().all(|t| t.lateness_ns >= 0), "{name}");
                    assert_eq!(a.ticks.len() as u64 + a.undelivered, 20, "{name}");
                }
            }
        });
    }

    #[test]
    fn registry_is_consistent() {
        let names = names();
        assert_eq!(names.len(), periodic::mechanisms().len() + 1);
        assert_eq!(names.last(), Some(&"spin-sleep-interval"));
        for (i, m) in all().enumerate() {
            assert!(!names[..i].contains(&m.name), "{} twice", m.name);
            assert_eq!(info(m.name), Some(m));
            assert_eq!(support(m.name), Support::Supported, "{}", m.name);
        }
        let plan = Plan {
            period_ns: 1_000_000,
            ticks: 1,
            slack_given: false,
        };
        assert!(build("nope", &plan).is_err());
        assert!(matches!(support("nope"), Support::Unsupported(_)));
        assert!(shared_helper_usage("timerfd-interval").is_none());
        assert!(skip_reason("setitimer", 1_500).is_some());
        assert!(skip_reason("setitimer", 2_000).is_none());
        assert!(skip_reason("timerfd-interval", 1_500).is_none());
    }
}
