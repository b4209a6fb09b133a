//! Seed 001's section: what a zero and a minimal sleep cost, per mechanism, with the
//! seed's claims checked against this machine.

use super::figure;
use crate::experiments::short::{ShortCell, ShortData};
use crate::report::charts::color;
use crate::report::charts::dumbbell::Dumbbell;
use crate::report::charts::xy::Axis;
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::ns;
use crate::report::view::Results;

/// The short section, when the results hold a `short` run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let (_, d) = r.short()?;
    let slack = *d.slacks().first()?;
    let cells: Vec<&ShortCell> = d
        .cells
        .iter()
        .filter(|c| c.timer_slack_ns == slack)
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mut mechs: Vec<&str> = Vec::new();
    for c in &cells {
        if !mechs.contains(&c.mechanism.as_str()) {
            mechs.push(&c.mechanism);
        }
    }
    let cost = |c: &ShortCell| c.net.median_ns.max(1.0);
    let zero = |m: &str| {
        cells
            .iter()
            .find(|c| c.mechanism == m && c.requested_ns == 0)
    };
    let minimal = |m: &str| {
        cells
            .iter()
            .find(|c| c.mechanism == m && c.requested_ns > 0)
    };
    let spec = Dumbbell {
        rows: mechs.iter().map(|m| m.to_string()).collect(),
        groups: vec![
            ("asked for 0".into(), color(0)),
            (
                "asked for the smallest unit (1 ns, 1 µs, 1 ms)".into(),
                color(2),
            ),
        ],
        values: mechs
            .iter()
            .map(|m| vec![zero(m).map(|c| cost(c)), minimal(m).map(|c| cost(c))])
            .collect(),
        x: Axis::log_ns("cost per call, net of the empty loop, median of repetitions (log scale)"),
    };
    let mut t = Table::new([
        "mechanism",
        "requested",
        "net per call",
        "99.9 % CI",
        "median",
        "CPU/call",
        "csw/call",
    ]);
    for c in &cells {
        let ci = match (c.net.ci_low_ns, c.net.ci_high_ns) {
            (Some(lo), Some(hi)) => format!("{} – {}", ns(lo), ns(hi)),
            _ => "–".into(),
        };
        t.row(vec![
            Cell::Text(c.mechanism.clone()),
            Cell::Num(ns(c.requested_ns as f64)),
            Cell::Num(ns(c.net.mean_ns)),
            Cell::Num(ci),
            Cell::Num(ns(c.net.median_ns)),
            Cell::Num(ns(c.cpu_ns_per_call)),
            Cell::Num(format!(
                "{:.2}",
                c.voluntary_csw_per_call + c.involuntary_csw_per_call
            )),
        ]);
    }
    let verdicts: Vec<String> = d
        .findings
        .iter()
        .filter(|f| f.timer_slack_ns == slack)
        .map(|f| format!("“{}” — {} here: {}", f.claim, f.outcome, f.detail))
        .collect();
    let height = spec.height();
    let mut blocks = vec![
        Block::Text(format!(
            "Seed 001 timed batches of calls and divided by their number; here {} interleaved repetitions per cell, the empty loop subtracted, with 99.9 % confidence intervals.",
            d.config.repetitions
        )),
        Block::Figure(figure(
            "short-cost",
            "cost of a zero and a minimal wait per mechanism",
            (860, height),
            caption(d, slack),
            |a| spec.draw(a),
        )),
    ];
    if !verdicts.is_empty() {
        blocks.push(Block::Heading("The seed's claims, checked here".into()));
        blocks.push(Block::List(verdicts));
    }
    blocks.push(Block::Table(t));
    Some(Section {
        id: "short".into(),
        title: "Zero and minimal sleeps".into(),
        blocks,
    })
}

fn caption(d: &ShortData, slack: u64) -> String {
    let nano = d.cell("nanosleep", 1, slack);
    let tfd = ["timerfd-reuse", "timerfd"]
        .iter()
        .find_map(|m| d.cell(m, 1, slack));
    let yld = d.cell("yield", 0, slack);
    let mut parts = Vec::new();
    if let (Some(n), Some(t)) = (nano, tfd) {
        parts.push(format!(
            "nanosleep(1 ns) cost {} per call and {}(1 ns) {} ({}×)",
            ns(n.net.median_ns),
            t.mechanism,
            ns(t.net.median_ns),
            crate::report::units::num(n.net.median_ns / t.net.median_ns.max(1.0))
        ));
    }
    if let Some(y) = yld {
        parts.push(format!("sched_yield cost {}", ns(y.net.median_ns)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("Under {} slack, {}.", ns(slack as f64), parts.join("; "))
    }
}
