//! Plain-language findings computed from the measured data, each with its number.
//!
//! Every finding is a pure function of the results ([`Results`]) that returns `None`
//! when the data it needs is absent, so a report of one experiment shows the findings
//! that experiment supports and a survey shows them all. They are printed at the end of
//! the survey and at the top of the report.

use super::units::{ns, pct};
use super::view::{MainSweep, Results};
use crate::experiments::sweep::SweepCell;
use sleeplab::wait::{self, Family};

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// A stable name, e.g. `timer-slack` (tests and the docs refer to it).
    pub id: &'static str,
    /// The sentence, with its numbers.
    pub text: String,
}

impl Finding {
    fn new(id: &'static str, text: String) -> Self {
        Self { id, text }
    }
}

/// Every finding the results support, most useful first.
pub fn findings(r: &Results<'_>) -> Vec<Finding> {
    let all: [fn(&Results<'_>) -> Option<Finding>; 10] = [
        cheapest_short_sleep,
        timer_slack,
        poll_rounding,
        pace_loop,
        runtime_floors,
        load_effect,
        long_sleeps,
        spin_cost,
        early_wakeups,
        first_calls,
    ];
    all.iter().filter_map(|f| f(r)).collect()
}

/// The family of a mechanism by name (from the library's table; `None` if unknown).
fn family(name: &str) -> Option<Family> {
    wait::find(name).map(|m| m.family)
}

/// Whether a mechanism really sleeps (not spin or yield).
fn sleeps(name: &str) -> bool {
    !matches!(family(name), Some(Family::Busy) | None)
}

/// Mechanisms that are "a sleep call", in order of preference for examples.
const SLEEP_CALLS: [&str; 4] = [
    "nanosleep",
    "clock-nanosleep",
    "std-sleep",
    "clock-nanosleep-abs",
];

/// The first of [`SLEEP_CALLS`] the main sweep measured.
fn sleep_call<'a>(m: &MainSweep<'a>) -> Option<&'a str> {
    let mechs = m.mechanisms();
    SLEEP_CALLS
        .iter()
        .find_map(|s| mechs.iter().copied().find(|m| m == s))
}

/// The smallest non-zero request below 10 µs measured at load 0 (normally 1 µs).
fn short_request(m: &MainSweep<'_>) -> Option<u64> {
    m.requests().into_iter().find(|&d| d > 0 && d < 10_000)
}

/// "The cheapest short sleep here is timerfd: median X for 1 µs." Cells where some call
/// returned early (a periodic timer's expiry) are not sleeps and are not compared.
pub fn cheapest_short_sleep(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let d = short_request(&m)?;
    let cells: Vec<&SweepCell> = m
        .cells()
        .filter(|c| {
            c.load == 0
                && c.requested_ns == d
                && sleeps(&c.mechanism)
                && c.summary.count > 0
                && c.summary.early_count == 0
        })
        .collect();
    let best = cells
        .iter()
        .min_by(|a, b| a.summary.median_ns.total_cmp(&b.summary.median_ns))?;
    let mut text = format!(
        "The cheapest short sleep here is {}: asking for {} took a median {}",
        best.mechanism,
        ns(d as f64),
        ns(best.summary.median_ns)
    );
    if let Some(nano) = sleep_call(&m)
        .filter(|n| *n != best.mechanism)
        .and_then(|n| m.cell(n, d, 0))
    {
        text.push_str(&format!(
            " ({} took {}).",
            nano.mechanism,
            ns(nano.summary.median_ns)
        ));
    } else {
        text.push('.');
    }
    if let Some(spin) = m.cell("spin", d, 0) {
        text.push_str(&format!(
            " Only spinning comes closer ({}), at the price of a busy core.",
            ns(spin.summary.median_ns)
        ));
    }
    Some(Finding::new("cheapest-short-sleep", text))
}

