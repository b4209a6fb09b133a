//! The precise-sleep sections: a fixed-rate loop per contender (seed 002 figure 1 and
//! its CPU table) and CPU against the requested sleep (figure 3).

use super::figure;
use crate::charts::bars::{Bar, Bars};
use crate::charts::color;
use crate::charts::xy::{Axis, Legend, Series, Style, Unit, XyChart};
use crate::html::{Block, Section};
use crate::units::{ns, num, pct};
use crate::view::Results;
use sleeplab_results::Wording;
use sleeplab_results::cpu::CpuData;
use sleeplab_results::pace::{PaceData, PaceResult};
use sleeplab_stats::{
    BY_POINT_VALUE, Cell, Claim, Est, Extreme, INDISTINGUISHABLE, RankBy, Sentence, Stat, Summary,
    Table, basis_note, extreme_index, interval_text, n_clause, small_n, with_interval,
};

/// The pace and cpu sections the results support (`hints` words the flag that traced a
/// pace run).
pub fn sections(r: &Results<'_>, hints: Wording) -> Vec<Section> {
    let mut out = Vec::new();
    if let Some((e, p)) = r.pace().filter(|(_, p)| !p.results.is_empty()) {
        out.push(pace(p));
        let machine = sleeplab_account::Machine::of(&e.result.fingerprint);
        out.extend(super::frontier::section(p, machine, hints));
    }
    if let Some((_, c)) = r.cpu().filter(|(_, c)| !c.points.is_empty()) {
        out.push(cpu(c));
    }
    out
}

/// The colour of a strategy, the same in every chart of the page.
fn strategy_color(names: &[&str], name: &str) -> plotters::style::RGBColor {
    color(names.iter().position(|n| *n == name).unwrap_or(names.len()))
}

fn rate(p: &PaceData) -> String {
    format!("{} Hz", num(p.config.rate_hz))
}

fn pace(p: &PaceData) -> Section {
    let names: Vec<&str> = p.results.iter().map(|r| r.strategy.as_str()).collect();
    let bars = Bars {
        bars: p
            .results
            .iter()
            .map(|r| Bar {
                name: r.label(),
                value: r.error.mean_ns.max(1.0),
                whisker: Some((r.error.min_ns.max(1) as f64, r.error.max_ns.max(1) as f64)),
                color: strategy_color(&names, &r.strategy),
            })
            .collect(),
        x: Axis::log_ns("how late each frame woke: mean (bar), min–max (whisker), log scale"),
        legend: Some(("mean lateness".into(), "min – max".into())),
    };
    let trade = XyChart {
        title: None,
        x: Axis::linear("CPU used (% of one core)", Unit::Percent)
            .range(0.0, cpu_axis_max(p.results.iter().map(|r| r.cpu_percent))),
        y: Axis::log_ns("p99 lateness (log scale)"),
        series: p
            .results
            .iter()
            .map(|r| Series {
                name: r.label(),
                color: strategy_color(&names, &r.strategy),
                points: r
                    .error
                    .p99_ns
                    .map(|p| (r.cpu_percent.max(0.0), p.max(1.0)))
                    .into_iter()
                    .collect(),
                style: Style::Markers,
            })
            .collect(),
        ideal: false,
        legend: Legend::UpperRight,
    };
    let t = sleeplab_results::pace::main_table(p);
    let height = bars.height();
    Section::new(
        "pace",
        format!("A {} loop", rate(p)),
        vec![
            Block::Text(format!(
                "Seed 002's game loop: each contender waits for {} frames on an absolute schedule ({} per frame, timer slack {}), taking turns in blocks of {}. Lateness is how long after its deadline a frame woke.",
                p.config.frames,
                ns(p.config.period_ns as f64),
                p.config
                    .timer_slack_ns
                    .map_or("as inherited".into(), |s| ns(s as f64)),
                p.config.block
            )),
            Block::Figure(figure(
                "pace-error",
                "frame lateness per contender",
                (860, height),
                pace_caption(p).text,
                |a| bars.draw(a),
            )),
            Block::Heading("Precision against CPU".into()),
            Block::Figure(figure(
                "pace-tradeoff",
                "p99 lateness against CPU per contender",
                (760, 420),
                tradeoff_caption(p).text,
                |a| trade.draw(a),
            )),
            Block::Table(t),
        ],
    )
}

