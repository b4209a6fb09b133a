//! Seed 002 figure 4: heatmaps of each strategy's relative error under virtual
//! schedulers (requested interval × scheduler period), from `sleeplab simulate`.

use super::figure;
use crate::experiments::simulate::SimulateData;
use crate::report::charts::heatmap::Heatmap;
use crate::report::escape;
use crate::report::html::{Block, Section};
use crate::report::table::{Cell, Table};
use crate::report::units::{ns, pct};
use crate::report::view::Results;

/// The simulate section, when the results hold a `simulate` run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let d = r.entries.iter().find_map(|e| match &e.result.data {
        crate::model::ExperimentData::Simulate(d) => Some(d),
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
            caption(d, strategy),
            |a| spec.draw(a),
        )));
        for c in d.cells.iter().filter(|c| &c.strategy == strategy) {
            t.row(vec![
                Cell::Text(strategy.clone()),
                Cell::Num(ns(c.requested_ns as f64)),
                Cell::Num(columns.get(c.model).cloned().unwrap_or_default()),
                Cell::Num(pct(100.0 * c.mean_rel_error)),
                Cell::Num(pct(100.0 * c.p99_rel_error)),
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
    Some(Section {
        id: "simulate".into(),
        title: "Under other schedulers (simulated)".into(),
        blocks,
    })
}

fn caption(d: &SimulateData, strategy: &str) -> String {
    let cells: Vec<_> = d.cells.iter().filter(|c| c.strategy == strategy).collect();
    if cells.is_empty() {
        return String::new();
    }
    let under = cells.iter().filter(|c| c.mean_rel_error < 0.01).count();
    let worst = cells
        .iter()
        .max_by(|a, b| a.mean_rel_error.total_cmp(&b.mean_rel_error))
        .expect("not empty");
    let label = |m: usize| d.config.models.get(m).map_or(String::new(), |x| x.label());
    format!(
        "{strategy} stayed within 1 % of the request in {under} of {} cells; its worst was {} of {} under a {} scheduler.",
        cells.len(),
        pct(100.0 * worst.mean_rel_error),
        ns(worst.requested_ns as f64),
        label(worst.model)
    )
}
