//! The experiments that describe their output as a view (`ResultData::view`): each
//! view drawn as a section of its own, from the same blocks the terminal prints. A new
//! experiment whose data has a view gets its section here without a line of report code.

use crate::html::{Block, Section};
use crate::view::Results;
use sleeplab_results::Wording;
use sleeplab_stats::{View, ViewBlock};

/// A section for every entry of `r` whose data has a view, in the result's order.
pub(crate) fn sections(r: &Results<'_>, hints: Wording) -> Vec<Section> {
    r.entries
        .iter()
        .filter_map(|e| {
            let v = e.result.data.as_data().view(hints)?;
            Some(section(v, e.stage))
        })
        .collect()
}

/// `v` as a report section; a survey stage's anchor carries the stage's name.
pub(crate) fn section(v: View, stage: Option<&str>) -> Section {
    let id = match stage {
        Some(s) => format!("{}-{s}", v.id),
        None => v.id,
    };
    let blocks = v
        .blocks
        .into_iter()
        .flat_map(|b| match b {
            ViewBlock::Text(t) => match bulleted(&t) {
                Some((lead, items)) => vec![Block::Text(lead), Block::List(items)],
                None => vec![Block::Text(t)],
            },
            ViewBlock::Table(t) => vec![Block::Table(t)],
            ViewBlock::Code { label, code } => vec![Block::Code { label, code }],
        })
        .collect();
    Section::new(id, v.title, blocks)
}

/// A paragraph whose lines after the first are all bullets (`  • item`, as the terminal
/// lists): its first line and the items, for the page's list; `None` for any other text.
fn bulleted(text: &str) -> Option<(String, Vec<String>)> {
    let mut lines = text.lines();
    let lead = lines.next()?.to_string();
    let items: Option<Vec<String>> = lines
        .map(|l| l.strip_prefix("  • ").map(str::to_string))
        .collect();
    items.filter(|i| !i.is_empty()).map(|i| (lead, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab_stats::{Cell, Table};

    #[test]
    fn a_paragraph_of_bullets_becomes_its_lead_and_a_list() {
        let v = View::new("p", "P")
            .text("Traps:\n  • slack: 20 waits\n  • millis: 3 waits")
            .text("two lines\nnot bullets");
        let s = section(v, None);
        assert_eq!(
            s.blocks,
            vec![
                Block::Text("Traps:".into()),
                Block::List(vec!["slack: 20 waits".into(), "millis: 3 waits".into()]),
                Block::Text("two lines\nnot bullets".into()),
            ]
        );
    }

    #[test]
    fn every_block_of_a_view_becomes_the_same_block_of_the_section() {
        let mut t = Table::new(["a", "b"]);
        t.row(vec![Cell::Text("x".into()), Cell::Num("1".into())]);
        let v = View::new("nap", "Naps")
            .text("said")
            .table(t.clone())
            .code("in Rust", "nap();");
        let s = section(v.clone(), Some("stage"));
        assert_eq!(s.id, "nap-stage");
        assert_eq!(s.title, "Naps");
        assert_eq!(
            s.blocks,
            vec![
                Block::Text("said".into()),
                Block::Table(t),
                Block::Code {
                    label: "in Rust".into(),
                    code: "nap();".into()
                }
            ]
        );
        assert_eq!(section(v, None).id, "nap");
    }
}
