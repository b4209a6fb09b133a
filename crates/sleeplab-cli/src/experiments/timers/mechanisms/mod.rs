//! Every periodic mechanism `sleeplab timers` compares, one small file per family.
//!
//! A mechanism arms its timer (or starts its loop) on the absolute schedule
//! `t0 + k·P`, with `t0` read right before arming, and records one [`Wake`] per wake-up
//! into a buffer the caller allocated beforehand: the clock read right after the wait,
//! and how many deadlines the wake stands for (the kernel's expiration or overrun count,
//! or for loops the deadlines already passed). It stops once `plan.ticks` deadlines are
//! covered or the user pressed Ctrl-C. The timed region is the wait and a clock read;
//! the push into the pre-allocated buffer and the stop check come after.

mod busy;
mod itimer;
mod posix_signal;
mod posix_thread;
mod sleep_loop;
mod spin_interval;
pub(crate) mod sys;
mod ticker;
mod timerfd;

pub use super::accounting::Wake;
use crate::rusage::ThreadUsage;
use sleeplab::wait::Support;

/// What one run asks of a mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The period, ns (> 0).
    pub period_ns: u64,
    /// Deadlines to cover before stopping (`seconds / period`).
    pub ticks: u64,
    /// Whether the user set the timer slack (then the `ticker` leaves it alone instead
    /// of setting 1 ns as `PreciseSleeper::new` does).
    pub slack_given: bool,
}

/// What a run reports besides its wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunReport {
    /// The schedule's origin: the clock read right before arming, ns.
    pub t0_ns: u64,
    /// The clock after the last wake, ns.
    pub end_ns: u64,
    /// CPU time and context switches spent outside the measuring thread on this run's
    /// behalf (the SIGEV_THREAD callback threads, the setitimer child process).
    pub helper: ThreadUsage,
    /// The timer slack in force while waiting, when the mechanism changed it.
    pub timer_slack_ns: Option<u64>,
    /// True when Ctrl-C stopped the run early.
    pub interrupted: bool,
}

/// Why a mechanism could not run.
#[derive(Debug, thiserror::Error)]
pub enum MechanismError {
    /// A system call failed.
    #[error("{call} failed: {source}")]
    Os {
        /// The call.
        call: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not available here.
    #[error("{0}")]
    Unavailable(String),
}

/// A periodic mechanism, armed per run.
pub trait Periodic {
    /// Runs `plan`, pushing one [`Wake`] per wake-up into `wakes` (whose capacity the
    /// caller reserved: at most `plan.ticks` wakes are pushed).
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError>;
}

/// A mechanism's listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MechanismInfo {
    /// Name on the command line.
    pub name: &'static str,
    /// Family (the file it lives in).
    pub family: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// Whether timer slack delays its wake-ups.
    pub slack_applies: bool,
}

/// Every mechanism, in the order tables list them.
pub const MECHANISMS: [MechanismInfo; 10] = [
    MechanismInfo {
        name: "timerfd-interval",
        family: "timerfd",
        description: "timerfd_create + timerfd_settime(ABSTIME, interval P); read() returns the expiration count",
        slack_applies: false,
    },
    MechanismInfo {
        name: "epoll-timerfd",
        family: "timerfd",
        description: "the same interval timerfd registered in epoll; epoll_wait(-1) then read()",
        slack_applies: false,
    },
    MechanismInfo {
        name: "posix-timer-signal",
        family: "posix-timer",
        description: "timer_create(SIGEV_SIGNAL to this thread), signal blocked, sigwaitinfo; overruns from timer_getoverrun",
        slack_applies: false,
    },
    MechanismInfo {
        name: "posix-timer-thread",
        family: "posix-timer",
        description: "timer_create(SIGEV_THREAD): glibc starts a thread per expiry whose callback records the time",
        slack_applies: false,
    },
    MechanismInfo {
        name: "setitimer",
        family: "itimer",
        description: "setitimer(ITIMER_REAL) + SIGALRM blocked, sigwaitinfo; process-wide, so run in a child process",
        slack_applies: false,
    },
    MechanismInfo {
        name: "clock-nanosleep-abs",
        family: "sleep-loop",
        description: "clock_nanosleep(TIMER_ABSTIME) to t0 + k·P: cyclictest's method",
        slack_applies: true,
    },
    MechanismInfo {
        name: "nanosleep-loop",
        family: "sleep-loop",
        description: "nanosleep(P) after every wake: relative, so it drifts",
        slack_applies: true,
    },
    MechanismInfo {
        name: "busy-wait",
        family: "busy",
        description: "spin on clock_gettime to each absolute deadline",
        slack_applies: false,
    },
    MechanismInfo {
        name: "ticker",
        family: "ticker",
        description: "sleeplab::precise::Ticker (Skip): PreciseSleeper to each deadline, slack 1 ns",
        slack_applies: true,
    },
    MechanismInfo {
        name: "spin-sleep-interval",
        family: "spin-interval",
        description: "spin_sleep_util::Interval (its default Skip): native sleep to deadline − 125 µs, then spin",
        slack_applies: true,
    },
];

