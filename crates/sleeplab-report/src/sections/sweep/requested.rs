//! Requested vs actual: the main mechanisms' medians idle (the hero chart), every
//! mechanism with its load levels as series, and the table of medians (p99 and n below).

use super::{captions, highlighted, honest, load_color, load_name, n_clause, quote, small_n};
use crate::charts::css;
use crate::charts::xy::{Axis, Legend, Series, Style, XyChart};
use crate::escape;
use crate::findings::{blocked, claim_blocking};
use crate::html::{Block, Figure, Section};
use crate::sections::{chart, figure};
use crate::units::{ns, ratio};
use crate::view::MainSweep;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Cell, Claim, Est, Extreme, INDISTINGUISHABLE, NEVER_BLOCKED, RankBy, Sentence,
    Stat, Table, basis_note, never_blocked_rule,
};

/// Within this share of the request a median counts as accurate (stated in the caption).
const ACCURATE: f64 = 0.10;

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

/// The requested-vs-actual section.
/// The page's one picture of the machine, under the answer: requested against median
/// elapsed for the main mechanisms with no load, log-log, the ideal dashed.
pub(crate) fn hero(m: &MainSweep<'_>) -> Figure {
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
    figure(
        "sweep-requested-actual",
        "requested vs actual duration, main mechanisms, no load",
        (860, 500),
        hero_caption(m).text,
        |a| hero.draw(a),
    )
}

/// Requested against actual: how the waits were timed (the main mechanisms' chart opens
/// the page, under the answer), every mechanism by load, and the numbers.
pub(super) fn section(m: &MainSweep<'_>, cpus: usize) -> Section {
    let mut blocks = vec![Block::Text(
        "Each wait was timed from just before the call to just after it. On the dashed line a wait takes exactly what was asked; above it, longer. Nothing can sit below it except a wake-up that came early. The main mechanisms' chart opens the page, under the answer.".into(),
    )];

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
        caption: load_caption(m, cpus).text,
    });
    blocks.push(Block::Heading(
        "The numbers: median elapsed (p99 and n below; – where n < 100 cannot resolve a p99)"
            .into(),
    ));
    blocks.push(Block::Table(median_table(m)));
    Section::new("requested-vs-actual", "Requested vs actual", blocks)
}

