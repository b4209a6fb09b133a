//! Seed 000's own form ("Quantifying the accuracy of Sleep", TimerTest): two tables for
//! the sleep call, the mean and the standard deviation of the elapsed time with rows =
//! requested duration and columns = competing busy threads, and its scatter of every
//! sample (here: every sample the result keeps), by load, with the 0 request on a strip
//! of its own.

use super::captions::changed;
use super::{load_color, load_name, n_clause};
use crate::charts::css;
use crate::charts::scatter::Scatter;
use crate::charts::xy::{Axis, Series, Style};
use crate::html::{Block, Section};
use crate::sections::chart;
use crate::sections::seeds::{SIGMA_N, sigma_n};
use crate::units::ns;
use crate::view::MainSweep;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{Cell, Claim, Est, Sentence, Stat, Table, Verb};

/// The sleep calls, in order of preference: the first measured at two or more requests
/// is the one the seed's tables show (the seed measured Windows' `Sleep`).
const SLEEP_CALLS: [&str; 3] = ["nanosleep", "clock-nanosleep", "std-sleep"];

/// The sleep call the tables show.
fn sleep_call<'a>(m: &MainSweep<'a>) -> Option<&'a str> {
    let mechs = m.mechanisms();
    SLEEP_CALLS.iter().find_map(|s| {
        let name = mechs.iter().copied().find(|m| m == s)?;
        (m.cells().filter(|c| c.mechanism == name).count() >= 2).then_some(name)
    })
}

/// The rows (requests) and columns (loads) of `mech`'s tables.
fn grid(m: &MainSweep<'_>, mech: &str) -> (Vec<u64>, Vec<usize>) {
    let cells: Vec<&SweepCell> = m.cells().filter(|c| c.mechanism == mech).collect();
    let reqs = crate::view::distinct(cells.iter().map(|c| c.requested_ns));
    let loads = crate::view::distinct(cells.iter().map(|c| c.load as u64))
        .into_iter()
        .map(|l| l as usize)
        .collect();
    (reqs, loads)
}

/// The seed's two tables: mean (with n) and σ (dividing by n) per request × load.
pub(super) fn tables(m: &MainSweep<'_>, mech: &str) -> (Table, Table) {
    let (reqs, loads) = grid(m, mech);
    let header = |what: &str| {
        let mut h = vec!["requested".to_string()];
        h.extend(loads.iter().map(|&l| format!("{what} @ {}", load_name(l))));
        h
    };
    let (mut mean, mut sigma) = (Table::new(header("mean")), Table::new(header("σ")));
    for &d in &reqs {
        let mut a = vec![Cell::Num(ns(d as f64))];
        let mut b = vec![Cell::Num(ns(d as f64))];
        for &l in &loads {
            match m.cell(mech, d, l).filter(|c| c.summary.count > 0) {
                Some(c) => {
                    a.push(Cell::NumSub(
                        ns(c.summary.mean_ns),
                        format!("n {}", c.summary.count),
                    ));
                    b.push(Cell::Num(ns(sigma_n(c.summary.stddev_ns, c.summary.count))));
                }
                None => {
                    a.push(Cell::Empty);
                    b.push(Cell::Empty);
                }
            }
        }
        mean.row(a);
        sigma.row(b);
    }
    (mean, sigma)
}

