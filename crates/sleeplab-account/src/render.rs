//! The terminal table of where the time went, shared by `explain` and every experiment
//! run with `--trace`: one row per cell (its key columns, n, the lateness median and
//! p99), then each component's median and, in parentheses, its p99.

use super::analysis::component::Machine;
use super::{Component, Explanation, Tracing};
use sleeplab_stats::{fmt_ns, fmt_ns_f, new_table};
use std::fmt::Write;

/// The key columns of a cell of one-shot waits (`explain`, `sweep --trace`).
pub const CELL_KEYS: [&str; 4] = ["mechanism", "requested", "load", "slack set"];

/// A one-shot cell's key cells, under [`CELL_KEYS`].
pub fn cell_key(mechanism: &str, requested_ns: u64, load: usize, slack_ns: u64) -> Vec<String> {
    vec![
        mechanism.to_string(),
        fmt_ns(requested_ns),
        load.to_string(),
        fmt_ns(slack_ns),
    ]
}

/// The components shown: those with time in any row, in the order a wake passes them.
fn shown(rows: &[(Vec<String>, &Explanation)]) -> Vec<Component> {
    Component::ALL
        .into_iter()
        .filter(|&c| {
            rows.iter()
                .any(|(_, x)| x.component(c).is_some_and(|s| s.mean_ns > 0.0))
        })
        .collect()
}