fn find<'a>(p: &'a PaceData, name: &str) -> Option<&'a PaceResult> {
    p.results.iter().find(|r| r.strategy == name)
}

/// Why a CPU share can exceed 100 %: the thread's CPU clock is read just outside the
/// timed window (before the first wait and after the last), so a thread busy throughout
/// shows a little more CPU time than wall time. Shown as measured, never clamped.
pub const CPU_OVER_100: &str = "CPU above 100 % is how it was measured, not more than a core: the thread's CPU clock is read just outside the timed window, so a thread busy throughout shows a little more CPU time than wall time";

/// The CPU axis: to 105 %, or past the highest value measured.
fn cpu_axis_max(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(105.0, |m, v| m.max(v * 1.05))
}

/// [`CPU_OVER_100`] as a sentence of its own when any of `values` is above 100 %.
fn cpu_note(values: impl IntoIterator<Item = f64>) -> String {
    if values.into_iter().any(|v| v > 100.0) {
        format!(" {CPU_OVER_100}.")
    } else {
        String::new()
    }
}

/// `stat` of `e` in the report's units, quoted ([`Sentence::quote`]).
fn quote(s: &mut Sentence, e: &Summary, stat: Stat) -> Option<String> {
    s.quote(e, stat, ns)
}

/// The pace caption: how late precise, std-sleep and spin woke (mean and max of their
/// frames) and the CPU each used.
pub fn pace_caption(p: &PaceData) -> Sentence {
    let mut s = Sentence::default();
    let mut parts = Vec::new();
    for name in ["precise", "std-sleep", "spin"] {
        let Some(r) = find(p, name) else { continue };
        let (Some(mean), Some(max)) = (
            quote(&mut s, &r.error, Stat::Mean),
            quote(&mut s, &r.error, Stat::Max),
        ) else {
            continue;
        };
        parts.push(format!(
            "{name} woke a mean {mean} late (max {max}{}) at {} CPU",
            n_clause(r.error.count),
            pct(r.cpu_percent)
        ));
    }
    if !parts.is_empty() {
        s.push(&format!(
            "At {}: {}.{}",
            rate(p),
            parts.join("; "),
            cpu_note(p.results.iter().map(|r| r.cpu_percent))
        ));
    }
    s
}

/// The share of a core under which a contender counts as leaving most of it free.
const FRUGAL_PCT: f64 = 50.0;

