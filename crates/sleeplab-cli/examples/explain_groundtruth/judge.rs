//! The per-wake rule, two-sided: the cause's component holds between 90 % and 110 % of
//! the injected size (± an absolute floor for small sizes), and every other component
//! stays within its baseline, measured on the same run's uninjected wakes of the same
//! shape; a scenario's verdict (at least 95 % of its wakes pass, judged over blocks:
//! the wakes between two drains of the tracer share their moment, so the share's
//! interval is taken over blocks, never over pooled wakes), and the table that shows
//! them.

use crate::scenarios::{BLOCK_WAKES, Scenario, Scored};
use sleeplab_account::{Component, Parts};
use sleeplab_stats::{Ci, MIN_UNITS, ratio_ci, tail_quantile};

/// A wake passes when its component holds at least this share of the injected size…
pub const SHARE_OF_INJECTED: f64 = 0.9;
/// … and at most this share …
pub const MOST_OF_INJECTED: f64 = 1.1;
/// … each bound widened by this much, ns (a small injection's bounds would be tighter
/// than the stamps' and the kernel's own entry and return paths).
pub const INJECTED_FLOOR_NS: u64 = 2_000;
/// Every other component must stay at or under its baseline's p99 plus this, ns.
pub const BASELINE_FLOOR_NS: u64 = 10_000;
/// A scenario passes when at least this share of its wakes pass.
pub const SHARE_OF_WAKES: f64 = 0.95;
/// Failing wakes shown per scenario, with their split (the evidence to read).
const SHOWN_FAILURES: usize = 3;

/// The no-injection baseline of every component over a scenario's uninjected wakes,
/// ns: its p99 (nearest rank: below 100 wakes, about their largest), the bound for the
/// components the cause must leave alone; and its median, what the cause's own
/// component holds with nothing injected (a return path of its own, the kernel's clock
/// read after the caller's), taken off before the booked share is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Baseline {
    /// Per component ([`Component::index`]), the p99.
    pub p99: [u64; Component::COUNT],
    /// Per component, the median (lower middle).
    pub median: [u64; Component::COUNT],
}

impl Baseline {
    /// The baseline of `parts`, the uninjected wakes' splits (all zero for none).
    pub fn of<'a>(parts: impl IntoIterator<Item = &'a Parts>) -> Self {
        let parts: Vec<&Parts> = parts.into_iter().collect();
        let mut out = Self::default();
        for c in Component::ALL {
            let mut v: Vec<u64> = parts.iter().map(|p| p.get(c)).collect();
            v.sort_unstable();
            if !v.is_empty() {
                // Nearest rank: the ⌈q·n⌉-th smallest.
                let rank = |q: usize| (v.len() * q).div_ceil(100).max(1);
                out.p99[c.index()] = v[rank(99) - 1];
                out.median[c.index()] = v[rank(50) - 1];
            }
        }
        out
    }

    /// What the account booked to the injection in `c`: `got_ns` less `c`'s median
    /// with nothing injected.
    pub fn booked_ns(&self, c: Component, got_ns: u64) -> u64 {
        got_ns.saturating_sub(self.median[c.index()])
    }

    /// The most `c` may hold in an injected wake: its p99 plus [`BASELINE_FLOOR_NS`].
    pub fn bound(&self, c: Component) -> u64 {
        self.p99[c.index()] + BASELINE_FLOOR_NS
    }
}

/// How the injected size compares with what the account put in the cause's component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Booked {
    /// Within `[0.9·injected − floor, 1.1·injected + floor]`.
    Within,
    /// Under it.
    Under,
    /// Over it.
    Over,
    /// Not judged: the component is the same subtraction the injected size is
    /// (overrun: the wait's start less its deadline), so it cannot fail.
    Arithmetic,
}

/// Where `got_ns` lies against the injected `injected_ns` ([`Booked`]).
pub fn booked(got_ns: u64, injected_ns: u64) -> Booked {
    let (got, inj, floor) = (got_ns as f64, injected_ns as f64, INJECTED_FLOOR_NS as f64);
    if got < SHARE_OF_INJECTED * inj - floor {
        Booked::Under
    } else if got > MOST_OF_INJECTED * inj + floor {
        Booked::Over
    } else {
        Booked::Within
    }
}

/// One wake's verdict: how its cause's component was booked, and the other components
/// above their baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The cause's component against the injected size.
    pub booked: Booked,
    /// The other components above [`Baseline::bound`].
    pub above: Vec<Component>,
    /// Whether the holder asked for was named (true where none is asked for).
    pub holder: bool,
}

