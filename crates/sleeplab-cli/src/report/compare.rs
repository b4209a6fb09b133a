//! Two results side by side: two machines, two timer slacks, before and after a kernel
//! change. Every measurement both hold (the same experiment, the same cell) is matched
//! and shown with the ratios b/a of its median and p99.
//!
//! A measurement is keyed by the survey stage (or experiment) it comes from and the
//! cell's coordinates: mechanism, request, load; the timer slack joins the key only when
//! a result holds several slacks for the same cell (so `sweep --timer-slack 50us` and
//! `sweep --timer-slack 1ns` compare cell by cell).

use super::charts::xy::{Axis, Legend, Series, Style, XyChart};
use super::charts::{color, render};
use super::html::{Badge, Block, Figure, Page, Section, Tone};
use super::table::{Cell, Table};
use super::units::{ns, num, ratio};
use super::view::Results;
use crate::experiments::KeyPart;
use crate::model::ResultFile;
use crate::output::new_table;
use std::fmt::Write;

/// One comparable measurement of a result, with where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Where it comes from: the survey stage or the experiment (`sweep`, `sweep-slack`).
    pub group: String,
    /// What was measured, e.g. `nanosleep 1 µs load 0`.
    pub key: String,
    /// The sample size both statistics rest on (calls, frames, ticks; repetitions for
    /// `short`).
    pub n: u64,
    /// Median, ns.
    pub median_ns: f64,
    /// 99th percentile, ns (`None` where the experiment has none, e.g. `short`'s
    /// per-repetition means, or where n cannot resolve it: fewer than 100).
    pub p99_ns: Option<f64>,
}

/// A point's key as text: its parts joined by spaces, numbers in the report's units.
fn key_text(parts: &[KeyPart]) -> String {
    let words: Vec<String> = parts
        .iter()
        .map(|p| match p {
            KeyPart::Text(t) => t.clone(),
            KeyPart::Ns(v) => ns(*v as f64),
            KeyPart::Number(v) => num(*v),
        })
        .collect();
    words.join(" ")
}

/// Every comparable measurement of a result: each experiment's own points
/// ([`ResultData::points`](crate::experiments::ResultData::points)), grouped by the
/// survey stage (or experiment) they come from.
pub fn points(result: &ResultFile) -> Vec<Measurement> {
    let r = Results::of(result);
    let mut out = Vec::new();
    for e in &r.entries {
        let group = e.stage.unwrap_or(e.result.data.name());
        out.extend(
            e.result
                .data
                .as_data()
                .points()
                .into_iter()
                .map(|p| Measurement {
                    group: group.to_string(),
                    key: key_text(&p.key),
                    n: p.n,
                    median_ns: p.median_ns,
                    p99_ns: p.p99_ns,
                }),
        );
    }
    out
}

/// The columns of the comparison, in the terminal and on the page.
const COLUMNS: [&str; 10] = [
    "stage",
    "measurement",
    "a n",
    "b n",
    "a median",
    "b median",
    "b/a",
    "a p99",
    "b p99",
    "b/a p99",
];

/// One matched measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Stage or experiment.
    pub group: String,
    /// What was measured.
    pub key: String,
    /// In the first result.
    pub a: Measurement,
    /// In the second result.
    pub b: Measurement,
}

impl Row {
    /// b / a of the medians.
    pub fn median_ratio(&self) -> f64 {
        self.b.median_ns / self.a.median_ns.max(1.0)
    }

    /// b / a of the p99s (NaN where there are none).
    pub fn p99_ratio(&self) -> f64 {
        match (self.a.p99_ns, self.b.p99_ns) {
            (Some(a), Some(b)) => b / a.max(1.0),
            _ => f64::NAN,
        }
    }
}

/// Two results matched cell by cell.
#[derive(Debug, Clone)]
pub struct Comparison<'a> {
    /// The first result ("a").
    pub a: &'a ResultFile,
    /// The second result ("b").
    pub b: &'a ResultFile,
    /// How to call the first (its path).
    pub a_name: String,
    /// How to call the second.
    pub b_name: String,
    /// Matched measurements, in the first result's order.
    pub rows: Vec<Row>,
}

