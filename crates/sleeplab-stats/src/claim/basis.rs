//! What an estimate's interval rests on, and the order two estimates support.
//!
//! The samples of one block, round or run share its moment, so an interval from their
//! pooled samples is far too narrow to decide anything (`stats::units`). An [`Est`]
//! therefore carries its [`Basis`]: an interval over units decides a verdict; one over
//! the units of its own run decides between two runs only where the sentence says
//! [`WITHIN_RUN`]; a fixed value (a threshold) is exact; a pooled interval describes and
//! decides nothing; a bare point value decides only where the sentence says
//! [`BY_POINT_VALUE`].

use crate::stats::{Ci, MIN_UNITS, Stat, Summary, Unit, UnitIntervals};

/// The words a sentence uses where two intervals overlap (or where no interval decides).
pub const INDISTINGUISHABLE: &str = "indistinguishable in this run";

/// The words a sentence uses where it orders bare point values.
pub const BY_POINT_VALUE: &str = "by point value";

/// The words beside every verdict between two runs judged by each run's own units.
pub const WITHIN_RUN: &str = "within-run intervals; run-to-run variation not included";

/// The words beside an estimate whose result holds no intervals over units.
pub const NO_UNITS: &str = "no intervals over units";

/// What an interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// An interval over `n` units of one run (`stats::units`): decides.
    Units {
        /// What a unit is.
        unit: Unit,
        /// How many.
        n: u64,
    },
    /// An interval over `n` units of its own run, set against another run's: decides
    /// only where the sentence says [`WITHIN_RUN`].
    WithinRun {
        /// What a unit is.
        unit: Unit,
        /// How many.
        n: u64,
    },
    /// A fixed value: a threshold, a tolerance, zero.
    Exact,
    /// An interval from pooled samples: describes a run, decides nothing.
    Pooled,
    /// A point value without an interval: decides only "by point value".
    Point,
}

impl Basis {
    /// Whether an interval on this basis can decide a verdict.
    pub fn decides(self) -> bool {
        matches!(
            self,
            Basis::Units { .. } | Basis::WithinRun { .. } | Basis::Exact
        )
    }

    /// The basis of a value computed from two (a difference): the weaker of the two
    /// (point below pooled below within-run below units below exact; of two unit bases,
    /// the fewer units).
    pub fn and(self, other: Basis) -> Basis {
        use Basis::*;
        match (self, other) {
            (Point, _) | (_, Point) => Point,
            (Pooled, _) | (_, Pooled) => Pooled,
            (Exact, b) | (b, Exact) => b,
            (Units { unit, n }, Units { n: m, .. }) => Units { unit, n: n.min(m) },
            (WithinRun { unit, n }, Units { n: m, .. } | WithinRun { n: m, .. })
            | (Units { unit, n }, WithinRun { n: m, .. }) => WithinRun { unit, n: n.min(m) },
        }
    }
}

/// A value with its 95 % interval and what the interval rests on; `ci: None` where
/// nothing bounds it (never separated from anything).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Est {
    /// The point value.
    pub value: f64,
    /// Its interval.
    pub ci: Option<Ci>,
    /// What the interval rests on.
    pub basis: Basis,
}

impl Est {
    /// A value with its interval over `n` units.
    pub fn units(value: f64, ci: Option<Ci>, unit: Unit, n: u64) -> Self {
        Self {
            value,
            ci,
            basis: Basis::Units { unit, n },
        }
    }

    /// A value with its interval over its result's units where the result holds them
    /// (`units`: `(interval, unit, how many)`), else with its pooled interval
    /// (description only).
    pub fn over(value: f64, units: Option<(Option<Ci>, Unit, u64)>, pooled: Option<Ci>) -> Self {
        match units {
            Some((ci, unit, n)) => Self::units(value, ci, unit, n),
            None => Self::pooled(value, pooled),
        }
    }

    /// `stat` of the sample `s` summarizes, with its interval over `units` where the
    /// result holds them, else with its pooled interval (description only); `None` where
    /// the sample cannot resolve the statistic.
    pub fn of(s: &Summary, units: Option<&UnitIntervals>, stat: Stat) -> Option<Self> {
        let value = s.get(stat)?;
        Some(Self::over(
            value,
            units.map(|u| (u.ci(stat), u.unit, u.units)),
            s.ci(stat),
        ))
    }

