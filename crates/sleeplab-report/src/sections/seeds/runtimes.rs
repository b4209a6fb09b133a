//! Seed 003's own form (Ruby's `sleep`, "how accurate is it?"): per runtime and
//! requested sleep, the repetitions, the ideal total (count × request) against the
//! actual total, min, max, avg, median and σ (dividing by n, as the seed's script did).

use super::{SIGMA_N, sigma_n};
use crate::findings::runtimes::measured;
use crate::html::{Block, Section};
use crate::units::{ns, ratio};
use crate::view::Results;
use sleeplab_results::runtimes::{OneshotCell, ProbeQuota, RuntimesData};
use sleeplab_results::{Hint, Wording};
use sleeplab_stats::{BY_POINT_VALUE, Cell, Extreme, RankBy, Sentence, Table, extreme_index};

/// actual total / ideal total of a cell (`None` for a request of 0).
pub fn actual_over_ideal(c: &OneshotCell) -> Option<f64> {
    let ideal = c.ideal_total_ns();
    (ideal > 0).then(|| c.summary.total_ns as f64 / ideal as f64)
}

/// (runtime title, method, cell) of every measured runtime's plain sleep, non-zero
/// requests, longest first (the seed's order).
fn rows(d: &RuntimesData) -> Vec<(&str, &str, &OneshotCell)> {
    let mut out = Vec::new();
    for (rt, m) in measured(d) {
        let mut cells: Vec<&OneshotCell> = m
            .cells
            .iter()
            .filter(|c| c.requested_ns > 0 && c.summary.count > 0)
            .collect();
        cells.sort_by_key(|c| std::cmp::Reverse(c.requested_ns));
        out.extend(
            cells
                .into_iter()
                .map(|c| (rt.title.as_str(), m.method.as_str(), c)),
        );
    }
    out
}

/// The seed's table.
pub fn table(d: &RuntimesData) -> Table {
    let mut t = Table::new([
        "runtime",
        "method",
        "sleep duration",
        "repeat (n)",
        "ideal length",
        "actual length",
        "actual / ideal",
        "min",
        "max",
        "avg",
        "median",
        "std dev (÷ n)",
    ]);
    for (rt, method, c) in rows(d) {
        let s = &c.summary;
        t.row(vec![
            Cell::Text(rt.to_string()),
            Cell::Text(method.to_string()),
            Cell::Num(ns(c.requested_ns as f64)),
            Cell::Num(s.count.to_string()),
            Cell::Num(ns(c.ideal_total_ns() as f64)),
            Cell::Num(ns(s.total_ns as f64)),
            Cell::Num(actual_over_ideal(c).map_or("–".into(), ratio)),
            Cell::Num(ns(s.min_ns as f64)),
            Cell::Num(ns(s.max_ns as f64)),
            Cell::Num(ns(s.mean_ns)),
            Cell::Num(ns(s.median_ns)),
            Cell::Num(ns(sigma_n(s.stddev_ns, s.count))),
        ]);
    }
    t
}

/// The caption: how the repetitions were chosen (the seed fixed the ideal length; a time
/// budget fixes the actual one, the flag in `hints`' words), σ's convention, and the
/// largest actual/ideal ratio.
pub fn caption(d: &RuntimesData, hints: Wording) -> Sentence {
    let design = match d.config.quota {
        ProbeQuota::Budget { budget_ns, .. } => format!(
            "Here each cell ran until its calls added up to {} (a time budget): the actual length is about fixed and the ideal one follows from the repetitions, the reverse of the seed's script, which fixed the repetitions (seconds ÷ duration) and so the ideal length; `sleeplab runtimes` without `{}` runs the seed's design. Either way actual ÷ ideal is the seed's measure",
            ns(budget_ns as f64),
            hints.word(Hint::Budget)
        ),
        ProbeQuota::Count { count } => format!(
            "Here each cell ran {count} calls, as the seed's script fixed its repetitions: the ideal length is count × duration and the actual one what they took"
        ),
        ProbeQuota::PerRequest {
            count,
            max_ideal_ns,
        } => format!(
            "Here each cell ran {count} calls (fewer where {count} calls would ask for more than {} of sleep), fixed before measuring as the seed's script fixed its repetitions: the ideal length is count × duration and the actual one what they took",
            ns(max_ideal_ns as f64)
        ),
    };
    let mut s = Sentence::new(format!("{design}. {SIGMA_N}."));
    let rows = rows(d);
    let ratios: Vec<f64> = rows
        .iter()
        .map(|r| actual_over_ideal(r.2).unwrap_or(f64::NAN))
        .collect();
    if rows.len() >= 2
        && let Some(i) = extreme_index(&ratios, Extreme::Most, RankBy::Signed)
    {
        s.rank_by_point(Extreme::Most, i, &ratios);
        let (rt, method, c) = rows[i];
        s.push(&format!(
            " The largest actual ÷ ideal {BY_POINT_VALUE}: {rt} {method} asked for {} took {} the ideal length ({} calls).",
            ns(c.requested_ns as f64),
            ratio(ratios[i]),
            c.summary.count
        ));
    }
    s
}

