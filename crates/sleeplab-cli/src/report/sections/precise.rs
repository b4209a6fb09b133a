//! The precise-sleep sections: a fixed-rate loop per contender (seed 002 figure 1 and
//! its CPU table) and CPU against the requested sleep (figure 3).

use super::figure;
use crate::experiments::cpu::CpuData;
use crate::experiments::pace::{PaceData, PaceResult};
use crate::report::charts::bars::{Bar, Bars};
use crate::report::charts::color;
use crate::report::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::{ns, num, pct};
use crate::report::view::Results;

/// The pace and cpu sections the results support.
pub fn sections(r: &Results<'_>) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some((_, p)) = r.pace().filter(|(_, p)| !p.results.is_empty()) {
        out.push(pace(p));
        out.extend(super::frontier::section(p));
    }
    if let Some((_, c)) = r.cpu().filter(|(_, c)| !c.points.is_empty()) {
        out.push(cpu(c));
    }
    out
}

/// The colour of a strategy, the same in every chart of the page.
fn strategy_color(names: &[&str], name: &str) -> plotters::style::RGBColor {
    color(names.iter().position(|n| *n == name).unwrap_or(names.len()))
}

fn rate(p: &PaceData) -> String {
    format!("{} Hz", num(p.config.rate_hz))
}

fn pace(p: &PaceData) -> Section {
    let names: Vec<&str> = p.results.iter().map(|r| r.strategy.as_str()).collect();
    let bars = Bars {
        bars: p
            .results
            .iter()
            .map(|r| Bar {
                name: r.label(),
                value: r.error.mean_ns.max(1.0),
                whisker: Some((r.error.min_ns.max(1) as f64, r.error.max_ns.max(1) as f64)),
                color: strategy_color(&names, &r.strategy),
            })
            .collect(),
        x: Axis::log_ns("how late each frame woke: mean (bar), min–max (whisker), log scale"),
        legend: Some(("mean lateness".into(), "min – max".into())),
    };
    let trade = XyChart {
        title: None,
        x: Axis::linear("CPU used (% of one core)", Unit::Percent).range(0.0, 105.0),
        y: Axis::log_ns("p99 lateness (log scale)"),
        series: p
            .results
            .iter()
            .map(|r| Series {
                name: r.label(),
                color: strategy_color(&names, &r.strategy),
                points: r
                    .error
                    .p99_ns
                    .map(|p| (r.cpu_percent.clamp(0.0, 100.0), p.max(1.0)))
                    .into_iter()
                    .collect(),
                style: Style::Markers,
            })
            .collect(),
        ideal: false,
        legend: Legend::UpperRight,
    };
    let mut t = Table::new([
        "strategy",
        "frames (n)",
        "mean",
        "p50",
        "p99",
        "max",
        "missed frames",
        "CPU",
        "spinning",
        "csw/frame",
    ]);
    for r in &p.results {
        let e = &r.error;
        t.row(vec![
            Cell::Text(r.label()),
            Cell::Num(e.count.to_string()),
            Cell::Num(ns(e.mean_ns)),
            Cell::Num(ns(e.median_ns)),
            Cell::Num(ns(e.p99_ns)),
            Cell::Num(ns(e.max_ns as f64)),
            if r.missed_frames > 0 {
                Cell::Warn(r.missed_frames.to_string())
            } else {
                Cell::Num("0".into())
            },
            Cell::Num(pct(r.cpu_percent)),
            Cell::Num(pct(r.spin_percent)),
            Cell::Num(format!(
                "{:.2}",
                r.voluntary_csw_per_frame + r.involuntary_csw_per_frame
            )),
        ]);
    }
    let height = bars.height();
    Section {
        id: "pace".into(),
        title: format!("A {} loop", rate(p)),
        blocks: vec![
            Block::Text(format!(
                "Seed 002's game loop: each contender waits for {} frames on an absolute schedule ({} per frame, timer slack {}), taking turns in blocks of {}. Lateness is how long after its deadline a frame woke.",
                p.config.frames,
                ns(p.config.period_ns as f64),
                p.config
                    .timer_slack_ns
                    .map_or("as inherited".into(), |s| ns(s as f64)),
                p.config.block
            )),
            Block::Figure(figure(
                "pace-error",
                "frame lateness per contender",
                (860, height),
                pace_caption(p),
                |a| bars.draw(a),
            )),
            Block::Heading("Precision against CPU".into()),
            Block::Figure(figure(
                "pace-tradeoff",
                "p99 lateness against CPU per contender",
                (760, 420),
                tradeoff_caption(p),
                |a| trade.draw(a),
            )),
            Block::Table(t),
        ],
    }
}

fn find<'a>(p: &'a PaceData, name: &str) -> Option<&'a PaceResult> {
    p.results.iter().find(|r| r.strategy == name)
}

