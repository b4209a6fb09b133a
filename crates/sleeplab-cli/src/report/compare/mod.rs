//! `sleeplab compare`: results side by side. One matched table of results × points
//! ([`Matched`]: every point an experiment's
//! [`ResultData::points`](crate::experiments::ResultData::points) gives, held by at least
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

pub mod fleet;
pub mod pair;
pub mod render;
pub mod runs;

pub use fleet::{Fleet, FleetCell, Machine, OUTLIER_FACTOR, Outlier};
pub use pair::{Pair, Row};
pub use render::{Rendered, Run, View};
pub use runs::{Sides, SidesRow};

use super::view::Results;
use crate::claim::Est;
use crate::experiments::KeyPart;
use crate::model::ResultFile;
use crate::stats::{Ci, Stat, UnitIntervals};
use std::collections::{HashMap, HashSet};

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
    /// The intervals over its run's units (rounds, blocks), where the result holds
    /// them.
    pub units: Option<UnitIntervals>,
}

impl Measurement {
    /// `value` of `stat` with its interval over its run's units, set against another
    /// run ([`Est::within_run`]); its pooled interval (deciding nothing) where the result
    /// holds no units.
    fn est(&self, stat: Stat, value: f64, pooled: Option<Ci>) -> Est {
        Est::over(
            value,
            self.units.as_ref().map(|u| (u.ci(stat), u.unit, u.units)),
            pooled,
        )
        .within_run()
    }

    /// The median with its interval.
    pub fn median(&self) -> Est {
        self.est(Stat::Median, self.median_ns, self.median_ci_ns)
    }

    /// The p99 with its interval (`None` without a p99).
    pub fn p99(&self) -> Option<Est> {
        self.p99_ns.map(|v| self.est(Stat::P99, v, self.p99_ci_ns))
    }
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
                    key: KeyPart::join(&p.key),
                    n: p.n,
                    median_ns: p.median_ns,
                    median_ci_ns: p.median_ci_ns,
                    p99_ns: p.p99_ns,
                    p99_ci_ns: p.p99_ci_ns,
                    units: p.units,
                }),
        );
    }
    out
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
