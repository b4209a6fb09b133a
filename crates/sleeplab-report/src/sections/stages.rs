//! The survey's stages: what ran, how long it took, what failed and why.

use crate::html::{Block, Section};
use crate::view::Results;
use sleeplab_results::model::StageState;
use sleeplab_stats::{Cell, Table};

/// The stages section (surveys only).
pub fn section(r: &Results<'_>) -> Option<Section> {
    let s = r.survey?;
    let mut t = Table::new([
        "stage",
        "what it asks",
        "state",
        "planned",
        "took",
        "detail",
    ]);
    for st in &s.stages {
        let state = match &st.state {
            StageState::Ok => Cell::Good("ok".into()),
            other => Cell::Warn(other.label().into()),
        };
        let detail = match &st.state {
            StageState::Failed { error } => error.clone(),
            StageState::Skipped { reason } => reason.clone(),
            StageState::Interrupted => "stopped by Ctrl-C; partial results kept".into(),
            StageState::NotRun => "not started (the survey was interrupted)".into(),
            StageState::Ok => String::new(),
        };
        t.row(vec![
            Cell::Text(st.name.clone()),
            Cell::Text(st.title.clone()),
            state,
            Cell::Num(secs(st.planned_ms)),
            Cell::Num(if st.elapsed_ms > 0 {
                secs(st.elapsed_ms)
            } else {
                "–".into()
            }),
            Cell::Text(detail),
        ]);
    }
    let total: u64 = s.stages.iter().map(|s| s.elapsed_ms).sum();
    let ok = s
        .stages
        .iter()
        .filter(|s| s.state == StageState::Ok)
        .count();
    Some(Section::new(
        "stages",
        "What ran",
        vec![
            Block::Text(format!(
                "{ok} of {} stages ran to the end in {} ({} survey). Each stage is the experiment's own code with a survey-sized configuration; run it alone (e.g. `sleeplab sweep`) for more samples.",
                s.stages.len(),
                secs(total),
                s.level.name()
            )),
            Block::Table(t),
        ],
    ))
}

fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}
