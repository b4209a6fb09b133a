//! The lab's tools: what the precise sleeper is measured, compared and tested with. A
//! user of the sleeper needs none of it; the `sleeplab` command, the simulator, the
//! examples and the tests do.
//!
//! * [`WaitStrategy`]: waiting until a deadline over any [`Env`](crate::clock::Env), the
//!   interface the sleeper's algorithm ([`Precise`]) shares with the strategies it is
//!   measured against (`std-sleep`, `clock-nanosleep-abs`, `spin`, `seed-hybrid`,
//!   `sdl-precise`, `fixed-margin`): listed by [`strategies`], built by name with
//!   [`strategy_by_name`] or at any setting with [`strategy_by_setting`]
//!   (`seed-hybrid:x=2`, `fixed-margin:250us`, `precise:q=0.999`; [`StrategySetting`],
//!   whose `precise` parameters are the sleeper's option table).
//! * [`Trace`]: a recorded native-oversleep trace (the `record_trace` example records
//!   one); [`replay`] runs any strategy through it in virtual time, and the oracle
//!   ([`oracle_at_cpu`], [`oracle_at_p99`], [`oracle_frontier`]) gives the best fixed
//!   margin in hindsight on it, the frontier no online estimator can be expected to beat;
//!   [`WaitSummary`] states what a run of waits did, with honest quantiles.
//! * [`VirtualEnv`]: a virtual clock with scripted or modelled native wakes
//!   ([`NativeWake`]), a preemption model for spins and CPU accounting, on which the
//!   sleeper and every strategy run unchanged.
//! * [`noise`]: what a thread that never sleeps loses, probed from user space (gaps
//!   between back-to-back clock reads, per CPU), and whether it is the host's or the
//!   hardware's ([`NoiseSource`]).
//! * [`option_samples`]: values at and beyond the ends of each option's range, which
//!   every binding of the option table must accept or refuse alike (the binding tests
//!   walk them).
//!
//! Why a module and not a crate: the strategies are built from the sleeper's own
//! building blocks (the spin loop, the resuming native sleep, its contention state),
//! which would otherwise have to become public API; as a module they stay private and
//! the docs still show [`precise`](crate::precise) as the product.

pub mod noise;
mod oracle;
mod replay;
mod strategies;
mod summary;
mod trace;
mod virtual_env;
mod wait_strategy;

pub use crate::precise::contention::{Contention, LossCause, Regime};
pub use crate::precise::precise_strategy::Precise;
pub use noise::{
    GapRecorder, Noise, NoiseConfig, NoiseError, NoiseSource, ProbeKind, Schedule, probe_cpus,
};
pub use oracle::{
    FrontierPoint, fixed_margin_on_trace, oracle_at_cpu, oracle_at_p99, oracle_frontier,
};
pub use replay::{REPLAY_COSTS, REPLAY_RESOLUTION_NS, Replay, replay, replay_with_preemption};
pub use strategies::{
    AbsSleep, FixedMargin, ParamInfo, PureSpin, STRATEGIES, SdlPrecise, SeedHybrid, SettingError,
    StdSleep, StrategyInfo, StrategySetting, UnknownStrategy, strategies, strategy_by_name,
    strategy_by_setting,
};
pub use summary::{WaitSummary, quantile_ns};
pub use trace::{TRACE_COLUMNS, TRACE_MAGIC, Trace, TraceError, TraceWait};
pub use virtual_env::{NativeWake, Running, SleepCall, VirtualCosts, VirtualEnv};
pub use wait_strategy::WaitStrategy;

use crate::precise::{CpuBudget, OptionKind, OptionValue, SleeperOption};

/// A value a binding of [`SleeperOption`] is tried with: its text (for the strategy
/// settings and text-taking bindings), the typed value where the text has one (for the
/// typed ones, C), and whether it must be accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionSample {
    /// The value's text.
    pub text: String,
    /// The typed value, `None` for text no typed surface can express (`0.5ns`, `bogus`).
    pub value: Option<OptionValue>,
    /// Whether every surface must accept it (`false`: every surface must refuse it).
    pub ok: bool,
}

/// The values every surface of `option` must accept or refuse alike: each end of its
/// range and a value inside, the values just beyond each end, and text no grammar takes.
/// Values within one option's range: a cross-option rule (the prior at most the cap)
/// is not what they test.
pub fn option_samples(option: &SleeperOption) -> Vec<OptionSample> {
    let typed = |v: OptionValue, ok| OptionSample {
        text: option.format(v),
        value: Some(v),
        ok,
    };
    let text = |t: &str| OptionSample {
        text: t.to_owned(),
        value: None,
        ok: false,
    };
    let mut out = Vec::new();
    match option.kind {
        OptionKind::Choice(words) => {
            out.extend((0..words.len()).map(|i| typed(OptionValue::Choice(i), true)));
            out.push(OptionSample {
                text: "bogus".into(),
                value: Some(OptionValue::Choice(words.len())),
                ok: false,
            });
        }
        OptionKind::Duration { min_ns } => {
            out.push(typed(OptionValue::Ns(min_ns), true));
            out.push(typed(OptionValue::Ns(1_000_000), true));
            if min_ns > 0 {
                out.push(typed(OptionValue::Ns(min_ns - 1), false));
            }
            out.extend(["0.5ns", "1e3us", "-1ms", "5", "1 parsec"].map(text));
            out.push(OptionSample {
                text: "1μs".into(),
                value: Some(OptionValue::Ns(1_000)),
                ok: true,
            });
        }
        OptionKind::Count { min, max } => {
            out.push(typed(OptionValue::Count(min), true));
            out.push(typed(OptionValue::Count(max), true));
            if min > 0 {
                out.push(typed(OptionValue::Count(min - 1), false));
            }
            if let Some(above) = max.checked_add(1) {
                out.push(typed(OptionValue::Count(above), false));
            }
            out.extend(["1.5", "-1", "many"].map(text));
        }
        OptionKind::Number { min, max } => {
            out.push(typed(OptionValue::Number(min), true));
            out.push(typed(OptionValue::Number((min + max) / 2.0), true));
            out.push(typed(OptionValue::Number(max), true));
            out.push(typed(OptionValue::Number(min - 0.01), false));
            out.push(typed(OptionValue::Number(max + 0.5), false));
            out.push(OptionSample {
                text: "NaN".into(),
                value: Some(OptionValue::Number(f64::NAN)),
                ok: false,
            });
            out.extend(["1e-1", "-0.9"].map(text));
        }
        OptionKind::Budget => {
            for b in [
                CpuBudget::Auto,
                CpuBudget::Unlimited,
                CpuBudget::Percent(0.0),
                CpuBudget::Percent(2.5),
                CpuBudget::Percent(100.0),
            ] {
                out.push(typed(OptionValue::Budget(b), true));
            }
            for p in [100.5, -1.0] {
                out.push(typed(OptionValue::Budget(CpuBudget::Percent(p)), false));
            }
            out.push(OptionSample {
                text: "NaN%".into(),
                value: Some(OptionValue::Budget(CpuBudget::Percent(f64::NAN))),
                ok: false,
            });
            out.push(text("some"));
        }
    }
    out
}
