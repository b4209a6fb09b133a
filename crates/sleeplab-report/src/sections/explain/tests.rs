//! The explain section on synthetic cells: charts, bars, legend, captions, table, status.

use super::*;
use crate::escape;
use crate::testdata::{self, explain_cell, wakes};
use proptest::prelude::*;
use sleeplab_account::{
    Component::RunQueue, Component::Slack, Component::TimerIrq, Component::Unexplained, Explanation,
};
use sleeplab_results::explain::ExplainCell;
use sleeplab_results::model::ExperimentData;

/// 50 µs of slack, 20 µs of interrupt, 5 µs of run queue; the slowest of `n` wakes
/// `tail_rq` on a run queue.
fn cell(mech: &str, req: u64, load: usize, n: usize, tail_rq: u64) -> ExplainCell {
    let typical = [(Slack, 50_000), (TimerIrq, 20_000), (RunQueue, 5_000)];
    let tail = [(Slack, 50_000), (RunQueue, tail_rq)];
    explain_cell(mech, req, load, &wakes(n, &typical, 1, &tail))
}

/// Two mechanisms × 2 requests × 2 loads, 100 wakes each, tails of 2 ms.
fn grid() -> Vec<ExplainCell> {
    let mut v = Vec::new();
    for m in ["nanosleep", "timerfd"] {
        for req in [100_000, 1_000_000] {
            for load in [0, 2] {
                v.push(cell(m, req, load, 100, 2_000_000));
            }
        }
    }
    v
}

fn accounts(cells: &[ExplainCell]) -> Vec<CellAccount<'_>> {
    cells.iter().map(CellAccount::from).collect()
}

fn page(data: ExperimentData) -> String {
    crate::render(&testdata::result(data), Wording::NAMES)
}

#[test]
fn one_chart_for_every_cell_a_bar_per_cell_and_the_components_legend() {
    let cells = grid();
    let html = page(ExperimentData::Explain(testdata::explain(cells.clone(), 3)));
    assert!(html.contains("<section class=\"card\" id=\"explain\">"));
    // The tails (2 ms) dwarf the typical wakes (75 µs): two charts, for every cell.
    for id in ["explain-cells", "explain-cells-tail"] {
        assert!(html.contains(&format!("data-chart=\"{id}\"")), "{id}");
    }
    assert!(!html.contains("data-chart=\"explain-nanosleep"));
    assert!(!html.contains("could not be drawn"));
    // The legend, once for the one chart: the components with time, each in its fixed
    // colour and named for what happened, its precise term beside; no others.
    for k in [Slack, TimerIrq, RunQueue] {
        let swatch = format!(
            "<i style=\"background:{}\"></i>{}",
            css(component_color(k)),
            escape::html(&k.legend(Machine::Host))
        );
        assert_eq!(html.matches(&swatch).count(), 1, "{swatch}");
    }
    assert!(html.contains("other tasks on the CPU (run queue)"));
    for k in [Component::IdleWakeup, Component::Spin, Unexplained] {
        assert!(
            !html.contains(&format!("</i>{}</span>", k.legend(Machine::Host))),
            "{k:?}"
        );
    }
    // A bar per cell, named in the chart, in each of the pair.
    let specs = stacks("nanosleep", &accounts(&cells[..4]), false, Machine::Host);
    assert_eq!(specs.len(), 2);
    for s in &specs {
        assert_eq!(s.bars.len(), 4);
        assert!(s.bars.iter().all(|b| b.values.is_some()));
    }
    // Two mechanisms in one chart: each bar named with its mechanism.
    let svg_names = [
        "nanosleep 100 µs, load 0",
        "nanosleep 100 µs, load 2",
        "timerfd 1 ms, load 0",
        "timerfd 1 ms, load 2",
    ];
    let start = html.find("data-chart=\"explain-cells\"").unwrap();
    let svg = &html[start..start + html[start..].find("</svg>").unwrap()];
    for n in svg_names {
        assert!(svg.contains(n), "{n} not in the chart");
    }
    // The status: counts of wakes, partly unexplained ones and lost events.
    assert!(
        html.contains("800 wakes traced; 0 partly unexplained") && html.contains("3 events lost"),
        "status missing"
    );
}

