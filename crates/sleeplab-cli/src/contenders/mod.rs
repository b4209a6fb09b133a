//! The CLI's contenders by name, in one home:
//!
//! * this module: everything `sweep` can measure by name, the OS wait mechanisms of
//!   [`sleeplab::wait`] and the precise-sleep strategies that are not already an OS
//!   mechanism (`std-sleep`, `clock-nanosleep-abs` and `spin` are both), so the
//!   1 ns – 1 s curve includes them;
//! * [`strategies`]: the precise-sleep contenders of `pace`, `cpu` and `advise` (the
//!   library's strategies plus the `spin_sleep` crate);
//! * [`asyncs`]: `pace`'s async contenders (tokio, async-io, a timerfd future, spin_sleep
//!   in a blocking task, the library's `asleep` and its reactor timer), each awaited on a
//!   runtime of its own.

pub mod asyncs;
pub mod strategies;
mod timerfd_future;

use sleeplab::clock::RealEnv;
use sleeplab::wait::{self, Support, Waiter};
use strategies::RealStrategy;

/// Where a contender comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An OS wait mechanism.
    Os,
    /// A precise-sleep strategy (sleep then spin).
    Strategy,
}

/// A contender's listing.
#[derive(Debug, Clone)]
pub struct Info {
    /// Name on the command line.
    pub name: &'static str,
    /// One line on what it does.
    pub description: &'static str,
    /// Family, for grouping (sleep, poll, timerfd, sync, busy, strategy).
    pub family: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Smallest request it can express.
    pub min_ns: u64,
    /// False when it ignores the duration (measured at 0 only).
    pub takes_duration: bool,
    /// Whether this machine supports it.
    pub support: Support,
}

impl Info {
    /// Whether a request of `ns` is meaningful.
    pub fn accepts(&self, ns: u64) -> bool {
        request_skip(self.name, self.min_ns, self.takes_duration, ns).is_none()
    }
}

use sleeplab_results::request_skip;
pub use sleeplab_results::skip_reason;
/// An async sleep to an absolute deadline on a timerfd registered with tokio's reactor.
pub use timerfd_future::sleep_until as timerfd_sleep_until;

/// Whether the measuring thread's timer slack delays the wake of the contender `name`:
/// a mechanism's row says ([`sleeplab::wait::Mechanism::slack_applies`]); a strategy's
/// native sleeps take it.
pub fn slack_applies(name: &str) -> bool {
    wait::find(name).is_none_or(|m| m.slack_applies)
}

/// Something that waits for a requested number of nanoseconds.
pub trait Wait {
    /// Waits for `ns` nanoseconds.
    fn wait(&mut self, ns: u64);

    /// Waits for `ns` nanoseconds; the clock reads that bound the wait: around the call,
    /// or for an async mechanism inside its future (from the call that creates it to
    /// the first line after its `.await`).
    #[inline]
    fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
        let t0 = sleeplab::clock::monotonic_ns();
        self.wait(ns);
        (t0, sleeplab::clock::monotonic_ns())
    }

    /// Waits for `ns` nanoseconds; how long it spun at the end on purpose (a precise
    /// strategy's spin after its native wake), ns: what a traced run counts as spin.
    fn wait_spin(&mut self, ns: u64) -> u64 {
        self.wait(ns);
        0
    }

    /// [`wait_timed`](Self::wait_timed) and [`wait_spin`](Self::wait_spin) at once: the
    /// clock reads that bound the wait and the spin, ns.
    fn wait_timed_spin(&mut self, ns: u64) -> (u64, u64, u64) {
        let t0 = sleeplab::clock::monotonic_ns();
        let spin = self.wait_spin(ns);
        (t0, sleeplab::clock::monotonic_ns(), spin)
    }

    /// The scheduler slice this contender's thread asks for, ns (`None`: the kernel's
    /// default). A measuring thread that runs several contenders applies each one's
    /// before measuring it ([`apply_sched_slice`]), as a program using only that
    /// contender would have it.
    fn sched_slice_ns(&self) -> Option<u64> {
        None
    }

    /// Whether a wait can block (put the thread to sleep); false for the waits that
    /// yield or spin, whose time a traced run counts as spin. Asked after each wait: a
    /// strategy answers for the wait it just made.
    fn blocks(&self) -> bool {
        true
    }
}

