//! `tune`'s terminal tables and its CSV.

use super::{TuneData, Verdict, sentence};
use serde::Serialize;
use sleeplab_stats::{
    Ci, csv_bytes, fmt_ns, interval_text, min_samples, new_table, rank_from_top, units::ns,
    units::signed_ns,
};
use std::fmt::Write;

fn cpus(v: f64) -> String {
    format!("{v:+.2}")
}

/// ` (polling 0.97)`: the part of an arm's CPUs idle CPUs spent polling, where it shows
/// at the table's precision; nothing otherwise.
fn polling(poll_cpus: Option<f64>) -> String {
    match poll_cpus {
        Some(p) if p >= 0.005 => format!(" (polling {p:.2})"),
        _ => String::new(),
    }
}

fn quantile(v: Option<f64>, n: u64, q: f64) -> String {
    match v {
        Some(v) if n >= min_samples(q) => ns(v),
        _ => format!("– (n = {n})"),
    }
}

/// What a round's p99 is where few waits make it nearly the round's largest: the paired
/// p99 changes rest on each round's own p99, so the note states its n per wait and where
/// it sits (the quantile rule admits a p99 from 100 waits, where it is about the 2nd
/// largest); `None` where no round resolves a p99 or every round holds 1000 waits or more.
pub fn round_p99_note(data: &TuneData) -> Option<String> {
    let base = data.as_is()?;
    let rounds = base.rounds.max(1);
    let parts: Vec<String> = base
        .cells
        .iter()
        .filter(|c| c.round_p99_ns.iter().any(Option::is_some))
        .map(|c| (c, c.waits / rounds))
        .filter(|(_, n)| (min_samples(0.99)..1000).contains(n))
        .map(|(c, n)| {
            let k = rank_from_top(n, 0.99);
            format!(
                "{} {}: {n} waits a round, its p99 about the round's {k}{} largest",
                c.mechanism,
                fmt_ns(c.requested_ns),
                match k % 10 {
                    1 if k % 100 != 11 => "st",
                    2 if k % 100 != 12 => "nd",
                    3 if k % 100 != 13 => "rd",
                    _ => "th",
                }
            )
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "the paired p99 changes rest on each round's own p99, of few waits: {}",
            parts.join("; ")
        )
    })
}

