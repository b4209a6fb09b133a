//! A synthetic `explain` stage for the report's tests (`report_cli`, `report_browser`):
//! the stored survey has none (it ran where the kernel was not traced), and a real run's
//! numbers would make the charts' layout depend on the machine. Two mechanisms, each at
//! 100 µs and 1 ms, idle and loaded, 100 wakes per cell (a tail each): nanosleep's tails
//! (2 ms) dwarf its typical wakes and get a chart of their own; timerfd's (150 µs) share
//! the typical wakes' axis.

use sleeplab_account::{Component, Explanation, Tracing, WakeAccount};
use sleeplab_cli::experiments::explain::{ExplainCell, ExplainConfig, ExplainData, ExplainItem};
use sleeplab_cli::model::{ExperimentData, ResultFile, StageState, StageStatus};

/// The mechanisms, and the run-queue time of each one's slowest wake, ns.
pub const MECHANISMS: [(&str, u64); 2] = [("nanosleep", 2_000_000), ("timerfd", 150_000)];

/// The components every typical wake has (the legend's names).
pub const TYPICAL: [(Component, u64); 3] = [
    (Component::Slack, 50_000),
    (Component::TimerIrq, 20_000),
    (Component::RunQueue, 5_000),
];

/// The synthetic explain result's data.
pub fn explain_data() -> ExplainData {
    let (requests, loads) = ([100_000, 1_000_000], [0, 2]);
    let mut items = Vec::new();
    let mut cells = Vec::new();
    for (mech, slow) in MECHANISMS {
        for requested_ns in requests {
            items.push(ExplainItem {
                mechanism: mech.into(),
                requested_ns,
            });
            for load in loads {
                let mut w: Vec<WakeAccount> =
                    (0..99).map(|_| WakeAccount::of_parts(&TYPICAL)).collect();
                w.push(WakeAccount::of_parts(&[
                    (Component::Slack, 50_000),
                    (Component::RunQueue, slow),
                ]));
                cells.push(ExplainCell {
                    mechanism: mech.into(),
                    requested_ns,
                    load,
                    timer_slack_ns: 50_000,
                    explanation: Explanation::of(&w, 0, false),
                    units: None,
                    wakes: vec![],
                    all_wakes: vec![],
                });
            }
        }
    }
    ExplainData {
        config: ExplainConfig {
            items,
            loads: loads.to_vec(),
            timer_slacks_ns: vec![],
            iterations: 100,
            rounds: 4,
            json_wakes: 0,
            trace: true,
        },
        tracing: Tracing::kernel(0),
        cells,
    }
}

/// `survey` with an `explain` stage appended, its result in the envelope of the
/// survey's first stage.
pub fn with_explain(mut survey: ResultFile) -> ResultFile {
    let ExperimentData::Survey(s) = &mut survey.data else {
        panic!("not a survey");
    };
    let mut result = s.results[0].clone();
    result.data = ExperimentData::Explain(explain_data());
    result.notes.clear();
    s.stages.push(StageStatus {
        name: "explain".into(),
        experiment: "explain".into(),
        title: "why waits were late, from the kernel's own timestamps".into(),
        state: StageState::Ok,
        planned_ms: 2_000,
        elapsed_ms: 2_000,
        result: Some(s.results.len()),
    });
    s.results.push(result);
    survey
}
