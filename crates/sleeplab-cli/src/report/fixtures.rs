//! Fixtures the sections' in-file tests share with the walk over every verdict
//! (`verdicts.rs`): a pace result's data around hand-made contenders, and the survey
//! fixture's runtimes result cut to one runtime (tests only).

use super::testdata::stored;
use crate::experiments::pace::{PaceConfig, PaceData, PaceResult};
use crate::experiments::runtimes::RuntimeResult;
use crate::model::{ExperimentData, ResultFile};

/// A pace result of these contenders at these load levels, each run `frames` frames at
/// 60 Hz in interleaved blocks of `block`; the contenders the config names are the
/// results' strategies, in order of first appearance.
pub fn pace(loads: Vec<usize>, frames: u64, block: u64, results: Vec<PaceResult>) -> PaceData {
    let mut strategies: Vec<String> = Vec::new();
    for r in &results {
        if !strategies.contains(&r.strategy) {
            strategies.push(r.strategy.clone());
        }
    }
    PaceData {
        config: PaceConfig {
            strategies,
            loads,
            rate_hz: 60.0,
            period_ns: 16_666_667,
            frames,
            block,
            work_ns: 0,
            timer_slack_ns: Some(1),
            json_samples: 0,
            repeat: 1,
            trace: false,
        },
        results,
        runs: vec![],
        repeat: vec![],
        tracing: None,
    }
}

/// The survey fixture's runtimes result holding one runtime: the first that `pick`
/// accepts, as `edit` leaves it.
pub fn one_runtime(
    pick: impl Fn(&RuntimeResult) -> bool,
    edit: impl FnOnce(&mut RuntimeResult),
) -> ResultFile {
    let mut r = stored("runtimes");
    let ExperimentData::Runtimes(d) = &mut r.data else {
        panic!("runtimes");
    };
    let mut rt = d
        .runtimes
        .iter()
        .find(|x| pick(x))
        .expect("a measured runtime")
        .clone();
    edit(&mut rt);
    d.runtimes = vec![rt];
    r
}
