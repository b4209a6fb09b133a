//! The language runtimes' plain sleeps: which round short waits up to a millisecond
//! (always, or only sometimes), and each one's floor.

use super::{Finding, Results, and_list, n_clause, quote, small_n};
use sleeplab_results::protocol::Kind;
use sleeplab_results::runtimes::{
    MethodResult, MethodStatus, OneshotCell, RuntimeResult, RuntimeStatus, RuntimesData,
};
use sleeplab_stats::{Claim, Sentence, Stat, units::ns};

/// Whether a probe method calls sleeplab itself (its name starts with `sleeplab`): never
/// a language's plain sleep.
pub fn is_sleeplab(method: &str) -> bool {
    method.starts_with("sleeplab")
}

/// A runtime's main sleep: its first measured one-shot method (the probes list the
/// language's plain sleep first: nanosleep, sleep_for, time.Sleep, time.sleep…), never
/// one of sleeplab's own (`sleeplab_sleep_ns`, `sleeplab.sleep`).
pub fn main_sleep(r: &RuntimeResult) -> Option<&MethodResult> {
    r.methods.iter().find(|m| {
        m.kind == Kind::Oneshot
            && m.status == MethodStatus::Measured
            && !is_sleeplab(&m.method)
            && m.cells.iter().any(|c| c.summary.count > 0)
    })
}

/// The measured runtimes with their main sleep, at the lowest load and first slack.
pub fn measured(d: &RuntimesData) -> Vec<(&RuntimeResult, &MethodResult)> {
    d.runtimes
        .iter()
        .filter(|r| r.status == RuntimeStatus::Measured)
        .filter_map(|r| main_sleep(r).map(|m| (r, m)))
        .collect()
}

/// The smallest request a cell was measured at, with the cell.
pub fn smallest(m: &MethodResult) -> Option<&OneshotCell> {
    m.cells
        .iter()
        .filter(|c| c.requested_ns > 0 && c.summary.count > 0)
        .min_by_key(|c| c.requested_ns)
}

/// A request below this is "short"; a call of this or more took "a millisecond".
const MS_NS: f64 = 500_000.0;

/// How a runtime's plain sleep treats short requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Short {
    /// Every call of every short request took 0.5 ms or more.
    Rounded,
    /// Some calls took 0.5 ms or more and others less.
    Bimodal,
    /// Every call took less than 0.5 ms.
    Fine,
}

/// The cells of short requests whose median call slept: a cell whose median is below its
/// request is a rounding down, reported as "returned before the requested time", never
/// also as rounded up or bimodal.
fn short_cells(m: &MethodResult) -> Vec<&OneshotCell> {
    let mut v: Vec<&OneshotCell> = m
        .cells
        .iter()
        .filter(|c| {
            c.requested_ns > 0
                && (c.requested_ns as f64) < MS_NS
                && c.summary.count > 0
                && c.summary.median_ns >= c.requested_ns as f64
        })
        .collect();
    v.sort_by_key(|c| c.requested_ns);
    v
}

fn classify(cells: &[&OneshotCell]) -> Option<Short> {
    if cells.is_empty() {
        return None;
    }
    let all_ms = cells.iter().all(|c| c.summary.min_ns as f64 >= MS_NS);
    let none_ms = cells.iter().all(|c| (c.summary.max_ns as f64) < MS_NS);
    Some(if all_ms {
        Short::Rounded
    } else if none_ms {
        Short::Fine
    } else {
        Short::Bimodal
    })
}

fn name(rt: &RuntimeResult, m: &MethodResult) -> String {
    format!("{}'s {}", rt.title, m.method)
}

