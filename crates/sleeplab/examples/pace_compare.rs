//! Ad-hoc pacing comparison on the real machine: strategies take turns (interleaved,
//! frame k served by strategy k mod n) on one drift-free 60 Hz grid; prints lateness
//! percentiles and CPU per strategy. A quick look, not the `sleeplab pace` experiment.
//!
//! ```text
//! cargo run --release -p sleeplab --example pace_compare -- \
//!     [--frames 600] [--hz 60] [--slack min|default] [NAME ...]
//! ```
//! Default names: precise seed-hybrid fixed-margin. `--slack min` (the default) sets the
//! thread's timer slack to 1 ns for every strategy; `default` leaves it at 50 µs.

use sleeplab::clock::{RealEnv, monotonic_ns, thread_cpu_ns};
use sleeplab::lab::{WaitStrategy, quantile_ns, strategy_by_name};
use sleeplab::system::{set_timer_slack_ns, timer_slack_ns};

/// The `q` quantile of `sorted` in µs as sleeplab reports every quantile (linear
/// interpolation, only where `n·(1 − q) ≥ 1`), "–" otherwise; `q = 1` is the maximum.
fn percentile(sorted: &[u64], q: f64) -> String {
    quantile_ns(sorted, q).map_or("–".into(), |v| format!("{:.2}", v as f64 / 1e3))
}

struct Lane {
    name: String,
    strategy: Box<dyn WaitStrategy<RealEnv> + Send>,
    lateness: Vec<u64>,
    cpu_ns: u64,
    spin_ns: u64,
    last_margin: u64,
}

fn main() {
    let mut frames = 600usize;
    let mut hz = 60u64;
    let mut slack_min = true;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => frames = args.next().and_then(|s| s.parse().ok()).unwrap_or(frames),
            "--hz" => {
                hz = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(hz)
                    .max(1)
            }
            "--slack" => slack_min = args.next().as_deref() != Some("default"),
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = vec![
            "precise".into(),
            "seed-hybrid".into(),
            "fixed-margin".into(),
        ];
    }
    if slack_min {
        if let Err(e) = set_timer_slack_ns(1) {
            eprintln!("could not set timer slack: {e}");
        }
    }
    let mut lanes = Vec::new();
    for name in names {
        match strategy_by_name::<RealEnv>(&name) {
            Ok(strategy) => lanes.push(Lane {
                name,
                strategy,
                lateness: Vec::with_capacity(frames),
                cpu_ns: 0,
                spin_ns: 0,
                last_margin: 0,
            }),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
    let period = 1_000_000_000 / hz;
    let n = lanes.len();
    println!(
        "{hz} Hz, {frames} frames per strategy, interleaved, timer slack {} ns",
        timer_slack_ns()
    );
    let mut env = RealEnv;
    let start = monotonic_ns() + period;
    for k in 0..(frames * n) as u64 {
        let lane = &mut lanes[(k % n as u64) as usize];
        let deadline = start + k * period;
        let cpu0 = thread_cpu_ns();
        let r = lane.strategy.sleep_until(&mut env, deadline);
        lane.cpu_ns += thread_cpu_ns() - cpu0;
        lane.spin_ns += r.spin_ns;
        lane.last_margin = r.margin_ns;
        lane.lateness.push(r.lateness_ns);
    }
    println!(
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>10}",
        "strategy", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "CPU %", "margin µs"
    );
    for lane in &mut lanes {
        lane.lateness.sort_unstable();
        let l = &lane.lateness;
        let us = |q: f64| percentile(l, q);
        let wall = (l.len() as u64 * period) as f64;
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8.3} {:>10.1}",
            lane.name,
            us(0.5),
            us(0.9),
            us(0.99),
            us(0.999),
            us(1.0),
            100.0 * lane.cpu_ns as f64 / wall,
            lane.last_margin as f64 / 1e3,
        );
    }
}