/// "Timer slack adds ~X µs to every sleep here."
pub fn timer_slack(r: &Results<'_>) -> Option<Finding> {
    let s = r.slack_sweep()?;
    let pairs: Vec<_> = s
        .pairs()
        .into_iter()
        .filter(|(h, _)| h.load == 0 && (1_000..=100_000).contains(&h.requested_ns))
        .collect();
    let sleep_pairs: Vec<_> = pairs
        .iter()
        .filter(|(h, _)| SLEEP_CALLS.contains(&h.mechanism.as_str()))
        .copied()
        .collect();
    let used = if sleep_pairs.is_empty() {
        pairs
    } else {
        sleep_pairs
    };
    let mut diffs: Vec<f64> = used
        .iter()
        .map(|(h, l)| h.summary.median_ns - l.summary.median_ns)
        .collect();
    if diffs.is_empty() {
        return None;
    }
    diffs.sort_by(f64::total_cmp);
    let added = diffs[diffs.len() / 2];
    // An example: the 10 µs (or first) pair of the first sleep call.
    let example = used
        .iter()
        .find(|(h, _)| h.requested_ns == 10_000)
        .or_else(|| used.first())?;
    let (h, l) = example;
    let text = if added >= 2_000.0 {
        format!(
            "Timer slack adds ~{} to every short sleep here: sleeps of 1–100 µs took a median {} longer at the default {} slack than at {} ({} {}: {} vs {}). Set PR_SET_TIMERSLACK to 1 ns (or use a real-time policy) where it matters.",
            ns(added),
            ns(added),
            ns(s.high as f64),
            ns(s.low as f64),
            h.mechanism,
            ns(h.requested_ns as f64),
            ns(h.summary.median_ns),
            ns(l.summary.median_ns)
        )
    } else {
        format!(
            "Timer slack hardly matters here: sleeps of 1–100 µs took a median {} longer at {} slack than at {} ({} {}: {} vs {}).",
            ns(added),
            ns(s.high as f64),
            ns(s.low as f64),
            h.mechanism,
            ns(h.requested_ns as f64),
            ns(h.summary.median_ns),
            ns(l.summary.median_ns)
        )
    };
    Some(Finding::new("timer-slack", text))
}

/// "poll/epoll round up to whole ms."
pub fn poll_rounding(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let d = m.requests().into_iter().find(|&d| d > 0 && d < 1_000_000)?;
    let rounded: Vec<&SweepCell> = ["poll", "epoll"]
        .iter()
        .filter_map(|n| m.cell(n, d, 0))
        .filter(|c| c.summary.median_ns >= 1_000_000.0)
        .collect();
    let first = rounded.first()?;
    let mut text = format!(
        "poll and epoll_wait round up to whole milliseconds: asking {} for {} took a median {}",
        first.mechanism,
        ns(d as f64),
        ns(first.summary.median_ns)
    );
    if let Some(second) = rounded.get(1) {
        text.push_str(&format!(
            " ({}: {})",
            second.mechanism,
            ns(second.summary.median_ns)
        ));
    }
    let fine: Vec<&str> = ["ppoll", "epoll-pwait2"]
        .iter()
        .copied()
        .filter(|n| {
            m.cell(n, d, 0)
                .is_some_and(|c| c.summary.median_ns < 1_000_000.0)
        })
        .collect();
    if fine.is_empty() {
        text.push('.');
    } else {
        text.push_str(&format!(
            "; {} take nanoseconds and do not.",
            fine.join(" and ")
        ));
    }
    Some(Finding::new("poll-rounding", text))
}

/// "Under load, a 1 ms sleep's p99 grows from X to Y."
pub fn load_effect(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let max_load = *m.loads().iter().max()?;
    if max_load == 0 {
        return None;
    }
    let mech = sleep_call(&m)?;
    let d = [1_000_000u64, 10_000_000, 100_000]
        .into_iter()
        .find(|&d| m.cell(mech, d, 0).is_some() && m.cell(mech, d, max_load).is_some())?;
    let (a, b) = (m.cell(mech, d, 0)?, m.cell(mech, d, max_load)?);
    let cpus = r.top.fingerprint.cpu_count;
    let threads = if max_load == 1 { "thread" } else { "threads" };
    let (pa, pb) = (a.summary.p99_ns?, b.summary.p99_ns?);
    let text = if pb > 1.2 * pa {
        format!(
            "Load stretches the tail: with {max_load} busy {threads} on {cpus} CPUs, a {} {mech} had p99 {} (median {}) instead of {} (median {}) on an idle machine.",
            ns(d as f64),
            ns(b.summary.p99_ns),
            ns(b.summary.median_ns),
            ns(a.summary.p99_ns),
            ns(a.summary.median_ns)
        )
    } else {
        format!(
            "Load hardly changes sleeps here: with {max_load} busy {threads} on {cpus} CPUs, a {} {mech} had p99 {} against {} idle.",
            ns(d as f64),
            ns(b.summary.p99_ns),
            ns(a.summary.p99_ns)
        )
    };
    Some(Finding::new("load", text))
}

