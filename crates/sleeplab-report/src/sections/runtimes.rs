//! Seed 003's section: every language runtime's own sleep, compared.

use super::figure;
use crate::charts::bars::{Bar, Bars};
use crate::charts::color;
use crate::charts::xy::{Axis, Legend, Series, Style, XyChart};
use crate::html::{Block, Section};
use crate::units::ns;
use crate::view::Results;
use sleeplab_results::protocol::Kind;
use sleeplab_results::runtimes::{
    MethodResult, MethodStatus, OneshotCell, RuntimeResult, RuntimeStatus,
};
use sleeplab_stats::{
    BY_POINT_VALUE, Cell, Est, Extreme, INDISTINGUISHABLE, RankBy, Sentence, Stat, Table,
    WITHIN_RUN, basis_note, extreme_index,
};

use crate::findings::runtimes::{measured, smallest};

fn label(r: &RuntimeResult, m: &MethodResult) -> String {
    format!("{} {}", r.title, m.method)
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
        .map(|s| (s.name.clone(), crate::charts::css(s.color)))
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
        Block::Figure(crate::html::Figure {
            legend,
            ..figure("runtimes-requested-actual", "requested vs actual, each runtime's plain sleep", (860, 500), caption(&mains).text, |a| spec.draw(a))
        }),
        Block::Heading(format!("Every wait function asked for {}", ns(request as f64))),
        Block::Figure(figure("runtimes-floor", "elapsed for the smallest request, every method", (860, height), floor_caption(&floors).text, |a| bars.draw(a))),
        Block::Table(t),
    ];
    if !not_here.is_empty() {
        blocks.push(Block::List(not_here));
    }
    Some(Section::new("runtimes", "Language runtimes", blocks))
}

/// A cell's median written, its quote claimed, ` (n = 10)` under 100 samples.
fn median(s: &mut Sentence, c: &OneshotCell) -> String {
    s.quoted(Stat::Median, c.summary.count, ns(c.summary.median_ns))
}

/// The requested-vs-actual caption: each runtime's plain sleep at the smallest request,
/// by its median, in order; a median below the request is said to be one.
pub fn caption(mains: &[(&RuntimeResult, &MethodResult)]) -> Sentence {
    let mut s = Sentence::default();
    let mut at: Vec<(String, &OneshotCell)> = mains
        .iter()
        .filter_map(|(r, m)| smallest(m).map(|c| (label(r, m), c)))
        .collect();
    let Some(req) = at.iter().map(|a| a.1.requested_ns).min() else {
        return s;
    };
    at.retain(|a| a.1.requested_ns == req);
    at.sort_by(|a, b| a.1.summary.median_ns.total_cmp(&b.1.summary.median_ns));
    let list: Vec<String> = at
        .iter()
        .map(|(n, c)| {
            let v = median(&mut s, c);
            if c.summary.median_ns < req as f64 {
                format!("{n} {v} (below the request: most calls returned early)")
            } else {
                format!("{n} {v}")
            }
        })
        .collect();
    s.push(&format!(
        "Asked to sleep {}, the plain sleeps took a median: {}.",
        ns(req as f64),
        list.join(", ")
    ));
    s
}

