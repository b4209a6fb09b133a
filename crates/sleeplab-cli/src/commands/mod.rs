//! The command layer: one module per subcommand (clap arguments → an experiment's plain
//! config → `tail`), the subcommands' enum and its dispatch ([`Command`]), and the
//! pieces they share (`args`, `outputs`). Nothing below this layer knows a flag.

pub(crate) mod advise;
pub(crate) mod args;
pub(crate) mod compare;
pub(crate) mod cpu;
pub(crate) mod explain;
pub(crate) mod hints;
pub(crate) mod list;
#[cfg(feature = "monitor")]
pub(crate) mod monitor;
#[cfg(not(feature = "monitor"))]
pub(crate) mod monitor_absent;
#[cfg(not(feature = "monitor"))]
pub(crate) use monitor_absent as monitor;
pub(crate) mod outputs;
pub(crate) mod pace;
pub(crate) mod report;
pub(crate) mod runtimes;
pub(crate) mod schema;
pub(crate) mod short;
pub(crate) mod simulate;
pub(crate) mod survey;
pub(crate) mod sweep;
pub(crate) mod tail;
pub(crate) mod timers;
pub(crate) mod tune;

use clap::Subcommand;

/// Declares [`Command`] from the list below, one line (with its doc) a subcommand: the
/// enum (clap's subcommands, in `--help`'s order; a variant's doc is its `--help` line),
/// its dispatch ([`Command::run`]: each module's `run(&args, quiet)`) and each
/// subcommand's [`Command::long_runs`] (each module's `LONG_RUN`).
macro_rules! commands {
    ($($(#[$attr:meta])* $variant:ident($module:ident::$args:ident),)*) => {
        /// The subcommands.
        #[derive(Debug, Subcommand)]
        pub enum Command {
            $($(#[$attr])* $variant(Box<$module::$args>),)*
        }

        impl Command {
            /// Runs the subcommand; returns its exit code.
            pub fn run(&self, quiet: bool) -> anyhow::Result<i32> {
                match self {
                    $(Command::$variant(args) => $module::run(args, quiet),)*
                }
            }

            /// Every subcommand's name, as clap spells it, with its module's `LONG_RUN`:
            /// the arguments of a run that measures from its first second on, for tens of
            /// seconds or more, without changing the machine's settings, and saves its
            /// result with `--json` (`None`: the command saves no measured result). The
            /// tests interrupt each such run (tests/interrupt_cli.rs) and put a bad value
            /// into it for every flag (tests/bad_input.rs).
            pub fn long_runs() -> Vec<(String, Option<&'static str>)> {
                let runs = [$($module::LONG_RUN,)*];
                let names = Command::augment_subcommands(clap::Command::new("sleeplab"));
                let names: Vec<String> =
                    names.get_subcommands().map(|c| c.get_name().to_string()).collect();
                assert_eq!(names.len(), runs.len(), "one LONG_RUN a subcommand");
                names.into_iter().zip(runs).collect()
            }
        }
    };
}

commands! {
    /// Every experiment in short (RUN_TIME), then a report directory and the findings (the default).
    #[command(about = format!("Every experiment in short ({}), then a report directory and the findings (the default)", crate::survey::RUN_TIME))]
    Survey(survey::SurveyArgs),
    /// Re-render a saved result (any experiment's --json, or a survey) as DIR/index.html.
    Report(report::ReportArgs),
    /// Two results side by side, with ratios b/a of every matching median and p99; or N
    /// (a fleet: one row per machine, the outliers named).
    Compare(compare::CompareArgs),
    /// List every wait mechanism, what it calls, and whether this machine supports it.
    List(list::ListArgs),
    /// Requested duration × mechanism × load → how long the wait really took (seed 000).
    Sweep(sweep::SweepArgs),
    /// A fixed-rate loop (60 FPS) per precise-sleep contender: error and CPU (seed 002).
    Pace(pace::PaceArgs),
    /// CPU usage against requested sleep for the hybrid sleep+spin strategies (seed 002).
    Cpu(cpu::CpuArgs),
    /// Which way of waiting meets your tolerance at the lowest CPU here, with evidence.
    Advise(advise::AdviseArgs),
    /// What zero and minimal sleeps really cost, per mechanism, with 99.9 % CIs (seed 001).
    Short(short::ShortArgs),
    /// Every language runtime's own sleep, measured the same way through probes (seed 003).
    Runtimes(runtimes::RuntimesArgs),
    /// Why waits were late: each wake's lateness split by the kernel's own timestamps.
    Explain(explain::ExplainArgs),
    /// What changing a setting of this machine does to the same waits, and its CPU cost.
    Tune(tune::TuneArgs),
    /// Periodic timers compared: count, avg error %, σ, lateness, missed ticks (seed 004).
    Timers(timers::TimersArgs),
    /// The precise-sleep strategies under virtual schedulers: error and CPU heatmaps (seed 002 fig. 4).
    Simulate(simulate::SimulateArgs),
    /// Measure wake-up latency continuously at a low duty cycle and serve it to Prometheus.
    #[cfg_attr(
        not(feature = "monitor"),
        command(about = "Not in this build (built without the cargo feature `monitor`)")
    )]
    Monitor(monitor::MonitorArgs),
    /// Print the JSON Schema of result files.
    Schema(schema::SchemaArgs),
}
