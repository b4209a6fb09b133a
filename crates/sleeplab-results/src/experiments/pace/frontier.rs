//! The accuracy-versus-CPU frontier of one load level: which contenders no other one
//! is shown to beat on both p99 lateness and CPU, and, for the others, one that does.
//!
//! "Beaten on both" is two verdicts, each over intervals across the level's blocks
//! (`stats::units`: the frames of one block share its moment, so intervals of the
//! pooled frames would be far too narrow): the other's p99 must lie below this one's
//! beyond both 95 % intervals, and its CPU too. A pair where the other has the lower
//! point values on both but an interval overlaps is named as indistinguishable in this
//! run instead ("beaten on both by std-sleep" was once read off the 12th-worst of 1200
//! frames of each). Below 8 blocks there is no interval, and no verdict.

use super::PaceResult;
use sleeplab_stats::{
    Claim, Est, Order, Sentence, Stat, indistinguishable, order, units::ns, units::pct,
    with_interval,
};

/// Frames a p99 needs: n·(1 − 0.99) ≥ 1.
pub const P99_MIN_FRAMES: u64 = 100;

/// A contender's place on the accuracy-versus-CPU plane at one load level.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing<'a> {
    /// Contender name or setting.
    pub strategy: &'a str,
    /// Frames measured.
    pub frames: u64,
    /// p99 lateness, ns, with its interval over blocks; `None` below
    /// `P99_MIN_FRAMES` frames.
    pub p99: Option<Est>,
    /// CPU, % of one core, with its interval over blocks.
    pub cpu: Est,
    /// The index (in the same list) of a contender shown to beat this one on both: its
    /// p99 and its CPU each lie below this one's beyond both intervals. Of those, the one
    /// with the lowest p99. `None` on the frontier or without a p99.
    pub dominated_by: Option<usize>,
    /// Where not dominated: a contender with both a lower point p99 and a lower point
    /// CPU that is not shown to beat this one on both (the lowest p99 of those): the run
    /// cannot tell.
    pub undecided_with: Option<usize>,
}

impl Standing<'_> {
    /// Its p99, ns (`None` below `P99_MIN_FRAMES` frames).
    pub fn p99_ns(&self) -> Option<f64> {
        self.p99.map(|p| p.value)
    }

    /// Its CPU, % of one core.
    pub fn cpu_percent(&self) -> f64 {
        self.cpu.value
    }
}

/// The standings of `results` (one load level), in their order.
pub fn standings<'a>(results: &[&'a PaceResult]) -> Vec<Standing<'a>> {
    // The summary's p99 is `None` below P99_MIN_FRAMES frames (the quantile rule).
    let p99 = |r: &PaceResult| r.est(Stat::P99).filter(|_| r.error.count >= P99_MIN_FRAMES);
    let lowest = |it: &mut dyn Iterator<Item = (usize, Est, Est)>| {
        it.min_by(|a, b| {
            a.1.value
                .total_cmp(&b.1.value)
                .then(a.2.value.total_cmp(&b.2.value))
        })
        .map(|(i, _, _)| i)
    };
    results
        .iter()
        .map(|r| {
            let mine = p99(r);
            let cpu = r.cpu();
            let others = || {
                results
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| Some((i, p99(o)?, o.cpu())))
            };
            let dominated_by = mine.and_then(|m| {
                lowest(&mut others().filter(|(_, t, c)| t.below(&m) && c.below(&cpu)))
            });
            let undecided_with = match (mine, dominated_by) {
                (Some(m), None) => lowest(
                    &mut others().filter(|(_, t, c)| t.value < m.value && c.value < cpu.value),
                ),
                _ => None,
            };
            Standing {
                strategy: &r.strategy,
                frames: r.error.count,
                p99: mine,
                cpu,
                dominated_by,
                undecided_with,
            }
        })
        .collect()
}

/// A CPU share with its interval: `1.4 % [1.2–1.6 %]`.
fn cpu_text(e: &Est) -> String {
    with_interval(e, pct)
}