/// "Long sleeps are accurate: a 100 ms sleep overshoots by X (Y %)."
pub fn long_sleeps(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let mech = sleep_call(&m)?;
    let d = m
        .requests()
        .into_iter()
        .rev()
        .find(|&d| d >= 1_000_000 && m.cell(mech, d, 0).is_some())?;
    let c = m.cell(mech, d, 0)?;
    let over = c.summary.median_ns - d as f64;
    let rel = 100.0 * over / d as f64;
    let text = if rel < 1.0 {
        format!(
            "Long sleeps are accurate: a {} {mech} overshot by a median {} ({}); only short sleeps suffer.",
            ns(d as f64),
            ns(over),
            pct(rel)
        )
    } else {
        format!(
            "Even long sleeps are late here: a {} {mech} overshot by a median {} ({}).",
            ns(d as f64),
            ns(over),
            pct(rel)
        )
    };
    Some(Finding::new("long-sleeps", text))
}

/// "Spinning burns a core: spin used X % of a CPU while waiting 1 ms; nanosleep Y %."
pub fn spin_cost(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let d = [1_000_000u64, 100_000, 10_000_000]
        .into_iter()
        .find(|&d| m.cell("spin", d, 0).is_some())?;
    let cpu = |c: &SweepCell| 100.0 * c.cpu_ns_per_call / c.summary.mean_ns.max(1.0);
    let spin = m.cell("spin", d, 0)?;
    let mut text = format!(
        "Spinning burns the CPU it waits on: spin used {} of a core while waiting {}",
        pct(cpu(spin)),
        ns(d as f64)
    );
    if let Some(s) = sleep_call(&m).and_then(|n| m.cell(n, d, 0)) {
        text.push_str(&format!(", {} used {}.", s.mechanism, pct(cpu(s))));
    } else {
        text.push('.');
    }
    Some(Finding::new("spin-cost", text))
}

/// "No wait returned early in N calls" or "K of N calls returned early, all in X".
pub fn early_wakeups(r: &Results<'_>) -> Option<Finding> {
    let cells: Vec<&SweepCell> = r
        .sweeps()
        .into_iter()
        .flat_map(|s| s.cells.iter())
        .collect();
    let total: u64 = cells.iter().map(|c| c.summary.count).sum();
    if total == 0 {
        return None;
    }
    let early: u64 = cells.iter().map(|c| c.summary.early_count).sum();
    if early == 0 {
        return Some(Finding::new(
            "early-wakeups",
            format!(
                "No wait returned before its time in {} measured calls.",
                count(total)
            ),
        ));
    }
    let mut by_mech: Vec<(&str, u64)> = Vec::new();
    for c in cells.iter().filter(|c| c.summary.early_count > 0) {
        match by_mech.iter_mut().find(|(m, _)| *m == c.mechanism) {
            Some(e) => e.1 += c.summary.early_count,
            None => by_mech.push((&c.mechanism, c.summary.early_count)),
        }
    }
    let list: Vec<String> = by_mech
        .iter()
        .map(|(m, n)| format!("{m} {}", count(*n)))
        .collect();
    let why = if by_mech.iter().all(|(m, _)| *m == "timerfd-interval") {
        " — a periodic timer's next expiry does not wait for the caller"
    } else {
        ""
    };
    Some(Finding::new(
        "early-wakeups",
        format!(
            "{} of {} calls returned before the requested time ({}){why}.",
            count(early),
            count(total),
            list.join(", ")
        ),
    ))
}

