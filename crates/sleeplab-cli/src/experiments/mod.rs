//! The experiments. Each is a function from a plain config to a result value
//! ([`Experiment`]); printing and saving are separate renderers of that value, run by
//! the command's tail or by a survey stage.
//!
//! Nothing here knows the command line: configs are plain values, errors name values
//! (the command layer maps them to its flags), and thread settings arrive in the
//! [`Context`].

mod context;
mod experiment;
pub mod rounds;

pub mod advise;
pub mod cpu;
pub mod explain;
pub mod pace;
pub mod runtimes;
pub mod short;
pub mod simulate;
pub mod sweep;
pub mod timers;
pub mod tune;

/// The registry: every experiment's data, each once, in the order of the result
/// schema's `oneOf` list, handed to the macro named (`registry!(then)` calls
/// `then! { … }` with the list). `model::envelope` makes the data enum, its one match
/// and its conversions from it; a new experiment is its module above and one line here.
///
/// `Survey` is the survey's data (`model::SurveyData`, above this layer: it nests the
/// other results), listed where the schema has always had it: the list is the schema's
/// order, so a line goes at the end.
macro_rules! registry {
    ($then:ident) => {
        $then! {
            /// `sleeplab sweep`: requested duration × mechanism × load → elapsed.
            Sweep(sweep::SweepData),
            /// `sleeplab pace`: a fixed-rate loop per precise-sleep contender.
            Pace(pace::PaceData),
            /// `sleeplab cpu`: CPU usage against requested sleep.
            Cpu(cpu::CpuData),
            /// `sleeplab advise`: the candidates measured for one case and the recommendation.
            Advise(advise::AdviseData),
            /// `sleeplab short`: what zero and minimal sleeps cost, per mechanism.
            Short(short::ShortData),
            /// `sleeplab runtimes`: every language runtime's own waits, through probes.
            Runtimes(runtimes::RuntimesData),
            /// `sleeplab survey`: a short version of every experiment, each stage's result inside.
            Survey(model::SurveyData),
            /// `sleeplab timers`: periodic timers compared.
            Timers(timers::TimersData),
            /// `sleeplab simulate`: the precise-sleep strategies under virtual schedulers.
            Simulate(simulate::SimulateData),
            /// `sleeplab explain`: why waits were late, from the kernel's own timestamps.
            Explain(explain::ExplainData),
            /// `sleeplab tune`: what each setting of the machine does to the same waits.
            Tune(tune::TuneData),
        }
    };
}
pub(crate) use registry;

pub use context::{Context, Stop, load_note};
pub use experiment::{Experiment, KeyPart, Metric, Outcome, Point, ResultData, Sample, histogram};

/// The version of the result format (JSON, and the `schema_version` column of every
/// CSV). Bumped on any incompatible change; readers refuse other versions with a clear
/// message. Version 2: tail quantiles are `null` where the sample cannot resolve them
/// (the quantile rule, `stats::quantile`).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build still reads. Version-1 files load with every quantile
/// re-checked against its sample size (`stats::recheck_quantiles`).
pub const OLDEST_READABLE_VERSION: u32 = 1;
