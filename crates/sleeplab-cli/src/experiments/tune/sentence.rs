//! The sentences `tune` prints about a setting, each with the claims it makes
//! (`report::claim`): a setting *lowers* or *raises* a p99 only where the intervals over
//! rounds separate, has *no effect* only where the interval of the change lies within
//! the stated margin, and is otherwise said to be indistinguishable.

use super::{Arm, ArmCell, NO_EFFECT_SHARE, TuneData, Verdict, est};
use crate::output::fmt_ns;
use crate::output::units::ns;
use crate::report::claim::{Claim, Order, Sentence, indistinguishable, with_interval};
use crate::stats::Stat;

/// The margin of "no effect" as the text states it.
pub fn margin_text() -> String {
    format!("±{:.0} % of as is's p99", NO_EFFECT_SHARE * 100.0)
}

/// What `arm` did to the p99 of `cell` against `base` (the same cell as is); `None`
/// where either p99 is missing.
pub fn arm_sentence(arm: &Arm, cell: &ArmCell, base: &ArmCell) -> Option<Sentence> {
    let a = est(cell.p99_ns, cell.units.as_ref(), true)?;
    let b = est(base.p99_ns, base.units.as_ref(), true)?;
    let what = format!("{} {}", cell.mechanism, fmt_ns(cell.requested_ns));
    let name = &arm.setting.name;
    let both = format!(
        "{} as is, {} with {name}",
        with_interval(&b, ns),
        with_interval(&a, ns)
    );
    let mut s = Sentence::default();
    match super::verdict(Some(a), Some(b)) {
        v @ (Verdict::Helps | Verdict::Hurts) => {
            let (word, stated) = if v == Verdict::Helps {
                ("lowers", Order::Below)
            } else {
                ("raises", Order::Above)
            };
            s.push(&format!("{name} {word} the p99 of {what}: {both}."));
            s.claim(Claim::Verdict {
                stat: Stat::P99,
                a,
                b,
                stated,
            });
        }
        Verdict::NoEffect => {
            let shown = margin_text();
            s.push(&format!("{name} has no effect on the p99 of {what} (the change lies within {shown}): {both}."));
            s.claim(Claim::Equivalent {
                stat: Stat::P99,
                a,
                b,
                margin: NO_EFFECT_SHARE * b.value.abs(),
                shown,
            });
        }
        Verdict::Undecided => {
            s.push(&format!(
                "{name}, {what}: {}.",
                indistinguishable(Stat::P99, &a, &b, ns)
            ));
            s.claim(Claim::Verdict {
                stat: Stat::P99,
                a,
                b,
                stated: Order::Indistinguishable,
            });
        }
    }
    Some(s)
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
