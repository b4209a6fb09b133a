//! The timers engine: for every load level and timer slack, period-major passes over the
//! mechanisms; each cell runs `threads` measuring threads at once (started together at a
//! barrier), each with its own timer, for one contiguous run.

use super::mechanisms::{self, Plan};
use super::{SkippedTimerCell, ThreadResult, TickStats, TimersCell, TimersConfig, TimersData};
use crate::experiments::{Context, Outcome, Stop};
use crate::load::LoadThreads;
use crate::rusage::ThreadUsage;
use crate::settings::{ThreadSettings, lock_memory, set_slack, slack_levels};
use crate::ticks::{Wake, account};
use sleeplab::system::timer_slack_ns;
use sleeplab_account::{Explanation, Follow, Recording, Recordings, Timeline};
use sleeplab_stats::fmt_ns;
use std::sync::{Barrier, mpsc};

/// One thread's raw run.
struct ThreadRun {
    report: mechanisms::RunReport,
    wakes: Vec<Wake>,
    usage: ThreadUsage,
    slack: u64,
    tid: i32,
}

/// Runs `config` with the context's settings applied to every measuring thread; its
/// progress advances by one per cell.
pub fn run(config: &TimersConfig, ctx: &Context) -> anyhow::Result<Outcome<TimersData>> {
    let (ctx, placed) = &ctx.placed_for_trace(config.trace);
    let mut out = run_cells(config, ctx)?;
    out.notes.extend(placed.clone());
    Ok(out)
}

fn run_cells(config: &TimersConfig, ctx: &Context) -> anyhow::Result<Outcome<TimersData>> {
    let (threads, progress) = (&ctx.threads, &ctx.progress);
    if threads.mlock {
        // Process-wide, once.
        lock_memory()?;
    }
    let per_thread = threads.without_mlock();
    let mut tracing = Recordings::new(config.trace);
    let slacks = slack_levels(&config.timer_slacks_ns);
    let mut cells = Vec::new();
    let mut skipped = Vec::new();
    let mut complete = true;
    let total = cell_count(config) as usize;
    let mut done = 0usize;
    'all: for &load in &config.loads {
        let _load = LoadThreads::start(load);
        for &slack in &slacks {
            for &period in &config.periods_ns {
                for name in &config.mechanisms {
                    if ctx.stopped() {
                        complete = false;
                        break 'all;
                    }
                    if let Some(reason) = mechanisms::skip_reason(name, period) {
                        if !skipped.iter().any(|s: &SkippedTimerCell| {
                            s.mechanism == *name && s.period_ns == period
                        }) {
                            skipped.push(SkippedTimerCell {
                                mechanism: name.clone(),
                                period_ns: period,
                                reason,
                            });
                        }
                        continue;
                    }
                    let left = (total - done) as f64 * config.duration_ns as f64 / 1e9;
                    progress.message(format!(
                        "{name} @ {}{}{} · ~{left:.0} s left of ~{:.0} s",
                        fmt_ns(period),
                        if config.loads.len() > 1 {
                            format!(" load {load}")
                        } else {
                            String::new()
                        },
                        slack
                            .map(|s| format!(" slack {}", fmt_ns(s)))
                            .unwrap_or_default(),
                        total as f64 * config.duration_ns as f64 / 1e9,
                    ));
                    match run_cell(
                        config,
                        name,
                        period,
                        (load, slack),
                        &per_thread,
                        &ctx.stop,
                        &mut tracing,
                    )? {
                        Ok(cell) => {
                            let cut = !cell.complete;
                            cells.push(cell);
                            if cut {
                                complete = false;
                                break 'all;
                            }
                        }
                        Err(reason) => skipped.push(SkippedTimerCell {
                            mechanism: name.clone(),
                            period_ns: period,
                            reason,
                        }),
                    }
                    done += 1;
                    progress.inc(1);
                }
            }
        }
    }
    let mut settings = threads.record();
    if let Some(c) = cells.first() {
        settings.timer_slack_ns = c.timer_slack_ns;
    }
    let data = TimersData {
        config: config.clone(),
        cells,
        skipped,
        tracing: tracing.status(),
    };
    Ok(Outcome::new(data, settings, complete))
}

/// Number of cells `config` will measure (for the progress bar and the time estimate).
pub fn cell_count(config: &TimersConfig) -> u64 {
    let measurable = config
        .periods_ns
        .iter()
        .flat_map(|&p| {
            config
                .mechanisms
                .iter()
                .filter(move |m| mechanisms::skip_reason(m, p).is_none())
        })
        .count() as u64;
    measurable * config.loads.len() as u64 * config.timer_slacks_ns.len().max(1) as u64
}

