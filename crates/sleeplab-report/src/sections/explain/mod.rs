//! Why waits were late: the kernel's account of every wake, for an `explain`
//! result (alone or in a survey) and for a `sweep`, `timers` or `runtimes` run with
//! `--trace` (pace's traced late frames are in its frontier section).
//!
//! One stacked-bar chart ([`Stacked`]) with a bar per cell (requested ×
//! load, × slack where several were set) split into the components of the lateness:
//! the typical wake (the mean composition of the wakes between the p40 and p60 of
//! lateness, whose parts add up to their mean lateness) and, where a cell has 100 wakes,
//! the tail (the wakes at or above the p99). When the tail is more than
//! [`SHARED_AXIS_MAX_RATIO`] × the typical wake, the two get a chart each (on one axis
//! the typical bars would be slivers). Below it, folded, each cell's checked sentence
//! ([`cell_sentence`]). Then the table of each component's median and p99 per cell, and
//! how the kernel was traced.

use super::chart;
use crate::charts::axis::{Axis, Unit};
use crate::charts::css;
use crate::charts::stacked::{Stacked, StackedBar};
use crate::html::{Block, Figure, Section};
use crate::units::ns;
use crate::view::{Results, distinct};
use plotters::style::RGBColor;
use sleeplab_account::{
    CellAccount, Component, Composition, Explanation, Machine, TracedCells, Tracing, cell_sentence,
    traced_counts,
};
use sleeplab_results::{Hint, Wording};
use sleeplab_stats::{Cell, Sentence, Table};

/// The longest tail bar may be this many times the longest typical bar for both to
/// share one chart; beyond it each gets its own axis.
pub const SHARED_AXIS_MAX_RATIO: f64 = 4.0;

/// The width of a chart alone, and of each of a pair, px.
const WIDTH: (u32, u32) = (860, 430);

/// The page's order of traced results: `explain` first, then the runs traced on
/// request, by experiment.
const ORDER: [&str; 4] = ["explain", "sweep", "timers", "runtimes"];

/// Every section of the kernel's account the results hold: one per result whose data
/// has traced cells (`ResultData::traced`: every `explain` result, and the `sweep`,
/// `timers` and `runtimes` runs with `--trace`); each names the command that traced it,
/// the flag in `hints`' words.
pub fn sections(r: &Results<'_>, hints: Wording) -> Vec<Section> {
    // Each named in the words of its result's own machine, wherever it is read back.
    let mut traced: Vec<(&'static str, Machine, TracedCells<'_>)> = r
        .entries
        .iter()
        .filter_map(|e| {
            let d = e.result.data.as_data();
            Some((
                d.experiment(),
                Machine::of(&e.result.fingerprint),
                d.traced()?,
            ))
        })
        .collect();
    let rank = |name: &str| ORDER.iter().position(|&o| o == name).unwrap_or(ORDER.len());
    traced.sort_by_key(|(name, _, _)| rank(name));
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (name, machine, t) in &traced {
        let i = seen.iter().filter(|&&s| s == *name).count();
        seen.push(name);
        let (base, source) = if t.on_request {
            (
                format!("{name}-trace"),
                format!("sleeplab {name} {}", hints.word(Hint::Trace)),
            )
        } else {
            (name.to_string(), format!("sleeplab {name}"))
        };
        out.extend(section(&Traced {
            machine: *machine,
            id: numbered(&base, i),
            title: format!("Why {} were late: the kernel's account", t.subject),
            source,
            tracing: t.tracing,
            cells: t.cells.clone(),
        }));
    }
    out
}

/// `base`, then `base-2`, `base-3` … for further results of the same kind.
fn numbered(base: &str, i: usize) -> String {
    if i == 0 {
        base.into()
    } else {
        format!("{base}-{}", i + 1)
    }
}

/// One traced result, as the section draws it.
struct Traced<'a> {
    id: String,
    title: String,
    /// The command that made it, for the introduction.
    source: String,
    tracing: &'a Tracing,
    cells: Vec<CellAccount<'a>>,
    /// The result's machine: the words for the host's share.
    machine: Machine,
}

/// The colour of a component, the same in every chart and report (the component
/// table's).
pub fn component_color(c: Component) -> RGBColor {
    let (r, g, b) = c.rgb();
    RGBColor(r, g, b)
}

