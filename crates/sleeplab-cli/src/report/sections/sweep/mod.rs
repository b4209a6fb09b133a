//! The sweep's sections: requested vs actual (seed 000's log-log scatter, seed 002
//! figure 2) with load levels as series, latency distributions, what waiting costs the
//! CPU, and timer slack's effect.

mod captions;

use super::{chart, figure};
use crate::experiments::sweep::SweepCell;
use crate::report::charts::dumbbell::Dumbbell;
use crate::report::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::report::charts::{color, css};
use crate::report::escape;
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::{ns, pct, ratio};
use crate::report::view::{MainSweep, Results, SlackSweep};
use plotters::style::RGBColor;
use sleeplab::wait::{self, Family};

/// The mechanisms the overview charts show, when measured (one per family, and spin).
pub const HIGHLIGHT: [&str; 6] = [
    "nanosleep",
    "select",
    "poll",
    "timerfd-reuse",
    "futex",
    "spin",
];

/// Every sweep section the results support.
pub fn sections(r: &Results<'_>) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some(m) = r.main_sweep() {
        out.push(requested_vs_actual(&m, r.top.fingerprint.cpu_count));
        out.extend(distributions(&m));
    }
    if let Some(s) = r.slack_sweep() {
        out.push(slack(&s));
    }
    if let Some(m) = r.main_sweep() {
        out.extend(cpu_cost(&m));
    }
    out
}

/// Whether a mechanism really sleeps (not spin or yield).
fn sleeps(name: &str) -> bool {
    !matches!(
        wait::find(name).map(|m| m.family),
        Some(Family::Busy) | None
    )
}

/// Whether a cell is a sleep to compare: a sleeping mechanism none of whose calls
/// returned early (a periodic timer's expiry is not a sleep of the requested length).
fn honest(c: &SweepCell) -> bool {
    sleeps(&c.mechanism) && c.summary.early_count == 0 && c.summary.count > 0
}

/// The highlighted mechanisms present (at least two), with their colours; otherwise the
/// first six measured.
fn highlighted<'a>(m: &MainSweep<'a>) -> Vec<(&'a str, RGBColor)> {
    let mechs = m.mechanisms();
    let mut chosen: Vec<&str> = HIGHLIGHT
        .iter()
        .filter_map(|h| mechs.iter().copied().find(|m| m == h))
        .collect();
    if chosen.len() < 2 {
        chosen = mechs
            .iter()
            .copied()
            .filter(|n| *n != "yield")
            .take(6)
            .collect();
    }
    chosen
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, color(i)))
        .collect()
}

/// The colour of load level number `i` (0 = idle).
fn load_color(i: usize) -> RGBColor {
    [color(0), color(1), color(2), color(4), color(7)][i.min(4)]
}

fn load_name(load: usize) -> String {
    match load {
        0 => "no load".into(),
        1 => "1 busy thread".into(),
        n => format!("{n} busy threads"),
    }
}