#[test]
fn the_typical_bar_adds_up_to_the_bands_mean_lateness() {
    let cells = grid();
    let acc = accounts(&cells);
    for s in stacks("nanosleep", &acc[..4], false, Machine::Host) {
        assert_eq!(s.segments.len(), 3);
        assert_eq!(s.x.scale, crate::charts::axis::Scale::Linear);
        assert_eq!(s.x.range, None, "fitted from 0 when drawn");
    }
    let typical = &stacks("nanosleep", &acc[..4], false, Machine::Host)[0];
    for (bar, c) in typical.bars.iter().zip(&acc) {
        let mean = c.explanation.typical.as_ref().unwrap().lateness_mean_ns;
        assert!(
            (bar.total() - mean).abs() < 1e-6,
            "{} vs {mean}",
            bar.total()
        );
    }
}

#[test]
fn a_tail_close_to_the_typical_wake_shares_its_axis() {
    // Tails of 200 µs run queue: 250 µs against 75 µs, within 4×.
    let cells: Vec<ExplainCell> = [0, 2]
        .map(|l| cell("nanosleep", 1_000_000, l, 100, 200_000))
        .to_vec();
    let specs = stacks("nanosleep", &accounts(&cells), false, Machine::Host);
    assert_eq!(specs.len(), 1);
    let names: Vec<&str> = specs[0].bars.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "1 ms, load 0: typical",
            "1 ms, load 0: tail",
            "1 ms, load 2: typical",
            "1 ms, load 2: tail"
        ]
    );
    let html = page(ExperimentData::Explain(testdata::explain(cells, 0)));
    assert!(html.contains("data-chart=\"explain-cells\""));
    assert!(!html.contains("explain-cells-tail"));
}

#[test]
fn cells_too_small_for_a_p99_have_no_tail_and_say_so() {
    // 40 wakes: no tail anywhere, the typical chart alone, and "–" for every p99.
    let small: Vec<ExplainCell> = vec![cell("epoll", 1_000_000, 0, 40, 2_000_000)];
    let specs = stacks("epoll", &accounts(&small), false, Machine::Host);
    assert_eq!(specs.len(), 1);
    assert_eq!(specs[0].bars.len(), 1);
    let t = table(&accounts(&small), false, true, Machine::Host);
    let late_p99 = t.header.iter().position(|h| h == "late p99").unwrap();
    assert_eq!(t.rows[0][late_p99], Cell::Num("–".into()));
    assert!(
        t.rows[0]
            .iter()
            .any(|c| matches!(c, Cell::NumSub(_, p) if p == "p99 –"))
    );
    assert!(t.header.iter().any(|h| h == "timer slack"));
    // Beside a cell that has one: its row in the tail chart is empty and named.
    let mixed = vec![
        cell("epoll", 1_000_000, 0, 40, 2_000_000),
        cell("epoll", 1_000_000, 2, 100, 2_000_000),
    ];
    let specs = stacks("epoll", &accounts(&mixed), false, Machine::Host);
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[1].bars[0].name, "1 ms, load 0 (n 40 < 100)");
    assert_eq!(specs[1].bars[0].values, None);
    assert!(specs[1].bars[1].values.is_some());
}

#[test]
fn the_folded_list_holds_each_cells_checked_sentence_once() {
    let cells = grid();
    let acc = accounts(&cells);
    let all = sentences(&acc, Machine::Host);
    assert_eq!(all.len(), acc.len());
    // In the page, folded below the one chart, escaped as every text is; once each.
    let html = page(ExperimentData::Explain(testdata::explain(cells.clone(), 0)));
    assert!(html.contains("<details class=\"folded\"><summary>Each cell in a sentence"));
    for (c, s) in acc.iter().zip(&all) {
        s.check().unwrap();
        assert_eq!(s.text, cell_sentence(c, Machine::Host).unwrap().text);
        assert_eq!(
            html.matches(&escape::html(&s.text)).count(),
            1,
            "{}",
            s.text
        );
    }
    // One chart for every cell, not one per mechanism.
    let charts = html.matches("data-chart=\"explain-").count();
    assert!((1..=2).contains(&charts), "{charts} charts");
}

