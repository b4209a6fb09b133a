//! Seed 001's section: what a zero and a minimal sleep cost, per mechanism, with the
//! seed's claims checked against this machine.

use super::figure;
use crate::charts::color;
use crate::charts::dumbbell::Dumbbell;
use crate::charts::xy::Axis;
use crate::html::{Block, Section};
use crate::units::ns;
use crate::view::Results;
use sleeplab_results::short::findings::times_sooner;
use sleeplab_results::short::{ShortCell, ShortData};
use sleeplab_stats::{Cell, Claim, Sentence, Stat, Table, ratio};

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
            caption(d, slack).text,
            |a| spec.draw(a),
        )),
    ];
    if !verdicts.is_empty() {
        blocks.push(Block::Heading("The seed's claims, checked here".into()));
        blocks.push(Block::List(verdicts));
    }
    blocks.push(Block::Table(t));
    Some(Section::new("short", "Zero and minimal sleeps", blocks))
}

/// The caption: nanosleep(1 ns) against the one-shot timerfd at 1 ns, by the mean net
/// cost per call (the seed's statistic, and the ratio finding 3 judges, written the same
/// way), and sched_yield's.
pub fn caption(d: &ShortData, slack: u64) -> Sentence {
    let nano = d.cell("nanosleep", 1, slack);
    let tfd = ["timerfd-reuse", "timerfd"]
        .iter()
        .find_map(|m| d.cell(m, 1, slack));
    let yld = d.cell("yield", 0, slack);
    let mut s = Sentence::default();
    let mut parts = Vec::new();
    let quote = |s: &mut Sentence, c: &ShortCell| s.quoted(Stat::Mean, c.net.n, ns(c.net.mean_ns));
    if let (Some(n), Some(t)) = (nano, tfd) {
        // The ratio finding 3 quotes (times_sooner), or its inverse when slower.
        let (of, to, word) = if n.net.overlaps(&t.net) {
            // No order where the means' intervals overlap (as for every verdict).
            let (of, to) = if times_sooner(n, t) >= 1.0 {
                (n.net.mean_ns, t.net.mean_ns)
            } else {
                (t.net.mean_ns, n.net.mean_ns)
            };
            (
                of,
                to,
                "apart by point value, indistinguishable in this run (the means' intervals overlap)",
            )
        } else if times_sooner(n, t) >= 1.0 {
            (n.net.mean_ns, t.net.mean_ns, "faster")
        } else {
            (t.net.mean_ns, n.net.mean_ns, "slower")
        };
        let shown = ratio(of / to);
        let (a, b) = (quote(&mut s, n), quote(&mut s, t));
        s.claim(Claim::Ratio {
            stat: Stat::Mean,
            of,
            to,
            shown: shown.clone(),
        });
        parts.push(format!(
            "nanosleep(1 ns) {a} and {}(1 ns) {b}, {shown} {word}",
            t.mechanism
        ));
    }
    if let Some(y) = yld {
        parts.push(format!("sched_yield {}", quote(&mut s, y)));
    }
    if !parts.is_empty() {
        s.push(&format!(
            "Under {} slack, the mean net cost per call: {}.",
            ns(slack as f64),
            parts.join("; ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sleeplab_results::Wording;
    use sleeplab_results::short::findings;

    /// A synthetic cell of `net` costs per repetition, one voluntary switch per call.
    fn cell(m: &str, req: u64, net: &[f64]) -> ShortCell {
        sleeplab_results::short_cell(m, req, net, 1.0)
    }

    fn data(cells: Vec<ShortCell>) -> ShortData {
        ShortData {
            config: sleeplab_results::short::ShortConfig {
                mechanisms: vec![],
                timer_slacks_ns: vec![],
                batch: 100,
                batch_time_ns: 1,
                min_batch: 1,
                repetitions: 3,
                seed: 1,
                confidence: 0.999,
            },
            cells,
            references: vec![],
            skipped: vec![],
            findings: vec![],
        }
    }

    /// The caption said 4.05× (medians) where finding 3 said 4.3× (means): both now
    /// quote the mean, written the same way.
    #[test]
    fn caption_and_finding_quote_one_ratio_of_means() {
        // Skewed repetitions: the medians' ratio (4.0) differs from the means' (4.3);
        // six of them, so the means' 99.9 % intervals are apart (a ratio is called faster
        // only then).
        let reps = [40_000.0, 40_000.0, 40_000.0, 40_000.0, 49_000.0, 49_000.0];
        let n = cell("nanosleep", 1, &reps);
        let t = cell("timerfd-reuse", 1, &[10_000.0; 6]);
        let c = caption(&data(vec![n.clone(), t.clone()]), 50_000);
        assert_eq!(c.check(), Ok(()));
        assert!(
            c.text.contains("4.3× faster") && c.text.contains("mean"),
            "{c}"
        );
        let (_, detail) = findings::timerfd_vs_nanosleep(Some(&n), &[&t], Wording::NAMES);
        assert!(detail.contains("4.3× sooner by mean"), "{detail}");
    }

    proptest! {
        /// Whatever the costs, the caption's claims hold and its ratio is the finding's.
        #[test]
        fn caption_is_true_of_its_numbers(
            a in proptest::collection::vec(1.0f64..1e6, 2..30),
            b in proptest::collection::vec(1.0f64..1e6, 2..30),
            y in proptest::collection::vec(1.0f64..1e4, 2..30),
        ) {
            let n = cell("nanosleep", 1, &a);
            let t = cell("timerfd", 1, &b);
            let d = data(vec![n.clone(), t.clone(), cell("yield", 0, &y)]);
            let c = caption(&d, 50_000);
            prop_assert!(c.check().is_ok(), "{:?}", c.check());
            let r = findings::times_sooner(&n, &t);
            let shown = if r >= 1.0 { ratio(r) } else { ratio(t.net.mean_ns / n.net.mean_ns) };
            prop_assert!(c.text.contains(&shown), "{}", c.text);
            if r >= 1.0 {
                let (_, detail) = findings::timerfd_vs_nanosleep(Some(&n), &[&t], Wording::NAMES);
                prop_assert!(detail.contains(&format!("{shown} sooner by mean")), "{}", detail);
            }
            // Faster or slower only where the means' intervals are apart.
            let called = c.text.contains(" faster") || c.text.contains(" slower");
            prop_assert_eq!(called, !n.net.overlaps(&t.net), "{}", c.text);
        }
    }
}
