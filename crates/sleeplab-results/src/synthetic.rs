//! Synthetic results for the tests of the crates above (the report's unit tests, the
//! walk over every verdict) and of this one (feature `test-support`).

use crate::RunSettings;
use crate::experiments::explain::{ExplainCell, ExplainConfig, ExplainData, ExplainItem};
use crate::experiments::pace::{PaceConfig, PaceData, PaceResult};
use crate::experiments::runtimes::RuntimeResult;
use crate::experiments::sweep::{Quota, SweepCell, SweepConfig, SweepData};
use crate::result_file::{
    ExperimentData, Level, ResultFile, SCHEMA_VERSION, StageState, StageStatus, SurveyData,
    ToolInfo,
};
use sleeplab::system::Fingerprint;
use sleeplab_account::{Component, Explanation, Tracing, WakeAccount};
use sleeplab_stats::{Ci, Summary, Unit, UnitIntervals};

/// A cell of 100 samples in 10 rounds with this median (p99 = 1.5 × median, no
/// p99.9); its intervals over the rounds are those of its summary (and the mean's
/// ±5 %).
pub fn cell(mechanism: &str, requested_ns: u64, load: usize, slack: u64, median: f64) -> SweepCell {
    let mut c = pooled_cell(mechanism, requested_ns, load, slack, median);
    c.units = Some(rounds(&c.summary, 10));
    c.round_counts = vec![10; 10];
    c
}

/// Makes `c`'s intervals over its 10 rounds those of its summary again (after a test
/// changed the summary).
pub fn resync(c: &mut SweepCell) {
    c.units = Some(rounds(&c.summary, 10));
}

/// Intervals over `n` rounds equal to `s`'s own (the mean's ±5 %).
pub fn rounds(s: &Summary, n: u64) -> UnitIntervals {
    UnitIntervals {
        unit: Unit::Round,
        units: n,
        median_ci_ns: s.median_ci_ns,
        p90_ci_ns: s.p90_ci_ns,
        p99_ci_ns: s.p99_ci_ns,
        p999_ci_ns: s.p999_ci_ns,
        mean_ci_ns: Some(Ci(Some(s.mean_ns * 0.95), Some(s.mean_ns * 1.05))),
    }
}

/// The same cell as a result written before intervals over units: pooled intervals only.
pub fn pooled_cell(
    mechanism: &str,
    requested_ns: u64,
    load: usize,
    slack: u64,
    median: f64,
) -> SweepCell {
    SweepCell {
        mechanism: mechanism.into(),
        requested_ns,
        load,
        timer_slack_ns: slack,
        summary: Summary {
            count: 100,
            mean_ns: median,
            stddev_ns: median / 10.0,
            min_ns: (median * 0.9) as u64,
            median_ns: median,
            median_ci_ns: Some(Ci(Some(median * 0.95), Some(median * 1.05))),
            p90_ns: Some(median * 1.2),
            p90_ci_ns: Some(Ci(Some(median * 1.1), Some(median * 1.3))),
            p99_ns: Some(median * 1.5),
            // 100 samples bound a p99 from below only (stats::quantile_ci).
            p99_ci_ns: Some(Ci(Some(median * 1.4), None)),
            // 100 samples cannot resolve a p99.9 (the quantile rule).
            p999_ns: None,
            p999_ci_ns: None,
            max_ns: (median * 3.0) as u64,
            mean_overshoot_ns: median - requested_ns as f64,
            ci999_low_ns: None,
            ci999_high_ns: None,
            early_count: 0,
            total_ns: (median * 100.0) as u64,
            quantiles_exact: true,
        },
        first_calls_ns: vec![],
        cpu_ns_per_call: median / 100.0,
        voluntary_csw_per_call: 1.0,
        involuntary_csw_per_call: 0.0,
        histogram: vec![
            [(median * 0.95) as u64, 40],
            [median as u64, 40],
            [(median * 1.5) as u64, 20],
        ],
        round_counts: vec![100],
        units: None,
        samples_ns: vec![median as u64; 3],
        all_samples_ns: vec![],
        explanation: None,
    }
}

/// A sweep of these cells.
pub fn sweep(cells: Vec<SweepCell>) -> SweepData {
    let mut mechanisms: Vec<String> = Vec::new();
    let mut durations: Vec<u64> = Vec::new();
    for c in &cells {
        if !mechanisms.contains(&c.mechanism) {
            mechanisms.push(c.mechanism.clone());
        }
        if !durations.contains(&c.requested_ns) {
            durations.push(c.requested_ns);
        }
    }
    durations.sort_unstable();
    SweepData {
        config: SweepConfig {
            mechanisms,
            durations_ns: durations,
            loads: vec![0],
            timer_slacks_ns: vec![],
            quota: Quota::Iterations { count: 100 },
            warmup: 0,
            rounds: 1,
            json_samples: 3,
            raw_cap: 100,
            focus: vec![],
            trace: false,
        },
        cells,
        skipped: vec![],
        tracing: None,
    }
}

/// `n` wakes: the last `slow` of them of the `tail` parts, the others of `typical`.
pub fn wakes(
    n: usize,
    typical: &[(Component, u64)],
    slow: usize,
    tail: &[(Component, u64)],
) -> Vec<WakeAccount> {
    (0..n)
        .map(|i| WakeAccount::of_parts(if i + slow >= n { tail } else { typical }))
        .collect()
}

/// An `explain` cell of these wakes (50 µs of slack set, no records kept).
pub fn explain_cell(
    mechanism: &str,
    requested_ns: u64,
    load: usize,
    wakes: &[WakeAccount],
) -> ExplainCell {
    ExplainCell {
        mechanism: mechanism.into(),
        requested_ns,
        load,
        timer_slack_ns: 50_000,
        explanation: Explanation::of(wakes, 0, false),
        units: None,
        wakes: vec![],
        all_wakes: vec![],
    }
}

