//! N concurrent sleeping tasks on a tokio multi-thread runtime (2 workers), for
//! `scripts/bench-async.sh`: what a way of sleeping in async code costs as the number of
//! sleeping tasks grows, and how late it wakes them.
//!
//! Task `i` of N sleeps to `t0 + i·SPACING + k·N·SPACING` (k = 1, 2, …): the deadlines of
//! all tasks together are SPACING apart whatever N is (one every millisecond by
//! default), so 1, 100 and 10 000 tasks ask for the same number of wakes per second and
//! differ only in how many are asleep at once. A wake's lateness is the clock read on the
//! first line after the `.await` minus its deadline. A task that wakes after its next
//! deadline skips every deadline already passed and counts each as missed (a frame
//! limiter drops the frame; sleeping to a past deadline would pile the backlog onto every
//! later wake); the interval contenders keep their own missed-tick behaviour, which is
//! what they are measured for. The run is cut into BLOCKS blocks of equal time; per block
//! it prints the wakes and missed deadlines whose deadline fell in it, the p50 and p99
//! lateness of those wakes and the process's CPU time over it (every thread: workers,
//! timer thread, blocking pool, async-io's driver), as one JSON object per line, then a
//! summary line (for ours, `timer_cpu_percent`: the timer thread's CPU, or the reactor
//! timer's spin, over the whole run with its warm-up).
//!
//!     cargo run --release -p sleeplab-cli --example async_tasks -- --contender asleep --tasks 10000
//!
//! Contenders: asleep (ours: the timer thread), asleep-reactor (ours: two timerfds in
//! the runtime's reactor, its margin spun by a dispatch task), tokio-sleep-until,
//! tokio-interval-burst, tokio-interval-delay, async-io-timer, tokio-timerfd (one
//! timerfd per task; the open files limit is raised to its hard maximum),
//! tokio-spin-sleep (spin_sleep in spawn_blocking; at most 500 tasks: tokio's blocking
//! pool runs at most 512 threads).

use clap::Parser;
use sleeplab::clock::{monotonic_ns, process_cpu_ns};
use sleeplab::precise::asleep;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// The way of sleeping (see the module documentation).
    #[arg(long)]
    contender: String,
    /// Concurrent tasks.
    #[arg(long, default_value_t = 1)]
    tasks: u64,
    /// Time between consecutive deadlines of all tasks together, µs.
    #[arg(long, default_value_t = 1000)]
    spacing_us: u64,
    /// Measured time, s (after one period of warm-up).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Blocks the measured time is cut into.
    #[arg(long, default_value_t = 10)]
    blocks: u64,
}

/// Most tasks `tokio-spin-sleep` runs: each sleeping task holds a blocking-pool thread.
const SPIN_SLEEP_MAX_TASKS: u64 = 500;

fn instant_at(deadline_ns: u64) -> Instant {
    let now_ns = monotonic_ns();
    Instant::now() + Duration::from_nanos(deadline_ns.saturating_sub(now_ns))
}

/// One task: sleeps to each of its deadlines before `end`; per deadline, its lateness
/// (`None`: missed, already passed when the task woke for an earlier one).
async fn task(
    contender: &'static str,
    reactor: Option<asleep::ReactorTimer>,
    first: u64,
    period: u64,
    end: u64,
) -> Vec<(u64, Option<u64>)> {
    let mut out = Vec::with_capacity(((end - first) / period + 1) as usize);
    let mut interval = match contender {
        "tokio-interval-burst" | "tokio-interval-delay" => {
            let mut iv =
                tokio::time::interval_at(instant_at(first).into(), Duration::from_nanos(period));
            iv.set_missed_tick_behavior(if contender.ends_with("burst") {
                tokio::time::MissedTickBehavior::Burst
            } else {
                tokio::time::MissedTickBehavior::Delay
            });
            Some(iv)
        }
        _ => None,
    };
    let mut deadline = first;
    while deadline < end {
        match contender {
            "asleep" => asleep::sleep_until_ns(deadline).await,
            "asleep-reactor" => {
                let r = reactor
                    .as_ref()
                    .expect("main makes the reactor timer for its tasks");
                r.sleep_until_ns(deadline).await
            }
            "tokio-sleep-until" => tokio::time::sleep_until(instant_at(deadline).into()).await,
            "async-io-timer" => {
                async_io::Timer::at(instant_at(deadline)).await;
            }
            "tokio-timerfd" => sleeplab_cli::contenders::timerfd_sleep_until(deadline).await,
            "tokio-spin-sleep" => {
                let target = instant_at(deadline);
                let _ = tokio::task::spawn_blocking(move || {
                    spin_sleep::SpinSleeper::default().sleep_until(target)
                })
                .await;
            }
            _ => {
                if let Some(iv) = interval.as_mut() {
                    iv.tick().await;
                }
            }
        }
        let now = monotonic_ns();
        out.push((deadline, Some(now.saturating_sub(deadline))));
        deadline += period;
        if interval.is_none() {
            while deadline <= now && deadline < end {
                out.push((deadline, None));
                deadline += period;
            }
        }
    }
    out
}

/// The wakes' lateness, sorted, and the missed deadlines among `wakes` whose deadline
/// is in `lo..hi`.
fn window(wakes: &[(u64, Option<u64>)], lo: u64, hi: u64) -> (Vec<u64>, usize) {
    let inside = wakes.iter().filter(|(d, _)| *d >= lo && *d < hi);
    let mut late: Vec<u64> = inside.clone().filter_map(|(_, l)| *l).collect();
    late.sort_unstable();
    (late, inside.filter(|(_, l)| l.is_none()).count())
}

