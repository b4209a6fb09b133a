//! The pair view of the matched table: two results, a and b, side by side. Every
//! measurement both hold is shown with the ratios b/a of its median and p99.
//!
//! A ratio is a verdict (faster, slower) only where the two 95 % intervals over each
//! run's units separate (`stats::units`: its rounds or blocks); two runs are two
//! moments, so every verdict says it leaves run-to-run variation out
//! ([`WITHIN_RUN`]; with three or more results a side, `compare --against` takes the
//! runs as the units). A ratio beyond ×0.9–×1.1 whose intervals overlap is marked `≈`,
//! indistinguishable in this run, and is not counted as faster or slower; a measurement
//! whose result holds no intervals over units is not judged.

use super::{Matched, Measurement, Rendered, Tally, View, faster, slower, unclear};
use crate::charts::xy::{Axis, Legend, Series, Style, XyChart};
use crate::charts::{color, render};
use crate::html::{Badge, Block, Figure, Section, Tone};
use crate::units::{ns, num, ratio};
use sleeplab_results::model::ResultFile;
use sleeplab_stats::{
    Cell, Claim, INDISTINGUISHABLE, NO_UNITS, Order, Sentence, Stat, Table, WITHIN_RUN, order,
    with_interval,
};

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
        self.b.point.median_ns / self.a.point.median_ns.max(1.0)
    }

    /// b / a of the p99s (NaN where there are none).
    pub fn p99_ratio(&self) -> f64 {
        match (self.a.point.p99_ns, self.b.point.p99_ns) {
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
        super::faster(self.median_ratio(), self.median_order())
    }

    /// b's median more than 10 % above a's, beyond both intervals.
    pub fn slower(&self) -> bool {
        super::slower(self.median_ratio(), self.median_order())
    }

    /// Whether both medians have intervals over units (else the row is not judged).
    pub fn judged(&self) -> bool {
        self.a.median().basis.decides() && self.b.median().basis.decides()
    }
}

/// A ratio as the comparison writes it: `×0.2`, with ` ≈` where it lies beyond
/// ×0.9–×1.1 but the intervals overlap (indistinguishable in this run); "–" for none.
fn ratio_text(r: f64, o: Order) -> String {
    if !r.is_finite() {
        "–".into()
    } else if unclear(r, o) {
        format!("{} ≈", ratio(r))
    } else {
        ratio(r)
    }
}

/// Two results matched cell by cell: the pair view of a [`Matched`] of two.
#[derive(Debug, Clone)]
pub struct Pair<'a> {
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
    /// The two runs, for the page.
    runs: Vec<super::Run>,
}

impl<'a> Pair<'a> {
    /// The pair view of `m`; `None` unless it matched exactly two results.
    pub fn of(m: &Matched<'a>) -> Option<Self> {
        let [(a_name, a), (b_name, b)] = m.results.as_slice() else {
            return None;
        };
        let rows = m
            .rows
            .iter()
            .filter_map(|r| match r.by_result.as_slice() {
                [Some(a), Some(b)] => Some(Row {
                    group: r.group.clone(),
                    key: r.key.clone(),
                    a: a.clone(),
                    b: b.clone(),
                }),
                _ => None,
            })
            .collect();
        Some(Self {
            a,
            b,
            a_name: a_name.clone(),
            b_name: b_name.clone(),
            rows,
            runs: m.runs(),
        })
    }
}

/// The geometric mean of positive values.
fn geomean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold((0.0, 0u32), |(s, n), x| (s + x.ln(), n + 1));
    (n > 0).then(|| (sum / f64::from(n)).exp())
}

