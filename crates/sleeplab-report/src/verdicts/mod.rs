//! The walk over every producer of a verdict: each file that builds a
//! `Claim::Verdict` or a `Claim::Equivalent` (or ranks values with intervals) is run on
//! synthetic results whose units vary (none in the result, too few for an interval,
//! enough, with intervals of any width, open or closed), and every sentence must pass
//! its own check and the oracle `sleeplab_stats::rests_on_units`: no verdict on pooled samples,
//! none on a bare point value unless the sentence says "by point value", none between
//! runs on within-run intervals unless it says so.

mod inputs;

use super::compare::{Fleet, Matched, Pair, Sides};
use super::view::Results;
use inputs::{Input, Shape, arb_input, oneshot, pace, runtimes, sweeps, tune};
use proptest::prelude::*;
use sleeplab_results::Wording;
use sleeplab_results::advise::{Candidate, choose, reason, runner_up_sentence};
use sleeplab_results::model::{ExperimentData, ResultFile};
use sleeplab_results::pace::{PaceResult, frontier_sentence, standings};
use sleeplab_stats::{Sentence, rests_on_units};
use std::path::Path;

/// Every file (below the CLI's `src/`, or `CRATE/…` below another crate's) that builds a
/// verdict, an equivalence or a ranking over intervals (the walk below takes each).
const PRODUCERS: [&str; 20] = [
    "sleeplab-report/compare/fleet/mod.rs",
    "sleeplab-report/compare/pair/mod.rs",
    "sleeplab-report/compare/runs/mod.rs",
    "sleeplab-report/findings/binding_gain.rs",
    "sleeplab-report/findings/load.rs",
    "sleeplab-report/findings/mod.rs",
    "sleeplab-report/findings/newer_waits.rs",
    "sleeplab-report/findings/short_sleeps.rs",
    "sleeplab-report/findings/slack.rs",
    "sleeplab-report/sections/precise.rs",
    "sleeplab-report/sections/runtimes.rs",
    "sleeplab-report/sections/sweep/captions.rs",
    "sleeplab-report/sections/sweep/requested.rs",
    "sleeplab-report/sections/sweep/timertest.rs",
    "sleeplab-account/steal.rs",
    "sleeplab-report/answer.rs",
    "sleeplab-results/experiments/advise/choice.rs",
    "sleeplab-results/experiments/pace/frontier.rs",
    "sleeplab-results/experiments/tune/sentence.rs",
    "sleeplab-results/result_file/host_noise.rs",
];

/// The source files below `dir`, as paths relative to `root` after `prefix`.
fn sources(root: &Path, dir: &Path, prefix: &str, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).expect("src is readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(root, &p, prefix, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().display();
            let src = std::fs::read_to_string(&p).unwrap();
            out.push((format!("{prefix}{rel}"), src));
        }
    }
}

/// A new producer of a verdict must join the walk: every file that builds one (claims
/// themselves and tests aside) is in [`PRODUCERS`], and every one listed still builds one.
#[test]
fn every_producer_of_a_verdict_is_walked() {
    // The CLI's files, then those of the crates below it whose sentences the report says.
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for (krate, prefix) in [
        ("sleeplab-cli", ""),
        ("sleeplab-account", "sleeplab-account/"),
        ("sleeplab-report", "sleeplab-report/"),
        ("sleeplab-results", "sleeplab-results/"),
        ("sleeplab-stats", "sleeplab-stats/"),
    ] {
        let root = crates.join(krate).join("src");
        sources(&root, &root, prefix, &mut files);
    }
    // A producer builds a verdict or an equivalence, states a change (the captions'
    // `changed`), or ranks values over intervals.
    let produces = |code: &str| {
        code.contains("Claim::Verdict {")
            || code.contains("Claim::Equivalent {")
            || code.contains("changed(&mut")
            || code.contains(".rank_over(")
            || (code.contains("Claim::Rank")
                && code.lines().any(|l| {
                    let l = l.trim();
                    l.starts_with("intervals:") && l != "intervals: Vec::new(),"
                }))
    };
    let mut found: Vec<String> = files
        .iter()
        .filter(|(p, _)| {
            !p.starts_with("sleeplab-stats/claim/")
                && !p.ends_with("tests.rs")
                && !p.contains("/tests/")
                && !p.starts_with("sleeplab-report/verdicts/")
        })
        .filter(|(_, src)| produces(before_tests(src)))
        .map(|(p, _)| p.clone())
        .collect();
    found.sort();
    let mut listed: Vec<String> = PRODUCERS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        found, listed,
        "the producers of verdicts changed: walk the new ones"
    );
}

