//! Matching, ratios and the verdicts of two results.
use super::*;
use crate::compare::{CompareError, points};
use crate::testdata::{cell, survey, sweep_1us, sweep_result};
use sleeplab_results::model::ExperimentData;

/// The pair of `a` (called `an`) and `b`, matched.
fn compare<'a>(
    a: &'a ResultFile,
    b: &'a ResultFile,
    an: &str,
    bn: &str,
) -> Result<Pair<'a>, CompareError> {
    let m = Matched::of(&[(an.to_string(), a), (bn.to_string(), b)])?;
    Ok(Pair::of(&m).expect("two results"))
}

#[test]
fn matches_cells_and_computes_ratios() {
    let a = sweep_1us(50_000, &[("nanosleep", 60_000.0), ("poll", 1_000_000.0)]);
    let b = sweep_1us(1, &[("nanosleep", 12_000.0), ("timerfd", 9_000.0)]);
    let c = compare(&a, &b, "a.json", "b.json").unwrap();
    assert_eq!(c.rows.len(), 1);
    assert_eq!(c.rows[0].key, "nanosleep 1 µs load 0");
    assert!((c.rows[0].median_ratio() - 0.2).abs() < 1e-12);
    assert!((c.rows[0].p99_ratio() - 0.2).abs() < 1e-12);
    let s = c.summary();
    assert!(
        s[0].starts_with("Across 1 matching measurements, b's medians are ×0.2 a's"),
        "{s:?}"
    );
    assert!(c.terminal().contains("×0.2"));
    assert!(c.page().render().contains("data-chart=\"compare-scatter\""));
}

#[test]
fn slack_joins_the_key_only_when_a_result_holds_several() {
    let two = sweep_result(vec![
        cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
        cell("nanosleep", 1_000, 0, 1, 12_000.0),
    ]);
    let keys: Vec<String> = points(&two).into_iter().map(|p| p.key).collect();
    assert_eq!(
        keys,
        vec![
            "nanosleep 1 µs load 0 slack 50 µs",
            "nanosleep 1 µs load 0 slack 1 ns"
        ]
    );
}

#[test]
fn surveys_match_stage_by_stage_and_strangers_do_not_match() {
    let s1 = survey(vec![(
        "sweep",
        sweep_1us(50_000, &[("nanosleep", 60_000.0)]),
    )]);
    let s2 = s1.clone();
    assert_eq!(compare(&s1, &s2, "x", "y").unwrap().rows.len(), 1);
    // A standalone sweep matches the survey's `sweep` stage.
    let lone = sweep_1us(50_000, &[("nanosleep", 50_000.0)]);
    assert_eq!(compare(&s1, &lone, "x", "y").unwrap().rows.len(), 1);
    let other = sweep_result(vec![cell("poll", 5, 3, 1, 1.0)]);
    let e = compare(&s1, &other, "x.json", "y.json").unwrap_err();
    assert_eq!(
        e.0,
        "x.json (survey) and y.json (sweep) share no measurements to compare (no common experiment and cell)"
    );
    let empty = sweep_result(vec![]);
    assert_eq!(
        compare(&empty, &s1, "e.json", "x").unwrap_err().0,
        "e.json (sweep) holds no measurements to compare"
    );
}

#[test]
fn a_ratio_is_a_verdict_only_where_the_intervals_separate() {
    // Medians 60 → 12 µs with ±5 % intervals: faster. 60 → 50 µs with intervals that
    // overlap: neither faster nor slower, marked ≈.
    let a = sweep_1us(50_000, &[("nanosleep", 60_000.0), ("poll", 60_000.0)]);
    let mut b = sweep_1us(50_000, &[("nanosleep", 12_000.0), ("poll", 50_000.0)]);
    if let ExperimentData::Sweep(s) = &mut b.data {
        s.cells[1].summary.median_ci_ns = Some(sleeplab_stats::Ci(Some(30_000.0), Some(70_000.0)));
        crate::testdata::resync(&mut s.cells[1]);
    }
    let c = compare(&a, &b, "a.json", "b.json").unwrap();
    assert!(c.rows[0].faster() && !c.rows[1].faster() && !c.rows[1].slower());
    let s = c.summary_sentences();
    for x in &s {
        assert_eq!(x.check(), Ok(()), "{}", x.text);
    }
    assert!(
        s[0].text.contains(
            "b is more than 10 % faster in 1 and more than 10 % slower in 0, counting only medians whose 95 % intervals over each run's rounds or blocks separate (within-run intervals; run-to-run variation not included); 1 more differ by more than 10 % but are indistinguishable in this run (marked ≈)."
        ),
        "{}",
        s[0].text
    );
    assert!(s.iter().any(|x| {
        x.text
            .starts_with("Biggest speed-up: nanosleep 1 µs load 0")
    }));
    assert!(c.terminal().contains("×0.83 ≈"), "{}", c.terminal());
}

proptest::proptest! {
    /// Whatever the medians and their intervals, every sentence of a comparison holds.
    #[test]
    fn every_comparison_sentence_is_true_of_its_numbers(
        v in proptest::collection::vec((1.0f64..1e7, 1.0f64..1e7, 0.0f64..0.8), 1..6)
    ) {
        const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
        let side = |pick: fn(&(f64, f64, f64)) -> f64| {
            let cells = v
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let m = pick(t);
                    let mut c = cell(NAMES[i], 1_000, 0, 50_000, m);
                    c.summary.median_ci_ns = Some(sleeplab_stats::Ci(Some(m * (1.0 - t.2)), Some(m * (1.0 + t.2))));
                    crate::testdata::resync(&mut c);
                    c
                })
                .collect();
            sweep_result(cells)
        };
        let (a, b) = (side(|t| t.0), side(|t| t.1));
        let c = compare(&a, &b, "a", "b").unwrap();
        for s in c.summary_sentences() {
            proptest::prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
        for r in &c.rows {
            proptest::prop_assert!(!(r.faster() && r.slower()));
            if r.faster() {
                proptest::prop_assert!(r.b.median().below(&r.a.median()));
            }
        }
    }
}
