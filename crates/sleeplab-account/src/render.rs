//! The terminal table of where the time went, shared by `explain` and every experiment
//! run with `--trace`: one row per cell (its key columns, n, the lateness median and
//! p99), then, fitting the terminal's width, the largest parts of its typical and its
//! slowest wakes; at full width (`--wide`), each component's median and, in
//! parentheses, its p99.

use super::analysis::component::Machine;
use super::{Component, Composition, Explanation, Tracing};
use sleeplab_stats::{fmt_ns, fmt_ns_f, new_table, terminal_width, wrap};
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
/// in the words of the result's `machine`, and the tracing status line: compact where a
/// terminal width is set (the default), every component where none is (`--wide`). A
/// run that recorded nothing ([`Tracing::nothing_recorded`]) gets no table: "no
/// account", and its note.
pub fn components_table(
    keys: &[&str],
    rows: &[(Vec<String>, &Explanation)],
    tracing: &Tracing,
    machine: Machine,
) -> String {
    components_table_at(keys, rows, tracing, machine, terminal_width())
}

/// [`components_table`] fitting `width` columns (`None`: every component).
fn components_table_at(
    keys: &[&str],
    rows: &[(Vec<String>, &Explanation)],
    tracing: &Tracing,
    machine: Machine,
    width: Option<u16>,
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
    let source = if tracing.kernel {
        "from the kernel's tracepoints"
    } else {
        "a partial account from /proc (no kernel trace)"
    };
    let comps = match width {
        Some(w) => compact(&mut out, keys, rows, source, w),
        None => full(&mut out, keys, rows, source),
    };
    legend(&mut out, &comps, machine, width);
    let w = width.map_or(usize::MAX, usize::from);
    if let Some(counts) = traced_counts(tracing, rows.iter().map(|(_, x)| *x)) {
        wrapped(&mut out, &counts, w);
    }
    if let Some(note) = &tracing.note {
        wrapped(&mut out, &format!("note: {note}"), w);
    }
    out
}