/// Runs one cell. The outer error is fatal (bad thread settings: exit 2); the inner one
/// is the cell's failure, recorded as a skipped cell.
fn run_cell(
    config: &TimersConfig,
    name: &str,
    period: u64,
    (load, slack): (usize, Option<u64>),
    thread_args: &ThreadSettings,
    stop: &Stop,
    tracing: &mut Recordings,
) -> anyhow::Result<Result<TimersCell, String>> {
    let plan = Plan {
        period_ns: period,
        ticks: config.ticks(period),
        slack_given: slack.is_some(),
    };
    let n = config.threads.max(1);
    // Traced, this thread is one more party at the barrier: it starts the tracer for the
    // measuring threads' ids before they start, and drains it while they run.
    let traced = tracing.able() && wakes_on_measuring_thread(name);
    let barrier = Barrier::new(n + usize::from(traced));
    let (tid_tx, tid_rx) = mpsc::channel::<i32>();
    let helper_before = mechanisms::shared_helper_usage(name);
    let mut recording = None;
    let runs: Vec<anyhow::Result<Result<ThreadRun, String>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, tid_tx) = (&barrier, tid_tx.clone());
                std::thread::Builder::new()
                    .name(format!("sleeplab-timer{i}"))
                    .spawn_scoped(s, move || {
                        let _ = tid_tx.send(sleeplab_account::this_tid());
                        measure(name, &plan, slack, thread_args, barrier, stop)
                    })
            })
            .collect();
        if traced {
            // Drained on a thread of its own while the measuring threads run.
            let tids: Vec<i32> = tid_rx.iter().take(n).collect();
            recording = Some(Recording::drained(true, Follow::Threads(tids)));
            barrier.wait();
        }
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a measuring thread panicked"))),
                Err(e) => Err(anyhow::anyhow!("cannot start a measuring thread: {e}")),
            })
            .collect()
    });
    let helper = match (helper_before, mechanisms::shared_helper_usage(name)) {
        (Some(a), Some(b)) => b.since(&a),
        _ => ThreadUsage::default(),
    };
    let mut ok = Vec::with_capacity(n);
    for r in runs {
        match r? {
            Ok(run) => ok.push(run),
            Err(reason) => return Ok(Err(reason)),
        }
    }
    let blocks = sleeplab::wait::periodic::find(name).is_none_or(|m| m.blocks());
    let explanation = explain_cell(tracing, recording, &plan, &ok, blocks);
    let mut cell = assemble(config, name, period, (load, slack), &plan, ok, helper);
    cell.explanation = explanation;
    Ok(Ok(cell))
}

/// One measuring thread: settings, slack, the mechanism, the barrier, the run.
fn measure(
    name: &str,
    plan: &Plan,
    slack: Option<u64>,
    thread_args: &ThreadSettings,
    barrier: &Barrier,
    stop: &Stop,
) -> anyhow::Result<Result<ThreadRun, String>> {
    // Everything that can fail happens before the barrier, and every thread reaches it.
    let prepared = (|| -> anyhow::Result<Result<_, String>> {
        thread_args.apply()?;
        let guard = set_slack(slack)?;
        let mech = match mechanisms::build(name, plan) {
            Ok(m) => m,
            Err(e) => return Ok(Err(format!("failed: {e}"))),
        };
        // Touch the buffer now so the run takes no page faults.
        let cap = usize::try_from(plan.ticks).unwrap_or(0) + 1;
        let mut wakes = vec![Wake::default(); cap];
        wakes.clear();
        Ok(Ok((guard, mech, wakes)))
    })();
    barrier.wait();
    let (_guard, mut mech, mut wakes) = match prepared? {
        Ok(p) => p,
        Err(reason) => return Ok(Err(reason)),
    };
    let start = ThreadUsage::now();
    let report = match mechanisms::run(&mut mech, plan, &mut wakes, stop) {
        Ok(r) => r,
        Err(e) => return Ok(Err(format!("failed: {e}"))),
    };
    let mut usage = ThreadUsage::default();
    usage.add_since(&start);
    let slack = report.timer_slack_ns.unwrap_or_else(timer_slack_ns);
    Ok(Ok(ThreadRun {
        report,
        wakes,
        usage,
        slack,
        tid: sleeplab_account::this_tid(),
    }))
}

