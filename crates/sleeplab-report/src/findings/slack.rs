//! Timer slack: how much the default slack adds to a short sleep.

use super::{Finding, Results, SLEEP_CALLS, blocked, count, quote};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    Claim, Est, INDISTINGUISHABLE, Order, Sentence, Stat, Verb, basis_note, difference, direction,
    equivalent, interval_text, median_est, order, units::ns,
};

/// Below this a slack's effect "hardly matters".
pub(crate) const MATTERS_NS: f64 = 2_000.0;

/// What the slack sweep measured timer slack to add to a short sleep: the pairs of
/// sleep calls of 1–100 µs measured idle at both slacks (those that blocked; the plain
/// sleep calls where there are any), each pair's difference of medians with its
/// interval, and their median ([`median_est`]), the estimate every sentence on it reads.
pub(crate) struct SlackEffect<'a> {
    /// The larger and the smaller slack, ns.
    pub high: u64,
    pub low: u64,
    /// (cell at the high slack, the same cell at the low), the pairs used.
    pub pairs: Vec<(&'a SweepCell, &'a SweepCell)>,
    /// Each pair's median difference (high − low).
    pub diffs: Vec<Est>,
    /// Their median, with its interval: what slack adds.
    pub added: Est,
}

/// The slack sweep's [`SlackEffect`]; `None` without a slack sweep or a usable pair.
pub(crate) fn slack_effect<'a>(r: &Results<'a>) -> Option<SlackEffect<'a>> {
    let sw = r.slack_sweep()?;
    let pairs: Vec<_> = sw
        .pairs()
        .into_iter()
        .filter(|(h, l)| {
            h.load == 0
                && (1_000..=100_000).contains(&h.requested_ns)
                && blocked(h)
                && blocked(l)
                && h.summary.count > 0
                && l.summary.count > 0
        })
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
    let med = |c: &SweepCell| {
        c.est(Stat::Median)
            .unwrap_or(Est::point(c.summary.median_ns))
    };
    let diffs: Vec<Est> = used
        .iter()
        .map(|(h, l)| difference(&med(h), &med(l)))
        .collect();
    let added = median_est(&diffs)?;
    Some(SlackEffect {
        high: sw.high,
        low: sw.low,
        pairs: used,
        diffs,
        added,
    })
}