/// The trade-off caption: among contenders under [`FRUGAL_PCT`] of a core, the one with
/// the lowest tail lateness, by the highest of p99, p90 and median every one of them
/// resolves; those it is not shown to beat (by the 95 % intervals over blocks) are named
/// as indistinguishable from it in this run. Under 50 % of a core is a line drawn through
/// the point values (a selection, stated as one).
pub fn tradeoff_caption(p: &PaceData) -> Sentence {
    let frugal: Vec<&PaceResult> = p
        .results
        .iter()
        .filter(|r| r.cpu_percent < FRUGAL_PCT && r.error.count > 0)
        .collect();
    let line = pct(FRUGAL_PCT);
    let n = frugal.iter().map(|r| r.error.count).min().unwrap_or(0);
    let stat = [Stat::P99, Stat::P90, Stat::Median]
        .into_iter()
        .find(|s| s.resolved_by(n));
    let values: Vec<f64> = stat
        .map(|st| frugal.iter().filter_map(|r| r.error.get(st)).collect())
        .unwrap_or_default();
    let (Some(stat), Some(bi)) = (stat, extreme_index(&values, Extreme::Least, RankBy::Signed))
    else {
        let mut s = Sentence::new(format!(
            "Lower left is best; every contender here used {line} of a core or more."
        ));
        s.claim(Claim::Threshold { shown: line });
        return s;
    };
    let best = frugal[bi];
    let mut s = Sentence::default();
    let v = quote(&mut s, &best.error, stat).unwrap_or_default();
    let est = |r: &PaceResult| {
        r.est(stat)
            .unwrap_or(Est::point(r.error.get(stat).unwrap_or(f64::NAN)))
    };
    let close: Vec<&PaceResult> = frugal
        .iter()
        .copied()
        .filter(|r| !std::ptr::eq(*r, best) && !est(best).below(&est(r)))
        .collect();
    let tie = if close.is_empty() {
        String::new()
    } else {
        let mut all: Vec<Est> = close.iter().map(|r| est(r)).collect();
        all.push(est(best));
        format!(
            "; {INDISTINGUISHABLE} from {} (its {stat} {}{})",
            close
                .iter()
                .map(|r| format!("{} {}", r.strategy, with_interval(&est(r), ns)))
                .collect::<Vec<_>>()
                .join(", "),
            interval_text(est(best).ci, ns),
            basis_note(&all.iter().collect::<Vec<_>>())
        )
    };
    s.push(&format!(
        "Lower left is best. Among the {} contenders using under {line} of a core (in point values), {} had the lowest {stat}: {v}{} at {} CPU{tie}.",
        frugal.len(),
        best.strategy,
        small_n(best.error.count),
        pct(best.cpu_percent)
    ));
    s.claim(Claim::Threshold { shown: line });
    s.rank_over(
        Extreme::Least,
        bi,
        values,
        frugal.iter().map(|r| est(r)).collect(),
    );
    s
}

