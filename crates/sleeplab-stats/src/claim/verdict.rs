//! Verdicts over intervals: a sentence may call one value lower, faster, the least or
//! the most only where the 95 % intervals separate and rest on a basis that decides
//! (intervals over units, `stats::units`, or a fixed threshold: [`super::basis`]); where
//! they overlap it says so, in the words of [`INDISTINGUISHABLE`], with both intervals;
//! it calls two values the same only where the interval of their difference lies within
//! a stated margin (two one-sided tests).
//!
//! A run of 1200 frames on a noisy VM gave two contenders p99s of 1.93 ms and 32 µs
//! that were the 12th-worst frames of each: whether the first is worse is a question the
//! intervals answer, not the point values.

use super::basis::{
    BY_POINT_VALUE, Basis, Est, INDISTINGUISHABLE, Order, WITHIN_RUN, basis_note, check_deciding,
    check_stated_basis, order, order_by_point,
};
use crate::stats::{Ci, Stat};

/// An interval in the prose style of `fmt` (e.g. `units::ns`): `[2.1–6 µs]` (one unit
/// written once), `[900 µs–1.2 ms]`, `[≥ 2.1 µs]` (open above), `[≤ 6 µs]` (open below),
/// `[–]` (unknown).
pub fn interval_text(ci: Option<Ci>, fmt: impl Fn(f64) -> String) -> String {
    match ci {
        Some(Ci(Some(l), Some(h))) => {
            let (a, b) = (fmt(l), fmt(h));
            match (a.rsplit_once(' '), b.rsplit_once(' ')) {
                (Some((av, au)), Some((_, bu))) if au == bu => format!("[{av}–{b}]"),
                _ => format!("[{a}–{b}]"),
            }
        }
        Some(Ci(Some(l), None)) => format!("[≥ {}]", fmt(l)),
        Some(Ci(None, Some(h))) => format!("[≤ {}]", fmt(h)),
        _ => "[–]".into(),
    }
}

/// A value and its interval: `3.9 µs [2.1–6 µs]`.
pub fn with_interval(e: &Est, fmt: impl Fn(f64) -> String) -> String {
    format!("{} {}", fmt(e.value), interval_text(e.ci, fmt))
}

/// `indistinguishable in this run: p99 3.9 µs [2.1–6 µs] vs 5 µs [3.3–9.4 µs]`: the
/// clause a sentence uses where it draws no verdict, with the reason where it is the
/// basis ([`basis_note`]: too few units, or none in the result).
pub fn indistinguishable(stat: Stat, a: &Est, b: &Est, fmt: impl Fn(f64) -> String) -> String {
    format!(
        "{INDISTINGUISHABLE}: {stat} {} vs {}{}",
        with_interval(a, &fmt),
        with_interval(b, &fmt),
        basis_note(&[a, b])
    )
}

/// The interval of the difference `a − b` of two estimates: `[a.low − b.high, a.high −
/// b.low]` (an open end stays open; `None` where either is unknown), on the weaker of
/// their bases.
pub fn difference(a: &Est, b: &Est) -> Est {
    let ci = match (a.ci, b.ci) {
        (Some(x), Some(y)) => Some(Ci(
            x.0.zip(y.1).map(|(l, h)| l - h),
            x.1.zip(y.0).map(|(h, l)| h - l),
        )),
        _ => None,
    };
    Est {
        value: a.value - b.value,
        ci,
        basis: a.basis.and(b.basis),
    }
}

/// Whether `a` and `b` are shown to be the same within `margin` (absolute): both rest
/// on a basis that decides (not a point value) and the interval of `a − b` lies inside
/// ±`margin` (two one-sided tests). What [`super::Claim::Equivalent`] checks.
pub fn equivalent(a: &Est, b: &Est, margin: f64) -> bool {
    let decides = |e: &Est| e.basis.decides();
    decides(a)
        && decides(b)
        && matches!(difference(a, b).ci, Some(Ci(Some(l), Some(h))) if -margin <= l && h <= margin)
}

/// The median of estimates each known within its interval: the median of the values,
/// its interval from the median of the lower ends to the median of the upper ends (the
/// median rises with each value; an open end counts as unbounded; `None` where any
/// interval is unknown), on the weakest of their bases. `None` for no estimates.
pub fn median_est(ests: &[Est]) -> Option<Est> {
    let value = super::median(&ests.iter().map(|e| e.value).collect::<Vec<_>>())?;
    let basis = ests.iter().map(|e| e.basis).reduce(Basis::and)?;
    let ends: Option<Vec<(f64, f64)>> = ests
        .iter()
        .map(|e| {
            e.ci.map(|c| {
                (
                    c.0.unwrap_or(f64::NEG_INFINITY),
                    c.1.unwrap_or(f64::INFINITY),
                )
            })
        })
        .collect();
    let ci = ends.and_then(|ends| {
        let lows: Vec<f64> = ends.iter().map(|e| e.0).collect();
        let highs: Vec<f64> = ends.iter().map(|e| e.1).collect();
        let (l, h) = (super::median(&lows)?, super::median(&highs)?);
        Some(Ci(l.is_finite().then_some(l), h.is_finite().then_some(h)))
    });
    Some(Est { value, ci, basis })
}