fn point(s: &Standing) -> String {
    let p = s.p99.map_or("–".into(), |p| with_interval(&p, ns));
    format!("{} (p99 {p} at {} CPU)", s.strategy, cpu_text(&s.cpu))
}

/// The verdict of `theirs` against `mine` on `stat` (recorded), and in words: `p99
/// 30 µs [..] vs 40 µs [..]` where their intervals put theirs below, else the
/// indistinguishable clause.
fn side(
    s: &mut Sentence,
    stat: Stat,
    theirs: Est,
    mine: Est,
    fmt: fn(f64) -> String,
) -> (Order, String) {
    let stated = order(&theirs, &mine);
    s.claim(Claim::Verdict {
        stat,
        a: theirs,
        b: mine,
        stated,
    });
    let words = if stated == Order::Below {
        format!(
            "{stat} {} vs {}",
            with_interval(&theirs, fmt),
            with_interval(&mine, fmt)
        )
    } else {
        indistinguishable(stat, &theirs, &mine, fmt)
    };
    (stated, words)
}

/// One paragraph on the frontier at `load` busy threads, with its claims: the
/// contenders on it, each one below it with a contender shown to beat it on both (two
/// verdicts over separated intervals: p99 and CPU), the pairs the run cannot order
/// (said to be indistinguishable where they are, with both intervals), and those with
/// too few frames.
pub fn frontier_sentence(load: usize, standings: &[Standing]) -> Sentence {
    let mut s = Sentence::default();
    let on: Vec<String> = standings
        .iter()
        .filter(|s| s.p99.is_some() && s.dominated_by.is_none())
        .map(point)
        .collect();
    let mut below = Vec::new();
    let mut undecided = Vec::new();
    for me in standings {
        let Some(mine) = me.p99 else { continue };
        let (other, beaten) = match (me.dominated_by, me.undecided_with) {
            (Some(i), _) => (&standings[i], true),
            (None, Some(i)) => (&standings[i], false),
            (None, None) => continue,
        };
        let theirs = other.p99.expect("a contender compared has a p99");
        let sides = [
            side(&mut s, Stat::P99, theirs, mine, ns),
            side(&mut s, Stat::Cpu, other.cpu, me.cpu, pct),
        ];
        if beaten {
            below.push(format!(
                "{} (p99 {} at {} CPU; {} beats it on both: {}, {})",
                me.strategy,
                with_interval(&mine, ns),
                cpu_text(&me.cpu),
                other.strategy,
                sides[0].1,
                sides[1].1,
            ));
        } else {
            let parts: Vec<String> = sides
                .iter()
                .map(|(o, words)| match o {
                    Order::Below => format!("{}'s {words}", other.strategy),
                    _ => words.clone(),
                })
                .collect();
            undecided.push(format!(
                "{} against {}: {}",
                me.strategy,
                other.strategy,
                parts.join("; ")
            ));
        }
    }
    let few: Vec<String> = standings
        .iter()
        .filter(|s| s.p99.is_none())
        .map(|s| format!("{} (n = {})", s.strategy, s.frames))
        .collect();
    s.push(&format!("Load {load}: "));
    if on.is_empty() {
        s.push("no contender has a p99 to place on the accuracy-versus-CPU frontier.");
    } else {
        s.push(&format!(
            "on the accuracy-versus-CPU frontier (no other contender is shown to have both a lower p99 and a lower CPU, each 95 % interval over the blocks below this one's): {}.",
            on.join(", ")
        ));
    }
    if !below.is_empty() {
        s.push(&format!(" Below it: {}.", below.join("; ")));
    }
    if !undecided.is_empty() {
        s.push(&format!(
            " Lower on both in point values, but not shown to be: {}.",
            undecided.join("; ")
        ));
    }
    if !few.is_empty() {
        s.push(&format!(
            " Too few frames for a p99 (it needs n ≥ {P99_MIN_FRAMES}): {}.",
            few.join(", ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `n` frames all `late` ns late: the p99's interval is the point (closed from 368
    /// frames on).
    fn result(name: &str, n: u64, late: u64, cpu: f64) -> PaceResult {
        PaceResult::uniform(name, 0, n, late, cpu)
    }

    #[test]
    fn the_frontier_holds_exactly_the_undominated_and_each_dominator_beats_on_both() {
        let rs = [
            result("spin", 400, 20_000, 99.0),
            result("precise", 400, 40_000, 1.4),
            result("seed-hybrid", 400, 42_000, 7.7),
            result("sdl-precise", 400, 37_000, 7.0),
            result("std-sleep", 400, 900_000, 0.1),
            result("few", 50, 1_000, 0.01),
        ];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        let by: Vec<Option<&str>> = st
            .iter()
            .map(|s| s.dominated_by.map(|i| st[i].strategy))
            .collect();
        // seed-hybrid is beaten by precise (40 µs at 1.4 %) and sdl-precise (37 µs at
        // 7 %); the lower p99 of the two is named.
        assert_eq!(by, [None, None, Some("sdl-precise"), None, None, None]);
        for (s, r) in st.iter().zip(&rs) {
            if let Some(i) = s.dominated_by {
                assert!(st[i].p99_ns() < s.p99_ns() && st[i].cpu_percent() < r.cpu_percent);
            }
            // On the frontier: nobody beats it on both.
            if s.dominated_by.is_none() && s.p99.is_some() {
                assert!(!st.iter().any(|o| o.p99.is_some()
                    && o.p99_ns() < s.p99_ns()
                    && o.cpu_percent() < s.cpu_percent()));
            }
        }
        assert_eq!(st[5].p99, None, "n = 50 has no p99");
        let sentence = frontier_sentence(2, &st);
        assert_eq!(sentence.check(), Ok(()));
        let text = sentence.text;
        assert!(text.starts_with("Load 2: on the accuracy-versus-CPU frontier"));
        let (on, rest) = text.split_once(" Below it: ").unwrap();
        for name in ["spin (", "precise (", "sdl-precise (", "std-sleep ("] {
            assert!(on.contains(name), "{name} on the frontier: {text}");
        }
        assert!(!on.contains("seed-hybrid") && !on.contains("few"));
        assert!(rest.starts_with(
            "seed-hybrid (p99 42 µs [42–42 µs] at 7.7 % [7.7–7.7 %] CPU; sdl-precise beats it on both: p99 37 µs [37–37 µs] vs 42 µs [42–42 µs], CPU 7 % [7–7 %] vs 7.7 % [7.7–7.7 %])."
        ), "{rest}");
        assert!(rest.ends_with("Too few frames for a p99 (it needs n ≥ 100): few (n = 50)."));
    }

    #[test]
    fn overlapping_intervals_draw_no_verdict() {
        // 200 frames bound a p99 from below only: nothing is shown to beat anything, and
        // the cheaper, lower-p99 contender is named as undecided, with both intervals.
        let rs = [
            result("precise", 200, 40_000, 1.4),
            result("std-sleep", 200, 30_000, 0.1),
        ];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        assert!(st.iter().all(|s| s.dominated_by.is_none()));
        assert_eq!(st[0].undecided_with, Some(1));
        let s = frontier_sentence(0, &st);
        assert_eq!(s.check(), Ok(()));
        assert!(s.text.ends_with(
            " Lower on both in point values, but not shown to be: precise against std-sleep: indistinguishable in this run: p99 30 µs [≥ 30 µs] vs 40 µs [≥ 40 µs]; std-sleep's CPU 0.1 % [0.1–0.1 %] vs 1.4 % [1.4–1.4 %]."
        ), "{}", s.text);
    }

    /// p99s apart but CPUs whose intervals over blocks overlap: not beaten on both; and
    /// too few blocks for any interval: no verdict, the blocks counted.
    #[test]
    fn overlapping_cpu_or_too_few_blocks_draw_no_verdict() {
        use sleeplab_stats::{Ci, Unit, UnitIntervals};
        let mut a = result("a", 400, 10_000, 1.0);
        let mut b = result("b", 400, 20_000, 1.2);
        a.cpu_ci_percent = Some(Ci(Some(0.5), Some(1.5)));
        b.cpu_ci_percent = Some(Ci(Some(0.6), Some(1.8)));
        let rs = [a, b];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        assert!(st.iter().all(|s| s.dominated_by.is_none()));
        assert_eq!(st[1].undecided_with, Some(0));
        let s = frontier_sentence(0, &st);
        assert_eq!(s.check(), Ok(()));
        assert!(s.text.contains(
            "b against a: a's p99 10 µs [10–10 µs] vs 20 µs [20–20 µs]; indistinguishable in this run: CPU 1 % [0.5–1.5 %] vs 1.2 % [0.6–1.8 %]."
        ), "{}", s.text);
        let few = |r: &mut PaceResult| {
            r.units = Some(UnitIntervals {
                unit: Unit::Block,
                units: 4,
                median_ci_ns: None,
                p90_ci_ns: None,
                p99_ci_ns: None,
                p999_ci_ns: None,
                mean_ci_ns: None,
            });
            r.cpu_ci_percent = None;
        };
        let mut rs = [result("a", 400, 10_000, 0.1), result("b", 400, 20_000, 1.2)];
        rs.iter_mut().for_each(few);
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let s = frontier_sentence(0, &standings(&refs));
        assert_eq!(s.check(), Ok(()));
        assert!(
            s.text
                .contains("(4 blocks; an interval over units needs 8)"),
            "{}",
            s.text
        );
        assert!(!s.text.contains("Below it"), "{}", s.text);
    }

    #[test]
    fn equal_numbers_do_not_dominate_and_nothing_measured_says_so() {
        let rs = [result("a", 400, 5_000, 2.0), result("b", 400, 5_000, 2.0)];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        assert!(st.iter().all(|s| s.dominated_by.is_none()));
        assert!(!frontier_sentence(0, &st).text.contains("Below it"));
        let none = frontier_sentence(0, &standings(&[&result("x", 10, 1, 1.0)])).text;
        assert!(none.starts_with("Load 0: no contender has a p99"), "{none}");
    }

    #[test]
    fn a_label_names_the_load_only_when_there_was_one() {
        let mut r = result("precise", 1, 1, 1.0);
        assert_eq!(r.label(), "precise");
        r.load = 2;
        assert_eq!(r.label(), "precise @ load 2");
    }

    proptest! {
        /// Whatever the frames and the blocks' CPU, every verdict of the frontier holds:
        /// a contender is "below it" only behind one whose p99 and CPU intervals over
        /// blocks lie below its own.
        #[test]
        fn every_frontier_sentence_is_true_of_its_numbers(
            rs in proptest::collection::vec(
                (proptest::collection::vec(0u64..5_000_000, 50..600), 0.01f64..99.0, 0.0f64..0.5, 1u64..40),
                1..6,
            ),
        ) {
            let results: Vec<PaceResult> = rs
                .iter()
                .enumerate()
                .map(|(i, (frames, cpu, spread, block))| {
                    let mut r = result(&format!("c{i}"), 0, 0, *cpu);
                    r.error = sleeplab_stats::summarize(frames, 0);
                    let n = frames.len() as u64;
                    let counts: Vec<u64> =
                        (0..n.div_ceil(*block)).map(|b| (*block).min(n - block * b)).collect();
                    r.units = sleeplab_stats::UnitIntervals::of_counted(
                        sleeplab_stats::Unit::Block, frames, &counts);
                    let k = counts.len();
                    let per: Vec<f64> =
                        (0..k).map(|b| cpu * (1.0 + spread * if b % 2 == 0 { 1.0 } else { -1.0 })).collect();
                    r.cpu_ci_percent = sleeplab_stats::ratio_ci(&per, &vec![1.0; k]);
                    r
                })
                .collect();
            let refs: Vec<&PaceResult> = results.iter().collect();
            let st = standings(&refs);
            let s = frontier_sentence(1, &st);
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
            for x in &st {
                if let Some(i) = x.dominated_by {
                    prop_assert!(st[i].p99.unwrap().below(&x.p99.unwrap()));
                    prop_assert!(st[i].cpu.below(&x.cpu));
                }
            }
        }
    }
}
