//! The result model of sleeplab: what each experiment measured, as a result file keeps
//! it, and the pure judgements over it (the verdicts, sentences and tables that the
//! terminal and the HTML report both read). Nothing here measures: the CLI's
//! experiments run, and hand their data to this crate's types.
//!
//! * one namespace per experiment ([`sweep`], [`pace`], [`cpu`], [`advise`], [`short`],
//!   [`runtimes`], [`timers`], [`simulate`], [`explain`], [`tune`]): its config, its
//!   data, its cells, and what is judged from them;
//! * what every result's data answers, whatever the experiment ([`ResultData`]: the
//!   [`Point`]s `compare` matches, the [`Sample`]s of a survey's CSV), and the thread
//!   settings it ran under ([`RunSettings`]);
//! * the pieces the data is built from: the probes' output format ([`protocol`]), the
//!   runtimes with probes ([`RuntimeId`]), a periodic run's tick account ([`account`]),
//!   the settings `tune` tries ([`SettingInfo`]);
//! * [`Hint`]: what a sentence asks its reader to run, worded by the command layer.
//!
//! Its modules are private: the lists below are the crate's whole interface.

mod experiments;
mod hint;
mod in_force;
mod probe_protocol;
mod result_data;
mod result_file;
mod runtime_id;
mod setting_info;
mod settings;
mod skip;
mod strategy_names;
#[cfg(any(test, feature = "test-support"))]
mod synthetic;
#[cfg(any(test, feature = "test-support"))]
mod test_support;
mod tick_account;

pub use experiments::{OLDEST_READABLE_VERSION, SCHEMA_VERSION};
pub use hint::{Hint, Wording};
pub use in_force::InForce;
pub use result_data::{KeyPart, Metric, Point, ResultData, Sample, histogram};
pub use runtime_id::RuntimeId;
pub use setting_info::{BootSetting, Change, Scope, Setting, SettingInfo, Unavailable};
pub use settings::RunSettings;
pub use skip::{request_skip, skip_reason};
pub use strategy_names::{SPIN_SLEEP, strategy_names, strategy_names_all};
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub use test_support::{runtimes_config, short_cell};
pub use tick_account::{Account, Schedule, TickRecord, Wake, account, windows};

/// The result file: one versioned JSON document per run (its envelope, the survey's
/// data, the host's noise of the moment), read back by `report` and `compare`. Its
/// schema is generated from these types and committed as `spec/result.schema.json`.
pub mod model {
    pub use crate::result_file::*;
}

/// Synthetic results, for the tests of the crates above (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testdata {
    pub use crate::synthetic::*;
}

/// The probes' output format, `sleeplab-probe/1` (`spec/probe-protocol.md`): a strict
/// parser of the `--list` and measurement outputs.
pub mod protocol {
    pub use crate::probe_protocol::*;
}

/// `sleeplab advise`: the candidates measured for one case and the recommendation.
pub mod advise {
    pub use crate::experiments::advise::*;
}
/// `sleeplab cpu`: CPU usage against requested sleep.
pub mod cpu {
    pub use crate::experiments::cpu::*;
}
/// `sleeplab explain`: why waits were late, from the kernel's own timestamps.
pub mod explain {
    pub use crate::experiments::explain::*;
}
/// `sleeplab pace`: a fixed-rate loop per precise-sleep contender.
pub mod pace {
    pub use crate::experiments::pace::*;
}
/// `sleeplab runtimes`: every language runtime's own waits, through probes.
pub mod runtimes {
    pub use crate::experiments::runtimes::*;
}
/// `sleeplab short`: what zero and minimal sleeps cost, per mechanism.
pub mod short {
    pub use crate::experiments::short::*;
}
/// `sleeplab simulate`: the precise-sleep strategies under virtual schedulers.
pub mod simulate {
    pub use crate::experiments::simulate::*;
}
/// `sleeplab sweep`: requested duration × mechanism × load → elapsed.
pub mod sweep {
    pub use crate::experiments::sweep::*;
}
/// `sleeplab timers`: periodic timers compared.
pub mod timers {
    pub use crate::experiments::timers::*;
}
/// `sleeplab tune`: what each setting of the machine does to the same waits.
pub mod tune {
    pub use crate::experiments::tune::*;
}
