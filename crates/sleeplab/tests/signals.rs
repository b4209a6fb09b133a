//! Never early on the real machine under a signal storm: a thread sends SIGUSR1 (no-op
//! handler, installed without SA_RESTART) to the sleeping thread every 150 µs (~6.7 kHz) while
//! `PreciseSleeper` and every strategy sleep 200 times for 0.2–2 ms. Every interrupted
//! native sleep must be resumed: zero early returns. No latency bound is asserted.
//!
//! Its own test binary, so the handler is installed in no other test's process.

mod support;

use std::sync::atomic::Ordering;

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::lab::{strategies, strategy_by_name};
use sleeplab::precise::PreciseSleeper;
use support::storm::{DELIVERED, Storm, install_handler_without_restart};

fn wait_ns(i: u64) -> u64 {
    200_000 + (i * 7_919 * 13) % 1_800_000
}

#[test]
fn no_early_returns_under_a_signal_storm() {
    install_handler_without_restart();
    // SAFETY: pthread_self has no preconditions.
    let me = unsafe { libc::pthread_self() };
    let storm = Storm::start(me, 150_000);

    // The storm is real: plain native sleeps do get cut short.
    let mut env = RealEnv;
    let mut cut_short = 0;
    for _ in 0..30 {
        let deadline = env.now() + 2_000_000;
        env.sleep_until(deadline);
        if env.now() < deadline {
            cut_short += 1;
        }
    }

    let mut early = Vec::new();
    let mut sleeper = PreciseSleeper::new();
    for i in 0..200 {
        let r = sleeper.sleep_for_ns(wait_ns(i));
        if r.woke_ns < r.deadline_ns || monotonic_ns() < r.deadline_ns {
            early.push(("PreciseSleeper", i));
        }
    }
    for info in strategies() {
        let mut s = strategy_by_name::<RealEnv>(info.name).unwrap();
        for i in 0..200 {
            let r = s.sleep_for(&mut env, wait_ns(i));
            if r.woke_ns < r.deadline_ns || monotonic_ns() < r.deadline_ns {
                early.push((info.name, i));
            }
        }
    }
    drop(storm);

    let delivered = DELIVERED.load(Ordering::Relaxed);
    assert!(early.is_empty(), "early returns: {early:?}");
    assert!(delivered > 100, "only {delivered} signals were delivered");
    assert!(cut_short > 0, "no native sleep was interrupted");
    eprintln!("{delivered} signals, {cut_short}/30 plain sleeps cut short, 0 early returns");
}
