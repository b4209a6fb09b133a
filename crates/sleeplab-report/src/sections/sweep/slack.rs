//! Timer slack: the same waits, interleaved, at the default slack and at 1 ns.

use super::captions;
use crate::charts::color;
use crate::charts::dumbbell::Dumbbell;
use crate::charts::xy::Axis;
use crate::html::{Block, Section};
use crate::sections::figure;
use crate::units::ns;
use crate::view::SlackSweep;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{Cell, Sentence, Table};

/// The request the section shows (10 µs, else 1 µs, 100 µs, the first) and its idle
/// pairs (high slack, low slack).
fn at_request<'a>(s: &SlackSweep<'a>) -> (u64, Vec<(&'a SweepCell, &'a SweepCell)>) {
    let pairs = s.pairs();
    let reqs: Vec<u64> = crate::view::distinct(pairs.iter().map(|(h, _)| h.requested_ns));
    let d = [10_000u64, 1_000, 100_000]
        .into_iter()
        .find(|d| reqs.contains(d))
        .or_else(|| reqs.first().copied())
        .unwrap_or(0);
    let at_d = pairs
        .into_iter()
        .filter(|(h, _)| h.requested_ns == d && h.load == 0)
        .collect();
    (d, at_d)
}

/// The section's caption, with its claims.
pub(super) fn caption(s: &SlackSweep<'_>) -> Sentence {
    let (d, pairs) = at_request(s);
    captions::slack(&pairs, s.high, s.low, d)
}

/// The timer slack section: each mechanism's median at the two slacks.
pub(super) fn section(s: &SlackSweep<'_>) -> Section {
    let (d, at_d) = at_request(s);
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
    let pairs = at_d;
    let caption = caption(s).text;
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
    Section::new(
        "timer-slack",
        "Timer slack",
        vec![
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
    )
}