/// "Timer slack adds ~X µs to every short sleep here": the median, over the sleep calls
/// of 1–100 µs measured idle at both slacks, of (median at the high slack − median at
/// the low) ([`slack_effect`]). Pairs where either side did not block are left out (the
/// slack delays a sleeping timer; a call that never slept shows nothing of it). When the
/// effect exceeds the slack difference itself, the excess is stated, and its likely cause
/// only when the fingerprint records idle states that the longer wait can reach. Longer
/// or shorter is a verdict: the interval of the median difference (from the medians' 95 %
/// intervals over rounds, [`median_est`] of each pair's [`difference`]) must exclude
/// zero; "hardly matters" is an equivalence: that interval lies within ±2 µs. Where
/// neither holds, the finding says the difference is indistinguishable from none.
pub fn timer_slack(r: &Results<'_>) -> Option<Finding> {
    let e = slack_effect(r)?;
    let (added_est, used) = (e.added, &e.pairs);
    let added = added_est.value;
    let diffs: Vec<f64> = e.diffs.iter().map(|d| d.value).collect();
    // An example: the 10 µs (or first) pair.
    let (h, l) = used
        .iter()
        .find(|(h, _)| h.requested_ns == 10_000)
        .or_else(|| used.first())?;
    let mut s = Sentence::default();
    s.claim(Claim::Median {
        of: diffs.clone(),
        value: added,
    });
    let (vh, vl) = (
        quote(&mut s, &h.summary, Stat::Median)?,
        quote(&mut s, &l.summary, Stat::Median)?,
    );
    let n = h.summary.count.min(l.summary.count);
    let example = format!(
        "{} {}: {vh} vs {vl}{}",
        h.mechanism,
        ns(h.requested_ns as f64),
        if n < sleeplab_stats::SMALL_SAMPLE {
            format!(", n = {} and n = {}", h.summary.count, l.summary.count)
        } else {
            String::new()
        }
    );
    let how = match diffs.len() {
        1 => "the difference between the median sleeps at each slack".to_string(),
        k => format!(
            "the median of {} differences between the median sleeps at each slack",
            count(k as u64)
        ),
    };
    let threshold = ns(MATTERS_NS);
    s.claim(Claim::Threshold {
        shown: threshold.clone(),
    });
    // The two slacks and the median difference with its interval, as every wording
    // quotes them.
    let (high, low) = (ns(e.high as f64), ns(e.low as f64));
    let (added_text, ci) = (ns(added), interval_text(added_est.ci, ns));
    let between = format!(
        "the median difference between sleeps of 1–100 µs at {high} slack and at {low} was {added_text}"
    );
    let zero = Est::exact(0.0);
    if equivalent(&added_est, &zero, MATTERS_NS) {
        s.claim(Claim::Equivalent {
            stat: Stat::Median,
            a: added_est,
            b: zero,
            margin: MATTERS_NS,
            shown: threshold.clone(),
        });
        s.push(&format!(
            "Timer slack hardly matters here (under {threshold}): {between} {ci}, its 95 % interval within ±{threshold} ({how}; {example}).",
        ));
        return Some(Finding::new("timer-slack", s));
    }
    // Only intervals clear of zero decide a direction.
    let verdict = order(&zero, &added_est);
    s.claim(Claim::Verdict {
        stat: Stat::Median,
        a: zero,
        b: added_est,
        stated: verdict,
    });
    if verdict == Order::Indistinguishable {
        s.push(&format!(
            "Timer slack's effect is unclear here: {between}, {INDISTINGUISHABLE} from none ({ci}{}; {how}; under {threshold} would count as noise; {example}).",
            basis_note(&[&added_est]),
        ));
        return Some(Finding::new("timer-slack", s));
    }
    // The sign decides the word: a slack that made sleeps shorter is said so.
    let stated = direction(0.0, added, 0.0);
    s.claim(Claim::Change {
        stat: Stat::Median,
        from: 0.0,
        to: added,
        verb: Verb::Longer,
        tolerance: 0.0,
        stated,
    });
    let longer = Verb::Longer.word(stated);
    if added >= MATTERS_NS {
        s.push(&format!(
            "Timer slack adds ~{added_text} to every short sleep here: sleeps of 1–100 µs took that much {longer} at the default {high} slack than at {low} ({how}; under {threshold} would count as noise; {example}).",
        ));
        let slack = (e.high - e.low) as f64;
        let excess = added - slack;
        if excess > 0.1 * slack {
            s.push(&format!(
                " That is {} more than the slack itself",
                ns(excess)
            ));
            match super::load::deeper_idle(r, l.summary.median_ns, h.summary.median_ns) {
                Some(why) => s.push(&format!(": {why}.")),
                None => s.push(
                    "; nothing this run records (no idle state the longer wait could reach) explains the excess.",
                ),
            };
        }
        s.push(" Set PR_SET_TIMERSLACK to 1 ns (or use a real-time policy) where it matters.");
    } else if added > -MATTERS_NS {
        s.push(&format!(
            "Sleeps of 1–100 µs took {} {longer} at {high} slack than at {low} here, under the {threshold} that would count as noise in point value but not shown to be ({added_text} {ci}; {how}; {example}).",
            ns(added.abs()),
        ));
    } else {
        s.push(&format!(
            "Sleeps of 1–100 µs took {} {longer} at {high} slack than at {low} here ({how}; under {threshold} would count as noise; {example}): the larger slack did not delay them.",
            ns(added.abs()),
        ));
    }
    Some(Finding::new("timer-slack", s))
}
