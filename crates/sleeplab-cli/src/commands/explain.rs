//! `sleeplab explain`.

use super::args::{self, List, OutputArgs, ThreadArgs};
use super::tail;
use crate::contenders::{self, strategies};
use crate::error::UsageError;
use crate::experiments::explain::program::{KEEP_MAX_BYTES, Outputs, ProgramConfig, TargetSpec};
use crate::experiments::explain::{
    DEFAULT_DURATIONS, DEFAULT_ITERATIONS, DEFAULT_MECHANISMS, ExplainConfig, ExplainItem,
};
use crate::parse::{self, Names, ParseError, dedup, duration_or_rate_ns};
use clap::Args;
use sleeplab::wait;
use sleeplab_account::{Detail, Keep, SyscallsBy};

/// `sleeplab explain`: why waits are late, from the kernel's own timestamps.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// Mechanisms, each NAME or NAME@DURATION (a rate such as 60hz is its period): one-shot
    /// mechanisms (`sleeplab list`) or precise-sleep strategies (precise, sdl-precise, …).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("mechanism list"),
          default_value = DEFAULT_MECHANISMS)]
    pub mechanisms: List<String>,
    /// Requested durations of the mechanisms named without one.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::durations,
          default_value = DEFAULT_DURATIONS)]
    pub durations: List<u64>,
    /// Competing busy threads, a list of levels (default: 0 and one per CPU).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::loads)]
    pub load: Option<List<usize>>,
    /// Timer slack(s) to measure under, e.g. 50us,1ns (default: leave it as it is).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Wakes per cell.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = iterations,
          default_value_t = DEFAULT_ITERATIONS)]
    pub iterations: u64,
    /// Interleaved passes over all cells: the units a cell's verdicts rest on (an
    /// interval over rounds needs 8).
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = rounds, default_value = "10")]
    pub rounds: u64,
    /// Per-wake records kept per cell in the JSON (the CSV gets every wake).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::json_samples, default_value = "100000")]
    pub json_wakes: u64,
    /// Do not trace the kernel: the partial account of /proc only (run queue, timer slack).
    #[arg(long)]
    pub no_trace: bool,
    /// Explain a running program's own waits instead of sleeplab's: follow every thread
    /// of process PID (threads it starts later too) and find each wait that blocked on
    /// a timer.
    #[arg(long, value_name = "PID", allow_hyphen_values = true, value_parser = pid, conflicts_with = "command")]
    pub pid: Option<i32>,
    /// How long to follow the program, whole seconds (default: until it exits, or Ctrl-C).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = seconds)]
    pub seconds: Option<u64>,
    /// A command to start and explain the waits of, after `--` (with its arguments).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Save the program's trace to FILE (a sleeplab saved trace): `--from FILE` prints
    /// the same account from it later, anywhere.
    #[arg(long, value_name = "FILE")]
    pub save: Option<std::path::PathBuf>,
    /// A flight recorder: save only the trace windows of the waits later than DUR past
    /// their deadline (from a lookback before each wait began to its return), the latest
    /// first, to the `--save` file.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, value_parser = keep_over, requires = "save")]
    pub keep_over: Option<u64>,
    /// The most windows `--keep-over` saves (the latest first).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = keep_max,
          default_value = "100", requires = "keep_over")]
    pub keep_max: u64,
    /// Draw a program's waits as a report page, DIR/index.html (with --pid, a command
    /// or --from).
    #[arg(long, value_name = "DIR")]
    pub report: Option<std::path::PathBuf>,
    /// With --pid or a command (as root): record the kernel stack of each task as it
    /// leaves a CPU, and print, for what held the CPU while the program's waits waited,
    /// where it was in the kernel (adds a stack walk to every context switch while it
    /// runs; stacks are not saved).
    #[arg(long, conflicts_with_all = ["save", "from"])]
    pub stacks: bool,
    /// With --pid or a command: record the program's timers, switches and system calls
    /// but not the machine's interrupts, for less added to each of its wakes
    /// (docs/BENCHMARKS.md, "What the tracer costs"); the account then names no
    /// interrupt and does not tell the host's share of a timer's delivery.
    #[arg(long, conflicts_with_all = ["from", "idle_states"])]
    pub light: bool,
    /// With --pid or a command: record the local timer's interrupt and the idle loop's
    /// states too, which lie on the way of every wake from an idle CPU: the account
    /// then tells a timer's delivery to an idle CPU from the guest's polling and its
    /// interrupt entry, for more added to each of the program's wakes
    /// (docs/BENCHMARKS.md, "What the tracer costs").
    #[arg(long, conflicts_with = "from")]
    pub idle_states: bool,
    /// With --pid or a command: keep the program's system calls to it by the kernel's
    /// pid list rather than by an event filter. Every other process's system calls then
    /// cost less while it runs, and each of the program's wakes more: the list's hooks
    /// run on every switch and wakeup (docs/BENCHMARKS.md, "What the tracer costs").
    #[arg(long, conflicts_with_all = ["from", "bpf"])]
    pub pid_list: bool,
    /// With --pid or a command: record with the BPF recorder (BTF-typed raw tracepoints
    /// into one ring buffer, the program's system calls kept to it in the kernel) rather
    /// than ftrace. It needs root, a kernel with BTF and a build that had clang. On the
    /// 2-core VM it cost each wake what ftrace costs (docs/BENCHMARKS.md, "What the
    /// tracer costs"), and it missed every event of a CPU while some tasks ran there,
    /// which ftrace recorded: a wait whose expiry and wakeup fell in such a stretch
    /// reads as unrecorded. Not with --stacks or --pid-list, which are ftrace's.
    #[arg(long, conflicts_with_all = ["from", "stacks"])]
    pub bpf: bool,
    /// Explain a program's waits from a saved trace (`--save`) instead of a live run.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["pid", "command", "seconds", "save"])]
    pub from: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--mechanisms nanosleep,timerfd --durations 1ms --iterations 100000 --load 0,1");

