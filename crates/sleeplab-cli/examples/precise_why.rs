//! Why a precise sleeper's frame is late on this host, read from its own reports, for
//! `scripts/bench-precise-why.sh`: at 60 Hz, blocks of frames of several lanes
//! interleaved (their order rotating from block to block), each lane on a thread of its
//! own at 1 ns timer slack with the scheduler slice its strategy asks for, each strategy
//! built at the start of the run and used from its first frame (a cold start, as a
//! user's loop has).
//!
//! A lane is a contender setting (`clock-nanosleep-abs`, `spin`, `fixed-margin:500us`,
//! `precise`, `precise:q=0.998`, `precise:host=ignore`, `precise:prior=1ms`…; see
//! `StrategySetting`), so the sleeper's default stands beside the variants that test
//! one candidate cause each: the quantile its margin covers, its reaction to the host
//! taking the spinning CPU, its prior.
//!
//! Per frame it keeps what the wait reported: the lateness, the margin it planned, the
//! margin the learned quantile wanted before the budget and the contended regimes cut it,
//! whether the budget cut it, the native sleep's oversleep, how long it spun, and the
//! longest gap of the spin (the CPU taken away while spinning). The noise probe (`sleeplab::lab::noise`)
//! runs on each CPU before and after. Prints one JSON document;
//! `scripts/bench_precise_why.py` turns runs of it into the table and the causes.
//!
//! ```text
//! cargo run --release -p sleeplab-cli --example precise_why -- \
//!     --frames 1800 --block 100 -s precise -s precise:q=0.998 -s clock-nanosleep-abs
//! ```
//! Bad input: one line naming it, exit 2.

#[path = "host_share/noise.rs"]
mod noise;

use clap::Parser;
use noise::{loadavg, probe, with_machine};
use serde_json::{Value, json};
use sleeplab::clock::{RealEnv, monotonic_ns, thread_cpu_ns};
use sleeplab::lab::{NoiseConfig, WaitStrategy, strategy_by_setting};
use sleeplab::system::{set_sched_slice_ns, set_timer_slack_ns};
use std::sync::mpsc;
use std::time::Duration;

/// The lanes run when no `-s` is given.
const DEFAULT_LANES: [&str; 8] = [
    "clock-nanosleep-abs",
    "spin",
    "fixed-margin:300us",
    "fixed-margin:500us",
    "precise",
    "precise:q=0.998",
    "precise:host=ignore",
    "precise:prior=1ms",
];

#[derive(Parser)]
struct Args {
    /// Frames per lane in the run.
    #[arg(long, default_value_t = 1800)]
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
    /// A lane: a contender setting (repeat for more); default: the plain absolute
    /// sleep, a pure spin, fixed margins of 300 µs and 500 µs, the sleeper and three
    /// variants.
    #[arg(short = 's', long = "setting")]
    settings: Vec<String>,
}

/// What a lane did in one block: per frame its report's fields, and the thread's CPU and
/// wall time over the block.
#[derive(Default)]
struct Block {
    lateness_ns: Vec<u64>,
    margin_ns: Vec<u64>,
    wanted_margin_ns: Vec<u64>,
    budget_limited: Vec<bool>,
    oversleep_ns: Vec<Option<u64>>,
    spin_gap_ns: Vec<u64>,
    spin_ns: Vec<u64>,
    cpu_ns: u64,
    wall_ns: u64,
}

impl Block {
    fn json(&self) -> Value {
        json!({
            "lateness_ns": self.lateness_ns,
            "margin_ns": self.margin_ns,
            "wanted_margin_ns": self.wanted_margin_ns,
            "budget_limited": self.budget_limited,
            "oversleep_ns": self.oversleep_ns,
            "spin_gap_ns": self.spin_gap_ns,
            "spin_ns": self.spin_ns,
            "cpu_ns": self.cpu_ns,
            "wall_ns": self.wall_ns,
        })
    }
}

