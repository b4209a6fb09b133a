//! A 60 FPS frame limiter on `Ticker`: runs ~3 s and prints frame-time statistics and
//! the CPU the loop used.
//!
//! ```text
//! cargo run --release -p sleeplab --example frame_limiter [-- SECONDS [WORK_US]]
//! ```
//! `WORK_US` simulates that much busy work per frame (default 0).

use std::time::Duration;

use sleeplab::clock::{monotonic_ns, thread_cpu_ns};
use sleeplab::lab::quantile_ns;
use sleeplab::precise::{MissedTickBehavior, Ticker};

const FPS: u64 = 60;

/// The `q` quantile of `sorted` in µs as sleeplab reports every quantile (linear
/// interpolation, only where `n·(1 − q) ≥ 1`), "–" otherwise; `q = 1` is the maximum.
fn percentile(sorted: &[u64], q: f64) -> String {
    quantile_ns(sorted, q).map_or("–".into(), |v| format!("{:.2}", us(v)))
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let work_us: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let period = Duration::from_nanos(1_000_000_000 / FPS);
    let frames = (seconds * FPS as f64).round().max(2.0) as usize;

    let mut ticker = Ticker::new(period).with_missed_tick_behavior(MissedTickBehavior::Skip);
    let cpu0 = thread_cpu_ns();
    let wall0 = monotonic_ns();
    let mut lateness = Vec::with_capacity(frames);
    let mut frame_error = Vec::with_capacity(frames);
    let mut prev_woke = None;
    for _ in 0..frames {
        let tick = ticker.tick();
        lateness.push(tick.lateness_ns);
        if let Some(prev) = prev_woke {
            let frame_ns: u64 = tick.woke_ns - prev;
            frame_error.push(frame_ns.abs_diff(ticker.period_ns()));
        }
        prev_woke = Some(tick.woke_ns);
        // The "game": busy work for WORK_US.
        let until = monotonic_ns() + work_us * 1_000;
        while monotonic_ns() < until {
            std::hint::spin_loop();
        }
    }
    let cpu = thread_cpu_ns() - cpu0;
    let wall = monotonic_ns() - wall0;

    lateness.sort_unstable();
    frame_error.sort_unstable();
    let mean = |v: &[u64]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    let stats = ticker.sleeper().stats();
    println!(
        "{frames} frames at {FPS} Hz, {:.2} s, timer slack {:?} ns, work {work_us} µs/frame",
        wall as f64 / 1e9,
        ticker.sleeper().timer_slack_ns()
    );
    println!(
        "frame-time |error| µs: mean {:.2}  p50 {}  p99 {}  max {}",
        mean(&frame_error) / 1e3,
        percentile(&frame_error, 0.50),
        percentile(&frame_error, 0.99),
        percentile(&frame_error, 1.0),
    );
    println!(
        "tick lateness   µs: mean {:.2}  p50 {}  p99 {}  max {}",
        mean(&lateness) / 1e3,
        percentile(&lateness, 0.50),
        percentile(&lateness, 0.99),
        percentile(&lateness, 1.0),
    );
    println!(
        "CPU {:.2} % of a core (spin {:.2} ms total), margin now {:.1} µs, stalls {}, missed ticks {}",
        100.0 * cpu as f64 / wall as f64,
        stats.total_spin_ns as f64 / 1e6,
        us(ticker.sleeper().margin_ns()),
        stats.stalls,
        ticker.missed_ticks(),
    );
}