/// Why two results cannot be compared (a user error: exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompareError(pub String);

/// Matches `a` and `b`.
pub fn compare<'a>(
    a: &'a ResultFile,
    b: &'a ResultFile,
    a_name: &str,
    b_name: &str,
) -> Result<Comparison<'a>, CompareError> {
    let (pa, pb) = (points(a), points(b));
    for (p, name, r) in [(&pa, a_name, a), (&pb, b_name, b)] {
        if p.is_empty() {
            return Err(CompareError(format!(
                "{name} ({}) holds no measurements to compare",
                r.data.name()
            )));
        }
    }
    let rows: Vec<Row> = pa
        .iter()
        .filter_map(|x| {
            pb.iter()
                .find(|y| y.group == x.group && y.key == x.key)
                .map(|y| Row {
                    group: x.group.clone(),
                    key: x.key.clone(),
                    a: x.clone(),
                    b: y.clone(),
                })
        })
        .collect();
    if rows.is_empty() {
        return Err(CompareError(format!(
            "{a_name} ({}) and {b_name} ({}) share no measurements to compare (no common experiment and cell)",
            a.data.name(),
            b.data.name()
        )));
    }
    Ok(Comparison {
        a,
        b,
        a_name: a_name.to_string(),
        b_name: b_name.to_string(),
        rows,
    })
}

/// The geometric mean of positive values.
fn geomean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold((0.0, 0u32), |(s, n), x| (s + x.ln(), n + 1));
    (n > 0).then(|| (sum / f64::from(n)).exp())
}

