//! The checker against each kind of untruth, and the words against the numbers.
use super::*;
use crate::stats::{Ci, Unit};
use proptest::prelude::*;

/// An estimate over 20 blocks.
fn est(v: f64, ci: Option<Ci>) -> Est {
    Est::units(v, ci, Unit::Block, 20)
}

/// A claim that the p99 went from `from` to `to`, worded with "grew" (2 % tolerance),
/// its direction `stated`.
fn p99_change(from: f64, to: f64, stated: Direction) -> Claim {
    Claim::Change {
        stat: Stat::P99,
        from,
        to,
        verb: Verb::Grew,
        tolerance: 0.02,
        stated,
    }
}

/// A claim that the second of `a` and `b` has the most (by signed value), ranked over
/// their intervals.
fn second_has_the_most(a: Est, b: Est) -> Claim {
    Claim::Rank {
        extreme: Extreme::Most,
        by: RankBy::Signed,
        chosen: 1,
        among: vec![a.value, b.value],
        intervals: vec![a, b],
    }
}

/// A claim that the p99 of `a` stands to that of `b` as `stated`.
fn p99_verdict(a: Est, b: Est, stated: Order) -> Claim {
    Claim::Verdict {
        stat: Stat::P99,
        a,
        b,
        stated,
    }
}

#[test]
fn medians_are_true_medians() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    // Even n: the mean of the two middle values, not the upper one.
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[]), None);
}

#[test]
fn extremes_by_sign_and_by_size() {
    let v = [5.0, -20.0, 1.0];
    assert_eq!(extreme_index(&v, Extreme::Least, RankBy::Signed), Some(1));
    assert_eq!(extreme_index(&v, Extreme::Least, RankBy::Size), Some(2));
    assert_eq!(extreme_index(&v, Extreme::Most, RankBy::Size), Some(1));
}

#[test]
fn the_checker_catches_each_kind_of_untruth() {
    let bad = |text: &str, c: Claim| {
        let mut s = Sentence::new(text);
        s.claim(c);
        assert!(s.check().is_err(), "{text}");
    };
    // A threefold shrink called growth (a past caption: "grew … least for select (×0.33)").
    bad(
        "the p99 grew least for select (3.26 ms → 1.09 ms)",
        p99_change(3.26e6, 1.09e6, Direction::Up),
    );
    // "changed least" sorted by signed gain.
    bad(
        "timerfd changed least",
        Claim::Rank {
            extreme: Extreme::Least,
            by: RankBy::Size,
            chosen: 0,
            among: vec![-11.6, 0.3, 40.0],
            intervals: Vec::new(),
        },
    );
    // One mechanism both most and least.
    bad(
        "grew most for std-sleep and least for std-sleep",
        Claim::Rank {
            extreme: Extreme::Most,
            by: RankBy::Signed,
            chosen: 0,
            among: vec![2.0],
            intervals: Vec::new(),
        },
    );
    // The upper median of an even count.
    bad(
        "adds ~67.2 µs",
        Claim::Median {
            of: vec![60.0, 64.0, 65.2, 67.2],
            value: 67.2,
        },
    );
    // A p99 of two samples.
    bad(
        "p99 189 µs (n = 2)",
        Claim::Quote {
            stat: Stat::P99,
            n: 2,
            shown: "189 µs".into(),
        },
    );
    // A small sample not stated.
    bad(
        "a median 189 µs",
        Claim::Quote {
            stat: Stat::Median,
            n: 2,
            shown: "189 µs".into(),
        },
    );
    // A ratio of medians in a sentence that names no statistic (a past caption: the short
    // caption's 4.05× of medians beside the finding's 4.3× of means).
    bad(
        "timerfd was 4.0× faster",
        Claim::Ratio {
            stat: Stat::Median,
            of: 4.05,
            to: 1.0,
            shown: "4.0×".into(),
        },
    );
    bad(
        "timerfd was 4.0× faster by mean",
        Claim::Ratio {
            stat: Stat::Mean,
            of: 4.3,
            to: 1.0,
            shown: "4.0×".into(),
        },
    );
    // An unstated floor.
    bad(
        "the first call took over 3× the p99",
        Claim::Threshold {
            shown: "100 µs".into(),
        },
    );
    // A verdict read off overlapping intervals ("beaten on both by std-sleep",
    // p99 1.93 ms against 32 µs, each the 12th-worst of 1200 frames).
    let wide = est(1.93e6, Some(Ci(Some(30_000.0), Some(3.9e6))));
    let narrow = est(32_000.0, Some(Ci(Some(20_000.0), Some(2.5e6))));
    bad(
        "std-sleep has a lower p99",
        p99_verdict(narrow, wide, Order::Below),
    );
    // Overlap, stated as such but without the words.
    bad(
        "p99 32 µs vs 1.93 ms",
        p99_verdict(narrow, wide, Order::Indistinguishable),
    );
    // Separated intervals called indistinguishable.
    bad(
        "indistinguishable in this run",
        p99_verdict(Est::exact(1.0), Est::exact(2.0), Order::Indistinguishable),
    );
    // A p99 said to grow with no verdict beside the change.
    bad(
        "the p99 grew from 3.9 µs to 5 µs",
        p99_change(3_900.0, 5_000.0, Direction::Up),
    );
    // The least of medians whose intervals overlap, said plainly.
    bad(
        "the cheapest is nanosleep",
        Claim::Rank {
            extreme: Extreme::Least,
            by: RankBy::Signed,
            chosen: 0,
            among: vec![50.0, 51.0],
            intervals: vec![
                est(50.0, Some(Ci(Some(49.0), Some(52.0)))),
                est(51.0, Some(Ci(Some(50.0), Some(53.0)))),
            ],
        },
    );
    // A call that never blocked, called the cheapest sleep.
    bad(
        "the cheapest short sleep is timerfd",
        Claim::Blocking {
            name: "timerfd".into(),
            voluntary_csw_per_call: 0.0,
            called_a_sleep: true,
        },
    );
}

