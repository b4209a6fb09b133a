//! Seed 003's section: every language runtime's own sleep, compared.

use super::figure;
use crate::experiments::runtimes::{
    MethodResult, MethodStatus, OneshotCell, RuntimeResult, RuntimeStatus, RuntimesData,
};
use crate::probe::protocol::Kind;
use crate::report::charts::bars::{Bar, Bars};
use crate::report::charts::color;
use crate::report::charts::xy::{Axis, Legend, Series, Style, XyChart};
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::ns;
use crate::report::view::Results;

/// Whether a probe method calls sleeplab itself (its name starts with `sleeplab`): never
/// a language's plain sleep.
pub fn is_sleeplab(method: &str) -> bool {
    method.starts_with("sleeplab")
}

/// A runtime's main sleep: its first measured one-shot method (the probes list the
/// language's plain sleep first: nanosleep, sleep_for, time.Sleep, time.sleep…), never
/// one of sleeplab's own (`sleeplab_sleep_ns`, `sleeplab.sleep`).
pub fn main_sleep(r: &RuntimeResult) -> Option<&MethodResult> {
    r.methods.iter().find(|m| {
        m.kind == Kind::Oneshot
            && m.status == MethodStatus::Measured
            && !is_sleeplab(&m.method)
            && m.cells.iter().any(|c| c.summary.count > 0)
    })
}

/// The measured runtimes with their main sleep, at the lowest load and first slack.
pub fn measured(d: &RuntimesData) -> Vec<(&RuntimeResult, &MethodResult)> {
    d.runtimes
        .iter()
        .filter(|r| r.status == RuntimeStatus::Measured)
        .filter_map(|r| main_sleep(r).map(|m| (r, m)))
        .collect()
}

fn label(r: &RuntimeResult, m: &MethodResult) -> String {
    format!("{} {}", r.title, m.method)
}

/// The smallest request a cell was measured at, with the cell.
pub fn smallest(m: &MethodResult) -> Option<&OneshotCell> {
    m.cells
        .iter()
        .filter(|c| c.requested_ns > 0 && c.summary.count > 0)
        .min_by_key(|c| c.requested_ns)
}

