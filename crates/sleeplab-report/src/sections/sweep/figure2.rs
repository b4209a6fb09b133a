//! Seed 002's figure 2: requested against actual for the precise-sleep strategies, 1 ns
//! to 1 s, log-log (the seed ran each 100 times per request). Drawn only from a sweep that
//! measured a strategy (the survey does not; `docs/REPORT.md` and the section give the
//! command, [`Hint::Figure2`]), with the plain sleep and spin beside them when measured.

use crate::charts::color;
use crate::charts::xy::{Axis, Legend, Series, Style, XyChart};
use crate::html::{Block, Section};
use crate::sections::figure;
use crate::units::ns;
use crate::view::distinct;
use sleeplab_results::sweep::{SweepCell, SweepData};
use sleeplab_results::{Hint, Wording};
use sleeplab_stats::{Cell, Table};

/// Contenders shown beside the strategies when measured (the seed's `sleep` and spin).
const BESIDE: [&str; 3] = ["std-sleep", "nanosleep", "spin"];

/// The contenders of the figure in `d`: the strategies it measured (none: `None`), then
/// those of [`BESIDE`] it measured.
pub fn contenders(d: &SweepData) -> Option<Vec<&str>> {
    let strategies = sleeplab_results::strategy_names();
    let has = |n: &str| {
        d.cells
            .iter()
            .any(|c| c.mechanism == n && c.requested_ns > 0)
    };
    let mut out: Vec<&str> = d
        .config
        .mechanisms
        .iter()
        .map(String::as_str)
        .filter(|m| strategies.contains(m) && has(m))
        .collect();
    if out.is_empty() {
        return None;
    }
    out.extend(BESIDE.iter().copied().filter(|b| has(b)));
    Some(out)
}

/// The idle cells of `name` at the sweep's first slack, non-zero requests, ascending.
fn cells<'a>(d: &'a SweepData, name: &str) -> Vec<&'a SweepCell> {
    let slack = d.cells.first().map(|c| c.timer_slack_ns);
    let mut v: Vec<&SweepCell> = d
        .cells
        .iter()
        .filter(|c| {
            c.mechanism == name
                && c.load == 0
                && Some(c.timer_slack_ns) == slack
                && c.requested_ns > 0
                && c.summary.count > 0
        })
        .collect();
    v.sort_by_key(|c| c.requested_ns);
    v
}

/// Where the figure is absent: what measures it, in `hints`' words.
pub(super) fn absent(hints: Wording) -> Block {
    Block::Text(format!(
        "Seed 002's figure 2 (the precise-sleep strategies from 1 ns to 1 s) is not part of the survey; {} measures and draws it.",
        hints.word(Hint::Figure2)
    ))
}

/// The figure's section, from the first sweep that measured a strategy (`hints` words
/// the command that measured it).
pub(super) fn section(sweeps: &[&SweepData], hints: Wording) -> Option<Section> {
    let (d, names) = sweeps.iter().find_map(|d| contenders(d).map(|n| (*d, n)))?;
    let spec = XyChart {
        title: None,
        x: Axis::log_ns("requested duration (log scale)"),
        y: Axis::log_ns("mean elapsed (log scale)"),
        series: names
            .iter()
            .enumerate()
            .map(|(i, n)| Series {
                name: n.to_string(),
                color: color(i),
                points: cells(d, n)
                    .iter()
                    .map(|c| (c.requested_ns as f64, c.summary.mean_ns))
                    .collect(),
                style: Style::LineMarkers,
            })
            .collect(),
        ideal: true,
        legend: Legend::UpperLeft,
    };
    let reqs = distinct(
        names
            .iter()
            .flat_map(|n| cells(d, n))
            .map(|c| c.requested_ns),
    );
    let mut header = vec!["contender".to_string()];
    header.extend(reqs.iter().map(|&r| ns(r as f64)));
    let mut t = Table::new(header);
    for n in &names {
        let cs = cells(d, n);
        let mut row = vec![Cell::Text(n.to_string())];
        row.extend(reqs.iter().map(|&r| {
            cs.iter()
                .find(|c| c.requested_ns == r)
                .map_or(Cell::Empty, |c| {
                    Cell::NumSub(ns(c.summary.mean_ns), format!("n {}", c.summary.count))
                })
        }));
        t.row(row);
    }
    Some(Section::new(
        "figure-2",
        "Seed 002's figure 2: the strategies from the shortest request to the longest",
        vec![
            Block::Figure(figure(
                "sweep-figure-2",
                "requested vs mean elapsed for the precise-sleep strategies",
                (860, 500),
                format!(
                    "The mean of every call per request, idle, on log-log axes with the ideal y = x dashed, as the seed plotted 100 runs per request from 1 ns to 1 s; n per cell in the table. Measured by: {}.",
                    hints.word(Hint::Figure2)
                ),
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    ))
}
