//! Seed 004's own form ("On WinAPI timers and their resolution"): per period, every
//! periodic timer's `count`, `avg error` (mean |interval − period| / period, %) and
//! `std dev` (of that error, percentage points): the Linux periodic timers of `timers`
//! and the language runtimes' periodic timers of `runtimes` (Go's Ticker, Node's
//! setInterval, asyncio, Java, C's timerfd), computed from the tick arrivals the result
//! keeps.

use crate::html::{Block, Section};
use crate::units::{ns, pct};
use crate::view::Results;
use sleeplab_results::runtimes::{MethodStatus, PeriodicCell, RuntimesData};
use sleeplab_results::timers::TimersData;
use sleeplab_stats::{BY_POINT_VALUE, Cell, Sentence, Table};

/// One row of the seed's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Period, ns.
    pub period_ns: u64,
    /// "Linux" or the runtime's title.
    pub source: String,
    /// The timer (mechanism or method).
    pub timer: String,
    /// Wakes received (the seed's count).
    pub count: u64,
    /// Ticks scheduled (Linux timers) or measured (runtimes).
    pub of: u64,
    /// Mean |interval − period| / period, %.
    pub avg_error_pct: f64,
    /// Its standard deviation, percentage points (dividing by n − 1).
    pub stddev_pct: f64,
}

/// Mean and standard deviation (dividing by n − 1; 0 below two values).
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

/// The seed's error of each kept interval of a runtime's periodic cell, %: the first
/// interval runs from the last warm-up tick (or the start), as the harness counts it.
pub fn interval_errors(p: &PeriodicCell) -> Vec<f64> {
    let period = p.period_ns.max(1) as f64;
    let mut prev = p.warmup_ns.last().copied().unwrap_or(0);
    p.arrivals_ns
        .iter()
        .map(|&a| {
            let interval = a.saturating_sub(prev) as f64;
            prev = a;
            100.0 * (interval - period).abs() / period
        })
        .collect()
}

/// The Linux periodic timers' rows, at the lowest load and its first slack.
fn linux_rows(d: &TimersData) -> Vec<Row> {
    let Some(load) = d.cells.iter().map(|c| c.load).min() else {
        return Vec::new();
    };
    let slack = d
        .cells
        .iter()
        .find(|c| c.load == load)
        .map(|c| c.requested_timer_slack_ns);
    d.cells
        .iter()
        .filter(|c| c.load == load && Some(c.requested_timer_slack_ns) == slack)
        .filter(|c| c.merged.received > 0)
        .map(|c| Row {
            period_ns: c.period_ns,
            source: "Linux".into(),
            timer: c.mechanism.clone(),
            count: c.merged.received,
            of: c.merged.expected,
            avg_error_pct: c.merged.avg_error_pct,
            stddev_pct: c.merged.error_stddev_pct,
        })
        .collect()
}

/// The runtimes' periodic timers' rows, at the lowest load.
fn runtime_rows(d: &RuntimesData) -> Vec<Row> {
    let methods = d.runtimes.iter().flat_map(|r| {
        r.methods
            .iter()
            .filter(|m| m.status == MethodStatus::Measured)
            .filter_map(move |m| m.periodic.as_ref().map(|p| (r, m, p)))
    });
    let load = methods.clone().map(|(_, m, _)| m.load).min();
    methods
        .filter(|(_, m, _)| Some(m.load) == load)
        .filter_map(|(r, m, p)| {
            let errors = interval_errors(p);
            let (avg, sd) = mean_sd(&errors);
            (!errors.is_empty()).then(|| Row {
                period_ns: p.period_ns,
                source: r.title.clone(),
                timer: m.method.clone(),
                count: errors.len() as u64,
                of: p.ticks,
                avg_error_pct: avg,
                stddev_pct: sd,
            })
        })
        .collect()
}

/// Every row, longest period first (the seed's order), Linux before the runtimes.
pub fn rows(r: &Results<'_>) -> Vec<Row> {
    let mut out: Vec<Row> = r.timers().map(|(_, d)| linux_rows(d)).unwrap_or_default();
    out.extend(
        r.runtimes()
            .map(|(_, d)| runtime_rows(d))
            .unwrap_or_default(),
    );
    // Stable: within a period, Linux first, then the runtimes, in result order.
    out.sort_by_key(|x| std::cmp::Reverse(x.period_ns));
    out
}

