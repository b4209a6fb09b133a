//! A program's own waits as a page (`sleeplab explain` following a program, or reading
//! its saved trace, with a report directory): the summary the terminal prints (its
//! per-call table and its lines, the same view drawn by both), then where each call's
//! lateness went, drawn as `explain`'s cells are (the typical wake and the tail split
//! into components, and the table of each component), then who held the CPU, the
//! interrupts and the traps, as the terminal lists them.

use super::explain::{figures_of, stacks_of, table_of};
use super::views;
use crate::html::{Block, Page, Section};
use sleeplab_account::{Explanation, Machine};
use sleeplab_stats::{Cell, View};

/// What a program's page shows.
#[derive(Debug, Clone)]
pub struct ProgramPage<'a> {
    /// The `<title>` and heading.
    pub title: String,
    /// The line under it.
    pub subtitle: String,
    /// Facts about the run and the machine: (label, value).
    pub facts: Vec<(String, String)>,
    /// The summary before the account (the run, the counts, the per-call table).
    pub summary: View,
    /// Each call with an account: its name and where its lateness went.
    pub calls: Vec<(String, &'a Explanation)>,
    /// The machine, for the words of the host's share.
    pub machine: Machine,
    /// What follows the account: who held the CPU, the interrupts, the traps.
    pub after: View,
    /// Lines of the footer.
    pub footer: Vec<String>,
}

/// The page of `p`.
pub fn program_page(p: ProgramPage<'_>) -> Page {
    let mut sections = vec![views::section(p.summary, None)];
    if !p.calls.is_empty() {
        let rows: Vec<(Vec<Cell>, &Explanation)> = p
            .calls
            .iter()
            .map(|(call, x)| (vec![Cell::Text(call.clone())], *x))
            .collect();
        let caption = "A bar per call: the mean lateness of its typical waits (ranked between \
                       the p40 and p60 of those their timer ended), split into what happened, \
                       and of its slowest (at or above the p99, where n ≥ 100 resolves one).";
        sections.push(Section::new(
            "program-account",
            "Where their lateness went: the kernel's account",
            vec![
                Block::Text(
                    "Each wait its timer ended had its lateness (return − deadline) split at the kernel's own timestamps into the stretches of its way, each named for what happened, as `explain` splits its own wakes; a bar is the mean composition of a group of a call's waits, so its segments add up to the group's mean lateness.".into(),
                ),
                figures_of(
                    "program-calls",
                    "each call",
                    stacks_of("each call", &p.calls, p.machine),
                    caption,
                ),
                Block::Heading(
                    "Each component's median (p99 below; – where n < 100 cannot resolve a p99)"
                        .into(),
                ),
                Block::Table(table_of(vec!["call".into()], &rows, true, p.machine)),
            ],
        ));
    }
    if !p.after.blocks.is_empty() {
        sections.push(views::section(p.after, None));
    }
    Page {
        title: p.title,
        subtitle: p.subtitle,
        facts: p.facts,
        sections,
        footer: p.footer,
        ..Page::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab_account::{Component, WakeAccount};
    use sleeplab_stats::Table;

    fn explanation(parts: &[(Component, u64)], n: usize) -> Explanation {
        let accounts: Vec<WakeAccount> = (0..n).map(|_| WakeAccount::of_parts(parts)).collect();
        Explanation::of(&accounts, 0, false)
    }

    #[test]
    fn the_summary_the_account_and_the_lists_each_get_a_section() {
        let x = explanation(
            &[(Component::Slack, 50_000), (Component::RunQueue, 10_000)],
            120,
        );
        let mut t = Table::new(["call", "waits"]);
        t.row(vec![Cell::Text("poll".into()), Cell::Num("120".into())]);
        let page = program_page(ProgramPage {
            title: "t".into(),
            subtitle: "s".into(),
            facts: vec![("program".into(), "app (pid 7)".into())],
            summary: View::new("program", "The waits, per call")
                .text("120 waits")
                .table(t),
            calls: vec![("poll".into(), &x)],
            machine: Machine::Host,
            after: View::new("program-traps", "Traps").text("• timer slack"),
            footer: vec!["f".into()],
        });
        let ids: Vec<&str> = page.sections.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["program", "program-account", "program-traps"]);
        let html = page.render();
        for needle in ["120 waits", "timer slack", "each call", "late p50", "poll"] {
            assert!(html.contains(needle), "{needle}");
        }
        // The table: one row, keyed by the call, with the slack and run-queue columns.
        let Block::Table(t) = &page.sections[1].blocks[3] else {
            panic!("the components' table")
        };
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0][0], Cell::Text("poll".into()));
        assert_eq!(t.rows[0][1], Cell::Num("120".into()));
    }

    #[test]
    fn no_call_with_an_account_leaves_the_summary_alone() {
        let page = program_page(ProgramPage {
            title: "t".into(),
            subtitle: "s".into(),
            facts: vec![],
            summary: View::new("program", "The waits").text("No wait with a timeout."),
            calls: vec![],
            machine: Machine::Host,
            after: View::new("program-after", "After"),
            footer: vec![],
        });
        assert_eq!(page.sections.len(), 1);
    }
}
