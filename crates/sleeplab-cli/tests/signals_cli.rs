//! The CLI's own wait paths under a signal storm: a thread sends SIGUSR1 (no-op handler,
//! installed WITHOUT SA_RESTART, so blocking calls really fail with EINTR) to every other
//! thread of the process every 100 µs (~10 kHz per thread) while
//!
//! * the `spin_sleep` crate itself (`SpinSleeper::default().sleep`) and the CLI's
//!   `spin-sleep` contender (the crate behind the strategy interface) sleep 0.2–2 ms, and
//! * the `sweep` engine (its own measuring thread, the exact code `sleeplab sweep` runs)
//!   measures every supported contender — every OS mechanism and every strategy — at
//!   0.2 ms and 1 ms.
//!
//! Zero early returns are asserted (elapsed < requested), and that signals really
//! arrived; the overhead (median with the storm − median without, per contender at 1 ms)
//! is printed, never asserted. The library's own storm tests (`crates/sleeplab/tests/
//! wait_signals.rs`, `signals.rs`) cover `Waiter`, `PreciseSleeper` and the library
//! strategies directly.
//!
//! Its own test binary (one test), so the handler is installed in no other test's process.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::system::set_timer_slack_ns;
use sleeplab::wait::Support;
use sleeplab_cli::contenders::{self, strategies};
use sleeplab_cli::experiments::Context;
use sleeplab_cli::experiments::sweep::{self, Quota, SweepConfig};

static SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_sigusr1(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

fn install_handler_without_restart() {
    // SAFETY: a zeroed sigaction is valid; the handler only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigusr1 as *const () as libc::sighandler_t;
        sa.sa_flags = 0; // no SA_RESTART
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

/// The thread ids of this process.
fn tids() -> Vec<libc::pid_t> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Sends SIGUSR1 to every other thread of the process every 100 µs (absolute schedule,
/// 1 ns slack; the thread list is re-read every 5 ms, so threads the sweep spawns are
/// hit too) until stopped.
struct Storm {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl Storm {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&sent));
        let handle = std::thread::spawn(move || {
            let _ = set_timer_slack_ns(1);
            let me = gettid();
            // SAFETY: getpid has no preconditions.
            let pid = unsafe { libc::getpid() };
            let mut targets = Vec::new();
            let mut next = monotonic_ns();
            let mut refresh = 0u64;
            while !flag.load(Ordering::Relaxed) {
                if next >= refresh {
                    targets = tids().into_iter().filter(|&t| t != me).collect();
                    refresh = next + 5_000_000;
                }
                for &t in &targets {
                    // SAFETY: tgkill on a thread of our own process; a thread that has
                    // exited since the list was read gets ESRCH, which is harmless.
                    if unsafe { libc::syscall(libc::SYS_tgkill, pid, t, libc::SIGUSR1) } == 0 {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
                next += 100_000;
                // EINTR cannot cut it short: SIGUSR1 is not sent to this thread.
                RealEnv.sleep_until(next);
            }
        });
        Self {
            stop,
            sent,
            handle: Some(handle),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.sent.load(Ordering::Relaxed)
    }
}

const SPIN_SLEEP_WAITS: u64 = 100;

fn wait_ns(i: u64) -> u64 {
    200_000 + (i * 7_919 * 13) % 1_800_000
}

/// The spin_sleep crate directly, then the CLI's `spin-sleep` contender: early returns.
fn spin_sleep_early() -> Vec<String> {
    let mut early = Vec::new();
    let crate_sleeper = spin_sleep::SpinSleeper::default();
    for i in 0..SPIN_SLEEP_WAITS {
        let d = wait_ns(i);
        let t0 = Instant::now();
        crate_sleeper.sleep(Duration::from_nanos(d));
        let dt = t0.elapsed();
        if dt < Duration::from_nanos(d) {
            early.push(format!("spin_sleep crate: {dt:?} of {d} ns"));
        }
    }
    let mut contender = strategies::build(strategies::SPIN_SLEEP).unwrap();
    let mut env = RealEnv;
    for i in 0..SPIN_SLEEP_WAITS {
        let d = wait_ns(i);
        let t0 = monotonic_ns();
        let r = contender.sleep_for(&mut env, d);
        let dt = monotonic_ns() - t0;
        if dt < d || r.woke_ns < r.deadline_ns {
            early.push(format!("spin-sleep contender: {dt} ns of {d} ns"));
        }
    }
    early
}

/// Every supported contender of `sweep`, except `timerfd-interval` (it follows its own
/// period grid, so one call may rightly end before its request: see the wait module).
fn sweep_contenders() -> Vec<String> {
    contenders::all()
        .into_iter()
        .filter(|i| i.support == Support::Supported && i.name != "timerfd-interval")
        .map(|i| i.name.to_string())
        .collect()
}

/// Runs the sweep engine; returns (early returns, medians per (contender, duration)).
fn sweep_once(names: &[String]) -> (Vec<String>, BTreeMap<(String, u64), f64>) {
    let config = SweepConfig {
        mechanisms: names.to_vec(),
        warmup: 1,
        rounds: 2,
        raw_cap: 1000,
        ..SweepConfig::new(&[], &[200_000, 1_000_000], Quota::Iterations { count: 8 })
    };
    let out = sweep::run(&config, &Context::hidden()).unwrap();
    assert!(out.complete);
    let mut early = Vec::new();
    let mut medians = BTreeMap::new();
    for c in &out.data.cells {
        assert_eq!(c.summary.count, 8, "{}", c.mechanism);
        if c.summary.early_count > 0 || c.all_samples_ns.iter().any(|&s| s < c.requested_ns) {
            early.push(format!(
                "sweep {} @ {} ns: {} early (min {} ns)",
                c.mechanism, c.requested_ns, c.summary.early_count, c.summary.min_ns
            ));
        }
        // Warm-up calls too: they are timed the same way.
        if let Some(f) = c.first_calls_ns.iter().find(|&&f| f < c.requested_ns) {
            early.push(format!(
                "sweep {} warm-up: {f} ns of {}",
                c.mechanism, c.requested_ns
            ));
        }
        medians.insert((c.mechanism.clone(), c.requested_ns), c.summary.median_ns);
    }
    (early, medians)
}

#[test]
fn cli_wait_paths_never_return_early_under_a_signal_storm() {
    install_handler_without_restart();
    let names = sweep_contenders();
    assert!(names.iter().any(|n| n == strategies::SPIN_SLEEP));

    let mut early = spin_sleep_early();
    let (quiet_early, quiet) = sweep_once(&names);
    assert!(
        quiet_early.is_empty() && early.is_empty(),
        "early without signals: {quiet_early:?} {early:?}"
    );

    let before = SIGNALS.load(Ordering::Relaxed);
    let storm = Storm::start();
    let t0 = Instant::now();
    early.extend(spin_sleep_early());
    let (stormy_early, stormy) = sweep_once(&names);
    early.extend(stormy_early);
    let secs = t0.elapsed().as_secs_f64();
    let sent = storm.stop();
    let delivered = SIGNALS.load(Ordering::Relaxed) - before;

    assert!(
        early.is_empty(),
        "early returns under the storm: {early:#?}"
    );
    assert!(delivered > 1000, "only {delivered} signals delivered");
    let waits = 2 * SPIN_SLEEP_WAITS + stormy.len() as u64 * (8 + 1);
    eprintln!(
        "CLI signal storm: {sent} sent, {delivered} delivered in {secs:.1} s \
         ({:.1} kHz over all threads); {} contenders in the sweep + spin_sleep ({waits} timed waits); 0 early returns",
        sent as f64 / secs / 1e3,
        names.len(),
    );
    eprintln!("median overhead of the storm at 1 ms (stormy − quiet):");
    for ((name, d), q) in &quiet {
        if *d == 1_000_000 {
            let s = stormy[&(name.clone(), *d)];
            eprintln!("  {name:<22} {:>+9.1} µs", (s - q) / 1e3);
        }
    }
}
