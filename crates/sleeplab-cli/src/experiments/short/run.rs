//! The `short` engine: calibrate every cell's batch length, then interleaved
//! repetitions of timed batches on one measuring thread.

use super::{
    BatchRecord, FLOOR, SYSCALL, ShortCell, ShortConfig, ShortData, batch_size, findings, requests,
};
use crate::error::UsageError;
use crate::experiments::sweep::SkippedCell;
use crate::experiments::{Context, Outcome};
use crate::rusage::ThreadUsage;
use crate::settings::{set_slack, slack_levels};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use sleeplab::clock::monotonic_ns;
use sleeplab::system::timer_slack_ns;
use sleeplab::wait::{self, Waiter};
use sleeplab_stats::fmt_ns;
use std::hint::black_box;

/// What a cell calls in its batch loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The mechanism with this index in the config.
    Mechanism(usize),
    /// The empty loop (ground truth).
    Floor,
    /// One trivial system call per iteration.
    Syscall,
}

/// One cell of the plan (the same list under every slack).
#[derive(Debug, Clone)]
struct Planned {
    target: Target,
    name: String,
    requested_ns: u64,
}

/// Calibration doubles its batch until one takes this long (or reaches `--batch`).
const CALIBRATION_TIME_NS: u64 = 2_000_000;

/// The cells in reporting order (mechanism, then request; references last) and the
/// requests skipped. Unknown names are a usage error.
fn plan(config: &ShortConfig) -> Result<(Vec<Planned>, Vec<SkippedCell>), UsageError> {
    let mut cells = Vec::new();
    let mut skipped = Vec::new();
    for (i, name) in config.mechanisms.iter().enumerate() {
        let m = wait::find(name)
            .ok_or_else(|| UsageError::new(format!("unknown mechanism {name:?}")))?;
        let (measured, skip) = requests(m);
        skipped.extend(skip);
        cells.extend(measured.into_iter().map(|ns| Planned {
            target: Target::Mechanism(i),
            name: name.clone(),
            requested_ns: ns,
        }));
    }
    for (target, name) in [(Target::Floor, FLOOR), (Target::Syscall, SYSCALL)] {
        cells.push(Planned {
            target,
            name: name.into(),
            requested_ns: 0,
        });
    }
    Ok((cells, skipped))
}

/// Batches the run will measure: repetitions × slacks × cells (references included).
pub fn planned_batches(config: &ShortConfig) -> u64 {
    let cells = plan(config).map_or(0, |(c, _)| c.len() as u64);
    config.repetitions * config.timer_slacks_ns.len().max(1) as u64 * cells
}

/// Runs `config` on a dedicated measuring thread with the context's settings applied.
pub fn run(config: &ShortConfig, ctx: &Context) -> anyhow::Result<Outcome<ShortData>> {
    ctx.on_measuring_thread("sleeplab-measure", || measure(config, ctx))
}

/// A cell's accumulating state under one slack.
struct CellState {
    batch: u64,
    calibration: f64,
    batches: Vec<BatchRecord>,
}

fn measure(config: &ShortConfig, ctx: &Context) -> anyhow::Result<Outcome<ShortData>> {
    let progress = &ctx.progress;
    let (plan, skipped) = plan(config)?;
    let mut waiters = Vec::with_capacity(config.mechanisms.len());
    for name in &config.mechanisms {
        waiters.push(Waiter::new(name).map_err(|e| UsageError::new(format!("{name}: {e}")))?);
    }
    let slacks = slack_levels(&config.timer_slacks_ns);

    // Calibration (also the warm-up): one batch length per cell and slack.
    let mut in_force = vec![0u64; slacks.len()];
    let mut states: Vec<Vec<CellState>> = Vec::with_capacity(slacks.len());
    let mut complete = true;
    for (si, &slack) in slacks.iter().enumerate() {
        let _guard = set_slack(slack)?;
        in_force[si] = timer_slack_ns();
        let mut row = Vec::with_capacity(plan.len());
        for p in &plan {
            if ctx.stopped() {
                complete = false;
                break;
            }
            progress.message(format!(
                "calibrating {} @ {}",
                p.name,
                fmt_ns(p.requested_ns)
            ));
            let calibration = calibrate(p, &mut waiters, config.batch, ctx);
            let batch = match p.target {
                Target::Floor => config.batch,
                _ => batch_size(
                    calibration,
                    config.batch,
                    config.batch_time_ns,
                    config.min_batch,
                ),
            };
            row.push(CellState {
                batch,
                calibration,
                batches: Vec::with_capacity(config.repetitions as usize),
            });
        }
        states.push(row);
    }

    // Repetitions: rep-major, slack blocks inside, a shuffled cell order per block.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(config.seed);
    let mut order: Vec<usize> = (0..plan.len()).collect();
    if complete {
        'reps: for rep in 0..config.repetitions {
            for (si, &slack) in slacks.iter().enumerate() {
                let _guard = set_slack(slack)?;
                order.shuffle(&mut rng);
                for (position, &ci) in order.iter().enumerate() {
                    if ctx.stopped() {
                        complete = false;
                        break 'reps;
                    }
                    let p = &plan[ci];
                    let state = &mut states[si][ci];
                    progress.message(format!(
                        "{} @ {}{} repetition {}/{}",
                        p.name,
                        fmt_ns(p.requested_ns),
                        slack
                            .map(|s| format!(" slack {}", fmt_ns(s)))
                            .unwrap_or_default(),
                        rep + 1,
                        config.repetitions
                    ));
                    let mut record = measure_batch(p, state.batch, &mut waiters);
                    record.repetition = rep;
                    record.position = position as u64;
                    state.batches.push(record);
                    progress.inc(1);
                }
            }
        }
    }

    let settings = ctx.threads.record();
    let mut cells = Vec::new();
    let mut references = Vec::new();
    for (si, row) in states.into_iter().enumerate() {
        for (p, state) in plan.iter().zip(row) {
            if state.batches.is_empty() {
                continue;
            }
            let cell = ShortCell::from_batches(
                &p.name,
                p.requested_ns,
                in_force[si],
                state.batch,
                state.calibration,
                state.batches,
                config.confidence,
            );
            match p.target {
                Target::Mechanism(_) => cells.push(cell),
                Target::Floor | Target::Syscall => references.push(cell),
            }
        }
    }
    let mut data = ShortData {
        config: config.clone(),
        cells,
        references,
        skipped,
        findings: Vec::new(),
    };
    data.findings = findings(&data, ctx.hints);
    Ok(Outcome::new(data, settings, complete))
}