/// The runtimes section, when the results hold a `runtimes` run with measurements.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let (_, d) = r.runtimes()?;
    let mains = measured(d);
    if mains.is_empty() {
        return None;
    }
    let spec = XyChart {
        title: None,
        x: Axis::log_ns("requested duration (log scale)"),
        y: Axis::log_ns("median elapsed (log scale)"),
        series: mains
            .iter()
            .enumerate()
            .map(|(i, (rt, m))| {
                let mut pts: Vec<(f64, f64)> = m
                    .cells
                    .iter()
                    .filter(|c| c.requested_ns > 0 && c.summary.count > 0)
                    .map(|c| (c.requested_ns as f64, c.summary.median_ns))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name: label(rt, m),
                    color: color(i),
                    points: pts,
                    style: Style::LineMarkers,
                }
            })
            .collect(),
        ideal: true,
        legend: Legend::None,
    };
    let mut legend: Vec<(String, String)> = spec
        .series
        .iter()
        .map(|s| (s.name.clone(), crate::report::charts::css(s.color)))
        .collect();
    legend.push(("ideal (actual = requested)".into(), "dash".into()));
    // Every one-shot method at its smallest request: the floor of each API.
    let mut floors: Vec<(String, &OneshotCell, usize)> = Vec::new();
    for (i, rt) in d.runtimes.iter().enumerate() {
        for m in rt
            .methods
            .iter()
            .filter(|m| m.kind == Kind::Oneshot && m.status == MethodStatus::Measured)
        {
            if let Some(c) = smallest(m) {
                floors.push((label(rt, m), c, i));
            }
        }
    }
    let request = floors.iter().map(|f| f.1.requested_ns).min().unwrap_or(0);
    floors.retain(|f| f.1.requested_ns == request);
    let bars = Bars {
        bars: floors
            .iter()
            .map(|(name, c, i)| Bar {
                name: name.clone(),
                value: c.summary.median_ns.max(1.0),
                whisker: c
                    .summary
                    .p99_ns
                    .map(|p| (c.summary.min_ns.max(1) as f64, p.max(1.0))),
                color: color(*i),
            })
            .collect(),
        x: Axis::log_ns(format!(
            "elapsed for a {} request: median (bar), min–p99 (whisker), log scale",
            ns(request as f64)
        )),
        legend: Some(("median".into(), "min – p99".into())),
    };
    let mut t = Table::new([
        "runtime",
        "method",
        "requested",
        "n",
        "min",
        "median",
        "p99",
        "max",
        "early",
    ]);
    for rt in &d.runtimes {
        for m in rt
            .methods
            .iter()
            .filter(|m| m.status == MethodStatus::Measured)
        {
            for c in m.cells.iter().filter(|c| c.summary.count > 0) {
                let s = &c.summary;
                t.row(vec![
                    Cell::Text(rt.title.clone()),
                    Cell::Text(m.method.clone()),
                    Cell::Num(ns(c.requested_ns as f64)),
                    Cell::Num(s.count.to_string()),
                    Cell::Num(ns(s.min_ns as f64)),
                    Cell::Num(ns(s.median_ns)),
                    Cell::Num(ns(s.p99_ns)),
                    Cell::Num(ns(s.max_ns as f64)),
                    if s.early_count > 0 {
                        Cell::Warn(s.early_count.to_string())
                    } else {
                        Cell::Num("0".into())
                    },
                ]);
            }
        }
    }
    let not_here: Vec<String> = d
        .runtimes
        .iter()
        .filter_map(|r| match &r.status {
            RuntimeStatus::Measured => None,
            RuntimeStatus::Skipped { reason, install } => Some(format!(
                "{}: not measured ({reason}); install with `{install}`",
                r.title
            )),
            RuntimeStatus::Failed { reason } => Some(format!("{}: failed ({reason})", r.title)),
        })
        .chain(d.runtimes.iter().flat_map(|r| {
            r.methods.iter().filter_map(move |m| {
                let p = m.partial.as_ref()?;
                Some(format!(
                    "{} {}: partial, {} of {} cells kept (stopped: {})",
                    r.title, m.method, p.cells_kept, p.cells_asked, p.reason
                ))
            })
        }))
        .collect();
    let height = bars.height();
    let mut blocks = vec![
        Block::Text("Seed 003 asked how accurate Ruby's sleep is on MRI, JRuby and Rubinius. Here every runtime's probe measures its own wait functions with its own monotonic clock, under the same conditions.".into()),
        Block::Figure(crate::report::html::Figure {
            legend,
            ..figure("runtimes-requested-actual", "requested vs actual, each runtime's plain sleep", (860, 500), caption(&mains), |a| spec.draw(a))
        }),
        Block::Heading(format!("Every wait function asked for {}", ns(request as f64))),
        Block::Figure(figure("runtimes-floor", "elapsed for the smallest request, every method", (860, height), floor_caption(&floors), |a| bars.draw(a))),
        Block::Table(t),
    ];
    if !not_here.is_empty() {
        blocks.push(Block::List(not_here));
    }
    Some(Section {
        id: "runtimes".into(),
        title: "Language runtimes".into(),
        blocks,
    })
}

fn caption(mains: &[(&RuntimeResult, &MethodResult)]) -> String {
    let mut at: Vec<(String, f64, u64)> = mains
        .iter()
        .filter_map(|(r, m)| {
            smallest(m).map(|c| (label(r, m), c.summary.median_ns, c.requested_ns))
        })
        .collect();
    let Some(req) = at.iter().map(|a| a.2).min() else {
        return String::new();
    };
    at.retain(|a| a.2 == req);
    at.sort_by(|a, b| a.1.total_cmp(&b.1));
    let list: Vec<String> = at
        .iter()
        .map(|(n, v, _)| {
            if *v < req as f64 {
                format!("{n} {} (returned early)", ns(*v))
            } else {
                format!("{n} {}", ns(*v))
            }
        })
        .collect();
    format!(
        "Asked to sleep {}, the plain sleeps took a median: {}.",
        ns(req as f64),
        list.join(", ")
    )
}

fn floor_caption(floors: &[(String, &OneshotCell, usize)]) -> String {
    let honest: Vec<_> = floors
        .iter()
        .filter(|f| f.1.summary.early_count == 0)
        .collect();
    let early: Vec<&str> = floors
        .iter()
        .filter(|f| f.1.summary.early_count > 0)
        .map(|f| f.0.as_str())
        .collect();
    let best = honest
        .iter()
        .min_by(|a, b| a.1.summary.median_ns.total_cmp(&b.1.summary.median_ns));
    let mut s = match best {
        Some(b) => format!(
            "The quickest wait that never returned early was {}: median {}.",
            b.0,
            ns(b.1.summary.median_ns)
        ),
        None => String::new(),
    };
    if !early.is_empty() {
        s.push_str(&format!(
            " These returned before the requested time (a rounded-down or zero timeout): {}.",
            early.join(", ")
        ));
    }
    s
}
