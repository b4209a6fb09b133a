//! Seed 001's own form ("How long do short sleeps actually take?"): the ground truth (the
//! empty loop of one batch, "604 ± 44 ns per 3 000") and every wait asked for 0 and for
//! its smallest unit as "mean ± 99.9 % CI" per call, the seed's raw figure beside the
//! report's net one.

use super::whole_ns;
use crate::html::{Block, Section};
use crate::units::ns;
use crate::view::Results;
use sleeplab_results::short::{FLOOR, RepStats, ShortCell, ShortData};
use sleeplab_stats::{Cell, Table};

/// `mean ± half-width ns`, whole nanoseconds (the seed's form); `mean ns (no CI)` when
/// there is no interval (fewer than two repetitions).
pub fn mean_ci(s: &RepStats, scale: f64) -> String {
    match s.ci_half_width_ns {
        Some(h) => format!(
            "{} ± {} ns",
            whole_ns(s.mean_ns * scale),
            whole_ns(h * scale)
        ),
        None => format!(
            "{} ns (n = {}: no interval)",
            whole_ns(s.mean_ns * scale),
            s.n
        ),
    }
}

/// The ground-truth line: the empty loop of one full batch, mean ± CI, and per iteration.
pub fn floor_line(f: &ShortCell, confidence: f64) -> String {
    format!(
        "Ground truth (the batch loop with an empty body the compiler cannot remove): {} per {} iterations, {} per iteration, over n = {} repetitions; ± is the half-width of the {} % confidence interval of the mean, t·s/√n with s dividing by n − 1 (Student's t, n − 1 degrees of freedom), as the seed gave 99.9 % intervals.",
        mean_ci(&f.raw, f.batch as f64),
        whole_ns(f.batch as f64),
        ns(f.raw.mean_ns),
        f.raw.n,
        crate::units::num(confidence * 100.0)
    )
}

/// The seed's table: per mechanism and request, per call, raw (the seed's figure) and
/// net of the floor (ours), both as mean ± CI, with the repetitions.
pub fn table(d: &ShortData, slack: u64) -> Table {
    let mut t = Table::new([
        "mechanism",
        "requested",
        "n (repetitions)",
        "calls per batch",
        "per call, raw (the seed's)",
        "per call, net of the floor (ours)",
    ]);
    for c in d.cells.iter().filter(|c| c.timer_slack_ns == slack) {
        t.row(vec![
            Cell::Text(c.mechanism.clone()),
            Cell::Num(ns(c.requested_ns as f64)),
            Cell::Num(c.raw.n.to_string()),
            Cell::Num(c.batch.to_string()),
            Cell::Num(mean_ci(&c.raw, 1.0)),
            Cell::Num(mean_ci(&c.net, 1.0)),
        ]);
    }
    t
}

/// Seed 001's tables, when the results hold a `short` run.
pub fn section(r: &Results<'_>) -> Option<Section> {
    let (_, d) = r.short()?;
    let slack = *d.slacks().first()?;
    if !d.cells.iter().any(|c| c.timer_slack_ns == slack) {
        return None;
    }
    let mut blocks = Vec::new();
    if let Some(f) = d.reference(FLOOR, slack) {
        blocks.push(Block::Text(floor_line(f, d.config.confidence)));
    }
    blocks.push(Block::Text(format!(
        "Each figure is one batch of calls timed as a whole and divided by its length, mean ± the {} % confidence interval over the interleaved repetitions (s dividing by n − 1), under {} timer slack. Raw is the seed's figure; net subtracts the median of the paired empty loops.",
        crate::units::num(d.config.confidence * 100.0),
        ns(slack as f64)
    )));
    blocks.push(Block::Table(table(d, slack)));
    Some(Section::new(
        "seed-001",
        "Seed 001's tables: the floor and every short wait ± its interval",
        blocks,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(values: &[f64]) -> RepStats {
        RepStats::of(values, 0.999)
    }

    #[test]
    fn mean_and_interval_in_the_seeds_form() {
        // 1000, 1010, 990, 1000: mean 1000, s = √(200/3) = 8.165, t(0.999, 3) = 12.924:
        // half-width 12.924 × 8.165 / 2 = 52.76.
        let s = stats(&[1000.0, 1010.0, 990.0, 1000.0]);
        assert_eq!(mean_ci(&s, 1.0), "1\u{202f}000 ± 53 ns");
        // Per batch of 3000: both scale.
        assert_eq!(mean_ci(&s, 3.0), "3\u{202f}000 ± 158 ns");
        let one = stats(&[5.0]);
        assert_eq!(mean_ci(&one, 1.0), "5 ns (n = 1: no interval)");
    }
}
