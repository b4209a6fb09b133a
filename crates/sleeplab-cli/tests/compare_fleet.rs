//! `sleeplab compare` of three and more results (a fleet) through the real binary: one
//! row per machine, the outlier named in the terminal, the JSON and the page, on the
//! survey fixture (`tests/fixtures/survey.json`) with one host's sweeps made 3× slower.
//! Bad input (one file, a non-result among three): `bad_input.rs`.

mod common;
use common::*;

use serde_json::Value;
use sleeplab_cli::model::{ExperimentData, ResultFile, load_result};
use sleeplab_stats::{Unit, UnitIntervals};
use std::path::Path;

fn survey_on(host: &str, sweep_factor: f64) -> ResultFile {
    let mut r =
        load_result(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/survey.json"))
            .expect("the fixture loads");
    r.fingerprint.hostname = host.into();
    let ExperimentData::Survey(data) = &mut r.data else {
        panic!("the fixture is a survey");
    };
    for stage in &mut data.results {
        if let ExperimentData::Sweep(sw) = &mut stage.data {
            for c in &mut sw.cells {
                c.summary.median_ns *= sweep_factor;
                // The fixture was written before intervals existed (they load as null, and
                // nothing is an outlier without one): a ±5 % interval around each median,
                // over 10 rounds.
                let m = c.summary.median_ns;
                let ci = Some(sleeplab_stats::Ci(Some(0.95 * m), Some(1.05 * m)));
                c.summary.median_ci_ns = ci;
                c.units = Some(UnitIntervals {
                    unit: Unit::Round,
                    units: 10,
                    median_ci_ns: ci,
                    p90_ci_ns: None,
                    p99_ci_ns: None,
                    p999_ci_ns: None,
                    mean_ci_ns: None,
                });
            }
        }
    }
    r
}

#[test]
fn three_hosts_one_row_each_and_the_slow_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = [("alpha", 1.0), ("beta", 1.0), ("gamma", 3.0)]
        .into_iter()
        .map(|(host, f)| {
            let p = dir.path().join(format!("{host}.json"));
            std::fs::write(&p, serde_json::to_string(&survey_on(host, f)).unwrap()).unwrap();
            p
        })
        .collect();
    let json = dir.path().join("fleet.json");
    // By default the table fits 100 columns (turned, then split); whole with --wide.
    let fitted = stdout_of(
        sleeplab()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(dir.path().join("fitted")),
    );
    assert!(fitted.lines().all(|l| l.chars().count() <= 100), "{fitted}");
    let text = stdout_of(
        sleeplab()
            .arg("compare")
            .arg("--wide")
            .args(&files)
            .arg("--json")
            .arg(&json)
            .arg("-o")
            .arg(dir.path().join("page")),
    );
    // One row per machine (and the fleet median's); table rows start with a space.
    let rows = |needle: &str| {
        text.lines()
            .filter(|l| l.starts_with(' ') && l.contains(needle))
            .count()
    };
    for host in ["alpha", "beta", "gamma"] {
        assert_eq!(rows(&format!("{host}.json")), 1, "{text}");
    }
    assert_eq!(rows("fleet median"), 1, "{text}");
    assert!(
        text.contains("gamma (") && text.contains("is an outlier in"),
        "{text}"
    );
    assert!(
        !text.contains("alpha (") && !text.contains("beta ("),
        "{text}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["machines"].as_array().unwrap().len(), 3);
    assert_eq!(v["machines"][2]["hostname"], "gamma");
    assert_eq!(v["outlier_factor"], 2.0);
    let outliers = v["outliers"].as_array().unwrap();
    let cells = v["cells"].as_array().unwrap();
    let sweeps = cells
        .iter()
        .filter(|c| c["stage"].as_str().unwrap().starts_with("sweep"))
        .count();
    // Every sweep cell of gamma (3 × a median that the others share) and nothing else.
    assert_eq!(outliers.len(), sweeps, "{outliers:?}");
    for o in outliers {
        assert_eq!(o["machine"], 2);
        let c = &cells[o["cell"].as_u64().unwrap() as usize];
        assert!(c["stage"].as_str().unwrap().starts_with("sweep"));
        assert!((o["ratio"].as_f64().unwrap() - 3.0).abs() < 1e-9);
    }
    let html = std::fs::read_to_string(dir.path().join("page/index.html")).unwrap();
    assert!(html.contains("gamma"));
    assert!(html.contains("is an outlier in"));
}

#[test]
fn two_results_keep_the_a_b_view_and_may_write_the_fleet_json() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, serde_json::to_string(&survey_on("alpha", 1.0)).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_string(&survey_on("beta", 3.0)).unwrap()).unwrap();
    let json = dir.path().join("pair.json");
    let text = stdout_of(
        sleeplab()
            .arg("compare")
            .arg(&a)
            .arg(&b)
            .arg("--json")
            .arg(&json),
    );
    assert!(text.starts_with("a: "), "{text}");
    assert!(text.contains("b's medians are"), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["machines"].as_array().unwrap().len(), 2);
    // Of two, neither median is more than 2 × their mean: no outliers.
    assert!(v["outliers"].as_array().unwrap().is_empty());
}
