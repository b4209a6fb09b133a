//! Intervals over the units a measurement varies by: the blocks of an interleaved
//! comparison (`pace`, `advise`), the rounds of an interleaved sweep (`sweep`,
//! `explain`), the runs of a repeated one.
//!
//! The samples of one unit share its moment: the host's load, the CPUs' idle states, the
//! other tenants of the VM. The order-statistic interval of [`super::quantile_ci`]
//! assumes independent samples, so over samples pooled from a few such units it is far
//! too narrow (a simulation below: 95 % nominal, about half that in fact). A verdict
//! rests on an interval that counts the units instead:
//!
//! * **A quantile** (median, p90, p99, p99.9): the same order statistics of the pooled
//!   sample, at ranks taken from an *effective* sample size, `n / deff` (Kish's design
//!   effect), instead of `n`. The design effect is measured at the quantile itself
//!   (Woodruff's linearization): per unit, how many of its samples lie at or below the
//!   pooled quantile; the variance of that share across units (the ratio estimator's,
//!   with k − 1 degrees of freedom) over the binomial variance `q(1 − q)/n` the
//!   independent case would give. It is never taken below 1, and it is widened for
//!   the few units that estimate it (Korn and Graubard's degrees-of-freedom factor:
//!   `(z₀.₉₇₅ / t₀.₉₇₅,ₖ₋₁)²`). The ranks are then the exact binomial ones at the
//!   effective size, scaled back to the pooled sample (the lower rank rounded down, the
//!   upper up): where the units do not vary, exactly today's interval; where they do,
//!   wider; where the effective sample cannot resolve the quantile (the quantile rule
//!   at `n / deff`), none. An end whose rank runs off the sample stays open, as for one
//!   sample: a p99 of 100 frames is bounded above by nothing, whatever the units.
//! * **A ratio of sums** (CPU time over wall time, a mean: sum over count): the ratio
//!   of the totals, with the ratio estimator's variance across units and Student's t
//!   at k − 1 degrees of freedom.
//!
//! Below [`MIN_UNITS`] units there is no interval (`None`): a sentence then draws no
//! verdict and states the number of units. docs/REPORT.md gives the reasons for this
//! method rather than a block bootstrap (which cannot reach past the largest sample, so
//! its p99 of a few hundred frames is too narrow above) or a per-unit statistic (a p99
//! of a block of 25 frames does not exist).

use super::quantile::resolves;
use super::quantile_ci::{CI_LEVEL, Ci, ci_ranks};
use super::{Stat, mean_ci, t_quantile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The fewest units an interval over units is computed from. Fewer estimate their own
/// variation too poorly (the coverage simulation in the tests holds from here on).
pub const MIN_UNITS: u64 = 8;

/// What a unit of a measurement is: a stretch of samples that share one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A block of an interleaved comparison (`pace`, `advise`, `cpu`).
    Block,
    /// A round of an interleaved sweep (`sweep`, `explain`).
    Round,
    /// A whole run (`pace --repeat`, `compare` with three or more results a side).
    Run,
}

impl Unit {
    /// Its name: `block`, `round`, `run`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Block => "block",
            Unit::Round => "round",
            Unit::Run => "run",
        }
    }

    /// `n` of them as a sentence writes it: `1 block`, `4 rounds`.
    pub fn count(self, n: u64) -> String {
        format!("{n} {}{}", self.name(), if n == 1 { "" } else { "s" })
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The 95 % intervals of a sample's statistics over its units (JSON `units` beside a
/// summary): what its verdicts rest on. An interval is `null` below [`MIN_UNITS`] units,
/// where the effective sample cannot resolve the quantile, or where neither end is
/// bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitIntervals {
    /// What a unit is.
    pub unit: Unit,
    /// How many units held samples.
    pub units: u64,
    /// The median's interval, ns.
    pub median_ci_ns: Option<Ci>,
    /// The p90's interval, ns.
    pub p90_ci_ns: Option<Ci>,
    /// The p99's interval, ns.
    pub p99_ci_ns: Option<Ci>,
    /// The p99.9's interval, ns.
    pub p999_ci_ns: Option<Ci>,
    /// The mean's interval, ns.
    pub mean_ci_ns: Option<Ci>,
}

impl UnitIntervals {
    /// The intervals of the samples of `groups`, one group per `unit` (empty groups
    /// are not units).
    pub fn of<G: AsRef<[f64]>>(unit: Unit, groups: &[G]) -> Self {
        let groups: Vec<&[f64]> = groups
            .iter()
            .map(AsRef::as_ref)
            .filter(|g| !g.is_empty())
            .collect();
        let sums: Vec<f64> = groups.iter().map(|g| g.iter().sum()).collect();
        let sizes: Vec<f64> = groups.iter().map(|g| g.len() as f64).collect();
        Self {
            unit,
            units: groups.len() as u64,
            median_ci_ns: quantile_ci(&groups, 0.5),
            p90_ci_ns: quantile_ci(&groups, 0.9),
            p99_ci_ns: quantile_ci(&groups, 0.99),
            p999_ci_ns: quantile_ci(&groups, 0.999),
            mean_ci_ns: ratio_ci(&sums, &sizes),
        }
    }

