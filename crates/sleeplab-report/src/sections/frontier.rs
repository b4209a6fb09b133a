//! The accuracy-versus-CPU frontier of a `pace --load` result: one chart per
//! load level (p99 lateness against CPU, a marker per contender, a line through the
//! contenders no other one beats on both), and why frames were late (each result's
//! per-frame evidence).

use super::chart;
use crate::charts::xy::{Axis, Legend, Scale, Series, Style, Unit, XyChart};
use crate::charts::{color, css};
use crate::html::{Block, Section};
use plotters::style::RGBColor;
use sleeplab_results::Wording;
use sleeplab_results::pace::{
    PaceData, PaceResult, Standing, evidence_intro, evidence_table, frontier_sentence,
    late_causes_intro, late_causes_table, standings,
};

/// The CPU axis spans these percentages (log scale): a plain sleep's 0.05 % to a spin's
/// 100 %.
const CPU_RANGE: (f64, f64) = (0.01, 100.0);

/// The frontier colour (a dark grey line).
const FRONTIER: RGBColor = RGBColor(0x44, 0x44, 0x44);

/// The frontier section of a pace result with at least one loaded level, or `None`
/// (`hints` words the flag that traced the run).
pub fn section(
    p: &PaceData,
    machine: sleeplab_account::Machine,
    hints: Wording,
) -> Option<Section> {
    if !p.results.iter().any(|r| r.load > 0) {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for r in &p.results {
        if !names.contains(&r.strategy.as_str()) {
            names.push(&r.strategy);
        }
    }
    let paint = |name: &str| color(names.iter().position(|n| *n == name).unwrap_or(0));
    let mut charts = Vec::new();
    let mut captions = Vec::new();
    for &load in &p.config.loads {
        let level: Vec<&PaceResult> = p.results.iter().filter(|r| r.load == load).collect();
        if level.is_empty() {
            continue;
        }
        let st = standings(&level);
        captions.push(frontier_sentence(load, &st).text);
        let spec = level_chart(load, &st, &paint);
        charts.push(chart(
            &format!("pace-frontier-load-{load}"),
            &format!("p99 lateness against CPU at load {load}"),
            (420, 320),
            |a| spec.draw(a),
        ));
    }
    let mut legend: Vec<(String, String)> = names
        .iter()
        .map(|n| (n.to_string(), css(paint(n))))
        .collect();
    legend.push(("the frontier".into(), css(FRONTIER)));
    captions.push(
        "The oracle's frontier (the best fixed margin in hindsight) needs a recorded wakeup trace, which a pace result does not hold: `frontier_replay` draws it from crates/sleeplab/tests/traces (docs/BENCHMARKS.md).".into(),
    );
    Some(Section::new("pace-frontier", "The accuracy-versus-CPU frontier, by load", vec![
            Block::Text(format!(
                "Each contender's p99 lateness against the CPU it used, one chart per load level ({} frames per contender; p99 needs n ≥ 100). Lower left is better; the line joins the contenders that no other one is shown to beat on both (a p99 and a CPU whose 95 % intervals over the blocks lie below; the table gives each interval).",
                p.config.frames
            )),
            Block::Grid {
                charts,
                legend,
                wide: true,
                caption: captions.join(" "),
            },
            Block::Heading("Why frames were late".into()),
        ]
        .into_iter()
        .chain(match late_causes_table(p, machine) {
            // The kernel's account replaces the heuristics where it exists.
            Some(t) => [Block::Text(late_causes_intro(hints)), Block::Table(t)],
            None => [
                Block::Text(evidence_intro()),
                Block::Table(evidence_table(p, true)),
            ],
        })
        .collect()))
}

/// One level's chart: a marker per contender with a p99, the frontier as a line.
fn level_chart(load: usize, st: &[Standing], paint: &dyn Fn(&str) -> RGBColor) -> XyChart {
    let at = |s: &Standing| {
        s.p99_ns()
            .map(|p| (s.cpu_percent().clamp(CPU_RANGE.0, CPU_RANGE.1), p.max(1.0)))
    };
    let mut series: Vec<Series> = st
        .iter()
        .filter_map(|s| {
            Some(Series {
                name: s.strategy.to_string(),
                color: paint(s.strategy),
                points: vec![at(s)?],
                style: Style::Markers,
            })
        })
        .collect();
    let mut line: Vec<(f64, f64)> = st
        .iter()
        .filter(|s| s.dominated_by.is_none())
        .filter_map(at)
        .collect();
    line.sort_by(|a, b| a.0.total_cmp(&b.0));
    series.push(Series {
        name: "the frontier".into(),
        color: FRONTIER,
        points: line,
        style: Style::Line,
    });
    XyChart {
        title: Some(format!("load {load}")),
        x: Axis {
            label: "CPU used (% of one core, log scale)".into(),
            scale: Scale::Log,
            unit: Unit::Percent,
            range: Some(CPU_RANGE),
        },
        y: Axis::log_ns("p99 lateness (log scale)"),
        series,
        ideal: false,
        legend: Legend::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 400 frames: enough for a p99 interval closed above (368).
    fn result(name: &str, load: usize, late: u64, cpu: f64) -> PaceResult {
        PaceResult::uniform(name, load, 400, late, cpu)
    }

    /// These results at these load levels, 400 frames in blocks of 50.
    fn data(loads: Vec<usize>, results: Vec<PaceResult>) -> PaceData {
        crate::testdata::pace(loads, 400, 50, results)
    }

    #[test]
    fn a_loaded_result_has_a_chart_per_level_and_a_row_per_result() {
        let mut results = Vec::new();
        for load in [0, 2] {
            results.push(result("precise", load, 5_000 + load as u64, 1.0));
            results.push(result("spin", load, 50, 99.0));
            results.push(result("std-sleep", load, 90_000, 0.1));
        }
        let s = section(
            &data(vec![0, 2], results),
            sleeplab_account::Machine::Host,
            Wording::NAMES,
        )
        .expect("loaded");
        let Block::Grid {
            charts,
            legend,
            caption,
            ..
        } = &s.blocks[1]
        else {
            panic!("a grid first");
        };
        assert_eq!(charts.len(), 2);
        assert!(charts.iter().all(|c| c.is_ok()));
        assert_eq!(legend.len(), 4, "three contenders and the frontier");
        assert!(caption.starts_with("Load 0: on the accuracy-versus-CPU frontier"));
        assert!(caption.contains("Load 2:"));
        let Block::Table(t) = &s.blocks[4] else {
            panic!("the evidence table last");
        };
        assert_eq!(t.rows.len(), 6);
    }

    #[test]
    fn an_unloaded_result_has_no_frontier_section() {
        assert!(
            section(
                &data(vec![0], vec![result("precise", 0, 1, 1.0)]),
                sleeplab_account::Machine::Host,
                Wording::NAMES,
            )
            .is_none()
        );
    }

    #[test]
    fn the_frontier_line_joins_the_undominated_by_cpu() {
        let rs = [
            result("spin", 2, 50, 99.0),
            result("precise", 2, 5_000, 1.0),
            result("sdl", 2, 9_000, 7.0),
            result("std-sleep", 2, 90_000, 0.1),
        ];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        let spec = level_chart(2, &st, &|_| FRONTIER);
        let line = &spec.series.last().unwrap().points;
        let cpus: Vec<f64> = line.iter().map(|p| p.0).collect();
        assert_eq!(cpus, [0.1, 1.0, 99.0], "sdl is beaten by precise");
        assert_eq!(spec.series.len(), 5);
    }
}
