//! The async contenders of `pace`: each awaits the frame's deadline on a runtime of its
//! own, `block_on` on the measuring thread, and reads the clock on the first line
//! after its `.await` (that reading is the frame's wake).
//!
//! CPU spent outside the measuring thread (a blocking-pool thread's spin, our timer
//! thread, async-io's driver thread) is reported by
//! [`WaitStrategy::helper_cpu_ns`], which `pace` adds to the measuring thread's own.

use sleeplab::clock::{RealEnv, monotonic_ns};
use sleeplab::lab::WaitStrategy;
use sleeplab::precise::SleepReport;
use sleeplab::precise::asleep::{AsyncTimer, ReactorInterval, ReactorTimer};
use sleeplab::wait::ThreadUsage;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// Every async contender: name and one line on what it does.
pub const CONTENDERS: &[(&str, &str)] = &[
    (
        "asleep",
        "sleeplab::precise::asleep::sleep_until(deadline).await (tokio current-thread): one timer thread sleeps precisely to the earliest deadline",
    ),
    (
        "asleep-reactor",
        "sleeplab::precise::asleep::ReactorTimer::sleep_until(deadline).await (tokio current-thread): two timerfds in the runtime's reactor armed for the two earliest deadlines minus a learned margin, which its dispatch task spins on the executor's thread",
    ),
    (
        "asleep-interval",
        "sleeplab::precise::asleep::ReactorInterval::new_at(first deadline, P), tick().await per frame (tokio current-thread): one periodic timerfd in the runtime's reactor, expiring a learned margin before each tick, which the task spins on its own thread",
    ),
    (
        "tokio-sleep-until",
        "tokio::time::sleep_until(deadline).await on a current-thread runtime (the 1 ms wheel)",
    ),
    (
        "tokio-interval-burst",
        "tokio::time::interval_at(first deadline, P), MissedTickBehavior::Burst, tick().await per frame",
    ),
    (
        "tokio-interval-delay",
        "tokio::time::interval_at(first deadline, P), MissedTickBehavior::Delay, tick().await per frame",
    ),
    (
        "async-io-timer",
        "async_io::Timer::at(deadline).await in async_io::block_on (smol's timer)",
    ),
    (
        "tokio-timerfd",
        "an absolute timerfd in tokio's reactor (AsyncFd), readable().await: the tokio-timerfd crate's way",
    ),
    (
        "tokio-spin-sleep",
        "spin_sleep::SpinSleeper::default().sleep_until(deadline) in tokio::task::spawn_blocking, awaited",
    ),
];

/// The names of [`CONTENDERS`].
pub fn names() -> Vec<&'static str> {
    CONTENDERS.iter().map(|(n, _)| *n).collect()
}

/// The description of `name`, if it is an async contender.
pub fn description(name: &str) -> Option<&'static str> {
    CONTENDERS.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
}

/// The same instant as `deadline_ns` (monotonic_ns's time line), never earlier: the
/// offset is read clock first, `Instant` second.
fn instant_at(deadline_ns: u64) -> Instant {
    let now_ns = monotonic_ns();
    Instant::now() + Duration::from_nanos(deadline_ns.saturating_sub(now_ns))
}

/// The thread ids a runtime's threads report when they start.
#[derive(Clone, Default)]
struct Tids(Arc<Mutex<Vec<libc::pid_t>>>);

impl Tids {
    fn cpu_ns(&self) -> u64 {
        let tids = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tids.iter()
            .filter_map(|&t| ThreadUsage::of_thread(t))
            .map(|u| u.cpu_ns)
            .sum()
    }
}

