//! The runtimes' floors against hand-made probe results: rounding told from bimodal
//! sleeps, early returns counted apart from sleeps that slept.

use super::*;

/// One runtime's cells: (request, min, max, median, n).
type RuntimeRow<'a> = (&'a str, &'a str, &'a [(u64, u64, u64, f64, u64)]);

fn runtimes_of(rows: &[RuntimeRow<'_>]) -> sleeplab_results::model::ResultFile {
    let mut r = stored("runtimes");
    let ExperimentData::Runtimes(d) = &mut r.data else {
        panic!("runtimes");
    };
    let template = d
        .runtimes
        .iter()
        .find(|x| crate::findings::runtimes::main_sleep(x).is_some())
        .expect("a measured runtime")
        .clone();
    d.runtimes = rows
        .iter()
        .map(|(title, method, cells)| {
            let mut rt = template.clone();
            rt.title = (*title).into();
            let mut m = crate::findings::runtimes::main_sleep(&rt).unwrap().clone();
            m.method = (*method).into();
            m.notes.clear();
            let c0 = m.cells[0].clone();
            m.cells = cells
                .iter()
                .map(|&(req, min, max, median, n)| {
                    let mut c = c0.clone();
                    c.notes.clear();
                    c.requested_ns = req;
                    c.summary.count = n;
                    c.summary.min_ns = min;
                    c.summary.max_ns = max;
                    c.summary.median_ns = median;
                    c.summary.early_count = u64::from(median < req as f64) * n;
                    c.summary.enforce_quantile_rule();
                    c
                })
                .collect();
            rt.methods = vec![m];
            rt
        })
        .collect();
    r
}

/// The report said "Go's time.Sleep rounds short waits up to ~1 ms" beside Go's 1 µs sleep
/// taking 17.9 µs: the behaviour is bimodal, and the sentence says so.
#[test]
fn runtime_floors_tell_rounding_from_bimodal_sleeps() {
    let r = runtimes_of(&[
        ("C", "nanosleep", &[(1_000, 60_000, 70_000, 65_700.0, 75)]),
        (
            "Go",
            "time.Sleep",
            &[
                (1_000, 1_232, 1_083_217, 17_900.0, 22),
                (10_000, 10_556, 1_111_319, 1_030_690.0, 9),
            ],
        ),
        (
            "Node.js",
            "setTimeout",
            &[(1_000, 1_079_833, 1_110_347, 1_083_708.0, 5)],
        ),
        ("Java", "Thread.sleep-ms", &[(1_000, 300, 900, 600.0, 10)]),
    ]);
    let f = checked(runtime_floors(&Results::of(&r)));
    assert!(
        f.text.starts_with("One runtime rounds short waits up to ~1 ms here: every call under 500 µs took 500 µs or more (Node.js's setTimeout: 1 µs took a median 1.08 ms (n = 5))."),
        "{}",
        f.text
    );
    assert!(
        f.text
            .contains("One runtime's sleep is bimodal for requests under 500 µs")
            && f.text.contains(
                "Go's time.Sleep (1 µs: median 17.9 µs, fastest 1.23 µs, slowest 1.08 ms (n = 22)"
            ),
        "{}",
        f.text
    );
    assert!(!f.text.contains("Go's time.Sleep rounds"), "{}", f.text);
    assert!(
        f.text.contains("One returned before the requested time in most calls: Java's Thread.sleep-ms (median 600 ns, 10 of 10 calls early, n = 10)."),
        "{}",
        f.text
    );
}

/// A plain sleep that returns early in most calls, with a rare slow call past 500 µs
/// (Java's Thread.sleep-ms in the survey), is said to return early, never also "bimodal".
#[test]
fn runtime_floors_never_call_an_early_sleep_bimodal() {
    let r = runtimes_of(&[
        ("C", "nanosleep", &[(1_000, 60_000, 70_000, 65_700.0, 100)]),
        (
            "Java",
            "Thread.sleep-ms",
            &[
                (1_000, 400, 2_920_000, 411.0, 100),
                (10_000, 400, 61_700, 421.0, 100),
            ],
        ),
    ]);
    let f = checked(runtime_floors(&Results::of(&r)));
    assert!(!f.text.contains("bimodal"), "{}", f.text);
    assert!(
        f.text.contains(
            "One returned before the requested time in most calls: Java's Thread.sleep-ms (median 411 ns"
        ),
        "{}",
        f.text
    );
}

/// A wait whose median slept but some of whose calls returned early (Node's
/// Atomics.wait, 12 of 135, median 79.9 µs) was listed among waits that "returned
/// before the requested time". It is counted apart, and the median call slept.
#[test]
fn runtime_floors_count_sleeps_that_return_early_only_sometimes() {
    let mut r = runtimes_of(&[
        ("C", "nanosleep", &[(10_000, 60_000, 70_000, 65_700.0, 135)]),
        (
            "Node.js",
            "Atomics.wait",
            &[(10_000, 5_000, 90_000, 79_900.0, 135)],
        ),
    ]);
    let ExperimentData::Runtimes(d) = &mut r.data else {
        panic!("runtimes");
    };
    d.runtimes[1].methods[0].cells[0].summary.early_count = 12;
    let f = checked(runtime_floors(&Results::of(&r)));
    assert!(!f.text.contains("in most calls"), "{}", f.text);
    assert!(
        f.text.contains("Some calls returned before the requested time in Node.js's Atomics.wait (12 of 135 calls")
            && f.text.contains("the median call slept"),
        "{}",
        f.text
    );
}
