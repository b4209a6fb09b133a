//! Every wait mechanism under a signal storm: a thread sends SIGUSR1 (no-op handler,
//! installed WITHOUT SA_RESTART, so blocking calls really fail with EINTR) to the waiting
//! thread at ~10 kHz while each one-shot mechanism waits 0.2–3 ms, 20 times per duration,
//! and each periodic mechanism runs 1 ms ticks, tick by tick and in batches. Every
//! interrupted wait must resume toward its deadline: zero early returns. The overhead
//! (median with the storm − median without) is printed, never asserted.
//!
//! Its own test binary, so the handler is installed in no other test's process.

mod support;

use std::sync::Mutex;
use std::sync::atomic::Ordering;

use sleeplab::clock::monotonic_ns;
use sleeplab::wait::periodic::{self, Options};
use sleeplab::wait::{Waiter, mechanisms};
use support::periodic::{early_wakes, run_periodic};
use support::storm::{DELIVERED, Storm, install_handler_without_restart};

const DURATIONS: [u64; 3] = [200_000, 1_000_000, 3_000_000];

/// The tests of this binary take turns, so each counts only its own storm's signals.
static ONE_STORM_AT_A_TIME: Mutex<()> = Mutex::new(());
const REPS: usize = 20;

/// Runs every mechanism at every duration; returns (early returns, median elapsed per
/// (mechanism, duration)).
fn run_all() -> (Vec<String>, Vec<(&'static str, u64, u64)>) {
    let mut early = Vec::new();
    let mut medians = Vec::new();
    for m in mechanisms() {
        // timerfd-interval follows its own grid (see the wait module docs) and yield
        // takes no duration: neither has a per-call deadline to check.
        if m.name == "timerfd-interval" || !m.takes_duration {
            continue;
        }
        let Ok(mut w) = Waiter::new(m.name) else {
            continue;
        };
        for d in DURATIONS {
            let mut samples = Vec::with_capacity(REPS);
            for _ in 0..REPS {
                let t0 = monotonic_ns();
                w.wait(d);
                let dt = monotonic_ns() - t0;
                if dt < d {
                    early.push(format!("{} waited {dt} ns of {d}", m.name));
                }
                samples.push(dt);
            }
            samples.sort_unstable();
            medians.push((m.name, d, samples[REPS / 2]));
        }
    }
    (early, medians)
}

#[test]
fn no_mechanism_returns_early_under_a_signal_storm() {
    let _turn = ONE_STORM_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    install_handler_without_restart();
    let (early_quiet, quiet) = run_all();
    assert!(
        early_quiet.is_empty(),
        "early without signals: {early_quiet:?}"
    );

    let before = DELIVERED.load(Ordering::Relaxed);
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() };
    let storm = Storm::start(me, 100_000);
    let t0 = monotonic_ns();
    let (early, stormy) = run_all();
    let secs = (monotonic_ns() - t0) as f64 / 1e9;
    let sent = storm.stop();
    let delivered = DELIVERED.load(Ordering::Relaxed) - before;

    assert!(early.is_empty(), "early returns under the storm: {early:?}");
    assert!(delivered > 500, "only {delivered} signals delivered");
    eprintln!(
        "signal storm: {sent} sent, {delivered} delivered in {secs:.1} s ({:.1} kHz); 0 early returns",
        sent as f64 / secs / 1e3
    );
    eprintln!("median overhead of the storm (stormy − quiet), per mechanism at 1 ms:");
    for ((name, d, q), (_, _, s)) in quiet.iter().zip(&stormy) {
        if *d == 1_000_000 {
            eprintln!("  {name:<20} {:>+9.1} µs", (*s as f64 - *q as f64) / 1e3);
        }
    }
}

/// Every periodic mechanism, 30 ticks of 1 ms tick by tick and then in batches; returns
/// the early wakes found, by mechanism.
fn run_periodic_all() -> Vec<String> {
    let (period, ticks) = (1_000_000, 30);
    let mut early = Vec::new();
    for m in periodic::mechanisms() {
        let Ok(mut timer) = m.build(&Options::default()) else {
            continue;
        };
        for batches in [false, true] {
            let (t0, mut wakes) = run_periodic(&mut timer, period, ticks, batches);
            let covered: u64 = wakes.iter().map(|w| w.expirations).sum();
            if covered < ticks && m.exact_counts {
                early.push(format!("{}: stopped after {covered} deadlines", m.name));
            }
            for (i, ns) in early_wakes(m.exact_counts, t0, period, &mut wakes) {
                early.push(format!(
                    "{} (batches {batches}): wake {i} {ns} ns early",
                    m.name
                ));
            }
        }
    }
    early
}

#[test]
fn no_periodic_timer_wakes_early_under_a_signal_storm() {
    let _turn = ONE_STORM_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    install_handler_without_restart();
    let quiet = run_periodic_all();
    assert!(quiet.is_empty(), "early without signals: {quiet:?}");

    let before = DELIVERED.load(Ordering::Relaxed);
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() };
    let storm = Storm::start(me, 100_000);
    let stormy = run_periodic_all();
    let sent = storm.stop();
    let delivered = DELIVERED.load(Ordering::Relaxed) - before;

    assert!(stormy.is_empty(), "early under the storm: {stormy:?}");
    assert!(delivered > 100, "only {delivered} signals delivered");
    eprintln!("periodic timers under a storm: {sent} sent, {delivered} delivered; 0 early");
}
