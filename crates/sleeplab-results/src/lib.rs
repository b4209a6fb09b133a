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

// Every experiment's namespace (`sweep`, `pace`, …), and the schema's versions.
pub use experiments::*;
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
