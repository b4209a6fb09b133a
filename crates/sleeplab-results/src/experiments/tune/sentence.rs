//! The sentences `tune` prints about a setting, each with the claims it makes
//! (`claim`): a setting *lowers* or *raises* a p99 only where the interval of its
//! change (paired over rounds, or the arms' own intervals) separates from zero, has *no effect* only where the interval of the change lies within
//! the stated margin, and is otherwise said to be indistinguishable.

use super::{Arm, ArmCell, NO_EFFECT_SHARE, TuneData, Verdict, change_est, est, verdict_of_change};
use sleeplab_stats::{
    Basis, Claim, Est, INDISTINGUISHABLE, Order, Sentence, Stat, basis_note, fmt_ns,
    indistinguishable, interval_text, order, units::ns, units::signed_ns, with_interval,
};

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
        with_interval(&change, signed_ns),
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
    // The requested length goes before the mechanism, as the wait's own size, so it
    // cannot be read as the change the sentence states.
    let what = format!("a {} {} wait", fmt_ns(cell.requested_ns), cell.mechanism);
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

/// The best setting's sentence: what it did to the wait it helped most (its p99's
/// change, [`arm_sentence`]) and the CPUs the whole machine burnt beyond as is's while
/// it was in force (busy, and idle CPUs polling); `None` where no setting lowered a p99 and raised none.
pub fn best_sentence(d: &TuneData) -> Option<Sentence> {
    let base = d.as_is()?;
    let (arm, cells) = best_setting(d)?;
    let cell = cells.into_iter().min_by(|x, y| {
        let v = |c: &ArmCell| c.p99_change_ns.unwrap_or(f64::MAX);
        v(x).total_cmp(&v(y))
    })?;
    let mut s = arm_sentence(arm, cell, base.cell_like(cell)?)?;
    if let Some(c) = arm.cpus_change {
        s.push(&format!(
            " While it was in force the whole machine burnt {c:+.2} CPUs {} against as is (busy, and idle CPUs polling).",
            interval_text(arm.cpus_change_ci, |x| format!("{x:.2}"))
        ));
    }
    Some(s)
}

/// Where settings were judged and none lowered a p99 without raising another, how the
/// changes fell: raised (interval above zero), lowered by a setting that raised
/// another, or indistinguishable from no change; `None` where a best setting exists or
/// nothing was judged.
pub fn none_sentence(d: &TuneData) -> Option<Sentence> {
    if best_setting(d).is_some() {
        return None;
    }
    let base = d.as_is()?;
    let zero = Est::exact(0.0);
    let mut s = Sentence::default();
    let mut changes: Vec<Est> = Vec::new();
    let (mut raised, mut lowered, mut other) = (0, 0, 0);
    for arm in d.arms.iter().filter(|a| !a.is_as_is()) {
        for c in &arm.cells {
            let Some((e, _)) = base.cell_like(c).and_then(|bc| change_est(c, bc, true)) else {
                continue;
            };
            let stated = order(&e, &zero);
            match stated {
                Order::Above => raised += 1,
                Order::Below => lowered += 1,
                Order::Indistinguishable => other += 1,
            }
            s.claim(Claim::Verdict {
                stat: Stat::P99,
                a: e,
                b: zero,
                stated,
            });
            changes.push(e);
        }
    }
    if changes.is_empty() {
        return None;
    }
    let settings = d
        .arms
        .iter()
        .filter(|a| !a.is_as_is() && a.error.is_none())
        .count();
    let refs: Vec<&Est> = changes.iter().collect();
    // A setting that lowers one wait's p99 and raises another's is no best setting.
    let mixed = if lowered > 0 {
        format!("{lowered} lowered it (by a setting that raised another), ")
    } else {
        String::new()
    };
    s.push(&format!(
        "No machine setting tried here lowered a wait's p99 without raising another's ({settings} settings, {} changes against as is): {mixed}{raised} raised it (the interval of the change above zero), {other} were {INDISTINGUISHABLE} from no change{}.",
        changes.len(),
        basis_note(&refs)
    ));
    Some(s)
}

/// What advise adds beside its choice `strategy`: the best machine setting for it
/// ([`best_sentence`]) or that none lowered its p99 ([`none_sentence`]), from a tune
/// measurement of that way of waiting; `None` where nothing was judged.
pub fn advise_sentence(strategy: &str, d: &TuneData) -> Option<Sentence> {
    let (lead, s) = match best_sentence(d) {
        Some(s) => (format!("With {strategy}, a machine setting helps: "), s),
        None => (format!("With {strategy}: "), none_sentence(d)?),
    };
    Some(Sentence {
        text: format!("{lead}{}", s.text),
        claims: s.claims,
    })
}
