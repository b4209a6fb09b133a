//! An empirical oversleep distribution built from a `sleeplab sweep` result, for the
//! replay model: "how would this strategy do on *that* machine?".
//!
//! For each measured requested duration (an *anchor*) of the chosen mechanism, load and
//! timer slack, the oversleeps `elapsed − requested` of the cell's raw samples are sorted
//! (early returns count as 0). A cell that kept no raw samples is expanded from its
//! histogram instead, spreading each bucket's count evenly within the bucket; the sweep's
//! histogram buckets are √2 wide, so this is coarse for long sleeps and the result says
//! which anchors came from where.
//!
//! A native sleep of length `d` draws one uniform rank `r` and reads the quantile
//! functions of the two anchors around `d` at `r`, then interpolates linearly in `d`
//! between them (a quantile mix: the median of the blend lies between the medians, and
//! so on). Below the shortest anchor the shortest is used, above the longest the
//! longest. All integer arithmetic: the same seed gives the same draws everywhere.

use super::rng::SimRng;
use crate::experiments::sweep::{SweepCell, SweepData};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, ci_sorted_u64, quantile_sorted, tail_quantile};

/// Why a sweep result cannot be replayed. All of them are the user's to fix; each names
/// the value that does not fit (the command line adds its flag).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The file holds no sweep (directly, or as a survey stage).
    #[error("{file}: a {experiment} result holds no sweep")]
    NotASweep {
        /// The file.
        file: String,
        /// The experiment it holds.
        experiment: String,
    },
    /// The mechanism was not measured in the file.
    #[error("{mechanism:?}: not in {file} (it has: {known})")]
    NoMechanism {
        /// The file.
        file: String,
        /// The mechanism asked for.
        mechanism: String,
        /// The mechanisms the file has.
        known: String,
    },
    /// The load level was not measured for that mechanism.
    #[error("{load}: {mechanism} in {file} was measured at load {known}")]
    NoLoad {
        /// The file.
        file: String,
        /// The mechanism.
        mechanism: String,
        /// The load asked for.
        load: usize,
        /// The loads the file has.
        known: String,
    },
    /// The timer slack was not measured for that mechanism and load.
    #[error("{slack_ns} ns: {mechanism} in {file} was measured at timer slack {known} ns")]
    NoSlack {
        /// The file.
        file: String,
        /// The mechanism.
        mechanism: String,
        /// The slack asked for, ns.
        slack_ns: u64,
        /// The slacks the file has, ns.
        known: String,
    },
    /// The cells hold neither raw samples nor a histogram.
    #[error("{file}: the {mechanism} cells hold no samples")]
    Empty {
        /// The file.
        file: String,
        /// The mechanism.
        mechanism: String,
    },
}

/// Where a replayed distribution came from, as recorded in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplaySource {
    /// The sweep result file, as given on the command line.
    pub file: String,
    /// The mechanism whose oversleeps are replayed.
    pub mechanism: String,
    /// The load level of the replayed cells (busy threads).
    pub load: usize,
    /// The timer slack of the replayed cells, ns.
    pub timer_slack_ns: u64,
    /// The measured durations the distribution interpolates between.
    pub anchors: Vec<ReplayAnchor>,
}

/// One measured duration of a replayed distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReplayAnchor {
    /// Requested duration of the sweep cell, ns.
    pub requested_ns: u64,
    /// Oversleep values drawn from (raw samples, or histogram-expanded).
    pub samples: u64,
    /// `samples` (raw samples of the cell) or `histogram` (the cell kept no raw samples;
    /// values spread evenly within each histogram bucket).
    pub from: String,
    /// Median oversleep, ns (linear interpolation, as every quantile here).
    pub p50_oversleep_ns: f64,
    /// 95 % interval of the median oversleep, ns (`stats::quantile_ci`).
    #[serde(default)]
    pub p50_oversleep_ci_ns: Option<Ci>,
    /// 99th-percentile oversleep, ns; `null` below 100 values (the quantile rule).
    pub p99_oversleep_ns: Option<f64>,
    /// 95 % interval of the p99 oversleep, ns.
    #[serde(default)]
    pub p99_oversleep_ci_ns: Option<Ci>,
}

/// Which cells of a sweep to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayChoice {
    /// The file name, for messages and the recorded source.
    pub file: String,
    /// The mechanism.
    pub mechanism: String,
    /// The load level (default: the lowest measured).
    pub load: Option<usize>,
    /// The timer slack, ns (default: the lowest measured, the closest to the precise
    /// sleeper's own 1 ns).
    pub timer_slack_ns: Option<u64>,
}

/// Sorted oversleeps per requested duration, ascending by duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Empirical {
    anchors: Vec<(u64, Vec<u64>)>,
}

