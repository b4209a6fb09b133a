//! Seed 002 figure 4: heatmaps of each strategy's relative error under virtual
//! schedulers (requested interval × scheduler period), from `sleeplab simulate`.

use super::figure;
use crate::charts::heatmap::Heatmap;
use crate::escape;
use crate::html::{Block, Section};
use crate::units::{ns, pct};
use crate::view::Results;
use sleeplab_results::simulate::SimulateData;
use sleeplab_stats::{
    BY_POINT_VALUE, Cell, Claim, Extreme, RankBy, Sentence, Stat, Table, extreme_index, n_clause,
};

/// The simulate section, when the results hold a `simulate` run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let d = r.entries.iter().find_map(|e| match &e.result.data {
        sleeplab_results::model::ExperimentData::Simulate(d) => Some(d),
        _ => None,
    })?;
    if d.cells.is_empty() {
        return None;
    }
    let columns: Vec<String> = d.config.models.iter().map(|m| m.label()).collect();
    let rows: Vec<String> = d
        .config
        .intervals_ns
        .iter()
        .map(|&i| ns(i as f64))
        .collect();
    let mut blocks = vec![Block::Text(format!(
        "Seed 002 tested its precise sleep against a fake scheduler whose sleeps end at a random point of the next scheduler period, sometimes a period later. Here the library's own strategies run unchanged in virtual time against that model, {} sleeps per cell after {} to learn; each cell is the mean relative error (actual − requested) / requested, on one colour scale for all strategies (log).",
        d.config.sleeps, d.config.warmup
    ))];
    // One colour scale for every strategy, so their heatmaps compare at a glance.
    let positive: Vec<f64> = d
        .cells
        .iter()
        .map(|c| 100.0 * c.mean_rel_error)
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let range = (!positive.is_empty()).then(|| {
        (
            positive.iter().copied().fold(f64::INFINITY, f64::min),
            positive.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    });
    let mut t = Table::new([
        "strategy",
        "requested",
        "period",
        "mean error",
        "p99 error",
        "CPU",
        "early",
    ]);
    for strategy in &d.config.strategies {
        let value = |i: u64, m: usize| d.cell(strategy, i, m).map(|c| 100.0 * c.mean_rel_error);
        let spec = Heatmap {
            columns: columns.clone(),
            rows: rows.clone(),
            values: d
                .config
                .intervals_ns
                .iter()
                .map(|&i| (0..columns.len()).map(|m| value(i, m)).collect())
                .collect(),
            labels: d
                .config
                .intervals_ns
                .iter()
                .map(|&i| {
                    (0..columns.len())
                        .map(|m| value(i, m).map_or("–".into(), pct))
                        .collect()
                })
                .collect(),
            x_desc: "scheduler period of the virtual machine".into(),
            y_desc: "requested sleep".into(),
            log_color: true,
            range,
        };
        let size = spec.size();
        blocks.push(Block::Heading(strategy.clone()));
        blocks.push(Block::Figure(figure(
            &format!("simulate-{}", escape::ident(strategy)),
            &format!("mean relative error of {strategy} by requested sleep and scheduler period"),
            size,
            caption(d, strategy).text,
            |a| spec.draw(a),
        )));
        for c in d.cells.iter().filter(|c| &c.strategy == strategy) {
            t.row(vec![
                Cell::Text(strategy.clone()),
                Cell::Num(ns(c.requested_ns as f64)),
                Cell::Num(columns.get(c.model).cloned().unwrap_or_default()),
                Cell::Num(pct(100.0 * c.mean_rel_error)),
                // The quantile rule: a p99 needs 100 sleeps.
                Cell::Num(match c.p99_rel_error {
                    Some(v) => pct(100.0 * v),
                    None => format!("– (n = {})", c.sleeps),
                }),
                Cell::Num(pct(c.cpu_percent)),
                if c.early > 0 {
                    Cell::Warn(c.early.to_string())
                } else {
                    Cell::Num("0".into())
                },
            ]);
        }
    }
    blocks.push(Block::Table(t));
    Some(Section::new(
        "simulate",
        "Under other schedulers (simulated)",
        blocks,
    ))
}

