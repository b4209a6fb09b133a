//! The fleet's rule, outliers and sentences against hand-made results.
use super::*;
use crate::compare::CompareError;
use crate::testdata::{cell, host, result, sweep};
use sleeplab_results::model::{ExperimentData, ResultFile};

/// The fleet of `named`, matched.
fn fleet(named: &[(String, &ResultFile)]) -> Result<Fleet, CompareError> {
    Matched::of(named).map(|m| Fleet::of(&m))
}

fn of(rs: &[ResultFile]) -> Result<Fleet, CompareError> {
    let named: Vec<(String, &ResultFile)> = rs
        .iter()
        .map(|r| (format!("{}.json", r.fingerprint.hostname), r))
        .collect();
    fleet(&named)
}

#[test]
fn outliers_by_hand() {
    let rs = [
        host(
            "h1",
            &[("nanosleep", 10_000.0), ("poll", 1_000.0), ("timerfd", 5.0)],
        ),
        host("h2", &[("nanosleep", 12_000.0), ("poll", 2_000.0)]),
        host("h3", &[("nanosleep", 40_000.0), ("poll", 3_000.0)]),
        host(
            "h4",
            &[("nanosleep", 11_000.0), ("poll", 4_000.0), ("spin", 1.0)],
        ),
    ];
    let f = of(&rs).unwrap();
    // timerfd and spin are held by one machine each: left out.
    let keys: Vec<&str> = f.cells.iter().map(|c| c.measurement.as_str()).collect();
    assert_eq!(keys, ["nanosleep 1 µs load 0", "poll 1 µs load 0"]);
    // nanosleep: medians 10, 12, 40, 11 µs → fleet median (11 + 12) / 2 = 11.5 µs;
    // 2 × 11.5 = 23 µs: only h3 (40 µs) is beyond. poll: 1, 2, 3, 4 µs → 2.5 µs;
    // 5 µs is the bar, 4 µs is not beyond it.
    assert_eq!(f.cells[0].fleet_median_ns, 11_500.0);
    assert_eq!(f.cells[1].fleet_median_ns, 2_500.0);
    assert_eq!(
        f.outliers,
        vec![Outlier {
            machine: 2,
            cell: 0,
            ratio: 40_000.0 / 11_500.0
        }]
    );
    let s = f.findings();
    for x in &s {
        x.check().unwrap();
    }
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[1].text,
        "h3 (h3.json) is an outlier in 1 of the 2 measurements it holds (median more than ×2 the fleet median, its 95 % interval over its run's units above it; within-run intervals; run-to-run variation not included): nanosleep 1 µs load 0 (sweep): 40 µs against a fleet median of 11.5 µs (×3.48)."
    );
    assert!(s[0].text.contains("more than ×2 the fleet median"));
    let text = f.terminal();
    assert!(text.contains("40 µs !"), "{text}");
    assert!(text.contains("h3.json"));
    assert!(f.page().render().contains("h3 (h3.json) is an outlier"));
}

#[test]
fn an_outlier_machine_names_its_worst_cells_first_and_counts_the_rest() {
    let mechs = ["a", "b", "c", "d", "e"];
    let calm: Vec<(&str, f64)> = mechs.iter().map(|m| (*m, 1_000.0)).collect();
    // h3 is 3, 9, 5, 4, 7 × the fleet median (the median of 1, 1, x is 1 µs).
    let loud: Vec<(&str, f64)> = mechs
        .iter()
        .zip([3.0, 9.0, 5.0, 4.0, 7.0])
        .map(|(m, x)| (*m, x * 1_000.0))
        .collect();
    let f = of(&[host("h1", &calm), host("h2", &calm), host("h3", &loud)]).unwrap();
    let ratios: Vec<f64> = f.outliers.iter().map(|o| o.ratio).collect();
    assert_eq!(ratios, [9.0, 7.0, 5.0, 4.0, 3.0]);
    let s = &f.findings()[1];
    s.check().unwrap();
    assert!(s.text.contains("in 5 of the 5 measurements"), "{}", s.text);
    assert!(
        s.text
            .contains("b 1 µs load 0 (sweep): 9 µs against a fleet median of 1 µs (×9); e 1 µs")
    );
    assert!(s.text.ends_with("; and 2 more."), "{}", s.text);
}

#[test]
fn a_calm_fleet_says_so_and_strangers_are_an_error() {
    let f = of(&[
        host("h1", &[("nanosleep", 10_000.0)]),
        host("h2", &[("nanosleep", 20_000.0)]),
        host("h3", &[("nanosleep", 30_000.0)]),
    ])
    .unwrap();
    // 30 µs is not more than 2 × 20 µs.
    assert!(f.outliers.is_empty());
    let s = f.findings();
    s[1].check().unwrap();
    assert!(s[1].text.starts_with("No machine is an outlier"));
    let e = of(&[
        host("h1", &[("nanosleep", 1.0)]),
        host("h2", &[("poll", 1.0)]),
        host("h3", &[("timerfd", 1.0)]),
    ])
    .unwrap_err();
    assert_eq!(
        e.0,
        "h1.json, h2.json, h3.json share no measurements to compare (no experiment and cell held by two of them)"
    );
    let empty = result(ExperimentData::Sweep(sweep(vec![])));
    let named = [("e.json".to_string(), &empty)];
    assert_eq!(
        fleet(&named).unwrap_err().0,
        "e.json (sweep) holds no measurements to compare"
    );
}

