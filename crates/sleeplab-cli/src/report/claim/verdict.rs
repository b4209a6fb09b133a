//! Verdicts over intervals: a sentence may call one quantile lower, faster, the least or
//! the most only where the 95 % intervals (`stats::quantile_ci`) separate; where they
//! overlap it says so, in the words of [`INDISTINGUISHABLE`], with both intervals.
//!
//! A run of 1200 frames on a noisy VM gave two contenders p99s of 1.93 ms and 32 µs
//! that were the 12th-worst frames of each: whether the first is worse is a question the
//! intervals answer, not the point values (issue 25).

use crate::stats::{Ci, Stat};

/// The words a sentence uses where two intervals overlap.
pub const INDISTINGUISHABLE: &str = "indistinguishable in this run";

/// A value with its 95 % interval; `ci: None` where nothing bounds it (never separated
/// from anything). A fixed value (a threshold, a tolerance) is exact: [`Est::exact`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Est {
    /// The point value.
    pub value: f64,
    /// Its interval.
    pub ci: Option<Ci>,
}

impl Est {
    /// A value with its interval.
    pub fn new(value: f64, ci: Option<Ci>) -> Self {
        Self { value, ci }
    }

    /// A fixed value: its interval is the point itself.
    pub fn exact(value: f64) -> Self {
        Self {
            value,
            ci: Some(Ci::exact(value)),
        }
    }

    /// Whether this estimate is shown to lie below `other` (their intervals separate).
    pub fn below(&self, other: &Est) -> bool {
        crate::stats::ci_below(self.ci, other.ci)
    }
}

/// How a sentence orders two estimates `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `a` lies below `b`: its interval ends before `b`'s begins.
    Below,
    /// `a` lies above `b`.
    Above,
    /// The intervals overlap (or one is unknown): no order is claimed.
    Indistinguishable,
}

/// The order the intervals of `a` and `b` support.
pub fn order(a: &Est, b: &Est) -> Order {
    if a.below(b) {
        Order::Below
    } else if b.below(a) {
        Order::Above
    } else {
        Order::Indistinguishable
    }
}

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
/// clause a sentence uses where it draws no verdict.
pub fn indistinguishable(stat: Stat, a: &Est, b: &Est, fmt: impl Fn(f64) -> String) -> String {
    format!(
        "{INDISTINGUISHABLE}: {stat} {} vs {}",
        with_interval(a, &fmt),
        with_interval(b, &fmt)
    )
}

/// The interval of the difference `a − b` of two estimates: `[a.low − b.high, a.high −
/// b.low]` (an open end stays open; `None` where either is unknown).
pub fn difference(a: &Est, b: &Est) -> Est {
    let ci = match (a.ci, b.ci) {
        (Some(x), Some(y)) => Some(Ci(
            x.0.zip(y.1).map(|(l, h)| l - h),
            x.1.zip(y.0).map(|(h, l)| h - l),
        )),
        _ => None,
    };
    Est::new(a.value - b.value, ci)
}

/// The interval of the median of values each known within its interval: the median of
/// the lower ends to the median of the upper ends (the median rises with each value; an
/// open end counts as unbounded). `None` where any interval is unknown.
pub fn median_interval(cis: &[Option<Ci>]) -> Option<Ci> {
    let ends: Option<Vec<(f64, f64)>> = cis
        .iter()
        .map(|c| {
            c.map(|c| {
                (
                    c.0.unwrap_or(f64::NEG_INFINITY),
                    c.1.unwrap_or(f64::INFINITY),
                )
            })
        })
        .collect();
    let ends = ends?;
    let lows: Vec<f64> = ends.iter().map(|e| e.0).collect();
    let highs: Vec<f64> = ends.iter().map(|e| e.1).collect();
    let (l, h) = (super::median(&lows)?, super::median(&highs)?);
    Some(Ci(l.is_finite().then_some(l), h.is_finite().then_some(h)))
}

