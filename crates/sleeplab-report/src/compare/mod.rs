//! `sleeplab compare`: results side by side. One matched table of results × points
//! ([`Matched`]: every point an experiment's
//! [`ResultData::points`](sleeplab_results::ResultData::points) gives, held by at least
//! two of the results, each with its median and p99 and their 95 % intervals), and two
//! views of it:
//!
//! * [`pair`]: two results, a and b (two machines, two timer slacks, before and after a
//!   kernel change): the ratios b/a of every matched median and p99, faster or slower
//!   only where the intervals over each run's units separate, said to leave run-to-run
//!   variation out;
//! * [`fleet`]: N results, one row per machine, the outliers named by one stated rule
//!   (also the JSON of `compare --json`, for two results too);
//! * [`runs`]: two sides of three or more runs each (`compare A… --against B…`), the
//!   runs as the units: each side's geometric mean over its runs and the ratio b/a with
//!   their intervals over the runs.
//!
//! Both are drawn by [`render`]: one terminal renderer and one family of page sections
//! (the runs' facts, the view's table, the pair's scatter).
//!
//! A measurement is keyed by the survey stage (or experiment) it comes from and the
//! cell's coordinates: mechanism, request, load; the timer slack joins the key only when
//! a result holds several slacks for the same cell (so `sweep --timer-slack 50us` and
//! `sweep --timer-slack 1ns` compare cell by cell). A standalone experiment matches the
//! survey stage of its name (`sweep` the survey's `sweep`).

pub(crate) mod fleet;
pub(crate) mod pair;
pub(crate) mod render;
pub(crate) mod runs;

pub use fleet::Fleet;
pub use pair::Pair;
pub use render::{Rendered, Run, View};
pub use runs::Sides;

use super::view::Results;
use sleeplab_results::model::ResultFile;
use sleeplab_results::{KeyPart, Point};
use sleeplab_stats::{Ci, Est, INDISTINGUISHABLE, Order, Stat};
use std::collections::{HashMap, HashSet};

/// One comparable measurement of a result, with where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Where it comes from: the survey stage or the experiment (`sweep`, `sweep-slack`).
    pub group: String,
    /// What was measured, e.g. `nanosleep 1 µs load 0` (the point's key, joined).
    pub key: String,
    /// Its statistics: n, the median and the p99 with their intervals (pooled, and over
    /// its run's units where the result holds them).
    pub point: Point,
}

impl Measurement {
    /// `value` of `stat` with its interval over its run's units, set against another
    /// run ([`Est::within_run`]); its pooled interval (deciding nothing) where the result
    /// holds no units.
    fn est(&self, stat: Stat, value: f64, pooled: Option<Ci>) -> Est {
        Est::over(
            value,
            self.point
                .units
                .as_ref()
                .map(|u| (u.ci(stat), u.unit, u.units)),
            pooled,
        )
        .within_run()
    }

    /// The median with its interval.
    pub fn median(&self) -> Est {
        self.est(Stat::Median, self.point.median_ns, self.point.median_ci_ns)
    }

    /// The p99 with its interval (`None` without a p99).
    pub fn p99(&self) -> Option<Est> {
        self.point
            .p99_ns
            .map(|v| self.est(Stat::P99, v, self.point.p99_ci_ns))
    }
}

/// Every comparable measurement of a result: each experiment's own points
/// ([`ResultData::points`](sleeplab_results::ResultData::points)), grouped by the
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
                .map(|point| Measurement {
                    group: group.to_string(),
                    key: KeyPart::join(&point.key),
                    point,
                }),
        );
    }
    out
}

/// A ratio b/a below this is "faster" (where its intervals separate)…
const FASTER: f64 = 0.9;
/// … above this "slower".
const SLOWER: f64 = 1.1;

/// Whether b is more than 10 % faster than a: the ratio b/a below ×0.9 and `o`, how
/// the intervals order b against a, Below.
fn faster(ratio: f64, o: Order) -> bool {
    ratio < FASTER && o == Order::Below
}

/// Whether b is more than 10 % slower: the ratio above ×1.1, `o` Above.
fn slower(ratio: f64, o: Order) -> bool {
    ratio > SLOWER && o == Order::Above
}

/// Whether the ratio lies beyond ×0.9–×1.1 while the intervals tell b and a apart in
/// neither direction (a view marks it `≈`).
fn unclear(ratio: f64, o: Order) -> bool {
    !(FASTER..=SLOWER).contains(&ratio) && o == Order::Indistinguishable
}

