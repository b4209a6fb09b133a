//! What the tracer (`sleeplab_cli::trace::Tracer`, behind `explain` and `--trace`)
//! costs, for `scripts/bench-trace.sh`: blocks of WAITS waits with and without it,
//! interleaved in one run (ROUNDS × each loop × {untraced, traced}, the order of the
//! pair alternating from round to round so neither always runs first), on two loops:
//! an absolute `clock_nanosleep` on a PERIOD grid (1 kHz by default) and a relative
//! `nanosleep` of PERIOD.
//!
//! Per loop it prints a Markdown table: the median lateness of each side with its
//! distribution-free 95 % interval (order statistics: binomial ranks) and p99, the
//! difference of the medians (traced − untraced), and the CPU:
//!
//! * the whole machine's busy time per second of run, from /proc/stat (every CPU's
//!   elapsed time less its idle and iowait time, which NO_HZ kernels keep to the µs,
//!   printed in USER_HZ ticks). A tracepoint's work in interrupt context is charged to
//!   whatever ran, often the idle task: the process's own CPU time misses it, and the
//!   kernel ends the idle time for the interrupt, so the machine's busy time does not;
//! * the measuring process's own CPU time (CLOCK_PROCESS_CPUTIME_ID, what
//!   getrusage(RUSAGE_SELF) sums, in ns): the tracepoints that fire in its context and
//!   the drain of the ring buffers, which runs at the end of each traced block (as
//!   `explain` drains between cells) and is counted in it.
//!
//! A traced block opens a fresh session (outside the timed span) and is split with the
//! account `explain` uses afterwards, so the table also says how many of its wakes were
//! fully traced: a tracer that recorded nothing would cost nothing. Runs as root.
//!
//!     cargo run --release -p sleeplab-cli --example trace_cost -- --rounds 10 --waits 2000

use clap::Parser;
use sleeplab::clock::{monotonic_ns, process_cpu_ns};
use sleeplab_cli::stats::tail_quantile_i64;
use sleeplab_cli::trace::{Tracer, Window, account, this_tid};
use statrs::distribution::{Binomial, DiscreteCDF};
use std::time::Duration;

#[derive(Parser)]
struct Args {
    /// Rounds; each runs every loop untraced and traced, one block each.
    #[arg(long, default_value_t = 10)]
    rounds: u32,
    /// Waits per block.
    #[arg(long, default_value_t = 2000)]
    waits: u64,
    /// The grid's period and the relative sleep's length.
    #[arg(long, default_value = "1ms", value_parser = humantime::parse_duration)]
    period: Duration,
}

/// A way of waiting that is measured with and without the tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loop {
    /// `clock_nanosleep(TIMER_ABSTIME)` to `t0 + k·period`.
    Grid,
    /// `nanosleep(period)`.
    Relative,
}

impl Loop {
    const ALL: [Loop; 2] = [Loop::Grid, Loop::Relative];

    fn label(self, period_ns: u64) -> String {
        let p = fmt_us(period_ns as f64);
        match self {
            Loop::Grid => format!("clock_nanosleep abs, {p} grid"),
            Loop::Relative => format!("nanosleep {p}"),
        }
    }
}

/// Sleeps until `deadline_ns` (CLOCK_MONOTONIC), again after a signal.
fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; no remainder is written with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Sleeps `ns` with `nanosleep`, resuming with the time left after a signal.
fn nanosleep(ns: u64) {
    let mut req = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let mut rem = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec pointers for the duration of the call.
    while unsafe { libc::nanosleep(&req, &mut rem) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {
        req = rem;
    }
}

/// The idle time of every CPU together (idle + iowait, USER_HZ ticks) and the number
/// of online CPUs, from the text of /proc/stat.
fn idle_ticks(stat: &str) -> Option<(u64, u32)> {
    let mut idle = None;
    let mut cpus = 0;
    for line in stat.lines() {
        let Some(rest) = line.strip_prefix("cpu") else {
            continue;
        };
        if rest.starts_with(' ') {
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            idle = Some(f.get(3)? + f.get(4)?);
        } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
            cpus += 1;
        }
    }
    Some((idle?, cpus))
}

