//! What the tracer (`sleeplab_capture::Tracer`, behind `explain` and `--trace`)
//! costs, for `scripts/bench-trace.sh`: blocks of WAITS waits without it; with it as
//! `explain` follows its own cells (`Tracer::start`); with it as `explain --pid` follows
//! a program (`Tracer::for_program` on the measuring thread: the system calls' entries
//! too, every thread it creates followed): by default (ftrace, the system calls kept by
//! an event filter, the machine's interrupts but the local timer's, no idle states); by
//! the BPF recorder (`--bpf`); with the idle states (`--idle-states`: the local timer
//! and the idle states too, three of whose tracepoints lie on the way of a wake from
//! idle); light (`--light`: no interrupts); with the system calls kept by the kernel's
//! pid list (`--pid-list`); and under
//! a bare ftrace instance that records only the
//! `--bare-events` (by default the five events a wake's account cannot do without:
//! `sched_waking`, `sched_switch`, `hrtimer_start`, `hrtimer_expire_entry` and
//! `sys_exit`, every task's, in one instance: the floor the tracer's cost is read
//! against). All interleaved in one run (ROUNDS × each loop × the eight, their order
//! rotating from round to round so none always runs first), on two loops: an absolute
//! `clock_nanosleep` on a PERIOD grid (1 kHz by default) and a relative `nanosleep` of
//! PERIOD.
//!
//! Per loop it prints a Markdown table: the median lateness of each side with its
//! distribution-free 95 % interval (order statistics: binomial ranks) and p99, the
//! difference of the medians (each traced side − untraced, per round: judged on the
//! rounds' median, since the wakes of one block share its moment), and the CPU:
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
//! fully traced (blocked, with every event of its way on record): a tracer that
//! recorded nothing would cost nothing. Then what each way of following a program
//! costs the work it does not follow (`others.rs`). Runs as root.
//!
//!     cargo run --release -p sleeplab-cli --example trace_cost -- --rounds 40 --waits 500

use bare::{Bare, EventList, OwnBy, bare_instance, parse_events};
use clap::Parser;
use report::{fmt_us, report};
use sleeplab::clock::{monotonic_ns, process_cpu_ns};
use sleeplab::wait::ThreadUsage;
use sleeplab_account::{Detail, Timeline, Window, account, this_tid, unavailable};
use sleeplab_capture::{SyscallsBy, Tracer};
use sleeplab_stats::tail_quantile_i64;
use std::time::Duration;

#[derive(Parser)]
struct Args {
    /// Rounds; each runs every loop untraced and traced, one block each.
    #[arg(long, default_value_t = 40)]
    rounds: u32,
    /// Waits per block.
    #[arg(long, default_value_t = 500)]
    waits: u64,
    /// The grid's period and the relative sleep's length.
    #[arg(long, default_value = "1ms", value_parser = humantime::parse_duration)]
    period: Duration,
    /// The CPU the measuring thread runs on: 0, because the kernels here record nothing
    /// CPU 1's idle task emits (a switch onto an idle CPU 1 goes unrecorded).
    #[arg(long, default_value_t = 0)]
    pin: usize,
    /// The events the bare ftrace side records, `system:event` comma-separated: by
    /// default the five a wake's account cannot do without (another list asks what a
    /// group of events costs: `sched:sched_waking,sched:sched_switch` alone is the
    /// least any tracer of wakes records).
    #[arg(long, default_value = BARE_EVENTS, value_parser = parse_events)]
    bare_events: EventList,
    /// Events the bare side records for the measuring thread only (none by default),
    /// kept to it as `--bare-own-by` says: what the tracer's layout adds to the same
    /// events.
    #[arg(long, value_parser = parse_events)]
    bare_own: Option<EventList>,
    /// How the `--bare-own` events are kept to the thread.
    #[arg(long, value_enum, default_value_t = OwnBy::Pid)]
    bare_own_by: OwnBy,
    /// Rounds of what each side costs a thread it does not follow, on another CPU
    /// (its `getppid` calls and its pipe round trips; 0: not measured).
    #[arg(long, default_value_t = 10)]
    others_rounds: u32,
}

/// The bare side's events by default: those a wake's account cannot do without (who
/// woke the thread and when it ran, the timer armed and its expiry, the call's return).
const BARE_EVENTS: &str = "sched:sched_waking,sched:sched_switch,timer:hrtimer_start,\
                           timer:hrtimer_expire_entry,raw_syscalls:sys_exit";