    /// A value with an interval from pooled samples: it describes and decides nothing.
    pub fn pooled(value: f64, ci: Option<Ci>) -> Self {
        Self {
            value,
            ci,
            basis: Basis::Pooled,
        }
    }

    /// A fixed value: its interval is the point itself.
    pub fn exact(value: f64) -> Self {
        Self {
            value,
            ci: Some(Ci::exact(value)),
            basis: Basis::Exact,
        }
    }

    /// A bare point value.
    pub fn point(value: f64) -> Self {
        Self {
            value,
            ci: None,
            basis: Basis::Point,
        }
    }

    /// The same interval over units, set against another run's (see [`WITHIN_RUN`]).
    pub fn within_run(self) -> Self {
        let basis = match self.basis {
            Basis::Units { unit, n } => Basis::WithinRun { unit, n },
            b => b,
        };
        Self { basis, ..self }
    }

    /// Whether this estimate is shown to lie below `other`: both rest on a basis that
    /// decides and their intervals separate.
    pub fn below(&self, other: &Est) -> bool {
        self.basis.decides() && other.basis.decides() && crate::stats::ci_below(self.ci, other.ci)
    }
}

/// How a sentence orders two estimates `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `a` lies below `b`: its interval ends before `b`'s begins.
    Below,
    /// `a` lies above `b`.
    Above,
    /// The intervals overlap, one is unknown, or one rests on a basis that decides
    /// nothing: no order is claimed.
    Indistinguishable,
}

/// The order the intervals of `a` and `b` support (none unless both bases decide).
pub fn order(a: &Est, b: &Est) -> Order {
    if a.below(b) {
        Order::Below
    } else if b.below(a) {
        Order::Above
    } else {
        Order::Indistinguishable
    }
}

/// The order of the point values alone, for a sentence that says [`BY_POINT_VALUE`].
pub fn order_by_point(a: &Est, b: &Est) -> Order {
    if a.value < b.value {
        Order::Below
    } else if a.value > b.value {
        Order::Above
    } else {
        Order::Indistinguishable
    }
}