/// The tables' caption: what they hold, σ's convention, and how the mean of the longest
/// request measured idle and at the highest load changed with the load.
pub(super) fn tables_caption(m: &MainSweep<'_>, mech: &str) -> Sentence {
    let mut s = Sentence::new(format!(
        "Seed 000's two tables for {mech}: the mean and the standard deviation σ of the time a call took, rows = requested duration, columns = competing busy threads (the seed ran 0–5 on one CPU); warm-up calls are kept out, as the seed kept out its slow first Sleep(0) calls. {SIGMA_N}."
    ));
    let (reqs, loads) = grid(m, mech);
    let max = loads.iter().copied().max().unwrap_or(0);
    let pair = reqs.iter().rev().find_map(|&d| {
        let a = m.cell(mech, d, 0).filter(|c| c.summary.count > 0)?;
        let b = m.cell(mech, d, max).filter(|c| c.summary.count > 0)?;
        Some((d, a, b))
    });
    if let Some((d, a, b)) = pair.filter(|_| max > 0) {
        let (from, to) = (a.summary.mean_ns, b.summary.mean_ns);
        let mean = |c: &SweepCell| c.est(Stat::Mean).unwrap_or(Est::point(c.summary.mean_ns));
        let word = changed(&mut s, Stat::Mean, Verb::Grew, mean(a), mean(b));
        for c in [a, b] {
            s.claim(Claim::Quote {
                stat: Stat::Mean,
                n: c.summary.count,
                shown: ns(c.summary.mean_ns),
            });
        }
        s.push(&format!(
            " The mean of a {} {mech} {word} from {} (no load{}) to {} ({}{}).",
            ns(d as f64),
            ns(from),
            n_clause(a.summary.count),
            ns(to),
            load_name(max),
            n_clause(b.summary.count)
        ));
    }
    s
}

/// (requested, elapsed) of every kept sample of `mech` at `load`, the 0 request
/// included.
pub(super) fn samples(m: &MainSweep<'_>, mech: &str, load: usize) -> Vec<(f64, f64)> {
    m.cells()
        .filter(|c| c.mechanism == mech && c.load == load)
        .flat_map(|c| {
            c.samples_ns
                .iter()
                .map(move |&x| (c.requested_ns as f64, x as f64))
        })
        .collect()
}

/// Seed 000's section, when the main sweep measured a sleep call at two requests.
pub(super) fn section(m: &MainSweep<'_>) -> Option<Section> {
    let mech = sleep_call(m)?;
    let (mean, sigma) = tables(m, mech);
    let (_, loads) = grid(m, mech);
    let mut blocks = vec![
        Block::Text(tables_caption(m, mech).text),
        Block::Heading(format!("Mean elapsed of {mech} (n below)")),
        Block::Table(mean),
        Block::Heading(format!("σ of {mech} (dividing by n)")),
        Block::Table(sigma),
    ];
    let cells: Vec<&SweepCell> = m.cells().filter(|c| c.mechanism == mech).collect();
    let kept: usize = cells.iter().map(|c| c.samples_ns.len()).sum();
    let measured: u64 = cells.iter().map(|c| c.summary.count).sum();
    if kept > 0 {
        let charts = loads
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let spec = Scatter {
                    title: Some(load_name(l)),
                    x: Axis::log_ns("requested (log scale)"),
                    y: Axis::log_ns("elapsed (log scale)"),
                    series: vec![Series {
                        name: load_name(l),
                        color: load_color(i),
                        points: samples(m, mech, l),
                        style: Style::Markers,
                    }],
                };
                chart(
                    &format!("sweep-timertest-scatter-load-{l}"),
                    &format!("every kept sample of {mech} with {}", load_name(l)),
                    (430, 330),
                    |a| spec.draw(a),
                )
            })
            .collect();
        let legend = loads
            .iter()
            .enumerate()
            .map(|(i, &l)| (load_name(l), css(load_color(i))))
            .chain([("ideal (actual = requested)".to_string(), "dash".to_string())])
            .collect();
        blocks.push(Block::Heading(format!(
            "Every kept sample of {mech}, by load (seed 000's scatter)"
        )));
        blocks.push(Block::Grid {
            charts,
            legend,
            wide: true,
            caption: format!(
                "{kept} samples of {measured} measured calls: results.json keeps the first {} of each cell. The 0 request sits on a strip of its own left of the log axis, which has no place for 0; points are spread sideways by a small jitter so that equal values stay visible.",
                m.data.config.json_samples
            ),
        });
    }
    Some(Section::new(
        "timertest",
        format!("Seed 000's tables: mean and σ of {mech} by load"),
        blocks,
    ))
}