/// Checks a [`super::Claim::Verdict`]: an order needs both sides on a basis that
/// decides (a point value only "by point value", another run's units only with the
/// within-run words) and intervals that separate; no order needs the words that say so,
/// and the reason where it is the basis.
pub(super) fn check_verdict(
    text: &str,
    stat: Stat,
    a: &Est,
    b: &Est,
    stated: Order,
) -> Result<(), String> {
    let by_point = a.basis == Basis::Point || b.basis == Basis::Point;
    if stated == Order::Indistinguishable {
        if !text.contains(INDISTINGUISHABLE) {
            return Err(format!(
                "{stat} {} vs {} drew no verdict and the text does not say \"{INDISTINGUISHABLE}\"",
                a.value, b.value
            ));
        }
        let truth = order(a, b);
        if truth != Order::Indistinguishable {
            return Err(format!(
                "{stat} {} vs {} called indistinguishable, but the intervals separate ({truth:?})",
                a.value, b.value
            ));
        }
        return check_stated_basis(text, a).and_then(|_| check_stated_basis(text, b));
    }
    check_deciding(text, a)?;
    check_deciding(text, b)?;
    let truth = if by_point {
        order_by_point(a, b)
    } else {
        order(a, b)
    };
    if truth != stated {
        return Err(format!(
            "{stat} {} vs {} stated {stated:?} over intervals {:?} and {:?} that do not separate",
            a.value, b.value, a.ci, b.ci
        ));
    }
    Ok(())
}

/// Checks that the `chosen` of a ranking is separated from every other in the direction
/// of `most` (above them) or least (below them) by `intervals` (on bases that decide),
/// unless the text says the ranking is [`INDISTINGUISHABLE`]; a ranking without
/// intervals orders point values and must say [`BY_POINT_VALUE`].
pub(super) fn check_ranked(
    text: &str,
    most: bool,
    chosen: usize,
    among: &[f64],
    intervals: &[Est],
) -> Result<(), String> {
    if intervals.is_empty() {
        return if text.contains(BY_POINT_VALUE) {
            Ok(())
        } else {
            Err(format!(
                "a ranking of point values {among:?} and the text does not say \"{BY_POINT_VALUE}\""
            ))
        };
    }
    if intervals.len() != among.len() {
        return Err(format!(
            "{} intervals for {} ranked values",
            intervals.len(),
            among.len()
        ));
    }
    let me = &intervals[chosen];
    let clear = intervals.iter().enumerate().all(|(j, other)| {
        j == chosen
            || if most {
                other.below(me)
            } else {
                me.below(other)
            }
    });
    let within = intervals
        .iter()
        .any(|e| matches!(e.basis, Basis::WithinRun { .. }));
    if clear && within && !text.contains(WITHIN_RUN) {
        return Err(format!(
            "a ranking across runs on within-run intervals and the text does not say \"{WITHIN_RUN}\""
        ));
    }
    if clear || text.contains(INDISTINGUISHABLE) {
        Ok(())
    } else {
        Err(format!(
            "#{chosen} of {among:?} ranked the {} over intervals {:?} that do not separate it",
            if most { "most" } else { "least" },
            intervals
                .iter()
                .map(|e| (e.ci, e.basis))
                .collect::<Vec<_>>()
        ))
    }
}

/// Checks a [`super::Claim::Equivalent`]: both sides decide, the margin is stated, and
/// the interval of `a − b` lies within ±`margin` (closed at both ends).
pub(super) fn check_equivalent(
    text: &str,
    stat: Stat,
    a: &Est,
    b: &Est,
    margin: f64,
    shown: &str,
) -> Result<(), String> {
    check_deciding(text, a)?;
    check_deciding(text, b)?;
    if !text.contains(shown) {
        return Err(format!("the margin {shown} not stated"));
    }
    if equivalent(a, b, margin) {
        Ok(())
    } else {
        Err(format!(
            "{stat} {} and {} called the same within ±{margin} on {:?} and {:?}, but their difference's interval is {:?}",
            a.value,
            b.value,
            a.basis,
            b.basis,
            difference(a, b).ci
        ))
    }
}