/// A current-thread runtime whose helper threads (the blocking pool) report their ids.
fn runtime(tids: &Tids) -> Result<Runtime, String> {
    let t = tids.clone();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_keep_alive(Duration::from_secs(3600))
        .on_thread_start(move || {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            t.0.lock().unwrap_or_else(|e| e.into_inner()).push(tid);
        })
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

/// How one contender awaits a deadline on its runtime; returns the clock read after it.
enum Kind {
    Asleep(AsyncTimer),
    AsleepReactor(ReactorTimer),
    SleepUntil,
    Interval {
        flavor: Flavor,
        /// The interval, the deadline of its last tick and its period, once two frames
        /// of one schedule gave the period.
        run: Option<(AnyInterval, u64, u64)>,
        last: Option<u64>,
    },
    AsyncIo,
    Timerfd,
    SpinSleep,
}

/// An async contender.
struct AsyncContender {
    name: &'static str,
    rt: Runtime,
    tids: Tids,
    kind: Kind,
}

/// Builds the async contender `name`.
pub fn build(name: &str) -> Result<Box<dyn WaitStrategy<RealEnv> + Send>, String> {
    let Some(&(name, _)) = CONTENDERS.iter().find(|(n, _)| *n == name) else {
        return Err(format!("unknown async contender {name:?}"));
    };
    let tids = Tids::default();
    let rt = runtime(&tids)?;
    let kind = match name {
        "asleep" => Kind::Asleep(AsyncTimer::new()),
        "asleep-reactor" => Kind::AsleepReactor({
            let _in_runtime = rt.enter();
            ReactorTimer::new().map_err(|e| e.to_string())?
        }),
        "tokio-sleep-until" => Kind::SleepUntil,
        "tokio-interval-burst" | "tokio-interval-delay" | "asleep-interval" => Kind::Interval {
            flavor: match name {
                "tokio-interval-burst" => Flavor::TokioBurst,
                "tokio-interval-delay" => Flavor::TokioDelay,
                _ => {
                    let _in_runtime = rt.enter();
                    // The interval's timerfd is made per schedule: fail here, not mid-run.
                    ReactorInterval::new(Duration::from_millis(1)).map_err(|e| e.to_string())?;
                    Flavor::Asleep(ReactorTimer::new().map_err(|e| e.to_string())?)
                }
            },
            run: None,
            last: None,
        },
        "async-io-timer" => Kind::AsyncIo,
        "tokio-timerfd" => Kind::Timerfd,
        _ => Kind::SpinSleep,
    };
    Ok(Box::new(AsyncContender {
        name,
        rt,
        tids,
        kind,
    }))
}

impl AsyncContender {
    /// Awaits `deadline` the contender's way; the clock read after the `.await`.
    fn wake_at(&mut self, deadline: u64) -> u64 {
        match &mut self.kind {
            Kind::Asleep(timer) => self.rt.block_on(async {
                timer.sleep_until_ns(deadline).await;
                monotonic_ns()
            }),
            Kind::AsleepReactor(timer) => self.rt.block_on(async {
                timer.sleep_until_ns(deadline).await;
                monotonic_ns()
            }),
            Kind::SleepUntil => self.rt.block_on(async {
                tokio::time::sleep_until(instant_at(deadline).into()).await;
                monotonic_ns()
            }),
            Kind::Interval { flavor, run, last } => {
                interval_tick(&self.rt, flavor, run, last, deadline)
            }
            Kind::AsyncIo => async_io::block_on(async {
                async_io::Timer::at(instant_at(deadline)).await;
                monotonic_ns()
            }),
            Kind::Timerfd => self.rt.block_on(async {
                super::timerfd_future::sleep_until(deadline).await;
                monotonic_ns()
            }),
            Kind::SpinSleep => self.rt.block_on(async {
                let target = instant_at(deadline);
                let _ = tokio::task::spawn_blocking(move || {
                    spin_sleep::SpinSleeper::default().sleep_until(target)
                })
                .await;
                monotonic_ns()
            }),
        }
    }
}

/// Which interval an interval contender ticks.
enum Flavor {
    TokioBurst,
    TokioDelay,
    /// Ours, with the reactor timer that waits for a schedule's first frame (before the
    /// period is known; tokio's flavors wait for it with tokio's `sleep_until`).
    Asleep(ReactorTimer),
}

/// A running interval of one of the [`Flavor`]s.
enum AnyInterval {
    Tokio(tokio::time::Interval),
    /// Boxed: its margin estimator's window makes it large.
    Asleep(Box<ReactorInterval>),
}

impl AnyInterval {
    /// The interval of `flavor` on `rt`, first tick at `first_ns`, then every `period_ns`.
    fn new(rt: &Runtime, flavor: &Flavor, first_ns: u64, period_ns: u64) -> Result<Self, String> {
        use tokio::time::MissedTickBehavior;
        let _in_runtime = rt.enter();
        let behavior = match flavor {
            Flavor::TokioBurst => MissedTickBehavior::Burst,
            Flavor::TokioDelay => MissedTickBehavior::Delay,
            Flavor::Asleep(_) => {
                return ReactorInterval::new_at_ns(first_ns, period_ns)
                    .map(|iv| AnyInterval::Asleep(Box::new(iv)))
                    .map_err(|e| e.to_string());
            }
        };
        let mut iv =
            tokio::time::interval_at(instant_at(first_ns).into(), Duration::from_nanos(period_ns));
        iv.set_missed_tick_behavior(behavior);
        Ok(AnyInterval::Tokio(iv))
    }

    /// Awaits the next tick on `rt`; the clock read after it.
    fn tick(&mut self, rt: &Runtime) -> u64 {
        rt.block_on(async {
            match self {
                AnyInterval::Tokio(iv) => {
                    iv.tick().await;
                }
                AnyInterval::Asleep(iv) => {
                    iv.tick().await;
                }
            }
            monotonic_ns()
        })
    }
}

/// One frame of an interval contender. A frame that continues the schedule of the one
/// before (deadline = last + P) ticks the interval; the first frame of a schedule waits
/// with the flavor's one-shot sleep, and the second creates the interval at its deadline
/// with the period the two gave.
///
/// # Panics
/// If the interval cannot be made (a timerfd refused after one was made in [`build`]):
/// a frame is never measured on another mechanism than the contender names.
fn interval_tick(
    rt: &Runtime,
    flavor: &Flavor,
    run: &mut Option<(AnyInterval, u64, u64)>,
    last: &mut Option<u64>,
    deadline: u64,
) -> u64 {
    let continues = matches!(run, Some((_, prev, p)) if prev.saturating_add(*p) == deadline);
    if !continues {
        *run = None;
        if let Some(prev) = last.filter(|&prev| prev < deadline) {
            let period = deadline - prev;
            let iv = AnyInterval::new(rt, flavor, deadline, period)
                .unwrap_or_else(|e| panic!("the interval of an interval contender: {e}"));
            *run = Some((iv, prev, period));
        }
    }
    *last = Some(deadline);
    match run {
        Some((iv, prev, _)) => {
            *prev = deadline;
            iv.tick(rt)
        }
        None => rt.block_on(async {
            match flavor {
                Flavor::Asleep(timer) => timer.sleep_until_ns(deadline).await,
                _ => tokio::time::sleep_until(instant_at(deadline).into()).await,
            }
            monotonic_ns()
        }),
    }
}

impl WaitStrategy<RealEnv> for AsyncContender {
    fn name(&self) -> &'static str {
        self.name
    }

    fn sleep_until(&mut self, _env: &mut RealEnv, deadline: u64) -> SleepReport {
        let start = monotonic_ns();
        let awoke = if deadline > start {
            self.wake_at(deadline)
        } else {
            start
        };
        // Never early, whatever a runtime's conversion of the deadline did; a runtime
        // that woke early shows as the spin that covered it (`spin_ns` from `awoke`).
        let mut woke = awoke;
        while woke < deadline {
            woke = monotonic_ns();
        }
        SleepReport::from_instants(start, deadline, awoke, woke, None, 0)
    }

    fn helper_cpu_ns(&self) -> u64 {
        let own = match &self.kind {
            Kind::Asleep(timer) => timer.stats().cpu_ns,
            Kind::AsyncIo => threads_named("async-io"),
            _ => 0,
        };
        own + self.tids.cpu_ns()
    }
}