/// Seed 003's table, when the results hold a `runtimes` run with a plain sleep measured
/// (`hints` as for [`caption`]).
pub fn section(r: &Results<'_>, hints: Wording) -> Option<Section> {
    let (_, d) = r.runtimes()?;
    if rows(d).is_empty() {
        return None;
    }
    Some(Section::new(
        "seed-003",
        "Seed 003's table: each runtime's sleep, ideal against actual",
        vec![Block::Text(caption(d, hints).text), Block::Table(table(d))],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::stored;
    use sleeplab_results::model::ExperimentData;
    use sleeplab_results::runtimes::RuntimeStatus;
    use sleeplab_stats::summarize;

    #[test]
    fn the_seeds_table_holds_hand_computed_totals_and_sigma() {
        let r = stored("runtimes");
        let ExperimentData::Runtimes(mut d) = r.data else {
            panic!("runtimes");
        };
        d.runtimes.retain(|x| {
            x.status == RuntimeStatus::Measured
                && crate::findings::runtimes::main_sleep(x).is_some()
        });
        d.runtimes.truncate(1);
        let rt = &mut d.runtimes[0];
        let name = crate::findings::runtimes::main_sleep(rt)
            .unwrap()
            .method
            .clone();
        let i = rt.methods.iter().position(|m| m.method == name).unwrap();
        let m = &mut rt.methods[i];
        m.cells.truncate(1);
        // 1 µs asked, 1.1 and 1.3 µs taken: ideal 2 µs, actual 2.4 µs (×1.2), avg 1.2 µs,
        // σ (÷ n) 100 ns (÷ n − 1 would be 141 ns).
        m.cells[0].requested_ns = 1_000;
        m.cells[0].summary = summarize(&[1_100, 1_300], 1_000);
        let t = table(&d);
        assert_eq!(t.rows.len(), 1);
        let row: Vec<String> = t.rows[0]
            .iter()
            .map(|c| match c {
                Cell::Text(x) | Cell::Num(x) => x.clone(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            row[2..],
            [
                "1 µs", "2", "2 µs", "2.4 µs", "×1.2", "1.1 µs", "1.3 µs", "1.2 µs", "1.2 µs",
                "100 ns"
            ]
        );
        let s = caption(&d, Wording::NAMES);
        s.check().unwrap();
        assert!(s.text.contains("σ divides by n"));
    }

    #[test]
    fn the_caption_names_how_the_run_chose_its_repetitions() {
        let ExperimentData::Runtimes(mut d) = stored("runtimes").data else {
            panic!("runtimes");
        };
        let cases = [
            (
                ProbeQuota::Budget {
                    budget_ns: 10_000_000,
                    max_count: 1_000,
                },
                "ran until its calls added up to 10 ms (a time budget)",
            ),
            (ProbeQuota::Count { count: 7 }, "each cell ran 7 calls"),
            (
                ProbeQuota::PerRequest {
                    count: 100,
                    max_ideal_ns: 1_000_000_000,
                },
                "each cell ran 100 calls (fewer where 100 calls would ask for more than 1 s of sleep)",
            ),
        ];
        for (quota, says) in cases {
            d.config.quota = quota;
            let s = caption(&d, Wording::NAMES);
            s.check().unwrap();
            assert!(s.text.contains(says), "{quota:?}: {}", s.text);
        }
    }
}
