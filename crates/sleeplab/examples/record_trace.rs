//! Records a native-oversleep trace: the exact native primitive `PreciseSleeper` uses
//! (`clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` at 1 ns timer slack) on a drift-free
//! frame grid, optionally beside busy threads. Each row is one wait: the native sleep
//! asked for and wake − target, ns (format: `sleeplab::lab::Trace`).
//!
//! ```text
//! cargo run -p sleeplab --release --example record_trace -- \
//!     --load N|cpus|cpus+K --frames K --out FILE [--hz 60] [--conditions TEXT]
//! ```
//! `--load` starts that many threads that spin for the whole recording (`cpus` = one per
//! CPU, `cpus+3` = oversubscribed). `--conditions` is written into the header as it is:
//! say honestly what else the machine was doing. Bad input: one line, exit 2.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use sleeplab::lab::{Trace, TraceWait};
use sleeplab::system::{Fingerprint, set_timer_slack_ns};

/// Grid instants discarded at the start, while the busy threads get going.
const WARMUP_FRAMES: u64 = 30;

struct Args {
    load: usize,
    load_spec: String,
    frames: u64,
    hz: u64,
    out: String,
    conditions: String,
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn parse_load(s: &str) -> Option<usize> {
    match s.strip_prefix("cpus") {
        Some("") => Some(cpus()),
        Some(rest) => rest
            .strip_prefix('+')?
            .parse::<usize>()
            .ok()
            .map(|k| cpus() + k),
        None => s.parse().ok(),
    }
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        load: 0,
        load_spec: "0".into(),
        frames: 3_000,
        hz: 60,
        out: String::new(),
        conditions: "unlabelled".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = || format!("invalid value `{value}` for {flag}");
        match flag.as_str() {
            "--load" => {
                a.load = parse_load(&value).filter(|&n| n <= 256).ok_or_else(bad)?;
                a.load_spec = value.clone();
            }
            "--frames" => a.frames = value.parse().ok().filter(|&n| n > 0).ok_or_else(bad)?,
            "--hz" => {
                a.hz = value
                    .parse()
                    .ok()
                    .filter(|&n| (1..=10_000).contains(&n))
                    .ok_or_else(bad)?
            }
            "--out" => a.out = value,
            "--conditions" => a.conditions = value,
            _ => return Err(format!("unknown option `{flag}`")),
        }
    }
    if a.out.is_empty() {
        return Err("--out FILE is required".into());
    }
    Ok(a)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Records `frames` waits on the grid `start + k·period`; a grid instant already passed
/// when its wait would begin is skipped (counted), as `MissedTickBehavior::Skip` does.
fn record(frames: u64, period: u64) -> (Vec<TraceWait>, u64) {
    let mut env = RealEnv;
    let mut waits = Vec::with_capacity(frames as usize);
    let mut skipped = 0;
    let mut target = env.now() + period;
    let mut k = 0;
    while (waits.len() as u64) < frames {
        let now = env.now();
        if now >= target {
            skipped += 1;
            target += period;
            continue;
        }
        env.sleep_until(target);
        let mut woke = env.now();
        while woke < target {
            // Interrupted: resume toward the same target, as the sleeper does.
            env.sleep_until(target);
            woke = env.now();
        }
        if k >= WARMUP_FRAMES {
            waits.push(TraceWait {
                requested_ns: target - now,
                oversleep_ns: woke - target,
            });
        }
        k += 1;
        target += period;
    }
    (waits, skipped)
}

fn write_whole(path: &str, text: &str) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp{}", std::process::id());
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("record_trace: {e}");
            return ExitCode::from(2);
        }
    };
    let slack = set_timer_slack_ns(1).map_or_else(|e| format!("not set ({e})"), |s| s.to_string());
    let fp = Fingerprint::collect();
    let before = loadavg();
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..args.load)
        .map(|_| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        })
        .collect();
    let t0 = monotonic_ns();
    let (waits, skipped) = record(args.frames, 1_000_000_000 / args.hz);
    let seconds = (monotonic_ns() - t0) as f64 / 1e9;
    stop.store(true, Ordering::Relaxed);
    for t in busy {
        let _ = t.join();
    }
    let fields = [
        (
            "primitive",
            "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)".to_string(),
        ),
        ("timer_slack_ns", slack),
        ("rate_hz", args.hz.to_string()),
        (
            "busy_threads",
            format!("{} (--load {})", args.load, args.load_spec),
        ),
        ("cpus", fp.cpu_count.to_string()),
        ("conditions", args.conditions.clone()),
        ("loadavg_before", before),
        ("loadavg_after", loadavg()),
        ("skipped_grid_instants", skipped.to_string()),
        ("seconds", format!("{seconds:.1}")),
        ("cpu", fp.cpu_model.clone()),
        ("kernel", fp.kernel_release.clone()),
        (
            "virtualization",
            fp.virtualization.clone().unwrap_or_else(|| "none".into()),
        ),
        (
            "recorded_unix",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
                .to_string(),
        ),
    ];
    let trace = Trace::new(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        waits,
    );
    if let Err(e) = write_whole(&args.out, &trace.to_text()) {
        eprintln!("record_trace: cannot write {}: {e}", args.out);
        return ExitCode::FAILURE;
    }
    println!(
        "{} waits at {} Hz beside {} busy threads → {} ({skipped} grid instants skipped)",
        trace.len(),
        args.hz,
        args.load,
        args.out
    );
    ExitCode::SUCCESS
}
