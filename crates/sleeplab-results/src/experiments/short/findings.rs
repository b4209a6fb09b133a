//! Seed 001's four Linux findings, checked against a `short` run: pure functions of the
//! measured cells, one verdict per finding and timer slack, each with its numbers.

use super::{RepStats, SYSCALL, ShortCell, ShortData};
use crate::experiments::{Hint, Wording};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{fmt_ns_f, ratio};

/// How a finding fared on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The numbers here say the same.
    Confirmed,
    /// Same direction, but weaker than the seed claims (or not significant).
    Partly,
    /// The numbers here say otherwise.
    Refuted,
    /// A cell it needs was not measured (e.g. excluded by `--mechanisms`).
    NotMeasured,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Confirmed => "confirmed",
            Outcome::Partly => "partly",
            Outcome::Refuted => "refuted",
            Outcome::NotMeasured => "not measured",
        })
    }
}

/// One of the seed's findings, checked under one timer slack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// 1–4, in the seed's order.
    pub id: u32,
    /// Timer slack of the cells it was checked on, ns.
    pub timer_slack_ns: u64,
    /// What the seed claims, in one line.
    pub claim: String,
    /// The verdict.
    pub outcome: Outcome,
    /// The numbers behind it.
    pub detail: String,
}

/// The seed's claims, in order.
pub const CLAIMS: [&str; 4] = [
    "a zero sleep can return without ever entering the kernel (the seed measured C++ sleep_for(0) on Linux at 0 ± 1 ns over the empty loop)",
    "nanosleep(0) costs as much as nanosleep(1 ns) (498 577 ± 427 vs 498 693 ± 353 ns)",
    "timerfd(1 ns) returns two orders of magnitude sooner than nanosleep(1 ns) (2.8–4.8 µs vs 499 µs)",
    "pselect(0) is cheaper than sched_yield (136 ± 7 vs 164 ± 8 ns)",
];

/// A zero-request call "returns at once": < 1 µs net and (almost) no voluntary switch.
const AT_ONCE_NS: f64 = 1_000.0;
/// Voluntary switches per call below which a call is taken not to block.
const NO_BLOCK_CSW: f64 = 0.01;
/// "As much as": a ratio within 10 %.
const SAME_RATIO: f64 = 0.10;
/// "Two orders of magnitude".
const TWO_ORDERS: f64 = 100.0;
/// The interval-timer variant, listed but not judged in finding 3.
const INTERVAL: &str = "timerfd-interval";

/// Every finding under every measured slack, grouped by finding; what measures a cell
/// not measured is said in `hints`' words (the command layer's flags).
pub fn findings(data: &ShortData, hints: Wording) -> Vec<Finding> {
    let slacks = data.slacks();
    let mut out = Vec::new();
    for id in 1..=4u32 {
        for &slack in &slacks {
            let cells: Vec<&ShortCell> = data
                .cells
                .iter()
                .filter(|c| c.timer_slack_ns == slack)
                .collect();
            let find = |m: &str, ns: u64| {
                cells
                    .iter()
                    .copied()
                    .find(|c| c.mechanism == m && c.requested_ns == ns)
            };
            let (outcome, detail) = match id {
                1 => zero_without_kernel(&cells, data.reference(SYSCALL, slack), hints),
                2 => nanosleep_zero_vs_one(find("nanosleep", 0), find("nanosleep", 1), hints),
                3 => timerfd_vs_nanosleep(
                    find("nanosleep", 1),
                    &["timerfd", "timerfd-reuse", "timerfd-interval"]
                        .into_iter()
                        .filter_map(|m| find(m, 1))
                        .collect::<Vec<_>>(),
                    hints,
                ),
                _ => pselect_vs_yield(find("pselect", 0), find("yield", 0), hints),
            };
            out.push(Finding {
                id,
                timer_slack_ns: slack,
                claim: CLAIMS[id as usize - 1].to_string(),
                outcome,
                detail,
            });
        }
    }
    out
}

