//! `sleeplab monitor`: the flags of the Prometheus exporter, checked before it listens.

use super::args::{self, List, ThreadArgs};
use crate::error::UsageError;
use crate::experiments::Stop;
use crate::monitor::cells::{self, DEFAULT_MECHANISMS};
use crate::monitor::keep::KeepConfig;
use crate::monitor::measure::Pacing;
use crate::monitor::{self, MonitorConfig};
use crate::parse::{self, ParseError};
use clap::Args;
use std::net::{SocketAddr, ToSocketAddrs};

/// `sleeplab monitor`: every interval, each cell waits a short burst on its own
/// measuring thread; `/metrics` serves the latency histograms and counters since start.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// Address to serve /metrics and /healthz on.
    #[arg(long, value_name = "ADDR:PORT", value_parser = listen_addr, default_value = "127.0.0.1:9477")]
    pub listen: SocketAddr,
    /// What to measure, comma-separated `NAME[@DURATION]`: a one-shot mechanism
    /// (`sleeplab list`), `tick:` and a periodic one (e.g. tick:timerfd-interval), or
    /// `precise` (the precise sleeper on an absolute grid); DURATION may be a rate (60hz).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("mechanism list"), default_value = DEFAULT_MECHANISMS)]
    pub mechanisms: List<String>,
    /// Durations for the mechanisms named without @DURATION.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::durations, default_value = "1ms")]
    pub durations: List<u64>,
    /// One burst per cell every INTERVAL (at least 10ms).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = interval, default_value = "1s")]
    pub interval: u64,
    /// Waits per burst, or scheduled ticks per burst for `tick:` and precise cells
    /// (1–100000).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = burst, default_value = "10")]
    pub burst: u64,
    /// A wake at least this late counts as a stall.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration, default_value = "1ms")]
    pub stall: u64,
    /// Split each wake's lateness with the kernel's tracepoints, recorded only while a
    /// burst runs, and export it as `sleeplab_wake_component_seconds{component=…}`
    /// (as root; without tracing one line says why and the monitor goes on).
    #[arg(long)]
    pub trace: bool,
    /// A flight recorder (as root): each wake later than DUR keeps the kernel's trace of
    /// its wait in a saved trace in --keep-dir, counted in `sleeplab_kept_wakes_total`
    /// and named by an exemplar on its latency bucket; `sleeplab explain --from FILE`
    /// reads one back.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, value_parser = args::positive_duration)]
    pub keep_over: Option<u64>,
    /// Where --keep-over writes its saved traces (made if missing) [default:
    /// sleeplab-kept].
    #[arg(long, value_name = "DIR")]
    pub keep_dir: Option<std::path::PathBuf>,
    /// The most saved traces --keep-over writes over the run; later slow wakes are
    /// counted in `sleeplab_unkept_wakes_total` [default: 100].
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = keep_max)]
    pub keep_max: Option<u64>,
    #[command(flatten)]
    pub threads_args: ThreadArgs,
}

/// None: the monitor serves what it measures and saves no result.
pub const LONG_RUN: Option<&str> = None;

fn listen_addr(s: &str) -> Result<SocketAddr, ParseError> {
    let bad = |reason: String| ParseError {
        what: "listen address",
        value: s.into(),
        reason,
    };
    s.to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("resolves to no address".into()))
}

fn interval(s: &str) -> Result<u64, ParseError> {
    let ns = parse::duration_ns(s)?;
    if ns < 10_000_000 {
        return Err(ParseError {
            what: "interval",
            value: s.into(),
            reason: "must be at least 10ms".into(),
        });
    }
    Ok(ns)
}

/// Where the flight recorder writes when `--keep-dir` is not given.
const DEFAULT_KEEP_DIR: &str = "sleeplab-kept";

/// The most saved traces when `--keep-max` is not given.
const DEFAULT_KEEP_MAX: u64 = 100;