/// The names of every mechanism, in table order.
pub fn names() -> Vec<&'static str> {
    MECHANISMS.iter().map(|m| m.name).collect()
}

/// The listing of `name`.
pub fn info(name: &str) -> Option<&'static MechanismInfo> {
    MECHANISMS.iter().find(|m| m.name == name)
}

/// Builds the mechanism `name` for one run.
pub fn build(name: &str) -> Result<Box<dyn Periodic>, MechanismError> {
    Ok(match name {
        "timerfd-interval" => Box::new(timerfd::TimerfdInterval::new()?),
        "epoll-timerfd" => Box::new(timerfd::EpollTimerfd::new()?),
        "posix-timer-signal" => Box::new(posix_signal::PosixSignal::new()?),
        "posix-timer-thread" => Box::new(posix_thread::PosixThread::new()),
        "setitimer" => Box::new(itimer::SetItimer),
        "clock-nanosleep-abs" => Box::new(sleep_loop::ClockNanosleepAbs),
        "nanosleep-loop" => Box::new(sleep_loop::NanosleepLoop),
        "busy-wait" => Box::new(busy::BusyWait),
        "ticker" => Box::new(ticker::TickerMechanism),
        "spin-sleep-interval" => Box::new(spin_interval::SpinSleepInterval),
        other => {
            return Err(MechanismError::Unavailable(format!(
                "unknown mechanism {other:?}"
            )));
        }
    })
}

/// Whether this machine supports `name` (by building it once).
pub fn support(name: &str) -> Support {
    match build(name) {
        Ok(_) => Support::Supported,
        Err(e) => Support::Unsupported(e.to_string()),
    }
}

/// Why `name` cannot run at `period_ns`, if it cannot.
pub fn skip_reason(name: &str, period_ns: u64) -> Option<String> {
    if name == "setitimer" && period_ns % 1_000 != 0 {
        return Some("setitimer takes whole microseconds".into());
    }
    None
}

/// Usage of a thread shared by every run of a mechanism (glibc's SIGEV_THREAD helper),
/// read before and after a cell; `None` for mechanisms without one, or when it cannot
/// be found.
pub fn shared_helper_usage(name: &str) -> Option<ThreadUsage> {
    match name {
        "posix-timer-thread" => posix_thread::helper_usage(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::accounting::{Schedule, account};
    use super::*;
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
            for pair in MECHANISMS.chunks(2) {
                let handles: Vec<_> = pair
                    .iter()
                    .map(|m| {
                        s.spawn(move || {
                            let mut mech =
                                build(m.name).unwrap_or_else(|e| panic!("{}: {e}", m.name));
                            let mut wakes = Vec::with_capacity(plan.ticks as usize);
                            let before = monotonic_ns();
                            let r = mech
                                .run(&plan, &mut wakes)
                                .unwrap_or_else(|e| panic!("{}: {e}", m.name));
                            let after = monotonic_ns();
                            (m.name, r, wakes, before, after)
                        })
                    })
                    .collect();
                for h in handles {
                    let (name, r, wakes, before, after) = h.join().expect("mechanism thread");
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
                    let estimated = matches!(name, "setitimer" | "posix-timer-thread");
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
        assert_eq!(names().len(), MECHANISMS.len());
        for m in MECHANISMS {
            assert_eq!(info(m.name), Some(&m));
            assert_eq!(support(m.name), Support::Supported, "{}", m.name);
        }
        assert!(build("nope").is_err());
        assert!(skip_reason("setitimer", 1_500).is_some());
        assert!(skip_reason("setitimer", 2_000).is_none());
        assert!(skip_reason("timerfd-interval", 1_500).is_none());
    }
}
