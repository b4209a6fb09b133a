//! Two results side by side: two machines, two timer slacks, before and after a kernel
//! change. Every measurement both hold (the same experiment, the same cell) is matched
//! and shown with the ratios b/a of its median and p99.
//!
//! A ratio is a verdict (faster, slower) only where the two 95 % intervals separate
//! (`stats::quantile_ci`); a ratio beyond ×0.9–×1.1 whose intervals overlap is marked
//! `≈`, indistinguishable in this run, and is not counted as faster or slower.
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
use crate::report::claim::{Claim, Est, Order, Sentence, order, with_interval};
use crate::stats::{Ci, Stat};
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
    /// 95 % interval of the median, ns.
    pub median_ci_ns: Option<Ci>,
    /// 99th percentile, ns (`None` where the experiment has none, e.g. `short`'s
    /// per-repetition means, or where n cannot resolve it: fewer than 100).
    pub p99_ns: Option<f64>,
    /// 95 % interval of the 99th percentile, ns.
    pub p99_ci_ns: Option<Ci>,
}

impl Measurement {
    /// The median with its interval.
    pub fn median(&self) -> Est {
        Est::new(self.median_ns, self.median_ci_ns)
    }

    /// The p99 with its interval (`None` without a p99).
    pub fn p99(&self) -> Option<Est> {
        self.p99_ns.map(|v| Est::new(v, self.p99_ci_ns))
    }
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
                    median_ci_ns: p.median_ci_ns,
                    p99_ns: p.p99_ns,
                    p99_ci_ns: p.p99_ci_ns,
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

    /// How b's median stands against a's by their intervals (Below: b faster).
    pub fn median_order(&self) -> Order {
        order(&self.b.median(), &self.a.median())
    }

    /// How b's p99 stands against a's (Indistinguishable without both).
    pub fn p99_order(&self) -> Order {
        match (self.b.p99(), self.a.p99()) {
            (Some(b), Some(a)) => order(&b, &a),
            _ => Order::Indistinguishable,
        }
    }

    /// b's median more than 10 % below a's, beyond both intervals.
    pub fn faster(&self) -> bool {
        self.median_ratio() < FASTER && self.median_order() == Order::Below
    }

    /// b's median more than 10 % above a's, beyond both intervals.
    pub fn slower(&self) -> bool {
        self.median_ratio() > SLOWER && self.median_order() == Order::Above
    }
}

/// A ratio b/a below this is "faster" (where the intervals separate)…
const FASTER: f64 = 0.9;
/// … above this "slower".
const SLOWER: f64 = 1.1;