/// "Go's time.Sleep rounds short waits up to ~1 ms here" (every call of every request
/// under 0.5 ms took 0.5 ms or more), or "… is bimodal" (some did, some did not), and
/// every runtime's floor: the median of its smallest request. A plain sleep whose median
/// is below its request returned early in most calls; one that returned early only
/// sometimes is counted. A cause is given only where the probe noted one.
pub fn runtime_floors(r: &Results<'_>) -> Option<Finding> {
    let (_, d) = r.runtimes()?;
    let mains = measured(d);
    let mut s = Sentence::default();
    let line = ns(MS_NS);
    let mut rounded = Vec::new();
    let mut bimodal = Vec::new();
    for (rt, m) in &mains {
        let cells = short_cells(m);
        match classify(&cells) {
            Some(Short::Rounded) => {
                let c = cells[0];
                let v = quote(&mut s, &c.summary, Stat::Median)?;
                let why = m
                    .notes
                    .iter()
                    .chain(c.notes.iter())
                    .find(|n| n.contains("raised to") || n.contains("rounds"))
                    .map(|n| format!("; the probe notes: {n}"))
                    .unwrap_or_default();
                rounded.push(format!(
                    "{}: {} took a median {v}{}{why}",
                    name(rt, m),
                    ns(c.requested_ns as f64),
                    small_n(c.summary.count)
                ));
            }
            Some(Short::Bimodal) => {
                let parts: Vec<String> = cells
                    .iter()
                    .map(|c| {
                        let v = quote(&mut s, &c.summary, Stat::Median).unwrap_or_default();
                        format!(
                            "{}: median {v}, fastest {}, slowest {}{}",
                            ns(c.requested_ns as f64),
                            ns(c.summary.min_ns as f64),
                            ns(c.summary.max_ns as f64),
                            small_n(c.summary.count)
                        )
                    })
                    .collect();
                bimodal.push(format!("{} ({})", name(rt, m), parts.join("; ")));
            }
            _ => {}
        }
    }
    if !rounded.is_empty() || !bimodal.is_empty() {
        s.claim(Claim::Threshold {
            shown: line.clone(),
        });
    }
    if !rounded.is_empty() {
        s.push(&format!(
            "{} short waits up to ~1 ms here: every call under {line} took {line} or more ({}). ",
            if rounded.len() == 1 {
                "One runtime rounds"
            } else {
                "These runtimes round"
            },
            rounded.join("; ")
        ));
    }
    if !bimodal.is_empty() {
        s.push(&format!(
            "{} bimodal for requests under {line}: some calls return in microseconds, others only after {line} or more — {}. ",
            if bimodal.len() == 1 { "One runtime's sleep is" } else { "These runtimes' sleeps are" },
            bimodal.join("; ")
        ));
    }
    // The floors: every main sleep at the smallest request any of them was measured at.
    let mut floors: Vec<(String, &OneshotCell, &MethodResult)> = mains
        .iter()
        .filter_map(|(rt, m)| smallest(m).map(|c| (name(rt, m), c, *m)))
        .collect();
    let req = floors.iter().map(|f| f.1.requested_ns).min()?;
    floors.retain(|f| f.1.requested_ns == req);
    floors.sort_by(|a, b| a.1.summary.median_ns.total_cmp(&b.1.summary.median_ns));
    let (early, slept): (Vec<_>, Vec<_>) = floors
        .iter()
        .partition(|f| f.1.summary.median_ns < req as f64);
    if slept.is_empty() && early.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    for (n, c, _) in &slept {
        let v = quote(&mut s, &c.summary, Stat::Median)?;
        list.push(format!("{n} {v}{}", small_n(c.summary.count)));
    }
    if !list.is_empty() {
        s.push(&format!(
            "Asked to sleep {}, the plain sleeps took a median: {}.",
            ns(req as f64),
            list.join(", ")
        ));
    }
    if !early.is_empty() {
        let parts: Vec<String> = early
            .iter()
            .map(|(n, c, m)| {
                let v = quote(&mut s, &c.summary, Stat::Median).unwrap_or_default();
                let why = c
                    .notes
                    .iter()
                    .chain(m.notes.iter())
                    .next()
                    .map(|x| format!("; the probe notes: {x}"))
                    .unwrap_or_default();
                format!(
                    "{n} (median {v}, {} of {} calls early{}{why})",
                    c.summary.early_count,
                    c.summary.count,
                    n_clause(c.summary.count)
                )
            })
            .collect();
        s.push(&format!(
            " {} returned before the requested time in most calls: {}.",
            if early.len() == 1 { "One" } else { "These" },
            parts.join("; ")
        ));
    }
    let sometimes: Vec<String> = slept
        .iter()
        .filter(|f| f.1.summary.early_count > 0)
        .map(|(n, c, _)| {
            format!(
                "{n} ({} of {} calls, the fastest {})",
                c.summary.early_count,
                c.summary.count,
                ns(c.summary.min_ns as f64)
            )
        })
        .collect();
    if !sometimes.is_empty() {
        s.push(&format!(
            " Some calls returned before the requested time in {}; the median call slept.",
            and_list(&sometimes)
        ));
    }
    s.text = s.text.trim().to_string();
    Some(Finding::new("runtime-floors", s))
}