impl Verdict {
    /// The verdict on `s`, injected into `scenario`'s component, against `baseline`.
    pub fn of(s: &Scored, scenario: Scenario, baseline: &Baseline) -> Self {
        let c = scenario.component();
        Self {
            booked: if scenario.arithmetic() {
                Booked::Arithmetic
            } else {
                booked(baseline.booked_ns(c, s.got_ns(c)), s.injected_ns)
            },
            above: Component::ALL
                .into_iter()
                .filter(|&k| k != c && s.got_ns(k) > baseline.bound(k))
                .collect(),
            holder: s.holder_named != Some(false),
        }
    }

    /// Whether the wake passes: booked within bounds (or arithmetic), no other
    /// component above its baseline, the holder named where asked for.
    pub fn passes(&self) -> bool {
        matches!(self.booked, Booked::Within | Booked::Arithmetic)
            && self.above.is_empty()
            && self.holder
    }
}

/// The 95 % interval of the share `Σ passing / Σ wakes` over `blocks` (one (passing,
/// wakes) pair each), clamped to [0, 1]; `None` below [`MIN_UNITS`] blocks.
pub fn share_over_blocks(blocks: &[(usize, usize)]) -> Option<(f64, f64)> {
    let num: Vec<f64> = blocks.iter().map(|&(k, _)| k as f64).collect();
    let den: Vec<f64> = blocks.iter().map(|&(_, n)| n as f64).collect();
    match ratio_ci(&num, &den)? {
        Ci(Some(lo), Some(hi)) => Some((lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0))),
        _ => None,
    }
}

/// A cause's verdict over its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The share's interval lies at or above [`SHARE_OF_WAKES`].
    Met,
    /// It lies below.
    Missed,
    /// It straddles the target: the blocks differ too much to tell.
    Undecided,
    /// Fewer than [`MIN_UNITS`] blocks: no interval; whether the point share reached
    /// the target.
    ByPointValue(bool),
}

impl Outcome {
    /// The table's mark: a point value decides nothing, so below [`MIN_UNITS`] blocks
    /// the mark is "–" (the text beside it says the share, by point value).
    pub fn mark(self) -> &'static str {
        match self {
            Outcome::Met => "✅",
            Outcome::Missed => "❌",
            Outcome::Undecided => "⚪",
            Outcome::ByPointValue(_) => "–",
        }
    }
}

/// A scenario's outcome over its wakes.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was injected.
    pub label: String,
    /// The component it must land in.
    pub component: Component,
    /// Wakes measured.
    pub wakes: usize,
    /// Wakes that passed ([`Verdict::passes`]).
    pub passing: usize,
    /// Wakes whose component held less than the injected size allows.
    pub under: usize,
    /// Wakes whose component held more.
    pub over: usize,
    /// Wakes with another component above its baseline, and per component how many
    /// (most first).
    pub above: (usize, Vec<(Component, usize)>),
    /// Whether the component is the injected size's own subtraction (not judged).
    pub arithmetic: bool,
    /// Per block of [`BLOCK_WAKES`] consecutive wakes: (passing, wakes).
    pub blocks: Vec<(usize, usize)>,
    /// The injected size's median over the wakes, ns.
    pub injected_median_ns: Option<f64>,
    /// Wakes whose injected size, measured, came out under [`SHARE_OF_INJECTED`] of the
    /// nominal: the cause did not fully take (the FIFO thread's wakeup came late, the
    /// busy thread was preempted). Slack's size is the setting, never measured.
    pub cut_short: usize,
    /// The median of booked / injected over the wakes (booked: the component less its
    /// median over the uninjected wakes).
    pub ratio_median: Option<f64>,
    /// Wakes whose holder was the FIFO thread, of those that ask for it.
    pub holder_named: Option<(usize, usize)>,
    /// Wakes not fully traced (an event of their way missing).
    pub untraced: usize,
    /// Events the kernel could not record while the cause ran (full buffers).
    pub lost: u64,
    /// A few failing wakes: injected size and the account's non-zero components.
    pub failures: Vec<String>,
    /// The recorded events of each of those wakes, a line each.
    pub evidence: Vec<Vec<String>>,
    /// The baseline the wakes were judged against.
    pub baseline: Baseline,
}