/// A median above the bar whose interval reaches below it is named as
/// indistinguishable from the bar, not as an outlier.
#[test]
fn a_median_whose_interval_reaches_below_the_bar_is_not_an_outlier() {
    let mut loud = host("h3", &[("nanosleep", 25_000.0)]);
    if let ExperimentData::Sweep(s) = &mut loud.data {
        s.cells[0].summary.median_ci_ns = Some(Ci(Some(15_000.0), Some(40_000.0)));
        crate::testdata::resync(&mut s.cells[0]);
    }
    let f = of(&[
        host("h1", &[("nanosleep", 10_000.0)]),
        host("h2", &[("nanosleep", 10_000.0)]),
        loud,
    ])
    .unwrap();
    // 25 µs > 2 × 10 µs, but its interval starts at 15 µs.
    assert!(f.outliers.is_empty());
    assert_eq!(f.unclear.len(), 1);
    let s = f.findings();
    for x in &s {
        assert_eq!(x.check(), Ok(()), "{}", x.text);
    }
    assert!(
        s[1].text
            .starts_with("No machine is shown to be an outlier"),
        "{}",
        s[1].text
    );
    assert_eq!(
        s[2].text,
        "1 more median lies above ×2 the fleet median in point value, but indistinguishable in this run from that bar (the 95 % interval of the median over its run's units reaches below it, or there is none): nanosleep 1 µs load 0 on h3 (sweep), 25 µs [15–40 µs] against a bar of 20 µs."
    );
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(v["unclear"][0]["machine"], 2);
    assert_eq!(
        v["cells"][0]["medians_ci_ns"][2],
        serde_json::json!([15_000.0, 40_000.0])
    );
}

#[test]
fn the_json_names_the_rule_and_every_machine() {
    let f = of(&[
        host("h1", &[("nanosleep", 10_000.0)]),
        host("h2", &[("nanosleep", 10_000.0)]),
        host("h3", &[("nanosleep", 90_000.0)]),
    ])
    .unwrap();
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(v["outlier_factor"], 2.0);
    assert_eq!(v["machines"][2]["hostname"], "h3");
    assert_eq!(v["cells"][0]["medians_ns"][2], 90_000.0);
    assert_eq!(v["cells"][0]["fleet_median_ns"], 10_000.0);
    assert_eq!(v["outliers"][0]["machine"], 2);
    assert_eq!(v["sentences"].as_array().unwrap().len(), 2);
}

proptest::proptest! {
    /// Whatever the machines' medians and their intervals, every sentence of the fleet
    /// holds, and the outliers are exactly the medians whose interval lies above the
    /// bar (the rest above it by point value are the unclear ones).
    #[test]
    fn every_fleet_sentence_is_true_of_its_numbers(
        machines in proptest::collection::vec(
            proptest::collection::vec((1.0f64..1e6, 0.0f64..0.9), 3),
            2..6,
        )
    ) {
        const CELLS: [&str; 3] = ["a", "b", "c"];
        let rs: Vec<ResultFile> = machines
            .iter()
            .enumerate()
            .map(|(i, cells)| {
                let mut r = host(&format!("h{i}"), &[]);
                if let ExperimentData::Sweep(s) = &mut r.data {
                    s.cells = cells
                        .iter()
                        .zip(CELLS)
                        .map(|(&(m, w), name)| {
                            let mut c = cell(name, 1_000, 0, 50_000, m);
                            c.summary.median_ci_ns = Some(Ci(Some(m * (1.0 - w)), Some(m * (1.0 + w))));
                            crate::testdata::resync(&mut c);
                            c
                        })
                        .collect();
                }
                r
            })
            .collect();
        let f = of(&rs).unwrap();
        for s in f.findings() {
            proptest::prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
        for (c, cell) in f.cells.iter().enumerate() {
            let bar = OUTLIER_FACTOR * cell.fleet_median_ns;
            for (m, v) in cell.medians_ns.iter().enumerate() {
                let v = v.unwrap();
                let low = cell.medians_ci_ns[m].and_then(|ci| ci.0).unwrap();
                let is = |list: &[Outlier]| list.iter().any(|o| o.machine == m && o.cell == c);
                proptest::prop_assert_eq!(is(&f.outliers), v > bar && low > bar);
                proptest::prop_assert_eq!(is(&f.unclear), v > bar && low <= bar);
            }
        }
    }
}