/// The seed's table.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "period",
        "source",
        "timer",
        "count",
        "avg error",
        "std dev (percentage points, ÷ n − 1)",
    ]);
    for x in rows {
        let count = if x.count == x.of {
            x.count.to_string()
        } else {
            format!("{} of {}", x.count, x.of)
        };
        t.row(vec![
            Cell::Text(ns(x.period_ns as f64)),
            Cell::Text(x.source.clone()),
            Cell::Text(x.timer.clone()),
            Cell::Num(count),
            Cell::Num(pct(x.avg_error_pct)),
            Cell::Num(crate::units::num(x.stddev_pct)),
        ]);
    }
    t
}

/// The caption: what each column is, σ's convention, and at the shortest period the
/// timer that erred least and the one that erred most on average.
pub fn caption(rows: &[Row]) -> Sentence {
    let mut s = Sentence::new(
        "Seed 004's table: count = wakes received (“of N” where fewer than the ticks scheduled or measured), avg error = mean |interval − period| ÷ period, std dev = the standard deviation of that error in percentage points, dividing by n − 1 (the seed does not say which it used). The runtimes' rows are computed from the tick arrivals results.json keeps, the first interval from the last warm-up tick.",
    );
    let Some(p) = rows.iter().map(|x| x.period_ns).min() else {
        return s;
    };
    let at: Vec<&Row> = rows.iter().filter(|x| x.period_ns == p).collect();
    let errs: Vec<f64> = at.iter().map(|x| x.avg_error_pct).collect();
    if let Some((lo, hi)) = s.least_and_most(&errs) {
        s.push(&format!(
            " At {}, {BY_POINT_VALUE}, {} {} erred least on average ({}) and {} {} most ({}); seed 004 saw 1.27 % for timeSetEvent and 1450 % for SetTimer at 1 ms on Windows.",
            ns(p as f64),
            at[lo].source,
            at[lo].timer,
            pct(errs[lo]),
            at[hi].source,
            at[hi].timer,
            pct(errs[hi])
        ));
    }
    s
}

/// Seed 004's table, when the results hold periodic timers of either kind.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let rows = rows(r);
    if rows.is_empty() {
        return None;
    }
    Some(Section::new(
        "seed-004",
        "Seed 004's table: periodic timers, Linux and the runtimes",
        vec![Block::Text(caption(&rows).text), Block::Table(table(&rows))],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab_stats::Summary;

    #[test]
    fn the_seeds_error_is_hand_computed_from_the_arrivals() {
        // Period 1 µs, last warm-up tick at 1.1 µs, ticks at 1.9, 3.05, 4.3 µs:
        // intervals 800, 1150, 1250 ns → errors 20, 15, 25 %: mean 20 %, σ (÷ n − 1) 5.
        let p = PeriodicCell {
            period_ns: 1_000,
            ticks: 3,
            interval: Summary::default(),
            lateness: Default::default(),
            warmup_ns: vec![1_100],
            arrivals_ns: vec![1_900, 3_050, 4_300],
            all_arrivals_ns: vec![],
            notes: vec![],
            explanation: None,
        };
        let e = interval_errors(&p);
        assert_eq!(e.len(), 3);
        for (got, want) in e.iter().zip([20.0, 15.0, 25.0]) {
            assert!((got - want).abs() < 1e-9, "{e:?}");
        }
        let (avg, sd) = mean_sd(&e);
        assert!((avg - 20.0).abs() < 1e-9 && (sd - 5.0).abs() < 1e-9);
    }

    #[test]
    fn caption_ranks_the_shortest_periods_errors() {
        let row = |timer: &str, period_ns: u64, avg: f64| Row {
            period_ns,
            source: "Linux".into(),
            timer: timer.into(),
            count: 10,
            of: 10,
            avg_error_pct: avg,
            stddev_pct: 1.0,
        };
        let rows = [
            row("a", 10_000_000, 50.0),
            row("b", 1_000_000, 4.0),
            row("c", 1_000_000, 0.5),
        ];
        let s = caption(&rows);
        s.check().unwrap();
        assert!(
            s.text
                .contains("At 1 ms, by point value, Linux c erred least on average (0.5 %) and Linux b most (4 %)"),
            "{}",
            s.text
        );
        assert!(s.text.contains("dividing by n − 1"));
        let t = table(&rows);
        assert_eq!(t.rows[0][4], Cell::Num("50 %".into()));
    }
}