/// A way of waiting that is measured with and without the tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loop {
    /// `clock_nanosleep(TIMER_ABSTIME)` to `t0 + k·period`.
    Grid,
    /// `nanosleep(period)`.
    Relative,
}

/// How a block is traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Not at all.
    Untraced,
    /// By a tracer following the measuring thread, as `explain` follows its own cells
    /// and `--trace` its waits (`Tracer::start`).
    Traced,
    /// By a tracer following the measuring thread as a program, in this detail, its
    /// system calls kept to it this way, as `explain --pid` follows one
    /// (`Tracer::for_program`: the system calls' entries too, the threads it creates
    /// followed from their first call).
    Program(Detail, SyscallsBy),
    /// By a bare ftrace instance recording `--bare-events` of every task (and
    /// `--bare-own` of the measuring thread), read after the block.
    Bare,
}

/// How many modes a round runs.
const MODES: usize = 8;

impl Mode {
    /// Every mode, untraced first (the baseline of the differences).
    const ALL: [Mode; MODES] = [
        Mode::Untraced,
        Mode::Traced,
        Mode::Program(Detail::Interrupts, SyscallsBy::Filter),
        Mode::Program(Detail::Interrupts, SyscallsBy::Bpf),
        Mode::Program(Detail::Full, SyscallsBy::Filter),
        Mode::Program(Detail::Light, SyscallsBy::Filter),
        Mode::Program(Detail::Interrupts, SyscallsBy::PidList),
        Mode::Bare,
    ];