fn section(t: &Traced<'_>) -> Option<Section> {
    let cells: Vec<CellAccount<'_>> = t
        .cells
        .iter()
        .filter(|c| c.explanation.wakes > 0)
        .cloned()
        .collect();
    if cells.is_empty() {
        // A run that asked for the kernel's account and recorded nothing says so, rather
        // than leaving the page silent about the flag it was run with.
        return t.tracing.recorded_nothing().then(|| {
            Section::new(
                t.id.clone(),
                t.title.clone(),
                vec![Block::Text(format!(
                    "`{}` asked for the kernel's account. {}",
                    t.source,
                    status(t.tracing, &cells)
                ))],
            )
        });
    }
    let show_slack = distinct(cells.iter().map(|c| c.timer_slack_ns)).len() > 1;
    let mut blocks = vec![
        Block::Text(format!(
            "`{}` split each wake's lateness (woke − deadline) at the kernel's own timestamps into the stretches of its way, each named for what happened (the precise term in parentheses in the legend): a timer set late (deadline to soft expiry: the kernel counted from its own clock read, or rounded a timeout up), timer slack, an idle CPU taking the timer, the timer interrupt, an idle CPU waking to run it, other tasks on the CPU, the kernel's return, the caller's code after the wake, spinning, and what no recorded event explains. A bar is the mean composition of a group of a cell's wakes, so its segments add up to the group's mean lateness: the typical wake (the wakes ranked between the p40 and p60 of lateness) and the tail (the wakes at or above the p99; a cell needs n ≥ 100 for one). The axis is linear from 0; where a tail is more than {}× the typical wake, the tail has a chart of its own.",
            t.source, SHARED_AXIS_MAX_RATIO
        )),
        Block::Text(status(t.tracing, &cells)),
    ];
    // One chart (or pair) for every cell, its sentences folded below it.
    blocks.push(figures(&t.id, &cells, show_slack, t.machine));
    blocks.push(Block::Folded {
        summary: format!("Each cell in a sentence ({} cells)", cells.len()),
        items: sentences(&cells, t.machine)
            .into_iter()
            .map(|s| s.text)
            .collect(),
    });
    blocks.push(Block::Heading(
        "Where the time went: each component's median (p99 below; – where n < 100 cannot resolve a p99)"
            .into(),
    ));
    blocks.push(Block::Table(table(
        &cells,
        show_slack,
        t.tracing.kernel,
        t.machine,
    )));
    Some(Section::new(t.id.clone(), t.title.clone(), blocks))
}