impl Pair<'_> {
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
            let tally = Tally::of(
                self.rows
                    .iter()
                    .map(|r| (r.median_ratio(), r.median_order(), r.judged())),
            );
            let (faster, slower) = (tally.faster, tally.slower);
            let unjudged = self.rows.iter().filter(|r| !r.judged()).count();
            let mut text = format!(
                "Across {n} matching measurements, b's medians are {} a's (geometric mean of b/a); b is more than 10 % faster in {faster} and more than 10 % slower in {slower}, counting only medians whose 95 % intervals over each run's rounds or blocks separate ({WITHIN_RUN})",
                ratio(g)
            );
            text.push_str(&tally.unclear_clause());
            if unjudged > 0 {
                text.push_str(&format!(
                    "; {unjudged} are not judged: their results hold {NO_UNITS} (written before them, or measured in one stretch)"
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
                "Biggest {what}: {} ({}): median {} → {} ({}; {WITHIN_RUN}).",
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

    /// Every matched measurement with both values, their intervals and the ratios; a
    /// ratio that is a verdict is marked (slower: warn, faster: good), one beyond
    /// ×0.9–×1.1 whose intervals overlap is written with `≈`.
    pub fn table(&self) -> Table {
        // A row is a (stage, measurement): both lead each part of a split table.
        let mut t = Table::new(COLUMNS).with_keys(2);
        let tone = |x: f64, o: Order| {
            if !x.is_finite() {
                Cell::Empty
            } else if slower(x, o) {
                Cell::Warn(ratio(x))
            } else if faster(x, o) {
                Cell::Good(ratio(x))
            } else {
                Cell::Num(ratio_text(x, o))
            }
        };
        let p99 = |m: &Measurement| {
            m.p99()
                .map_or(Cell::Empty, |p| Cell::Num(with_interval(&p, ns)))
        };
        for r in &self.rows {
            t.row(vec![
                Cell::Text(r.group.clone()),
                Cell::Text(r.key.clone()),
                Cell::Num(r.a.point.n.to_string()),
                Cell::Num(r.b.point.n.to_string()),
                Cell::Num(with_interval(&r.a.median(), ns)),
                Cell::Num(with_interval(&r.b.median(), ns)),
                tone(r.median_ratio(), r.median_order()),
                p99(&r.a),
                p99(&r.b),
                tone(r.p99_ratio(), r.p99_order()),
            ]);
        }
        t
    }

    /// The scatter of b's medians against a's, one series per stage.
    fn scatter(&self) -> Section {
        let mut groups: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !groups.contains(&r.group.as_str()) {
                groups.push(&r.group);
            }
        }
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
                        .map(|r| (r.a.point.median_ns, r.b.point.median_ns))
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
            "Each point is one measurement both runs hold: above the dashed line b was slower, below it faster. {above} of {} points are more than 10 % above and {below} more than 10 % below with the 95 % intervals of the two medians over each run's units apart ({WITHIN_RUN}).",
            self.rows.len()
        );
        Section::new(
            "scatter",
            "b against a",
            vec![Block::Figure(Figure {
                chart: render(
                    "compare-scatter",
                    "median of b against median of a",
                    (760, 560),
                    |a| spec.draw(a),
                ),
                caption,
                legend: vec![],
            })],
        )
    }
}

impl View for Pair<'_> {
    /// The pair as both renderers draw it.
    fn rendered(&self) -> Rendered {
        let run = |name: &str, r: &ResultFile| {
            format!(
                "{name} ({}, {} on {}, {})",
                r.data.name(),
                r.started_at,
                r.fingerprint.hostname,
                r.fingerprint.kernel_release
            )
        };
        Rendered {
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
            head: vec![
                format!("a: {}", run(&self.a_name, self.a)),
                format!("b: {}", run(&self.b_name, self.b)),
            ],
            table: self.table(),
            table_section: ("measurements".into(), "Every matching measurement".into()),
            note: Some(format!(
                "Each value with its 95 % interval over its run's rounds or blocks ({WITHIN_RUN}); ≈: the ratio lies beyond ×0.9–×1.1 but the intervals overlap ({INDISTINGUISHABLE}); a value without one is not judged"
            )),
            sentences: self.summary(),
            figure: Some(self.scatter()),
            runs: self.runs.clone(),
            run_labels: vec!["a".into(), "b".into()],
            footer: format!(
                "Compared by sleeplab {}: {} (a) and {} (b). Ratios are b/a; more than ×1.1 is marked slower, less than ×0.9 faster, where the 95 % intervals of the two values over each run's units separate (≈: they overlap, indistinguishable in this run; {WITHIN_RUN}) ({} cells).",
                env!("CARGO_PKG_VERSION"),
                self.a_name,
                self.b_name,
                num(self.rows.len() as f64)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