/// Why no interval decides between `ests`, for the text beside "indistinguishable":
/// the units too few for an interval (` (4 rounds; an interval over units needs 8)`),
/// units enough but their samples too few to bound the statistic (` (8 rounds; their
/// samples too few to bound it)`), or a result without units (` (no intervals over
/// units in this result)`); empty where every one has an interval over units.
pub fn basis_note(ests: &[&Est]) -> String {
    let (mut few, mut thin): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let mut pooled = false;
    for e in ests {
        match e.basis {
            Basis::Units { unit, n } | Basis::WithinRun { unit, n } if e.ci.is_none() => {
                let list = if n < MIN_UNITS { &mut few } else { &mut thin };
                let c = unit.count(n);
                if !list.contains(&c) {
                    list.push(c);
                }
            }
            Basis::Pooled => pooled = true,
            _ => {}
        }
    }
    let mut parts = Vec::new();
    if !few.is_empty() {
        parts.push(format!(
            "{}; an interval over units needs {MIN_UNITS}",
            few.join(" and ")
        ));
    }
    if !thin.is_empty() {
        parts.push(format!(
            "{}; their samples too few to bound it",
            thin.join(" and ")
        ));
    }
    if pooled {
        parts.push(format!("{NO_UNITS} in this result"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// Checks that a sentence that draws no verdict over `e` says why where the reason is
/// its basis: the units' count where they were too few, [`NO_UNITS`] for a pooled one.
pub(super) fn check_stated_basis(text: &str, e: &Est) -> Result<(), String> {
    match e.basis {
        Basis::Units { unit, n } | Basis::WithinRun { unit, n }
            if e.ci.is_none() && !text.contains(&unit.count(n)) =>
        {
            Err(format!(
                "no interval over {} and the text does not say so",
                unit.count(n)
            ))
        }
        Basis::Pooled if !text.contains(NO_UNITS) => Err(format!(
            "a pooled interval ({}) and the text does not say \"{NO_UNITS}\"",
            e.value
        )),
        _ => Ok(()),
    }
}

/// Checks that `e` may decide a verdict in `text`: not pooled; a point value only "by
/// point value"; another run's units only with [`WITHIN_RUN`] said.
pub(super) fn check_deciding(text: &str, e: &Est) -> Result<(), String> {
    match e.basis {
        Basis::Pooled => Err(format!("a verdict on {} rests on pooled samples", e.value)),
        Basis::Point if !text.contains(BY_POINT_VALUE) => Err(format!(
            "a verdict on the point value {} and the text does not say \"{BY_POINT_VALUE}\"",
            e.value
        )),
        Basis::WithinRun { .. } if !text.contains(WITHIN_RUN) => Err(format!(
            "a verdict between runs on within-run intervals and the text does not say \"{WITHIN_RUN}\""
        )),
        _ => Ok(()),
    }
}

/// The walk's oracle (`report/verdicts.rs`), independent of [`super::Sentence::check`]:
/// every verdict that orders (and every equivalence, and every ranking said to be clear)
/// of `s` rests on intervals over units or on exact thresholds; on another run's units
/// only where the text says [`WITHIN_RUN`]; on a bare point value only where it says
/// [`BY_POINT_VALUE`]; never on pooled samples.
pub fn rests_on_units(s: &super::Sentence) -> Result<(), String> {
    use super::Claim;
    let t = &s.text;
    let ok = |e: &Est, point_allowed: bool| match e.basis {
        Basis::Units { .. } | Basis::Exact => Ok(()),
        Basis::WithinRun { .. } if t.contains(WITHIN_RUN) => Ok(()),
        Basis::Point if point_allowed && t.contains(BY_POINT_VALUE) => Ok(()),
        b => Err(format!("a verdict on {} rests on {b:?} in: {t}", e.value)),
    };
    for c in &s.claims {
        match c {
            Claim::Verdict { a, b, stated, .. } if *stated != Order::Indistinguishable => {
                ok(a, true)?;
                ok(b, true)?;
            }
            Claim::Equivalent { a, b, .. } => {
                ok(a, false)?;
                ok(b, false)?;
            }
            Claim::Rank { intervals, .. } if !t.contains(INDISTINGUISHABLE) => {
                for e in intervals {
                    ok(e, false)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_deciding_bases_order_and_the_weaker_basis_wins() {
        let ci = |l: f64, h: f64| Some(Ci(Some(l), Some(h)));
        let u = Est::units(1.0, ci(0.5, 1.5), Unit::Block, 20);
        let v = Est::units(5.0, ci(4.0, 6.0), Unit::Block, 12);
        assert_eq!(order(&u, &v), Order::Below);
        assert_eq!(
            order(&u, &Est::pooled(5.0, ci(4.0, 6.0))),
            Order::Indistinguishable
        );
        assert_eq!(order(&u, &Est::point(5.0)), Order::Indistinguishable);
        assert_eq!(order_by_point(&u, &Est::point(5.0)), Order::Below);
        assert_eq!(order(&u.within_run(), &Est::exact(3.0)), Order::Below);
        assert_eq!(
            u.basis.and(v.basis),
            Basis::Units {
                unit: Unit::Block,
                n: 12
            }
        );
        assert_eq!(u.basis.and(Basis::Exact), u.basis);
        assert_eq!(u.basis.and(Basis::Pooled), Basis::Pooled);
        assert_eq!(
            u.within_run().basis.and(v.basis),
            Basis::WithinRun {
                unit: Unit::Block,
                n: 12
            }
        );
        let few = Est::units(1.0, None, Unit::Round, 4);
        assert_eq!(
            basis_note(&[&few, &few, &u]),
            " (4 rounds; an interval over units needs 8)"
        );
        // Units enough, but no interval: the note never blames their count.
        let thin = Est::units(1.0, None, Unit::Round, 8);
        assert_eq!(
            basis_note(&[&thin, &u]),
            " (8 rounds; their samples too few to bound it)"
        );
        assert_eq!(
            basis_note(&[&Est::pooled(1.0, None)]),
            " (no intervals over units in this result)"
        );
        assert_eq!(basis_note(&[&u, &Est::exact(2.0)]), "");
    }
}