#[test]
fn verdicts_hold_where_intervals_separate_and_overlap_is_said() {
    let a = est(3_900.0, Some(Ci(Some(2_100.0), Some(6_000.0))));
    let b = est(5_000.0, Some(Ci(Some(3_300.0), Some(9_400.0))));
    let c = est(50_000.0, Some(Ci(Some(40_000.0), None)));
    let mut s = Sentence::new(format!(
        "p99 {}",
        indistinguishable(Stat::P99, &a, &b, crate::output::units::ns)
    ));
    s.claim(p99_verdict(a, b, Order::Indistinguishable));
    assert_eq!(s.check(), Ok(()));
    // A change backed by its verdict passes; the ranking of separated intervals too.
    let mut s = Sentence::new("the p99 grew from 3.9 µs to 50 µs");
    s.claim(p99_change(a.value, c.value, Direction::Up));
    assert!(s.check().is_err());
    s.claim(p99_verdict(a, c, Order::Below));
    assert_eq!(s.check(), Ok(()));
    s.claim(second_has_the_most(a, c));
    assert_eq!(s.check(), Ok(()));
    // The same ranking over overlapping intervals passes only when the text says so.
    let mut s = Sentence::new("b has the most");
    s.claim(second_has_the_most(a, b));
    assert!(s.check().is_err());
    s.push(", indistinguishable in this run from a");
    assert_eq!(s.check(), Ok(()));
}