/// The relative error under which a cell counts as on time.
const WITHIN: f64 = 0.01;

/// The caption: in how many cells the strategy's mean relative error stayed within
/// [`WITHIN`] (stated), and its worst cell by that mean.
pub fn caption(d: &SimulateData, strategy: &str) -> Sentence {
    let mut s = Sentence::default();
    let cells: Vec<_> = d.cells.iter().filter(|c| c.strategy == strategy).collect();
    let errs: Vec<f64> = cells.iter().map(|c| c.mean_rel_error).collect();
    let Some(wi) = extreme_index(&errs, Extreme::Most, RankBy::Signed) else {
        return s;
    };
    let worst = cells[wi];
    let under = cells.iter().filter(|c| c.mean_rel_error < WITHIN).count();
    let line = pct(100.0 * WITHIN);
    let shown = pct(100.0 * worst.mean_rel_error);
    let label = |m: usize| d.config.models.get(m).map_or(String::new(), |x| x.label());
    let n = n_clause(worst.sleeps);
    s.push(&format!(
        "{strategy} stayed within {line} of the request (mean relative error) in {under} of {} cells; its worst mean {BY_POINT_VALUE} was {shown} of {}{n} under a {} scheduler.",
        cells.len(),
        ns(worst.requested_ns as f64),
        label(worst.model)
    ));
    s.claim(Claim::Threshold { shown: line });
    s.claim(Claim::Quote {
        stat: Stat::Mean,
        n: worst.sleeps,
        shown,
    });
    s.rank_by_point(Extreme::Most, wi, &errs);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sleeplab_results::simulate::{SimCell, SimCosts, SimulateConfig};

    fn data(errs: &[f64], sleeps: u64) -> SimulateData {
        SimulateData {
            config: SimulateConfig {
                host: None,
                strategies: vec!["precise".into()],
                intervals_ns: vec![1_000_000],
                models: vec![],
                sleeps,
                warmup: 0,
                seed: 1,
                costs: SimCosts {
                    clock_read_ns: 0,
                    spin_pause_ns: 0,
                    yield_ns: 0,
                    sleep_cpu_ns: 0,
                },
            },
            cells: errs
                .iter()
                .enumerate()
                .map(|(i, &e)| SimCell {
                    strategy: "precise".into(),
                    requested_ns: 1_000_000 * (i as u64 + 1),
                    model: 0,
                    sleeps,
                    mean_rel_error: e,
                    p50_rel_error: e,
                    p50_rel_error_ci: None,
                    p99_rel_error: Some(e),
                    p99_rel_error_ci: None,
                    max_rel_error: e,
                    mean_lateness_ns: 0.0,
                    p99_lateness_ns: Some(0.0),
                    p99_lateness_ci_ns: None,
                    max_lateness_ns: 0,
                    cpu_percent: 0.0,
                    native_sleeps_per_wait: 1.0,
                    early: 0,
                })
                .collect(),
        }
    }

    #[test]
    fn worst_is_the_largest_mean_and_the_line_is_stated() {
        let s = caption(&data(&[0.001, 0.3, 0.02], 40), "precise");
        assert_eq!(s.check(), Ok(()));
        assert!(
            s.text.contains("within 1 %") && s.text.contains("in 1 of 3 cells"),
            "{s}"
        );
        assert!(
            s.text.contains("worst mean by point value was 30 %") && s.text.contains("n = 40"),
            "{s}"
        );
    }

    proptest! {
        #[test]
        fn caption_is_true_of_its_numbers(
            errs in proptest::collection::vec(0.0f64..3.0, 0..10),
            sleeps in 1u64..300,
        ) {
            let s = caption(&data(&errs, sleeps), "precise");
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}