    fn label(self) -> &'static str {
        match self {
            Mode::Untraced => "untraced",
            Mode::Traced => "traced",
            Mode::Program(detail, by) => match (detail, by) {
                (Detail::Interrupts, SyscallsBy::Filter) => "program",
                (Detail::Full, SyscallsBy::Filter) => "program, idle states",
                (Detail::Light, SyscallsBy::Filter) => "program, light",
                (Detail::Interrupts, SyscallsBy::Bpf) => "program, BPF",
                (Detail::Full, SyscallsBy::Bpf) => "program, BPF, idle states",
                (Detail::Light, SyscallsBy::Bpf) => "program, BPF, light",
                (Detail::Interrupts, SyscallsBy::PidList) => "program, pid list",
                (Detail::Full, SyscallsBy::PidList) => "program, idle states, pid list",
                (Detail::Light, SyscallsBy::PidList) => "program, light, pid list",
            },
            Mode::Bare => "bare ftrace",
        }
    }
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
        let stat = sleeplab::system::ProcStat::read()
            .ok_or_else(|| anyhow::anyhow!("/proc/stat cannot be read or has no cpu line"))?;
        Ok(Self {
            wall_ns: monotonic_ns(),
            idle_ns: stat.total.idle_all() * tick_ns,
            cpus: stat.cpus.len() as u32,
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

impl Block {
    /// The median lateness of the block, ns.
    fn median_ns(&self) -> Option<f64> {
        let mut sorted = self.lateness_ns.clone();
        sorted.sort_unstable();
        tail_quantile_i64(&sorted, 0.5)
    }
}

/// The tracer or bare instance of side `mode`, recording for the thread `tid`.
fn open_side(mode: Mode, args: &Args, tid: i32) -> anyhow::Result<(Option<Tracer>, Option<Bare>)> {
    let tracer = match mode {
        Mode::Traced => Some(Tracer::start()),
        Mode::Program(detail, by) => Some(Tracer::for_program(&[tid], detail, by)),
        Mode::Untraced | Mode::Bare => None,
    }
    .transpose()
    .map_err(|e| anyhow::anyhow!("{}", unavailable(&e, "nothing measured")))?;
    let bare = match mode {
        Mode::Bare => Some(bare_instance(
            &args.bare_events,
            args.bare_own.as_ref(),
            args.bare_own_by,
            tid,
        )?),
        Mode::Untraced | Mode::Traced | Mode::Program(..) => None,
    };
    Ok((tracer, bare))
}

/// Runs one block of `waits` waits of `lp`, traced as `mode` says.
fn block(
    lp: Loop,
    mode: Mode,
    waits: u64,
    period_ns: u64,
    tick_ns: u64,
    args: &Args,
) -> anyhow::Result<Block> {
    let tid = this_tid();
    let (mut tracer, mut bare) = open_side(mode, args, tid)?;
    let mut windows = Vec::with_capacity(waits as usize);
    let before = Snapshot::now(tick_ns)?;
    let t0 = monotonic_ns() + period_ns;
    for k in 0..waits {
        // Every side reads the voluntary switches (outside the timed span), so every
        // side does the same work: a fully traced wake is one that blocked.
        let switches = ThreadUsage::now().voluntary_csw;
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
        let switches = ThreadUsage::now().voluntary_csw.saturating_sub(switches);
        windows.push(Window::until(tid, start_ns, deadline_ns, end_ns).with_switches(switches));
    }
    let mut b = Block::default();
    if let Some(t) = tracer.as_mut() {
        let d0 = monotonic_ns();
        let drained = t.drain();
        b.drain_ns = monotonic_ns() - d0;
        b.events = drained.events as u64;
    }
    if let Some(bare) = bare.as_mut() {
        for instance in &bare.instances {
            instance.set_on(false)?;
            b.events += instance.entries();
            b.lost += instance.lost();
        }
        // Read (and dropped) inside the block's accounting, as the tracer's drain is.
        let d0 = monotonic_ns();
        let mut page = vec![0u8; bare.fs.page_size()];
        for instance in &mut bare.instances {
            instance.read_pages(&mut page, |_, _| true)?;
        }
        b.drain_ns = monotonic_ns() - d0;
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
        let captured = t.finish();
        let lost = captured.lost;
        let timeline = Timeline::of(captured);
        b.lost = lost;
        b.traced_wakes = windows
            .iter()
            .map(|w| account(&timeline, w))
            .filter(|a| a.traced && a.blocked)
            .count() as u64;
    }
    Ok(b)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let period_ns = u64::try_from(args.period.as_nanos())?;
    if period_ns == 0 || args.waits == 0 || args.rounds == 0 {
        eprintln!("trace_cost: --period, --waits and --rounds must be positive");
        std::process::exit(2);
    }
    let tick_ns = sleeplab::system::tick_ns();
    let hz = 1_000_000_000 / tick_ns;
    if let Err(e) = sleeplab::system::pin_to_cpu(args.pin) {
        eprintln!("trace_cost: cannot pin to CPU {}: {e}", args.pin);
        std::process::exit(2);
    }
    if let Err(e) = Tracer::start() {
        eprintln!("trace_cost: {}", unavailable(&e, "nothing measured"));
        std::process::exit(1);
    }
    let mut rounds: Vec<Vec<[Block; MODES]>> = vec![Vec::new(); Loop::ALL.len()];
    for round in 0..args.rounds {
        for (i, &lp) in Loop::ALL.iter().enumerate() {
            // The modes in an order rotated by the round: each runs in every place of
            // the order equally often.
            let mut blocks: [Block; MODES] = Default::default();
            for k in 0..Mode::ALL.len() {
                let m = (k + round as usize) % Mode::ALL.len();
                blocks[m] = block(lp, Mode::ALL[m], args.waits, period_ns, tick_ns, &args)?;
            }
            rounds[i].push(blocks);
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
         p99 where n ≥ 100; the machine's busy time from /proc/stat ({hz} ticks/s); the \
         bare ftrace side records {}{}.\n",
        args.waits,
        fmt_us(slack as f64),
        args.bare_events,
        match &args.bare_own {
            Some(own) => format!(
                ", and {own} of the measuring thread only (kept to it by {})",
                match args.bare_own_by {
                    OwnBy::Pid => "a second instance's set_event_pid",
                    OwnBy::Filter => "an event filter on common_pid",
                }
            ),
            None => String::new(),
        },
    );
    for (i, &lp) in Loop::ALL.iter().enumerate() {
        println!(
            "{}\n",
            report(&lp.label(period_ns), &rounds[i], period_ns).join("\n")
        );
    }
    if args.others_rounds > 0 {
        // The machine's CPUs (this thread's affinity is its one CPU now).
        // SAFETY: sysconf has no preconditions.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        let other_cpu = (args.pin + 1) % cpus;
        let tid = this_tid();
        let rows = others::measure(args.others_rounds, other_cpu, |mode| {
            open_side(mode, &args, tid).map(|(tracer, _)| tracer)
        })?;
        println!("{}", others::report(&rows, other_cpu).join("\n"));
    }
    Ok(())
}

mod bare;
mod others;
mod report;
#[cfg(test)]
mod tests;