/// Accounts every thread's run and merges them into a cell.
fn assemble(
    config: &TimersConfig,
    name: &str,
    period: u64,
    (load, requested_slack): (usize, Option<u64>),
    plan: &Plan,
    runs: Vec<ThreadRun>,
    shared_helper: ThreadUsage,
) -> TimersCell {
    let n = runs.len().max(1) as u64;
    let interrupted_any = runs.iter().any(|r| r.report.interrupted);
    let accounts: Vec<_> = runs
        .iter()
        .map(|r| account(&r.report.schedule(plan, &r.wakes), &r.wakes))
        .collect();
    let mut threads = Vec::with_capacity(runs.len());
    let (mut cpu_total, mut vol, mut invol) = (0u64, 0u64, 0u64);
    let mut wall_max = 0u64;
    for (i, (r, a)) in runs.iter().zip(&accounts).enumerate() {
        let wall = r.report.end_ns.saturating_sub(r.report.t0_ns);
        let helper_cpu = r.report.helper.cpu_ns + shared_helper.cpu_ns / n;
        let cpu = r.usage.cpu_ns + helper_cpu;
        let v =
            r.usage.voluntary_csw + r.report.helper.voluntary_csw + shared_helper.voluntary_csw / n;
        let iv = r.usage.involuntary_csw
            + r.report.helper.involuntary_csw
            + shared_helper.involuntary_csw / n;
        cpu_total += cpu;
        vol += v;
        invol += iv;
        wall_max = wall_max.max(wall);
        threads.push(ThreadResult {
            thread: i,
            stats: TickStats::of(&[a]),
            timer_slack_ns: r.slack,
            wall_ns: wall,
            cpu_ns: cpu,
            helper_cpu_ns: helper_cpu,
            cpu_pct: pct(cpu, wall),
            voluntary_csw: v,
            involuntary_csw: iv,
            lateness_ns: a
                .ticks
                .iter()
                .take(config.json_samples)
                .map(|t| t.lateness_ns)
                .collect(),
            ticks: a.ticks.clone(),
        });
    }
    let refs: Vec<_> = accounts.iter().collect();
    TimersCell {
        mechanism: name.to_string(),
        period_ns: period,
        load,
        timer_slack_ns: threads.first().map_or(0, |t| t.timer_slack_ns),
        requested_timer_slack_ns: requested_slack,
        complete: !interrupted_any,
        merged: TickStats::of(&refs),
        cpu_pct: pct(cpu_total, wall_max),
        voluntary_csw: vol,
        involuntary_csw: invol,
        threads,
        explanation: None,
    }
}

/// A traced cell's explanation: each thread's wakes against the deadlines their timer
/// fired for, split on `recording`'s events (`None`: the cell was not traced, or the
/// kernel recorded nothing). A cell the kernel could not be traced for carries no
/// account: a periodic run has no per-wake /proc reading to give a partial one from.
fn explain_cell(
    tracing: &mut Recordings,
    recording: Option<Recording>,
    plan: &Plan,
    runs: &[ThreadRun],
    blocks: bool,
) -> Option<Explanation> {
    let (timeline, lost) = tracing.finish(recording?);
    let timeline: Timeline = timeline?;
    let mut accounts = Vec::new();
    for r in runs {
        let schedule = r.report.schedule(plan, &r.wakes);
        for w in crate::ticks::windows(&schedule, &r.wakes, r.tid, blocks) {
            accounts.push(sleeplab_account::account(&timeline, &w));
        }
    }
    Some(Explanation::of(&accounts, lost, false))
}

/// Whether `name`'s wakes happen on the measuring thread, where the tracer follows
/// them: not those of the mechanisms whose counts are estimates because their wakes
/// come elsewhere (glibc's SIGEV_THREAD callback threads, setitimer's child process).
fn wakes_on_measuring_thread(name: &str) -> bool {
    sleeplab::wait::periodic::find(name).is_none_or(|m| m.exact_counts)
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mechanisms: &[&str], threads: usize) -> TimersConfig {
        TimersConfig {
            mechanisms: mechanisms.iter().map(|s| s.to_string()).collect(),
            periods_ns: vec![2_000_000, 1_500],
            duration_ns: 20_000_000,
            threads,
            loads: vec![0],
            timer_slacks_ns: vec![],
            json_samples: 5,
            trace: false,
        }
    }

    #[test]
    fn cells_count_add_up_across_threads() {
        // 20 ms at 2 ms = 10 ticks per thread; setitimer cannot do 1.5 µs (skipped);
        // the 1.5 µs cells of the others run 13 333 busy ticks / timerfd expirations.
        let c = config(&["timerfd-interval", "setitimer"], 2);
        assert_eq!(cell_count(&c), 3);
        let out = run(&c, &Context::hidden()).unwrap();
        assert!(out.complete);
        let d = &out.data;
        assert_eq!(d.cells.len(), 3, "{:?}", d.skipped);
        assert_eq!(d.skipped.len(), 1);
        assert_eq!(d.skipped[0].mechanism, "setitimer");
        for cell in &d.cells {
            let ticks = c.ticks(cell.period_ns);
            assert_eq!(cell.threads.len(), 2);
            assert_eq!(cell.merged.expected, 2 * ticks, "{}", cell.mechanism);
            assert_eq!(cell.merged.received + cell.merged.missed, 2 * ticks);
            assert_eq!(cell.merged.early_wakes, 0, "{}", cell.mechanism);
            assert!(cell.merged.min_lateness_ns >= 0);
            for t in &cell.threads {
                assert_eq!(t.stats.expected, ticks);
                // setitimer's counts are estimates: a deadline may be claimed by no wake.
                if cell.mechanism == "setitimer" {
                    assert!(t.ticks.len() as u64 <= ticks);
                } else {
                    assert_eq!(t.ticks.len() as u64, ticks);
                }
                assert_eq!(t.lateness_ns.len(), 5);
                assert!(t.wall_ns >= (ticks - 1) * cell.period_ns);
            }
            let sum: u64 = cell.threads.iter().map(|t| t.stats.received).sum();
            assert_eq!(sum, cell.merged.received);
        }
    }
}