/// Seed 000's slow first calls: the first call of a cell far slower than its p99.
pub fn first_calls(r: &Results<'_>) -> Option<Finding> {
    let m = r.main_sweep()?;
    let slow: Vec<&SweepCell> = m
        .cells()
        .filter(|c| {
            c.first_calls_ns
                .first()
                .zip(c.summary.p99_ns)
                .is_some_and(|(&f, p99)| f > 100_000 && f as f64 > 3.0 * p99.max(1.0))
        })
        .collect();
    let worst = slow.iter().max_by(|a, b| {
        let ra = a.first_calls_ns[0] as f64 / a.summary.p99_ns.unwrap_or(1.0).max(1.0);
        let rb = b.first_calls_ns[0] as f64 / b.summary.p99_ns.unwrap_or(1.0).max(1.0);
        ra.total_cmp(&rb)
    })?;
    Some(Finding::new(
        "first-calls",
        format!(
            "First calls can be slow (seed 000 saw it too): in {} of {} cells the first call took over 3× the p99; worst {} {} at load {}: {} vs p99 {}. Warm up before timing matters.",
            slow.len(),
            m.cells().count(),
            worst.mechanism,
            ns(worst.requested_ns as f64),
            worst.load,
            ns(worst.first_calls_ns[0] as f64),
            ns(worst.summary.p99_ns)
        ),
    ))
}

/// "For a 60 Hz loop, `precise` gives p99 X µs at Y % CPU": the highest tail quantile
/// every quoted contender's frame count resolves (p99, else p90), named.
pub fn pace_loop(r: &Results<'_>) -> Option<Finding> {
    use crate::stats::Stat;
    let (_, p) = r.pace()?;
    let ours = p.results.iter().find(|x| x.strategy == "precise")?;
    let others: Vec<_> = ["std-sleep", "spin"]
        .iter()
        .filter_map(|n| p.results.iter().find(|x| x.strategy == *n))
        .collect();
    let n = others
        .iter()
        .map(|x| x.error.count)
        .fold(ours.error.count, u64::min);
    let stat = [Stat::P99, Stat::P90]
        .into_iter()
        .find(|s| s.resolved_by(n))?;
    let hz = crate::report::units::num(p.config.rate_hz);
    let mut text = format!(
        "For a {hz} Hz loop, `precise` woke with {stat} {} late at {} CPU",
        ns(ours.error.get(stat)),
        pct(ours.cpu_percent)
    );
    let others: Vec<String> = others
        .iter()
        .map(|x| {
            format!(
                "{}: {stat} {} at {}",
                x.strategy,
                ns(x.error.get(stat)),
                pct(x.cpu_percent)
            )
        })
        .collect();
    if others.is_empty() {
        text.push_str(&format!(" ({} frames).", ours.error.count));
    } else {
        text.push_str(&format!(" ({}; {n} frames each).", others.join("; ")));
    }
    Some(Finding::new("pace", text))
}

/// "Go's time.Sleep rounds short waits up to ~1 ms here", and every runtime's floor.
pub fn runtime_floors(r: &Results<'_>) -> Option<Finding> {
    use super::sections::runtimes::{measured, smallest};
    let (_, d) = r.runtimes()?;
    let mains = measured(d);
    // A plain sleep asked for less than 0.5 ms that took 0.5 ms or more: ms granularity.
    let coarse: Vec<String> = mains
        .iter()
        .filter_map(|(rt, m)| {
            m.cells
                .iter()
                .filter(|c| c.requested_ns > 0 && c.requested_ns < 500_000 && c.summary.count > 0)
                .filter(|c| c.summary.median_ns >= 500_000.0)
                .min_by_key(|c| c.requested_ns)
                .map(|c| {
                    format!(
                        "{}'s {}: {} took {}",
                        rt.title,
                        m.method,
                        ns(c.requested_ns as f64),
                        ns(c.summary.median_ns)
                    )
                })
        })
        .collect();
    let mut floors: Vec<(String, u64, f64)> = mains
        .iter()
        .filter_map(|(rt, m)| {
            smallest(m).map(|c| {
                (
                    format!("{}'s {}", rt.title, m.method),
                    c.requested_ns,
                    c.summary.median_ns,
                )
            })
        })
        .collect();
    let req = floors.iter().map(|f| f.1).min()?;
    floors.retain(|f| f.1 == req);
    floors.sort_by(|a, b| a.2.total_cmp(&b.2));
    // A plain sleep that returns before the request rounds it down (to 0 ms): not a floor.
    let early: Vec<String> = floors
        .iter()
        .filter(|f| f.2 < req as f64)
        .map(|f| f.0.clone())
        .collect();
    floors.retain(|f| f.2 >= req as f64);
    if floors.is_empty() {
        return None;
    }
    let list: Vec<String> = floors
        .iter()
        .map(|(n, _, v)| format!("{n} {}", ns(*v)))
        .collect();
    let mut text = String::new();
    if !coarse.is_empty() {
        let names: Vec<&str> = coarse
            .iter()
            .map(|c| c.split(':').next().unwrap_or(""))
            .collect();
        text.push_str(&format!(
            "{} {} short waits up to ~1 ms here ({}). ",
            names.join(" and "),
            if names.len() == 1 { "rounds" } else { "round" },
            coarse.join("; ")
        ));
    }
    text.push_str(&format!(
        "Asked to sleep {}, the plain sleeps took a median: {}.",
        ns(req as f64),
        list.join(", ")
    ));
    if !early.is_empty() {
        text.push_str(&format!(
            " {} returned at once: they round the request down to 0.",
            early.join(", ")
        ));
    }
    Some(Finding::new("runtime-floors", text))
}