/// (requested, median) of a mechanism at a load, non-zero requests only.
fn medians(m: &MainSweep<'_>, mech: &str, load: usize) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = m
        .cells()
        .filter(|c| {
            c.mechanism == mech && c.load == load && c.requested_ns > 0 && c.summary.count > 0
        })
        .map(|c| (c.requested_ns as f64, c.summary.median_ns))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn requested_vs_actual(m: &MainSweep<'_>, cpus: usize) -> Section {
    let hl = highlighted(m);
    let hero = XyChart {
        title: None,
        x: Axis::log_ns("requested duration (log scale)"),
        y: Axis::log_ns("median elapsed (log scale)"),
        series: hl
            .iter()
            .map(|&(name, c)| Series {
                name: name.to_string(),
                color: c,
                points: medians(m, name, 0),
                style: Style::LineMarkers,
            })
            .collect(),
        ideal: true,
        legend: Legend::LowerRight,
    };
    let mut blocks = vec![Block::Text(
        "Each wait was timed from just before the call to just after it. On the dashed line a wait takes exactly what was asked; above it, longer. Nothing can sit below it except a wake-up that came early.".into(),
    )];
    blocks.push(Block::Figure(figure(
        "sweep-requested-actual",
        "requested vs actual duration, main mechanisms, no load",
        (860, 500),
        hero_caption(m),
        |a| hero.draw(a),
    )));

    // Small multiples: every mechanism, load levels as series.
    let loads = m.loads();
    let charts: Vec<_> = m
        .mechanisms()
        .into_iter()
        .filter(|mech| {
            m.cells()
                .any(|c| &c.mechanism == mech && c.requested_ns > 0)
        })
        .map(|mech| {
            let spec = XyChart {
                title: Some(mech.to_string()),
                x: Axis::log_ns("requested"),
                y: Axis::log_ns("median elapsed"),
                // The idle line is drawn last, on top: where load changes nothing, it
                // is the one that shows.
                series: loads
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, &l)| Series {
                        name: load_name(l),
                        color: load_color(i),
                        points: medians(m, mech, l),
                        style: Style::LineMarkers,
                    })
                    .collect(),
                ideal: true,
                legend: Legend::None,
            };
            chart(
                &format!("sweep-mechanism-{}", escape::ident(mech)),
                &format!("requested vs actual for {mech} by load"),
                (360, 290),
                |a| spec.draw(a),
            )
        })
        .collect();
    let mut legend: Vec<(String, String)> = loads
        .iter()
        .enumerate()
        .map(|(i, &l)| (load_name(l), css(load_color(i))))
        .collect();
    legend.push(("ideal (actual = requested)".into(), "dash".into()));
    blocks.push(Block::Heading("Every mechanism, by load".into()));
    blocks.push(Block::Grid {
        charts,
        legend,
        wide: false,
        caption: load_caption(m, cpus),
    });
    blocks.push(Block::Heading(
        "The numbers: median elapsed (p99 below)".into(),
    ));
    blocks.push(Block::Table(median_table(m)));
    Section {
        id: "requested-vs-actual".into(),
        title: "Requested vs actual".into(),
        blocks,
    }
}

fn hero_caption(m: &MainSweep<'_>) -> String {
    let mut parts = Vec::new();
    if let Some(d) = m.requests().into_iter().find(|&d| d > 0) {
        let mut cells: Vec<&SweepCell> = m
            .cells()
            .filter(|c| c.load == 0 && c.requested_ns == d && honest(c))
            .collect();
        cells.sort_by(|a, b| a.summary.median_ns.total_cmp(&b.summary.median_ns));
        if let (Some(lo), Some(hi)) = (cells.first(), cells.last()) {
            parts.push(format!(
                "With no load, asking to sleep {} took a median {} ({}) to {} ({}), {} to {} the request",
                ns(d as f64),
                ns(lo.summary.median_ns),
                lo.mechanism,
                ns(hi.summary.median_ns),
                hi.mechanism,
                ratio(lo.summary.median_ns / d as f64),
                ratio(hi.summary.median_ns / d as f64)
            ));
        }
    }
    // The smallest request from which every sleeping mechanism stays within 10 %.
    let reqs: Vec<u64> = m.requests().into_iter().filter(|&d| d > 0).collect();
    let within = |d: u64| {
        m.cells()
            .filter(|c| c.load == 0 && c.requested_ns == d && honest(c))
            .all(|c| c.summary.median_ns <= 1.1 * d as f64)
    };
    let from = reqs
        .iter()
        .enumerate()
        .find(|(i, _)| reqs[*i..].iter().all(|&d| within(d)))
        .map(|(_, &d)| d);
    match (from, reqs.last()) {
        (Some(d), _) => parts.push(format!(
            "from {} up, every sleeping mechanism stayed within 10 % of the request",
            ns(d as f64)
        )),
        (None, Some(&last)) => parts.push(format!(
            "even at {} some mechanism overshot by more than 10 %",
            ns(last as f64)
        )),
        _ => {}
    }
    if parts.is_empty() {
        "No non-zero requests were measured.".into()
    } else {
        format!("{}.", parts.join("; "))
    }
}