impl Row {
    /// The outcome of `scenario` over `scored`, judged against `baseline` (the same
    /// run's uninjected wakes of its shape).
    pub fn of(scenario: Scenario, scored: &[Scored], baseline: &Baseline) -> Self {
        let c = scenario.component();
        let mut injected: Vec<u64> = scored.iter().map(|s| s.injected_ns).collect();
        injected.sort_unstable();
        let mut ratios: Vec<f64> = scored
            .iter()
            .filter(|s| s.injected_ns > 0)
            .map(|s| baseline.booked_ns(c, s.got_ns(c)) as f64 / s.injected_ns as f64)
            .collect();
        ratios.sort_by(f64::total_cmp);
        let asked: Vec<bool> = scored.iter().filter_map(|s| s.holder_named).collect();
        let verdicts: Vec<Verdict> = scored
            .iter()
            .map(|s| Verdict::of(s, scenario, baseline))
            .collect();
        let failing: Vec<(&Scored, &Verdict)> = scored
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| !v.passes())
            .take(SHOWN_FAILURES)
            .collect();
        let mut above: Vec<(Component, usize)> = Component::ALL
            .into_iter()
            .map(|k| (k, verdicts.iter().filter(|v| v.above.contains(&k)).count()))
            .filter(|&(_, n)| n > 0)
            .collect();
        above.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        let count = |b: Booked| verdicts.iter().filter(|v| v.booked == b).count();
        Self {
            label: scenario.label(),
            component: c,
            wakes: scored.len(),
            passing: verdicts.iter().filter(|v| v.passes()).count(),
            under: count(Booked::Under),
            over: count(Booked::Over),
            above: (
                verdicts.iter().filter(|v| !v.above.is_empty()).count(),
                above,
            ),
            arithmetic: scenario.arithmetic(),
            blocks: verdicts
                .chunks(BLOCK_WAKES)
                .map(|b| (b.iter().filter(|v| v.passes()).count(), b.len()))
                .collect(),
            injected_median_ns: tail_quantile(&injected, 0.5),
            cut_short: scored
                .iter()
                .filter(|s| (s.measured_ns as f64) < SHARE_OF_INJECTED * scenario.size_ns() as f64)
                .count(),
            ratio_median: median_f64(&ratios),
            holder_named: (!asked.is_empty())
                .then(|| (asked.iter().filter(|&&b| b).count(), asked.len())),
            untraced: scored.iter().filter(|s| !s.account.traced).count(),
            lost: 0,
            failures: failing.iter().map(|(s, v)| describe(s, v)).collect(),
            evidence: failing
                .iter()
                .map(|(s, _)| {
                    s.events
                        .iter()
                        .map(|e| crate::evidence::line(e, s.window.deadline_ns))
                        .collect()
                })
                .collect(),
            baseline: *baseline,
        }
    }

    /// Whether at least [`SHARE_OF_WAKES`] of the wakes passed (the point share: the
    /// root tests' rule, a fixed count on a fixed sample).
    pub fn passed(&self) -> bool {
        self.wakes > 0 && self.passing as f64 >= SHARE_OF_WAKES * self.wakes as f64
    }

    /// The verdict over blocks: the share's interval ([`share_over_blocks`]) against
    /// [`SHARE_OF_WAKES`]; by point value below [`MIN_UNITS`] blocks.
    pub fn outcome(&self) -> Outcome {
        match share_over_blocks(&self.blocks) {
            Some((lo, _)) if lo >= SHARE_OF_WAKES => Outcome::Met,
            Some((_, hi)) if hi < SHARE_OF_WAKES => Outcome::Missed,
            Some(_) => Outcome::Undecided,
            None => Outcome::ByPointValue(self.passed()),
        }
    }
}