fn pid(s: &str) -> Result<i32, ParseError> {
    parse::count("pid", s, 1, 4_194_304).map(|p| p as i32)
}

fn keep_over(s: &str) -> Result<u64, ParseError> {
    parse::duration_ns(s)
}

fn keep_max(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 100_000)
}

fn seconds(s: &str) -> Result<u64, ParseError> {
    parse::count("seconds", s, 1, 86_400)
}

fn iterations(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 10_000_000)
}

fn rounds(s: &str) -> Result<u64, ParseError> {
    parse::count("rounds", s, 1, 1_000)
}

/// Every name `--mechanisms` takes: the one-shot mechanisms and the strategies.
fn known() -> Vec<&'static str> {
    contenders::names()
}

/// The items of `--mechanisms` (`NAME[@DURATION]`; settings such as
/// `precise:q=0.999,budget=3%` rejoined), each name at its own duration or at every one
/// of `durations`.
pub fn items(given: &[String], durations: &[u64]) -> Result<Vec<ExplainItem>, UsageError> {
    let names = known();
    let check = Names::new("mechanism", names.iter().copied()).otherwise("see `sleeplab list`");
    let mut out: Vec<ExplainItem> = Vec::new();
    for item in strategies::join_settings(given) {
        let (name, at) = match item.rsplit_once('@') {
            Some((n, d)) => (n.trim().to_string(), Some(duration_or_rate_ns(d)?)),
            None => (item.trim().to_string(), None),
        };
        let base = strategies::base_name(&name);
        if wait::find(&name).is_none() {
            check.check(base)?;
            if strategies::names().contains(&base) {
                strategies::canonical(&name)
                    .map_err(|e| UsageError::new(format!("invalid mechanism `{name}`: {e}")))?;
            }
        }
        for ns in at.map_or_else(|| durations.to_vec(), |ns| vec![ns]) {
            if let Some(reason) = contenders::skip_reason(&name, ns) {
                return Err(UsageError::new(format!(
                    "invalid mechanism `{item}`: {reason}"
                )));
            }
            let it = ExplainItem {
                mechanism: name.clone(),
                requested_ns: ns,
            };
            if !out.contains(&it) {
                out.push(it);
            }
        }
    }
    Ok(out)
}

/// Builds the config from the arguments.
pub fn config(args: &ExplainArgs) -> Result<ExplainConfig, UsageError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(ExplainConfig {
        items: items(&args.mechanisms.0, &dedup(&args.durations.0))?,
        loads: args
            .load
            .as_ref()
            .map_or_else(|| vec![0, cpus], |l| dedup(&l.0)),
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| l.0.clone()),
        iterations: args.iterations,
        rounds: args.rounds.min(args.iterations),
        json_wakes: args.json_wakes as usize,
        trace: !args.no_trace,
    })
}

