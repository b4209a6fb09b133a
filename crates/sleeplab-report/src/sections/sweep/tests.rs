//! The sweep sections' tests: CDFs, every caption checked against its numbers (one case
//! per untruth a past report printed, and a property test over random sweeps), seed 000's
//! tables against hand-computed values, the 0 request in the scatter, CPU above 100 %.

use super::*;
use crate::testdata::{cell, result, sweep};
use crate::view::Results;
use proptest::prelude::*;
use sleeplab_results::model::ExperimentData;
use sleeplab_stats::{Cell, summarize};

/// The html of `sections` rendered on a page.
fn html(secs: &[Section]) -> String {
    crate::html::Page {
        sections: secs.to_vec(),
        ..Default::default()
    }
    .render()
}

#[test]
fn exact_cdf_when_every_sample_was_kept() {
    let mut c = cell("nanosleep", 1_000, 0, 50_000, 60_000.0);
    c.samples_ns = vec![30, 10, 20, 40];
    c.summary.count = 4;
    assert_eq!(
        distributions::cdf(&c),
        vec![
            (10.0, 0.0),
            (10.0, 25.0),
            (20.0, 25.0),
            (20.0, 50.0),
            (30.0, 50.0),
            (30.0, 75.0),
            (40.0, 75.0),
            (40.0, 100.0)
        ]
    );
}

