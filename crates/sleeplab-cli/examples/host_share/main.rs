//! The host's share of a precise sleeper's tail, for `scripts/bench-host.sh`: at 60 Hz,
//! blocks of frames of five contenders interleaved (their order rotating from block to
//! block), each on a thread of its own at 1 ns timer slack, as the independent C loops
//! of the measurement that asked for it were:
//!
//! * `spin`: a pause spin to the deadline (never sleeps);
//! * `clock-nanosleep-abs`: an absolute sleep to the deadline (margin 0);
//! * `margin-300us`, `margin-1ms` (the fixed margins `--margins` names): an absolute
//!   sleep to 300 µs (1 ms) before the deadline, then a pause spin;
//! * `precise`: the library's `PreciseSleeper` with its defaults (it adapts to the
//!   host), one sleeper for the whole run, so it learns across blocks.
//!
//! Before and after the blocks the noise probe (`sleeplab::lab::noise`) spins on each
//! CPU in turn: how much time a thread that never sleeps loses, and how much of it off
//! the guest's run queue (the host's, or on bare metal the hardware's). Prints one JSON
//! document: the probes, and per block and contender every frame's lateness, the
//! thread's CPU time and wall time, and for `precise` its regime before each frame.
//! `scripts/bench_host_report.py` turns runs of it into verdicts.
//!
//!     cargo run --release -p sleeplab-cli --example host_share -- --frames 1200 --block 100

mod noise;

use clap::Parser;
use noise::{loadavg, probe, with_machine};
use serde_json::{Value, json};
use sleeplab::clock::{Env, RealEnv, monotonic_ns, thread_cpu_ns};
use sleeplab::lab::{NoiseConfig, Regime};
use sleeplab::precise::PreciseSleeper;
use sleeplab::system::{set_timer_slack_ns, timer_slack_ns};
use std::sync::mpsc;
use std::time::Duration;

#[derive(Parser)]
struct Args {
    /// Frames per contender in the run.
    #[arg(long, default_value_t = 1200)]
    frames: u64,
    /// Frames per block (a block's p99 needs 100).
    #[arg(long, default_value_t = 100)]
    block: u64,
    /// Frames per second.
    #[arg(long, default_value_t = 60)]
    hz: u64,
    /// How long the noise probe spins on each CPU, before and after.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    probe: Duration,
    /// The fixed margins to run, comma-separated (each a sleep to that long before the
    /// deadline, then a spin): more of them trace the CPU/tail frontier more finely.
    #[arg(long, value_delimiter = ',', default_value = "300us,1ms",
          value_parser = humantime::parse_duration)]
    margins: Vec<Duration>,
}

/// A way of waiting for the next frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contender {
    Spin,
    Plain,
    Margin(u64),
    Precise,
}

impl Contender {
    /// The spin, the plain sleep, each fixed margin in the order given, then `precise`.
    fn all(margins_ns: &[u64]) -> Vec<Contender> {
        let mut all = vec![Contender::Spin, Contender::Plain];
        all.extend(margins_ns.iter().map(|&m| Contender::Margin(m)));
        all.push(Contender::Precise);
        all
    }

    fn name(self) -> String {
        match self {
            Contender::Spin => "spin".into(),
            Contender::Plain => "clock-nanosleep-abs".into(),
            Contender::Margin(ns) if ns % 1_000_000 == 0 => format!("margin-{}ms", ns / 1_000_000),
            Contender::Margin(ns) => format!("margin-{}us", ns / 1_000),
            Contender::Precise => "precise".into(),
        }
    }
}

/// Spins (a pause between clock reads) until the clock reads at or after `deadline`.
fn spin_until(deadline: u64) {
    while monotonic_ns() < deadline {
        std::hint::spin_loop();
    }
}

/// What a worker did in one block.
struct Block {
    lateness_ns: Vec<u64>,
    cpu_ns: u64,
    wall_ns: u64,
    /// `precise`'s regime before each frame: free, contended, stopped, starved.
    regimes: Option<[u64; 4]>,
}

fn regime_index(r: Regime) -> usize {
    match r {
        Regime::Free => 0,
        Regime::Contended { .. } => 1,
        Regime::Stopped { .. } => 2,
        Regime::Starved => 3,
    }
}

