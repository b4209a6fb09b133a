//! What waiting costs the CPU: CPU time per call as % of the time per call, idle, per
//! requested duration. Shown as measured: a cell above 100 % (CPU time per call above
//! the elapsed time per call) is drawn where it is, marked in the table and explained in
//! the caption, never clamped.

use super::highlighted;
use crate::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::findings::{CPU_NOTE, cpu_pct};
use crate::html::{Block, Section};
use crate::sections::figure;
use crate::units::{ns, pct};
use crate::view::MainSweep;
use plotters::style::{BLACK, RGBColor};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{BY_POINT_VALUE, Cell, Claim, Sentence, Table};

/// CPU per call above this share of the time per call cannot be the call's own.
const WALL: f64 = 100.0;

/// The cells the chart and the table show: the highlighted mechanisms, idle, non-zero
/// requests (in the chart) or all requests (in the table).
fn shown<'a>(m: &MainSweep<'a>, hl: &[(&'a str, RGBColor)]) -> Vec<&'a SweepCell> {
    hl.iter()
        .flat_map(|&(name, _)| {
            m.cells()
                .filter(move |c| c.mechanism == name && c.load == 0 && c.summary.count > 0)
        })
        .collect()
}

/// The CPU section.
pub(super) fn section(m: &MainSweep<'_>) -> Option<Section> {
    let hl = highlighted(m);
    let mut series: Vec<Series> = hl
        .iter()
        .map(|&(name, c)| {
            let mut pts: Vec<(f64, f64)> = m
                .cells()
                .filter(|x| x.mechanism == name && x.load == 0 && x.requested_ns > 0)
                .map(|x| (x.requested_ns as f64, cpu_pct(x)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: name.to_string(),
                color: c,
                points: pts,
                style: Style::LineMarkers,
            }
        })
        .collect();
    if series.iter().all(|s| s.points.is_empty()) {
        return None;
    }
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(WALL, f64::max);
    // The 100 % line: above it, CPU time per call exceeds the time per call.
    series.push(Series {
        name: "100 % (CPU time = time per call)".into(),
        color: BLACK,
        points: vec![(x0, WALL), (x1, WALL)],
        style: Style::Dashed,
    });
    let spec = XyChart {
        title: None,
        x: Axis::log_ns("requested duration (log scale)"),
        y: Axis::linear("CPU used while waiting (% of one core)", Unit::Percent)
            .range(0.0, top * 1.05),
        series,
        ideal: false,
        legend: Legend::UpperRight,
    };
    let cells = shown(m, &hl);
    let mut t = Table::new([
        "mechanism",
        "requested",
        "n",
        "CPU per call",
        "mean elapsed per call",
        "CPU %",
        "voluntary csw/call",
        "involuntary csw/call",
    ]);
    for c in &cells {
        let p = cpu_pct(c);
        t.row(vec![
            Cell::Text(c.mechanism.clone()),
            Cell::Num(ns(c.requested_ns as f64)),
            Cell::Num(c.summary.count.to_string()),
            Cell::Num(ns(c.cpu_ns_per_call)),
            Cell::Num(ns(c.summary.mean_ns)),
            if p > WALL {
                Cell::Warn(format!("{} ▲", pct(p)))
            } else {
                Cell::Num(pct(p))
            },
            Cell::Num(format!("{:.2}", c.voluntary_csw_per_call)),
            Cell::Num(format!("{:.2}", c.involuntary_csw_per_call)),
        ]);
    }
    Some(Section::new(
        "cpu-cost",
        "What waiting costs the CPU",
        vec![
            Block::Figure(figure(
                "sweep-cpu",
                "CPU used while waiting, by requested duration",
                (860, 420),
                caption(m, &hl).text,
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    ))
}

/// The caption: at 1 ms (or 100 µs, 10 ms), the highlighted mechanism that used the
/// most CPU and the one that used the least; then the cells above 100 %, with why.
pub(super) fn caption(m: &MainSweep<'_>, hl: &[(&str, RGBColor)]) -> Sentence {
    let mut s = Sentence::default();
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cells().any(|c| c.requested_ns == d && c.load == 0));
    if let Some(d) = d {
        let cells: Vec<&SweepCell> = hl
            .iter()
            .filter_map(|&(n, _)| m.cell(n, d, 0))
            .filter(|c| c.summary.count > 0)
            .collect();
        let v: Vec<f64> = cells.iter().map(|c| cpu_pct(c)).collect();
        if let Some((lo, hi)) = s.least_and_most(&v) {
            s.push(&format!(
                "While waiting {}, {} used the most CPU {BY_POINT_VALUE} ({} of a core) and {} the least ({}, {:.2} voluntary context switches per call: it gave the CPU away)",
                ns(d as f64),
                cells[hi].mechanism,
                pct(v[hi]),
                cells[lo].mechanism,
                pct(v[lo]),
                cells[lo].voluntary_csw_per_call
            ));
        }
    }
    let over: Vec<&SweepCell> = shown(m, hl)
        .into_iter()
        .filter(|c| cpu_pct(c) > WALL)
        .collect();
    if let Some(top) = over.iter().max_by(|a, b| cpu_pct(a).total_cmp(&cpu_pct(b))) {
        let threshold = pct(WALL);
        s.claim(Claim::Threshold {
            shown: threshold.clone(),
        });
        s.push(&format!(
            "{}{} of the {} cells in the table are above {threshold} (marked ▲; the most: {} at {}, {} CPU in {} per call), shown as measured: {CPU_NOTE}",
            if s.text.is_empty() { "" } else { ". " },
            over.len(),
            shown(m, hl).len(),
            top.mechanism,
            ns(top.requested_ns as f64),
            ns(top.cpu_ns_per_call),
            ns(top.summary.mean_ns)
        ));
    }
    if !s.text.is_empty() {
        s.push(".");
    }
    s
}