/// Checks a [`super::Claim::Verdict`]: an order needs separated intervals, no order
/// needs overlapping ones and the words that say so.
pub(super) fn check_verdict(
    text: &str,
    stat: Stat,
    a: &Est,
    b: &Est,
    stated: Order,
) -> Result<(), String> {
    let truth = order(a, b);
    match stated {
        Order::Below | Order::Above if truth != stated => Err(format!(
            "{stat} {} vs {} stated {stated:?} over intervals {:?} and {:?} that do not separate",
            a.value, b.value, a.ci, b.ci
        )),
        Order::Indistinguishable if truth != Order::Indistinguishable => Err(format!(
            "{stat} {} vs {} called indistinguishable, but the intervals separate ({truth:?})",
            a.value, b.value
        )),
        Order::Indistinguishable if !text.contains(INDISTINGUISHABLE) => Err(format!(
            "overlapping {stat} intervals and the text does not say \"{INDISTINGUISHABLE}\""
        )),
        _ => Ok(()),
    }
}

/// Checks that the `chosen` of a ranking over `intervals` is separated from every
/// other in the direction of `most` (above them) or least (below them), unless the text
/// says the ranking is [`INDISTINGUISHABLE`].
pub(super) fn check_ranked(
    text: &str,
    most: bool,
    chosen: usize,
    among: &[f64],
    intervals: &[Option<Ci>],
) -> Result<(), String> {
    if intervals.is_empty() {
        return Ok(());
    }
    if intervals.len() != among.len() {
        return Err(format!(
            "{} intervals for {} ranked values",
            intervals.len(),
            among.len()
        ));
    }
    let me = intervals[chosen];
    let clear = intervals.iter().enumerate().all(|(j, other)| {
        j == chosen
            || if most {
                crate::stats::ci_below(*other, me)
            } else {
                crate::stats::ci_below(me, *other)
            }
    });
    if clear || text.contains(INDISTINGUISHABLE) {
        Ok(())
    } else {
        Err(format!(
            "#{chosen} of {among:?} ranked the {} over intervals {intervals:?} that do not separate it",
            if most { "most" } else { "least" }
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::units::ns;

    #[test]
    fn orders_follow_the_intervals_not_the_values() {
        let a = Est::new(3_900.0, Some(Ci(Some(2_100.0), Some(6_000.0))));
        let b = Est::new(5_000.0, Some(Ci(Some(3_300.0), Some(9_400.0))));
        assert_eq!(order(&a, &b), Order::Indistinguishable);
        let c = Est::new(50_000.0, Some(Ci(Some(40_000.0), None)));
        assert_eq!((order(&a, &c), order(&c, &a)), (Order::Below, Order::Above));
        assert_eq!(order(&a, &Est::new(1.0, None)), Order::Indistinguishable);
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
        let a = Est::new(68.0, Some(Ci(Some(64.0), Some(72.0))));
        let b = Est::new(18.0, Some(Ci(Some(17.0), Some(19.0))));
        let d = difference(&a, &b);
        assert_eq!((d.value, d.ci), (50.0, Some(Ci(Some(45.0), Some(55.0)))));
        let open = Est::new(5.0, Some(Ci(Some(4.0), None)));
        assert_eq!(difference(&open, &b).ci, Some(Ci(Some(-15.0), None)));
        assert_eq!(difference(&a, &Est::new(1.0, None)).ci, None);
        let m = median_interval(&[
            Some(Ci(Some(1.0), Some(3.0))),
            Some(Ci(Some(2.0), None)),
            Some(Ci(Some(0.0), Some(5.0))),
        ]);
        assert_eq!(m, Some(Ci(Some(1.0), Some(5.0))));
        assert_eq!(
            median_interval(&[Some(Ci(Some(1.0), None))]),
            Some(Ci(Some(1.0), None))
        );
        assert_eq!(median_interval(&[None]), None);
    }
}