/// Estimates the cost of one call the way it will be measured: batches of 1, 2, 4, …
/// calls until one takes [`CALIBRATION_TIME_NS`] (or reaches `max` calls), then that
/// length once more; the cheaper of the two, per call, ns. Back-to-back batches see the
/// occasional slow call in proportion (a per-call median would not), and taking the
/// cheaper of two keeps one host stall from shrinking the cell's batches for the whole
/// run. It doubles as the warm-up.
fn calibrate(p: &Planned, waiters: &mut [Waiter], max: u64, ctx: &Context) -> f64 {
    let max = max.max(1);
    let mut run = |n: u64| match p.target {
        Target::Mechanism(i) => mechanism_batch(&mut waiters[i], p.requested_ns, n),
        Target::Floor => empty_batch(n),
        Target::Syscall => syscall_batch(n),
    };
    let mut n = 1u64;
    let mut first = run(n);
    while first < CALIBRATION_TIME_NS && n < max && !ctx.stopped() {
        n = (n * 2).min(max);
        first = run(n);
    }
    let second = if ctx.stopped() { first } else { run(n) };
    first.min(second) as f64 / n as f64
}

/// One batch with its paired empty loop and the thread's usage around it.
fn measure_batch(p: &Planned, calls: u64, waiters: &mut [Waiter]) -> BatchRecord {
    let floor_elapsed_ns = match p.target {
        Target::Floor => 0,
        _ => empty_batch(calls),
    };
    let usage0 = ThreadUsage::now();
    let elapsed_ns = match p.target {
        Target::Mechanism(i) => mechanism_batch(&mut waiters[i], p.requested_ns, calls),
        Target::Floor => empty_batch(calls),
        Target::Syscall => syscall_batch(calls),
    };
    let mut usage = ThreadUsage::default();
    usage.add_since(&usage0);
    BatchRecord {
        repetition: 0,
        position: 0,
        calls,
        elapsed_ns,
        floor_elapsed_ns,
        cpu_ns: usage.cpu_ns,
        voluntary_csw: usage.voluntary_csw,
        involuntary_csw: usage.involuntary_csw,
    }
}

/// Clock read, `n` waits of `ns`, clock read: the elapsed ns.
#[inline(never)]
fn mechanism_batch(waiter: &mut Waiter, ns: u64, n: u64) -> u64 {
    let t0 = monotonic_ns();
    for _ in 0..n {
        waiter.wait(black_box(ns));
    }
    let t1 = monotonic_ns();
    t1.saturating_sub(t0)
}

/// The ground truth: the same loop with an empty body the compiler must keep.
#[inline(never)]
fn empty_batch(n: u64) -> u64 {
    let t0 = monotonic_ns();
    for i in 0..n {
        black_box(i);
    }
    let t1 = monotonic_ns();
    t1.saturating_sub(t0)
}

