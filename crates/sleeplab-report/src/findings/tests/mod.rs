//! The findings against hand-made results: one regression test per untruth a past report
//! found (the property tests over random sweeps are in `props.rs`).

use super::*;
use crate::findings;
use crate::testdata::{cell, stored, survey, sweep_1us, sweep_result};
use sleeplab_results::model::ExperimentData;
use sleeplab_stats::{Ci, NEVER_BLOCKED};

mod runtimes;

fn ids(f: &[Finding]) -> Vec<&str> {
    f.iter().map(|f| f.id).collect()
}

/// Fails unless the text of `f` contains `part`, showing the text.
#[track_caller]
fn assert_says(f: &Finding, part: &str) {
    assert!(f.text.contains(part), "{}", f.text);
}

/// Fails unless the text of `f` starts with `start`, showing the text.
#[track_caller]
fn assert_opens(f: &Finding, start: &str) {
    assert!(f.text.starts_with(start), "{}", f.text);
}

fn checked(f: Option<Finding>) -> Finding {
    let f = f.expect("a finding");
    if let Err(e) = f.sentence().check() {
        panic!("{}: {e}", f.id);
    }
    f
}

#[test]
fn slack_finding_uses_the_true_median_difference_of_sleep_calls() {
    // clock-nanosleep: +50 µs at every request; timerfd: no change (not a sleep call).
    let mut cells = Vec::new();
    for d in [1_000u64, 10_000, 100_000, 1_000_000] {
        cells.push(cell("clock-nanosleep", d, 0, 50_000, d as f64 + 58_000.0));
        cells.push(cell("clock-nanosleep", d, 0, 1, d as f64 + 8_000.0));
        cells.push(cell("timerfd", d, 0, 50_000, d as f64 + 9_000.0));
        cells.push(cell("timerfd", d, 0, 1, d as f64 + 9_000.0));
    }
    let r = sweep_result(cells);
    let f = checked(timer_slack(&Results::of(&r)));
    assert_opens(&f, "Timer slack adds ~50 µs");
    assert_says(&f, "clock-nanosleep 10 µs: 68 µs vs 18 µs");
    assert_says(&f, "default 50 µs slack than at 1 ns");
}

/// A past report: "Timer slack adds ~67.2 µs" took the upper of the two middle differences.
#[test]
fn slack_takes_the_mean_of_the_two_middle_differences() {
    let mut cells = Vec::new();
    for (mech, diff) in [
        ("nanosleep", 60_000.0),
        ("clock-nanosleep", 64_000.0),
        ("std-sleep", 65_200.0),
        ("clock-nanosleep-abs", 67_200.0),
    ] {
        cells.push(cell(mech, 10_000, 0, 50_000, 20_000.0 + diff));
        cells.push(cell(mech, 10_000, 0, 1, 20_000.0));
    }
    let r = sweep_result(cells);
    let f = checked(timer_slack(&Results::of(&r)));
    assert_opens(&f, "Timer slack adds ~64.6 µs");
    // 64.6 − 50 µs is more than the slack explains; without idle states recorded, no
    // cause is claimed.
    assert_says(&f, "14.6 µs more than the slack itself");
    assert_says(&f, "nothing this run records");
}

#[test]
fn slack_excess_names_an_idle_state_only_when_recorded() {
    let cells = vec![
        cell("nanosleep", 10_000, 0, 50_000, 90_000.0),
        cell("nanosleep", 10_000, 0, 1, 20_000.0),
    ];
    let mut r = sweep_result(cells);
    r.fingerprint.idle = Some(sleeplab::system::Idle {
        driver: Some("intel_idle".into()),
        states: vec![sleeplab::system::IdleState {
            name: "C6".into(),
            exit_latency_us: 20,
            target_residency_us: 60,
            disabled: false,
        }],
        ..Default::default()
    });
    let f = checked(timer_slack(&Results::of(&r)));
    assert_says(&f, "reach the C6 idle state");
}

#[test]
fn slack_finding_needs_two_slacks() {
    let r = sweep_1us(50_000, &[("nanosleep", 60_000.0)]);
    assert!(timer_slack(&Results::of(&r)).is_none());
}

/// A cell whose median's 95 % interval is ±1 % (narrower than the testdata's ±5 %).
fn sharp(mut c: sleeplab_results::sweep::SweepCell) -> sleeplab_results::sweep::SweepCell {
    let m = c.summary.median_ns;
    c.summary.median_ci_ns = Some(Ci(Some(0.99 * m), Some(1.01 * m)));
    crate::testdata::resync(&mut c);
    c
}

