//! The mechanism tables of docs/SWEEP.md and docs/TIMERS.md against the registry rows
//! they describe: every row named exactly once, and the slack column saying what the
//! row's `slack_applies` says (`yes…` where it applies; `no`, `–` for a busy wait, or
//! "the workers'" where it does not).

mod common;

use std::collections::BTreeMap;

/// {name: the slack cell} of the table in `doc` whose header has a column `slack_header`;
/// a row may name several mechanisms (`` `a`, `b` ``).
fn table(doc: &str, slack_header: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(common::repo_root().join(doc)).unwrap();
    let mut lines = text.lines().skip_while(|l| {
        !(l.starts_with("| name |") && l.split('|').any(|c| c.trim() == slack_header))
    });
    let header: Vec<&str> = lines.next().expect("the table").split('|').collect();
    let col = header
        .iter()
        .position(|c| c.trim() == slack_header)
        .unwrap();
    let mut out = BTreeMap::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        // A `\|` inside a cell is text, not a column.
        let line = line.replace("\\|", "/");
        let cells: Vec<&str> = line.split('|').collect();
        for name in cells[1].split(',') {
            let name = name.trim().trim_matches('`').to_string();
            let again = out.insert(name.clone(), cells[col].trim().to_string());
            assert!(again.is_none(), "{doc}: {name} is in two rows");
        }
    }
    out
}

/// Whether a slack cell says the slack applies.
fn says_applies(cell: &str) -> bool {
    match cell {
        c if c.starts_with("yes") => true,
        "no" | "–" | "the workers'" => false,
        other => panic!("a slack cell neither yes nor no: {other:?}"),
    }
}

#[test]
fn the_sweep_table_is_the_one_shot_registry() {
    let rows = table("docs/SWEEP.md", "slack");
    let names: Vec<&str> = sleeplab::wait::mechanisms()
        .iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(
        rows.keys().map(String::as_str).collect::<Vec<_>>(),
        {
            let mut n = names.clone();
            n.sort_unstable();
            n
        },
        "docs/SWEEP.md names other mechanisms than the registry"
    );
    for m in sleeplab::wait::mechanisms() {
        assert_eq!(says_applies(&rows[m.name]), m.slack_applies, "{}", m.name);
    }
}

#[test]
fn the_timers_table_is_the_periodic_registry() {
    let rows = table("docs/TIMERS.md", "slack applies");
    let mut names: Vec<&str> = sleeplab_cli::experiments::timers::mechanisms::names();
    names.sort_unstable();
    assert_eq!(
        rows.keys().map(String::as_str).collect::<Vec<_>>(),
        names,
        "docs/TIMERS.md names other mechanisms than the registry"
    );
    for m in sleeplab_cli::experiments::timers::mechanisms::all() {
        assert_eq!(says_applies(&rows[m.name]), m.slack_applies, "{}", m.name);
    }
}