#[test]
fn cdf_ends_at_100_and_starts_at_the_minimum() {
    let c = cell("nanosleep", 1_000, 0, 50_000, 60_000.0);
    let p = distributions::cdf(&c);
    assert_eq!(p.first(), Some(&(54_000.0, 0.0)));
    assert_eq!(p.last().unwrap().1, 100.0);
    assert!(p.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
}

#[test]
fn hero_caption_states_the_spread_and_the_accurate_range() {
    let mut spun = cell("timerfd-interval", 1_000, 0, 50_000, 2_000.0);
    spun.voluntary_csw_per_call = 0.0;
    let cells = vec![
        cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
        cell("timerfd", 1_000, 0, 50_000, 12_000.0),
        spun,
        cell("nanosleep", 1_000_000, 0, 50_000, 1_050_000.0),
        cell("timerfd", 1_000_000, 0, 50_000, 1_010_000.0),
    ];
    let r = result(ExperimentData::Sweep(sweep(cells)));
    let rs = Results::of(&r);
    let s = requested::hero_caption(&rs.main_sweep().unwrap());
    s.check().unwrap();
    assert_eq!(
        s.text,
        "With no load, asking to sleep 1 µs took a median from 12 µs (timerfd, the least) to 60 µs (nanosleep, the most) among the mechanisms that blocked, ×12 to ×60 the request; timerfd-interval returned without sleeping (under 0.5 voluntary context switches per call); from 1 ms up, the median of every mechanism that blocked stayed within 10 % of the request."
    );
}

/// A sleep call measured at 0 and 1 µs, idle and with 5 busy threads, from these samples.
fn timertest_sweep() -> sleeplab_results::model::ResultFile {
    let mut cells = Vec::new();
    for (d, load, samples) in [
        (0u64, 0usize, vec![900u64, 1_000, 1_100]),
        (0, 5, vec![1_000, 2_000, 3_000, 4_000, 5_000]),
        (1_000, 0, vec![10_000, 12_000, 14_000, 16_000, 18_000]),
        (1_000, 5, vec![20_000, 40_000]),
    ] {
        let mut c = cell("nanosleep", d, load, 50_000, 1.0);
        c.summary = summarize(&samples, d);
        c.samples_ns = samples;
        crate::testdata::resync(&mut c);
        cells.push(c);
    }
    result(ExperimentData::Sweep(sweep(cells)))
}

#[test]
fn seed_000_tables_hold_the_hand_computed_mean_and_sigma() {
    let r = timertest_sweep();
    let rs = Results::of(&r);
    let m = rs.main_sweep().unwrap();
    let (mean, sigma) = timertest::tables(&m, "nanosleep");
    assert_eq!(
        mean.header,
        ["requested", "mean @ no load", "mean @ 5 busy threads"]
    );
    // 1 µs idle: 10, 12, 14, 16, 18 µs: mean 14 µs, σ (÷ n) = √8 µs = 2.83 µs.
    assert_eq!(mean.rows[1][1], Cell::NumSub("14 µs".into(), "n 5".into()));
    assert_eq!(sigma.rows[1][1], Cell::Num("2.83 µs".into()));
    // 1 µs loaded: 20, 40 µs: mean 30 µs, σ (÷ n) = 10 µs (÷ n − 1 would be 14.1 µs).
    assert_eq!(mean.rows[1][2], Cell::NumSub("30 µs".into(), "n 2".into()));
    assert_eq!(sigma.rows[1][2], Cell::Num("10 µs".into()));
    // 0 loaded: 1 … 5 µs: mean 3 µs, σ (÷ n) = √2 µs.
    assert_eq!(mean.rows[0][2], Cell::NumSub("3 µs".into(), "n 5".into()));
    assert_eq!(sigma.rows[0][2], Cell::Num("1.41 µs".into()));
    let s = timertest::tables_caption(&m, "nanosleep");
    s.check().unwrap();
    assert!(s.text.contains("σ divides by n"), "{}", s.text);
    assert!(
        s.text.contains("The mean of a 1 µs nanosleep grew from 14 µs (no load, n = 5) to 30 µs (5 busy threads, n = 2)."),
        "{}",
        s.text
    );
}

#[test]
fn the_scatter_shows_every_kept_sample_and_the_0_request() {
    let r = timertest_sweep();
    let rs = Results::of(&r);
    let m = rs.main_sweep().unwrap();
    let idle = timertest::samples(&m, "nanosleep", 0);
    assert_eq!(idle.len(), 3 + 5);
    assert_eq!(idle.iter().filter(|p| p.0 == 0.0).count(), 3);
    assert!(idle.contains(&(0.0, 900.0)) && idle.contains(&(1_000.0, 18_000.0)));
    let sec = timertest::section(&m).unwrap();
    let h = html(&[sec]);
    for id in [
        "sweep-timertest-scatter-load-0",
        "sweep-timertest-scatter-load-5",
    ] {
        assert!(h.contains(&format!("data-chart=\"{id}\"")), "{id} missing");
    }
    // The 0 strip's tick label, and every sample drawn (3 + 5 idle, 5 + 2 loaded).
    assert!(h.contains(">\n0\n</text>"));
    assert_eq!(h.matches("<circle").count(), 15);
    assert!(h.contains("strip of its own"));
}

#[test]
fn cpu_above_the_time_per_call_is_shown_and_explained() {
    // std-sleep(0): 72 ns of CPU in 26 ns per call (once clamped): 277 %, not 100 %.
    let mut zero = cell("nanosleep", 0, 0, 50_000, 26.0);
    zero.cpu_ns_per_call = 72.0;
    let cells = vec![
        zero,
        cell("nanosleep", 1_000_000, 0, 50_000, 1_060_000.0),
        {
            let mut c = cell("spin", 1_000_000, 0, 50_000, 1_000_100.0);
            c.cpu_ns_per_call = 990_000.0;
            c.voluntary_csw_per_call = 0.0;
            c
        },
    ];
    let r = result(ExperimentData::Sweep(sweep(cells)));
    let rs = Results::of(&r);
    let m = rs.main_sweep().unwrap();
    let s = cpu::caption(&m, &highlighted(&m));
    s.check().unwrap();
    assert!(
        s.text.starts_with("While waiting 1 ms, spin used the most CPU by point value (99 % of a core) and nanosleep the least (1 %, 1.00 voluntary"),
        "{}",
        s.text
    );
    assert!(
        s.text
            .contains("1 of the 3 cells in the table are above 100 %"),
        "{}",
        s.text
    );
    assert!(s.text.contains("72 ns CPU in 26 ns per call"), "{}", s.text);
    assert!(s.text.contains(crate::findings::CPU_NOTE));
    let h = html(&[cpu::section(&m).unwrap()]);
    assert!(h.contains("277 % ▲"), "not shown as measured");
}

#[test]
fn every_section_has_its_charts() {
    let mut cells = Vec::new();
    for m in ["nanosleep", "poll", "spin"] {
        for d in [0u64, 1_000, 1_000_000] {
            for l in [0usize, 2] {
                cells.push(cell(m, d, l, 50_000, d as f64 + 50_000.0));
            }
        }
    }
    let r = result(ExperimentData::Sweep(sweep(cells)));
    let secs = sections(&Results::of(&r), Wording::NAMES);
    let ids: Vec<&str> = secs.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "requested-vs-actual",
            "timertest",
            "distributions",
            "cpu-cost"
        ]
    );
    // The main mechanisms' chart opens the page under the answer, not in the section.
    let hero = super::hero(&Results::of(&r)).expect("a main sweep");
    let h = html(&secs);
    let page = crate::html::Page {
        answer: vec![("a".into(), "b".into())],
        answer_figure: Some(hero),
        ..Default::default()
    }
    .render();
    assert!(page.contains("data-chart=\"sweep-requested-actual\""));
    assert!(!h.contains("data-chart=\"sweep-requested-actual\""));
    for id in [
        "sweep-mechanism-nanosleep",
        "sweep-mechanism-poll",
        "sweep-mechanism-spin",
        "sweep-timertest-scatter-load-0",
        "sweep-timertest-scatter-load-2",
        "sweep-cdf-1000ns",
        "sweep-cdf-1000000ns",
        "sweep-cpu",
    ] {
        assert!(h.contains(&format!("data-chart=\"{id}\"")), "{id} missing");
    }
    assert!(!h.contains("could not be drawn"), "a chart failed");
    // No strategy measured: the section says what measures seed 002's figure 2.
    assert!(h.contains("survey; Figure2 measures and draws it."));
}