#[test]
fn small_slack_difference_says_it_hardly_matters_and_states_the_line() {
    let cells = vec![
        sharp(cell("nanosleep", 10_000, 0, 50_000, 11_000.0)),
        sharp(cell("nanosleep", 10_000, 0, 1, 10_500.0)),
    ];
    let r = sweep_result(cells);
    let f = checked(timer_slack(&Results::of(&r)));
    assert_opens(&f, "Timer slack hardly matters here (under 2 µs): ");
    assert_says(&f, "was 500 ns [285–715 ns]");
}

/// A difference whose interval holds zero is not called longer or shorter: inside the
/// 2 µs line it hardly matters (an equivalence), reaching past it it is unclear.
#[test]
fn a_slack_difference_within_the_intervals_is_indistinguishable() {
    let cells = vec![
        cell("nanosleep", 10_000, 0, 50_000, 11_000.0),
        cell("nanosleep", 10_000, 0, 1, 10_500.0),
    ];
    let r = sweep_result(cells);
    let f = checked(timer_slack(&Results::of(&r)));
    assert_opens(
        &f,
        "Timer slack hardly matters here (under 2 µs): the median difference between sleeps of 1–100 µs at 50 µs slack and at 1 ns was 500 ns [-575 ns–1.57 µs], its 95 % interval within ±2 µs (",
    );
    assert!(
        !f.text.contains("longer") && !f.text.contains("shorter"),
        "{}",
        f.text
    );
    // ±20 % intervals: the difference may be −3.8 to 4.8 µs.
    let wide = |mut c: sleeplab_results::sweep::SweepCell| {
        let m = c.summary.median_ns;
        c.summary.median_ci_ns = Some(Ci(Some(0.8 * m), Some(1.2 * m)));
        crate::testdata::resync(&mut c);
        c
    };
    let cells = vec![
        wide(cell("nanosleep", 10_000, 0, 50_000, 11_000.0)),
        wide(cell("nanosleep", 10_000, 0, 1, 10_500.0)),
    ];
    let r = sweep_result(cells);
    let f = checked(timer_slack(&Results::of(&r)));
    assert_opens(
        &f,
        "Timer slack's effect is unclear here: the median difference between sleeps of 1–100 µs at 50 µs slack and at 1 ns was 500 ns, indistinguishable in this run from none ([-3.8–4.8 µs];",
    );
}

#[test]
fn poll_rounding_only_when_poll_waits_a_millisecond() {
    let cells = vec![
        cell("poll", 1_000, 0, 50_000, 1_060_000.0),
        cell("epoll", 1_000, 0, 50_000, 1_070_000.0),
        cell("ppoll", 1_000, 0, 50_000, 58_000.0),
    ];
    let r = sweep_result(cells);
    let f = checked(poll_rounding(&Results::of(&r)));
    assert_eq!(
        f.text,
        "poll and epoll_wait round up to whole milliseconds: asking poll for 1 µs took a median 1.06 ms (epoll: 1.07 ms); ppoll takes nanoseconds and does not."
    );
    let r = sweep_1us(50_000, &[("poll", 900_000.0)]);
    assert!(poll_rounding(&Results::of(&r)).is_none());
}

#[test]
fn cheapest_short_sleep_ignores_spin_and_yield() {
    let cells = vec![
        cell("nanosleep", 1_000, 0, 50_000, 60_200.0),
        cell("timerfd-reuse", 1_000, 0, 50_000, 12_300.0),
        cell("spin", 1_000, 0, 50_000, 1_050.0),
        cell("timerfd-reuse", 1_000, 2, 50_000, 5_000.0), // loaded: not compared
        cell("nanosleep", 0, 0, 50_000, 100.0),           // 0 is not a short sleep
    ];
    let r = sweep_result(cells);
    let f = checked(cheapest_short_sleep(&Results::of(&r)));
    assert_eq!(
        f.text,
        "The cheapest short sleep here is timerfd-reuse: asking for 1 µs took a median 12.3 µs (nanosleep took 60.2 µs). Only spinning comes closer (1.05 µs), at the price of a busy core."
    );
}