impl Comparison<'_> {
    /// The headline numbers, as sentences.
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        let n = self.rows.len();
        if let Some(g) = geomean(self.rows.iter().map(Row::median_ratio)) {
            let faster = self.rows.iter().filter(|r| r.median_ratio() < 0.9).count();
            let slower = self.rows.iter().filter(|r| r.median_ratio() > 1.1).count();
            out.push(format!(
                "Across {n} matching measurements, b's medians are {} a's (geometric mean of b/a); b is more than 10 % faster in {faster} and more than 10 % slower in {slower}.",
                ratio(g)
            ));
        }
        if let Some(g) = geomean(self.rows.iter().map(Row::p99_ratio)) {
            out.push(format!(
                "The tails (p99) moved by {} on the same geometric mean.",
                ratio(g)
            ));
        }
        let by = |f: fn(&Row) -> f64| {
            self.rows
                .iter()
                .filter(|r| f(r).is_finite())
                .max_by(|x, y| f(x).total_cmp(&f(y)))
        };
        let biggest = |what: &str, r: &Row| {
            format!(
                "Biggest {what}: {} ({}): median {} → {} ({}).",
                r.key,
                r.group,
                ns(r.a.median_ns),
                ns(r.b.median_ns),
                ratio(r.median_ratio())
            )
        };
        if let Some(r) = by(Row::median_ratio).filter(|r| r.median_ratio() > 1.1) {
            out.push(biggest("slow-down", r));
        }
        if let Some(r) = by(|r| 1.0 / r.median_ratio()).filter(|r| r.median_ratio() < 0.9) {
            out.push(biggest("speed-up", r));
        }
        out
    }

    /// The comparison as terminal text.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "a: {} ({}, {} on {}, {})\nb: {} ({}, {} on {}, {})",
            self.a_name,
            self.a.data.name(),
            self.a.started_at,
            self.a.fingerprint.hostname,
            self.a.fingerprint.kernel_release,
            self.b_name,
            self.b.data.name(),
            self.b.started_at,
            self.b.fingerprint.hostname,
            self.b.fingerprint.kernel_release
        );
        let mut t = new_table(COLUMNS);
        for r in &self.rows {
            t.add_row(vec![
                r.group.clone(),
                r.key.clone(),
                r.a.n.to_string(),
                r.b.n.to_string(),
                ns(r.a.median_ns),
                ns(r.b.median_ns),
                ratio(r.median_ratio()),
                r.a.p99_ns.map_or("–".into(), ns),
                r.b.p99_ns.map_or("–".into(), ns),
                if r.p99_ratio().is_finite() {
                    ratio(r.p99_ratio())
                } else {
                    "–".into()
                },
            ]);
        }
        let _ = writeln!(out, "{t}");
        for s in self.summary() {
            let _ = writeln!(out, "{s}");
        }
        out
    }

    /// The comparison as an HTML page.
    pub fn page(&self) -> Page {
        let groups: Vec<&str> = {
            let mut g: Vec<&str> = Vec::new();
            for r in &self.rows {
                if !g.contains(&r.group.as_str()) {
                    g.push(&r.group);
                }
            }
            g
        };
        let spec = XyChart {
            title: None,
            x: Axis::log_ns(format!("a: median ({}), log scale", self.a_name)),
            y: Axis::log_ns(format!("b: median ({}), log scale", self.b_name)),
            series: groups
                .iter()
                .enumerate()
                .map(|(i, g)| Series {
                    name: g.to_string(),
                    color: color(i),
                    points: self
                        .rows
                        .iter()
                        .filter(|r| r.group == *g)
                        .map(|r| (r.a.median_ns, r.b.median_ns))
                        .collect(),
                    style: Style::Markers,
                })
                .collect(),
            ideal: true,
            legend: Legend::UpperLeft,
        };
        let above = self.rows.iter().filter(|r| r.median_ratio() > 1.1).count();
        let below = self.rows.iter().filter(|r| r.median_ratio() < 0.9).count();
        let caption = format!(
            "Each point is one measurement both runs hold: above the dashed line b was slower, below it faster. {above} of {} points are more than 10 % above, {below} more than 10 % below.",
            self.rows.len()
        );
        let mut t = Table::new(COLUMNS);
        let tone = |x: f64| {
            if !x.is_finite() {
                Cell::Empty
            } else if x > 1.1 {
                Cell::Warn(ratio(x))
            } else if x < 0.9 {
                Cell::Good(ratio(x))
            } else {
                Cell::Num(ratio(x))
            }
        };
        for r in &self.rows {
            t.row(vec![
                Cell::Text(r.group.clone()),
                Cell::Text(r.key.clone()),
                Cell::Num(r.a.n.to_string()),
                Cell::Num(r.b.n.to_string()),
                Cell::Num(ns(r.a.median_ns)),
                Cell::Num(ns(r.b.median_ns)),
                tone(r.median_ratio()),
                r.a.p99_ns.map_or(Cell::Empty, |v| Cell::Num(ns(v))),
                r.b.p99_ns.map_or(Cell::Empty, |v| Cell::Num(ns(v))),
                tone(r.p99_ratio()),
            ]);
        }
        let mut machines = Table::new(["", "a", "b"]);
        for ((k, va), (_, vb)) in super::facts(self.a).into_iter().zip(super::facts(self.b)) {
            let differs = va != vb;
            machines.row(vec![
                Cell::Text(k),
                if differs {
                    Cell::Warn(va.clone())
                } else {
                    Cell::Text(va.clone())
                },
                if differs {
                    Cell::Warn(vb)
                } else {
                    Cell::Text(vb)
                },
            ]);
        }
        for (k, va, vb) in [
            (
                "result",
                self.a.data.name().to_string(),
                self.b.data.name().to_string(),
            ),
            (
                "started",
                self.a.started_at.clone(),
                self.b.started_at.clone(),
            ),
            ("file", self.a_name.clone(), self.b_name.clone()),
        ] {
            machines.row(vec![Cell::Text(k.into()), Cell::Text(va), Cell::Text(vb)]);
        }
        Page {
            title: format!(
                "sleeplab compare: {} vs {}",
                self.a.fingerprint.hostname, self.b.fingerprint.hostname
            ),
            subtitle: format!(
                "a = {}, b = {}; ratios are b / a.",
                self.a_name, self.b_name
            ),
            badges: vec![Badge {
                text: format!("{} matching measurements", self.rows.len()),
                tone: Tone::Neutral,
            }],
            facts: vec![],
            findings: self.summary(),
            sections: vec![
                Section {
                    id: "scatter".into(),
                    title: "b against a".into(),
                    blocks: vec![Block::Figure(Figure {
                        chart: render(
                            "compare-scatter",
                            "median of b against median of a",
                            (760, 560),
                            |a| spec.draw(a),
                        ),
                        caption,
                        legend: vec![],
                    })],
                },
                Section {
                    id: "machines".into(),
                    title: "The two runs".into(),
                    blocks: vec![Block::Table(machines)],
                },
                Section {
                    id: "measurements".into(),
                    title: "Every matching measurement".into(),
                    blocks: vec![Block::Table(t)],
                },
            ],
            footer: vec![format!(
                "Compared by sleeplab {}: {} (a) and {} (b). Ratios are b/a; more than ×1.1 is marked slower, less than ×0.9 faster ({} cells).",
                env!("CARGO_PKG_VERSION"),
                self.a_name,
                self.b_name,
                num(self.rows.len() as f64)
            )],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExperimentData;
    use crate::report::testdata::{cell, result, survey, sweep};

    #[test]
    fn matches_cells_and_computes_ratios() {
        let a = result(ExperimentData::Sweep(sweep(vec![
            cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
            cell("poll", 1_000, 0, 50_000, 1_000_000.0),
        ])));
        let b = result(ExperimentData::Sweep(sweep(vec![
            cell("nanosleep", 1_000, 0, 1, 12_000.0),
            cell("timerfd", 1_000, 0, 1, 9_000.0),
        ])));
        let c = compare(&a, &b, "a.json", "b.json").unwrap();
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].key, "nanosleep 1 µs load 0");
        assert!((c.rows[0].median_ratio() - 0.2).abs() < 1e-12);
        assert!((c.rows[0].p99_ratio() - 0.2).abs() < 1e-12);
        let s = c.summary();
        assert!(
            s[0].starts_with("Across 1 matching measurements, b's medians are ×0.2 a's"),
            "{s:?}"
        );
        assert!(c.terminal().contains("×0.2"));
        assert!(c.page().render().contains("data-chart=\"compare-scatter\""));
    }

    #[test]
    fn slack_joins_the_key_only_when_a_result_holds_several() {
        let two = result(ExperimentData::Sweep(sweep(vec![
            cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
            cell("nanosleep", 1_000, 0, 1, 12_000.0),
        ])));
        let keys: Vec<String> = points(&two).into_iter().map(|p| p.key).collect();
        assert_eq!(
            keys,
            vec![
                "nanosleep 1 µs load 0 slack 50 µs",
                "nanosleep 1 µs load 0 slack 1 ns"
            ]
        );
    }

    #[test]
    fn surveys_match_stage_by_stage_and_strangers_do_not_match() {
        let s1 = survey(vec![(
            "sweep",
            result(ExperimentData::Sweep(sweep(vec![cell(
                "nanosleep",
                1_000,
                0,
                50_000,
                60_000.0,
            )]))),
        )]);
        let s2 = s1.clone();
        assert_eq!(compare(&s1, &s2, "x", "y").unwrap().rows.len(), 1);
        // A standalone sweep matches the survey's `sweep` stage.
        let lone = result(ExperimentData::Sweep(sweep(vec![cell(
            "nanosleep",
            1_000,
            0,
            50_000,
            50_000.0,
        )])));
        assert_eq!(compare(&s1, &lone, "x", "y").unwrap().rows.len(), 1);
        let other = result(ExperimentData::Sweep(sweep(vec![cell(
            "poll", 5, 3, 1, 1.0,
        )])));
        let e = compare(&s1, &other, "x.json", "y.json").unwrap_err();
        assert_eq!(
            e.0,
            "x.json (survey) and y.json (sweep) share no measurements to compare (no common experiment and cell)"
        );
        let empty = result(ExperimentData::Sweep(sweep(vec![])));
        assert_eq!(
            compare(&empty, &s1, "e.json", "x").unwrap_err().0,
            "e.json (sweep) holds no measurements to compare"
        );
    }
}