/// The hero's caption: at the smallest non-zero request, the lowest and the highest
/// median among the idle cells that blocked (those that did not are named as returning
/// without sleeping), then the request from which every one that blocked stays within
/// [`ACCURATE`] of the request.
pub(super) fn hero_caption(m: &MainSweep<'_>) -> Sentence {
    let mut s = Sentence::default();
    let threshold = format!("{} %", ACCURATE * 100.0);
    let fair = |c: &&SweepCell| c.load == 0 && honest(c);
    if let Some(d) = m.requests().into_iter().find(|&d| d > 0) {
        let (mut cells, idle): (Vec<&SweepCell>, Vec<&SweepCell>) = m
            .cells()
            .filter(|c| c.requested_ns == d && fair(c))
            .partition(|c| blocked(c));
        cells.sort_by(|a, b| a.summary.median_ns.total_cmp(&b.summary.median_ns));
        if let (Some(lo), Some(hi)) = (cells.first(), cells.last()) {
            let medians: Vec<f64> = cells.iter().map(|c| c.summary.median_ns).collect();
            let (a, b) = (
                quote(&mut s, &lo.summary, Stat::Median).unwrap_or_default(),
                quote(&mut s, &hi.summary, Stat::Median).unwrap_or_default(),
            );
            for c in [lo, hi] {
                claim_blocking(&mut s, c, true);
            }
            if cells.len() >= 2 {
                let intervals: Vec<Est> = cells
                    .iter()
                    .map(|c| {
                        c.est(Stat::Median)
                            .unwrap_or(Est::point(c.summary.median_ns))
                    })
                    .collect();
                let clear = |i: usize, most: bool| {
                    intervals.iter().enumerate().all(|(j, o)| {
                        j == i
                            || if most {
                                o.below(&intervals[i])
                            } else {
                                intervals[i].below(o)
                            }
                    })
                };
                let tie = if clear(0, false) && clear(cells.len() - 1, true) {
                    String::new()
                } else {
                    let note = basis_note(&intervals.iter().collect::<Vec<_>>());
                    format!(
                        " ({BY_POINT_VALUE}: by the 95 % intervals of the medians over rounds, the least or the most is {INDISTINGUISHABLE} from another{note})"
                    )
                };
                s.claim(Claim::Rank {
                    extreme: Extreme::Least,
                    by: RankBy::Signed,
                    chosen: 0,
                    among: medians.clone(),
                    intervals: intervals.clone(),
                });
                s.claim(Claim::Rank {
                    extreme: Extreme::Most,
                    by: RankBy::Signed,
                    chosen: medians.len() - 1,
                    among: medians,
                    intervals,
                });
                s.push(&format!(
                    "With no load, asking to sleep {} took a median from {a} ({}{}, the least) to {b} ({}{}, the most) among the mechanisms that blocked{tie}, {} to {} the request",
                    ns(d as f64),
                    lo.mechanism,
                    n_clause(lo.summary.count),
                    hi.mechanism,
                    n_clause(hi.summary.count),
                    ratio(lo.summary.median_ns / d as f64),
                    ratio(hi.summary.median_ns / d as f64)
                ));
            } else {
                s.push(&format!(
                    "With no load, asking {} to sleep {} took a median {a}{}, {} the request",
                    lo.mechanism,
                    ns(d as f64),
                    small_n(lo.summary.count),
                    ratio(lo.summary.median_ns / d as f64)
                ));
            }
        }
        if !idle.is_empty() {
            let names: Vec<&str> = idle.iter().map(|c| c.mechanism.as_str()).collect();
            for c in &idle {
                claim_blocking(&mut s, c, false);
            }
            s.push(&format!(
                "{}{} returned {NEVER_BLOCKED} ({})",
                if s.text.is_empty() { "" } else { "; " },
                names.join(", "),
                never_blocked_rule()
            ));
        }
    }
    // The smallest request from which every idle cell that blocked stays accurate.
    let reqs: Vec<u64> = m.requests().into_iter().filter(|&d| d > 0).collect();
    let within = |d: u64| {
        m.cells()
            .filter(|c| c.requested_ns == d && fair(c) && blocked(c))
            .all(|c| c.summary.median_ns <= (1.0 + ACCURATE) * d as f64)
    };
    let from = reqs
        .iter()
        .enumerate()
        .find(|(i, _)| reqs[*i..].iter().all(|&d| within(d)))
        .map(|(_, &d)| d);
    let sep = if s.text.is_empty() { "" } else { "; " };
    match (from, reqs.last()) {
        (Some(d), _) => {
            s.claim(Claim::Threshold {
                shown: threshold.clone(),
            });
            s.push(&format!(
                "{sep}from {} up, the median of every mechanism that blocked stayed within {threshold} of the request",
                ns(d as f64)
            ));
        }
        (None, Some(&last)) => {
            s.claim(Claim::Threshold {
                shown: threshold.clone(),
            });
            s.push(&format!(
                "{sep}even at {} some mechanism's median overshot by more than {threshold}",
                ns(last as f64)
            ));
        }
        _ => {}
    }
    if s.text.is_empty() {
        s.push("No non-zero requests were measured.");
    } else {
        s.push(".");
    }
    s
}

/// The small multiples' caption: the p99 of one wait idle and at the highest load.
pub(super) fn load_caption(m: &MainSweep<'_>, cpus: usize) -> Sentence {
    let loads = m.loads();
    let max = loads.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return Sentence::new("Measured without competing load.");
    }
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cells().any(|c| c.requested_ns == d && c.load == max));
    let Some(d) = d else {
        return Sentence::new(format!(
            "Loads measured: {}.",
            loads
                .iter()
                .map(|l| load_name(*l))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let p99 = |c: &SweepCell| c.est(Stat::P99);
    let rows: Vec<(&str, Est, Est)> = m
        .cells()
        .filter(|c| c.load == 0 && c.requested_ns == d && honest(c))
        .filter_map(|a| {
            let b = m.cell(&a.mechanism, d, max)?;
            Some((a.mechanism.as_str(), p99(a)?, p99(b)?))
        })
        .collect();
    let over = if max > cpus { ", oversubscribed" } else { "" };
    let setting = format!("With {} on {cpus} CPUs{over}", load_name(max));
    captions::load(&rows, d, &setting)
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
