//! The choice: which candidates meet the tolerance (their p99's 95 % interval over
//! their blocks below it), the cheapest of them (its CPU's interval over blocks below
//! every other's, or said to be indistinguishable), the runner-up, and the reasoning
//! with its claims.

use super::Candidate;
use crate::experiments::{Hint, Wording};
use sleeplab_stats::{
    Claim, Est, Extreme, INDISTINGUISHABLE, Order, RankBy, Sentence, Stat, Unit, basis_note, order,
    units::ns, units::pct, with_interval,
};

impl Candidate {
    /// Its p99 with its interval over blocks (its pooled interval, which decides
    /// nothing, in a result written before them); `None` without a p99.
    pub fn p99(&self) -> Option<Est> {
        let p = self.p99_ns?;
        Some(Est::over(
            p,
            self.units.as_ref().map(|u| (u.p99_ci_ns, u.unit, u.units)),
            self.p99_ci_ns,
        ))
    }

    /// Its CPU, % of one core, with its interval over blocks (a point value without
    /// blocks).
    pub fn cpu(&self) -> Est {
        match &self.units {
            Some(u) => Est::units(self.cpu_percent, self.cpu_ci_percent, Unit::Block, u.units),
            None => Est::point(self.cpu_percent),
        }
    }

    /// How its p99 stands against `tolerance_ns`: below (meets), above (misses), or
    /// indistinguishable (the interval holds the tolerance, there is none, or there is no
    /// p99).
    pub fn against(&self, tolerance_ns: u64) -> Order {
        self.p99().map_or(Order::Indistinguishable, |p| {
            order(&p, &Est::exact(tolerance_ns as f64))
        })
    }

    /// Whether its p99 is shown to be within `tolerance_ns`: the 95 % interval over its
    /// blocks lies below it.
    pub fn meets(&self, tolerance_ns: u64) -> bool {
        self.against(tolerance_ns) == Order::Below
    }

    /// Its p99 for ranking: unknown ranks last.
    fn p99_rank(&self) -> f64 {
        self.p99_ns.unwrap_or(f64::INFINITY)
    }
}

/// Picks the candidate that meets `tolerance_ns` at p99 with the lowest CPU (ties: the
/// lower p99); if none does, the one with the lowest p99. `None` for no candidates.
pub fn choose(candidates: &[Candidate], tolerance_ns: u64) -> Option<(usize, bool)> {
    let meets = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.meets(tolerance_ns))
        .min_by(|(_, a), (_, b)| {
            a.cpu_percent
                .total_cmp(&b.cpu_percent)
                .then(a.p99_rank().total_cmp(&b.p99_rank()))
        });
    if let Some((i, _)) = meets {
        return Some((i, true));
    }
    candidates
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| a.p99_rank().total_cmp(&b.p99_rank()))
        .map(|(i, _)| (i, false))
}

/// The frontier's next point after the chosen one: of the other contenders that also
/// meet `tolerance_ns` at p99, the one with the lowest CPU (the price of the runner-up).
pub fn runner_up(candidates: &[Candidate], tolerance_ns: u64, chosen: usize) -> Option<usize> {
    let name = &candidates.get(chosen)?.strategy;
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| &c.strategy != name && c.meets(tolerance_ns))
        .min_by(|(_, a), (_, b)| a.cpu_percent.total_cmp(&b.cpu_percent))
        .map(|(i, _)| i)
}

/// The sentence on the runner-up (see [`runner_up`]): what it needs to meet the same
/// tolerance; empty when no other contender meets it.
pub fn runner_up_sentence(candidates: &[Candidate], tolerance_ns: u64, chosen: usize) -> Sentence {
    let mut s = Sentence::default();
    if let Some(i) = runner_up(candidates, tolerance_ns, chosen) {
        let c = &candidates[i];
        let p = p99_quoted(&mut s, c, tolerance_ns);
        s.push(&format!(
            " The next cheapest that meets it in point values, {}, needs {} of a core (p99 {p}).",
            c.strategy,
            with_interval(&c.cpu(), pct),
        ));
    }
    s
}

/// A candidate's p99 with its interval, as the reason writes it (`48 µs [≥ 40 µs]`),
/// with its quote and its verdict against the tolerance recorded; "–" without a p99.
fn p99_quoted(s: &mut Sentence, c: &Candidate, tolerance_ns: u64) -> String {
    let Some(p) = c.p99() else {
        return "–".into();
    };
    s.claim(Claim::Quote {
        stat: Stat::P99,
        n: c.waits,
        shown: ns(p.value),
    });
    s.claim(Claim::Verdict {
        stat: Stat::P99,
        a: p,
        b: Est::exact(tolerance_ns as f64),
        stated: c.against(tolerance_ns),
    });
    format!("{}{}", with_interval(&p, ns), basis_note(&[&p]))
}