/// CPU time so far of this process's threads whose name starts with `prefix`, ns.
fn threads_named(prefix: &str) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| {
            let tid: libc::pid_t = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            comm.starts_with(prefix).then_some(tid)
        })
        .filter_map(ThreadUsage::of_thread)
        .map(|u| u.cpu_ns)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every async contender's runtime wakes at or after each deadline of a schedule
    /// (its interval formed from the first two) with no spin to cover an early wake,
    /// and says what its helpers spent.
    #[test]
    fn every_async_contender_is_never_early() {
        let mut env = RealEnv;
        for name in names() {
            assert!(description(name).is_some());
            let mut c = build(name).unwrap();
            assert_eq!(c.name(), name);
            let start = monotonic_ns();
            for k in 1..=6u64 {
                let deadline = start + k * 2_000_000;
                let r = c.sleep_until(&mut env, deadline);
                // The runtime's own wake, before any cover-up spin: never early.
                assert_eq!(r.spin_ns, 0, "{name} woke early at frame {k}: {r:?}");
                assert!(r.woke_ns >= r.deadline_ns, "{name} early at frame {k}");
            }
            // A deadline already passed returns at once.
            let r = c.sleep_until(&mut env, 0);
            assert_eq!(r.lateness_ns, r.woke_ns);
            let _ = c.helper_cpu_ns();
        }
        assert!(build("nope").is_err());
    }
}