/// Every component's median (p99) per cell, each in a column: the full-width table.
/// Returns the components shown.
fn full(
    out: &mut String,
    keys: &[&str],
    rows: &[(Vec<String>, &Explanation)],
    source: &str,
) -> Vec<Component> {
    let _ = writeln!(
        out,
        "Where the time went: each component's median (p99) over the wakes of a cell; {source}"
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
    comps
}

/// How many parts of a cell's typical wake the compact table names.
pub const COMPACT_PARTS: usize = 2;

/// The compact table: per cell, its key columns (those that vary; the others said once
/// above it), n, the lateness's median and p99, the [`COMPACT_PARTS`] largest parts of
/// its typical wake and the largest of its slowest, by their means. Returns the
/// components named.
fn compact(
    out: &mut String,
    keys: &[&str],
    rows: &[(Vec<String>, &Explanation)],
    source: &str,
    width: u16,
) -> Vec<Component> {
    let w = usize::from(width);
    wrapped(
        out,
        &format!(
            "Where the time went, {source}: the largest parts of each cell's typical wakes \
             (p40–p60) and of its slowest (≥ p99), by their means"
        ),
        w,
    );
    // A key column whose every row is the same is said once, not in every row.
    let varies: Vec<bool> = (0..keys.len())
        .map(|i| {
            let first = rows.first().and_then(|(k, _)| k.get(i));
            rows.len() < 2 || rows.iter().any(|(k, _)| k.get(i) != first)
        })
        .collect();
    let same: Vec<String> = keys
        .iter()
        .enumerate()
        .filter(|&(i, _)| !varies[i])
        .filter_map(|(i, k)| Some(format!("{k} {}", rows.first()?.0.get(i)?)))
        .collect();
    if !same.is_empty() {
        wrapped(out, &format!("every cell: {}", same.join(", ")), w);
    }
    let mut named: Vec<Component> = Vec::new();
    let mut parts = |g: Option<&Composition>, take: usize| -> String {
        let Some(g) = g else {
            return "–".into();
        };
        let top: Vec<String> = g
            .ranked()
            .into_iter()
            .take(take)
            .map(|(k, v)| {
                if !named.contains(&k) {
                    named.push(k);
                }
                format!("{} {}", k.short(), fmt_ns_f(v))
            })
            .collect();
        if top.is_empty() {
            "none late".into()
        } else {
            // One part per line: the column stays narrow, each part whole.
            top.join("\n")
        }
    };
    // The key cells that vary, of a row's (or of the header's).
    let varying = |cells: Vec<String>| -> Vec<String> {
        cells
            .into_iter()
            .zip(&varies)
            .filter(|&(_, &v)| v)
            .map(|(c, _)| c)
            .collect()
    };
    let mut header = varying(keys.iter().map(|k| k.to_string()).collect());
    header.extend(["n", "late p50", "late p99", "typical", "slowest"].map(String::from));
    let mut t = new_table(header);
    // Wrapping only the headers: a cell's line (a mechanism's name, a part and its
    // value) is never split; a row too wide for `width` stays whole.
    t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(width);
    let mut never_blocked = false;
    for (key, x) in rows {
        let mut row = varying(key.clone());
        // A cell whose waits mostly never blocked is no sleep, whatever its name.
        let slept = crate::why::blocked_share(x).1;
        never_blocked |= !slept;
        row.extend([
            format!("{}{}", x.wakes, if slept { "" } else { " *" }),
            fmt_ns_f(x.lateness.median_ns),
            fmt_ns_f(x.lateness.p99_ns),
            parts(x.typical.as_ref(), COMPACT_PARTS),
            parts(x.tail.as_ref(), 1),
        ]);
        t.add_row(row);
    }
    let longest: Vec<usize> = t
        .column_iter()
        .enumerate()
        .map(|(i, _)| {
            t.row_iter()
                .filter_map(|r| r.cell_iter().nth(i))
                .flat_map(|c| {
                    c.content()
                        .lines()
                        .map(|l| l.chars().count())
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, n) in longest.into_iter().enumerate() {
        if let Some(c) = t.column_mut(i) {
            // The boundary counts the cell's padding, one space each side.
            let w = u16::try_from(n + 2).unwrap_or(u16::MAX);
            c.set_constraint(comfy_table::ColumnConstraint::LowerBoundary(
                comfy_table::Width::Fixed(w),
            ));
        }
    }
    let _ = writeln!(out, "{t}");
    if never_blocked {
        wrapped(
            out,
            &format!(
                "* returned {}: fewer than {} of its waits blocked (a voluntary switch)",
                sleeplab_stats::NEVER_BLOCKED,
                sleeplab_stats::units::pct(sleeplab_stats::BLOCKED_CSW * 100.0)
            ),
            w,
        );
    }
    named.sort();
    named
}

/// `text` written in lines of at most `width` characters (the terminal's one wrapping).
fn wrapped(out: &mut String, text: &str, width: usize) {
    for line in wrap("", text, width, 0) {
        let _ = writeln!(out, "{line}");
    }
}

/// The legend of `comps`: `short = what happened (term)`, wrapped to `width`.
fn legend(out: &mut String, comps: &[Component], machine: Machine, width: Option<u16>) {
    let entries: Vec<String> = comps
        .iter()
        .map(|c| format!("{} = {}", c.short(), c.legend(machine)))
        .collect();
    let width = width.map_or(usize::MAX, usize::from);
    let mut line = String::new();
    for e in entries {
        if !line.is_empty() && line.chars().count() + 2 + e.chars().count() > width {
            let _ = writeln!(out, "{line},");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(&e);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{line}");
    }
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
            run_queue_by: Vec::new(),
            blocked: true,
            traced: true,
            host_told: true,
        };
        let x = Explanation::of(&[w], 0, false);
        let tracing = Tracing::kernel(3);
        let t = components_table_at(
            &["mechanism"],
            &[(vec!["nanosleep".into()], &x)],
            &tracing,
            Machine::Hardware,
            None,
        );
        assert!(
            t.contains("slack") && t.contains("runq") && !t.contains("irq"),
            "{t}"
        );
        assert!(t.contains("50.00 µs (–)"), "{t}");
        assert!(t.contains("1 wakes traced; 0 partly unexplained") && t.contains("3 events lost"));
    }

    /// The compact table fits its width: the key columns that vary, then each cell's
    /// largest typical parts, largest first, and the legend's words for them.
    #[test]
    fn the_compact_table_fits_its_width_and_names_the_largest_parts() {
        let wake = |slack: u64, runq: u64, idle: u64| {
            WakeAccount::of_parts(&[
                (Component::Slack, slack),
                (Component::RunQueue, runq),
                (Component::IdleWakeup, idle),
            ])
        };
        let w: Vec<WakeAccount> = (0..200).map(|i| wake(50_000, 2_000 + i, 9_000)).collect();
        let x = Explanation::of(&w, 0, false);
        let rows: Vec<(Vec<String>, &Explanation)> = ["nanosleep", "clock-nanosleep-abs"]
            .iter()
            .map(|m| (cell_key(m, 1_000_000, 0, 50_000), &x))
            .collect();
        let t = components_table_at(
            &CELL_KEYS,
            &rows,
            &Tracing::kernel(0),
            Machine::Host,
            Some(100),
        );
        for line in t.lines() {
            assert!(
                line.chars().count() <= 100,
                "{} > 100: {line}",
                line.chars().count()
            );
        }
        // The same request, load and slack in every row: said once, not as columns.
        assert!(
            t.contains("every cell: requested 1.000 ms, load 0, slack set 50.00 µs"),
            "{t}"
        );
        let header = t.lines().find(|l| l.contains("mechanism")).unwrap();
        assert!(
            !header.contains("requested") && !header.contains("load"),
            "{header}"
        );
        // Slack first, then the idle wakeup; the run queue (the smallest) not named.
        let (slack, idle) = (
            t.find("slack 50.00 µs").unwrap(),
            t.find("idle 9.000 µs").unwrap(),
        );
        assert!(slack < idle && t.contains("clock-nanosleep-abs"), "{t}");
        assert!(
            !t.contains("runq ") && t.contains("idle = idle CPU waking to run it (idle wakeup)"),
            "{t}"
        );
    }

    /// A cell whose waits never blocked is marked in the compact table, and said so.
    #[test]
    fn the_compact_table_marks_a_cell_that_never_blocked() {
        let mut w = WakeAccount::of_parts(&[(Component::Spin, 40)]);
        w.blocked = false;
        let spun = Explanation::of(&vec![w; 10], 0, false);
        let slept = Explanation::of(
            &vec![WakeAccount::of_parts(&[(Component::Slack, 50)]); 10],
            0,
            false,
        );
        let rows = [
            (vec!["spin".to_string()], &spun),
            (vec!["nanosleep".to_string()], &slept),
        ];
        let t = components_table_at(
            &["mechanism"],
            &rows,
            &Tracing::kernel(0),
            Machine::Host,
            Some(100),
        );
        let marked: Vec<&str> = t.lines().filter(|l| l.contains("10 *")).collect();
        assert_eq!(marked.len(), 1, "{t}");
        assert!(marked[0].contains("spin"), "{t}");
        assert!(
            t.contains("* returned without sleeping: fewer than 50"),
            "{t}"
        );
        let t = components_table_at(
            &["mechanism"],
            &rows[1..],
            &Tracing::kernel(0),
            Machine::Host,
            Some(100),
        );
        assert!(!t.contains('*'), "{t}");
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
                    run_queue_by: Vec::new(),
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