/// An `explain` result of these cells, the kernel traced (`lost_events` lost).
pub fn explain(cells: Vec<ExplainCell>, lost_events: u64) -> ExplainData {
    let mut items: Vec<ExplainItem> = Vec::new();
    let mut loads: Vec<usize> = Vec::new();
    for c in &cells {
        let it = ExplainItem {
            mechanism: c.mechanism.clone(),
            requested_ns: c.requested_ns,
        };
        if !items.contains(&it) {
            items.push(it);
        }
        if !loads.contains(&c.load) {
            loads.push(c.load);
        }
    }
    ExplainData {
        config: ExplainConfig {
            items,
            loads,
            timer_slacks_ns: vec![],
            iterations: cells.iter().map(|c| c.explanation.wakes).max().unwrap_or(0),
            rounds: 1,
            json_wakes: 0,
            trace: true,
        },
        tracing: Tracing::kernel(lost_events),
        cells,
    }
}

/// A result around `data`.
pub fn result(data: ExperimentData) -> ResultFile {
    ResultFile {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo::default(),
        complete: true,
        started_at: "2025-01-01T00:00:00Z".into(),
        finished_at: "2025-01-01T00:01:00Z".into(),
        command_line: vec!["sleeplab".into()],
        fingerprint: Fingerprint {
            hostname: "testhost".into(),
            os: "Linux".into(),
            kernel_release: "6.1.0".into(),
            cpu_count: 2,
            timer_slack_ns: 50_000,
            ..Fingerprint::default()
        },
        settings: RunSettings {
            timer_slack_ns: 50_000,
            ..RunSettings::default()
        },
        notes: vec![],
        host_noise: None,
        data,
    }
}

/// A result of a sweep of these cells.
pub fn sweep_result(cells: Vec<SweepCell>) -> ResultFile {
    result(ExperimentData::Sweep(sweep(cells)))
}

/// A result of a sweep of these (mechanism, median) cells at 1 µs, load 0, at `slack`
/// ns of timer slack.
pub fn sweep_1us(slack: u64, cells: &[(&str, f64)]) -> ResultFile {
    sweep_result(
        cells
            .iter()
            .map(|(m, median)| cell(m, 1_000, 0, slack, *median))
            .collect(),
    )
}

/// A sweep on `host` with these (mechanism, median) cells at 1 µs, load 0.
pub fn host(name: &str, cells: &[(&str, f64)]) -> ResultFile {
    let mut r = sweep_1us(50_000, cells);
    r.fingerprint.hostname = name.into();
    r
}

/// A survey of these (stage name, result) pairs, all ok.
pub fn survey(stages: Vec<(&str, ResultFile)>) -> ResultFile {
    let mut data = SurveyData {
        level: Level::Normal,
        stages: vec![],
        results: vec![],
    };
    for (name, r) in stages {
        data.stages.push(StageStatus {
            name: name.into(),
            experiment: r.data.name().into(),
            title: name.into(),
            state: StageState::Ok,
            planned_ms: 1_000,
            elapsed_ms: 900,
            result: Some(data.results.len()),
        });
        data.results.push(r);
    }
    result(ExperimentData::Survey(data))
}

/// The survey fixture (`tests/fixtures/survey.json`, a real run), whole.
pub fn survey_fixture() -> ResultFile {
    crate::result_file::parse_result(
        include_str!("../../sleeplab-cli/tests/fixtures/survey.json"),
        "fixture",
    )
    .expect("the fixture parses")
}

/// The stored result of experiment `name` from the survey fixture
/// (`tests/fixtures/survey.json`, a real run).
pub fn stored(name: &str) -> ResultFile {
    let s = crate::result_file::parse_result(
        include_str!("../../sleeplab-cli/tests/fixtures/survey.json"),
        "fixture",
    )
    .expect("the fixture parses");
    let ExperimentData::Survey(d) = s.data else {
        panic!("the fixture is a survey");
    };
    d.results
        .into_iter()
        .find(|r| r.data.name() == name)
        .expect("in the fixture")
}

/// A pace result of these contenders at these load levels, each run `frames` frames at
/// 60 Hz in interleaved blocks of `block`; the contenders the config names are the
/// results' strategies, in order of first appearance.
pub fn pace(loads: Vec<usize>, frames: u64, block: u64, results: Vec<PaceResult>) -> PaceData {
    let mut strategies: Vec<String> = Vec::new();
    for r in &results {
        if !strategies.contains(&r.strategy) {
            strategies.push(r.strategy.clone());
        }
    }
    PaceData {
        config: PaceConfig {
            strategies,
            loads,
            rate_hz: 60.0,
            period_ns: 16_666_667,
            frames,
            block,
            work_ns: 0,
            timer_slack_ns: Some(1),
            json_samples: 0,
            repeat: 1,
            trace: false,
        },
        results,
        runs: vec![],
        repeat: vec![],
        tracing: None,
    }
}

/// The survey fixture's runtimes result holding one runtime: the first that `pick`
/// accepts, as `edit` leaves it.
pub fn one_runtime(
    pick: impl Fn(&RuntimeResult) -> bool,
    edit: impl FnOnce(&mut RuntimeResult),
) -> ResultFile {
    let mut r = stored("runtimes");
    let ExperimentData::Runtimes(d) = &mut r.data else {
        panic!("runtimes");
    };
    let mut rt = d
        .runtimes
        .iter()
        .find(|x| pick(x))
        .expect("a measured runtime")
        .clone();
    edit(&mut rt);
    d.runtimes = vec![rt];
    r
}