/// How the kernel was traced: the counts of wakes, partly unexplained wakes and lost
/// events, or the note saying why the account is partial, or that nothing was recorded.
fn status(tracing: &Tracing, cells: &[CellAccount<'_>]) -> String {
    let xs = cells.iter().map(|c| c.explanation);
    match traced_counts(tracing, xs) {
        Some(counts) => format!("From the kernel's tracepoints: {counts}"),
        None if tracing.recorded_nothing() && cells.is_empty() => format!(
            "No kernel trace and no /proc account: {}.",
            tracing.note.as_deref().unwrap_or_default()
        ),
        None => {
            let wakes: u64 = cells.iter().map(|c| c.explanation.wakes).sum();
            format!(
                "No kernel trace: a partial account of {wakes} wakes from /proc (the run queue from schedstat, the timer slack in force); the rest of each wake's lateness is unexplained. {}",
                tracing
                    .note
                    .as_deref()
                    .unwrap_or("The kernel was not traced.")
            )
        }
    }
}

/// Mechanisms with cells, in order of first appearance.
fn mechanisms<'b>(cells: &'b [CellAccount<'_>]) -> Vec<&'b str> {
    let mut out: Vec<&str> = Vec::new();
    for c in cells {
        if !out.contains(&&*c.mechanism) {
            out.push(&c.mechanism);
        }
    }
    out
}

/// The components with time in any typical or tail bar of `xs`, in the wake's order.
fn present(xs: &[&Explanation]) -> Vec<Component> {
    Component::ALL
        .into_iter()
        .filter(|k| {
            xs.iter().any(|x| {
                [&x.typical, &x.tail]
                    .into_iter()
                    .flatten()
                    .any(|g| g.parts_ns.get(k).is_some_and(|&v| v > 0.0))
            })
        })
        .collect()
}

/// A cell's row name: `1 ms, load 2` (`, slack 1 ns` when slacks differ), led by its
/// mechanism when the chart holds several (`with_mechanism`).
fn row_name(c: &CellAccount<'_>, show_slack: bool, with_mechanism: bool) -> String {
    let mut s = format!("{}, load {}", ns(c.requested_ns as f64), c.load);
    if with_mechanism {
        s = format!("{} {s}", c.mechanism);
    }
    if show_slack {
        s.push_str(&format!(", slack {}", ns(c.timer_slack_ns as f64)));
    }
    s
}

/// A group's bar values, per component of `comps`.
fn values(g: Option<&Composition>, comps: &[Component]) -> Option<Vec<f64>> {
    g.map(|g| {
        comps
            .iter()
            .map(|k| g.parts_ns.get(k).copied().unwrap_or(0.0))
            .collect()
    })
}

/// The charts of `cells` (titled `mech`: one mechanism's, or "each cell"): typical and
/// tail on one axis, or on two when the tail dwarfs the typical wake; the typical wake
/// alone when no cell has a tail.
pub(crate) fn stacks(
    mech: &str,
    cells: &[CellAccount<'_>],
    show_slack: bool,
    machine: Machine,
) -> Vec<Stacked> {
    let several = mechanisms(cells).len() > 1;
    let rows: Vec<(String, &Explanation)> = cells
        .iter()
        .map(|c| (row_name(c, show_slack, several), c.explanation))
        .collect();
    stacks_of(mech, &rows, machine)
}

/// [`stacks`] of named bars: each row's name and its explanation (a cell's, or a
/// program's call's).
pub(crate) fn stacks_of(
    mech: &str,
    rows: &[(String, &Explanation)],
    machine: Machine,
) -> Vec<Stacked> {
    let xs: Vec<&Explanation> = rows.iter().map(|(_, x)| *x).collect();
    let comps = present(&xs);
    let segments: Vec<(String, RGBColor)> = comps
        .iter()
        .map(|&k| (k.legend(machine), component_color(k)))
        .collect();
    let bar = |name: String, g: Option<&Composition>| StackedBar {
        name,
        values: values(g, &comps),
    };
    let chart = |title: String, bars: Vec<StackedBar>| Stacked {
        title: Some(title),
        segments: segments.clone(),
        bars,
        x: Axis::linear("mean lateness of the group", Unit::Ns),
    };
    let typical = chart(
        format!("{mech}: the typical wake (p40–p60)"),
        rows.iter()
            .map(|(name, x)| bar(name.clone(), x.typical.as_ref()))
            .collect(),
    );
    if xs.iter().all(|x| x.tail.is_none()) {
        return vec![typical];
    }
    let tail_bar = |x: &Explanation, name: String| match &x.tail {
        Some(t) => bar(name, Some(t)),
        None => bar(format!("{name} (n {} < 100)", x.wakes), None),
    };
    let tail = chart(
        format!("{mech}: the tail (≥ p99)"),
        rows.iter()
            .map(|(name, x)| tail_bar(x, name.clone()))
            .collect(),
    );
    if tail.longest() > SHARED_AXIS_MAX_RATIO * typical.longest() {
        return vec![typical, tail];
    }
    let bars = rows
        .iter()
        .flat_map(|(name, x)| {
            [
                bar(format!("{name}: typical"), x.typical.as_ref()),
                tail_bar(x, format!("{name}: tail")),
            ]
        })
        .collect();
    vec![chart(
        format!("{mech}: the typical wake and the tail"),
        bars,
    )]
}

/// The chart (or pair) of `cells`, its legend of components and its caption.
fn figures(prefix: &str, cells: &[CellAccount<'_>], show_slack: bool, machine: Machine) -> Block {
    let caption = "A bar per cell: the mean lateness of its typical wakes (ranked between \
                   the p40 and p60), split into what happened, and of its slowest (at or \
                   above the p99, where n ≥ 100 resolves one); each cell's numbers in a \
                   sentence below.";
    figures_of(
        &format!("{prefix}-cells"),
        "each cell",
        stacks("each cell", cells, show_slack, machine),
        caption,
    )
}

/// The chart (or pair) `specs` (of `what`: "each cell"), anchored at `id`, with their
/// legend of components and `caption`.
pub(crate) fn figures_of(id: &str, what: &str, specs: Vec<Stacked>, caption: &str) -> Block {
    let id = id.to_string();
    let legend: Vec<(String, String)> = specs[0]
        .segments
        .iter()
        .map(|(name, c)| (name.clone(), css(*c)))
        .collect();
    let caption = caption.to_string();
    let pair = specs.len() > 1;
    let mut charts: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (id, label) = if i == 0 {
                (id.clone(), "where the lateness of its wakes went")
            } else {
                (format!("{id}-tail"), "where the lateness of its tail went")
            };
            let width = if pair { WIDTH.1 } else { WIDTH.0 };
            chart(&id, &format!("{what}: {label}"), (width, s.height()), |a| {
                s.draw(a)
            })
        })
        .collect();
    if pair {
        Block::Grid {
            charts,
            legend,
            wide: true,
            caption,
        }
    } else {
        Block::Figure(Figure {
            chart: charts.remove(0),
            caption,
            legend,
        })
    }
}

/// Each cell's sentence, as the terminal's `explain --wide` writes it: the folded list
/// below the chart, one item per cell.
pub(crate) fn sentences(cells: &[CellAccount<'_>], machine: Machine) -> Vec<Sentence> {
    cells
        .iter()
        .filter_map(|c| cell_sentence(c, machine))
        .collect()
}

/// The table: per cell, n, the lateness's median and p99, then each component's median
/// with its p99 below; `untraced` counts the wakes an event of whose way is missing.
pub(crate) fn table(
    cells: &[CellAccount<'_>],
    show_slack: bool,
    kernel: bool,
    machine: Machine,
) -> Table {
    let mut keys: Vec<String> = ["mechanism", "requested", "load"]
        .map(String::from)
        .to_vec();
    if show_slack {
        keys.push("slack".into());
    }
    let rows: Vec<(Vec<Cell>, &Explanation)> = cells
        .iter()
        .map(|c| {
            let mut key = vec![
                Cell::Text(c.mechanism.to_string()),
                Cell::Text(ns(c.requested_ns as f64)),
                Cell::Num(c.load.to_string()),
            ];
            if show_slack {
                key.push(Cell::Num(ns(c.timer_slack_ns as f64)));
            }
            (key, c.explanation)
        })
        .collect();
    table_of(keys, &rows, kernel, machine)
}

/// [`table`] of any rows: each row's key cells (under `keys`) and its explanation (a
/// cell's, or a program's call's).
pub(crate) fn table_of(
    keys: Vec<String>,
    rows: &[(Vec<Cell>, &Explanation)],
    kernel: bool,
    machine: Machine,
) -> Table {
    let comps: Vec<Component> = Component::ALL
        .into_iter()
        .filter(|&k| {
            rows.iter()
                .any(|(_, x)| x.component(k).is_some_and(|s| s.mean_ns > 0.0))
        })
        .collect();
    let mut header = keys;
    header.extend(["n", "late p50", "late p99"].map(String::from));
    if kernel {
        header.push("untraced".into());
    }
    header.extend(comps.iter().map(|k| k.label(machine).to_string()));
    let mut t = Table::new(header);
    for (key, x) in rows {
        let mut row = key.clone();
        row.extend([
            Cell::Num(x.wakes.to_string()),
            Cell::Num(ns(x.lateness.median_ns)),
            Cell::Num(ns(x.lateness.p99_ns)),
        ]);
        if kernel {
            row.push(if x.untraced > 0 {
                Cell::Warn(x.untraced.to_string())
            } else {
                Cell::Num("0".into())
            });
        }
        for &k in &comps {
            row.push(match x.component(k) {
                Some(s) => Cell::NumSub(ns(s.median_ns), format!("p99 {}", ns(s.p99_ns))),
                None => Cell::Empty,
            });
        }
        t.row(row);
    }
    t
}

#[cfg(test)]
mod tests;