/// The program to follow, when `--pid` or a command names one.
pub fn program(args: &ExplainArgs) -> Option<ProgramConfig> {
    let target = match (args.pid, args.command.is_empty()) {
        (Some(pid), _) => TargetSpec::Pid(pid),
        (None, false) => TargetSpec::Command(args.command.clone()),
        (None, true) => return None,
    };
    Some(ProgramConfig {
        target,
        seconds: args.seconds.map(|s| s as f64),
        json: args.output.json.clone(),
        csv: args.output.csv.clone(),
        report: args.report.clone(),
        save: args.save.clone(),
        keep: args.keep_over.map(|over_ns| Keep {
            over_ns,
            max_windows: args.keep_max as usize,
            max_bytes: KEEP_MAX_BYTES,
        }),
        read_back: args.save.as_ref().map_or_else(String::new, |p| {
            format!("sleeplab explain --from {}", p.display())
        }),
        stacks: args.stacks,
        detail: match (args.light, args.idle_states) {
            (true, _) => Detail::Light,
            (false, true) => Detail::Full,
            (false, false) => Detail::Interrupts,
        },
        syscalls_by: recorder(args),
        hints: super::hints::WORDING,
    })
}

/// What records a program and keeps its system calls to it: ftrace's event filter by
/// default, the kernel's pid list or the BPF recorder where asked for.
fn recorder(args: &ExplainArgs) -> SyscallsBy {
    if args.pid_list {
        SyscallsBy::PidList
    } else if args.bpf {
        SyscallsBy::Bpf
    } else {
        SyscallsBy::Filter
    }
}

/// Runs `explain`, prints its tables and findings, writes the requested files; with a
/// program to follow, explains that program's waits instead.
pub fn run(args: &ExplainArgs, quiet: bool) -> anyhow::Result<i32> {
    let program_outputs = [
        ("--json", &args.output.json),
        ("--csv", &args.output.csv),
        ("--save", &args.save),
    ];
    let cfg = program(args);
    let prepare_report = || match &args.report {
        Some(dir) => super::outputs::prepare_dir_for("--report", dir),
        None => Ok(()),
    };
    if let Some(from) = &args.from {
        super::outputs::check_outputs(&program_outputs)?;
        // The report directory is made once the saved trace has been read.
        return crate::experiments::explain::program::replay(
            from,
            Outputs {
                json: args.output.json.as_deref(),
                csv: args.output.csv.as_deref(),
                report: args.report.as_deref(),
                hints: super::hints::WORDING,
            },
            prepare_report,
        );
    }
    if let Some(cfg) = cfg {
        super::outputs::check_outputs(&program_outputs)?;
        prepare_report()?;
        return crate::experiments::explain::program::run(&cfg, quiet);
    }
    let only_a_programs = [
        ("--save", args.save.as_deref()),
        ("--report", args.report.as_deref()),
    ];
    if let Some((flag, path)) = only_a_programs.iter().find_map(|(f, p)| Some((f, (*p)?))) {
        return Err(UsageError::new(format!(
            "{flag} {:?} is for a program's waits: give --pid PID or a command after --",
            path.display().to_string()
        ))
        .into());
    }
    for (given, flag) in [
        (args.seconds.is_some(), "--seconds"),
        (args.stacks, "--stacks"),
        (args.light, "--light"),
        (args.idle_states, "--idle-states"),
        (args.pid_list, "--pid-list"),
        (args.bpf, "--bpf"),
    ] {
        if given {
            return Err(UsageError::new(format!(
                "{flag} follows a program: give --pid PID or a command after --"
            ))
            .into());
        }
    }
    tail::measure_and_save("explain", quiet, &args.threads, &args.output, || {
        config(args)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<String> {
        s.split(',').map(String::from).collect()
    }

    #[test]
    fn the_defaults_are_five_mechanisms_at_two_durations_and_precise_at_60hz() {
        let it = items(&list(DEFAULT_MECHANISMS), &[100_000, 1_000_000]).unwrap();
        assert_eq!(it.len(), 11);
        assert_eq!(
            it.last().unwrap(),
            &ExplainItem {
                mechanism: "precise".into(),
                requested_ns: 16_666_667
            }
        );
    }

    #[test]
    fn settings_and_bad_items() {
        let it = items(&list("precise:q=0.999,budget=3%@1ms"), &[5]).unwrap();
        assert_eq!(it[0].mechanism, "precise:q=0.999,budget=3%");
        assert_eq!(it[0].requested_ns, 1_000_000);
        for bad in ["nope", "nanosleep@soon", "precise:q=2", "precise@0hz"] {
            assert!(items(&list(bad), &[1_000_000]).is_err(), "{bad}");
        }
    }
}