    /// The same for integer samples (ns).
    pub fn of_ns<G: AsRef<[u64]>>(unit: Unit, groups: &[G]) -> Self {
        let groups: Vec<Vec<f64>> = groups
            .iter()
            .map(|g| g.as_ref().iter().map(|&v| v as f64).collect())
            .collect();
        Self::of(unit, &groups)
    }

    /// The intervals of `samples` (ns, in measurement order) taken `counts` per unit;
    /// `None` unless the counts add up to the samples (every sample kept).
    pub fn of_counted(unit: Unit, samples: &[u64], counts: &[u64]) -> Option<Self> {
        if counts.iter().sum::<u64>() != samples.len() as u64 {
            return None;
        }
        let mut rest = samples;
        let groups: Vec<&[u64]> = counts
            .iter()
            .map(|&n| {
                let (g, r) = rest.split_at(n as usize);
                rest = r;
                g
            })
            .collect();
        Some(Self::of_ns(unit, &groups))
    }

    /// The intervals of `samples` (ns, in measurement order) cut into `k` contiguous
    /// blocks of near-equal size (batch means: the blocks of one stretch of calls carry
    /// its drift, not the variation between stretches measured apart).
    pub fn of_batches(samples: &[u64], k: u64) -> Self {
        let n = samples.len() as u64;
        let k = k.max(1);
        let counts: Vec<u64> = (0..k).map(|b| n / k + u64::from(b < n % k)).collect();
        Self::of_counted(Unit::Block, samples, &counts).expect("the counts add up to n")
    }

    /// The interval of `stat` (a quantile or the mean; `None` for the others).
    pub fn ci(&self, stat: Stat) -> Option<Ci> {
        stat.ci_among([
            self.median_ci_ns,
            self.p90_ci_ns,
            self.p99_ci_ns,
            self.p999_ci_ns,
            self.mean_ci_ns,
        ])
    }
}

