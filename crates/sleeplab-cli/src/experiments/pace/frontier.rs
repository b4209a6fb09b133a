//! The accuracy-versus-CPU frontier of one load level: which contenders no other one
//! beats on both p99 lateness and CPU, and, for the others, one that does.

use super::PaceResult;
use crate::output::{fmt_ns_f, fmt_pct};

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
    /// CPU, % of one core.
    pub cpu_percent: f64,
    /// The index (in the same list) of a contender with both a lower p99 and a lower CPU:
    /// of those, the one with the lowest p99. `None` on the frontier or without a p99.
    pub dominated_by: Option<usize>,
}

/// The standings of `results` (one load level), in their order.
pub fn standings<'a>(results: &[&'a PaceResult]) -> Vec<Standing<'a>> {
    // The summary's p99 is `None` below P99_MIN_FRAMES frames (the quantile rule).
    let p99 = |r: &PaceResult| r.error.p99_ns.filter(|_| r.error.count >= P99_MIN_FRAMES);
    results
        .iter()
        .map(|r| {
            let dominated_by = p99(r).and_then(|mine| {
                results
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| p99(o).map(|theirs| (i, theirs, o.cpu_percent)))
                    .filter(|&(_, theirs, cpu)| theirs < mine && cpu < r.cpu_percent)
                    .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
                    .map(|(i, _, _)| i)
            });
            Standing {
                strategy: &r.strategy,
                frames: r.error.count,
                p99_ns: p99(r),
                cpu_percent: r.cpu_percent,
                dominated_by,
            }
        })
        .collect()
}

fn point(s: &Standing) -> String {
    format!(
        "{} (p99 {} at {} CPU)",
        s.strategy,
        fmt_ns_f(s.p99_ns),
        fmt_pct(s.cpu_percent)
    )
}

/// One paragraph on the frontier at `load` busy threads: the contenders on it, each one
/// below it with a contender that beats it on both, and those with too few frames.
pub fn frontier_sentence(load: usize, standings: &[Standing]) -> String {
    let on: Vec<String> = standings
        .iter()
        .filter(|s| s.p99_ns.is_some() && s.dominated_by.is_none())
        .map(point)
        .collect();
    let below: Vec<String> = standings
        .iter()
        .filter_map(|s| {
            let by = &standings[s.dominated_by?];
            Some(format!(
                "{} (p99 {} at {} CPU; {} has a lower p99, {}, at less CPU, {})",
                s.strategy,
                fmt_ns_f(s.p99_ns?),
                fmt_pct(s.cpu_percent),
                by.strategy,
                fmt_ns_f(by.p99_ns?),
                fmt_pct(by.cpu_percent)
            ))
        })
        .collect();
    let few: Vec<String> = standings
        .iter()
        .filter(|s| s.p99_ns.is_none())
        .map(|s| format!("{} (n = {})", s.strategy, s.frames))
        .collect();
    let mut out = format!("Load {load}: ");
    if on.is_empty() {
        out.push_str("no contender has a p99 to place on the accuracy-versus-CPU frontier.");
    } else {
        out.push_str(&format!(
            "on the accuracy-versus-CPU frontier (no other contender has both a lower p99 and a lower CPU): {}.",
            on.join(", ")
        ));
    }
    if !below.is_empty() {
        out.push_str(&format!(" Below it: {}.", below.join("; ")));
    }
    if !few.is_empty() {
        out.push_str(&format!(
            " Too few frames for a p99 (it needs n ≥ {P99_MIN_FRAMES}): {}.",
            few.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, n: u64, late: u64, cpu: f64) -> PaceResult {
        PaceResult::uniform(name, 0, n, late, cpu)
    }

    #[test]
    fn the_frontier_holds_exactly_the_undominated_and_each_dominator_beats_on_both() {
        let rs = [
            result("spin", 200, 20_000, 99.0),
            result("precise", 200, 40_000, 1.4),
            result("seed-hybrid", 200, 42_000, 7.7),
            result("sdl-precise", 200, 37_000, 7.0),
            result("std-sleep", 200, 900_000, 0.1),
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
        let text = frontier_sentence(2, &st);
        assert!(text.starts_with("Load 2: on the accuracy-versus-CPU frontier"));
        let (on, rest) = text.split_once(" Below it: ").unwrap();
        for name in ["spin (", "precise (", "sdl-precise (", "std-sleep ("] {
            assert!(on.contains(name), "{name} on the frontier: {text}");
        }
        assert!(!on.contains("seed-hybrid") && !on.contains("few"));
        assert!(rest.starts_with(
            "seed-hybrid (p99 42.00 µs at 7.70 % CPU; sdl-precise has a lower p99, 37.00 µs, at less CPU, 7.00 %)."
        ), "{rest}");
        assert!(rest.ends_with("Too few frames for a p99 (it needs n ≥ 100): few (n = 50)."));
    }

    #[test]
    fn equal_numbers_do_not_dominate_and_nothing_measured_says_so() {
        let rs = [result("a", 100, 5_000, 2.0), result("b", 100, 5_000, 2.0)];
        let refs: Vec<&PaceResult> = rs.iter().collect();
        let st = standings(&refs);
        assert!(st.iter().all(|s| s.dominated_by.is_none()));
        assert!(!frontier_sentence(0, &st).contains("Below it"));
        let none = frontier_sentence(0, &standings(&[&result("x", 10, 1, 1.0)]));
        assert!(none.starts_with("Load 0: no contender has a p99"), "{none}");
    }

    #[test]
    fn a_label_names_the_load_only_when_there_was_one() {
        let mut r = result("precise", 1, 1, 1.0);
        assert_eq!(r.label(), "precise");
        r.load = 2;
        assert_eq!(r.label(), "precise @ load 2");
    }
}