/// A past report: timerfd was "the cheapest short sleep" with 0.00 voluntary context
/// switches per call: it never blocked.
#[test]
fn a_call_that_never_blocked_is_not_the_cheapest_sleep() {
    let mut tfd = cell("timerfd", 1_000, 0, 50_000, 18_200.0);
    tfd.voluntary_csw_per_call = 0.0;
    tfd.cpu_ns_per_call = 18_900.0;
    let cells = vec![cell("nanosleep", 1_000, 0, 50_000, 65_900.0), tfd];
    let r = sweep_result(cells);
    let f = checked(cheapest_short_sleep(&Results::of(&r)));
    assert_opens(
        &f,
        "The cheapest short sleep here is nanosleep: asking for 1 µs took a median 65.9 µs.",
    );
    assert_says(&f, &format!("timerfd returned {NEVER_BLOCKED}"));
    assert_says(&f, "18.9 µs of CPU per call");
}

#[test]
fn load_effect_compares_one_statistic_idle_and_loaded() {
    let mut a = cell("nanosleep", 1_000_000, 0, 50_000, 1_060_000.0);
    a.summary.p99_ns = Some(1_200_000.0);
    a.summary.p99_ci_ns = Some(Ci(Some(1_100_000.0), Some(1_300_000.0)));
    let mut b = cell("nanosleep", 1_000_000, 2, 50_000, 1_100_000.0);
    b.summary.p99_ns = Some(8_600_000.0);
    b.summary.p99_ci_ns = Some(Ci(Some(8_000_000.0), Some(9_000_000.0)));
    crate::testdata::resync(&mut a);
    crate::testdata::resync(&mut b);
    let mut r = sweep_result(vec![a.clone(), b.clone()]);
    r.fingerprint.cpu_count = 2;
    let f = checked(load_effect(&Results::of(&r)));
    assert_eq!(
        f.text,
        "Load stretches the tail: with 2 busy threads on 2 CPUs, a 1 ms nanosleep's p99 grew from 1.2 ms idle to 8.6 ms (more than 20 %)."
    );
    // The same p99s whose intervals overlap (100 samples bound a p99 from
    // below only) draw no verdict; both intervals are given.
    a.summary.p99_ci_ns = Some(Ci(Some(1_100_000.0), None));
    b.summary.p99_ci_ns = Some(Ci(Some(1_000_000.0), None));
    crate::testdata::resync(&mut a);
    crate::testdata::resync(&mut b);
    let mut r = sweep_result(vec![a, b]);
    r.fingerprint.cpu_count = 2;
    let f = checked(load_effect(&Results::of(&r)));
    assert_eq!(
        f.text,
        "Load's effect on the tail is unclear here: with 2 busy threads on 2 CPUs, a 1 ms nanosleep's p99 was 1.2 ms [≥ 1.1 ms] idle and 8.6 ms [≥ 1 ms] loaded, indistinguishable in this run (95 % intervals over rounds)."
    );
}

#[test]
fn oversubscribed_load_is_named_and_small_samples_fall_back_to_a_resolved_statistic() {
    let mut a = cell("nanosleep", 10_000_000, 0, 50_000, 10_080_000.0);
    let mut b = cell("nanosleep", 10_000_000, 5, 50_000, 16_990_000.0);
    for c in [&mut a, &mut b] {
        c.summary.count = 6;
        c.summary.p90_ns = None;
        c.summary.p99_ns = None;
    }
    let mut r = sweep_result(vec![a, b]);
    r.fingerprint.cpu_count = 2;
    let f = checked(load_effect(&Results::of(&r)));
    assert_says(&f, "oversubscribed with 5 busy threads on 2 CPUs");
    assert_says(
        &f,
        "10 ms nanosleep's median grew from 10.1 ms idle to 17 ms",
    );
    assert_says(&f, "n = 6 and n = 6");
}

