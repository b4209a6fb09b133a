//! Runs as the units: the sides' geometric means, the ratio's interval, the verdicts.
use super::*;
use crate::testdata::{cell, result, sweep};
use sleeplab_results::model::{ExperimentData, ResultFile};
use sleeplab_stats::Ci;

/// The interval of a ratio: `[low, high]`.
fn ends(e: &Est) -> (f64, f64) {
    let Some(Ci(Some(l), Some(h))) = e.ci else {
        panic!("a closed interval");
    };
    (l, h)
}

/// A sweep result whose cells have these medians (name, median ns).
fn run(cells: &[(&str, f64)]) -> ResultFile {
    result(ExperimentData::Sweep(sweep(
        cells
            .iter()
            .map(|&(m, v)| cell(m, 1_000, 0, 50_000, v))
            .collect(),
    )))
}

fn sides(a: &[ResultFile], b: &[ResultFile]) -> Sides {
    let named: Vec<(String, &ResultFile)> = a
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("a{i}.json"), r))
        .chain(b.iter().enumerate().map(|(i, r)| (format!("b{i}.json"), r)))
        .collect();
    Sides::of(&Matched::of(&named).unwrap(), a.len(), Wording::NAMES)
}

#[test]
fn runs_that_agree_decide_and_runs_that_vary_do_not() {
    // nanosleep: 100, 110, 90 µs against 50, 55, 45 µs: ×0.5, its interval below ×1.
    // poll: 100, 200, 60 µs against 80, 150, 70 µs: ×0.8 in point value, but the runs
    // vary as much as that.
    let a = [
        run(&[("nanosleep", 100e3), ("poll", 100e3)]),
        run(&[("nanosleep", 110e3), ("poll", 200e3)]),
        run(&[("nanosleep", 90e3), ("poll", 60e3)]),
    ];
    let b = [
        run(&[("nanosleep", 50e3), ("poll", 80e3)]),
        run(&[("nanosleep", 55e3), ("poll", 150e3)]),
        run(&[("nanosleep", 45e3), ("poll", 70e3)]),
    ];
    let s = sides(&a, &b);
    assert_eq!(s.rows.len(), 2);
    assert!(s.rows[0].faster() && !s.rows[1].faster() && !s.rows[1].slower());
    let (l, h) = ends(&s.rows[0].ratio());
    assert!(l < 0.5 && h < 1.0, "{l} {h}");
    let sentences = s.sentences();
    for x in &sentences {
        assert_eq!(x.check(), Ok(()), "{}", x.text);
    }
    assert!(
        sentences[0].text.contains(
            "b is more than 10 % faster in 1 and more than 10 % slower in 0, counting only ratios of the sides' geometric means whose 95 % interval over the runs (Welch's t on the log scale) excludes ×1; 1 more differ by more than 10 % but are indistinguishable in this run (marked ≈)."
        ),
        "{}",
        sentences[0].text
    );
    assert!(
        sentences[1]
            .text
            .starts_with("Biggest speed-up: nanosleep 1 µs load 0 (sweep)")
    );
    let t = s.terminal();
    assert!(t.contains("b1: b0.json") && t.contains("≈"), "{t}");
    assert!(s.page().render().contains("The 6 runs"));
}

#[test]
fn a_measurement_held_by_too_few_runs_is_left_out() {
    let a = [
        run(&[("nanosleep", 100e3), ("poll", 1e3)]),
        run(&[("nanosleep", 100e3)]),
        run(&[("nanosleep", 100e3)]),
    ];
    let b = [
        run(&[("nanosleep", 100e3), ("poll", 1e3)]),
        run(&[("nanosleep", 100e3), ("poll", 1e3)]),
        run(&[("nanosleep", 100e3), ("poll", 1e3)]),
    ];
    let s = sides(&a, &b);
    let keys: Vec<&str> = s.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["nanosleep 1 µs load 0"]);
    // Identical runs: the ratio is ×1 exactly, neither faster nor slower.
    assert!(!s.rows[0].faster() && !s.rows[0].slower());
    for x in s.sentences() {
        assert_eq!(x.check(), Ok(()), "{}", x.text);
    }
}

proptest::proptest! {
    /// Whatever the runs' medians, every sentence holds and a verdict's interval
    /// excludes ×1.
    #[test]
    fn every_sides_sentence_is_true_of_its_numbers(
        a in proptest::collection::vec(1.0f64..1e7, 3..6),
        b in proptest::collection::vec(1.0f64..1e7, 3..6),
    ) {
        let ra: Vec<ResultFile> = a.iter().map(|&v| run(&[("nanosleep", v)])).collect();
        let rb: Vec<ResultFile> = b.iter().map(|&v| run(&[("nanosleep", v)])).collect();
        let s = sides(&ra, &rb);
        for x in s.sentences() {
            proptest::prop_assert!(x.check().is_ok(), "{:?}", x.check());
        }
        for r in &s.rows {
            let (l, h) = ends(&r.ratio());
            if r.faster() {
                proptest::prop_assert!(h < 1.0);
            }
            if r.slower() {
                proptest::prop_assert!(l > 1.0);
            }
        }
    }
}
