//! `sleeplab list`.

use crate::contenders;
use crate::output::new_table;
use sleeplab::wait::Support;

/// Prints every mechanism with its support on this machine.
pub fn run() -> anyhow::Result<i32> {
    let mut t = new_table(["name", "family", "supported", "what it does"]);
    if let Some(c) = t.column_mut(2) {
        c.set_cell_alignment(comfy_table::CellAlignment::Left);
    }
    for i in contenders::all() {
        let support = match &i.support {
            Support::Supported => "yes".to_string(),
            Support::Unsupported(why) => format!("no: {why}"),
        };
        t.add_row(vec![
            i.name.to_string(),
            i.family.clone(),
            support,
            i.description.to_string(),
        ]);
    }
    println!("{t}");
    println!(
        "timer slack of this thread: {} ns (50 µs is Linux's default for normal threads)",
        sleeplab::system::timer_slack_ns()
    );
    Ok(0)
}
