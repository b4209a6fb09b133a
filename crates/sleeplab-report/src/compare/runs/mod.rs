//! The sides view of the matched table: `compare A1 A2 A3 --against B1 B2 B3`, three
//! or more runs a side, with the runs as the units. Two runs are two moments of a noisy
//! machine; within-run intervals say nothing about the next run. Here each run gives one
//! value per measurement (its median), each side its geometric mean over its runs with
//! Student's t interval, and the ratio b/a its interval by Welch's t on the log scale
//! (`stats::units::ratio_of_runs`). A ratio is a verdict (faster, slower) only where it
//! lies beyond ×0.9–×1.1 and its interval excludes ×1; beyond ×0.9–×1.1 with an interval
//! holding ×1 it is marked `≈`, indistinguishable in this run.

use super::{FASTER, Matched, Rendered, Run, SLOWER, Tally, View};
use crate::html::{Badge, Tone};
use crate::units::{ns, num, ratio};
use sleeplab_results::{Hint, Wording};
use sleeplab_stats::{
    Cell, Claim, Est, INDISTINGUISHABLE, MIN_RUNS, Order, Sentence, Stat, Table, Unit,
    geometric_ci, order, ratio_of_runs, with_interval,
};

/// One measurement both sides hold in at least [`MIN_RUNS`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SidesRow {
    /// Stage or experiment.
    pub group: String,
    /// What was measured.
    pub key: String,
    /// Each of a's runs' median, ns.
    pub a: Vec<f64>,
    /// Each of b's runs' median, ns.
    pub b: Vec<f64>,
}

impl SidesRow {
    /// A side's geometric mean over its runs, with its interval.
    fn side(v: &[f64]) -> Est {
        let (g, ci) = geometric_ci(v).expect("a side has MIN_RUNS runs");
        Est::units(g, Some(ci), Unit::Run, v.len() as u64)
    }

    /// a's geometric mean of medians over its runs.
    pub fn a_median(&self) -> Est {
        Self::side(&self.a)
    }

    /// b's.
    pub fn b_median(&self) -> Est {
        Self::side(&self.b)
    }

    /// b / a with its interval over the runs.
    pub fn ratio(&self) -> Est {
        let (r, ci) = ratio_of_runs(&self.a, &self.b).expect("each side has MIN_RUNS runs");
        let runs = self.a.len().min(self.b.len()) as u64;
        Est::units(r, Some(ci), Unit::Run, runs)
    }

    /// How the ratio stands against ×1 (Below: b faster).
    pub fn order(&self) -> Order {
        order(&self.ratio(), &Est::exact(1.0))
    }

    /// b more than 10 % faster, the ratio's interval below ×1.
    pub fn faster(&self) -> bool {
        super::faster(self.ratio().value, self.order())
    }

    /// b more than 10 % slower, the ratio's interval above ×1.
    pub fn slower(&self) -> bool {
        super::slower(self.ratio().value, self.order())
    }
}

/// Two sides of three or more runs each, matched measurement by measurement.
#[derive(Debug, Clone)]
pub struct Sides {
    /// How to call side a's runs (their paths).
    pub a_names: Vec<String>,
    /// Side b's.
    pub b_names: Vec<String>,
    /// The measurements both sides hold in at least [`MIN_RUNS`] runs.
    pub rows: Vec<SidesRow>,
    /// Every run, a's first, for the page.
    runs: Vec<Run>,
    /// How the subtitle words the flag that names side b.
    hints: Wording,
}

impl Sides {
    /// The sides view of `m`, whose first `a` results are side a and the rest side b
    /// (`hints` words the flag that named side b).
    pub fn of(m: &Matched, a: usize, hints: Wording) -> Self {
        let names: Vec<String> = m.results.iter().map(|(n, _)| n.clone()).collect();
        let rows = m
            .rows
            .iter()
            .filter_map(|r| {
                let (ra, rb) = r.by_result.split_at(a.min(r.by_result.len()));
                let medians = |v: &[Option<super::Measurement>]| -> Vec<f64> {
                    v.iter().flatten().map(|x| x.point.median_ns).collect()
                };
                let (va, vb) = (medians(ra), medians(rb));
                (va.len() >= MIN_RUNS && vb.len() >= MIN_RUNS).then(|| SidesRow {
                    group: r.group.clone(),
                    key: r.key.clone(),
                    a: va,
                    b: vb,
                })
            })
            .collect();
        Self {
            a_names: names[..a].to_vec(),
            b_names: names[a..].to_vec(),
            rows,
            runs: m.runs(),
            hints,
        }
    }

