//! The command layer: one module per subcommand (clap arguments → an experiment's plain
//! config → [`tail`]), the subcommands' enum and its dispatch ([`Command`]), and the
//! pieces they share ([`args`], [`outputs`]). Nothing below this layer knows a flag.

pub mod advise;
pub mod args;
pub mod compare;
pub mod cpu;
pub mod explain;
pub mod hints;
pub mod list;
#[cfg(feature = "monitor")]
pub mod monitor;
#[cfg(not(feature = "monitor"))]
pub mod monitor_absent;
#[cfg(not(feature = "monitor"))]
pub use monitor_absent as monitor;
pub mod outputs;
pub mod pace;
pub mod report;
pub mod runtimes;
pub mod schema;
pub mod short;
pub mod simulate;
pub mod survey;
pub mod sweep;
pub mod tail;
pub mod timers;
pub mod tune;

use clap::Subcommand;
use std::path::PathBuf;

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every experiment in short (RUN_TIME), then a report directory and the findings (the default).
    #[command(about = format!("Every experiment in short ({}), then a report directory and the findings (the default)", crate::survey::RUN_TIME))]
    Survey(Box<survey::SurveyArgs>),
    /// Re-render a saved result (any experiment's --json, or a survey) as DIR/index.html.
    Report(Box<report::ReportArgs>),
    /// Two results side by side, with ratios b/a of every matching median and p99; or N
    /// (a fleet: one row per machine, the outliers named).
    Compare(Box<compare::CompareArgs>),
    /// List every wait mechanism, what it calls, and whether this machine supports it.
    List,
    /// Requested duration × mechanism × load → how long the wait really took (seed 000).
    Sweep(Box<sweep::SweepArgs>),
    /// A fixed-rate loop (60 FPS) per precise-sleep contender: error and CPU (seed 002).
    Pace(Box<pace::PaceArgs>),
    /// CPU usage against requested sleep for the hybrid sleep+spin strategies (seed 002).
    Cpu(Box<cpu::CpuArgs>),
    /// Which way of waiting meets your tolerance at the lowest CPU here, with evidence.
    Advise(Box<advise::AdviseArgs>),
    /// What zero and minimal sleeps really cost, per mechanism, with 99.9 % CIs (seed 001).
    Short(Box<short::ShortArgs>),
    /// Every language runtime's own sleep, measured the same way through probes (seed 003).
    Runtimes(Box<runtimes::RuntimesArgs>),
    /// Why waits were late: each wake's lateness split by the kernel's own timestamps.
    Explain(Box<explain::ExplainArgs>),
    /// What changing a setting of this machine does to the same waits, and its CPU cost.
    Tune(Box<tune::TuneArgs>),
    /// Periodic timers compared: count, avg error %, σ, lateness, missed ticks (seed 004).
    Timers(Box<timers::TimersArgs>),
    /// The precise-sleep strategies under virtual schedulers: error and CPU heatmaps (seed 002 fig. 4).
    Simulate(Box<simulate::SimulateArgs>),
    /// Measure wake-up latency continuously at a low duty cycle and serve it to Prometheus.
    #[cfg_attr(
        not(feature = "monitor"),
        command(about = "Not in this build (built without the cargo feature `monitor`)")
    )]
    Monitor(Box<monitor::MonitorArgs>),
    /// Print the JSON Schema of result files.
    Schema {
        /// Write it to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

impl Command {
    /// Runs the subcommand; returns its exit code.
    pub fn run(&self, quiet: bool) -> anyhow::Result<i32> {
        match self {
            Command::List => list::run(),
            Command::Sweep(args) => sweep::run(args, quiet),
            Command::Pace(args) => pace::run(args, quiet),
            Command::Cpu(args) => cpu::run(args, quiet),
            Command::Advise(args) => advise::run(args, quiet),
            Command::Short(args) => short::run(args, quiet),
            Command::Runtimes(args) => runtimes::run(args, quiet),
            Command::Timers(args) => timers::run(args, quiet),
            Command::Tune(args) => tune::run(args, quiet),
            Command::Explain(args) => explain::run(args, quiet),
            Command::Simulate(args) => simulate::run(args, quiet),
            Command::Schema { output } => schema::run(output.as_deref()),
            Command::Survey(args) => survey::run(args, quiet),
            Command::Report(args) => report::run(args),
            Command::Compare(args) => compare::run(args),
            Command::Monitor(args) => monitor::run(args, quiet),
        }
    }
}
