//! The sentences `tune` prints about a setting, each with the claims it makes
//! (`report::claim`): a setting *lowers* or *raises* a p99 only where the interval of its
//! change (paired over rounds, or the arms' own intervals) separates from zero, has *no effect* only where the interval of the change lies within
//! the stated margin, and is otherwise said to be indistinguishable.

use super::{Arm, ArmCell, NO_EFFECT_SHARE, TuneData, Verdict, change_est, est, verdict_of_change};
use crate::output::fmt_ns;
use crate::output::units::ns;
use crate::report::claim::{
    Basis, Claim, Est, INDISTINGUISHABLE, Order, Sentence, basis_note, indistinguishable,
    with_interval,
};
use crate::stats::Stat;

/// The margin of "no effect" as the text states it.
pub fn margin_text() -> String {
    format!("±{:.0} % of as is's p99", NO_EFFECT_SHARE * 100.0)
}

/// What `arm` did to the p99 of `cell` against `base` (the same cell as is); `None`
/// where either p99 is missing. The verdict is on the p99's change: paired over rounds
/// where every round resolves the p99 ([`paired_sentence`]), else the two arms' p99s
/// over their own rounds.
pub fn arm_sentence(arm: &Arm, cell: &ArmCell, base: &ArmCell) -> Option<Sentence> {
    if cell.p99_change_paired_rounds.is_some() {
        return paired_sentence(arm, cell, base);
    }
    let a = est(cell.p99_ns, cell.units.as_ref(), true)?;
    let b = est(base.p99_ns, base.units.as_ref(), true)?;
    let name = &arm.setting.name;
    let detail = format!(
        "{} as is, {} with {name}",
        with_interval(&b, ns),
        with_interval(&a, ns)
    );
    let undecided = indistinguishable(Stat::P99, &a, &b, ns);
    let v = super::verdict(cell, base);
    Some(judged(arm, cell, v, (a, b), &detail, &undecided))
}

/// The sentence on a p99 change paired over rounds: *lowers* or *raises* only where the
/// interval of the change lies below or above zero, *no effect* only where it lies
/// within the stated margin, else indistinguishable (with the reason where too few
/// rounds give no interval).
pub fn paired_sentence(arm: &Arm, cell: &ArmCell, base: &ArmCell) -> Option<Sentence> {
    let (change, _) = change_est(cell, base, true)?;
    let base_p99 = base.p99_ns?;
    let Basis::Units { n, .. } = change.basis else {
        return None;
    };
    let detail = format!(
        "p99 change {} over {} paired {}; as is {}",
        with_interval(&change, ns),
        n,
        if n == 1 { "round" } else { "rounds" },
        ns(base_p99)
    );
    let undecided = format!("{INDISTINGUISHABLE}: {detail}{}", basis_note(&[&change]));
    let v = verdict_of_change(&change, base_p99);
    let mut s = judged(arm, cell, v, (change, Est::exact(0.0)), &detail, &undecided);
    // The margin is of as is's p99, not of the zero the change is set against.
    if let Some(Claim::Equivalent { margin, .. }) = s.claims.last_mut() {
        *margin = NO_EFFECT_SHARE * base_p99.abs();
    }
    Some(s)
}

/// The sentence for verdict `v` on `a` against `b` (two p99s, or a change and zero),
/// with `detail` after the verdict and `undecided` as the clause where there is none.
fn judged(
    arm: &Arm,
    cell: &ArmCell,
    v: Verdict,
    (a, b): (Est, Est),
    detail: &str,
    undecided: &str,
) -> Sentence {
    let what = format!("{} {}", cell.mechanism, fmt_ns(cell.requested_ns));
    let name = &arm.setting.name;
    let mut s = Sentence::default();
    match v {
        Verdict::Helps | Verdict::Hurts => {
            let (word, stated) = if v == Verdict::Helps {
                ("lowers", Order::Below)
            } else {
                ("raises", Order::Above)
            };
            s.push(&format!("{name} {word} the p99 of {what}: {detail}."));
            s.claim(Claim::Verdict {
                stat: Stat::P99,
                a,
                b,
                stated,
            });
        }
        Verdict::NoEffect => {
            let shown = margin_text();
            s.push(&format!(
                "{name} has no effect on the p99 of {what} (the change lies within {shown}): {detail}."
            ));
            s.claim(Claim::Equivalent {
                stat: Stat::P99,
                a,
                b,
                margin: NO_EFFECT_SHARE * b.value.abs(),
                shown,
            });
        }
        Verdict::Undecided => {
            s.push(&format!("{name}, {what}: {undecided}."));
            s.claim(Claim::Verdict {
                stat: Stat::P99,
                a,
                b,
                stated: Order::Indistinguishable,
            });
        }
    }
    s
}

/// Every sentence of a result: one per arm and cell with a p99 on both sides.
pub fn sentences(data: &TuneData) -> Vec<Sentence> {
    let Some(base) = data.as_is() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for arm in data.arms.iter().filter(|a| !a.is_as_is()) {
        for cell in &arm.cells {
            let Some(bc) = base.cell_like(cell) else {
                continue;
            };
            out.extend(arm_sentence(arm, cell, bc));
        }
    }
    out
}

/// The setting that helps the most cells and hurts none, with the cells it helps (ties:
/// the lower CPU cost); `None` where no setting helps anything.
pub fn best_setting(data: &TuneData) -> Option<(&Arm, Vec<&ArmCell>)> {
    data.arms
        .iter()
        .filter(|a| !a.is_as_is())
        .filter(|a| {
            let (helps, hurts, _) = a.counts();
            helps > 0 && hurts == 0
        })
        .max_by(|x, y| {
            x.counts().0.cmp(&y.counts().0).then(
                y.cpus_change
                    .unwrap_or(f64::MAX)
                    .total_cmp(&x.cpus_change.unwrap_or(f64::MAX)),
            )
        })
        .map(|a| {
            (
                a,
                a.cells
                    .iter()
                    .filter(|c| c.verdict == Some(Verdict::Helps))
                    .collect(),
            )
        })
}
