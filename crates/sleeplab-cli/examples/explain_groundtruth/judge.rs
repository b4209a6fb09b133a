//! The per-wake rule (the component holds at least 90 % of the injected size), a
//! scenario's verdict (at least 95 % of its wakes pass, judged over blocks: the wakes
//! between two drains of the tracer share their moment, so the share's interval is taken
//! over blocks, never over pooled wakes), and the table that shows them.

use crate::scenarios::{BLOCK_WAKES, Scenario, Scored};
use sleeplab_cli::stats::units::{MIN_UNITS, ratio_ci};
use sleeplab_cli::stats::{Ci, tail_quantile};
use sleeplab_cli::trace::Component;

/// A wake passes when its component holds at least this share of the injected size.
pub const SHARE_OF_INJECTED: f64 = 0.9;
/// A scenario passes when at least this share of its wakes pass.
pub const SHARE_OF_WAKES: f64 = 0.95;
/// Failing wakes shown per scenario, with their split (the evidence to read).
const SHOWN_FAILURES: usize = 3;

/// Whether one wake passes: its component holds at least [`SHARE_OF_INJECTED`] of the
/// injected size, and where a holder is asked for, the account named it.
pub fn passes(s: &Scored, c: Component) -> bool {
    s.got_ns(c) as f64 >= SHARE_OF_INJECTED * s.injected_ns as f64 && s.holder_named != Some(false)
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
    /// Wakes that passed [`passes`].
    pub passing: usize,
    /// Per block of [`BLOCK_WAKES`] consecutive wakes: (passing, wakes).
    pub blocks: Vec<(usize, usize)>,
    /// The injected size's median over the wakes, ns.
    pub injected_median_ns: Option<f64>,
    /// Wakes whose injected size came out under [`SHARE_OF_INJECTED`] of the nominal:
    /// the cause did not fully take (another timer's interrupt ended a slack early, the
    /// FIFO thread's wakeup came late).
    pub cut_short: usize,
    /// The median of component / injected over the wakes.
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
}

impl Row {
    /// The outcome of `scenario` over `scored`.
    pub fn of(scenario: Scenario, scored: &[Scored]) -> Self {
        let c = scenario.component();
        let mut injected: Vec<u64> = scored.iter().map(|s| s.injected_ns).collect();
        injected.sort_unstable();
        let mut ratios: Vec<f64> = scored
            .iter()
            .filter(|s| s.injected_ns > 0)
            .map(|s| s.got_ns(c) as f64 / s.injected_ns as f64)
            .collect();
        ratios.sort_by(f64::total_cmp);
        let asked: Vec<bool> = scored.iter().filter_map(|s| s.holder_named).collect();
        let failing: Vec<&Scored> = scored
            .iter()
            .filter(|s| !passes(s, c))
            .take(SHOWN_FAILURES)
            .collect();
        Self {
            label: scenario.label(),
            component: c,
            wakes: scored.len(),
            passing: scored.iter().filter(|s| passes(s, c)).count(),
            blocks: scored
                .chunks(BLOCK_WAKES)
                .map(|b| (b.iter().filter(|s| passes(s, c)).count(), b.len()))
                .collect(),
            injected_median_ns: tail_quantile(&injected, 0.5),
            cut_short: scored
                .iter()
                .filter(|s| (s.injected_ns as f64) < SHARE_OF_INJECTED * scenario.size_ns() as f64)
                .count(),
            ratio_median: median_f64(&ratios),
            holder_named: (!asked.is_empty())
                .then(|| (asked.iter().filter(|&&b| b).count(), asked.len())),
            untraced: scored.iter().filter(|s| !s.account.traced).count(),
            lost: 0,
            failures: failing.iter().map(|s| describe(s)).collect(),
            evidence: failing
                .iter()
                .map(|s| {
                    s.events
                        .iter()
                        .map(|e| crate::evidence::line(e, s.window.deadline_ns))
                        .collect()
                })
                .collect(),
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

/// A failing wake in one line: what was injected, how late it was, where it went.
fn describe(s: &Scored) -> String {
    let parts: Vec<String> = s
        .account
        .parts
        .nonzero()
        .map(|(c, ns)| format!("{} {}", c.name(), fmt_dur(ns as f64)))
        .collect();
    let holder = s.account.holder.as_ref().map_or(String::new(), |h| {
        format!("; holder {} ({})", h.comm, h.pid)
    });
    format!(
        "injected {}, late {}: {}{holder}{}",
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
    )
}

/// An interval in prose style (`[2.1–6 µs]`, `[≥ 2.1 µs]`, `[–]`).
pub use sleeplab_cli::claim::interval_text as fmt_ci;
/// A duration in prose style (`60.2 µs`, `1.06 ms`; "–" for none).
pub use sleeplab_cli::output::units::ns as fmt_dur;

/// The Markdown table of `rows`, then the failing wakes' evidence.
pub fn table(rows: &[Row]) -> Vec<String> {
    let mut out = vec![
        format!(
            "A wake passes when its component holds at least {:.0} % of the size injected \
             into it (and, for the run queue, the account names the SCHED_FIFO thread as \
             the holder); a cause passes when at least {:.0} % of its wakes pass, judged \
             over blocks of {BLOCK_WAKES} consecutive wakes (the wakes of a block share its \
             moment): ✅ when the share's 95 % interval over blocks lies at or above it, ❌ \
             below, ⚪ undecided; with fewer than {MIN_UNITS} blocks there is no interval and no \
             verdict (–, the share by point value beside it). The injected size is \
             measured per wake where it can be; \"cut short\" counts the wakes where it came \
             out under {:.0} % of the nominal size (another timer's interrupt ended a slack \
             early, the FIFO thread's wakeup came late).",
            100.0 * SHARE_OF_INJECTED,
            100.0 * SHARE_OF_WAKES,
            100.0 * SHARE_OF_INJECTED,
        ),
        String::new(),
        "| cause | component | injected (median) | cut short | wakes | passing [95 % over blocks] | \
         component / injected (median) | holder named | not fully traced |"
            .into(),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|".into(),
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
        out.push(format!(
            "| {} | {} | {} | {} | {} | {share} | {} | {} | {} |",
            r.label,
            r.component.name(),
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