/// The tables: per setting and cell, p50 and p99 with the p99's interval over rounds,
/// the p99's change against as is with its interval and the verdict, and the whole
/// machine's CPU; then how to keep what helped, and the settings not tried.
pub fn render(data: &TuneData) -> String {
    let mut out = String::new();
    let mut t = new_table([
        "setting",
        "wait",
        "p50",
        "p99 [95 % over rounds]",
        "Δ p99 vs as is",
        "verdict",
        "machine CPUs",
        "Δ CPUs",
    ]);
    // A row is a (setting, wait): both lead each part of a split table.
    t.set_keys(2);
    for arm in &data.arms {
        if let Some(e) = &arm.error {
            t.add_row(vec![arm.setting.name.clone(), format!("not applied: {e}")]);
            continue;
        }
        for (i, c) in arm.cells.iter().enumerate() {
            let first = i == 0;
            t.add_row(vec![
                if first {
                    arm.setting.name.clone()
                } else {
                    String::new()
                },
                format!("{} {}", c.mechanism, fmt_ns(c.requested_ns)),
                quantile(c.p50_ns, c.waits, 0.5),
                format!(
                    "{} {}",
                    quantile(c.p99_ns, c.waits, 0.99),
                    interval_text(c.units.as_ref().and_then(|u| u.p99_ci_ns), ns)
                ),
                match c.p99_change_ns {
                    Some(d) => format!(
                        "{} {}",
                        signed_ns(d),
                        interval_text(c.p99_change_ci_ns, signed_ns)
                    ),
                    None => String::new(),
                },
                c.verdict.map_or(String::new(), |v| v.word().to_string()),
                if first {
                    arm.cpus.map_or("–".into(), |v| {
                        format!(
                            "{v:.2} {}{}",
                            interval_text(arm.cpus_ci, |x| format!("{x:.2}")),
                            polling(arm.poll_cpus)
                        )
                    })
                } else {
                    String::new()
                },
                if first {
                    arm.cpus_change.map_or(String::new(), |v| {
                        format!("{} {}", cpus(v), interval_text(arm.cpus_change_ci, cpus))
                    })
                } else {
                    String::new()
                },
            ]);
        }
    }
    let _ = writeln!(out, "{t}");
    if let Some(note) = round_p99_note(data) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(
        out,
        "lateness = elapsed − requested; {} rounds, each setting in turn and undone after it; verdicts on the p99's change, paired over rounds where every round resolves it, else the arms' intervals (no effect: the change within {}); machine CPUs: all CPUs busy (/proc/stat) plus idle CPUs polling (cpuidle's POLL state: the CPU executes instructions, though /proc/stat books it as idle; in parentheses where there was any), the host's halt polling not included (invisible here)",
        data.rounds,
        sentence::margin_text()
    );
    // What to keep: a setting that lowered some p99 and raised none (one that raised
    // any stands in the table with its verdicts, not here).
    let helped: Vec<_> = data
        .arms
        .iter()
        .filter(|a| a.counts().0 > 0 && a.counts().1 == 0)
        .collect();
    if !helped.is_empty() {
        let _ = writeln!(out, "\nto keep what helped:");
        for a in helped {
            let (h, x, _) = a.counts();
            let _ = writeln!(
                out,
                "  {} (helps {h}, hurts {x} of {} waits): {}\n      {}",
                a.setting.name,
                a.cells.len(),
                a.setting.what,
                a.setting.how
            );
        }
    }
    for s in sentence::sentences(data)
        .iter()
        .filter(|s| !s.text.contains("indistinguishable"))
    {
        let _ = writeln!(out, "  · {}", s.text);
    }
    let (host, boot): (Vec<_>, Vec<_>) = data.boot.iter().partition(|b| b.of_host);
    for (list, head) in [
        (boot, "boot-time settings (reported, never changed):"),
        (
            host,
            "the host's settings (not this machine's: they act on a host's guests; reported, never changed):",
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{head}");
        for b in list {
            let _ = writeln!(
                out,
                "  {:<18} now: {}\n  {:<18} {}; to try: {}",
                b.name, b.now, "", b.what, b.how
            );
        }
    }
    if !data.unavailable.is_empty() {
        let _ = writeln!(out, "\nnot tried here:");
        for u in &data.unavailable {
            let _ = writeln!(out, "  {} ({}): {}", u.name, u.scope.name(), u.reason);
        }
    }
    out
}

#[derive(Serialize)]
struct Row<'a> {
    setting: &'a str,
    scope: &'a str,
    mechanism: &'a str,
    requested_ns: u64,
    waits: u64,
    p50_ns: Option<f64>,
    p99_ns: Option<f64>,
    p99_low_ns: Option<f64>,
    p99_high_ns: Option<f64>,
    p99_change_ns: Option<f64>,
    p99_change_low_ns: Option<f64>,
    p99_change_high_ns: Option<f64>,
    verdict: &'a str,
    cpus: Option<f64>,
    poll_cpus: Option<f64>,
    cpus_change: Option<f64>,
    cpus_change_low: Option<f64>,
    cpus_change_high: Option<f64>,
}

fn ends(ci: Option<Ci>) -> (Option<f64>, Option<f64>) {
    ci.map_or((None, None), |c| (c.0, c.1))
}

/// One row per setting and wait (a setting that could not be applied: none).
pub fn csv(data: &TuneData) -> anyhow::Result<Vec<u8>> {
    let rows = data.arms.iter().flat_map(|a| {
        a.cells.iter().map(move |c| {
            let (pl, ph) = ends(c.units.as_ref().and_then(|u| u.p99_ci_ns));
            let (dl, dh) = ends(c.p99_change_ci_ns);
            let (cl, ch) = ends(a.cpus_change_ci);
            Row {
                setting: &a.setting.name,
                scope: a.setting.scope.name(),
                mechanism: &c.mechanism,
                requested_ns: c.requested_ns,
                waits: c.waits,
                p50_ns: c.p50_ns,
                p99_ns: c.p99_ns,
                p99_low_ns: pl,
                p99_high_ns: ph,
                p99_change_ns: c.p99_change_ns,
                p99_change_low_ns: dl,
                p99_change_high_ns: dh,
                verdict: match c.verdict {
                    None => "",
                    Some(Verdict::Helps) => "helps",
                    Some(Verdict::Hurts) => "hurts",
                    Some(Verdict::NoEffect) => "no_effect",
                    Some(Verdict::Undecided) => "undecided",
                },
                cpus: a.cpus,
                poll_cpus: a.poll_cpus,
                cpus_change: a.cpus_change,
                cpus_change_low: cl,
                cpus_change_high: ch,
            }
        })
    });
    csv_bytes(None, rows)
}