/// A count with thin thousands separators: `12 345`.
fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push('\u{202f}');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ExperimentData;
    use crate::report::testdata::{cell, result, survey, sweep};

    fn ids(f: &[Finding]) -> Vec<&str> {
        f.iter().map(|f| f.id).collect()
    }

    #[test]
    fn slack_finding_uses_the_median_difference_of_sleep_calls() {
        // clock-nanosleep: +50 µs at every request; timerfd: no change (not a sleep call).
        let mut cells = Vec::new();
        for d in [1_000u64, 10_000, 100_000, 1_000_000] {
            cells.push(cell("clock-nanosleep", d, 0, 50_000, d as f64 + 58_000.0));
            cells.push(cell("clock-nanosleep", d, 0, 1, d as f64 + 8_000.0));
            cells.push(cell("timerfd", d, 0, 50_000, d as f64 + 9_000.0));
            cells.push(cell("timerfd", d, 0, 1, d as f64 + 9_000.0));
        }
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let f = timer_slack(&Results::of(&r)).unwrap();
        assert!(f.text.starts_with("Timer slack adds ~50 µs"), "{}", f.text);
        assert!(
            f.text.contains("clock-nanosleep 10 µs: 68 µs vs 18 µs"),
            "{}",
            f.text
        );
        assert!(
            f.text.contains("default 50 µs slack than at 1 ns"),
            "{}",
            f.text
        );
    }

    #[test]
    fn slack_finding_needs_two_slacks() {
        let r = result(ExperimentData::Sweep(sweep(vec![cell(
            "nanosleep",
            1_000,
            0,
            50_000,
            60_000.0,
        )])));
        assert!(timer_slack(&Results::of(&r)).is_none());
    }

    #[test]
    fn small_slack_difference_says_it_hardly_matters() {
        let cells = vec![
            cell("nanosleep", 10_000, 0, 50_000, 11_000.0),
            cell("nanosleep", 10_000, 0, 1, 10_500.0),
        ];
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let f = timer_slack(&Results::of(&r)).unwrap();
        assert!(
            f.text.starts_with("Timer slack hardly matters here: "),
            "{}",
            f.text
        );
        assert!(f.text.contains("500 ns longer"), "{}", f.text);
    }

    #[test]
    fn poll_rounding_only_when_poll_waits_a_millisecond() {
        let cells = vec![
            cell("poll", 1_000, 0, 50_000, 1_060_000.0),
            cell("epoll", 1_000, 0, 50_000, 1_070_000.0),
            cell("ppoll", 1_000, 0, 50_000, 58_000.0),
        ];
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let f = poll_rounding(&Results::of(&r)).unwrap();
        assert_eq!(
            f.text,
            "poll and epoll_wait round up to whole milliseconds: asking poll for 1 µs took a median 1.06 ms (epoll: 1.07 ms); ppoll take nanoseconds and do not."
        );
        let r = result(ExperimentData::Sweep(sweep(vec![cell(
            "poll", 1_000, 0, 50_000, 900_000.0,
        )])));
        assert!(poll_rounding(&Results::of(&r)).is_none());
    }

    #[test]
    fn cheapest_short_sleep_ignores_spin_and_yield() {
        let cells = vec![
            cell("nanosleep", 1_000, 0, 50_000, 60_200.0),
            cell("timerfd-reuse", 1_000, 0, 50_000, 12_300.0),
            cell("spin", 1_000, 0, 50_000, 1_050.0),
            cell("timerfd-reuse", 1_000, 2, 50_000, 5_000.0), // loaded: not compared
            cell("nanosleep", 0, 0, 50_000, 100.0),           // 0 is not a short sleep
        ];
        let r = result(ExperimentData::Sweep(sweep(cells)));
        let f = cheapest_short_sleep(&Results::of(&r)).unwrap();
        assert_eq!(
            f.text,
            "The cheapest short sleep here is timerfd-reuse: asking for 1 µs took a median 12.3 µs (nanosleep took 60.2 µs). Only spinning comes closer (1.05 µs), at the price of a busy core."
        );
    }

    #[test]
    fn load_effect_compares_p99_idle_and_loaded() {
        let mut a = cell("nanosleep", 1_000_000, 0, 50_000, 1_060_000.0);
        a.summary.p99_ns = Some(1_200_000.0);
        let mut b = cell("nanosleep", 1_000_000, 2, 50_000, 1_100_000.0);
        b.summary.p99_ns = Some(8_600_000.0);
        let mut r = result(ExperimentData::Sweep(sweep(vec![a, b])));
        r.fingerprint.cpu_count = 2;
        let f = load_effect(&Results::of(&r)).unwrap();
        assert!(f.text.starts_with("Load stretches the tail: with 2 busy threads on 2 CPUs, a 1 ms nanosleep had p99 8.6 ms (median 1.1 ms) instead of 1.2 ms"), "{}", f.text);
    }

    #[test]
    fn early_wakeups_are_counted_never_hidden() {
        let mut a = cell("timerfd-interval", 10_000, 0, 50_000, 10_100.0);
        a.summary.early_count = 7;
        let b = cell("nanosleep", 10_000, 0, 50_000, 60_000.0);
        let r = result(ExperimentData::Sweep(sweep(vec![a, b])));
        let f = early_wakeups(&Results::of(&r)).unwrap();
        assert_eq!(
            f.text,
            "7 of 200 calls returned before the requested time (timerfd-interval 7) — a periodic timer's next expiry does not wait for the caller."
        );
        let r = result(ExperimentData::Sweep(sweep(vec![cell(
            "nanosleep",
            10_000,
            0,
            50_000,
            60_000.0,
        )])));
        assert_eq!(
            early_wakeups(&Results::of(&r)).unwrap().text,
            "No wait returned before its time in 100 measured calls."
        );
    }

    #[test]
    fn long_sleeps_and_spin_cost() {
        let mut spin = cell("spin", 1_000_000, 0, 50_000, 1_000_100.0);
        spin.cpu_ns_per_call = 1_000_000.0;
        let mut nano = cell("nanosleep", 1_000_000, 0, 50_000, 1_000_000.0);
        nano.cpu_ns_per_call = 10_000.0;
        let long = cell("nanosleep", 100_000_000, 0, 50_000, 100_063_000.0);
        let r = result(ExperimentData::Sweep(sweep(vec![spin, nano, long])));
        let rs = Results::of(&r);
        assert_eq!(
            long_sleeps(&rs).unwrap().text,
            "Long sleeps are accurate: a 100 ms nanosleep overshot by a median 63 µs (0.063 %); only short sleeps suffer."
        );
        assert_eq!(
            spin_cost(&rs).unwrap().text,
            "Spinning burns the CPU it waits on: spin used 100 % of a core while waiting 1 ms, nanosleep used 1 %."
        );
    }

    #[test]
    fn a_survey_combines_its_stages_and_nothing_is_invented() {
        let main = result(ExperimentData::Sweep(sweep(vec![
            cell("poll", 1_000, 0, 50_000, 1_060_000.0),
            cell("nanosleep", 1_000, 0, 50_000, 60_000.0),
        ])));
        let slack = result(ExperimentData::Sweep(sweep(vec![
            cell("nanosleep", 10_000, 0, 50_000, 60_000.0),
            cell("nanosleep", 10_000, 0, 1, 12_000.0),
        ])));
        let s = survey(vec![("sweep", main), ("sweep-slack", slack)]);
        let f = findings(&Results::of(&s));
        assert_eq!(
            ids(&f),
            vec![
                "cheapest-short-sleep",
                "timer-slack",
                "poll-rounding",
                "early-wakeups"
            ]
        );
        // Empty results: no findings.
        let empty = result(ExperimentData::Sweep(sweep(vec![])));
        assert!(findings(&Results::of(&empty)).is_empty());
    }

    /// A result of experiment `name` from the stored survey (real data whose numbers
    /// the tests then set).
    fn stored(name: &str) -> crate::model::ResultFile {
        let s =
            crate::model::parse_result(include_str!("../../tests/fixtures/survey.json"), "fixture")
                .expect("the fixture parses");
        let ExperimentData::Survey(d) = s.data else {
            panic!("the fixture is a survey");
        };
        d.results
            .into_iter()
            .find(|r| r.data.name() == name)
            .expect("in the fixture")
    }

    #[test]
    fn pace_finding_quotes_precise_and_the_references() {
        let mut r = stored("pace");
        let ExperimentData::Pace(p) = &mut r.data else {
            panic!("pace");
        };
        for (x, (name, p99, cpu)) in p.results.iter_mut().zip([
            ("std-sleep", 1_160_000.0, 0.14),
            ("spin", 2_000.0, 99.9),
            ("precise", 21_000.0, 1.25),
        ]) {
            x.strategy = name.into();
            x.error.p99_ns = Some(p99);
            x.error.count = 120;
            x.cpu_percent = cpu;
        }
        p.results.truncate(3);
        p.config.rate_hz = 60.0;
        assert_eq!(
            pace_loop(&Results::of(&r)).unwrap().text,
            "For a 60 Hz loop, `precise` woke with p99 21 µs late at 1.25 % CPU (std-sleep: p99 1.16 ms at 0.14 %; spin: p99 2 µs at 99.9 %; 120 frames each)."
        );
        // 90 frames cannot resolve a p99: the finding quotes the p90 and says so.
        if let ExperimentData::Pace(p) = &mut r.data {
            p.results.iter_mut().for_each(|x| {
                x.error.count = 90;
                x.error.p90_ns = Some(1_000.0);
                x.error.p99_ns = None;
            });
        }
        let f = pace_loop(&Results::of(&r)).unwrap().text;
        assert!(
            f.contains("with p90 1 µs late") && f.contains("90 frames each"),
            "{f}"
        );
        p_without_precise(&mut r);
        assert!(pace_loop(&Results::of(&r)).is_none());
    }

    fn p_without_precise(r: &mut crate::model::ResultFile) {
        if let ExperimentData::Pace(p) = &mut r.data {
            p.results.retain(|x| x.strategy != "precise");
        }
    }

    #[test]
    fn runtime_floors_name_the_coarse_ones_and_set_aside_early_returns() {
        let mut r = stored("runtimes");
        let ExperimentData::Runtimes(d) = &mut r.data else {
            panic!("runtimes");
        };
        let template = d
            .runtimes
            .iter()
            .find(|x| crate::report::sections::runtimes::main_sleep(x).is_some())
            .expect("a measured runtime")
            .clone();
        d.runtimes = [
            ("C", "nanosleep", 60_000.0),
            ("Go", "time.Sleep", 1_050_000.0),
            ("Java", "Thread.sleep-ms", 600.0),
        ]
        .into_iter()
        .map(|(title, method, median)| {
            let mut rt = template.clone();
            rt.title = title.into();
            let mut m = crate::report::sections::runtimes::main_sleep(&rt)
                .unwrap()
                .clone();
            m.method = method.into();
            let mut c = m.cells[0].clone();
            c.requested_ns = 1_000;
            c.summary.count = 10;
            c.summary.median_ns = median;
            m.cells = vec![c];
            rt.methods = vec![m];
            rt
        })
        .collect();
        assert_eq!(
            runtime_floors(&Results::of(&r)).unwrap().text,
            "Go's time.Sleep rounds short waits up to ~1 ms here (Go's time.Sleep: 1 µs took 1.05 ms). Asked to sleep 1 µs, the plain sleeps took a median: C's nanosleep 60 µs, Go's time.Sleep 1.05 ms. Java's Thread.sleep-ms returned at once: they round the request down to 0."
        );
    }

    #[test]
    fn counts_are_grouped() {
        assert_eq!(count(7), "7");
        assert_eq!(count(12_345), "12\u{202f}345");
        assert_eq!(count(1_000_000), "1\u{202f}000\u{202f}000");
    }
}