/// The reasoning for the choice of `chosen` (`meets`: it meets the tolerance), every
/// claim recorded: a candidate said to meet the tolerance has its p99's interval below
/// it, one said to miss it above it; where no candidate is shown to meet it, those whose
/// interval holds the tolerance are named as indistinguishable from it in this run. The
/// chosen one's CPU is "the lowest" only where its interval over blocks lies below every
/// other's that meets; else those it cannot be told from are named. Where none is shown
/// to meet it, what would help is said in `hints`' words (the command layer's flags).
pub fn reason(
    candidates: &[Candidate],
    tolerance_ns: u64,
    chosen: usize,
    meets: bool,
    hints: Wording,
) -> Sentence {
    let Some(c) = candidates.get(chosen) else {
        return Sentence::new("nothing was measured (interrupted)");
    };
    let tol = ns(tolerance_ns as f64);
    let mut s = Sentence::default();
    s.claim(Claim::Threshold { shown: tol.clone() });
    if meets {
        let met: Vec<&Candidate> = candidates
            .iter()
            .filter(|x| x.meets(tolerance_ns))
            .collect();
        let p = p99_quoted(&mut s, c, tolerance_ns);
        let blocks = c.units.as_ref().map_or(0, |u| u.units);
        s.push(&format!(
            "{} (timer slack {}) meets p99 ≤ {tol} with p99 {p} (its 95 % interval over {} below the tolerance) at {} of a core",
            c.strategy,
            ns(c.timer_slack_ns as f64),
            Unit::Block.count(blocks),
            with_interval(&c.cpu(), pct),
        ));
        if met.len() >= 2 {
            let cpus: Vec<Est> = met.iter().map(|x| x.cpu()).collect();
            let at = met.iter().position(|x| std::ptr::eq(*x, c)).unwrap_or(0);
            let close: Vec<String> = met
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != at && !cpus[at].below(&cpus[*i]))
                .map(|(i, x)| format!("{} {}", x.strategy, with_interval(&cpus[i], pct)))
                .collect();
            if close.is_empty() {
                s.push(&format!(
                    ", the lowest CPU of the {} candidates that do.",
                    met.len()
                ));
            } else {
                s.push(&format!(
                    ", the lowest CPU of the {} candidates that do in point values; {INDISTINGUISHABLE} from {}.",
                    met.len(),
                    close.join(", ")
                ));
            }
            s.claim(Claim::Rank {
                extreme: Extreme::Least,
                by: RankBy::Signed,
                chosen: at,
                among: cpus.iter().map(|e| e.value).collect(),
                intervals: cpus,
            });
        } else {
            s.push(", the only candidate that does.");
        }
        s.append(runner_up_sentence(candidates, tolerance_ns, chosen));
        return s;
    }
    let undecided: Vec<&Candidate> = candidates
        .iter()
        .filter(|x| x.p99().is_some() && x.against(tolerance_ns) == Order::Indistinguishable)
        .collect();
    if undecided.is_empty() {
        s.push(&format!(
            "no candidate met p99 ≤ {tol} here: every p99's 95 % interval over its blocks lies above it"
        ));
    } else {
        let parts: Vec<String> = undecided
            .iter()
            .map(|x| {
                let p = p99_quoted(&mut s, x, tolerance_ns);
                format!("{} p99 {p}", x.strategy)
            })
            .collect();
        let who = if undecided.len() == 1 {
            format!("one is {INDISTINGUISHABLE}")
        } else {
            format!("these are each {INDISTINGUISHABLE}")
        };
        s.push(&format!(
            "no candidate was shown to meet p99 ≤ {tol}: against it, {who} ({}); more waits ({}) narrow the interval",
            parts.join("; "),
            hints.word(Hint::LongerRun)
        ));
    }
    let few: Vec<String> = candidates
        .iter()
        .filter(|x| x.p99_ns.is_none())
        .map(|x| format!("{} (n = {})", x.strategy, x.waits))
        .collect();
    if !few.is_empty() {
        s.push(&format!(
            "; too few waits for a p99 (it needs n ≥ 100): {}",
            few.join(", ")
        ));
    }
    let p = p99_quoted(&mut s, c, tolerance_ns);
    s.push(&format!(
        ". The lowest p99 in point values was {}'s ({p} at {} of a core). This run cannot promise that tolerance; consider {}, an isolated CPU, or a looser tolerance.",
        c.strategy,
        pct(c.cpu_percent),
        hints.word(Hint::RealtimePolicy)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use sleeplab_stats::{Ci, UnitIntervals};

    /// A candidate of 1000 waits in 20 blocks whose p99's interval over them is ±10 %
    /// and its CPU's ±5 %.
    fn cand(strategy: &str, p99: f64, cpu: f64) -> Candidate {
        let ci = Some(Ci(Some(0.9 * p99), Some(1.1 * p99)));
        Candidate {
            strategy: strategy.into(),
            timer_slack_ns: 1,
            waits: 1000,
            p50_ns: p99 / 2.0,
            p50_ci_ns: None,
            p99_ns: Some(p99),
            p99_ci_ns: ci,
            max_ns: p99 as u64 * 2,
            cpu_percent: cpu,
            units: Some(UnitIntervals {
                unit: Unit::Block,
                units: 20,
                median_ci_ns: None,
                p90_ci_ns: None,
                p99_ci_ns: ci,
                p999_ci_ns: None,
                mean_ci_ns: None,
            }),
            cpu_ci_percent: Some(Ci(Some(0.95 * cpu), Some(1.05 * cpu))),
        }
    }

    /// Sets the p99's interval over blocks.
    fn with_p99_ci(c: &mut Candidate, ci: Option<Ci>) {
        c.units.as_mut().unwrap().p99_ci_ns = ci;
    }

    /// The field both `choose` and `runner_up` are tried on: a cheap plain sleep far off
    /// any tight tolerance, two settings of precise, two dearer hybrids (seed-hybrid's p99
    /// over 20 µs) and a spin, the only one under 500 ns.
    fn field() -> [Candidate; 6] {
        [
            cand("clock-nanosleep-abs", 80_000.0, 0.1),
            cand("precise", 1_500.0, 0.9),
            cand("precise", 1_200.0, 1.1),
            cand("sdl-precise", 3_000.0, 7.0),
            cand("seed-hybrid", 30_000.0, 5.0),
            cand("spin", 100.0, 99.0),
        ]
    }

    #[test]
    fn chooses_lowest_cpu_that_meets_the_tolerance() {
        let c = field();
        assert_eq!(choose(&c, 20_000), Some((1, true)));
        assert_eq!(choose(&c, 100_000), Some((0, true)));
        assert_eq!(choose(&c, 500), Some((5, true)));
        // Nothing meets 50 ns: the best p99 is recommended, flagged.
        assert_eq!(choose(&c, 50), Some((5, false)));
        assert_eq!(choose(&[], 50), None);
    }

    #[test]
    fn the_runner_up_meets_the_tolerance_at_no_less_cpu_and_is_another_contender() {
        let c = field();
        let (chosen, meets) = choose(&c, 20_000).unwrap();
        assert!(meets);
        let i = runner_up(&c, 20_000, chosen).unwrap();
        assert_eq!(c[i].strategy, "sdl-precise");
        assert!(c[i].cpu_percent >= c[chosen].cpu_percent && c[i].meets(20_000));
        assert_eq!(
            runner_up_sentence(&c, 20_000, chosen).text,
            " The next cheapest that meets it in point values, sdl-precise, needs 7 % [6.65–7.35 %] of a core (p99 3 µs [2.7–3.3 µs])."
        );
        // Nothing else meets 500 ns.
        assert_eq!(runner_up(&c, 500, 5), None);
        assert_eq!(runner_up_sentence(&c, 500, 5).text, "");
    }

    #[test]
    fn a_p99_whose_interval_holds_the_tolerance_neither_meets_nor_misses_it() {
        // precise's p99 of 19 µs is under 20 µs, but its interval [17.1, 20.9] holds it.
        let mut c = [
            cand("clock-nanosleep-abs", 80_000.0, 0.1),
            cand("precise", 19_000.0, 0.9),
        ];
        assert_eq!(c[1].against(20_000), Order::Indistinguishable);
        assert_eq!(c[0].against(20_000), Order::Above);
        assert_eq!(choose(&c, 20_000), Some((1, false)));
        let r = reason(&c, 20_000, 1, false, Wording::NAMES);
        assert_eq!(r.check(), Ok(()));
        assert!(
            r.text.starts_with("no candidate was shown to meet p99 ≤ 20 µs: against it, one is indistinguishable in this run (precise p99 19 µs [17.1–20.9 µs])"),
            "{}",
            r.text
        );
        // An open upper end (fewer than 368 waits) is never shown to meet a tolerance.
        with_p99_ci(&mut c[1], Some(Ci(Some(15_000.0), None)));
        assert!(!c[1].meets(1_000_000));
        // Every interval above: said so.
        let r = reason(&c[..1], 20_000, 0, false, Wording::NAMES);
        assert!(r.text.starts_with(
            "no candidate met p99 ≤ 20 µs here: every p99's 95 % interval over its blocks lies above it"
        ));
        assert_eq!(r.check(), Ok(()));
    }

    proptest! {
        /// Whatever the candidates, the reasoning's claims hold: a candidate said to meet
        /// the tolerance has its interval below it, undecided ones are said to be.
        #[test]
        fn every_reason_is_true_of_its_numbers(
            cs in proptest::collection::vec((1_000.0f64..100_000.0, 0.0f64..0.5, any::<bool>(), 0.01f64..99.0, 50u64..2_000), 1..7),
            tol in 1_000u64..100_000,
        ) {
            let c: Vec<Candidate> = cs
                .iter()
                .enumerate()
                .map(|(i, &(p99, w, open, cpu, n))| {
                    let mut x = cand(&format!("c{i}"), p99, cpu);
                    x.waits = n;
                    x.p99_ns = (n >= 100).then_some(p99);
                    let ci = x.p99_ns.map(|_| Ci(Some(p99 * (1.0 - w)), (!open).then_some(p99 * (1.0 + w))));
                    with_p99_ci(&mut x, ci);
                    x.cpu_ci_percent = Some(Ci(Some(cpu * (1.0 - w)), Some(cpu * (1.0 + w))));
                    x
                })
                .collect();
            let (chosen, meets) = choose(&c, tol).unwrap();
            prop_assert_eq!(meets, c.iter().any(|x| x.meets(tol)));
            let r = reason(&c, tol, chosen, meets, Wording::NAMES);
            prop_assert!(r.check().is_ok(), "{:?}", r.check());
        }
    }

    #[test]
    fn ties_on_cpu_go_to_the_lower_p99() {
        let c = [cand("a", 900.0, 1.0), cand("b", 500.0, 1.0)];
        assert_eq!(choose(&c, 1_000), Some((1, true)));
    }

    /// The data's own view and finding: a row per candidate with the chosen one marked,
    /// the reason and the code in order; the finding is the reason the run printed, its
    /// claims holding; nothing to find where nothing was measured.
    #[test]
    fn the_view_and_the_finding_are_the_datas_own() {
        use crate::ResultData;
        use crate::experiments::advise::{Advice, AdviseData, Need};
        use sleeplab_stats::{Cell, ViewBlock};
        let candidates = field().to_vec();
        let (chosen, meets) = choose(&candidates, 20_000).unwrap();
        let reason_text = reason(&candidates, 20_000, chosen, meets, Wording::NAMES).text;
        let mut data = AdviseData {
            need: Need::Period {
                period_ns: 16_666_667,
            },
            tolerance_ns: 20_000,
            seconds_ns: 2_000_000_000,
            candidates,
            advice: Advice {
                chosen,
                meets_tolerance: meets,
                reason: reason_text.clone(),
                snippet: "let x = 1;\n".into(),
                setting: None,
            },
            tune: None,
        };
        let v = data.view(Wording::NAMES).unwrap();
        let [
            ViewBlock::Text(_),
            ViewBlock::Table(t),
            ViewBlock::Text(r),
            ViewBlock::Code { .. },
        ] = &v.blocks[..]
        else {
            panic!("{:?}", v.blocks)
        };
        assert_eq!(t.rows.len(), data.candidates.len());
        assert_eq!(r, &reason_text);
        let marked: Vec<usize> = t
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| matches!(&row[0], Cell::Text(s) if s.starts_with('→')))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, vec![chosen]);
        let f = data.findings(Wording::NAMES);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].0, f[0].1.text.as_str()),
            ("advise-choice", reason_text.as_str())
        );
        assert!(f[0].1.check().is_ok(), "{:?}", f[0].1.check());
        data.candidates.clear();
        assert!(data.findings(Wording::NAMES).is_empty());
    }
}