/// The floor caption: the quickest wait by median among those that never returned
/// early; those whose median was below the request (most calls early) apart from those
/// where only some calls were, counted (a past report: Atomics.wait, 12 of 135 early with a
/// median of 79.9 µs, was listed as returning before the requested time).
pub fn floor_caption(floors: &[(String, &OneshotCell, usize)]) -> Sentence {
    let mut s = Sentence::default();
    let honest: Vec<&(String, &OneshotCell, usize)> = floors
        .iter()
        .filter(|f| f.1.summary.early_count == 0)
        .collect();
    let medians: Vec<f64> = honest.iter().map(|f| f.1.summary.median_ns).collect();
    if let Some(bi) = extreme_index(&medians, Extreme::Least, RankBy::Signed) {
        let b = honest[bi];
        let v = median(&mut s, b.1);
        let est = |c: &OneshotCell| {
            c.est(Stat::Median)
                .unwrap_or(Est::point(c.summary.median_ns))
        };
        let close: Vec<&(String, &OneshotCell, usize)> = honest
            .iter()
            .copied()
            .filter(|f| !std::ptr::eq(*f, b) && !est(b.1).below(&est(f.1)))
            .collect();
        let tie = if close.is_empty() {
            format!(" ({WITHIN_RUN})")
        } else {
            let mut all: Vec<Est> = close.iter().map(|f| est(f.1)).collect();
            all.push(est(b.1));
            format!(
                " ({BY_POINT_VALUE}: {INDISTINGUISHABLE} from {}, by the 95 % intervals of the medians over blocks of consecutive calls{}; {WITHIN_RUN})",
                close
                    .iter()
                    .map(|f| f.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                basis_note(&all.iter().collect::<Vec<_>>())
            )
        };
        s.push(&format!(
            "The quickest wait that never returned early was {}: median {v}{tie}.",
            b.0
        ));
        s.rank_over(
            Extreme::Least,
            bi,
            medians,
            honest.iter().map(|f| est(f.1)).collect(),
        );
    }
    let (mostly, sometimes): (Vec<_>, Vec<_>) = floors
        .iter()
        .filter(|f| f.1.summary.early_count > 0)
        .partition(|f| f.1.summary.median_ns < f.1.requested_ns as f64);
    if !mostly.is_empty() {
        let names: Vec<&str> = mostly.iter().map(|f| f.0.as_str()).collect();
        s.push(&format!(
            " These returned before the requested time in most calls (a median below the request: a rounded-down or zero timeout): {}.",
            names.join(", ")
        ));
    }
    if !sometimes.is_empty() {
        let parts: Vec<String> = sometimes
            .iter()
            .map(|f| {
                format!(
                    "{} ({} of {})",
                    f.0, f.1.summary.early_count, f.1.summary.count
                )
            })
            .collect();
        s.push(&format!(
            " Some calls returned early in: {}.",
            parts.join(", ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sleeplab_stats::summarize;

    fn cell(req: u64, samples: &[u64]) -> OneshotCell {
        OneshotCell {
            requested_ns: req,
            summary: summarize(samples, req),
            warmup_ns: vec![],
            samples_ns: vec![],
            all_samples_ns: vec![],
            notes: vec![],
            explanation: None,
            units: None,
        }
    }

    /// A past report: Node's Atomics.wait (12 of 135 calls early, median 79.9 µs for a 10 µs
    /// request) was listed among waits that "returned before the requested time".
    #[test]
    fn sometimes_early_is_counted_not_called_early() {
        let mut atomics: Vec<u64> = vec![5_000; 12];
        atomics.extend(vec![79_900; 123]);
        let atomics = cell(10_000, &atomics);
        let jruby = cell(10_000, &[80, 90, 100]);
        let c = cell(10_000, &[60_000, 61_000, 62_000]);
        let floors = vec![
            ("Node.js Atomics.wait".to_string(), &atomics, 0),
            ("JRuby sleep".to_string(), &jruby, 1),
            ("C nanosleep".to_string(), &c, 2),
        ];
        let s = floor_caption(&floors);
        assert_eq!(s.check(), Ok(()));
        let most = s.text.split("in most calls").nth(1).unwrap();
        let most = most.split('.').next().unwrap();
        assert!(most.contains("JRuby") && !most.contains("Atomics"), "{s}");
        assert!(s.text.contains("Node.js Atomics.wait (12 of 135)"), "{s}");
        assert!(
            s.text.contains("was C nanosleep: median 61 µs (n = 3)"),
            "{s}"
        );
    }

    proptest! {
        #[test]
        fn floor_caption_is_true_of_its_numbers(
            v in proptest::collection::vec(proptest::collection::vec(1u64..3_000_000, 1..150), 0..6),
        ) {
            let cells: Vec<OneshotCell> = v.iter().map(|s| cell(10_000, s)).collect();
            let floors: Vec<(String, &OneshotCell, usize)> =
                cells.iter().enumerate().map(|(i, c)| (format!("r{i} m"), c, i)).collect();
            let s = floor_caption(&floors);
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
            for (name, c, _) in &floors {
                let early = c.summary.early_count;
                if early > 0 && c.summary.median_ns >= 10_000.0 {
                    let counted = format!("{name} ({early} of {})", c.summary.count);
                    prop_assert!(s.text.contains(&counted), "{}", s.text);
                }
            }
        }
    }
}