/// The median of sorted `v` (the mean of the middle two for an even count).
pub fn median_f64(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// A failing wake in one line: what was injected, how late it was, where it went, and
/// why it failed.
fn describe(s: &Scored, v: &Verdict) -> String {
    let parts: Vec<String> = s
        .account
        .parts
        .nonzero()
        .map(|(c, ns)| format!("{} {}", c.name(), fmt_dur(ns as f64)))
        .collect();
    let holder = s.account.holder.as_ref().map_or(String::new(), |h| {
        format!("; holder {} ({})", h.comm, h.pid)
    });
    let mut why: Vec<String> = Vec::new();
    match v.booked {
        Booked::Under => why.push("under-booked".into()),
        Booked::Over => why.push("over-booked".into()),
        Booked::Within | Booked::Arithmetic => {}
    }
    if !v.above.is_empty() {
        let names: Vec<&str> = v.above.iter().map(|c| c.name()).collect();
        why.push(format!("above baseline: {}", names.join(", ")));
    }
    if !v.holder {
        why.push("holder not named".into());
    }
    format!(
        "injected {}, late {}: {}{holder}{} [{}]",
        fmt_dur(s.injected_ns as f64),
        fmt_dur(s.account.lateness_ns as f64),
        if parts.is_empty() {
            "nothing".into()
        } else {
            parts.join(", ")
        },
        if s.account.traced {
            ""
        } else {
            " (not fully traced)"
        },
        why.join("; "),
    )
}

/// An interval in prose style (`[2.1–6 µs]`, `[≥ 2.1 µs]`, `[–]`).
pub use sleeplab_stats::interval_text as fmt_ci;
/// A duration in prose style (`60.2 µs`, `1.06 ms`; "–" for none).
pub use sleeplab_stats::units::ns as fmt_dur;

/// The Markdown table of `rows`, then the failing wakes' evidence.
pub fn table(rows: &[Row]) -> Vec<String> {
    let mut out = vec![
        format!(
            "A wake passes when its cause's component, less its median over the uninjected \
             wakes (what it holds with nothing injected), holds between {:.0} % and {:.0} % \
             of the size injected into it, each bound widened by {} (booked under or over: \
             \"under / over\"), and every other component stays at or under its \
             baseline: its p99 over the same run's uninjected wakes of the same shape \
             (interleaved wake by wake with the injected ones; nearest rank, so about the \
             largest below 100 wakes) plus {} (\"others above\"); for the run queue the \
             account must also name the SCHED_FIFO thread as the holder. Overrun is the \
             wait's start less its deadline, the very subtraction that injects it: its own \
             share is arithmetic, not judged, and only its other components are. A cause \
             passes when at least {:.0} % of its wakes pass, judged over blocks of \
             {BLOCK_WAKES} consecutive wakes (the wakes of a block share its moment): ✅ \
             when the share's 95 % interval over blocks lies at or above it, ❌ below, ⚪ \
             undecided; with fewer than {MIN_UNITS} blocks there is no interval and no \
             verdict (–, the share by point value beside it). The injected size is the \
             setting for the slack, and measured per wake for the rest (the FIFO thread's \
             own clock, the busy thread's CPU time), less the same measure's median over \
             the uninjected wakes (the clock reads around the stretch cost time in both, \
             and the component is judged less its uninjected median too); \"cut short\" \
             counts the wakes where a measured size came out under {:.0} % of the nominal.",
            100.0 * SHARE_OF_INJECTED,
            100.0 * MOST_OF_INJECTED,
            fmt_dur(INJECTED_FLOOR_NS as f64),
            fmt_dur(BASELINE_FLOOR_NS as f64),
            100.0 * SHARE_OF_WAKES,
            100.0 * SHARE_OF_INJECTED,
        ),
        String::new(),
        "| cause | component | injected (median) | cut short | wakes | passing [95 % over blocks] | \
         booked / injected (median) | under / over | others above (most often) | \
         holder named | not fully traced |"
            .into(),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|".into(),
    ];
    for r in rows {
        let share = if r.wakes == 0 {
            "–".into()
        } else {
            let interval = share_over_blocks(&r.blocks).map_or_else(
                || {
                    format!(
                        "by point value: {} blocks, fewer than {MIN_UNITS}",
                        r.blocks.len()
                    )
                },
                |(lo, hi)| format!("{:.1} – {:.1} %", 100.0 * lo, 100.0 * hi),
            );
            format!(
                "{} {} of {} ({:.1} %) [{interval}]",
                r.outcome().mark(),
                r.passing,
                r.wakes,
                100.0 * r.passing as f64 / r.wakes as f64,
            )
        };
        let above = match r.above.1.first() {
            None => "0".to_string(),
            Some(&(c, n)) => format!(
                "{} ({} {n}, baseline {})",
                r.above.0,
                c.name(),
                fmt_dur(r.baseline.p99[c.index()] as f64)
            ),
        };
        let (component, under_over) = if r.arithmetic {
            (
                format!("{} (arithmetic)", r.component.name()),
                "–".to_string(),
            )
        } else {
            (
                r.component.name().to_string(),
                format!("{} / {}", r.under, r.over),
            )
        };
        out.push(format!(
            "| {} | {component} | {} | {} | {} | {share} | {} | {under_over} | {above} | {} | {} |",
            r.label,
            fmt_dur(r.injected_median_ns),
            r.cut_short,
            r.wakes,
            r.ratio_median.map_or("–".into(), |v| format!("{v:.3}")),
            r.holder_named
                .map_or("–".into(), |(k, n)| format!("{k} of {n}")),
            r.untraced,
        ));
    }
    let lost: Vec<String> = rows
        .iter()
        .filter(|r| r.lost > 0)
        .map(|r| format!("{} ({})", r.lost, r.label))
        .collect();
    if !lost.is_empty() {
        out.push(String::new());
        out.push(format!(
            "Events the kernel lost (full buffers): {}.",
            lost.join(", ")
        ));
    }
    let failing: Vec<&Row> = rows.iter().filter(|r| !r.failures.is_empty()).collect();
    if !failing.is_empty() {
        out.push(String::new());
        out.push(format!(
            "Failing wakes (the first {SHOWN_FAILURES} of each cause), as the account split them:"
        ));
        out.push(String::new());
        for r in failing {
            for f in &r.failures {
                out.push(format!("- {}: {f}", r.label));
            }
        }
    }
    out
}
