//! Seed 004's section: periodic timers, their error at each period.

use super::figure;
use crate::charts::color;
use crate::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::html::{Block, Section};
use crate::units::{ns, pct};
use crate::view::{Results, distinct};
use sleeplab_results::timers::{TimersCell, TimersData, cells_table};
use sleeplab_stats::{BY_POINT_VALUE, Sentence, Stat};

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
            scale: crate::charts::xy::Scale::Log,
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
    // The terminal's table, every period in one: longest period first, mechanisms in
    // the chart's order.
    let periods = distinct(cells.iter().map(|c| c.period_ns));
    let mut ordered: Vec<&TimersCell> = Vec::new();
    for &p in periods.iter().rev() {
        for m in &mechs {
            if let Some(c) = cells.iter().find(|c| c.period_ns == p && &c.mechanism == m) {
                ordered.push(c);
            }
        }
    }
    let t = cells_table(&ordered, true);
    Some(Section::new(
        "timers",
        "Periodic timers",
        vec![
            Block::Text(format!(
                "Seed 004's table: each timer ran for {} per period; the error is |interval − period| / period per wake (the seed's “avg error”), lateness is per scheduled tick.",
                ns(d.config.duration_ns as f64)
            )),
            Block::Figure(figure(
                "timers-error",
                "average error per period for each periodic timer",
                (860, 460),
                caption(&cells).text,
                |a| spec.draw(a),
            )),
            Block::Table(t),
        ],
    ))
}

fn mechanisms(d: &TimersData, cells: &[&TimersCell]) -> Vec<String> {
    d.config
        .mechanisms
        .iter()
        .filter(|m| cells.iter().any(|c| &c.mechanism == *m))
        .cloned()
        .collect()
}

/// The caption: at the shortest period, the timer that erred least and the one that
/// erred most, by the mean interval error (seed 004's "avg error").
pub fn caption(cells: &[&TimersCell]) -> Sentence {
    let mut s = Sentence::default();
    let Some(p) = cells.iter().map(|c| c.period_ns).min() else {
        return s;
    };
    let at: Vec<&&TimersCell> = cells.iter().filter(|c| c.period_ns == p).collect();
    if at.len() < 2 {
        return s;
    }
    let errs: Vec<f64> = at.iter().map(|c| c.merged.avg_error_pct).collect();
    let Some((bi, wi)) = s.least_and_most(&errs) else {
        return s;
    };
    let (best, worst): (&TimersCell, &TimersCell) = (at[bi], at[wi]);
    let quote = |s: &mut Sentence, c: &TimersCell| {
        s.quoted(Stat::Mean, c.merged.received, pct(c.merged.avg_error_pct))
    };
    let (b, w) = (quote(&mut s, best), quote(&mut s, worst));
    s.push(&format!(
        "At a {} period, {BY_POINT_VALUE}, {} erred least, by a mean {b} of the period, and {} most, {w} (seed 004 saw Windows' SetTimer at 1450 %).",
        ns(p as f64),
        best.mechanism,
        worst.mechanism,
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sleeplab_results::timers::TickStats;

    fn cell(m: &str, period_ns: u64, err: f64, received: u64) -> TimersCell {
        TimersCell {
            mechanism: m.into(),
            period_ns,
            load: 0,
            timer_slack_ns: 50_000,
            requested_timer_slack_ns: None,
            complete: true,
            merged: TickStats {
                expected: received,
                received,
                avg_error_pct: err,
                ..TickStats::default()
            },
            cpu_pct: 0.0,
            voluntary_csw: 0,
            involuntary_csw: 0,
            threads: vec![],
            explanation: None,
        }
    }

    #[test]
    fn least_and_most_name_the_extremes() {
        let cells = [
            cell("a", 1_000_000, 3.0, 250),
            cell("b", 1_000_000, 0.5, 250),
            cell("c", 1_000_000, 40.0, 12),
            cell("a", 20_000_000, 0.1, 12),
        ];
        let refs: Vec<&TimersCell> = cells.iter().collect();
        let s = caption(&refs);
        assert_eq!(s.check(), Ok(()));
        assert!(
            s.text.contains("b erred least") && s.text.contains("c most"),
            "{s}"
        );
        assert!(s.text.contains("n = 12"), "{s}");
    }

    proptest! {
        #[test]
        fn caption_is_true_of_its_numbers(
            v in proptest::collection::vec((0.0f64..2000.0, 1u64..400, any::<bool>()), 0..8),
        ) {
            let cells: Vec<TimersCell> = v
                .iter()
                .enumerate()
                .map(|(i, (e, n, long))| cell(&format!("t{i}"), if *long { 20_000_000 } else { 1_000_000 }, *e, *n))
                .collect();
            let refs: Vec<&TimersCell> = cells.iter().collect();
            let s = caption(&refs);
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}