/// How many times sooner `fast` returned than `slow`: the ratio of their mean net costs
/// (the seed's statistic; the short section's caption quotes the same).
pub fn times_sooner(slow: &ShortCell, fast: &ShortCell) -> f64 {
    slow.net.mean_ns / fast.net.mean_ns
}

/// "mean ± half-width" of a cell's net cost.
pub fn mean_ci(s: &RepStats) -> String {
    match s.ci_half_width_ns {
        Some(h) => format!("{} ± {}", fmt_ns_f(s.mean_ns), fmt_ns_f(h)),
        None => fmt_ns_f(s.mean_ns),
    }
}

/// Finding 1: which zero requests return at once, and which of those never enter the
/// kernel.
///
/// "Returns at once": a typical (median) net cost under 1 µs and fewer than 0.01
/// voluntary context switches per call. "Never enters the kernel": a median net cost
/// under half the cheapest repetition of one trivial system call — no call that enters
/// the kernel can be that cheap. Medians, because one host stall in a repetition must
/// not move a call from one class to another. The command that measures the seed's own
/// case is named in `hints`' words.
pub fn zero_without_kernel(
    cells: &[&ShortCell],
    syscall: Option<&ShortCell>,
    hints: Wording,
) -> (Outcome, String) {
    let zero: Vec<&ShortCell> = cells
        .iter()
        .copied()
        .filter(|c| c.requested_ns == 0)
        .collect();
    let Some(syscall) = syscall else {
        return (
            Outcome::NotMeasured,
            "no system-call reference was measured".into(),
        );
    };
    if zero.is_empty() {
        return (Outcome::NotMeasured, "no zero request was measured".into());
    }
    let kernel_min = syscall.net.min_ns;
    let at_once =
        |c: &ShortCell| c.net.median_ns < AT_ONCE_NS && c.voluntary_csw_per_call < NO_BLOCK_CSW;
    let no_kernel = |c: &ShortCell| at_once(c) && c.net.median_ns < kernel_min / 2.0;
    let list = |f: &dyn Fn(&ShortCell) -> bool, with_csw: bool| {
        let v: Vec<String> = zero
            .iter()
            .filter(|c| f(c))
            .map(|c| {
                let csw = if with_csw {
                    format!(", {:.2} vol csw/call", c.voluntary_csw_per_call)
                } else {
                    String::new()
                };
                format!(
                    "{} {} (median {}{csw})",
                    c.mechanism,
                    fmt_ns_f(c.net.mean_ns),
                    fmt_ns_f(c.net.median_ns)
                )
            })
            .collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let detail = format!(
        "never enter the kernel (median below {}, half the cheapest {SYSCALL} system call, {}): {}; \
         return at once through the kernel (median < 1 µs, no voluntary switch): {}; \
         take 1 µs or more, or block: {}. (The seed's case, C++ sleep_for(0), is not measured by the survey: \
         std-sleep, Rust's std::thread::sleep, is the nearest case here; \
         `{}` measures the C++ one.)",
        fmt_ns_f(kernel_min / 2.0),
        fmt_ns_f(kernel_min),
        list(&no_kernel, false),
        list(&|c| at_once(c) && !no_kernel(c), false),
        list(&|c| !at_once(c), true),
        hints.word(Hint::CppZeroSleep),
    );
    // `spin` is a busy-wait, not a sleep API: it does not count as the seed's case.
    let sleep_api = zero
        .iter()
        .filter(|c| c.mechanism != "spin")
        .any(|c| no_kernel(c));
    let outcome = if sleep_api {
        Outcome::Confirmed
    } else {
        Outcome::Refuted
    };
    (outcome, detail)
}

/// Finding 2: nanosleep(0) vs nanosleep(1 ns): CIs overlap, or the ratio is within 10 %
/// (a cell not measured: what measures it, in `hints`' words).
pub fn nanosleep_zero_vs_one(
    zero: Option<&ShortCell>,
    one: Option<&ShortCell>,
    hints: Wording,
) -> (Outcome, String) {
    let (Some(z), Some(o)) = (zero, one) else {
        return (
            Outcome::NotMeasured,
            format!(
                "needs nanosleep at 0 and 1 ns ({})",
                hints.word(Hint::Mechanisms("nanosleep"))
            ),
        );
    };
    let ratio = z.net.mean_ns / o.net.mean_ns;
    let overlap = z.net.overlaps(&o.net);
    let same = overlap || (ratio - 1.0).abs() <= SAME_RATIO;
    let detail = format!(
        "nanosleep(0) {} vs nanosleep(1 ns) {}: ratio {ratio:.3}, CIs {}",
        mean_ci(&z.net),
        mean_ci(&o.net),
        if overlap { "overlap" } else { "do not overlap" }
    );
    let outcome = if same {
        Outcome::Confirmed
    } else if z.net.mean_ns > AT_ONCE_NS && ratio > 0.5 {
        // nanosleep(0) still sleeps, just not as long as nanosleep(1 ns).
        Outcome::Partly
    } else {
        Outcome::Refuted
    };
    (outcome, detail)
}

/// Finding 3: how many times sooner timerfd at 1 ns returns than nanosleep(1 ns).
///
/// The verdict rests on the one-shot variants (`timerfd`, `timerfd-reuse`: a timer armed
/// per call, the seed's "recreating" and "reusing"). `timerfd-interval` is listed but
/// not judged: a 1 ns interval timer piles up expirations between reads, and the
/// library hands each call one of them, so most calls return without a system call.
/// Without nanosleep, what measures it is said in `hints`' words.
pub fn timerfd_vs_nanosleep(
    nanosleep: Option<&ShortCell>,
    timerfds: &[&ShortCell],
    hints: Wording,
) -> (Outcome, String) {
    let Some(n) = nanosleep else {
        return (
            Outcome::NotMeasured,
            format!(
                "needs nanosleep at 1 ns ({})",
                hints.word(Hint::Mechanisms("nanosleep"))
            ),
        );
    };
    let judged: Vec<&ShortCell> = timerfds
        .iter()
        .copied()
        .filter(|t| t.mechanism != INTERVAL)
        .collect();
    let part = |t: &ShortCell| {
        format!(
            "{} {} ({} sooner by mean, CIs {}, {:.2} vol csw/call)",
            t.mechanism,
            mean_ci(&t.net),
            ratio(times_sooner(n, t)),
            if t.net.overlaps(&n.net) {
                "overlap"
            } else {
                "apart"
            },
            t.voluntary_csw_per_call
        )
    };
    let mut detail = format!(
        "nanosleep(1 ns) {} vs {}",
        mean_ci(&n.net),
        if judged.is_empty() {
            "no one-shot timerfd".to_string()
        } else {
            judged
                .iter()
                .map(|t| part(t))
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if let Some(i) = timerfds.iter().find(|t| t.mechanism == INTERVAL) {
        detail.push_str(&format!(
            "; not judged: {} (one read collects many 1 ns expirations, later calls take them \
             without a system call)",
            part(i)
        ));
    }
    if judged.is_empty() {
        return (Outcome::NotMeasured, detail);
    }
    let all_faster = judged
        .iter()
        .all(|t| t.net.mean_ns < n.net.mean_ns && !t.net.overlaps(&n.net));
    let min_ratio = judged
        .iter()
        .map(|t| times_sooner(n, t))
        .fold(f64::INFINITY, f64::min);
    let outcome = if all_faster && min_ratio >= TWO_ORDERS {
        Outcome::Confirmed
    } else if all_faster {
        Outcome::Partly
    } else {
        Outcome::Refuted
    };
    (outcome, detail)
}

/// Finding 4: pselect(0) vs sched_yield: which is cheaper, and do the CIs overlap (a
/// cell not measured: what measures it, in `hints`' words).
pub fn pselect_vs_yield(
    pselect: Option<&ShortCell>,
    yld: Option<&ShortCell>,
    hints: Wording,
) -> (Outcome, String) {
    let (Some(p), Some(y)) = (pselect, yld) else {
        return (
            Outcome::NotMeasured,
            format!(
                "needs pselect at 0 and yield ({})",
                hints.word(Hint::Mechanisms("pselect,yield"))
            ),
        );
    };
    let overlap = p.net.overlaps(&y.net);
    let cheaper = if p.net.mean_ns < y.net.mean_ns {
        "pselect(0)"
    } else {
        "sched_yield"
    };
    let (wins, pairs) = paired_wins(p, y);
    let detail = format!(
        "pselect(0) {} vs sched_yield {}: {cheaper} is cheaper (ratio {:.3}), CIs {}; \
         pselect(0) was cheaper in {wins} of {pairs} repetitions",
        mean_ci(&p.net),
        mean_ci(&y.net),
        p.net.mean_ns / y.net.mean_ns,
        if overlap {
            "overlap (not significant)"
        } else {
            "do not overlap"
        }
    );
    let outcome = match (p.net.mean_ns < y.net.mean_ns, overlap) {
        (true, false) => Outcome::Confirmed,
        (true, true) => Outcome::Partly,
        (false, _) => Outcome::Refuted,
    };
    (outcome, detail)
}

/// In how many repetitions `a` cost less per call than `b` (raw per call; both cells'
/// floors are the same empty loop), and how many repetitions both have.
pub fn paired_wins(a: &ShortCell, b: &ShortCell) -> (usize, usize) {
    let mut wins = 0;
    let mut pairs = 0;
    for x in &a.batches {
        if let Some(y) = b.batches.iter().find(|y| y.repetition == x.repetition) {
            pairs += 1;
            let net_x = x.per_call_ns() - a.floor.median_ns;
            let net_y = y.per_call_ns() - b.floor.median_ns;
            wins += usize::from(net_x < net_y);
        }
    }
    (wins, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::short_cell as cell;

    #[test]
    fn zero_sleeps_split_by_kernel_entry() {
        let std0 = cell("std-sleep", 0, &[2.0, 3.0, 2.0, 3.0], 0.0);
        let ps0 = cell("pselect", 0, &[150.0, 160.0, 155.0, 152.0], 0.0);
        let ns0 = cell(
            "nanosleep",
            0,
            &[55_000.0, 56_000.0, 55_500.0, 55_200.0],
            1.0,
        );
        let sys = cell(SYSCALL, 0, &[90.0, 95.0, 92.0, 91.0], 0.0);
        let (o, d) = zero_without_kernel(&[&std0, &ps0, &ns0], Some(&sys), Wording::NAMES);
        assert_eq!(o, Outcome::Confirmed, "{d}");
        // Half the cheapest syscall repetition (90 ns) is the bar.
        assert!(d.contains("45 ns"), "{d}");
        assert!(d.contains("never enter the kernel"), "{d}");
        let never = d.split("never enter the kernel").nth(1).unwrap();
        let never = never.split(';').next().unwrap();
        assert!(
            never.contains("std-sleep") && !never.contains("pselect"),
            "{d}"
        );
        assert!(d.contains("or block: nanosleep"), "{d}");
        // The detail said the runtimes probes measure C++ sleep_for(0); the
        // survey never asks them for 0. It now says so and names the command that does.
        assert!(!d.contains("is measured by the runtimes probes"), "{d}");
        assert!(
            d.contains("is not measured by the survey") && d.contains("`CppZeroSleep` measures"),
            "{d}"
        );
        // Without std-sleep (and spin not counting), nothing qualifies.
        let spin0 = cell("spin", 0, &[20.0, 21.0, 20.0, 21.0], 0.0);
        let (o, _) = zero_without_kernel(&[&spin0, &ps0, &ns0], Some(&sys), Wording::NAMES);
        assert_eq!(o, Outcome::Refuted);
        assert_eq!(
            zero_without_kernel(&[], Some(&sys), Wording::NAMES).0,
            Outcome::NotMeasured
        );
    }

    #[test]
    fn nanosleep_zero_and_one() {
        let z = cell("nanosleep", 0, &[55_000.0, 56_000.0, 55_500.0], 1.0);
        let o = cell("nanosleep", 1, &[55_100.0, 56_200.0, 55_400.0], 1.0);
        assert_eq!(
            nanosleep_zero_vs_one(Some(&z), Some(&o), Wording::NAMES).0,
            Outcome::Confirmed
        );
        // 20 % apart with tight CIs: still sleeps, but cheaper.
        let z2 = cell("nanosleep", 0, &[44_000.0, 44_001.0, 44_002.0], 1.0);
        let o2 = cell("nanosleep", 1, &[55_000.0, 55_001.0, 55_002.0], 1.0);
        assert_eq!(
            nanosleep_zero_vs_one(Some(&z2), Some(&o2), Wording::NAMES).0,
            Outcome::Partly
        );
        // A nanosleep(0) that returns at once.
        let z3 = cell("nanosleep", 0, &[100.0, 101.0, 102.0], 0.0);
        assert_eq!(
            nanosleep_zero_vs_one(Some(&z3), Some(&o2), Wording::NAMES).0,
            Outcome::Refuted
        );
        assert_eq!(
            nanosleep_zero_vs_one(None, Some(&o2), Wording::NAMES).0,
            Outcome::NotMeasured
        );
    }

    #[test]
    fn timerfd_ratio() {
        let n = cell("nanosleep", 1, &[60_000.0, 61_000.0, 60_500.0], 1.0);
        let t = cell("timerfd", 1, &[5_000.0, 5_100.0, 5_050.0], 1.0);
        let (o, d) = timerfd_vs_nanosleep(Some(&n), &[&t], Wording::NAMES);
        assert_eq!(o, Outcome::Partly, "{d}");
        assert!(d.contains("12.0× sooner by mean"), "{d}");
        let fast = cell("timerfd", 1, &[500.0, 501.0, 502.0], 1.0);
        assert_eq!(
            timerfd_vs_nanosleep(Some(&n), &[&fast], Wording::NAMES).0,
            Outcome::Confirmed
        );
        let slow = cell("timerfd", 1, &[60_000.0, 61_000.0, 60_500.0], 1.0);
        assert_eq!(
            timerfd_vs_nanosleep(Some(&n), &[&slow], Wording::NAMES).0,
            Outcome::Refuted
        );
        assert_eq!(
            timerfd_vs_nanosleep(Some(&n), &[], Wording::NAMES).0,
            Outcome::NotMeasured
        );
        // The interval variant is listed, never judged.
        let interval = cell(INTERVAL, 1, &[3.0, 4.0, 3.5], 0.0);
        let (o, d) = timerfd_vs_nanosleep(Some(&n), &[&t, &interval], Wording::NAMES);
        assert_eq!(o, Outcome::Partly, "{d}");
        assert!(d.contains("not judged: timerfd-interval"), "{d}");
        assert_eq!(
            timerfd_vs_nanosleep(Some(&n), &[&interval], Wording::NAMES).0,
            Outcome::NotMeasured
        );
    }

    #[test]
    fn pselect_and_yield() {
        // n = 4, sd 0.408, t(0.999, 3) = 12.924: half widths 2.6 ns, far apart.
        let p = cell("pselect", 0, &[136.0, 136.5, 135.5, 136.0], 0.0);
        let y = cell("yield", 0, &[164.0, 164.5, 163.5, 164.0], 0.0);
        let (o, d) = pselect_vs_yield(Some(&p), Some(&y), Wording::NAMES);
        assert_eq!(o, Outcome::Confirmed);
        assert!(d.contains("cheaper in 4 of 4 repetitions"), "{d}");
        assert_eq!(paired_wins(&y, &p), (0, 4));
        assert_eq!(
            pselect_vs_yield(Some(&y), Some(&p), Wording::NAMES).0,
            Outcome::Refuted
        );
        let p2 = cell("pselect", 0, &[100.0, 200.0, 150.0], 0.0);
        let y2 = cell("yield", 0, &[110.0, 210.0, 160.0], 0.0);
        let (o, d) = pselect_vs_yield(Some(&p2), Some(&y2), Wording::NAMES);
        assert_eq!(o, Outcome::Partly);
        assert!(d.contains("overlap"), "{d}");
    }
}
