//! Each experiment's data as its result keeps it, with the pure judgements over it that
//! the terminal and the report both read. The CLI's `experiments` module runs them.
//!
//! Each experiment's module is public here and re-exported whole at the crate's root
//! (`sleeplab_results::sweep`, …) by one glob: a new experiment is its folder and its
//! two lines in this file.

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

// The shared shapes, by the paths the experiments' files name them.
pub(crate) use crate::{Hint, KeyPart, Point, ResultData, Wording};

/// The experiments, each once: its data's variant in the result file, with the doc line
/// the result schema shows for it (a new experiment's line goes at the end, its module above). Hands the list to the macro named: `with_experiments!(m { first })` calls
/// `m! { first /// doc  Variant(path::to::Data), … }`. The model makes the data enum,
/// its one match and its conversions from it, with its own survey data first
/// (`model::envelope`): the model names the experiments, never the reverse.
macro_rules! with_experiments {
    ($m:ident { $($first:tt)* }) => {
        $m! {
            $($first)*
            /// `sleeplab sweep`: requested duration × mechanism × load → elapsed.
            Sweep($crate::experiments::sweep::SweepData),
            /// `sleeplab pace`: a fixed-rate loop per precise-sleep contender.
            Pace($crate::experiments::pace::PaceData),
            /// `sleeplab cpu`: CPU usage against requested sleep.
            Cpu($crate::experiments::cpu::CpuData),
            /// `sleeplab advise`: the candidates measured for one case and the recommendation.
            Advise($crate::experiments::advise::AdviseData),
            /// `sleeplab short`: what zero and minimal sleeps cost, per mechanism.
            Short($crate::experiments::short::ShortData),
            /// `sleeplab runtimes`: every language runtime's own waits, through probes.
            Runtimes($crate::experiments::runtimes::RuntimesData),
            /// `sleeplab timers`: periodic timers compared.
            Timers($crate::experiments::timers::TimersData),
            /// `sleeplab simulate`: the precise-sleep strategies under virtual schedulers.
            Simulate($crate::experiments::simulate::SimulateData),
            /// `sleeplab explain`: why waits were late, from the kernel's own timestamps.
            Explain($crate::experiments::explain::ExplainData),
            /// `sleeplab tune`: what each setting of the machine does to the same waits.
            Tune($crate::experiments::tune::TuneData),
        }
    };
}
pub(crate) use with_experiments;

/// The version of the result format (JSON, and the `schema_version` column of every
/// CSV). Bumped on any incompatible change; readers refuse other versions with a clear
/// message. Version 2: tail quantiles are `null` where the sample cannot resolve them
/// (the quantile rule, `stats::quantile`).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build still reads. Version-1 files load with every quantile
/// re-checked against its sample size (`stats::recheck_quantiles`).
pub const OLDEST_READABLE_VERSION: u32 = 1;