/// What a verdict, a "no change" and a ranking may rest on: intervals over units or a
/// threshold; pooled samples never, point values only where the text says so, another
/// run's units only with the within-run words, too few units only as "indistinguishable"
/// with their count.
#[test]
fn verdicts_rest_on_units_thresholds_or_stated_point_values() {
    let ci = |l: f64, h: f64| Some(Ci(Some(l), Some(h)));
    let verdict = |text: &str, a: Est, b: Est, stated: Order| {
        let mut s = Sentence::new(text);
        s.claim(p99_verdict(a, b, stated));
        s.check()
    };
    let low = est(10.0, ci(9.0, 11.0));
    let high = est(50.0, ci(45.0, 55.0));
    assert_eq!(verdict("lower", low, high, Order::Below), Ok(()));
    // The same intervals from pooled samples decide nothing.
    let pooled = Est::pooled(10.0, ci(9.0, 11.0));
    assert!(verdict("lower", pooled, high, Order::Below).is_err());
    assert!(verdict(INDISTINGUISHABLE, pooled, high, Order::Indistinguishable).is_err());
    let said = format!("{INDISTINGUISHABLE} ({NO_UNITS} in this result)");
    assert_eq!(
        verdict(&said, pooled, high, Order::Indistinguishable),
        Ok(())
    );
    // A point value decides only "by point value".
    let (p, q) = (Est::point(1.0), Est::point(2.0));
    assert!(verdict("less CPU", p, q, Order::Below).is_err());
    assert_eq!(
        verdict("less CPU by point value", p, q, Order::Below),
        Ok(())
    );
    assert!(verdict("more CPU by point value", p, q, Order::Above).is_err());
    // Two runs' own units decide only with the within-run words.
    let (a, b) = (low.within_run(), high.within_run());
    assert!(verdict("faster", a, b, Order::Below).is_err());
    assert_eq!(
        verdict(&format!("faster ({WITHIN_RUN})"), a, b, Order::Below),
        Ok(())
    );
    // Too few units: no interval, and the count said.
    let few = Est::units(10.0, None, Unit::Round, 4);
    assert!(verdict(INDISTINGUISHABLE, few, high, Order::Indistinguishable).is_err());
    let said = indistinguishable(Stat::P99, &few, &high, crate::output::units::ns);
    assert!(
        said.contains("(4 rounds; an interval over units needs 8)"),
        "{said}"
    );
    assert_eq!(verdict(&said, few, high, Order::Indistinguishable), Ok(()));
    // A ranking of point values says so.
    let rank = |text: &str| {
        let mut s = Sentence::new(text);
        s.claim(Claim::Rank {
            extreme: Extreme::Least,
            by: RankBy::Signed,
            chosen: 0,
            among: vec![1.0, 2.0],
            intervals: Vec::new(),
        });
        s.check()
    };
    assert!(rank("a used the least CPU").is_err());
    assert_eq!(rank("a used the least CPU by point value"), Ok(()));
}

/// "No change" needs the interval of the difference inside the stated margin (two
/// one-sided tests); a difference the intervals cannot place is only indistinguishable.
#[test]
fn no_change_needs_an_equivalence_within_its_margin() {
    let ci = |l: f64, h: f64| Some(Ci(Some(l), Some(h)));
    let same = |a: Est, b: Est, margin: f64| {
        let mut s = Sentence::new("the p99 did not change (within 2 %)");
        s.claim(p99_change(a.value, b.value, Direction::Same));
        s.claim(Claim::Equivalent {
            stat: Stat::P99,
            a,
            b,
            margin,
            shown: "2 %".into(),
        });
        s.check()
    };
    // 100 vs 101, each ±0.5: the difference lies in [−2, 0], inside ±2.02.
    let (a, b) = (est(100.0, ci(99.5, 100.5)), est(101.0, ci(100.5, 101.5)));
    assert_eq!(same(a, b, 2.02), Ok(()));
    // The same values with wide intervals: the difference may be 10; not "the same".
    let (a, b) = (est(100.0, ci(95.0, 105.0)), est(101.0, ci(96.0, 106.0)));
    assert!(same(a, b, 2.02).is_err());
    // Pooled or open intervals never make an equivalence.
    assert!(
        same(
            Est::pooled(100.0, ci(99.9, 100.1)),
            est(100.0, ci(99.9, 100.1)),
            2.0
        )
        .is_err()
    );
    assert!(
        same(
            est(100.0, Some(Ci(Some(99.0), None))),
            est(100.0, ci(99.9, 100.1)),
            2.0
        )
        .is_err()
    );
    // A change within the tolerance stated without the equivalence fails.
    let mut s = Sentence::new("the p99 did not change (within 2 %)");
    s.claim(p99_change(100.0, 101.0, Direction::Same));
    assert!(s.check().is_err());
}