fn load_caption(m: &MainSweep<'_>, cpus: usize) -> String {
    let loads = m.loads();
    let max = loads.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return "Measured without competing load.".into();
    }
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cells().any(|c| c.requested_ns == d && c.load == max));
    let Some(d) = d else {
        return format!(
            "Loads measured: {}.",
            loads
                .iter()
                .map(|l| load_name(*l))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let rows: Vec<(&str, f64, f64)> = m
        .cells()
        .filter(|c| c.load == 0 && c.requested_ns == d && honest(c))
        .filter_map(|a| {
            let b = m.cell(&a.mechanism, d, max)?;
            Some((a.mechanism.as_str(), a.summary.p99_ns?, b.summary.p99_ns?))
        })
        .collect();
    let setting = format!("With {} on {cpus} CPUs", load_name(max));
    captions::load(&rows, d, &setting).text
}

fn median_table(m: &MainSweep<'_>) -> Table {
    let reqs = m.requests();
    let mut header = vec!["mechanism".to_string(), "load".to_string()];
    header.extend(reqs.iter().map(|&d| ns(d as f64)));
    let mut t = Table::new(header);
    for mech in m.mechanisms() {
        for l in m.loads() {
            if !m.cells().any(|c| c.mechanism == mech && c.load == l) {
                continue;
            }
            let mut row = vec![Cell::Text(mech.to_string()), Cell::Num(l.to_string())];
            for &d in &reqs {
                row.push(match m.cell(mech, d, l) {
                    Some(c) if c.summary.early_count > 0 => Cell::Warn(format!(
                        "{} ({} early)",
                        ns(c.summary.median_ns),
                        c.summary.early_count
                    )),
                    Some(c) => Cell::NumSub(
                        ns(c.summary.median_ns),
                        format!("p99 {} (n {})", ns(c.summary.p99_ns), c.summary.count),
                    ),
                    None => Cell::Empty,
                });
            }
            t.row(row);
        }
    }
    t
}

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

fn distributions(m: &MainSweep<'_>) -> Option<Section> {
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
    let mut t = Table::new([
        "mechanism",
        "requested",
        "n",
        "min",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
    ]);
    for &d in &picked {
        for &(name, _) in &hl {
            if let Some(c) = m.cell(name, d, 0) {
                let s = &c.summary;
                t.row(vec![
                    Cell::Text(name.to_string()),
                    Cell::Num(ns(d as f64)),
                    Cell::Num(s.count.to_string()),
                    Cell::Num(ns(s.min_ns as f64)),
                    Cell::Num(ns(s.median_ns)),
                    Cell::Num(ns(s.p90_ns)),
                    Cell::Num(ns(s.p99_ns)),
                    Cell::Num(ns(s.p999_ns)),
                    Cell::Num(ns(s.max_ns as f64)),
                ]);
            }
        }
    }
    Some(Section {
        id: "distributions".into(),
        title: "How the waits are distributed".into(),
        blocks: vec![
            Block::Text("The share of calls that had returned by each elapsed time (a cumulative distribution), with no load. A steep line is a predictable wait; a long tail to the right is the occasional very late wake-up.".into()),
            Block::Grid {
                charts,
                legend,
                wide: true,
                caption: distribution_caption(m, &hl, picked[0]),
            },
            Block::Table(t),
        ],
    })
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

fn distribution_caption(m: &MainSweep<'_>, hl: &[(&str, RGBColor)], d: u64) -> String {
    let mut cells: Vec<&SweepCell> = hl
        .iter()
        .filter_map(|&(n, _)| m.cell(n, d, 0))
        .filter(|c| honest(c))
        .collect();
    cells.sort_by(|a, b| a.summary.median_ns.total_cmp(&b.summary.median_ns));
    let (Some(best), Some(worst)) = (cells.first(), cells.last()) else {
        return String::new();
    };
    let mut s = format!(
        "For a {} request, half of the {} calls returned within {} and 99 % within {}",
        ns(d as f64),
        best.mechanism,
        ns(best.summary.median_ns),
        ns(best.summary.p99_ns)
    );
    if worst.mechanism != best.mechanism {
        s.push_str(&format!(
            "; {}'s fastest call took {}",
            worst.mechanism,
            ns(worst.summary.min_ns as f64)
        ));
    }
    s.push('.');
    s
}

/// CPU used while waiting, as % of one core.
fn cpu_pct(c: &SweepCell) -> f64 {
    (100.0 * c.cpu_ns_per_call / c.summary.mean_ns.max(1.0)).clamp(0.0, 100.0)
}

fn cpu_cost(m: &MainSweep<'_>) -> Option<Section> {
    let hl = highlighted(m);
    let series: Vec<Series> = hl
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
    let spec = XyChart {
        title: None,
        x: Axis::log_ns("requested duration (log scale)"),
        y: Axis::linear("CPU used while waiting (% of one core)", Unit::Percent).range(0.0, 105.0),
        series,
        ideal: false,
        legend: Legend::UpperRight,
    };
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cells().any(|c| c.requested_ns == d && c.load == 0));
    let caption = match d {
        Some(d) => {
            let mut cells: Vec<&SweepCell> =
                hl.iter().filter_map(|&(n, _)| m.cell(n, d, 0)).collect();
            cells.sort_by(|a, b| cpu_pct(a).total_cmp(&cpu_pct(b)));
            match (cells.first(), cells.last()) {
                (Some(lo), Some(hi)) if lo.mechanism != hi.mechanism => format!(
                    "While waiting {}, {} kept {} of a core busy and {} used {}; {:.2} context switches per call show who gave the CPU away.",
                    ns(d as f64),
                    hi.mechanism,
                    pct(cpu_pct(hi)),
                    lo.mechanism,
                    pct(cpu_pct(lo)),
                    lo.voluntary_csw_per_call
                ),
                _ => String::new(),
            }
        }
        None => String::new(),
    };
    let mut t = Table::new([
        "mechanism",
        "requested",
        "CPU per call",
        "CPU %",
        "voluntary csw/call",
        "involuntary csw/call",
    ]);
    for &(name, _) in &hl {
        for c in m.cells().filter(|c| c.mechanism == name && c.load == 0) {
            t.row(vec![
                Cell::Text(name.to_string()),
                Cell::Num(ns(c.requested_ns as f64)),
                Cell::Num(ns(c.cpu_ns_per_call)),
                Cell::Num(pct(cpu_pct(c))),
                Cell::Num(format!("{:.2}", c.voluntary_csw_per_call)),
                Cell::Num(format!("{:.2}", c.involuntary_csw_per_call)),
            ]);
        }
    }
    Some(Section {
        id: "cpu-cost".into(),
        title: "What waiting costs the CPU".into(),
        blocks: vec![
            Block::Figure(figure(
                "sweep-cpu",
                "CPU used while waiting, by requested duration",
                (860, 420),
                caption,
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    })
}

fn slack(s: &SlackSweep<'_>) -> Section {
    let pairs = s.pairs();
    let reqs: Vec<u64> = crate::report::view::distinct(pairs.iter().map(|(h, _)| h.requested_ns));
    let d = [10_000u64, 1_000, 100_000]
        .into_iter()
        .find(|d| reqs.contains(d))
        .or_else(|| reqs.first().copied())
        .unwrap_or(0);
    let at_d: Vec<_> = pairs
        .iter()
        .filter(|(h, _)| h.requested_ns == d && h.load == 0)
        .collect();
    let (hi_name, lo_name) = (
        format!("slack {}", ns(s.high as f64)),
        format!("slack {}", ns(s.low as f64)),
    );
    let spec = Dumbbell {
        rows: at_d.iter().map(|(h, _)| h.mechanism.clone()).collect(),
        groups: vec![(hi_name.clone(), color(1)), (lo_name.clone(), color(0))],
        values: at_d
            .iter()
            .map(|(h, l)| vec![Some(h.summary.median_ns), Some(l.summary.median_ns)])
            .collect(),
        x: Axis::log_ns(format!(
            "median elapsed for a {} request (log scale)",
            ns(d as f64)
        )),
    };
    let pairs: Vec<_> = at_d.iter().map(|(h, l)| (*h, *l)).collect();
    let caption = captions::slack(&pairs, s.high, s.low, d).text;
    let height = spec.height();
    let mut t = Table::new([
        "mechanism".to_string(),
        "requested".to_string(),
        format!("n @ {hi_name}"),
        format!("n @ {lo_name}"),
        format!("median @ {hi_name}"),
        format!("median @ {lo_name}"),
        "difference".to_string(),
        format!("p99 @ {hi_name}"),
        format!("p99 @ {lo_name}"),
    ]);
    for (h, l) in &pairs {
        let diff = h.summary.median_ns - l.summary.median_ns;
        t.row(vec![
            Cell::Text(h.mechanism.clone()),
            Cell::Num(ns(h.requested_ns as f64)),
            Cell::Num(h.summary.count.to_string()),
            Cell::Num(l.summary.count.to_string()),
            Cell::Num(ns(h.summary.median_ns)),
            Cell::Num(ns(l.summary.median_ns)),
            if diff > 2_000.0 {
                Cell::Warn(ns(diff))
            } else {
                Cell::Num(ns(diff))
            },
            Cell::Num(ns(h.summary.p99_ns)),
            Cell::Num(ns(l.summary.p99_ns)),
        ]);
    }
    Section {
        id: "timer-slack".into(),
        title: "Timer slack".into(),
        blocks: vec![
            Block::Text(format!(
                "Linux may delay a timer by the thread's timer slack so it can batch wake-ups: {} by default for normal threads. The same waits, interleaved, at {} and at {}:",
                ns(s.high as f64),
                ns(s.high as f64),
                ns(s.low as f64)
            )),
            Block::Figure(figure(
                "sweep-slack",
                "median elapsed at two timer slacks, per mechanism",
                (860, height),
                caption,
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExperimentData;
    use crate::report::testdata::{cell, result, sweep};

    #[test]
    fn exact_cdf_when_every_sample_was_kept() {
        let mut c = cell("nanosleep", 1_000, 0, 50_000, 60_000.0);
        c.samples_ns = vec![30, 10, 20, 40];
        c.summary.count = 4;
        assert_eq!(
            cdf(&c),
            vec![
                (10.0, 0.0),
                (10.0, 25.0),
                (20.0, 25.0),
                (20.0, 50.0),
                (30.0, 50.0),
                (30.0, 75.0),
                (40.0, 75.0),
                (40.0, 100.0)
            ]
        );
    }

    #[test]
    fn cdf_ends_at_100_and_starts_at_the_minimum() {
        let c = cell("nanosleep", 1_000, 0, 50_000, 60_000.0);
        let p = cdf(&c);
        assert_eq!(p.first(), Some(&(54_000.0, 0.0)));
        assert_eq!(p.last().unwrap().1, 100.0);
        assert!(p.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn hero_caption_states_the_spread_and_the_accurate_range() {
        let cells = vec![
            cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
            cell("timerfd", 1_000, 0, 50_000, 12_000.0),
            cell("nanosleep", 1_000_000, 0, 50_000, 1_050_000.0),
            cell("timerfd", 1_000_000, 0, 50_000, 1_010_000.0),
        ];
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let rs = Results::of(&r);
        let m = rs.main_sweep().unwrap();
        assert_eq!(
            hero_caption(&m),
            "With no load, asking to sleep 1 µs took a median 12 µs (timerfd) to 60 µs (nanosleep), ×12 to ×60 the request; from 1 ms up, every sleeping mechanism stayed within 10 % of the request."
        );
    }

    #[test]
    fn every_section_has_its_charts() {
        let mut cells = Vec::new();
        for m in ["nanosleep", "poll", "spin"] {
            for d in [0u64, 1_000, 1_000_000] {
                for l in [0usize, 2] {
                    cells.push(cell(m, d, l, 50_000, d as f64 + 50_000.0));
                }
            }
        }
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let secs = sections(&Results::of(&r));
        let ids: Vec<&str> = secs.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["requested-vs-actual", "distributions", "cpu-cost"]
        );
        let html: String = secs
            .iter()
            .map(|s| {
                crate::report::html::Page {
                    sections: vec![s.clone()],
                    ..Default::default()
                }
                .render()
            })
            .collect();
        for id in [
            "sweep-requested-actual",
            "sweep-mechanism-nanosleep",
            "sweep-mechanism-poll",
            "sweep-mechanism-spin",
            "sweep-cdf-1000ns",
            "sweep-cdf-1000000ns",
            "sweep-cpu",
        ] {
            assert!(
                html.contains(&format!("data-chart=\"{id}\"")),
                "{id} missing"
            );
        }
        assert!(!html.contains("could not be drawn"), "a chart failed");
    }
}