fn pace_caption(p: &PaceData) -> String {
    let mut parts = Vec::new();
    for name in ["precise", "std-sleep", "spin"] {
        if let Some(r) = find(p, name) {
            parts.push(format!(
                "{name} woke a mean {} late (max {}) at {} CPU",
                ns(r.error.mean_ns),
                ns(r.error.max_ns as f64),
                pct(r.cpu_percent)
            ));
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("At {}: {}.", rate(p), parts.join("; "))
}

fn tradeoff_caption(p: &PaceData) -> String {
    // The best p99 among contenders that leave most of the core free.
    let frugal = p
        .results
        .iter()
        .filter(|r| r.cpu_percent < 50.0)
        .filter_map(|r| r.error.p99_ns.map(|p| (r, p)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, _)| r);
    match frugal {
        Some(r) => format!(
            "Lower left is best. Among contenders using under half a core, {} had the best p99: {} at {} CPU.",
            r.strategy,
            ns(r.error.p99_ns),
            pct(r.cpu_percent)
        ),
        None => "Lower left is best; every contender here used more than half a core.".into(),
    }
}

fn cpu(c: &CpuData) -> Section {
    let names: Vec<&str> = c.config.strategies.iter().map(String::as_str).collect();
    let series: Vec<Series> = names
        .iter()
        .map(|&s| {
            let mut pts: Vec<(f64, f64)> = c
                .points
                .iter()
                .filter(|p| p.strategy == s)
                .map(|p| (p.interval_ns as f64, p.cpu_percent.clamp(0.0, 100.0)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: s.to_string(),
                color: color(names.iter().position(|n| *n == s).unwrap_or(0) + 2),
                points: pts,
                style: Style::LineMarkers,
            }
        })
        .collect();
    let max_cpu = c.points.iter().map(|p| p.cpu_percent).fold(0.0, f64::max);
    let spec = XyChart {
        title: None,
        x: Axis::linear("requested sleep", Unit::Ns).range(
            0.0,
            c.config.intervals_ns.iter().copied().max().unwrap_or(1) as f64 * 1.05,
        ),
        y: Axis::linear("CPU used (% of one core)", Unit::Percent)
            .range(0.0, (max_cpu * 1.15).clamp(5.0, 105.0)),
        series,
        ideal: false,
        legend: Legend::UpperRight,
    };
    let mut header = vec!["strategy".to_string()];
    header.extend(c.config.intervals_ns.iter().map(|&i| ns(i as f64)));
    let mut t = Table::new(header);
    for &s in &names {
        let mut row = vec![Cell::Text(s.to_string())];
        for &iv in &c.config.intervals_ns {
            row.push(
                match c
                    .points
                    .iter()
                    .find(|p| p.strategy == s && p.interval_ns == iv)
                {
                    Some(p) => Cell::NumSub(
                        pct(p.cpu_percent),
                        format!("p99 {} (n {})", ns(p.error.p99_ns), p.error.count),
                    ),
                    None => Cell::Empty,
                },
            );
        }
        t.row(row);
    }
    Section {
        id: "cpu".into(),
        title: "CPU against the requested sleep".into(),
        blocks: vec![
            Block::Text(format!(
                "Seed 002 figure 3: each hybrid sleeps the same interval over and over for {} per point; each point is the thread's CPU time over the wall time.",
                ns(c.config.seconds_ns as f64)
            )),
            Block::Figure(figure(
                "cpu-interval",
                "CPU used against requested sleep per strategy",
                (860, 420),
                cpu_caption(c),
                |a| spec.draw(a),
            )),
            Block::Heading("CPU % (p99 lateness below)".into()),
            Block::Table(t),
        ],
    }
}

fn cpu_caption(c: &CpuData) -> String {
    let Some(&first) = c.config.intervals_ns.iter().min() else {
        return String::new();
    };
    let Some(&last) = c.config.intervals_ns.iter().max() else {
        return String::new();
    };
    let at = |iv: u64| {
        let mut v: Vec<_> = c.points.iter().filter(|p| p.interval_ns == iv).collect();
        v.sort_by(|a, b| a.cpu_percent.total_cmp(&b.cpu_percent));
        v
    };
    let (lo, hi) = (at(first), at(last));
    match (lo.first(), lo.last(), hi.last()) {
        (Some(a), Some(b), Some(z)) => format!(
            "At {} the hybrids used {} ({}) to {} ({}) of a core; at {} at most {} ({}).",
            ns(first as f64),
            pct(a.cpu_percent),
            a.strategy,
            pct(b.cpu_percent),
            b.strategy,
            ns(last as f64),
            pct(z.cpu_percent),
            z.strategy
        ),
        _ => String::new(),
    }
}