/// Gives the calling thread the slice a contender asks for (`None`: the kernel's
/// default), before measuring that contender on a thread shared with others. A refusal
/// (an old kernel, a real-time policy) leaves the thread as it was, as for a sleeper
/// built on a thread that may not change it.
pub fn apply_sched_slice(ns: Option<u64>) {
    let _ = sleeplab::system::set_sched_slice_ns(ns);
}

impl Wait for Waiter {
    #[inline]
    fn wait(&mut self, ns: u64) {
        Waiter::wait(self, ns)
    }

    #[inline]
    fn wait_timed(&mut self, ns: u64) -> (u64, u64) {
        Waiter::wait_timed(self, ns)
    }

    fn wait_timed_spin(&mut self, ns: u64) -> (u64, u64, u64) {
        let (t0, t1) = Waiter::wait_timed(self, ns);
        (t0, t1, 0)
    }

    fn blocks(&self) -> bool {
        self.mechanism().blocks()
    }
}

/// A strategy measured as a plain wait (`sleep_for` from now).
struct StrategyWait {
    strategy: RealStrategy,
    env: RealEnv,
    /// Whether its last wait had a native (sleeping) phase: a spin has none.
    slept: bool,
}

impl Wait for StrategyWait {
    #[inline]
    fn wait(&mut self, ns: u64) {
        self.wait_spin(ns);
    }

    fn wait_spin(&mut self, ns: u64) -> u64 {
        let r = self.strategy.sleep_for(&mut self.env, ns);
        self.slept = r.native_oversleep_ns.is_some() || r.native_ns > 0;
        r.spin_ns
    }

    fn sched_slice_ns(&self) -> Option<u64> {
        self.strategy.sched_slice_ns()
    }

    /// A strategy blocks where its last wait slept at all (asked after each wait).
    fn blocks(&self) -> bool {
        self.slept
    }
}

/// The strategies that are not OS mechanisms under another name.
fn strategy_names() -> Vec<&'static str> {
    sleeplab_results::strategy_names()
}

/// Every contender, with its support on this machine.
pub fn all() -> Vec<Info> {
    let os = wait::mechanisms().iter().map(|m| Info {
        name: m.name,
        description: m.description,
        family: m.family.to_string(),
        origin: Origin::Os,
        min_ns: m.min_ns,
        takes_duration: m.takes_duration,
        support: m.support(),
    });
    let strategies = strategy_names().into_iter().map(|name| Info {
        name,
        description: strategies::description(name),
        family: "strategy".to_string(),
        origin: Origin::Strategy,
        min_ns: 0,
        takes_duration: true,
        support: Support::Supported,
    });
    os.chain(strategies).collect()
}

/// Names of all contenders.
pub fn names() -> Vec<&'static str> {
    wait::mechanisms()
        .iter()
        .map(|m| m.name)
        .chain(strategy_names())
        .collect()
}

/// Creates a contender's per-thread state.
pub fn build(name: &str) -> Result<Box<dyn Wait>, String> {
    if wait::find(name).is_some() {
        return Waiter::new(name)
            .map(|w| Box::new(w) as Box<dyn Wait>)
            .map_err(|e| e.to_string());
    }
    strategies::build(name).map(|strategy| {
        Box::new(StrategyWait {
            strategy,
            env: RealEnv,
            slept: true,
        }) as Box<dyn Wait>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precise_asks_for_the_short_slice_and_the_others_for_the_default() {
        let slice = |name: &str| build(name).unwrap().sched_slice_ns();
        assert_eq!(slice("precise"), Some(sleeplab::system::MIN_SLICE_NS));
        assert_eq!(slice("precise:slice=inherit"), None);
        for name in [
            "nanosleep",
            "clock-nanosleep",
            "sdl-precise",
            "spin",
            "std-sleep",
        ] {
            assert_eq!(slice(name), None, "{name}");
        }
    }

    #[test]
    fn names_are_unique_and_build() {
        let names = names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
        assert!(names.contains(&"precise") && names.contains(&"spin-sleep"));
        let infos = all();
        assert_eq!(infos.len(), names.len());
        assert_eq!(
            infos
                .iter()
                .filter(|i| i.origin == Origin::Strategy)
                .count(),
            5
        );
        assert!(build("precise").is_ok());
        assert!(build("nope").is_err());
    }
}