/// A past report: loaded medians lower than idle ones were not explained, and "Load hardly
/// changes sleeps" rested on them.
#[test]
fn loaded_faster_than_idle_states_the_cause_only_with_evidence() {
    let cells = vec![
        cell("clock-nanosleep", 0, 0, 50_000, 84_600.0),
        cell("clock-nanosleep", 0, 2, 50_000, 64_500.0),
        cell("clock-nanosleep", 1_000_000, 0, 50_000, 1_060_000.0),
        cell("clock-nanosleep", 1_000_000, 2, 50_000, 1_050_000.0),
    ];
    let mut r = sweep_result(cells);
    let f = checked(loaded_faster(&Results::of(&r)));
    assert_says(
        &f,
        "the median of 1 of 2 sleeping cells shrank by more than 10 %",
    );
    assert_says(&f, "clock-nanosleep 0 from 84.6 µs idle to 64.5 µs");
    assert_says(&f, "the cause is not stated");
    // The evidence: a VM whose idle CPUs halt (no cpuidle driver).
    r.fingerprint.virtualization = Some("kvm".into());
    r.fingerprint.idle = Some(sleeplab::system::Idle {
        driver: Some("none".into()),
        ..Default::default()
    });
    let f = checked(loaded_faster(&Results::of(&r)));
    assert_says(&f, "HLT");
    // A CPU latency request in force keeps CPUs out of idle: not the cause then.
    if let Some(i) = r.fingerprint.idle.as_mut() {
        i.cpu_latency_qos_us = Some(0);
    }
    let f = checked(loaded_faster(&Results::of(&r)));
    assert_says(&f, "the cause is not stated");
}

#[test]
fn early_wakeups_are_counted_never_hidden() {
    let mut a = cell("timerfd-interval", 10_000, 0, 50_000, 10_100.0);
    a.summary.early_count = 7;
    let b = cell("nanosleep", 10_000, 0, 50_000, 60_000.0);
    let r = sweep_result(vec![a, b]);
    let f = checked(early_wakeups(&Results::of(&r)));
    assert_eq!(
        f.text,
        "7 of 200 calls returned before the requested time (timerfd-interval 7) — a periodic timer's next expiry does not wait for the caller."
    );
    let r = sweep_result(vec![cell("nanosleep", 10_000, 0, 50_000, 60_000.0)]);
    assert_eq!(
        early_wakeups(&Results::of(&r)).unwrap().text,
        "No wait returned before its time in 100 measured calls."
    );
}

#[test]
fn long_sleeps_state_their_line_and_small_samples() {
    let mut spin = cell("spin", 1_000_000, 0, 50_000, 1_000_100.0);
    spin.cpu_ns_per_call = 1_000_000.0;
    let mut nano = cell("nanosleep", 1_000_000, 0, 50_000, 1_000_000.0);
    nano.cpu_ns_per_call = 10_000.0;
    let mut long = cell("nanosleep", 100_000_000, 0, 50_000, 100_189_000.0);
    long.summary.count = 2;
    long.summary.p90_ns = None;
    long.summary.p99_ns = None;
    let r = sweep_result(vec![spin, nano, long]);
    let rs = Results::of(&r);
    assert_eq!(
        checked(long_sleeps(&rs)).text,
        "Long sleeps are accurate: a 100 ms nanosleep overshot by a median 189 µs (0.19 %, under 1 % of the request, n = 2); only short sleeps suffer."
    );
    assert_eq!(
        checked(spin_cost(&rs)).text,
        "Spinning burns the CPU it waits on: spin used 100 % of a core while waiting 1 ms, nanosleep used 1 %."
    );
}

/// A past report: CPU per call above the time per call was clamped to 100 %.
#[test]
fn cpu_above_wall_time_is_shown_and_explained() {
    let mut spin = cell("spin", 1_000_000, 0, 50_000, 26.0);
    spin.cpu_ns_per_call = 72.0;
    let r = sweep_result(vec![spin]);
    let f = checked(spin_cost(&Results::of(&r)));
    assert_says(&f, "spin used 277 % of a core");
    assert_says(&f, "clock reads");
}

/// A past report: the first-calls finding applied an unstated 100 µs floor, and compared
/// with p99s of cells too small to have one.
#[test]
fn first_calls_state_both_thresholds_and_use_resolved_p99s_only() {
    let mut slow = cell("nanosleep", 10_000, 0, 50_000, 60_000.0);
    slow.first_calls_ns = vec![3_990_000];
    let mut small = cell("nanosleep", 1_000_000, 0, 50_000, 1_060_000.0);
    small.first_calls_ns = vec![90_000_000];
    small.summary.count = 6;
    small.summary.p99_ns = None;
    let mut quick = cell("poll", 10_000, 0, 50_000, 10.0);
    quick.first_calls_ns = vec![50_000]; // 3 333× its p99 of 15 ns, but under 100 µs
    let r = sweep_result(vec![slow, small, quick]);
    let f = checked(first_calls(&Results::of(&r)));
    assert_says(
        &f,
        "in 1 of the 2 cells with a p99 (100 calls or more), the first call took over 3× the cell's p99 and over 100 µs",
    );
    assert_says(&f, "3.99 ms against a p99 of 90 µs");
}