#[test]
fn untraced_wakes_and_the_partial_account_are_stated() {
    let mut w = wakes(10, &[(Slack, 50_000), (Unexplained, 9_000)], 0, &[]);
    w[0].traced = false;
    let mut traced = explain_cell("nanosleep", 100_000, 0, &w);
    let t = table(&[CellAccount::from(&traced)], false, true, Machine::Host);
    let col = t.header.iter().position(|h| h == "untraced").unwrap();
    assert_eq!(t.rows[0][col], Cell::Warn("1".into()));
    // The partial account: the note, no "untraced" column.
    traced.explanation = Explanation::of(&w, 0, true);
    let mut data = testdata::explain(vec![traced], 0);
    let note = "kernel tracing unavailable: not allowed; run as root (sudo)";
    data.tracing = Tracing::partial(note);
    let html = page(ExperimentData::Explain(data));
    assert!(html.contains("No kernel trace: a partial account of 10 wakes"));
    assert!(html.contains(&escape::html(note)));
    assert!(!html.contains("<th class=\"num\">untraced</th>"));
    assert!(html.contains("a partial account: run queue and timer slack from /proc"));
}

/// A run that asked for tracing and recorded nothing claims no partial /proc account,
/// and its section says only that.
#[test]
fn a_run_that_recorded_nothing_claims_no_account() {
    assert_eq!(
        status(&Tracing::nothing_recorded(), &[]),
        "No kernel trace and no /proc account: nothing was recorded: the run measured no \
         cell that could be traced."
    );
    let mut sweep = testdata::sweep(vec![]);
    sweep.tracing = Some(Tracing::nothing_recorded());
    let html = page(ExperimentData::Sweep(sweep));
    assert!(html.contains("id=\"sweep-trace\""));
    assert!(html.contains("No kernel trace and no /proc account: nothing was recorded"));
    assert!(!html.contains("From the kernel's tracepoints"));
    assert!(!html.contains("data-chart=\"sweep-trace"));
}

/// A traced run that recorded nothing, listed first, does not hide the account of a
/// later traced run from the answer and the findings' readers.
#[test]
fn a_run_that_recorded_nothing_does_not_hide_a_later_account() {
    let mut empty = testdata::sweep(vec![]);
    empty.tracing = Some(Tracing::nothing_recorded());
    let mut c = testdata::cell("nanosleep", 1_000_000, 0, 50_000, 1_080_000.0);
    let w = wakes(100, &[(Slack, 50_000), (TimerIrq, 30_000)], 0, &[]);
    c.explanation = Some(Explanation::of(&w, 0, false));
    let mut traced = testdata::sweep(vec![c]);
    traced.tracing = Some(Tracing::kernel(0));
    let survey = testdata::survey(vec![
        ("sweep", testdata::result(ExperimentData::Sweep(empty))),
        ("sweep", testdata::result(ExperimentData::Sweep(traced))),
    ]);
    let r = Results::of(&survey);
    let (t, machine) = crate::findings::first_traced(&r).expect("the second run's account");
    assert_eq!(t.cells.len(), 1);
    assert_eq!(sleeplab_account::why_late(&t.cells, machine).len(), 1);
}

#[test]
fn a_traced_sweep_gets_its_section_an_untraced_one_none() {
    let mut c = testdata::cell("nanosleep", 1_000_000, 0, 50_000, 1_080_000.0);
    let mut sweep = testdata::sweep(vec![c.clone()]);
    assert!(
        page(ExperimentData::Sweep(sweep.clone()))
            .find("id=\"sweep-trace\"")
            .is_none()
    );
    let w = wakes(100, &[(Slack, 50_000), (TimerIrq, 30_000)], 0, &[]);
    c.explanation = Some(Explanation::of(&w, 0, false));
    sweep.cells = vec![c];
    sweep.tracing = Some(Tracing::kernel(0));
    let html = page(ExperimentData::Sweep(sweep));
    assert!(html.contains("id=\"sweep-trace\""));
    assert!(html.contains("data-chart=\"sweep-trace-cells\""));
    // The command that traced it, its flag in the hints' words.
    assert!(html.contains("sleeplab sweep Trace"));
}