/// The `q` quantile of sorted `v` by linear interpolation (as `quantile_sorted`).
fn interpolate(v: &[f64], q: f64) -> f64 {
    let pos = q * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Korn and Graubard's factor on an effective sample size estimated from `k` units:
/// `(z / t_{k−1})²` at [`CI_LEVEL`].
fn df_factor(k: u64) -> Option<f64> {
    let t = t_quantile(CI_LEVEL, k - 1)?;
    let z = t_quantile(CI_LEVEL, u64::MAX / 2)?;
    Some((z / t).powi(2))
}

/// The design effect of `groups` at the `q` quantile `x`: the variance across units of
/// the share of samples at or below `x` (ratio estimator) over the binomial variance of
/// independent samples. At least 1.
pub fn design_effect(groups: &[&[f64]], q: f64, x: f64) -> f64 {
    let k = groups.len() as f64;
    let n: f64 = groups.iter().map(|g| g.len() as f64).sum();
    let below: Vec<f64> = groups
        .iter()
        .map(|g| g.iter().filter(|&&v| v <= x).count() as f64)
        .collect();
    let share = below.iter().sum::<f64>() / n;
    let spread: f64 = groups
        .iter()
        .zip(&below)
        .map(|(g, c)| (c - share * g.len() as f64).powi(2))
        .sum();
    let clustered = k / (k - 1.0) * spread / (n * n);
    let independent = q * (1.0 - q) / n;
    (clustered / independent).max(1.0)
}

/// The 95 % interval of the pooled `q` quantile of `groups` (one per unit) over its
/// units: order statistics at the ranks of the effective sample size (see the module
/// doc). `None` below [`MIN_UNITS`] non-empty units, where the effective sample cannot
/// resolve the quantile, or where both ends are open.
pub fn quantile_ci(groups: &[&[f64]], q: f64) -> Option<Ci> {
    let groups: Vec<&[f64]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
    let k = groups.len() as u64;
    if k < MIN_UNITS {
        return None;
    }
    let mut pooled: Vec<f64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    pooled.sort_by(f64::total_cmp);
    let n = pooled.len() as u64;
    if !resolves(n, q) {
        return None;
    }
    let x = interpolate(&pooled, q);
    let deff = design_effect(&groups, q, x);
    let effective = (n as f64 / deff * df_factor(k)?).floor() as u64;
    if !resolves(effective, q) {
        return None;
    }
    let scale = n as f64 / effective as f64;
    let (low, high) = ci_ranks(effective, q);
    let low = low.map(|r| ((r as f64 * scale).floor() as u64).clamp(1, n));
    let high = high.map(|r| ((r as f64 * scale).ceil() as u64).clamp(1, n));
    match (low, high) {
        (None, None) => None,
        (l, h) => Some(Ci(
            l.map(|r| pooled[r as usize - 1]),
            h.map(|r| pooled[r as usize - 1]),
        )),
    }
}

/// The 95 % interval of `Σ num / Σ den` over units (one `num`, `den` pair each: a
/// block's CPU time and wall time, a unit's sum and count): the ratio estimator's
/// variance across units, Student's t at k − 1 degrees of freedom; where no `num` is
/// negative (a CPU time, a count) the ratio cannot be and the lower end stops at 0.
/// `None` below [`MIN_UNITS`] units or without a positive total `den`.
pub fn ratio_ci(num: &[f64], den: &[f64]) -> Option<Ci> {
    let k = num.len().min(den.len()) as u64;
    let total: f64 = den.iter().sum();
    if k < MIN_UNITS || total <= 0.0 {
        return None;
    }
    let r = num.iter().sum::<f64>() / total;
    let spread: f64 = num.iter().zip(den).map(|(a, b)| (a - r * b).powi(2)).sum();
    let se = (k as f64 / (k - 1) as f64 * spread).sqrt() / total;
    let half = t_quantile(CI_LEVEL, k - 1)? * se;
    let floor = if num.iter().all(|&x| x >= 0.0) {
        0.0
    } else {
        f64::NEG_INFINITY
    };
    Some(Ci(Some((r - half).max(floor)), Some(r + half)))
}

/// The mean of paired differences, one per unit (a setting's statistic minus the
/// baseline's in the same round of an interleaved comparison), with its 95 % interval:
/// Student's t over the differences at k − 1 degrees of freedom. The pairing removes
/// what the units share (the round's moment) from the comparison, so the interval is
/// much narrower than one from each side's own interval. The interval is `None` below
/// [`MIN_UNITS`] differences; the mean is `None` without any.
pub fn paired_ci(diffs: &[f64]) -> Option<(f64, Option<Ci>)> {
    let k = diffs.len() as u64;
    let mean = diffs.iter().sum::<f64>() / k.max(1) as f64;
    if k < 2 {
        return diffs.first().map(|&d| (d, None));
    }
    let (_, var) = mean_var(diffs);
    let ci = (k >= MIN_UNITS)
        .then(|| mean_ci(mean, var.sqrt(), k, CI_LEVEL))
        .flatten()
        .map(|(lo, hi)| Ci(Some(lo), Some(hi)));
    Some((mean, ci))
}

/// The fewest runs a side of a comparison needs for its runs to be the units
/// (`compare --against`): fewer leave the spread between runs unestimated.
pub const MIN_RUNS: usize = 3;

/// Per-run values on the log scale (a value under 1 ns counts as 1 ns).
fn logs(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.max(1.0).ln()).collect()
}

/// The mean and the sample variance (n − 1) of `v`.
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0),
    )
}

/// The geometric mean of per-run values (each run's median, ns) with its 95 % interval:
/// Student's t over the runs' logarithms, k − 1 degrees of freedom. Runs are few, so no
/// order statistic can bound anything; a run's median is a statistic of many samples,
/// near normal on the log scale. `None` below [`MIN_RUNS`] runs.
pub fn geometric_ci(v: &[f64]) -> Option<(f64, Ci)> {
    if v.len() < MIN_RUNS {
        return None;
    }
    let (m, var) = mean_var(&logs(v));
    let half = t_quantile(CI_LEVEL, v.len() as u64 - 1)? * (var / v.len() as f64).sqrt();
    Some((m.exp(), Ci(Some((m - half).exp()), Some((m + half).exp()))))
}

/// The ratio `b / a` of two sides' geometric means over their runs, with its 95 %
/// interval: Welch's t on the difference of the logs (the Welch–Satterthwaite degrees
/// of freedom, rounded down). `None` unless each side has [`MIN_RUNS`] runs.
pub fn ratio_of_runs(a: &[f64], b: &[f64]) -> Option<(f64, Ci)> {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(&logs(a)), mean_var(&logs(b)));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se = (sa + sb).sqrt();
    let df = if se > 0.0 {
        ((sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))).floor() as u64
    } else {
        (a.len() + b.len() - 2) as u64
    };
    let half = t_quantile(CI_LEVEL, df.max(1))? * se;
    let d = mb - ma;
    Some((d.exp(), Ci(Some((d - half).exp()), Some((d + half).exp()))))
}

#[cfg(test)]
mod tests;