/// The part of a file before its tests: up to the first `#[cfg(test)]` that does more
/// than declare a test-only child module (`#[cfg(test)] mod props;`).
fn before_tests(src: &str) -> &str {
    let mut from = 0;
    while let Some(i) = src[from..].find("#[cfg(test)]") {
        let at = from + i;
        let next = src[at + "#[cfg(test)]".len()..].trim_start();
        let line = next.lines().next().unwrap_or("");
        if !(line.contains("mod ") && line.ends_with(';')) {
            return &src[..at];
        }
        from = at + 1;
    }
    src
}

/// Every producer's sentences on `input`, each named by its producer.
fn walk(input: &Input) -> Vec<(&'static str, Sentence)> {
    let (cells, runs, contenders, tolerance, gain) = input;
    let mut out: Vec<(&'static str, Sentence)> = Vec::new();
    // Sweeps: every finding, every caption that compares, and the comparisons of two,
    // three and three-against-three runs of them.
    let r = sweeps(cells);
    let rs = Results::of(&r);
    out.extend(
        crate::findings(&rs, Wording::NAMES)
            .into_iter()
            .map(|f| (f.id, f.sentence())),
    );
    out.extend(
        super::sections::sweep::captions(&rs)
            .into_iter()
            .map(|s| ("sweep caption", s)),
    );
    let scaled: Vec<ResultFile> = runs
        .iter()
        .map(|k| {
            let v: Vec<_> = cells
                .iter()
                .map(|&(a, b, c, s)| (a * k, b * k, c * k, s))
                .collect();
            sweeps(&v)
        })
        .collect();
    let named: Vec<(String, &ResultFile)> = scaled
        .iter()
        .enumerate()
        .map(|(i, r)| (format!("r{i}"), r))
        .collect();
    // The pair: the first run of each side.
    let m2 = Matched::of(&[named[0].clone(), named[3].clone()]).unwrap();
    out.extend(
        Pair::of(&m2)
            .unwrap()
            .summary_sentences()
            .into_iter()
            .map(|s| ("pair", s)),
    );
    out.extend(
        Fleet::of(&Matched::of(&named[..3]).unwrap())
            .findings()
            .into_iter()
            .map(|s| ("fleet", s)),
    );
    out.extend(
        Sides::of(&Matched::of(&named).unwrap(), 3, Wording::NAMES)
            .sentences()
            .into_iter()
            .map(|s| ("sides", s)),
    );
    // Pace: the frontier and the trade-off caption; advise's reason over the same
    // contenders.
    let results: Vec<PaceResult> = contenders
        .iter()
        .enumerate()
        .map(|(i, (f, block, cpu, w))| pace(&format!("c{i}"), f.clone(), *block, *cpu, *w))
        .collect();
    let refs: Vec<&PaceResult> = results.iter().collect();
    out.push(("frontier", frontier_sentence(0, &standings(&refs))));
    let data = super::testdata::pace(vec![0], 100, 10, results.clone());
    let caption = super::sections::precise::tradeoff_caption(&data);
    out.push(("trade-off", caption));
    let candidates: Vec<Candidate> = results
        .iter()
        .map(|r| Candidate {
            strategy: r.strategy.clone(),
            timer_slack_ns: 1,
            waits: r.error.count,
            p50_ns: r.error.median_ns,
            p50_ci_ns: r.error.median_ci_ns,
            p99_ns: r.error.p99_ns,
            p99_ci_ns: r.error.p99_ci_ns,
            max_ns: r.error.max_ns,
            cpu_percent: r.cpu_percent,
            units: r.units.clone(),
            cpu_ci_percent: r.cpu_ci_percent,
        })
        .collect();
    // The answer, over a survey of the same sweeps (its slack sweep) and pace results.
    let answered = super::testdata::survey(vec![
        ("sweep", r.clone()),
        (
            "pace",
            super::testdata::result(ExperimentData::Pace(data.clone())),
        ),
    ]);
    out.extend(
        super::answer::Answer::of(&Results::of(&answered))
            .lines
            .into_iter()
            .map(|l| ("answer", l.sentence)),
    );
    let (chosen, meets) = choose(&candidates, *tolerance).unwrap();
    let why = reason(&candidates, *tolerance, chosen, meets, Wording::NAMES);
    out.push(("advise", why));
    let runner_up = runner_up_sentence(&candidates, *tolerance, chosen);
    out.push(("advise runner-up", runner_up));
    // Runtimes: the quickest floor and sleeplab's gain in another language.
    let &(plain, ours, n, sp, so) = gain;
    let (a, b) = (
        oneshot(1_000_000, 1e6 + plain, n, sp),
        oneshot(1_000_000, 1e6 + ours, n, so),
    );
    let floors = [("plain".to_string(), &a, 0), ("ours".to_string(), &b, 1)];
    let floor = crate::sections::runtimes::floor_caption(&floors);
    out.push(("floor", floor));
    // Tune: every setting's sentence, its findings (the best setting, or none).
    let t = tune(cells);
    if let ExperimentData::Tune(d) = &t.data {
        out.extend(
            sleeplab_results::tune::sentence::sentences(d)
                .into_iter()
                .map(|s| ("tune", s)),
        );
        out.extend(
            sleeplab_results::tune::sentence::advise_sentence("precise", d)
                .map(|s| ("advise tune", s)),
        );
    }
    out.extend(
        crate::findings(&Results::of(&t), Wording::NAMES)
            .into_iter()
            .map(|f| (f.id, f.sentence())),
    );
    let rt = runtimes(1_000_000, a.clone(), b.clone());
    if let Some(f) = super::findings::binding_gain(&Results::of(&rt)) {
        out.push((f.id, f.sentence()));
    }
    // Steal beside the wakes' host share (1 ms to 1 s each, against a 10 ms tick).
    let steal = (plain * 1e3) as u64;
    let host = (ours * 1e3) as u64;
    let machine = sleeplab_account::Machine::Host;
    if let Some(s) = sleeplab_account::steal_sentence(steal, host, n % 2 == 0, 10_000_000, machine)
    {
        out.push(("steal", s));
    }
    // Two runs' host noise on one CPU: blocks of the runs' pace results' frames as the
    // blocks' lost time (any shape, any count).
    let noise = |k: usize| -> Option<sleeplab_results::model::host_noise::HostNoise> {
        use sleeplab_results::model::host_noise::{CpuNoise, HostNoise, PROBE_NS};
        let (frames, block, _, _) = contenders.get(k)?;
        let blocks: Vec<u64> = frames.iter().take(*block as usize).copied().collect();
        let lost_ns = blocks.iter().sum();
        let side = CpuNoise {
            cpu: 0,
            wall_ns: PROBE_NS.max(blocks.len() as u64 * 5_000_000),
            reads: 1 << 20,
            gaps: blocks.len() as u64,
            lost_ns,
            max_gap_ns: blocks.iter().copied().max().unwrap_or(0),
            lost_share: 0.0,
            gaps_per_second: 0.0,
            blocks_lost_ns: blocks,
        };
        Some(HostNoise::of(Ok(vec![side.clone()]), Ok(vec![side])))
    };
    if let (Some(a), Some(b)) = (noise(0), noise(1)) {
        for s in sleeplab_results::model::host_noise::noise_differs(("a", &a), ("b", &b)) {
            out.push(("host noise", s));
        }
    }
    out
}

/// Whether `s` draws a verdict that orders or equates (not only "indistinguishable").
fn decides(s: &Sentence) -> bool {
    use sleeplab_stats::{Claim, Order};
    s.claims.iter().any(|c| match c {
        Claim::Verdict { stated, .. } => *stated != Order::Indistinguishable,
        Claim::Equivalent { .. } => true,
        _ => false,
    })
}

/// The walk is not vacuous: on results whose units decide (40 of them, narrow
/// intervals, values far apart), the producers do draw verdicts, and they hold.
#[test]
fn the_walk_draws_verdicts_where_the_units_decide() {
    let shape: Shape = (Some(40), 0.01, false);
    let frames = |late: u64| vec![late; 400];
    let input: Input = (
        vec![
            (2e3, 9e3, 1e3, shape),
            (5e3, 5.05e3, 4e3, shape),
            (6e3, 6e3, 6e3, shape),
            (7e3, 7e3, 7e3, shape),
            (69e3, 69e3, 2e3, shape),
            (21e3, 21e3, 21e3, shape),
            (68e3, 68e3, 68e3, shape),
        ],
        vec![1.0, 1.02, 0.98, 2.0, 2.04, 1.96],
        vec![
            (frames(10_000), 10, 0.1, 0.01),
            (frames(100_000), 10, 5.0, 0.01),
        ],
        50_000,
        (70_000.0, 2_000.0, 100, shape, shape),
    );
    let sentences = walk(&input);
    for (what, s) in &sentences {
        assert_eq!(s.check(), Ok(()), "{what}");
        assert_eq!(rests_on_units(s), Ok(()), "{what}");
    }
    for producer in [
        "load",
        "timer-slack",
        "sweep caption",
        "pair",
        "sides",
        "frontier",
        "advise",
        "sleeplab-in-other-languages",
        "newer-waits",
        "tune",
        "tune-best",
    ] {
        assert!(
            sentences.iter().any(|(w, s)| *w == producer && decides(s)),
            "{producer} drew no verdict: {:#?}",
            sentences
                .iter()
                .filter(|(w, _)| *w == producer)
                .map(|(_, s)| &s.text)
                .collect::<Vec<_>>()
        );
    }
}

/// The tune section renders a tune result alone and inside a survey: a chart per wait,
/// the table, and its finding among the page's.
#[test]
fn the_tune_section_renders_alone_and_in_a_survey() {
    let shape: Shape = (Some(10), 0.01, false);
    let t = tune(&[
        (2e4, 3e4, 1e4, shape),
        (5e4, 5e4, 4e4, (Some(10), 0.01, true)),
    ]);
    let s = super::testdata::survey(vec![("tune", t.clone())]);
    for r in [t, s] {
        let page = super::page(&r, Wording::NAMES);
        let sec = page
            .sections
            .iter()
            .find(|x| x.id == "tune")
            .expect("a tune section");
        let html = super::render(&r, Wording::NAMES);
        assert!(
            html.contains("data-chart=\"tune-clock-nanosleep-abs-1000\""),
            "{}",
            sec.title
        );
        assert!(html.contains("over 10 paired rounds"));
        assert!(
            page.findings
                .iter()
                .any(|f| f.starts_with("keep-awake lowers the p99")),
            "{:?}",
            page.findings
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// Every producer, on synthetic results whose units vary: every sentence holds for
    /// its numbers and every verdict rests on intervals over units or on exact thresholds.
    #[test]
    fn every_verdict_rests_on_units_or_exact_thresholds(input in arb_input()) {
        for (what, s) in walk(&input) {
            prop_assert!(s.check().is_ok(), "{what}: {:?}", s.check());
            prop_assert!(rests_on_units(&s).is_ok(), "{what}: {:?}", rests_on_units(&s));
        }
    }
}