    /// The headline sentences with their claims: faster and slower counted only where
    /// the ratio's interval over the runs excludes ×1, and the biggest slow-down and
    /// speed-up among those, each with its verdict.
    pub fn sentences(&self) -> Vec<Sentence> {
        let n = self.rows.len();
        let (ka, kb) = (self.a_names.len(), self.b_names.len());
        if n == 0 {
            return vec![Sentence::new(format!(
                "No measurement is held by at least {MIN_RUNS} runs on each side ({ka} and {kb} runs given): nothing is compared."
            ))];
        }
        let tally = Tally::of(self.rows.iter().map(|r| (r.ratio().value, r.order(), true)));
        let (faster, slower) = (tally.faster, tally.slower);
        let mut text = format!(
            "Across {n} measurements held by at least {MIN_RUNS} runs on each side ({ka} and {kb} runs given), the runs are the units: b is more than 10 % faster in {faster} and more than 10 % slower in {slower}, counting only ratios of the sides' geometric means whose 95 % interval over the runs (Welch's t on the log scale) excludes ×1"
        );
        text.push_str(&tally.unclear_clause());
        text.push('.');
        let mut out = vec![Sentence::new(text)];
        let biggest = |what: &str, r: &SidesRow| {
            let q = r.ratio();
            let mut s = Sentence::new(format!(
                "Biggest {what}: {} ({}): median {} → {}, {} over {} and {} runs.",
                r.key,
                r.group,
                with_interval(&r.a_median(), ns),
                with_interval(&r.b_median(), ns),
                with_interval(&q, ratio),
                r.a.len(),
                r.b.len()
            ));
            s.claim(Claim::Verdict {
                stat: Stat::Median,
                a: q,
                b: Est::exact(1.0),
                stated: r.order(),
            });
            s
        };
        let worst = self
            .rows
            .iter()
            .filter(|r| r.slower())
            .max_by(|x, y| x.ratio().value.total_cmp(&y.ratio().value));
        if let Some(r) = worst {
            out.push(biggest("slow-down", r));
        }
        let best = self
            .rows
            .iter()
            .filter(|r| r.faster())
            .min_by(|x, y| x.ratio().value.total_cmp(&y.ratio().value));
        if let Some(r) = best {
            out.push(biggest("speed-up", r));
        }
        out
    }

    /// Every measurement: each side's runs, geometric mean and interval, the ratio and
    /// its interval (a verdict marked: slower warn, faster good; `≈` where it lies beyond
    /// ×0.9–×1.1 but its interval holds ×1).
    pub fn table(&self) -> Table {
        let mut t = Table::new([
            "stage",
            "measurement",
            "a runs",
            "b runs",
            "a median (geometric mean)",
            "b median (geometric mean)",
            "b/a",
        ])
        // A row is a (stage, measurement): both lead each part of a split table.
        .with_keys(2);
        for r in &self.rows {
            let q = r.ratio();
            let text = with_interval(&q, ratio);
            let cell = if r.slower() {
                Cell::Warn(text)
            } else if r.faster() {
                Cell::Good(text)
            } else if !(FASTER..=SLOWER).contains(&q.value) {
                Cell::Num(format!("{text} ≈"))
            } else {
                Cell::Num(text)
            };
            t.row(vec![
                Cell::Text(r.group.clone()),
                Cell::Text(r.key.clone()),
                Cell::Num(r.a.len().to_string()),
                Cell::Num(r.b.len().to_string()),
                Cell::Num(with_interval(&r.a_median(), ns)),
                Cell::Num(with_interval(&r.b_median(), ns)),
                cell,
            ]);
        }
        t
    }
}

impl View for Sides {
    /// The sides as both renderers draw them.
    fn rendered(&self) -> Rendered {
        let labels: Vec<String> = (1..=self.a_names.len())
            .map(|i| format!("a{i}"))
            .chain((1..=self.b_names.len()).map(|i| format!("b{i}")))
            .collect();
        let head: Vec<String> = self
            .a_names
            .iter()
            .chain(&self.b_names)
            .zip(&labels)
            .map(|(n, l)| format!("{l}: {n}"))
            .collect();
        Rendered {
            title: format!(
                "sleeplab compare: {} runs against {}",
                self.a_names.len(),
                self.b_names.len()
            ),
            subtitle: format!(
                "a = the first side, b = the side after {}; ratios are b / a, the runs the units.",
                self.hints.word(Hint::Against)
            ),
            badges: vec![Badge {
                text: format!("{} matching measurements", self.rows.len()),
                tone: Tone::Neutral,
            }],
            head,
            table: self.table(),
            table_section: ("measurements".into(), "Every matching measurement".into()),
            note: Some(format!(
                "Each side's value: the geometric mean of its runs' medians with its 95 % interval over the runs (Student's t on the log scale); b/a with Welch's interval; ≈: beyond ×0.9–×1.1 but the interval holds ×1 ({INDISTINGUISHABLE})"
            )),
            sentences: self.sentences().into_iter().map(|s| s.text).collect(),
            figure: None,
            runs: self.runs.clone(),
            run_labels: labels,
            footer: format!(
                "Compared by sleeplab {}: {} runs (a) against {} (b), the runs as the units ({} cells).",
                env!("CARGO_PKG_VERSION"),
                self.a_names.len(),
                self.b_names.len(),
                num(self.rows.len() as f64)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
