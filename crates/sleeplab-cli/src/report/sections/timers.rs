//! Seed 004's section: periodic timers, their error at each period.

use super::figure;
use crate::experiments::timers::{TimersCell, TimersData};
use crate::report::charts::color;
use crate::report::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::{ns, pct};
use crate::report::view::{Results, distinct};

/// The timers section, when the results hold a `timers` run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let (_, d) = r.timers()?;
    let load = d.cells.iter().map(|c| c.load).min()?;
    let slack = d
        .cells
        .iter()
        .find(|c| c.load == load)?
        .requested_timer_slack_ns;
    let cells: Vec<&TimersCell> = d
        .cells
        .iter()
        .filter(|c| c.load == load && c.requested_timer_slack_ns == slack && c.merged.received > 0)
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mechs = mechanisms(d, &cells);
    let spec = XyChart {
        title: None,
        x: Axis::log_ns("period (log scale)"),
        y: Axis {
            label: "average interval error, % of the period (log scale)".into(),
            scale: crate::report::charts::xy::Scale::Log,
            unit: Unit::Percent,
            range: None,
        },
        series: mechs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut pts: Vec<(f64, f64)> = cells
                    .iter()
                    .filter(|c| &c.mechanism == m)
                    .map(|c| (c.period_ns as f64, c.merged.avg_error_pct))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name: m.clone(),
                    color: color(i),
                    points: pts,
                    style: Style::LineMarkers,
                }
            })
            .collect(),
        ideal: false,
        legend: Legend::UpperRight,
    };
    let mut t = Table::new([
        "period",
        "mechanism",
        "count",
        "avg error",
        "σ",
        "p99 late",
        "missed",
        "early",
        "CPU",
    ]);
    let periods = distinct(cells.iter().map(|c| c.period_ns));
    for &p in periods.iter().rev() {
        for m in &mechs {
            if let Some(c) = cells.iter().find(|c| c.period_ns == p && &c.mechanism == m) {
                let s = &c.merged;
                t.row(vec![
                    Cell::Text(ns(p as f64)),
                    Cell::Text(m.clone()),
                    Cell::Num(format!("{}/{}", s.received, s.expected)),
                    Cell::Num(pct(s.avg_error_pct)),
                    Cell::Num(pct(s.error_stddev_pct)),
                    Cell::Num(ns(s.p99_lateness_ns)),
                    if s.missed > 0 {
                        Cell::Warn(s.missed.to_string())
                    } else {
                        Cell::Num("0".into())
                    },
                    if s.early_wakes > 0 {
                        Cell::Warn(s.early_wakes.to_string())
                    } else {
                        Cell::Num("0".into())
                    },
                    Cell::Num(pct(c.cpu_pct)),
                ]);
            }
        }
    }
    Some(Section {
        id: "timers".into(),
        title: "Periodic timers".into(),
        blocks: vec![
            Block::Text(format!(
                "Seed 004's table: each timer ran for {} per period; the error is |interval − period| / period per wake (the seed's “avg error”), lateness is per scheduled tick.",
                ns(d.config.duration_ns as f64)
            )),
            Block::Figure(figure(
                "timers-error",
                "average error per period for each periodic timer",
                (860, 460),
                caption(&cells),
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    })
}

fn mechanisms(d: &TimersData, cells: &[&TimersCell]) -> Vec<String> {
    d.config
        .mechanisms
        .iter()
        .filter(|m| cells.iter().any(|c| &c.mechanism == *m))
        .cloned()
        .collect()
}

fn caption(cells: &[&TimersCell]) -> String {
    let Some(p) = cells.iter().map(|c| c.period_ns).min() else {
        return String::new();
    };
    let mut at: Vec<&&TimersCell> = cells.iter().filter(|c| c.period_ns == p).collect();
    at.sort_by(|a, b| a.merged.avg_error_pct.total_cmp(&b.merged.avg_error_pct));
    match (at.first(), at.last()) {
        (Some(best), Some(worst)) if best.mechanism != worst.mechanism => format!(
            "At a {} period, {} erred by {} of the period on average and {} by {} (seed 004 saw Windows' SetTimer at 1450 %).",
            ns(p as f64),
            best.mechanism,
            pct(best.merged.avg_error_pct),
            worst.mechanism,
            pct(worst.merged.avg_error_pct)
        ),
        _ => String::new(),
    }
}
