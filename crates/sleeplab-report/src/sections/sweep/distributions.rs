//! How the waits are distributed: cumulative distributions of elapsed times at a short
//! and a long request, exact when every sample was kept, from the histogram otherwise.

use super::{highlighted, honest, quote, small_n};
use crate::charts::css;
use crate::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::findings::{blocked, claim_blocking};
use crate::html::{Block, Section};
use crate::sections::chart;
use crate::units::ns;
use crate::view::MainSweep;
use plotters::style::RGBColor;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{Cell, NEVER_BLOCKED, Sentence, Stat, Table, never_blocked_rule};

/// (elapsed, cumulative % of calls) of a cell: the exact step function when the result
/// kept every sample, otherwise from the histogram's buckets (each bucket's upper bound
/// and the share of calls up to it), starting at the minimum.
pub fn cdf(c: &SweepCell) -> Vec<(f64, f64)> {
    if !c.samples_ns.is_empty() && c.samples_ns.len() as u64 == c.summary.count {
        let mut v = c.samples_ns.clone();
        v.sort_unstable();
        let n = v.len() as f64;
        let mut pts = Vec::with_capacity(2 * v.len());
        for (i, &x) in v.iter().enumerate() {
            pts.push((x.max(1) as f64, 100.0 * i as f64 / n));
            pts.push((x.max(1) as f64, 100.0 * (i + 1) as f64 / n));
        }
        return pts;
    }
    let total: u64 = c.histogram.iter().map(|b| b[1]).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut pts = vec![(c.summary.min_ns.max(1) as f64, 0.0)];
    let mut cum = 0u64;
    for b in &c.histogram {
        cum += b[1];
        let x = (b[0] as f64).max(pts.last().map_or(0.0, |p| p.0));
        pts.push((x, 100.0 * cum as f64 / total as f64));
    }
    pts
}

/// The distributions section: CDFs at a short and a long request, and their table.
pub(super) fn section(m: &MainSweep<'_>) -> Option<Section> {
    let hl = highlighted(m);
    let reqs = m.requests();
    let short = reqs.iter().copied().find(|&d| d > 0 && d < 10_000);
    let long = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|d| reqs.contains(d));
    let picked: Vec<u64> = [short, long].into_iter().flatten().collect();
    if picked.is_empty() {
        return None;
    }
    let charts: Vec<_> = picked
        .iter()
        .map(|&d| {
            let series: Vec<Series> = hl
                .iter()
                .filter_map(|&(name, c)| {
                    m.cell(name, d, 0).map(|cell| Series {
                        name: name.to_string(),
                        color: c,
                        points: cdf(cell),
                        style: Style::Line,
                    })
                })
                .collect();
            let spec = XyChart {
                title: Some(format!("requested {}", ns(d as f64))),
                x: elapsed_axis(&series),
                y: Axis::linear("calls that returned within (%)", Unit::Percent).range(0.0, 100.0),
                series,
                ideal: false,
                legend: Legend::None,
            };
            chart(
                &format!("sweep-cdf-{d}ns"),
                &format!(
                    "distribution of elapsed times for {} requests",
                    ns(d as f64)
                ),
                (540, 340),
                |a| spec.draw(a),
            )
        })
        .collect();
    let legend = hl.iter().map(|&(n, c)| (n.to_string(), css(c))).collect();
    let mut t = Table::new(
        ["mechanism", "requested"]
            .into_iter()
            .chain(SweepCell::QUANTILE_COLUMNS),
    );
    for &d in &picked {
        for &(name, _) in &hl {
            if let Some(c) = m.cell(name, d, 0) {
                let mut row = vec![Cell::Text(name.to_string()), Cell::Num(ns(d as f64))];
                row.extend(c.quantiles(ns).map(Cell::Num));
                t.row(row);
            }
        }
    }
    Some(Section::new("distributions", "How the waits are distributed", vec![
            Block::Text("The share of calls that had returned by each elapsed time (a cumulative distribution), with no load. A steep line is a predictable wait; a long tail to the right is the occasional very late wake-up.".into()),
            Block::Grid {
                charts,
                legend,
                wide: true,
                caption: caption(m, &hl, picked[0]).text,
            },
            Block::Table(t),
        ]))
}

/// The elapsed axis of a CDF: tight around the data, logarithmic when it spans more
/// than a factor of 4, linear otherwise (a log axis over a narrow range has no ticks
/// worth reading).
fn elapsed_axis(series: &[Series]) -> Axis {
    let xs = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0);
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !lo.is_finite() || hi <= lo {
        return Axis::log_ns("elapsed (log scale)");
    }
    if hi / lo > 4.0 {
        Axis::log_ns("elapsed (log scale)").range(lo / 1.25, hi * 1.25)
    } else {
        let pad = (hi - lo) * 0.05;
        Axis::linear("elapsed", Unit::Ns).range((lo - pad).max(0.0), hi + pad)
    }
}

/// The caption: for request `d`, the median and the highest tail quantile its sample
/// resolves of the idle highlighted cell with the lowest median, and the fastest call of
/// the one with the highest.
pub(super) fn caption(m: &MainSweep<'_>, hl: &[(&str, RGBColor)], d: u64) -> Sentence {
    let mut s = Sentence::default();
    let mut cells: Vec<&SweepCell> = hl
        .iter()
        .filter_map(|&(n, _)| m.cell(n, d, 0))
        .filter(|c| honest(c))
        .collect();
    cells.sort_by(|a, b| a.summary.median_ns.total_cmp(&b.summary.median_ns));
    let (Some(best), Some(worst)) = (cells.first(), cells.last()) else {
        return s;
    };
    let median = quote(&mut s, &best.summary, Stat::Median).unwrap_or_default();
    claim_blocking(&mut s, best, false);
    s.push(&format!(
        "For a {} request, half of the {} calls{}{} returned within {median}",
        ns(d as f64),
        best.mechanism,
        small_n(best.summary.count),
        if blocked(best) {
            String::new()
        } else {
            format!(
                " (which returned {NEVER_BLOCKED}: {})",
                never_blocked_rule()
            )
        },
    ));
    if let Some((stat, _)) = best.summary.tail() {
        let tail = quote(&mut s, &best.summary, stat).unwrap_or_default();
        let share = 100.0 * stat.tail_level().unwrap_or(0.0);
        s.push(&format!(
            " and {} % within {tail}",
            crate::units::num(share)
        ));
    }
    if worst.mechanism != best.mechanism {
        let min = quote(&mut s, &worst.summary, Stat::Min).unwrap_or_default();
        s.push(&format!(
            "; {}'s fastest call{} took {min}",
            worst.mechanism,
            small_n(worst.summary.count)
        ));
    }
    s.push(".");
    s
}