impl Empirical {
    /// A distribution from explicit anchors `(requested_ns, oversleeps)` (any order; empty
    /// anchors are dropped). `None` when no anchor has a value.
    pub fn from_anchors(anchors: Vec<(u64, Vec<u64>)>) -> Option<Self> {
        let mut anchors: Vec<(u64, Vec<u64>)> = anchors
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(d, mut v)| {
                v.sort_unstable();
                (d, v)
            })
            .collect();
        anchors.sort_by_key(|(d, _)| *d);
        anchors.dedup_by_key(|(d, _)| *d);
        (!anchors.is_empty()).then_some(Self { anchors })
    }

    /// Builds the distribution from the sweeps of a result file (one, or a survey's sweep
    /// stages; `experiment` is what the file holds): the first sweep that measured the
    /// chosen mechanism. Returns it with the record of where it came from.
    pub fn from_sweeps(
        sweeps: &[SweepData],
        experiment: &str,
        choice: &ReplayChoice,
    ) -> Result<(Self, ReplaySource), ReplayError> {
        if sweeps.is_empty() {
            return Err(ReplayError::NotASweep {
                file: choice.file.clone(),
                experiment: experiment.into(),
            });
        }
        let sweep = sweeps
            .iter()
            .find(|s| s.cells.iter().any(|c| c.mechanism == choice.mechanism));
        let Some(sweep) = sweep else {
            let mut known: Vec<&str> = sweeps
                .iter()
                .flat_map(|s| s.cells.iter().map(|c| c.mechanism.as_str()))
                .collect();
            known.sort_unstable();
            known.dedup();
            return Err(ReplayError::NoMechanism {
                file: choice.file.clone(),
                mechanism: choice.mechanism.clone(),
                known: known.join(", "),
            });
        };
        Self::from_sweep(sweep, choice)
    }

    /// Builds the distribution from the cells of one sweep.
    pub fn from_sweep(
        sweep: &SweepData,
        choice: &ReplayChoice,
    ) -> Result<(Self, ReplaySource), ReplayError> {
        let cells: Vec<&SweepCell> = sweep
            .cells
            .iter()
            .filter(|c| c.mechanism == choice.mechanism)
            .collect();
        let list = |v: Vec<u64>| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let loads = distinct(cells.iter().map(|c| c.load as u64));
        let Some(&lowest_load) = loads.first() else {
            return Err(ReplayError::NoMechanism {
                file: choice.file.clone(),
                mechanism: choice.mechanism.clone(),
                known: list_names(sweep),
            });
        };
        let load = choice.load.map_or(lowest_load, |l| l as u64);
        if !loads.contains(&load) {
            return Err(ReplayError::NoLoad {
                file: choice.file.clone(),
                mechanism: choice.mechanism.clone(),
                load: load as usize,
                known: list(loads),
            });
        }
        let cells: Vec<&SweepCell> = cells
            .into_iter()
            .filter(|c| c.load as u64 == load)
            .collect();
        let slacks = distinct(cells.iter().map(|c| c.timer_slack_ns));
        let slack = choice.timer_slack_ns.unwrap_or(slacks[0]);
        if !slacks.contains(&slack) {
            return Err(ReplayError::NoSlack {
                file: choice.file.clone(),
                mechanism: choice.mechanism.clone(),
                slack_ns: slack,
                known: list(slacks),
            });
        }
        let mut anchors = Vec::new();
        let mut record = Vec::new();
        for c in cells.into_iter().filter(|c| c.timer_slack_ns == slack) {
            let (values, from) = if c.samples_ns.is_empty() {
                (from_histogram(&c.histogram, c.requested_ns), "histogram")
            } else {
                let v = c
                    .samples_ns
                    .iter()
                    .map(|&e| e.saturating_sub(c.requested_ns))
                    .collect();
                (v, "samples")
            };
            if values.is_empty() {
                continue;
            }
            let mut sorted: Vec<u64> = values;
            sorted.sort_unstable();
            record.push(ReplayAnchor {
                requested_ns: c.requested_ns,
                samples: sorted.len() as u64,
                from: from.into(),
                p50_oversleep_ns: quantile_sorted(&sorted, 0.5).unwrap_or(0.0),
                p50_oversleep_ci_ns: ci_sorted_u64(&sorted, 0.5),
                p99_oversleep_ns: tail_quantile(&sorted, 0.99),
                p99_oversleep_ci_ns: ci_sorted_u64(&sorted, 0.99),
            });
            anchors.push((c.requested_ns, sorted));
        }
        record.sort_by_key(|a| a.requested_ns);
        record.dedup_by_key(|a| a.requested_ns);
        let dist = Self::from_anchors(anchors).ok_or_else(|| ReplayError::Empty {
            file: choice.file.clone(),
            mechanism: choice.mechanism.clone(),
        })?;
        let source = ReplaySource {
            file: choice.file.clone(),
            mechanism: choice.mechanism.clone(),
            load: load as usize,
            timer_slack_ns: slack,
            anchors: record,
        };
        Ok((dist, source))
    }

    /// The anchors' requested durations, ascending.
    pub fn durations(&self) -> Vec<u64> {
        self.anchors.iter().map(|(d, _)| *d).collect()
    }

    /// Draws the oversleep of a native sleep of `d` ns (see the module docs).
    pub fn draw(&self, d: u64, rng: &mut SimRng) -> u64 {
        let r = rng.next_u64();
        let at = |v: &[u64]| v[((u128::from(r) * v.len() as u128) >> 64) as usize];
        let first = &self.anchors[0];
        let last = &self.anchors[self.anchors.len() - 1];
        if d <= first.0 {
            return at(&first.1);
        }
        if d >= last.0 {
            return at(&last.1);
        }
        // The first anchor above d; the one before it is at or below d.
        let hi = self.anchors.partition_point(|(a, _)| *a <= d);
        let (d0, v0) = &self.anchors[hi - 1];
        let (d1, v1) = &self.anchors[hi];
        let span = u128::from(d1 - d0);
        let w = u128::from(d - d0);
        let q0 = u128::from(at(v0));
        let q1 = u128::from(at(v1));
        ((q0 * (span - w) + q1 * w) / span) as u64
    }
}