/// Clocks read at the edges of a block.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    wall_ns: u64,
    idle_ns: u64,
    cpus: u32,
    process_ns: u64,
}

impl Snapshot {
    fn now(tick_ns: u64) -> anyhow::Result<Self> {
        let stat = std::fs::read_to_string("/proc/stat")?;
        let (idle, cpus) =
            idle_ticks(&stat).ok_or_else(|| anyhow::anyhow!("/proc/stat has no cpu line"))?;
        Ok(Self {
            wall_ns: monotonic_ns(),
            idle_ns: idle * tick_ns,
            cpus,
            process_ns: process_cpu_ns(),
        })
    }
}

/// One block's measurements.
#[derive(Debug, Clone, Default)]
struct Block {
    lateness_ns: Vec<i64>,
    wall_ns: u64,
    /// The machine's busy time: every CPU's elapsed time less its idle time.
    busy_ns: u64,
    process_ns: u64,
    events: u64,
    lost: u64,
    drain_ns: u64,
    traced_wakes: u64,
    cpus: u32,
}

/// Runs one block of `waits` waits of `lp`, traced or not.
fn block(
    lp: Loop,
    traced: bool,
    waits: u64,
    period_ns: u64,
    tick_ns: u64,
) -> anyhow::Result<Block> {
    let tid = this_tid();
    let mut tracer = if traced {
        Some(Tracer::start().map_err(|e| anyhow::anyhow!("{}", e.note()))?)
    } else {
        None
    };
    let mut windows = Vec::with_capacity(waits as usize);
    let before = Snapshot::now(tick_ns)?;
    let t0 = monotonic_ns() + period_ns;
    for k in 0..waits {
        let start_ns = monotonic_ns();
        let deadline_ns = match lp {
            Loop::Grid => {
                let d = t0 + k * period_ns;
                sleep_until(d);
                d
            }
            Loop::Relative => {
                nanosleep(period_ns);
                start_ns + period_ns
            }
        };
        let end_ns = monotonic_ns();
        windows.push(Window {
            tid,
            start_ns,
            deadline_ns,
            end_ns,
            spin_ns: 0,
        });
    }
    let mut b = Block::default();
    if let Some(t) = tracer.as_mut() {
        let d0 = monotonic_ns();
        let drained = t.drain();
        b.drain_ns = monotonic_ns() - d0;
        b.events = drained.events as u64;
    }
    let after = Snapshot::now(tick_ns)?;
    b.wall_ns = after.wall_ns - before.wall_ns;
    b.busy_ns = (u64::from(after.cpus) * b.wall_ns).saturating_sub(after.idle_ns - before.idle_ns);
    b.process_ns = after.process_ns - before.process_ns;
    b.cpus = after.cpus;
    b.lateness_ns = windows
        .iter()
        .map(|w| w.end_ns as i64 - w.deadline_ns as i64)
        .collect();
    if let Some(t) = tracer {
        let (timeline, lost) = t.finish();
        b.lost = lost;
        b.traced_wakes = windows
            .iter()
            .filter(|w| account(&timeline, w).traced)
            .count() as u64;
    }
    Ok(b)
}

/// The 1-based ranks `(l, u)` of the order statistics that bound a distribution-free
/// interval of the median of `n` samples with coverage ≥ `level`: the largest `l` with
/// P(B ≤ l − 1) ≤ (1 − level)/2 for B ~ Binomial(n, ½), and `u = n + 1 − l`. `None`
/// when no ranks reach the level (n < 6 at 95 %).
fn median_ranks(n: u64, level: f64) -> Option<(u64, u64)> {
    if n == 0 {
        return None;
    }
    let b = Binomial::new(0.5, n).ok()?;
    let tail = (1.0 - level) / 2.0;
    // cdf(l − 1) grows with l: the last l whose lower tail stays within `tail`.
    let l = (1..=n.div_ceil(2))
        .take_while(|&l| b.cdf(l - 1) <= tail + 1e-12)
        .last()?;
    Some((l, n + 1 - l))
}

