//! The accuracy-versus-CPU frontier of one load level: which contenders no other one
//! is shown to beat on both p99 lateness and CPU, and, for the others, one that does.
//!
//! "Beaten on both" is a verdict: the other's p99 must lie below this one's beyond both
//! 95 % intervals (`stats::quantile_ci`), not merely have a lower point value, and its
//! CPU must be lower. A pair whose p99 intervals overlap is named as indistinguishable
//! in this run instead (issue 25: "beaten on both by std-sleep" was once read off the
//! 12th-worst of 1200 frames of each). Below 368 frames a p99's interval is open above,
//! so no contender is shown to beat another.

use super::PaceResult;
use crate::output::units::{ns, pct};
use crate::report::claim::{Claim, Est, Order, Sentence, indistinguishable, with_interval};
use crate::stats::{Ci, Stat};

/// Frames a p99 needs: n·(1 − 0.99) ≥ 1.
pub const P99_MIN_FRAMES: u64 = 100;

/// A contender's place on the accuracy-versus-CPU plane at one load level.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing<'a> {
    /// Contender name or setting.
    pub strategy: &'a str,
    /// Frames measured.
    pub frames: u64,
    /// p99 lateness, ns; `None` below [`P99_MIN_FRAMES`] frames.
    pub p99_ns: Option<f64>,
    /// The 95 % interval of the p99, ns.
    pub p99_ci_ns: Option<Ci>,
    /// CPU, % of one core.
    pub cpu_percent: f64,
    /// The index (in the same list) of a contender with a lower CPU whose p99 lies below
    /// this one's beyond both intervals: of those, the one with the lowest p99. `None` on
    /// the frontier or without a p99.
    pub dominated_by: Option<usize>,
    /// Where not dominated: a contender with both a lower point p99 and a lower CPU whose
    /// p99 interval overlaps this one's (the lowest p99 of those): the run cannot tell
    /// whether it beats this one.
    pub undecided_with: Option<usize>,
}

impl Standing<'_> {
    /// Its p99 with its interval.
    pub fn p99(&self) -> Option<Est> {
        self.p99_ns.map(|v| Est::new(v, self.p99_ci_ns))
    }
}

/// The standings of `results` (one load level), in their order.
pub fn standings<'a>(results: &[&'a PaceResult]) -> Vec<Standing<'a>> {
    // The summary's p99 is `None` below P99_MIN_FRAMES frames (the quantile rule).
    let p99 = |r: &PaceResult| {
        r.error
            .p99_ns
            .filter(|_| r.error.count >= P99_MIN_FRAMES)
            .map(|v| Est::new(v, r.error.p99_ci_ns))
    };
    let lowest = |it: &mut dyn Iterator<Item = (usize, Est, f64)>| {
        it.min_by(|a, b| a.1.value.total_cmp(&b.1.value).then(a.2.total_cmp(&b.2)))
            .map(|(i, _, _)| i)
    };
    results
        .iter()
        .map(|r| {
            let mine = p99(r);
            let cheaper = || {
                results.iter().enumerate().filter_map(|(i, o)| {
                    let theirs = p99(o)?;
                    (o.cpu_percent < r.cpu_percent).then_some((i, theirs, o.cpu_percent))
                })
            };
            let dominated_by =
                mine.and_then(|m| lowest(&mut cheaper().filter(|(_, t, _)| t.below(&m))));
            let undecided_with = match (mine, dominated_by) {
                (Some(m), None) => lowest(&mut cheaper().filter(|(_, t, _)| t.value < m.value)),
                _ => None,
            };
            Standing {
                strategy: &r.strategy,
                frames: r.error.count,
                p99_ns: mine.map(|m| m.value),
                p99_ci_ns: r.error.p99_ci_ns,
                cpu_percent: r.cpu_percent,
                dominated_by,
                undecided_with,
            }
        })
        .collect()
}

fn point(s: &Standing) -> String {
    let p = s.p99().map_or("–".into(), |p| with_interval(&p, ns));
    format!("{} (p99 {p} at {} CPU)", s.strategy, pct(s.cpu_percent))
}