fn keep_dir(args: &MonitorArgs) -> std::path::PathBuf {
    args.keep_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_KEEP_DIR.into())
}

fn keep_max(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 100_000)
}

fn burst(s: &str) -> Result<u64, ParseError> {
    parse::count("burst", s, 1, 100_000)
}

/// Checks the flags, listens, and serves until Ctrl-C or SIGTERM (exit 0).
pub fn run(args: &MonitorArgs, quiet: bool) -> anyhow::Result<i32> {
    // A long-running server: a scraper that resets its connection mid-answer must cost
    // that answer, not the process. hyper writes with `writev`, which takes no
    // MSG_NOSIGNAL, so SIGPIPE (the binary's default, for a closed stdout) is ignored
    // again here, before any thread starts: the write then fails with EPIPE.
    // SAFETY: setting a signal's disposition, before the monitor's threads start.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let trace = args.trace
        && match sleeplab_account::available() {
            Ok(()) => true,
            Err(e) => {
                let note = sleeplab_account::unavailable(
                    &e,
                    "serving without the wake component histograms",
                );
                eprintln!("sleeplab monitor: {note}");
                false
            }
        };
    let keep = match args.keep_over {
        // The directory is checked first: a bad one is bad input, root or not.
        Some(over_ns) => match super::outputs::prepare_dir_for("--keep-dir", &keep_dir(args))
            .map(|()| sleeplab_account::available())?
        {
            Ok(()) => Some(KeepConfig {
                over_ns,
                dir: keep_dir(args),
                max_files: args.keep_max.unwrap_or(DEFAULT_KEEP_MAX),
            }),
            Err(e) => {
                let note = sleeplab_account::unavailable(&e, "serving without the flight recorder");
                eprintln!("sleeplab monitor: {note}");
                None
            }
        },
        None => {
            let given = [
                args.keep_dir
                    .as_ref()
                    .map(|d| format!("--keep-dir {}", d.display())),
                args.keep_max.map(|n| format!("--keep-max {n}")),
            ];
            if let Some(flag) = given.into_iter().flatten().next() {
                return Err(UsageError::new(format!("{flag}: needs --keep-over")).into());
            }
            None
        }
    };
    let config = MonitorConfig {
        cells: cells::parse_cells(&args.mechanisms.0, &args.durations.0)?,
        pacing: Pacing {
            interval_ns: args.interval,
            burst: args.burst,
            stall_ns: args.stall,
            trace,
        },
        threads: args.threads_args.settings()?,
        keep,
    };
    let listener = std::net::TcpListener::bind(args.listen)
        .map_err(|e| UsageError::new(format!("cannot listen on --listen {}: {e}", args.listen)))?;
    // The address bound (the port chosen, for --listen …:0).
    let bound = listener.local_addr().unwrap_or(args.listen);
    if !quiet {
        eprintln!(
            "sleeplab monitor: serving http://{bound}/metrics ({} cells, a burst of {} every {}); Ctrl-C stops",
            config.cells.len(),
            args.burst,
            sleeplab_stats::fmt_ns(args.interval),
        );
        if let Some(k) = &config.keep {
            eprintln!(
                "sleeplab monitor: keeping the trace of each wake later than {} in {} (at most {} files); `sleeplab explain --from FILE` reads one back",
                sleeplab_stats::fmt_ns(k.over_ns),
                k.dir.display(),
                k.max_files
            );
        }
    }
    // Nothing is saved: the metrics were served as they were measured.
    match &config.keep {
        // Said once per process: the message lives as long as it.
        Some(k) => crate::interrupt::say_on_stop(Box::leak(
            format!(
                "sleeplab monitor: stopping (the flight recorder's saved traces are in {})",
                k.dir.display()
            )
            .into_boxed_str(),
        )),
        None => crate::interrupt::say_on_stop("sleeplab monitor: stopping (nothing to save)"),
    }
    monitor::serve(&config, listener, &Stop::on_interrupt()).map_err(args::name_flags)?;
    Ok(0)
}
