//! `sleeplab list`.

use crate::contenders;
use crate::experiments::timers::mechanisms;
use clap::Args;
use sleeplab::wait::Support;
use sleeplab_stats::{TermTable, new_table, terminal_width};

/// `sleeplab list`: no arguments.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {}

/// None: `list` measures nothing.
pub const LONG_RUN: Option<&str> = None;

/// `yes`, or `no: ` and the reason.
fn support_text(support: &Support) -> String {
    match support {
        Support::Supported => "yes".to_string(),
        Support::Unsupported(why) => format!("no: {why}"),
    }
}

fn table() -> TermTable {
    let mut t = new_table(["name", "family", "supported", "what it does"]);
    if let Some(c) = t.column_mut(2) {
        c.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
    // Its last column is prose: wrapped at its spaces to fit the terminal.
    if let Some(w) = terminal_width() {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(w);
    }
    t
}

/// Prints every mechanism with its support on this machine: the one-shot waits
/// (`sweep`, `short`, `explain`), then the periodic timers (`timers`). A mechanism
/// this kernel or this build lacks is listed with the reason.
pub fn run(_args: &ListArgs, _quiet: bool) -> anyhow::Result<i32> {
    let mut t = table();
    for i in contenders::all() {
        t.add_row(vec![
            i.name.to_string(),
            i.family.clone(),
            support_text(&i.support),
            i.description.to_string(),
        ]);
    }
    println!("one-shot waits (sweep, short, explain):\n{t}");
    let mut t = table();
    for m in mechanisms::all() {
        t.add_row(vec![
            m.name.to_string(),
            m.family.to_string(),
            support_text(&m.support()),
            m.description.to_string(),
        ]);
    }
    println!("periodic timers (timers):\n{t}");
    println!(
        "timer slack of this thread: {} ns (50 µs is Linux's default for normal threads)",
        sleeplab::system::timer_slack_ns()
    );
    Ok(0)
}