/// A lane's thread: builds its strategy, then runs a block of frames each time it is
/// asked, on a grid that starts a period after the block begins.
fn lane(
    mut strategy: Box<dyn WaitStrategy<RealEnv> + Send>,
    period_ns: u64,
    jobs: mpsc::Receiver<u64>,
    done: mpsc::Sender<Block>,
) {
    let _ = set_timer_slack_ns(1);
    let _ = set_sched_slice_ns(strategy.sched_slice_ns());
    let mut env = RealEnv;
    for frames in jobs {
        let mut b = Block::default();
        let (cpu0, wall0) = (thread_cpu_ns(), monotonic_ns());
        let helper0 = strategy.helper_cpu_ns();
        let t0 = wall0 + period_ns;
        for k in 0..frames {
            let deadline = t0 + k * period_ns;
            let r = strategy.sleep_until(&mut env, deadline);
            let end = monotonic_ns();
            b.lateness_ns.push(end.saturating_sub(deadline));
            b.margin_ns.push(r.margin_ns);
            b.wanted_margin_ns.push(r.wanted_margin_ns);
            b.budget_limited.push(r.budget_limited);
            b.oversleep_ns.push(r.native_oversleep_ns);
            b.spin_gap_ns.push(r.max_spin_gap_ns);
            b.spin_ns.push(r.spin_ns);
        }
        b.cpu_ns = thread_cpu_ns() - cpu0 + (strategy.helper_cpu_ns() - helper0);
        b.wall_ns = monotonic_ns() - wall0;
        if done.send(b).is_err() {
            return;
        }
    }
}

fn bad(what: impl std::fmt::Display) -> ! {
    eprintln!("precise_why: {what}");
    std::process::exit(2);
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.frames == 0 || args.block == 0 || args.hz == 0 || args.block > args.frames {
        bad("--frames, --block and --hz must be positive, --block at most --frames");
    }
    let settings: Vec<String> = if args.settings.is_empty() {
        DEFAULT_LANES.iter().map(|s| s.to_string()).collect()
    } else {
        args.settings.clone()
    };
    for (i, s) in settings.iter().enumerate() {
        if let Err(e) = strategy_by_setting::<RealEnv>(s) {
            bad(format_args!("-s {s}: {e}"));
        }
        if settings[..i].contains(s) {
            bad(format_args!("-s {s}: named twice"));
        }
    }
    let period_ns = 1_000_000_000 / args.hz;
    let config = NoiseConfig::for_ns(u64::try_from(args.probe.as_nanos())?);
    let load_before = loadavg();
    let before = probe(&config)?;
    let mut lanes = Vec::new();
    for s in &settings {
        let (job_tx, job_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let strategy = strategy_by_setting::<RealEnv>(s)?;
        let handle = std::thread::Builder::new()
            .name(s.chars().take(15).collect())
            .spawn(move || lane(strategy, period_ns, job_rx, done_tx))?;
        lanes.push((s.clone(), job_tx, done_rx, handle));
    }
    let blocks = args.frames / args.block;
    let mut out_blocks = Vec::new();
    for b in 0..blocks {
        // Each lane runs first, second, … equally often.
        let n = lanes.len();
        let order: Vec<usize> = (0..n).map(|k| (k + b as usize) % n).collect();
        let mut results = serde_json::Map::new();
        for &i in &order {
            let (name, jobs, done, _) = &lanes[i];
            jobs.send(args.block)?;
            results.insert(name.clone(), done.recv()?.json());
        }
        eprintln!("precise_why: block {}/{blocks}", b + 1);
        out_blocks.push(json!({
            "order": order.iter().map(|&i| lanes[i].0.clone()).collect::<Vec<_>>(),
            "results": results,
        }));
    }
    for (_, jobs, _, handle) in lanes {
        drop(jobs);
        let _ = handle.join();
    }
    let after = probe(&config)?;
    let Value::Object(fields) = json!({
        "hz": args.hz,
        "frames": blocks * args.block,
        "block": args.block,
        "probe_ns": config.duration_ns,
        "threshold_ns": config.threshold_ns,
        "lanes": settings,
        "noise": { "before": before, "after": after },
        "loadavg": { "before": load_before, "after": loadavg() },
        "blocks": out_blocks,
    }) else {
        unreachable!("a JSON object literal")
    };
    let doc = with_machine(fields);
    println!("{doc}");
    Ok(())
}
