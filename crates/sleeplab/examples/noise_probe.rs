//! What a spinning thread loses on this machine, per CPU, with `sleeplab::lab::noise`:
//! one back-to-back spin (`spin`, a thread that never sleeps), and spins at the end of
//! 60 Hz frames after a native sleep (`after-sleep`, a precise sleeper's last phase),
//! at 1 ns timer slack. Prints, per probe: gaps per second of spinning, the share of the
//! time lost, the gaps' quantiles and the largest, the run-queue share of the lost time,
//! and for spins after sleeps when the gaps began. `simulate --host quiet` is fitted
//! from its output (docs/SIMULATE.md).
//!
//! ```text
//! cargo run -p sleeplab --release --example noise_probe -- \
//!     [--seconds S] [--threshold NS] [--cpus 0,1] [--at-once] [--spin-us US]
//! ```
//! Bad input: one line, exit 2.

use std::process::ExitCode;

use sleeplab::lab::{Noise, NoiseConfig, NoiseSource, ProbeKind, Schedule, probe_cpus};
use sleeplab::system::set_timer_slack_ns;

struct Args {
    seconds: f64,
    threshold_ns: u64,
    cpus: Vec<usize>,
    schedule: Schedule,
    spin_ns: u64,
}

fn parse() -> Result<Args, String> {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut a = Args {
        seconds: 5.0,
        threshold_ns: 5_000,
        cpus: (0..ncpu).collect(),
        schedule: Schedule::InTurn,
        spin_ns: 1_000_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--seconds" => {
                let v = value()?;
                a.seconds = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && *s <= 600.0)
                    .ok_or(format!("--seconds must be in (0, 600], not {v}"))?;
            }
            "--threshold" => {
                let v = value()?;
                a.threshold_ns = v.parse().ok().filter(|&t| t > 0).ok_or(format!(
                    "--threshold must be a positive number of ns, not {v}"
                ))?;
            }
            "--spin-us" => {
                let v = value()?;
                a.spin_ns = v
                    .parse::<u64>()
                    .ok()
                    .filter(|&t| (1..=16_000).contains(&t))
                    .ok_or(format!("--spin-us must be 1..16000, not {v}"))?
                    * 1_000;
            }
            "--cpus" => {
                let v = value()?;
                a.cpus = v
                    .split(',')
                    .map(|c| c.trim().parse().ok().filter(|&c| c < ncpu))
                    .collect::<Option<_>>()
                    .ok_or(format!("--cpus must list CPUs 0..{}, not {v}", ncpu - 1))?;
            }
            "--at-once" => a.schedule = Schedule::AtOnce,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn us(ns: u64) -> String {
    format!("{:.1} µs", ns as f64 / 1e3)
}

fn print(kind: &str, n: &Noise) {
    let q = |q: f64| n.gap_quantile(q).map_or("–".into(), us);
    let rq = n.run_queue_ns.map_or("unknown".into(), |rq| {
        format!("{:.1} %", 100.0 * rq as f64 / n.lost_ns.max(1) as f64)
    });
    println!(
        "CPU {} {kind}: {:.2} s spun, {} gaps ≥ {} ({:.0} a second of spinning), {:.3} % lost; \
         p10 {} p25 {} p50 {} p75 {} p90 {} p99 {} max {}; on the run queue: {rq} of the lost time",
        n.cpu.map_or("-".into(), |c| c.to_string()),
        n.wall_ns as f64 / 1e9,
        n.gaps,
        us(n.threshold_ns),
        n.gaps_per_second(),
        100.0 * n.lost_share(),
        q(0.1),
        q(0.25),
        q(0.5),
        q(0.75),
        q(0.9),
        q(0.99),
        us(n.max_gap_ns),
    );
}

/// For spins after sleeps: the share of gaps that began within each span of the spin.
fn onsets(n: &Noise, spin_ns: u64) {
    let edges = [10_000, 50_000, 100_000, 300_000, u64::MAX];
    let mut counts = [0usize; 5];
    for &at in &n.kept_at_ns {
        counts[edges.iter().position(|&e| at < e).unwrap_or(4)] += 1;
    }
    let total = n.kept_at_ns.len().max(1) as f64;
    let frames = n.wall_ns as f64 / spin_ns as f64;
    println!(
        "  gaps per spin {:.2}; began after the wake: <10 µs {:.0} %, 10-50 µs {:.0} %, 50-100 µs {:.0} %, \
         100-300 µs {:.0} %, ≥300 µs {:.0} %",
        n.gaps as f64 / frames.max(1.0),
        100.0 * counts[0] as f64 / total,
        100.0 * counts[1] as f64 / total,
        100.0 * counts[2] as f64 / total,
        100.0 * counts[3] as f64 / total,
        100.0 * counts[4] as f64 / total,
    );
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("noise_probe: {e}");
            return ExitCode::from(2);
        }
    };
    let config = NoiseConfig {
        duration_ns: (args.seconds * 1e9) as u64,
        threshold_ns: args.threshold_ns,
        ..NoiseConfig::default()
    };
    println!(
        "source of gaps off the run queue: {} (threshold {})",
        NoiseSource::detect().name(),
        us(args.threshold_ns)
    );
    let frame = 16_666_667;
    let kinds = [
        ("spin", ProbeKind::Spin),
        (
            "after-sleep",
            ProbeKind::AfterSleeps {
                period_ns: frame,
                spin_ns: args.spin_ns,
            },
        ),
    ];
    for (name, kind) in kinds {
        // The probing threads inherit the timer slack set here.
        let _ = set_timer_slack_ns(1);
        match probe_cpus(&args.cpus, &config, kind, args.schedule) {
            Ok(all) => {
                for n in &all {
                    print(name, n);
                    if name == "after-sleep" {
                        onsets(n, args.spin_ns);
                    }
                    // The gaps the machine's own tasks did not take: the fit's input.
                    if let Some(off) = n.off_run_queue() {
                        print(&format!("{name}, off the run queue"), &off);
                        if name == "after-sleep" {
                            onsets(&off, args.spin_ns);
                        }
                    }
                }
            }
            Err(e) => {
                eprintln!("noise_probe: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