/// One side (traced or not) of one loop, pooled over its blocks.
#[derive(Debug, Clone)]
struct Side {
    n: u64,
    median_ns: Option<f64>,
    /// The median's 95 % interval (order statistics).
    interval_ns: Option<(f64, f64)>,
    p99_ns: Option<f64>,
    busy_pct: f64,
    process_pct: f64,
    events_per_s: f64,
    lost: u64,
    drain_ns_per_event: Option<f64>,
    traced_wakes: u64,
    /// Whether the machine was busy nearly all the time (≥ 95 % of every CPU): then its
    /// busy time cannot grow with what the tracer adds.
    saturated: bool,
}

impl Side {
    fn of(blocks: &[&Block]) -> Self {
        let mut all: Vec<i64> = blocks.iter().flat_map(|b| b.lateness_ns.clone()).collect();
        all.sort_unstable();
        let n = all.len() as u64;
        let wall: u64 = blocks.iter().map(|b| b.wall_ns).sum();
        let pct = |ns: u64| 100.0 * ns as f64 / wall.max(1) as f64;
        let events: u64 = blocks.iter().map(|b| b.events).sum();
        let drain: u64 = blocks.iter().map(|b| b.drain_ns).sum();
        let busy_pct = pct(blocks.iter().map(|b| b.busy_ns).sum());
        let cpus = blocks.iter().map(|b| b.cpus).max().unwrap_or(1).max(1);
        Self {
            n,
            median_ns: tail_quantile_i64(&all, 0.5),
            interval_ns: median_ranks(n, 0.95)
                .map(|(l, u)| (all[l as usize - 1] as f64, all[u as usize - 1] as f64)),
            p99_ns: tail_quantile_i64(&all, 0.99),
            busy_pct,
            process_pct: pct(blocks.iter().map(|b| b.process_ns).sum()),
            events_per_s: events as f64 * 1e9 / wall.max(1) as f64,
            lost: blocks.iter().map(|b| b.lost).sum(),
            drain_ns_per_event: (events > 0).then(|| drain as f64 / events as f64),
            traced_wakes: blocks.iter().map(|b| b.traced_wakes).sum(),
            saturated: busy_pct >= 95.0 * f64::from(cpus),
        }
    }
}

fn fmt_us(ns: f64) -> String {
    if ns.abs() >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.2} µs", ns / 1e3)
    }
}

fn opt_us(ns: Option<f64>) -> String {
    ns.map_or("–".into(), fmt_us)
}

fn mark(ok: bool) -> &'static str {
    if ok { "✅" } else { "❌" }
}

/// The median of `v` (unsorted), or None when empty.
fn median_f64(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    (n > 0).then(|| (s[(n - 1) / 2] + s[n / 2]) / 2.0)
}

