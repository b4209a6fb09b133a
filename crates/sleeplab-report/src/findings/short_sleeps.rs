//! The cheapest short sleep, and poll's rounding to whole milliseconds.

use super::{
    Finding, Results, and_list, blocked, claim_blocking, n_clause, quote, short_request,
    sleep_call, sleeps, small_n,
};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Est, Extreme, INDISTINGUISHABLE, NEVER_BLOCKED, RankBy, Sentence, Stat,
    basis_note, interval_text, units::ns, with_interval,
};

/// "The cheapest short sleep here is X: 1 µs took a median Y." Only calls that blocked
/// (≥ 0.5 voluntary context switches per call) count as sleeps; those that did not are
/// named as returning without sleeping, with their CPU cost. Cells where some call
/// returned early (a periodic timer's expiry) are not compared. The cheapest is a
/// verdict only where its median's 95 % interval over rounds lies below every other's;
/// the others it is not shown to beat are named as indistinguishable from it in this run.
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
    let (slept, busy): (Vec<&SweepCell>, Vec<&SweepCell>) =
        cells.iter().copied().partition(|c| blocked(c));
    let medians: Vec<f64> = slept.iter().map(|c| c.summary.median_ns).collect();
    let bi = sleeplab_stats::extreme_index(&medians, Extreme::Least, RankBy::Signed)?;
    let best = slept[bi];
    let mut s = Sentence::default();
    let v = quote(&mut s, &best.summary, Stat::Median)?;
    let med = |c: &SweepCell| {
        c.est(Stat::Median)
            .unwrap_or(Est::point(c.summary.median_ns))
    };
    let close: Vec<&SweepCell> = slept
        .iter()
        .copied()
        .filter(|c| !std::ptr::eq(*c, best) && !med(best).below(&med(c)))
        .collect();
    let tie = if close.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = close
            .iter()
            .map(|c| format!("{} {}", c.mechanism, with_interval(&med(c), ns)))
            .collect();
        let mut all: Vec<Est> = close.iter().map(|c| med(c)).collect();
        all.push(med(best));
        format!(
            " {BY_POINT_VALUE}, {INDISTINGUISHABLE} from {} (its median {}{})",
            and_list(&names),
            interval_text(med(best).ci, ns),
            basis_note(&all.iter().collect::<Vec<_>>())
        )
    };
    s.push(&format!(
        "The cheapest short sleep here is {}{tie}: asking for {} took a median {v}{}",
        best.mechanism,
        ns(d as f64),
        small_n(best.summary.count)
    ));
    claim_blocking(&mut s, best, true);
    if slept.len() >= 2 {
        s.claim(Claim::Rank {
            extreme: Extreme::Least,
            by: RankBy::Signed,
            chosen: bi,
            among: medians.clone(),
            intervals: slept.iter().map(|c| med(c)).collect(),
        });
    }
    match sleep_call(&m)
        .filter(|n| *n != best.mechanism)
        .and_then(|n| m.cell(n, d, 0))
        .filter(|c| blocked(c))
    {
        Some(nano) => {
            let v = quote(&mut s, &nano.summary, Stat::Median)?;
            s.push(&format!(
                " ({} took {v}{}).",
                nano.mechanism,
                small_n(nano.summary.count)
            ));
        }
        None => {
            s.push(".");
        }
    }
    if !busy.is_empty() {
        let names: Vec<String> = busy.iter().map(|c| c.mechanism.clone()).collect();
        let parts: Vec<String> = busy
            .iter()
            .map(|c| {
                let v = quote(&mut s, &c.summary, Stat::Median).unwrap_or_default();
                claim_blocking(&mut s, c, false);
                format!(
                    "{} took a median {v}{} with {:.2} voluntary context switches and {} of CPU per call",
                    c.mechanism,
                    small_n(c.summary.count),
                    c.voluntary_csw_per_call,
                    ns(c.cpu_ns_per_call)
                )
            })
            .collect();
        s.push(&format!(
            " {} returned {NEVER_BLOCKED}, busy in the kernel rather than asleep: {}.",
            and_list(&names),
            parts.join("; ")
        ));
    }
    if let Some(spin) = m
        .cell("spin", d, 0)
        .filter(|c| c.summary.median_ns < best.summary.median_ns)
    {
        let v = quote(&mut s, &spin.summary, Stat::Median)?;
        s.push(&format!(
            " Only spinning comes closer ({v}{}), at the price of a busy core.",
            n_clause(spin.summary.count)
        ));
    }
    Some(Finding::new("cheapest-short-sleep", s))
}

/// The millisecond APIs' rounding in the main sweep: at its first request under 1 ms,
/// idle, the cells of poll and epoll whose median took 1 ms or more, and those of their
/// nanosecond twins (ppoll, epoll-pwait2) whose median did not.
pub(crate) struct Rounding<'a> {
    /// The request, ns.
    pub request_ns: u64,
    /// poll's and epoll's cells that rounded up, in that order (at least one).
    pub rounded: Vec<&'a SweepCell>,
    /// ppoll's and epoll-pwait2's cells that did not.
    pub fine: Vec<&'a SweepCell>,
}

/// The main sweep's [`Rounding`]; `None` where neither poll nor epoll rounded up.
pub(crate) fn rounding<'a>(r: &Results<'a>) -> Option<Rounding<'a>> {
    let m = r.main_sweep()?;
    let d = m.requests().into_iter().find(|&d| d > 0 && d < 1_000_000)?;
    let at = |names: [&str; 2], ms: bool| -> Vec<&'a SweepCell> {
        names
            .iter()
            .filter_map(|n| m.cell(n, d, 0))
            .filter(|c| c.summary.count > 0 && (c.summary.median_ns >= 1_000_000.0) == ms)
            .collect()
    };
    let rounded = at(["poll", "epoll"], true);
    (!rounded.is_empty()).then(|| Rounding {
        request_ns: d,
        rounded,
        fine: at(["ppoll", "epoll-pwait2"], false),
    })
}

/// "poll/epoll round up to whole ms": a request under 1 ms whose median took 1 ms or
/// more ([`rounding`]).
pub fn poll_rounding(r: &Results<'_>) -> Option<Finding> {
    let Rounding {
        request_ns: d,
        rounded,
        fine,
    } = rounding(r)?;
    let first = rounded.first()?;
    let mut s = Sentence::default();
    let v = quote(&mut s, &first.summary, Stat::Median)?;
    s.push(&format!(
        "poll and epoll_wait round up to whole milliseconds: asking {} for {} took a median {v}{}",
        first.mechanism,
        ns(d as f64),
        small_n(first.summary.count)
    ));
    if let Some(second) = rounded.get(1) {
        let v = quote(&mut s, &second.summary, Stat::Median)?;
        s.push(&format!(
            " ({}: {v}{})",
            second.mechanism,
            small_n(second.summary.count)
        ));
    }
    let fine: Vec<String> = fine.iter().map(|c| c.mechanism.clone()).collect();
    if fine.is_empty() {
        s.push(".");
    } else {
        s.push(&format!(
            "; {} {} nanoseconds and {}.",
            and_list(&fine),
            if fine.len() == 1 { "takes" } else { "take" },
            if fine.len() == 1 {
                "does not"
            } else {
                "do not"
            }
        ));
    }
    Some(Finding::new("poll-rounding", s))
}