#[test]
fn a_survey_combines_its_stages_and_nothing_is_invented() {
    let main = sweep_1us(50_000, &[("poll", 1_060_000.0), ("nanosleep", 60_000.0)]);
    let slack = sweep_result(vec![
        cell("nanosleep", 10_000, 0, 50_000, 60_000.0),
        cell("nanosleep", 10_000, 0, 1, 12_000.0),
    ]);
    let s = survey(vec![("sweep", main), ("sweep-slack", slack)]);
    let f = findings(&Results::of(&s), sleeplab_results::Wording::NAMES);
    assert_eq!(
        ids(&f),
        vec![
            "cheapest-short-sleep",
            "timer-slack",
            "poll-rounding",
            "early-wakeups"
        ]
    );
    for x in &f {
        x.sentence().check().unwrap();
    }
    let empty = sweep_result(vec![]);
    assert!(findings(&Results::of(&empty), sleeplab_results::Wording::NAMES).is_empty());
}

#[test]
fn pace_finding_quotes_one_resolved_statistic_and_the_frame_count() {
    let mut r = stored("pace");
    let ExperimentData::Pace(p) = &mut r.data else {
        panic!("pace");
    };
    for (x, (name, p99, cpu)) in p.results.iter_mut().zip([
        ("std-sleep", 1_160_000.0, 0.14),
        ("spin", 2_000.0, 99.9),
        ("precise", 21_000.0, 1.25),
    ]) {
        x.strategy = name.into();
        x.error.p99_ns = Some(p99);
        x.error.count = 120;
        x.cpu_percent = cpu;
    }
    p.results.truncate(3);
    p.config.rate_hz = 60.0;
    assert_eq!(
        checked(pace_loop(&Results::of(&r))).text,
        "For a 60 Hz loop, `precise` woke with p99 21 µs late at 1.25 % CPU (std-sleep: p99 1.16 ms at 0.14 %; spin: p99 2 µs at 99.9 %; n = 120 frames each)."
    );
    // 90 frames cannot resolve a p99: the finding quotes the p90 and says so.
    if let ExperimentData::Pace(p) = &mut r.data {
        p.results.iter_mut().for_each(|x| {
            x.error.count = 90;
            x.error.p90_ns = Some(1_000.0);
            x.error.p99_ns = None;
        });
    }
    let f = checked(pace_loop(&Results::of(&r))).text;
    assert!(
        f.contains("with p90 1 µs late") && f.contains("n = 90 frames each"),
        "{f}"
    );
    if let ExperimentData::Pace(p) = &mut r.data {
        p.results.retain(|x| x.strategy != "precise");
    }
    assert!(pace_loop(&Results::of(&r)).is_none());
}

#[test]
fn newer_waits_are_faster_only_where_the_intervals_separate() {
    let with_ci = |mut c: sleeplab_results::sweep::SweepCell, lo: f64, hi: f64| {
        c.summary.median_ci_ns = Some(sleeplab_stats::Ci(Some(lo), Some(hi)));
        c
    };
    let cells = vec![
        with_ci(
            cell("clock-nanosleep", 1_000, 0, 50_000, 69_000.0),
            68_000.0,
            70_000.0,
        ),
        with_ci(
            cell("io-uring-timeout", 1_000, 0, 50_000, 21_000.0),
            20_000.0,
            22_000.0,
        ),
        with_ci(
            cell("futex-waitv", 1_000, 0, 50_000, 68_500.0),
            60_000.0,
            75_000.0,
        ),
        cell("io-uring-wait", 1_000, 2, 50_000, 5_000.0), // loaded: not compared
    ];
    let r = sweep_result(cells);
    let f = checked(newer_waits(&Results::of(&r)));
    assert_eq!(
        f.text,
        "io_uring and futex_waitv against clock_nanosleep: asked for 1 µs idle, they took a median of io-uring-timeout 21 µs and futex-waitv 68.5 µs against clock-nanosleep 69 µs: io-uring-timeout faster, futex-waitv indistinguishable in this run (faster or slower only where the 95 % intervals of the medians over the sweep's rounds separate); the kernel arms their timers without the thread's timer slack (50 µs here), clock_nanosleep's with it, which alone can make them faster."
    );
    let r = sweep_1us(50_000, &[("clock-nanosleep", 69_000.0)]);
    assert!(newer_waits(&Results::of(&r)).is_none());
}
