//! The change of a cell against as is, paired over rounds where the rounds resolve the
//! statistic, and the verdict on it.

use super::{ArmCell, NO_EFFECT_SHARE, TuneData, Verdict, est};
use sleeplab_stats::{Est, Order, Unit, difference, equivalent, order, paired_ci};

/// The paired change of a statistic (`round` of `arm` minus `round` of `base`): the
/// mean of the rounds' differences with its interval over them; `None` where no round
/// was run on both or where a round of either cannot resolve the statistic (then the
/// difference of the arms' values is the change, [`change_est`]).
pub fn paired_change(arm: &[Option<f64>], base: &[Option<f64>]) -> Option<Est> {
    let k = arm.len().min(base.len());
    let diffs: Option<Vec<f64>> = arm[..k]
        .iter()
        .zip(&base[..k])
        .map(|(a, b)| Some((*a)? - (*b)?))
        .collect();
    let diffs = diffs?;
    let (value, ci) = paired_ci(&diffs)?;
    Some(Est::units(value, ci, Unit::Round, k as u64))
}

/// The change of `cell`'s median (`p99` false) or p99 against `base`'s: paired over
/// rounds where it can be ([`paired_change`]), else the difference of the two arms'
/// estimates over their own rounds; `None` where either value is missing.
pub fn change_of(cell: &ArmCell, base: &ArmCell, p99: bool) -> Option<Est> {
    let (rc, rb) = if p99 {
        (&cell.round_p99_ns, &base.round_p99_ns)
    } else {
        (&cell.round_p50_ns, &base.round_p50_ns)
    };
    let value = |c: &ArmCell| if p99 { c.p99_ns } else { c.p50_ns };
    let (a, b) = (
        est(value(cell), cell.units.as_ref(), p99)?,
        est(value(base), base.units.as_ref(), p99)?,
    );
    Some(paired_change(rc, rb).unwrap_or_else(|| difference(&a, &b)))
}

/// The stored change of `cell` (after [`judge`]) as an estimate, with whether it is
/// paired: the paired one over its rounds, else the difference of the arms over the
/// fewer rounds of `cell` and `base`.
pub fn change_est(cell: &ArmCell, base: &ArmCell, p99: bool) -> Option<(Est, bool)> {
    let (value, ci, paired) = if p99 {
        (
            cell.p99_change_ns?,
            cell.p99_change_ci_ns,
            cell.p99_change_paired_rounds,
        )
    } else {
        (
            cell.p50_change_ns?,
            cell.p50_change_ci_ns,
            cell.p50_change_paired_rounds,
        )
    };
    let rounds = |c: &ArmCell| c.units.as_ref().map_or(0, |u| u.units);
    let n = paired.unwrap_or_else(|| rounds(cell).min(rounds(base)));
    Some((Est::units(value, ci, Unit::Round, n), paired.is_some()))
}

/// The verdict on a p99 change against as is's p99 `base_p99`: see the module doc of
/// `tune`.
pub fn verdict_of_change(change: &Est, base_p99: f64) -> Verdict {
    let zero = Est::exact(0.0);
    match order(change, &zero) {
        Order::Below => Verdict::Helps,
        Order::Above => Verdict::Hurts,
        Order::Indistinguishable if equivalent(change, &zero, NO_EFFECT_SHARE * base_p99.abs()) => {
            Verdict::NoEffect
        }
        Order::Indistinguishable => Verdict::Undecided,
    }
}

/// The verdict of `cell` against `base` on their p99s (undecided where either is
/// missing).
pub fn verdict(cell: &ArmCell, base: &ArmCell) -> Verdict {
    match (change_of(cell, base, true), base.p99_ns) {
        (Some(c), Some(b)) => verdict_of_change(&c, b),
        _ => Verdict::Undecided,
    }
}

/// Fills every arm's changes and verdicts against as is.
pub fn judge(data: &mut TuneData) {
    let Some(base) = data.as_is().cloned() else {
        return;
    };
    let base_cpu = base
        .cpus
        .map(|v| Est::units(v, base.cpus_ci, Unit::Round, base.rounds));
    for arm in data.arms.iter_mut().filter(|a| !a.is_as_is()) {
        if let (Some(b), Some(v)) = (base_cpu, arm.cpus) {
            let some = |v: &[f64]| v.iter().map(|&x| Some(x)).collect::<Vec<_>>();
            let paired = paired_change(&some(&arm.round_cpus), &some(&base.round_cpus));
            let d = paired.unwrap_or_else(|| {
                difference(&Est::units(v, arm.cpus_ci, Unit::Round, arm.rounds), &b)
            });
            arm.cpus_change = Some(d.value);
            arm.cpus_change_ci = d.ci;
            arm.cpus_change_paired_rounds =
                paired.map(|_| arm.round_cpus.len().min(base.round_cpus.len()) as u64);
        }
        for cell in &mut arm.cells {
            let Some(bc) = base.cell_like(cell) else {
                continue;
            };
            let paired = |p99: bool| {
                let (a, b) = if p99 {
                    (&cell.round_p99_ns, &bc.round_p99_ns)
                } else {
                    (&cell.round_p50_ns, &bc.round_p50_ns)
                };
                paired_change(a, b).map(|_| a.len().min(b.len()) as u64)
            };
            if let Some(d) = change_of(cell, bc, false) {
                (cell.p50_change_ns, cell.p50_change_ci_ns) = (Some(d.value), d.ci);
                cell.p50_change_paired_rounds = paired(false);
            }
            if let Some(d) = change_of(cell, bc, true) {
                (cell.p99_change_ns, cell.p99_change_ci_ns) = (Some(d.value), d.ci);
                cell.p99_change_paired_rounds = paired(true);
            }
            cell.verdict = Some(verdict(cell, bc));
        }
    }
}