proptest! {
    /// A verdict passes exactly when its intervals support it: for any two intervals, the
    /// order [`order`] derives passes and every other fails.
    #[test]
    fn a_verdict_passes_only_where_the_intervals_support_it(
        lo_a in 0.0f64..100.0, w_a in 0.0f64..50.0, lo_b in 0.0f64..100.0, w_b in 0.0f64..50.0,
        open_a in any::<bool>(), open_b in any::<bool>(),
    ) {
        let a = est(lo_a, Some(Ci(Some(lo_a), (!open_a).then_some(lo_a + w_a))));
        let b = est(lo_b, Some(Ci(Some(lo_b), (!open_b).then_some(lo_b + w_b))));
        let truth = order(&a, &b);
        for stated in [Order::Below, Order::Above, Order::Indistinguishable] {
            let mut s = Sentence::new(format!("p99: {INDISTINGUISHABLE}"));
            s.claim(p99_verdict(a, b, stated));
            prop_assert_eq!(s.check().is_ok(), stated == truth, "{:?} {:?} {:?}", a, b, stated);
        }
        // Overlap exactly when neither interval lies below the other.
        let overlap = !(a.ci.unwrap().separated(&b.ci.unwrap()));
        prop_assert_eq!(truth == Order::Indistinguishable, overlap);
    }

    /// An equivalence passes exactly when the difference's interval lies within the
    /// margin.
    #[test]
    fn an_equivalence_passes_only_inside_its_margin(
        v in 1.0f64..1e6, d in -0.1f64..0.1, w in 0.0f64..0.05, tol in 0.001f64..0.1,
    ) {
        let a = est(v, Some(Ci(Some(v * (1.0 - w)), Some(v * (1.0 + w)))));
        let u = v * (1.0 + d);
        let b = est(u, Some(Ci(Some(u * (1.0 - w)), Some(u * (1.0 + w)))));
        let margin = tol * v.max(u);
        let mut s = Sentence::new("the same within 1 %");
        s.claim(Claim::Equivalent { stat: Stat::Median, a, b, margin, shown: "1 %".into() });
        let diff = difference(&a, &b).ci.unwrap();
        let inside = -margin <= diff.low().unwrap() && diff.high().unwrap() <= margin;
        prop_assert_eq!(s.check().is_ok(), inside);
    }

    /// The word a change is given always matches the sign of the numbers.
    #[test]
    fn words_follow_signs(from in 1.0f64..1e9, to in 1.0f64..1e9) {
        let d = direction(from, to, 0.02);
        for verb in [Verb::Grew, Verb::Slower, Verb::Longer] {
            let mut s = Sentence::new(format!("it {} ({from} → {to})", verb.word(d)));
            s.claim(Claim::Change { stat: Stat::Median, from, to, verb, tolerance: 0.02, stated: d });
            // Exact values separate whenever they differ: the verdict a median's change
            // needs; equal within the margin, the equivalence "no change" needs.
            if d != Direction::Same {
                let o = if d == Direction::Up { Order::Below } else { Order::Above };
                s.claim(Claim::Verdict { stat: Stat::Median, a: Est::exact(from), b: Est::exact(to), stated: o });
            } else {
                s.push(" (within 2 %)");
                let margin = 0.02 * from.max(to);
                s.claim(Claim::Equivalent { stat: Stat::Median, a: Est::exact(from), b: Est::exact(to), margin, shown: "2 %".into() });
            }
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
        if to > 1.03 * from {
            prop_assert_eq!(d, Direction::Up);
        }
        if to < from / 1.03 {
            prop_assert_eq!(d, Direction::Down);
        }
    }

    /// The median of any values has as many values at or below it as at or above.
    #[test]
    fn median_splits_the_values(v in proptest::collection::vec(-1e6f64..1e6, 1..40)) {
        let m = median(&v).unwrap();
        let below = v.iter().filter(|&&x| x <= m).count();
        let above = v.iter().filter(|&&x| x >= m).count();
        prop_assert!(2 * below >= v.len() && 2 * above >= v.len());
    }
}
