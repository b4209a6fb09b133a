//! The Rust snippet for the recommendation.

use super::Need;
use crate::contenders::strategies::SPIN_SLEEP;
use sleeplab_stats::fmt_ns;

/// A Rust snippet for `strategy` and the need.
pub fn snippet(strategy: &str, need: &Need) -> String {
    let (what, ns) = match need {
        Need::Period { period_ns } => ("period", *period_ns),
        Need::Duration { duration_ns } => ("duration", *duration_ns),
    };
    match (strategy, need) {
        ("precise", Need::Period { .. }) => format!(
            "use std::time::Duration;\nuse sleeplab::precise::{{MissedTickBehavior, Ticker}};\n\n\
             // sets this thread's timer slack to 1 ns; learns its spin margin online\n\
             let mut ticker = Ticker::new(Duration::from_nanos({ns}))\n    \
             .with_missed_tick_behavior(MissedTickBehavior::Skip);\n\
             loop {{\n    let tick = ticker.tick(); // wakes at start + k·{what}\n    \
             // ... work ...\n}}\n"
        ),
        ("precise", Need::Duration { .. }) => format!(
            "use std::time::Duration;\nuse sleeplab::precise::PreciseSleeper;\n\n\
             let mut sleeper = PreciseSleeper::new(); // one per thread; sets slack to 1 ns\n\
             sleeper.sleep(Duration::from_nanos({ns}));\n"
        ),
        (SPIN_SLEEP, _) => format!(
            "// the spin_sleep crate, default settings (125 µs margin)\n\
             let sleeper = spin_sleep::SpinSleeper::default();\n\
             sleeper.sleep(std::time::Duration::from_nanos({ns})); // {what} {}\n",
            fmt_ns(ns)
        ),
        _ => {
            let body = match need {
                Need::Period { .. } => format!(
                    "let mut next = env.now();\nloop {{\n    next += {ns}; // absolute deadlines: no drift\n    \
                     wait.sleep_until(&mut env, next);\n    // ... work ...\n}}\n"
                ),
                Need::Duration { .. } => {
                    format!("wait.sleep_for(&mut env, {ns}); // {}\n", fmt_ns(ns))
                }
            };
            format!(
                "use sleeplab::clock::{{Env, RealEnv}};\nuse sleeplab::lab::strategy_by_name;\n\
                 use sleeplab::system::set_timer_slack_ns;\n\n\
                 set_timer_slack_ns(1)?; // as measured\n\
                 let mut env = RealEnv;\nlet mut wait = strategy_by_name::<RealEnv>(\"{strategy}\")?;\n{body}"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_name_the_strategy() {
        let p = Need::Period {
            period_ns: 1_000_000,
        };
        assert!(snippet("precise", &p).contains("Ticker::new"));
        let d = Need::Duration {
            duration_ns: 500_000,
        };
        assert!(snippet("precise", &d).contains("PreciseSleeper"));
        assert!(snippet("spin-sleep", &d).contains("SpinSleeper"));
        assert!(snippet("seed-hybrid", &d).contains("\"seed-hybrid\""));
    }
}