/// A ratio as the comparison writes it: `×0.2`, with ` ≈` where it lies beyond
/// ×0.9–×1.1 but the intervals overlap (indistinguishable in this run); "–" for none.
fn ratio_text(r: f64, o: Order) -> String {
    if !r.is_finite() {
        "–".into()
    } else if !(FASTER..=SLOWER).contains(&r) && o == Order::Indistinguishable {
        format!("{} ≈", ratio(r))
    } else {
        ratio(r)
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
        self.summary_sentences()
            .into_iter()
            .map(|s| s.text)
            .collect()
    }

    /// The headline sentences with their claims: faster and slower are counted only
    /// where the medians' 95 % intervals separate (the rest beyond ×0.9–×1.1 are
    /// counted as indistinguishable), and the biggest slow-down and speed-up are chosen
    /// among those, each with its verdict.
    pub fn summary_sentences(&self) -> Vec<Sentence> {
        let mut out = Vec::new();
        let n = self.rows.len();
        if let Some(g) = geomean(self.rows.iter().map(Row::median_ratio)) {
            let faster = self.rows.iter().filter(|r| r.faster()).count();
            let slower = self.rows.iter().filter(|r| r.slower()).count();
            let unclear = self
                .rows
                .iter()
                .filter(|r| {
                    let x = r.median_ratio();
                    !(FASTER..=SLOWER).contains(&x) && r.median_order() == Order::Indistinguishable
                })
                .count();
            let mut text = format!(
                "Across {n} matching measurements, b's medians are {} a's (geometric mean of b/a); b is more than 10 % faster in {faster} and more than 10 % slower in {slower}, counting only medians whose 95 % intervals separate",
                ratio(g)
            );
            if unclear > 0 {
                text.push_str(&format!(
                    "; {unclear} more differ by more than 10 % but are {} (marked ≈)",
                    crate::report::claim::INDISTINGUISHABLE
                ));
            }
            text.push('.');
            out.push(Sentence::new(text));
        }
        if let Some(g) = geomean(self.rows.iter().map(Row::p99_ratio)) {
            out.push(Sentence::new(format!(
                "The tails (p99) moved by {} on the same geometric mean.",
                ratio(g)
            )));
        }
        let by = |f: fn(&Row) -> f64, keep: fn(&Row) -> bool| {
            self.rows
                .iter()
                .filter(|r| f(r).is_finite() && keep(r))
                .max_by(|x, y| f(x).total_cmp(&f(y)))
        };
        let biggest = |what: &str, r: &Row| {
            let mut s = Sentence::new(format!(
                "Biggest {what}: {} ({}): median {} → {} ({}).",
                r.key,
                r.group,
                with_interval(&r.a.median(), ns),
                with_interval(&r.b.median(), ns),
                ratio(r.median_ratio())
            ));
            s.claim(Claim::Verdict {
                stat: Stat::Median,
                a: r.b.median(),
                b: r.a.median(),
                stated: r.median_order(),
            });
            s
        };
        if let Some(r) = by(Row::median_ratio, Row::slower) {
            out.push(biggest("slow-down", r));
        }
        if let Some(r) = by(|r| 1.0 / r.median_ratio(), Row::faster) {
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
                with_interval(&r.a.median(), ns),
                with_interval(&r.b.median(), ns),
                ratio_text(r.median_ratio(), r.median_order()),
                r.a.p99().map_or("–".into(), |p| with_interval(&p, ns)),
                r.b.p99().map_or("–".into(), |p| with_interval(&p, ns)),
                ratio_text(r.p99_ratio(), r.p99_order()),
            ]);
        }
        let _ = writeln!(
            out,
            "{t}\nEach value with its 95 % interval; ≈: the ratio lies beyond ×0.9–×1.1 but the intervals overlap ({})",
            crate::report::claim::INDISTINGUISHABLE
        );
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
        let above = self.rows.iter().filter(|r| r.slower()).count();
        let below = self.rows.iter().filter(|r| r.faster()).count();
        let caption = format!(
            "Each point is one measurement both runs hold: above the dashed line b was slower, below it faster. {above} of {} points are more than 10 % above and {below} more than 10 % below with the 95 % intervals of the two medians apart.",
            self.rows.len()
        );
        let mut t = Table::new(COLUMNS);
        let tone = |x: f64, o: Order| {
            if !x.is_finite() {
                Cell::Empty
            } else if x > SLOWER && o == Order::Above {
                Cell::Warn(ratio(x))
            } else if x < FASTER && o == Order::Below {
                Cell::Good(ratio(x))
            } else {
                Cell::Num(ratio_text(x, o))
            }
        };
        for r in &self.rows {
            t.row(vec![
                Cell::Text(r.group.clone()),
                Cell::Text(r.key.clone()),
                Cell::Num(r.a.n.to_string()),
                Cell::Num(r.b.n.to_string()),
                Cell::Num(with_interval(&r.a.median(), ns)),
                Cell::Num(with_interval(&r.b.median(), ns)),
                tone(r.median_ratio(), r.median_order()),
                r.a.p99()
                    .map_or(Cell::Empty, |p| Cell::Num(with_interval(&p, ns))),
                r.b.p99()
                    .map_or(Cell::Empty, |p| Cell::Num(with_interval(&p, ns))),
                tone(r.p99_ratio(), r.p99_order()),
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
                "Compared by sleeplab {}: {} (a) and {} (b). Ratios are b/a; more than ×1.1 is marked slower, less than ×0.9 faster, where the 95 % intervals of the two values separate (≈: they overlap, indistinguishable in this run) ({} cells).",
                env!("CARGO_PKG_VERSION"),
                self.a_name,
                self.b_name,
                num(self.rows.len() as f64)
            )],
        }
    }
}

#[cfg(test)]
mod tests;