/// The q quantile of sorted `v`, where the sample resolves it (the lab's rule and
/// interpolation, `stats::tail_quantile`), as whole ns.
fn quantile(v: &[u64], q: f64) -> Option<u64> {
    sleeplab_stats::tail_quantile(v, q).map(|x| x.round() as u64)
}

fn raise_open_files_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit pointers.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn main() {
    let args = Args::parse();
    let names = sleeplab_cli::contenders::asyncs::names();
    let Some(&contender) = names.iter().find(|c| **c == args.contender) else {
        eprintln!(
            "invalid --contender {}: expected one of {}",
            args.contender,
            names.join(", ")
        );
        std::process::exit(2);
    };
    for (flag, ok, value) in [
        ("--tasks", args.tasks > 0, args.tasks.to_string()),
        (
            "--spacing-us",
            args.spacing_us > 0,
            args.spacing_us.to_string(),
        ),
        ("--blocks", args.blocks > 0, args.blocks.to_string()),
        (
            "--seconds",
            args.seconds.is_finite() && args.seconds > 0.0,
            args.seconds.to_string(),
        ),
    ] {
        if !ok {
            eprintln!("invalid {flag} {value}: must be positive");
            std::process::exit(2);
        }
    }
    let skip = |reason: String| {
        println!(
            "{}",
            serde_json::json!({"contender": contender, "tasks": args.tasks, "skipped": reason})
        );
        std::process::exit(0);
    };
    if contender == "tokio-spin-sleep" && args.tasks > SPIN_SLEEP_MAX_TASKS {
        skip(format!(
            "at most {SPIN_SLEEP_MAX_TASKS} tasks: each sleeping task holds one of tokio's 512 blocking threads"
        ));
    }
    if contender == "tokio-timerfd" {
        raise_open_files_limit();
    }
    let spacing = args.spacing_us * 1_000;
    let period = spacing * args.tasks;
    let measured = (args.seconds * 1e9) as u64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(512)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // Warm-up: one full period (every task sleeps once) before the measured window.
    let t0 = monotonic_ns() + 20_000_000;
    let start = t0 + period;
    let end = start + measured;
    // The block boundaries' process CPU, read by a thread that sleeps to each of them.
    let bounds: Vec<u64> = (0..=args.blocks)
        .map(|b| start + measured * b / args.blocks)
        .collect();
    let sampler = {
        let bounds = bounds.clone();
        std::thread::spawn(move || {
            bounds
                .iter()
                .map(|&b| {
                    std::thread::sleep(Duration::from_nanos(b.saturating_sub(monotonic_ns())));
                    (monotonic_ns(), process_cpu_ns())
                })
                .collect::<Vec<_>>()
        })
    };
    let run_start = monotonic_ns();
    let (wakes, timer_cpu_ns): (Vec<(u64, Option<u64>)>, Option<u64>) = rt.block_on(async {
        // One reactor timer for every task, on this runtime.
        let reactor = (contender == "asleep-reactor")
            .then(|| asleep::ReactorTimer::new().expect("a reactor timer on the runtime"));
        let handles: Vec<_> = (0..args.tasks)
            .map(|i| {
                let first = t0 + (i + 1) * spacing;
                tokio::spawn(task(contender, reactor.clone(), first, period, end))
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.await.expect("task"));
        }
        // Our timers' own CPU: the timer thread's, or the reactor timer's spin.
        let timer_cpu_ns = match (contender, &reactor) {
            ("asleep", _) => Some(asleep::global().stats().cpu_ns),
            (_, Some(r)) => Some(r.stats().cpu_ns),
            _ => None,
        };
        (all, timer_cpu_ns)
    });
    let run_wall = monotonic_ns().saturating_sub(run_start).max(1);
    let cpu = sampler.join().expect("sampler");
    let mut blocks = Vec::new();
    for b in 0..args.blocks as usize {
        let (lo, hi) = (bounds[b], bounds[b + 1]);
        let (late, missed) = window(&wakes, lo, hi);
        let wall = cpu[b + 1].0.saturating_sub(cpu[b].0).max(1);
        let cpu_pct = 100.0 * cpu[b + 1].1.saturating_sub(cpu[b].1) as f64 / wall as f64;
        blocks.push(serde_json::json!({
            "block": b, "wakes": late.len(), "missed": missed, "p50_ns": quantile(&late, 0.5),
            "p99_ns": quantile(&late, 0.99), "max_ns": late.last(), "cpu_percent": cpu_pct,
        }));
    }
    let (late, missed) = window(&wakes, start, end);
    let total_cpu = 100.0 * cpu[cpu.len() - 1].1.saturating_sub(cpu[0].1) as f64
        / cpu[cpu.len() - 1].0.saturating_sub(cpu[0].0).max(1) as f64;
    println!(
        "{}",
        serde_json::json!({
            "contender": contender, "tasks": args.tasks, "spacing_ns": spacing, "period_ns": period,
            "wakes": late.len(), "missed": missed, "p50_ns": quantile(&late, 0.5), "p99_ns": quantile(&late, 0.99),
            "max_ns": late.last(), "cpu_percent": total_cpu, "blocks": blocks,
            "timer_cpu_percent": timer_cpu_ns.map(|t| 100.0 * t as f64 / run_wall as f64),
        })
    );
}