/// How many of a view's measurements are faster, slower, and [`unclear`].
#[derive(Default)]
struct Tally {
    /// b more than 10 % faster, beyond the intervals.
    faster: usize,
    /// b more than 10 % slower, beyond the intervals.
    slower: usize,
    /// Beyond ×0.9–×1.1 but indistinguishable, among the judged.
    unclear: usize,
}

impl Tally {
    /// The tally of `rows`: each measurement's ratio b/a, how its intervals order b
    /// against a, and whether it is judged at all (only the judged count as unclear).
    fn of(rows: impl Iterator<Item = (f64, Order, bool)>) -> Self {
        let mut t = Self::default();
        for (ratio, o, judged) in rows {
            t.faster += usize::from(faster(ratio, o));
            t.slower += usize::from(slower(ratio, o));
            t.unclear += usize::from(judged && unclear(ratio, o));
        }
        t
    }

    /// The headline's clause on the unclear: `; 3 more differ by more than 10 % but are
    /// indistinguishable in this run (marked ≈)`, empty where there are none.
    fn unclear_clause(&self) -> String {
        if self.unclear == 0 {
            return String::new();
        }
        format!(
            "; {} more differ by more than 10 % but are {INDISTINGUISHABLE} (marked ≈)",
            self.unclear
        )
    }
}

/// Why results cannot be compared (a user error: exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompareError(pub String);

/// One measurement held by at least two of the results.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchedRow {
    /// The survey stage or experiment.
    pub group: String,
    /// What was measured, e.g. `nanosleep 1 µs load 0`.
    pub key: String,
    /// Each result's measurement of it, in the order the results were given (`None`
    /// where a result does not hold it).
    pub by_result: Vec<Option<Measurement>>,
}

/// Results matched measurement by measurement: the table both views are drawn from.
#[derive(Debug, Clone)]
pub struct Matched<'a> {
    /// The results as given: how to call each (its path) and the result.
    pub results: Vec<(String, &'a ResultFile)>,
    /// The measurements at least two results hold, in order of first appearance (the
    /// first result's order, then what the others add); a key a result holds twice is
    /// matched by its first.
    pub rows: Vec<MatchedRow>,
}

impl<'a> Matched<'a> {
    /// Matches `results` (name, result). A result without measurements, or results
    /// that share none, cannot be compared.
    pub fn of(results: &[(String, &'a ResultFile)]) -> Result<Self, CompareError> {
        let mut all: Vec<Vec<Measurement>> = Vec::with_capacity(results.len());
        for (name, r) in results {
            let p = points(r);
            if p.is_empty() {
                return Err(CompareError(format!(
                    "{name} ({}) holds no measurements to compare",
                    r.data.name()
                )));
            }
            all.push(p);
        }
        // Each result's first measurement of a key.
        let index: Vec<HashMap<(&str, &str), &Measurement>> = all
            .iter()
            .map(|p| {
                let mut first = HashMap::new();
                for m in p {
                    first.entry((m.group.as_str(), m.key.as_str())).or_insert(m);
                }
                first
            })
            .collect();
        let mut seen = HashSet::new();
        let rows: Vec<MatchedRow> = all
            .iter()
            .flatten()
            .filter(|m| seen.insert((m.group.as_str(), m.key.as_str())))
            .filter_map(|m| {
                let at = (m.group.as_str(), m.key.as_str());
                let by_result: Vec<Option<Measurement>> = index
                    .iter()
                    .map(|i| i.get(&at).map(|&x| x.clone()))
                    .collect();
                (by_result.iter().flatten().count() >= 2).then(|| MatchedRow {
                    group: m.group.clone(),
                    key: m.key.clone(),
                    by_result,
                })
            })
            .collect();
        if rows.is_empty() {
            return Err(CompareError(match results {
                [(a, ra), (b, rb)] => format!(
                    "{a} ({}) and {b} ({}) share no measurements to compare (no common experiment and cell)",
                    ra.data.name(),
                    rb.data.name()
                ),
                _ => {
                    let names: Vec<&str> = results.iter().map(|(n, _)| n.as_str()).collect();
                    format!(
                        "{} share no measurements to compare (no experiment and cell held by two of them)",
                        names.join(", ")
                    )
                }
            }));
        }
        Ok(Self {
            results: results.to_vec(),
            rows,
        })
    }

    /// What the page says about each result: its machine and settings, what it holds,
    /// when it started, its file.
    pub fn runs(&self) -> Vec<Run> {
        self.results
            .iter()
            .map(|(name, r)| Run::of(name, r))
            .collect()
    }
}

#[cfg(test)]
mod tests;