/// Checks that a change of `stat` from `from` to `to`, stated as `stated`, is backed
/// among `claims`: a rise or a fall by a verdict of the same order over the same values
/// (or the text says [`BY_POINT_VALUE`]); no change by an equivalence over the same values.
pub(super) fn check_change_backed(
    text: &str,
    claims: &[super::Claim],
    stat: Stat,
    from: f64,
    to: f64,
    stated: super::Direction,
) -> Result<(), String> {
    use super::{Claim, Direction};
    let same = |a: &Est, b: &Est| a.value == from && b.value == to;
    let backed = match stated {
        Direction::Same => claims.iter().any(
            |c| matches!(c, Claim::Equivalent { stat: s, a, b, .. } if *s == stat && same(a, b)),
        ),
        up_or_down => {
            let want = if up_or_down == Direction::Up {
                Order::Below
            } else {
                Order::Above
            };
            text.contains(BY_POINT_VALUE)
                || claims.iter().any(|c| {
                    matches!(c, Claim::Verdict { stat: s, a, b, stated: o }
                        if *s == stat && same(a, b) && *o == want)
                })
        }
    };
    if backed {
        Ok(())
    } else if stated == Direction::Same {
        Err(format!(
            "a {stat} of {from} → {to} called unchanged without an equivalence within a stated margin"
        ))
    } else {
        Err(format!(
            "a {stat} change {from} → {to} stated without intervals that separate"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::units::ns;

    use crate::stats::Unit;

    fn est(v: f64, ci: Option<Ci>) -> Est {
        Est::units(v, ci, Unit::Block, 20)
    }

    #[test]
    fn orders_follow_the_intervals_not_the_values() {
        let a = est(3_900.0, Some(Ci(Some(2_100.0), Some(6_000.0))));
        let b = est(5_000.0, Some(Ci(Some(3_300.0), Some(9_400.0))));
        assert_eq!(order(&a, &b), Order::Indistinguishable);
        let c = est(50_000.0, Some(Ci(Some(40_000.0), None)));
        assert_eq!((order(&a, &c), order(&c, &a)), (Order::Below, Order::Above));
        assert_eq!(order(&a, &est(1.0, None)), Order::Indistinguishable);
        assert_eq!(order(&a, &Est::exact(6_500.0)), Order::Below);
        assert_eq!(
            indistinguishable(Stat::P99, &a, &b, ns),
            "indistinguishable in this run: p99 3.9 µs [2.1–6 µs] vs 5 µs [3.3–9.4 µs]"
        );
        assert_eq!(interval_text(c.ci, ns), "[≥ 40 µs]");
        assert_eq!(
            interval_text(Some(Ci(Some(900_000.0), Some(1.2e6))), ns),
            "[900 µs–1.2 ms]"
        );
        assert_eq!(interval_text(Some(Ci(None, Some(6.0))), ns), "[≤ 6 ns]");
        assert_eq!(interval_text(None, ns), "[–]");
    }

    #[test]
    fn differences_and_medians_of_intervals() {
        let a = est(68.0, Some(Ci(Some(64.0), Some(72.0))));
        let b = est(18.0, Some(Ci(Some(17.0), Some(19.0))));
        let d = difference(&a, &b);
        assert_eq!((d.value, d.ci), (50.0, Some(Ci(Some(45.0), Some(55.0)))));
        let open = est(5.0, Some(Ci(Some(4.0), None)));
        assert_eq!(difference(&open, &b).ci, Some(Ci(Some(-15.0), None)));
        assert_eq!(difference(&a, &est(1.0, None)).ci, None);
        assert_eq!(difference(&a, &Est::pooled(1.0, None)).basis, Basis::Pooled);
        let m = median_est(&[
            est(2.0, Some(Ci(Some(1.0), Some(3.0)))),
            est(3.0, Some(Ci(Some(2.0), None))),
            Est::units(1.0, Some(Ci(Some(0.0), Some(5.0))), Unit::Block, 9),
        ])
        .unwrap();
        assert_eq!((m.value, m.ci), (2.0, Some(Ci(Some(1.0), Some(5.0)))));
        assert_eq!(
            m.basis,
            Basis::Units {
                unit: Unit::Block,
                n: 9
            }
        );
        assert_eq!(
            median_est(&[est(1.5, Some(Ci(Some(1.0), None)))])
                .unwrap()
                .ci,
            Some(Ci(Some(1.0), None))
        );
        assert_eq!(median_est(&[est(1.0, None)]).unwrap().ci, None);
        assert_eq!(median_est(&[]), None);
    }
}