/// One paragraph on the frontier at `load` busy threads, with its claims: the
/// contenders on it, each one below it with a contender shown to beat it on both (a
/// verdict over separated intervals), the pairs the run cannot order (said to be
/// indistinguishable, with both intervals), and those with too few frames.
pub fn frontier_sentence(load: usize, standings: &[Standing]) -> Sentence {
    let mut s = Sentence::default();
    let on: Vec<String> = standings
        .iter()
        .filter(|s| s.p99_ns.is_some() && s.dominated_by.is_none())
        .map(point)
        .collect();
    let mut below = Vec::new();
    let mut undecided = Vec::new();
    for me in standings {
        let Some(mine) = me.p99() else { continue };
        let (other, stated) = match (me.dominated_by, me.undecided_with) {
            (Some(i), _) => (&standings[i], Order::Below),
            (None, Some(i)) => (&standings[i], Order::Indistinguishable),
            (None, None) => continue,
        };
        let theirs = other.p99().expect("a contender compared has a p99");
        s.claim(Claim::Verdict {
            stat: Stat::P99,
            a: theirs,
            b: mine,
            stated,
        });
        if stated == Order::Below {
            below.push(format!(
                "{} (p99 {} at {} CPU; {} has a lower p99, {}, at less CPU, {})",
                me.strategy,
                with_interval(&mine, ns),
                pct(me.cpu_percent),
                other.strategy,
                with_interval(&theirs, ns),
                pct(other.cpu_percent)
            ));
        } else {
            undecided.push(format!(
                "{} at {} CPU against {} at {}, {}",
                me.strategy,
                pct(me.cpu_percent),
                other.strategy,
                pct(other.cpu_percent),
                indistinguishable(Stat::P99, &mine, &theirs, ns)
            ));
        }
    }
    let few: Vec<String> = standings
        .iter()
        .filter(|s| s.p99_ns.is_none())
        .map(|s| format!("{} (n = {})", s.strategy, s.frames))
        .collect();
    s.push(&format!("Load {load}: "));
    if on.is_empty() {
        s.push("no contender has a p99 to place on the accuracy-versus-CPU frontier.");
    } else {
        s.push(&format!(
            "on the accuracy-versus-CPU frontier (no other contender is shown to have both a lower p99, its 95 % interval below this one's, and a lower CPU): {}.",
            on.join(", ")
        ));
    }
    if !below.is_empty() {
        s.push(&format!(" Below it: {}.", below.join("; ")));
    }
    if !undecided.is_empty() {
        s.push(&format!(
            " A lower p99 at less CPU that this run cannot tell apart: {}.",
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
                assert!(st[i].p99_ns < s.p99_ns && st[i].cpu_percent < r.cpu_percent);
            }
            // On the frontier: nobody beats it on both.
            if s.dominated_by.is_none() && s.p99_ns.is_some() {
                assert!(!st.iter().any(|o| o.p99_ns.is_some()
                    && o.p99_ns < s.p99_ns
                    && o.cpu_percent < s.cpu_percent));
            }
        }
        assert_eq!(st[5].p99_ns, None, "n = 50 has no p99");
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
            "seed-hybrid (p99 42 µs [42–42 µs] at 7.7 % CPU; sdl-precise has a lower p99, 37 µs [37–37 µs], at less CPU, 7 %)."
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
            " A lower p99 at less CPU that this run cannot tell apart: precise at 1.4 % CPU against std-sleep at 0.1 %, indistinguishable in this run: p99 40 µs [≥ 40 µs] vs 30 µs [≥ 30 µs]."
        ), "{}", s.text);
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
        /// Whatever the frames, every verdict of the frontier holds: a contender is
        /// "below it" only behind one whose p99 interval lies below its own.
        #[test]
        fn every_frontier_sentence_is_true_of_its_numbers(
            rs in proptest::collection::vec((proptest::collection::vec(0u64..5_000_000, 50..600), 0.01f64..99.0), 1..6),
        ) {
            let results: Vec<PaceResult> = rs
                .iter()
                .enumerate()
                .map(|(i, (frames, cpu))| {
                    let mut r = result(&format!("c{i}"), 0, 0, *cpu);
                    r.error = crate::stats::summarize(frames, 0);
                    r
                })
                .collect();
            let refs: Vec<&PaceResult> = results.iter().collect();
            let st = standings(&refs);
            let s = frontier_sentence(1, &st);
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
            for x in &st {
                if let Some(i) = x.dominated_by {
                    prop_assert!(st[i].p99().unwrap().below(&x.p99().unwrap()));
                }
            }
        }
    }
}