#[test]
fn figure_2_is_drawn_when_a_strategy_was_measured() {
    let mut cells = Vec::new();
    for m in ["precise", "std-sleep", "spin"] {
        for d in [1u64, 1_000, 1_000_000, 1_000_000_000] {
            cells.push(cell(m, d, 0, 50_000, d as f64 + 50_000.0));
        }
    }
    let data = sweep(cells);
    assert_eq!(
        figure2::contenders(&data),
        Some(vec!["precise", "std-sleep", "spin"])
    );
    let r = result(ExperimentData::Sweep(data));
    let secs = sections(&Results::of(&r), Wording::NAMES);
    let h = html(&secs);
    assert!(h.contains("data-chart=\"sweep-figure-2\""));
    assert!(!h.contains("is not part of the survey"));
}

proptest! {
    /// Every sweep caption is true of its numbers, whatever the medians, sample sizes,
    /// context switches and CPU times.
    #[test]
    fn sweep_captions_are_true_of_their_numbers(
        v in proptest::collection::vec(
            (1.0f64..1e7, 1u64..3000, 0.0f64..2.0, 0.0f64..2e6, 1.0f64..1e7),
            1..5,
        )
    ) {
        const NAMES: [&str; 5] = ["nanosleep", "select", "poll", "futex", "spin"];
        let mut cells = Vec::new();
        for (i, &(med, n, csw, cpu, loaded)) in v.iter().enumerate() {
            for (d, l, median) in [(1_000u64, 0usize, med), (1_000_000, 0, med + 1e6), (1_000_000, 5, loaded)] {
                let mut c = cell(NAMES[i], d, l, 50_000, median);
                c.summary.count = n;
                c.summary.enforce_quantile_rule();
                c.voluntary_csw_per_call = csw;
                c.cpu_ns_per_call = cpu;
                cells.push(c);
            }
        }
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let rs = Results::of(&r);
        let m = rs.main_sweep().unwrap();
        let hl = highlighted(&m);
        for s in [
            requested::hero_caption(&m),
            distributions::caption(&m, &hl, 1_000),
            distributions::caption(&m, &hl, 1_000_000),
            cpu::caption(&m, &hl),
            timertest::tables_caption(&m, "nanosleep"),
        ] {
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}
