//! The survey's tune stage (`--full` only): what the two per-process settings most
//! likely to matter, timer slack and keeping the CPU awake, do to two waits; with
//! `--tune-system` (as root) every setting that applies, system-wide ones included.

use super::super::StagePlan;
use super::super::estimate::{Estimate, STAGE_OVERHEAD_NS};
use crate::experiments::tune::{CellSpec, DEFAULT_ROUNDS, TuneConfig, catalogue};

/// The settings the survey tries without `--tune-system`.
pub const SURVEY_SETTINGS: [&str; 2] = ["timer-slack", "keep-awake"];

/// Waiting time per cell, setting and round, ns: 100 waits of 1 ms (a p99 in every
/// round, so the changes are paired), 1 000 of 100 µs.
pub const SURVEY_TUNE_BUDGET_NS: u64 = 100_000_000;

/// The tune config of the survey: per-process [`SURVEY_SETTINGS`], or every setting
/// that applies where `system` (root; `--tune-system`).
pub fn tune_config(system: bool) -> TuneConfig {
    TuneConfig {
        cells: [100_000, 1_000_000]
            .map(|d| CellSpec {
                mechanism: "clock-nanosleep-abs".into(),
                requested_ns: d,
            })
            .into(),
        settings: (!system).then(|| SURVEY_SETTINGS.map(String::from).into()),
        system,
        rounds: DEFAULT_ROUNDS,
        budget_ns: SURVEY_TUNE_BUDGET_NS,
        cpu: 0,
    }
}

/// The tune stage.
pub fn tune_stage(cpus: usize, system: bool) -> StagePlan {
    StagePlan::new(
        "tune",
        "What do this machine's settings do to a wait?",
        cpus,
        tune_config(system),
    )
}

impl Estimate for TuneConfig {
    /// Every cell's waits per arm and round ([`TuneConfig::estimate_ns`]), the arms
    /// being as is and the settings named (or, with none named, those that apply
    /// here), plus a stage's overhead.
    fn estimate_ns(&self, _cpus: usize) -> u64 {
        let arms = match &self.settings {
            Some(names) => names.len(),
            None => catalogue(self).settings.len(),
        } as u64
            + 1;
        TuneConfig::estimate_ns(self, arms) + STAGE_OVERHEAD_NS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few seconds, and only the per-process settings unless asked.
    #[test]
    fn the_tune_stage_is_short_and_per_process() {
        let s = tune_stage(2, false);
        assert!((1_000..=8_000).contains(&s.budget_ms), "{} ms", s.budget_ms);
        let c = s.config::<TuneConfig>().unwrap();
        assert!(!c.system);
        assert_eq!(c.waits(1_000_000), 100, "a p99 in every round");
        assert!(tune_stage(2, true).config::<TuneConfig>().unwrap().system);
    }
}