/// The table of `rows` (key cells under `keys`, and the cell's explanation), its legend
/// in the words of the result's `machine`, and the tracing status line. A run that
/// recorded nothing ([`Tracing::nothing_recorded`]) gets no table: "no account", and its
/// note.
pub fn components_table(
    keys: &[&str],
    rows: &[(Vec<String>, &Explanation)],
    tracing: &Tracing,
    machine: Machine,
) -> String {
    let mut out = String::new();
    if tracing.recorded_nothing() && rows.is_empty() {
        let _ = writeln!(
            out,
            "Where the time went: no account (no kernel trace, no /proc account)"
        );
        if let Some(note) = &tracing.note {
            let _ = writeln!(out, "note: {note}");
        }
        return out;
    }
    let _ = writeln!(
        out,
        "Where the time went: each component's median (p99) over the wakes of a cell; {}",
        if tracing.kernel {
            "from the kernel's tracepoints"
        } else {
            "a partial account from /proc (no kernel trace)"
        }
    );
    let comps = shown(rows);
    let mut header: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    header.extend(["n", "late p50", "late p99"].map(String::from));
    header.extend(comps.iter().map(|c| c.short().to_string()));
    let mut t = new_table(header);
    for (key, x) in rows {
        let mut row = key.clone();
        row.extend([
            x.wakes.to_string(),
            fmt_ns_f(x.lateness.median_ns),
            fmt_ns_f(x.lateness.p99_ns),
        ]);
        for &k in &comps {
            row.push(match x.component(k) {
                Some(s) => format!("{} ({})", fmt_ns_f(s.median_ns), fmt_ns_f(s.p99_ns)),
                None => "–".into(),
            });
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}");
    // On bare metal what takes the CPU from the guest is the hardware, not a host.
    let legend: Vec<String> = comps
        .iter()
        .map(|c| format!("{} = {}", c.short(), c.label(machine)))
        .collect();
    if !legend.is_empty() {
        let _ = writeln!(out, "{}", legend.join(", "));
    }
    if let Some(counts) = traced_counts(tracing, rows.iter().map(|(_, x)| *x)) {
        let _ = writeln!(out, "{counts}");
    }
    if let Some(note) = &tracing.note {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// `2200 wakes traced; 1 partly unexplained (…); 0 events lost by the kernel's buffers.`:
/// the counts over `cells` of a run that traced the kernel (`None` for the partial
/// account, where no wake is traced).
pub fn traced_counts<'a>(
    tracing: &Tracing,
    cells: impl IntoIterator<Item = &'a Explanation>,
) -> Option<String> {
    if !tracing.kernel {
        return None;
    }
    let (wakes, untraced) = cells
        .into_iter()
        .fold((0, 0), |(w, u), x| (w + x.wakes, u + x.untraced));
    let mut line = format!(
        "{wakes} wakes traced; {untraced} partly unexplained (an event of their way not \
         recorded); {} events lost by the kernel's buffers.",
        tracing.lost_events
    );
    if untraced * MANY_UNTRACED.1 > wakes * MANY_UNTRACED.0 {
        line.push_str(&many_untraced_hint());
    }
    Some(line)
}

/// More than this share of wakes partly unexplained (numerator, denominator) earns
/// [`many_untraced_hint`].
pub const MANY_UNTRACED: (u64, u64) = (1, 10);

/// Why many wakes can be partly unexplained. A traced run already measures where the
/// kernel records a CPU's idle task ([`sleeplab_capture::placement`], whose note says so),
/// so what remains is a run pinned elsewhere by request, a full buffer, or a task whose
/// own events the kernel does not record.
pub fn many_untraced_hint() -> String {
    format!(
        " More than {} in {} partly unexplained: events of their way went unrecorded (a CPU \
         whose idle task's events this kernel loses, a full buffer, or a task whose own \
         events it does not record).",
        MANY_UNTRACED.0, MANY_UNTRACED.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Parts, WakeAccount};

    #[test]
    fn only_components_with_time_get_a_column() {
        let mut p = Parts::default();
        p.add(Component::Slack, 50_000);
        p.add(Component::RunQueue, 2_000);
        let w = WakeAccount {
            lateness_ns: 52_000,
            parts: p,
            holder: None,
            blocked: true,
            traced: true,
            host_told: true,
        };
        let x = Explanation::of(&[w], 0, false);
        let tracing = Tracing::kernel(3);
        let t = components_table(
            &["mechanism"],
            &[(vec!["nanosleep".into()], &x)],
            &tracing,
            Machine::Hardware,
        );
        assert!(
            t.contains("slack") && t.contains("runq") && !t.contains("irq"),
            "{t}"
        );
        assert!(t.contains("50.00 µs (–)"), "{t}");
        assert!(t.contains("1 wakes traced; 0 partly unexplained") && t.contains("3 events lost"));
    }

    /// A run that recorded nothing claims neither the kernel's tracepoints nor /proc.
    #[test]
    fn a_run_that_recorded_nothing_gets_no_table() {
        let t = components_table(
            &["mechanism"],
            &[],
            &Tracing::nothing_recorded(),
            Machine::Hardware,
        );
        assert_eq!(
            t,
            "Where the time went: no account (no kernel trace, no /proc account)\n\
             note: nothing was recorded: the run measured no cell that could be traced\n"
        );
        assert_eq!(traced_counts(&Tracing::nothing_recorded(), []), None);
    }

    /// The hint comes with more than one in ten wakes partly unexplained, not at one in
    /// ten or fewer.
    #[test]
    fn the_pin_hint_follows_the_share_of_untraced_wakes() {
        let tracing = Tracing::kernel(0);
        let wakes = |untraced: usize| -> Vec<WakeAccount> {
            (0..10)
                .map(|i| WakeAccount {
                    lateness_ns: 1,
                    parts: Parts::default(),
                    holder: None,
                    blocked: true,
                    traced: i >= untraced,
                    host_told: true,
                })
                .collect()
        };
        for (untraced, hint) in [(0, false), (1, false), (2, true), (10, true)] {
            let x = Explanation::of(&wakes(untraced), 0, false);
            let line = traced_counts(&tracing, [&x]).unwrap();
            assert!(
                line.contains(&format!("{untraced} partly unexplained")),
                "{line}"
            );
            assert_eq!(line.contains("went unrecorded"), hint, "{line}");
        }
    }
}