/// The kernel-entry yardstick: one trivial system call (`getppid`) per iteration.
#[inline(never)]
fn syscall_batch(n: u64) -> u64 {
    let t0 = monotonic_ns();
    for _ in 0..n {
        // SAFETY: getppid has no arguments and cannot fail.
        black_box(unsafe { libc::syscall(libc::SYS_getppid) });
    }
    let t1 = monotonic_ns();
    t1.saturating_sub(t0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::short::{CONFIDENCE, MIN_BATCH};

    fn tiny(mechanisms: &[&str], slacks: &[u64], reps: u64) -> ShortConfig {
        ShortConfig {
            mechanisms: mechanisms.iter().map(|s| s.to_string()).collect(),
            timer_slacks_ns: slacks.to_vec(),
            batch: 5,
            batch_time_ns: 1_000_000,
            min_batch: MIN_BATCH,
            repetitions: reps,
            seed: 7,
            confidence: CONFIDENCE,
        }
    }

    #[test]
    fn counts_add_up() {
        let config = tiny(&["nanosleep", "yield", "timerfd", "poll"], &[], 3);
        let out = run(&config, &Context::hidden()).unwrap();
        assert!(out.complete);
        let d = &out.data;
        // nanosleep 0,1 ns; yield 0; timerfd 1 ns; poll 0,1 ms = 6 cells + 2 references.
        assert_eq!(d.cells.len(), 6);
        assert_eq!(d.references.len(), 2);
        assert_eq!(d.skipped.len(), 2);
        assert_eq!(planned_batches(&config), 3 * 8);
        let total: usize = d
            .cells
            .iter()
            .chain(&d.references)
            .map(|c| c.batches.len())
            .sum();
        assert_eq!(total as u64, planned_batches(&config));
        for c in d.cells.iter().chain(&d.references) {
            assert_eq!(c.batches.len(), 3, "{}", c.mechanism);
            assert_eq!(c.net.n, 3);
            let reps: Vec<u64> = c.batches.iter().map(|b| b.repetition).collect();
            assert_eq!(reps, vec![0, 1, 2]);
            assert!(c.batches.iter().all(|b| b.calls == c.batch));
            assert!((1..=5).contains(&c.batch));
            // Never early: a batch of waits of d takes at least calls × d.
            for b in &c.batches {
                assert!(b.elapsed_ns >= b.calls * c.requested_ns, "{}", c.mechanism);
            }
        }
        // poll's 1 ms calls get shrunk to the 1 ms cap, but never below min(MIN_BATCH, batch).
        assert_eq!(
            d.cell("poll", 1_000_000, d.cells[0].timer_slack_ns)
                .unwrap()
                .batch,
            5
        );
        assert_eq!(d.findings.len(), 4);
    }

    #[test]
    fn slacks_are_an_axis() {
        let config = tiny(&["clock-nanosleep"], &[50_000, 1], 2);
        let out = run(&config, &Context::hidden()).unwrap();
        let d = &out.data;
        assert_eq!(d.slacks(), vec![50_000, 1]);
        assert_eq!(d.cells.len(), 4);
        assert_eq!(d.references.len(), 4);
        for s in [50_000, 1] {
            assert!(d.cell("clock-nanosleep", 0, s).is_some());
            assert!(d.cell("clock-nanosleep", 1, s).is_some());
            assert!(d.reference(FLOOR, s).is_some());
        }
        // Positions within a block are a permutation of the block's cells.
        for rep in 0..2 {
            let mut pos: Vec<u64> = d
                .cells
                .iter()
                .chain(&d.references)
                .filter(|c| c.timer_slack_ns == 1)
                .flat_map(|c| c.batches.iter().filter(|b| b.repetition == rep))
                .map(|b| b.position)
                .collect();
            pos.sort_unstable();
            assert_eq!(pos, vec![0, 1, 2, 3]);
        }
        assert_eq!(planned_batches(&config), 2 * 2 * 4);
    }

    /// Stopped between batches, every cell is short of its repetitions by at most one.
    /// The stop comes after the calibration (at most 5 checks per cell: one before it,
    /// three doublings to the batch of 5, one repeat) and a few repetitions.
    #[test]
    fn a_stopped_run_keeps_whole_repetitions_give_or_take_one() {
        use crate::experiments::Stop;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let config = tiny(&["nanosleep", "spin"], &[], 1_000);
        let checks = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&checks);
        let ctx =
            Context::hidden().with_stop(Stop::when(move || c.fetch_add(1, Ordering::SeqCst) >= 60));
        let out = run(&config, &ctx).unwrap();
        assert!(!out.complete);
        let counts: Vec<usize> = out
            .data
            .cells
            .iter()
            .chain(&out.data.references)
            .map(|c| c.batches.len())
            .collect();
        // nanosleep 0, 1 ns; spin 0, 1 ns; floor; getppid.
        assert_eq!(counts.len(), 6, "{counts:?}");
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(*lo >= 1 && hi - lo <= 1 && *hi < 1_000, "{counts:?}");
    }

    #[test]
    fn floor_reference_is_unpaired_and_full_length() {
        let config = tiny(&["spin"], &[], 2);
        let out = run(&config, &Context::hidden()).unwrap();
        let floor = out
            .data
            .reference(FLOOR, out.settings.timer_slack_ns)
            .unwrap();
        assert_eq!(floor.batch, 5);
        assert!(floor.batches.iter().all(|b| b.floor_elapsed_ns == 0));
        assert_eq!(floor.net, floor.raw);
    }
}