#[test]
fn a_surveys_explain_stage_is_drawn_and_its_sentences_folded_in_its_section() {
    let explain = testdata::result(ExperimentData::Explain(testdata::explain(grid(), 0)));
    let survey = testdata::survey(vec![("explain", explain)]);
    let p = crate::page(&survey, Wording::NAMES);
    assert!(p.sections.iter().any(|s| s.id == "explain"));
    // Each cell's sentence is in its section, folded; none in the findings at the top.
    assert!(!p.findings.iter().any(|f| f.contains("late at the median")));
    let html = p.render();
    assert_eq!(html.matches("late at the median").count(), 8);
}

proptest! {
    /// For random cells: a bar per cell in every chart, each typical bar adds up to its
    /// band's mean lateness, and the caption's claims hold.
    #[test]
    fn bars_and_captions_hold_for_random_cells(
        cells in prop::collection::vec(
            (prop::collection::vec(0u64..200_000, Component::COUNT), 1usize..150, 0u64..5_000_000),
            1..5,
        )
    ) {
        let cells: Vec<ExplainCell> = cells
            .iter()
            .enumerate()
            .map(|(i, (v, n, slow))| {
                let parts: Vec<(Component, u64)> =
                    Component::ALL.into_iter().zip(v.iter().copied()).collect();
                let tail = [(RunQueue, *slow)];
                explain_cell("nanosleep", 1_000 * (i as u64 + 1), 0, &wakes(*n, &parts, 1, &tail))
            })
            .collect();
        let acc = accounts(&cells);
        for s in stacks("nanosleep", &acc, false, Machine::Host) {
            let per_cell = if s.bars.len() == 2 * acc.len() { 2 } else { 1 };
            prop_assert_eq!(s.bars.len(), per_cell * acc.len());
        }
        let typical = &stacks("nanosleep", &acc, false, Machine::Host)[0];
        if typical.bars.len() == acc.len() {
            for (bar, c) in typical.bars.iter().zip(&acc) {
                let mean = c.explanation.typical.as_ref().unwrap().lateness_mean_ns;
                prop_assert!((bar.total() - mean).abs() <= 1e-6 * mean.max(1.0));
            }
        }
        for s in sentences(&acc, Machine::Host) {
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}

/// A spin gap's reading is named in the words of the result's own fingerprint (a
/// result from bare metal says "SMI, firmware" wherever it is read back): in the
/// legend, the table, the captions and the findings.
#[test]
fn the_spin_gap_keeps_the_words_of_the_results_machine() {
    let w = wakes(
        100,
        &[(Slack, 50_000), (Component::SpinGap, 30_000)],
        0,
        &[],
    );
    let data = ExperimentData::Explain(testdata::explain(
        vec![explain_cell("nanosleep", 100_000, 0, &w)],
        0,
    ));
    let words = |m: Machine| (Component::SpinGap.label(m), Component::SpinGap.phrase(m));
    let (hardware, host) = (words(Machine::Hardware), words(Machine::Host));
    for (virt, (label, phrase), (not_label, not_phrase)) in
        [(None, hardware, host), (Some("kvm"), host, hardware)]
    {
        let mut r = testdata::result(data.clone());
        r.fingerprint.virtualization = virt.map(String::from);
        let html = crate::render(&r, Wording::NAMES);
        // Legend and table header name it; the finding's sentence says it.
        assert!(html.matches(&escape::html(label)).count() >= 2, "{label}");
        assert!(html.contains(&escape::html(phrase)), "{phrase}");
        for not in [not_label, not_phrase] {
            assert!(!html.contains(&escape::html(not)), "{not}");
        }
    }
}