fn cpu(c: &CpuData) -> Section {
    let names: Vec<&str> = c.config.strategies.iter().map(String::as_str).collect();
    let series: Vec<Series> = names
        .iter()
        .map(|&s| {
            let mut pts: Vec<(f64, f64)> = c
                .points
                .iter()
                .filter(|p| p.strategy == s)
                .map(|p| (p.interval_ns as f64, p.cpu_percent.max(0.0)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: s.to_string(),
                color: color(names.iter().position(|n| *n == s).unwrap_or(0) + 2),
                points: pts,
                style: Style::LineMarkers,
            }
        })
        .collect();
    let max_cpu = c.points.iter().map(|p| p.cpu_percent).fold(0.0, f64::max);
    let spec = XyChart {
        title: None,
        x: Axis::linear("requested sleep", Unit::Ns).range(
            0.0,
            c.config.intervals_ns.iter().copied().max().unwrap_or(1) as f64 * 1.05,
        ),
        y: Axis::linear("CPU used (% of one core)", Unit::Percent)
            .range(0.0, (max_cpu * 1.15).max(5.0)),
        series,
        ideal: false,
        legend: Legend::UpperRight,
    };
    let mut header = vec!["strategy".to_string()];
    header.extend(c.config.intervals_ns.iter().map(|&i| ns(i as f64)));
    let mut t = Table::new(header);
    for &s in &names {
        let mut row = vec![Cell::Text(s.to_string())];
        for &iv in &c.config.intervals_ns {
            row.push(
                match c
                    .points
                    .iter()
                    .find(|p| p.strategy == s && p.interval_ns == iv)
                {
                    Some(p) => Cell::NumSub(
                        pct(p.cpu_percent),
                        format!("p99 {} (n {})", ns(p.error.p99_ns), p.error.count),
                    ),
                    None => Cell::Empty,
                },
            );
        }
        t.row(row);
    }
    Section::new(
        "cpu",
        "CPU against the requested sleep",
        vec![
            Block::Text(format!(
                "Seed 002 figure 3: each hybrid sleeps the same interval over and over for {} per point; each point is the thread's CPU time over the wall time.",
                ns(c.config.seconds_ns as f64)
            )),
            Block::Figure(figure(
                "cpu-interval",
                "CPU used against requested sleep per strategy",
                (860, 420),
                cpu_caption(c).text,
                |a| spec.draw(a),
            )),
            Block::Heading("CPU % (p99 lateness below)".into()),
            Block::Table(t),
        ],
    )
}

/// The cpu caption: at the shortest interval, the hybrid that used the least and the
/// one that used the most CPU; at the longest, the most.
pub fn cpu_caption(c: &CpuData) -> Sentence {
    let mut s = Sentence::default();
    let (Some(&first), Some(&last)) = (
        c.config.intervals_ns.iter().min(),
        c.config.intervals_ns.iter().max(),
    ) else {
        return s;
    };
    let at = |iv: u64| -> Vec<_> { c.points.iter().filter(|p| p.interval_ns == iv).collect() };
    let (lo, hi) = (at(first), at(last));
    let cpu = |v: &[&sleeplab_results::cpu::CpuPoint]| -> Vec<f64> {
        v.iter().map(|p| p.cpu_percent).collect()
    };
    let (lo_v, hi_v) = (cpu(&lo), cpu(&hi));
    let (Some(a), Some(b), Some(z)) = (
        extreme_index(&lo_v, Extreme::Least, RankBy::Signed),
        extreme_index(&lo_v, Extreme::Most, RankBy::Signed),
        extreme_index(&hi_v, Extreme::Most, RankBy::Signed),
    ) else {
        return s;
    };
    if lo.len() < 2 || hi.len() < 2 {
        s.push(&format!(
            "At {} {} used {} of a core.",
            ns(first as f64),
            lo[a].strategy,
            pct(lo[a].cpu_percent)
        ));
        return s;
    }
    s.push(&format!(
        "At {} the hybrids used from {} ({}, least) to {} ({}, most) of a core {BY_POINT_VALUE}; at {} the most was {} ({}).{}",
        ns(first as f64),
        pct(lo[a].cpu_percent),
        lo[a].strategy,
        pct(lo[b].cpu_percent),
        lo[b].strategy,
        ns(last as f64),
        pct(hi[z].cpu_percent),
        hi[z].strategy,
        cpu_note(c.points.iter().map(|p| p.cpu_percent))
    ));
    for (extreme, chosen, among) in [
        (Extreme::Least, a, lo_v.clone()),
        (Extreme::Most, b, lo_v),
        (Extreme::Most, z, hi_v),
    ] {
        s.rank_by_point(extreme, chosen, &among);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sleeplab_results::cpu::{CpuConfig, CpuPoint};
    use sleeplab_stats::summarize;

    /// A result of these frames in blocks of 10 (its intervals over them), `cpu` % in
    /// every block.
    fn result(name: &str, errors: &[u64], cpu: f64) -> PaceResult {
        let n = errors.len() as u64;
        let counts: Vec<u64> = (0..n.div_ceil(10)).map(|b| 10.min(n - 10 * b)).collect();
        PaceResult {
            strategy: name.into(),
            load: 0,
            error: summarize(errors, 0),
            missed_frames: 0,
            ideal_total_ns: 0,
            actual_total_ns: 0,
            cpu_percent: cpu,
            spin_percent: 0.0,
            voluntary_csw_per_frame: 1.0,
            involuntary_csw_per_frame: 0.0,
            histogram: vec![],
            samples_ns: vec![],
            all_samples_ns: vec![],
            evidence: Default::default(),
            explanation: None,
            units: sleeplab_stats::UnitIntervals::of_counted(
                sleeplab_stats::Unit::Block,
                errors,
                &counts,
            ),
            cpu_ci_percent: Some(sleeplab_stats::Ci::exact(cpu)),
        }
    }

    /// These unloaded results, 100 frames in blocks of 25.
    fn pace(results: Vec<PaceResult>) -> PaceData {
        crate::testdata::pace(vec![0], 100, 25, results)
    }

    fn cpu(points: Vec<(&str, u64, f64)>) -> CpuData {
        CpuData {
            config: CpuConfig {
                strategies: vec!["a".into(), "b".into(), "c".into()],
                intervals_ns: vec![1_000_000, 20_000_000],
                seconds_ns: 150_000_000,
                timer_slack_ns: None,
                blocks: 1,
            },
            points: points
                .into_iter()
                .map(|(s, iv, cpu)| CpuPoint {
                    strategy: s.into(),
                    interval_ns: iv,
                    cpu_percent: cpu,
                    sleeps: 10,
                    error: summarize(&[1, 2, 3], 0),
                    units: None,
                    cpu_ci_percent: None,
                })
                .collect(),
        }
    }

    /// A past report: CPU above 100 % was clamped to 100 % silently. It is plotted and
    /// written as measured, and the caption says why it can exceed a core.
    #[test]
    fn cpu_over_a_core_is_shown_and_explained() {
        let p = pace(vec![
            result("spin", &[10, 20, 30], 112.0),
            result("precise", &[50, 60, 70], 3.0),
        ]);
        let c = pace_caption(&p);
        assert!(c.text.contains("112 %"), "{c}");
        assert!(c.text.contains(CPU_OVER_100), "{c}");
        assert_eq!(c.check(), Ok(()));
        assert!(cpu_axis_max([112.0, 3.0].into_iter()) > 112.0);
        let under = pace(vec![result("spin", &[1, 2], 99.0)]);
        assert!(!pace_caption(&under).text.contains(CPU_OVER_100));
        let c = cpu_caption(&cpu(vec![
            ("a", 1_000_000, 120.0),
            ("b", 1_000_000, 2.0),
            ("a", 20_000_000, 1.0),
            ("b", 20_000_000, 0.5),
        ]));
        assert!(
            c.text.contains("120 %") && c.text.contains(CPU_OVER_100),
            "{c}"
        );
        assert_eq!(c.check(), Ok(()));
    }

    /// A small sample is stated; the trade-off caption falls back to a statistic every
    /// frugal contender resolves, names it, and ranks by it.
    #[test]
    fn tradeoff_names_its_statistic_and_threshold() {
        let many: Vec<u64> = (1..=200).collect();
        let few: Vec<u64> = (1..=30).collect();
        let p = pace(vec![
            result("precise", &many, 3.0),
            result("std-sleep", &few, 1.0),
            result("spin", &many, 99.0),
        ]);
        let t = tradeoff_caption(&p);
        assert_eq!(t.check(), Ok(()));
        assert!(
            t.text.contains("lowest p90") && t.text.contains("50 %"),
            "{t}"
        );
        let c = pace_caption(&p);
        assert!(c.text.contains("n = 30"), "{c}");
        assert_eq!(c.check(), Ok(()));
    }

    proptest! {
        /// Every caption of the section is true of its numbers.
        #[test]
        fn captions_are_true_of_their_numbers(
            rs in proptest::collection::vec(
                (proptest::collection::vec(0u64..10_000_000, 1..250), 0.0f64..120.0),
                1..6,
            ),
            pts in proptest::collection::vec((0usize..3, any::<bool>(), 0.0f64..130.0), 0..8),
        ) {
            let names = ["precise", "std-sleep", "spin", "seed-hybrid", "sdl-precise", "x"];
            let p = pace(rs.iter().enumerate().map(|(i, (e, c))| result(names[i], e, *c)).collect());
            for s in [pace_caption(&p), tradeoff_caption(&p)] {
                prop_assert!(s.check().is_ok(), "{:?}", s.check());
            }
            let mut seen = std::collections::HashSet::new();
            let pts: Vec<(&str, u64, f64)> = pts
                .into_iter()
                .filter(|(s, long, _)| seen.insert((*s, *long)))
                .map(|(s, long, c)| (["a", "b", "c"][s], if long { 20_000_000 } else { 1_000_000 }, c))
                .collect();
            let c = cpu_caption(&cpu(pts));
            prop_assert!(c.check().is_ok(), "{:?}", c.check());
        }
    }
}