/// A contender's thread: runs a block of `frames` frames at a time when asked.
fn worker(c: Contender, period_ns: u64, jobs: mpsc::Receiver<u64>, done: mpsc::Sender<Block>) {
    let _ = set_timer_slack_ns(1);
    let mut precise = (c == Contender::Precise).then(PreciseSleeper::new);
    let mut env = RealEnv;
    for frames in jobs {
        let mut b = Block {
            lateness_ns: Vec::with_capacity(frames as usize),
            cpu_ns: 0,
            wall_ns: 0,
            regimes: precise.as_ref().map(|_| [0; 4]),
        };
        let (cpu0, wall0) = (thread_cpu_ns(), monotonic_ns());
        let t0 = wall0 + period_ns;
        for k in 0..frames {
            let deadline = t0 + k * period_ns;
            match c {
                Contender::Spin => spin_until(deadline),
                Contender::Plain => env.sleep_until(deadline),
                Contender::Margin(m) => {
                    if monotonic_ns() < deadline - m {
                        env.sleep_until(deadline - m);
                    }
                    spin_until(deadline);
                }
                Contender::Precise => {
                    let s = precise.as_mut().expect("built for precise");
                    if let Some(r) = b.regimes.as_mut() {
                        r[regime_index(s.strategy().contention().regime())] += 1;
                    }
                    s.sleep_until_ns(deadline);
                }
            }
            let end = monotonic_ns();
            b.lateness_ns.push(end.saturating_sub(deadline));
        }
        b.cpu_ns = thread_cpu_ns() - cpu0;
        b.wall_ns = monotonic_ns() - wall0;
        if done.send(b).is_err() {
            return;
        }
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.frames == 0 || args.block == 0 || args.hz == 0 || args.block > args.frames {
        eprintln!(
            "host_share: --frames, --block and --hz must be positive, --block at most --frames"
        );
        std::process::exit(2);
    }
    let period_ns = 1_000_000_000 / args.hz;
    let mut margins_ns = Vec::new();
    for m in &args.margins {
        let ns = u64::try_from(m.as_nanos()).unwrap_or(u64::MAX);
        if ns == 0 || ns >= period_ns || margins_ns.contains(&ns) {
            eprintln!(
                "host_share: --margins {}: each margin above zero, below the period \
                 ({period_ns} ns) and named once",
                humantime::format_duration(*m)
            );
            std::process::exit(2);
        }
        margins_ns.push(ns);
    }
    let contenders = Contender::all(&margins_ns);
    let config = NoiseConfig::for_ns(u64::try_from(args.probe.as_nanos())?);
    let _ = set_timer_slack_ns(1);
    let load_before = loadavg();
    let before = probe(&config)?;
    let mut workers = Vec::new();
    for &c in &contenders {
        let (job_tx, job_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(c.name())
            .spawn(move || worker(c, period_ns, job_rx, done_tx))?;
        workers.push((c, job_tx, done_rx, handle));
    }
    let blocks = args.frames / args.block;
    let mut out_blocks = Vec::new();
    for b in 0..blocks {
        // Each contender runs first, second, … equally often.
        let n = workers.len();
        let order: Vec<usize> = (0..n).map(|k| (k + b as usize) % n).collect();
        let mut results = serde_json::Map::new();
        for &i in &order {
            let (c, jobs, done, _) = &workers[i];
            jobs.send(args.block)?;
            let r = done.recv()?;
            results.insert(
                c.name(),
                json!({
                    "lateness_ns": r.lateness_ns,
                    "cpu_ns": r.cpu_ns,
                    "wall_ns": r.wall_ns,
                    "regimes": r.regimes.map(|g| json!({
                        "free": g[0], "contended": g[1], "stopped": g[2], "starved": g[3],
                    })),
                }),
            );
        }
        eprintln!("host_share: block {}/{blocks}", b + 1);
        out_blocks.push(json!({
            "order": order.iter().map(|&i| workers[i].0.name()).collect::<Vec<_>>(),
            "results": results,
        }));
    }
    for (_, jobs, _, handle) in workers {
        drop(jobs);
        let _ = handle.join();
    }
    let after = probe(&config)?;
    let load_after = loadavg();
    let Value::Object(fields) = json!({
        "hz": args.hz,
        "frames": blocks * args.block,
        "block": args.block,
        "timer_slack_ns": timer_slack_ns(),
        "probe_ns": config.duration_ns,
        "threshold_ns": config.threshold_ns,
        "contenders": contenders.iter().map(|c| c.name()).collect::<Vec<_>>(),
        "noise": { "before": before, "after": after },
        "loadavg": { "before": load_before, "after": load_after },
        "blocks": out_blocks,
    }) else {
        unreachable!("a JSON object literal")
    };
    let doc = with_machine(fields);
    println!("{doc}");
    Ok(())
}