/// The report's lines for one loop: `pairs` holds each round's (untraced, traced).
fn report(label: &str, pairs: &[(Block, Block)], period_ns: u64) -> Vec<String> {
    let off = Side::of(&pairs.iter().map(|p| &p.0).collect::<Vec<_>>());
    let on = Side::of(&pairs.iter().map(|p| &p.1).collect::<Vec<_>>());
    let interval = |s: &Side| {
        s.interval_ns.map_or("–".into(), |(l, u)| {
            format!("{} – {}", fmt_us(l), fmt_us(u))
        })
    };
    let mut out = vec![
        format!("**{label}** ({} rounds):", pairs.len()),
        String::new(),
        "| | n | median lateness (95 % interval) | p99 | machine busy, % of a core | \
         process CPU, % of a core | events/s | drain per event | wakes fully traced |"
            .into(),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ];
    for (name, s) in [("untraced", &off), ("traced", &on)] {
        let traced = if name == "traced" {
            format!("{} of {}", s.traced_wakes, s.n)
        } else {
            "–".into()
        };
        out.push(format!(
            "| {name} | {} | {} ({}) | {} | {:.3} | {:.3} | {:.0} | {} | {traced} |",
            s.n,
            opt_us(s.median_ns),
            interval(s),
            opt_us(s.p99_ns),
            s.busy_pct,
            s.process_pct,
            s.events_per_s,
            s.drain_ns_per_event
                .map_or("–".into(), |ns| format!("{ns:.0} ns")),
        ));
    }
    out.push(String::new());
    if let (Some(a), Some(b)) = (off.median_ns, on.median_ns) {
        let d = b - a;
        let bound = match (off.interval_ns, on.interval_ns) {
            (Some((al, au)), Some((bl, bu))) => format!(
                " (from the two intervals: {} to {}, covering ≥ 90 %)",
                fmt_us(bl - au),
                fmt_us(bu - al)
            ),
            _ => String::new(),
        };
        out.push(format!(
            "- {} added to the median: {}{bound}; target ≤ 2 µs",
            mark(d <= 2_000.0),
            fmt_us(d)
        ));
    }
    let busy = on.busy_pct - off.busy_pct;
    let per_round: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| {
            100.0
                * (b.busy_ns as f64 / b.wall_ns.max(1) as f64
                    - a.busy_ns as f64 / a.wall_ns.max(1) as f64)
        })
        .collect();
    let spread = match (
        median_f64(&per_round),
        per_round.iter().copied().reduce(f64::min),
        per_round.iter().copied().reduce(f64::max),
    ) {
        (Some(m), Some(lo), Some(hi)) => {
            format!(" (per round: median {m:.3}, from {lo:.3} to {hi:.3})")
        }
        _ => String::new(),
    };
    let rate = 1e9 / period_ns as f64;
    let verdict = if off.saturated || on.saturated {
        "– (the machine was busy ≥ 95 % of the time: its busy time cannot show the \
         tracer's; rerun on a quiet machine)"
            .to_string()
    } else {
        mark(busy <= 1.0).to_string()
    };
    out.push(format!(
        "- {verdict} CPU the tracing takes at {rate:.0} Hz: {busy:.3} % of a core of the whole \
         machine (traced − untraced){spread}, of which the measuring process {:.3} %; target ≤ 1 %",
        on.process_pct - off.process_pct,
    ));
    if on.lost > 0 {
        out.push(format!("- events the kernel lost: {}", on.lost));
    }
    out
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let period_ns = u64::try_from(args.period.as_nanos())?;
    if period_ns == 0 || args.waits == 0 || args.rounds == 0 {
        eprintln!("trace_cost: --period, --waits and --rounds must be positive");
        std::process::exit(2);
    }
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let tick_ns = 1_000_000_000 / hz;
    if let Err(e) = Tracer::start() {
        eprintln!("trace_cost: {}", e.note());
        std::process::exit(1);
    }
    let mut pairs: Vec<Vec<(Block, Block)>> = vec![Vec::new(); Loop::ALL.len()];
    for round in 0..args.rounds {
        for (i, &lp) in Loop::ALL.iter().enumerate() {
            let traced_first = round % 2 == 1;
            let first = block(lp, traced_first, args.waits, period_ns, tick_ns)?;
            let second = block(lp, !traced_first, args.waits, period_ns, tick_ns)?;
            pairs[i].push(if traced_first {
                (second, first)
            } else {
                (first, second)
            });
            eprintln!(
                "round {}/{} {}",
                round + 1,
                args.rounds,
                lp.label(period_ns)
            );
        }
    }
    let slack = sleeplab::system::timer_slack_ns();
    println!(
        "{} waits a block, timer slack {}; the median's interval from order statistics, \
         p99 where n ≥ 100; the machine's busy time from /proc/stat ({hz} ticks/s).\n",
        args.waits,
        fmt_us(slack as f64),
    );
    for (i, &lp) in Loop::ALL.iter().enumerate() {
        println!(
            "{}\n",
            report(&lp.label(period_ns), &pairs[i], period_ns).join("\n")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ranks_match_the_binomial_tables() {
        // The classic table: n = 6 → (1, 6) at 96.9 %, n = 100 → (40, 61) at 96.5 %.
        assert_eq!(median_ranks(5, 0.95), None);
        assert_eq!(median_ranks(6, 0.95), Some((1, 6)));
        assert_eq!(median_ranks(10, 0.95), Some((2, 9)));
        assert_eq!(median_ranks(100, 0.95), Some((40, 61)));
        // The coverage reaches the level, and one rank inward it would not.
        for n in [6u64, 17, 100, 999, 20_000] {
            let (l, u) = median_ranks(n, 0.95).unwrap();
            assert_eq!(u, n + 1 - l);
            let b = Binomial::new(0.5, n).unwrap();
            assert!(1.0 - 2.0 * b.cdf(l - 1) >= 0.95, "n = {n}");
            assert!(1.0 - 2.0 * b.cdf(l) < 0.95, "n = {n}");
        }
    }

    #[test]
    fn idle_time_is_idle_plus_iowait_of_the_cpu_line() {
        let stat = "cpu  100 5 20 300 7 0 1 2 0 0\ncpu0 50 2 10 150 3 0 1 1 0 0\n\
                    cpu1 50 3 10 150 4 0 0 1 0 0\nintr 1 2\nctxt 9\n";
        assert_eq!(idle_ticks(stat), Some((307, 2)));
        assert_eq!(idle_ticks("intr 1\n"), None);
        assert_eq!(idle_ticks("cpu  1 2 x\n"), None);
    }

    #[test]
    fn a_side_pools_its_blocks() {
        let a = Block {
            lateness_ns: vec![10, 30, 20],
            wall_ns: 1_000,
            busy_ns: 50,
            process_ns: 10,
            events: 4,
            drain_ns: 40,
            traced_wakes: 3,
            ..Block::default()
        };
        let b = Block {
            lateness_ns: vec![40, -5, 60],
            wall_ns: 1_000,
            busy_ns: 30,
            process_ns: 30,
            ..Block::default()
        };
        let s = Side::of(&[&a, &b]);
        assert_eq!(s.n, 6);
        // Sorted: -5 10 20 30 40 60: the linear median is 25.
        assert_eq!(s.median_ns, Some(25.0));
        assert_eq!(s.interval_ns, Some((-5.0, 60.0)));
        assert_eq!(s.p99_ns, None);
        assert_eq!((s.busy_pct, s.process_pct), (4.0, 2.0));
        assert_eq!(s.drain_ns_per_event, Some(10.0));
        assert_eq!(s.traced_wakes, 3);
        assert_eq!(median_f64(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median_f64(&[]), None);
    }

    #[test]
    fn the_report_judges_the_difference_of_the_medians_and_of_the_busy_time() {
        let blk = |late: i64, busy: u64| Block {
            lateness_ns: vec![late; 10],
            wall_ns: 1_000_000_000,
            busy_ns: busy,
            cpus: 2,
            ..Block::default()
        };
        let pairs = vec![
            (blk(50_000, 10_000_000), blk(51_000, 14_000_000)),
            (blk(50_000, 10_000_000), blk(51_000, 16_000_000)),
        ];
        let lines = report("x", &pairs, 1_000_000).join("\n");
        assert!(lines.contains("✅ added to the median: 1.00 µs"), "{lines}");
        assert!(
            lines.contains("✅ CPU the tracing takes at 1000 Hz: 0.500 %"),
            "{lines}"
        );
        assert!(lines.contains("from 0.400 to 0.600"), "{lines}");
        let pairs = vec![(blk(50_000, 10_000_000), blk(53_000, 30_000_000))];
        let lines = report("x", &pairs, 1_000_000).join("\n");
        assert!(lines.contains("❌ added to the median: 3.00 µs"), "{lines}");
        assert!(
            lines.contains("❌ CPU the tracing takes at 1000 Hz: 2.000 %"),
            "{lines}"
        );
        // A saturated machine (2 CPUs, 1.95 s busy a second) gives no verdict on the CPU.
        let pairs = vec![(blk(50_000, 1_950_000_000), blk(50_000, 2_000_000_000))];
        let lines = report("x", &pairs, 1_000_000).join("\n");
        assert!(
            lines.contains("- – (the machine was busy ≥ 95 %"),
            "{lines}"
        );
    }
}
