//! Three async tasks on a 2-worker tokio runtime pace themselves at 60 Hz, 250 Hz and
//! 1 kHz with `sleeplab::precise::asleep::sleep_until`, next to one that uses
//! `tokio::time::sleep_until` at 1 kHz; each prints how late its wakes were (the clock
//! read on the first line after the `.await`, minus the deadline) and the timer thread
//! says what it cost. With the cargo feature `tokio`, two more tasks pace at 60 Hz and
//! 1 kHz on a `ReactorTimer` (timerfds in the runtime's reactor), and it says what its
//! dispatch task spun; and one ticks at 1 kHz on a `ReactorInterval` (one periodic
//! timerfd), which says how often it armed its timer and what it spun.
//!
//!     cargo run --release -p sleeplab --example async_sleep
//!     cargo run --release -p sleeplab --features tokio --example async_sleep

use sleeplab::clock::monotonic_ns;
use sleeplab::precise::asleep;
use std::time::{Duration, Instant};

/// Whose sleep a task awaits.
#[derive(Clone)]
enum Timer {
    /// The process-wide timer thread's.
    Asleep,
    /// tokio's wheel.
    Tokio,
    /// A timerfd in this runtime's reactor.
    #[cfg(feature = "tokio")]
    Reactor(asleep::ReactorTimer),
    /// A periodic timerfd in this runtime's reactor, made by the task.
    #[cfg(feature = "tokio")]
    Interval,
}

/// Wakes `frames` times on the grid `start + k·period`; the lateness of each wake, ns.
async fn paced(period: Duration, frames: u32, timer: Timer) -> Vec<u64> {
    let start = Instant::now();
    let mut late = Vec::with_capacity(frames as usize);
    #[cfg(feature = "tokio")]
    let mut interval = matches!(timer, Timer::Interval).then(|| {
        asleep::ReactorInterval::new_at(start + period, period).expect("a timerfd on this runtime")
    });
    for k in 1..=frames {
        let deadline = start + period * k;
        match &timer {
            Timer::Asleep => asleep::sleep_until(deadline).await,
            Timer::Tokio => tokio::time::sleep_until(deadline.into()).await,
            #[cfg(feature = "tokio")]
            Timer::Reactor(r) => r.sleep_until(deadline).await,
            #[cfg(feature = "tokio")]
            Timer::Interval => {
                if let Some(iv) = interval.as_mut() {
                    iv.tick().await;
                }
            }
        }
        late.push(
            Instant::now()
                .saturating_duration_since(deadline)
                .as_nanos() as u64,
        );
    }
    #[cfg(feature = "tokio")]
    if let Some(st) = interval.map(|iv| iv.stats()) {
        println!(
            "reactor interval: {} ticks, its timerfd armed {} times, margin {:.1} µs, spun {:.1} µs a tick",
            st.ticks,
            st.arms,
            st.margin_ns as f64 / 1e3,
            st.spun_ns as f64 / 1e3 / st.ticks.max(1) as f64
        );
    }
    late
}

fn summary(name: &str, mut late: Vec<u64>) {
    late.sort_unstable();
    let at = |q: f64| late[((late.len() - 1) as f64 * q).round() as usize] as f64 / 1e3;
    println!(
        "{name:<28} {:>5} wakes  p50 {:>8.1} µs  p99 {:>8.1} µs  max {:>8.1} µs",
        late.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let cpu0 = asleep::global().stats().cpu_ns;
    let t0 = monotonic_ns();
    // (rate, period, frames)
    let hz60 = ("60 Hz", Duration::from_nanos(16_666_667), 120);
    let hz250 = ("250 Hz", Duration::from_millis(4), 500);
    let khz = ("1 kHz", Duration::from_millis(1), 2000);
    #[cfg_attr(not(feature = "tokio"), allow(unused_mut))]
    let mut tasks = vec![
        ("asleep", hz60, Timer::Asleep),
        ("asleep", hz250, Timer::Asleep),
        ("asleep", khz, Timer::Asleep),
        ("tokio::time::sleep_until", khz, Timer::Tokio),
    ];
    #[cfg(feature = "tokio")]
    let reactor = asleep::ReactorTimer::new().expect("a reactor timer on this runtime");
    #[cfg(feature = "tokio")]
    for rate in [hz60, khz] {
        tasks.push(("ReactorTimer", rate, Timer::Reactor(reactor.clone())));
    }
    #[cfg(feature = "tokio")]
    tasks.push(("ReactorInterval", khz, Timer::Interval));
    let tasks: Vec<_> = tasks
        .into_iter()
        .map(|(who, (rate, period, frames), timer)| {
            let task = tokio::spawn(paced(period, frames, timer));
            (format!("{who} {rate}"), task)
        })
        .collect();
    for (name, task) in tasks {
        summary(&name, task.await.expect("task"));
    }
    let wall = monotonic_ns() - t0;
    let stats = asleep::global().stats();
    println!(
        "timer thread: {} sleeps woken, mean {:.1} µs late as it saw them, CPU {:.2} % of a core",
        stats.fired,
        stats.mean_late_ns as f64 / 1e3,
        100.0 * (stats.cpu_ns - cpu0) as f64 / wall as f64
    );
    #[cfg(feature = "tokio")]
    {
        let r = reactor.stats();
        println!(
            "reactor timer: {} sleeps woken, mean {:.1} µs late as it saw them, its spin {:.2} % of a core",
            r.fired,
            r.mean_late_ns as f64 / 1e3,
            100.0 * r.cpu_ns as f64 / wall as f64
        );
    }
}
