//! Notes and warnings from the run, and what was not measured.

use crate::html::{Block, Section};
use crate::units::ns;
use crate::view::Results;

/// The notes section, when there is anything to note.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let mut items: Vec<String> = r.notes().into_iter().map(str::to_string).collect();
    if !r.top.complete {
        items.push(
            "This run is incomplete (interrupted, or a stage failed): the report shows what was measured."
                .into(),
        );
    }
    let mut skipped: Vec<String> = Vec::new();
    for s in r.sweeps() {
        for k in &s.skipped {
            let line = format!(
                "{} @ {}: {}",
                k.mechanism,
                ns(k.requested_ns as f64),
                k.reason
            );
            if !skipped.contains(&line) {
                skipped.push(line);
            }
        }
    }
    if items.is_empty() && skipped.is_empty() {
        return None;
    }
    let mut blocks = Vec::new();
    if !items.is_empty() {
        blocks.push(Block::List(items));
    }
    if !skipped.is_empty() {
        blocks.push(Block::Heading("Not measured".into()));
        blocks.push(Block::List(skipped));
    }
    Some(Section::new("notes", "Notes", blocks))
}