fn list_names(sweep: &SweepData) -> String {
    let mut v: Vec<&str> = sweep.cells.iter().map(|c| c.mechanism.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    v.join(", ")
}

fn distinct(values: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Oversleeps from a sweep histogram of elapsed times (`[upper bound, count]` of
/// non-empty √2-wide buckets above 1 µs): each bucket's count spread evenly over
/// `(lower, upper]`, where `lower` is the bucket's own lower edge (upper / √2, or 0 for
/// the first 1 µs) but not below the previous listed bucket.
fn from_histogram(hist: &[[u64; 2]], requested: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut prev_upper = 0u64;
    for &[upper, count] in hist {
        let own_lower = if upper <= 1_000 {
            0
        } else {
            upper.saturating_mul(1_000) / 1_414
        };
        let lower = own_lower.max(prev_upper).min(upper);
        let width = upper - lower;
        for j in 0..count.min(1_000_000) {
            // Midpoints of `count` equal slices of (lower, upper].
            let e = lower
                + ((u128::from(width) * u128::from(2 * j + 1)) / u128::from(2 * count)) as u64;
            out.push(e.saturating_sub(requested));
        }
        prev_upper = upper;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    #[test]
    fn interpolates_quantile_functions_between_anchors() {
        // Anchor 1 ms: every oversleep 10 µs; anchor 3 ms: every oversleep 30 µs.
        let e = Empirical::from_anchors(vec![
            (3_000_000, vec![30_000; 10]),
            (1_000_000, vec![10_000; 10]),
        ])
        .unwrap();
        assert_eq!(e.durations(), vec![1_000_000, 3_000_000]);
        let mut rng = rng_for(1, &[]);
        assert_eq!(e.draw(2_000_000, &mut rng), 20_000, "halfway");
        assert_eq!(e.draw(1_500_000, &mut rng), 15_000);
        assert_eq!(e.draw(1, &mut rng), 10_000, "below: the first anchor");
        assert_eq!(e.draw(1_000_000, &mut rng), 10_000, "exactly at an anchor");
        assert_eq!(e.draw(u64::MAX, &mut rng), 30_000, "above: the last anchor");
    }

    #[test]
    fn draws_follow_the_samples() {
        let e = Empirical::from_anchors(vec![(1_000, (0..100).collect())]).unwrap();
        let mut rng = rng_for(2, &[]);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            counts[e.draw(1_000, &mut rng) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1_200).contains(&c)),
            "{counts:?}"
        );
        assert!(Empirical::from_anchors(vec![(5, vec![])]).is_none());
    }

    #[test]
    fn histogram_expansion_keeps_counts_and_bounds() {
        // Elapsed of a 1 ms request: 4 in (1 ms, 1.414 ms], 2 in (1.414 ms, 2 ms].
        let hist = [[1_000_000, 0], [1_414_213, 4], [2_000_000, 2]];
        let v = from_histogram(&hist, 1_000_000);
        assert_eq!(v.len(), 6);
        assert!(v[..4].iter().all(|&o| o <= 414_213));
        assert!(v[4..].iter().all(|&o| (414_213..=1_000_000).contains(&o)));
    }
}
