//! The sweep section's captions that compare mechanisms, each built as a [`Sentence`]
//! with its claims (`claim`) so tests check the words against the numbers: the
//! tail under load (ranked by the loaded/idle ratio, each change given the word its sign
//! calls for) and the timer slack (the largest cut, and the smallest change by size).

use crate::findings::judge_change;
use crate::units::{ns, ratio};
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Direction, Est, Extreme, INDISTINGUISHABLE, Order, RankBy, Sentence,
    Stat, Verb, basis_note, direction, interval_text,
};

/// A relative change within this is "did not change".
pub(super) const SAME: f64 = 0.02;

/// ` (within 2 %)` for a change too small to count, with its threshold recorded; else
/// nothing.
pub(super) fn within(s: &mut Sentence, d: Direction) -> String {
    if d != Direction::Same {
        return String::new();
    }
    let shown = same_shown();
    s.claim(Claim::Threshold {
        shown: shown.clone(),
    });
    format!(" (within {shown})")
}

/// The word `verb` calls for when `stat` went from `from` to `to` ("grew", "shrank",
/// "did not change (within 2 %)"), with the change claim (and the threshold, when
/// stated) recorded. A value said to rise or fall needs intervals that separate (its
/// verdict recorded beside the change); one said not to change needs the interval of
/// the difference within 2 % (its equivalence recorded). Where the intervals decide
/// neither, the words are [`INDISTINGUISHABLE`] (with the reason where it is the units)
/// and no direction is claimed.
pub(super) fn changed(s: &mut Sentence, stat: Stat, verb: Verb, from: Est, to: Est) -> String {
    let judged = judge_change(s, stat, verb, (from, to), SAME, &same_shown());
    let (d, o) = (judged.direction, judged.order);
    if !judged.decided {
        let note = basis_note(&[&from, &to]);
        if d != Direction::Same {
            return format!("not measurably different ({INDISTINGUISHABLE}{note})");
        }
        let why = if o == Order::Indistinguishable {
            format!("{INDISTINGUISHABLE}{note}")
        } else {
            "the intervals separate".into()
        };
        return format!(
            "within {} in point values, not shown to be ({why})",
            same_shown()
        );
    }
    format!("{}{}", verb.word(d), within(s, d))
}

/// The tolerance as a sentence writes it: `2 %`.
fn same_shown() -> String {
    format!("{} %", SAME * 100.0)
}

/// `from → to` with the intervals where the change was indistinguishable (`word` says
/// so), without them otherwise.
pub(super) fn from_to(word: &str, from: &Est, to: &Est) -> String {
    if word.contains(INDISTINGUISHABLE) {
        format!(
            "{} {} → {} {}",
            ns(from.value),
            interval_text(from.ci, ns),
            ns(to.value),
            interval_text(to.ci, ns)
        )
    } else {
        format!("{} → {}", ns(from.value), ns(to.value))
    }
}

/// `(mechanism, idle p99, loaded p99)` → "grew"/"shrank"/"did not change" sentence part,
/// with its change claim recorded.
fn change(s: &mut Sentence, name: &str, from: Est, to: Est) -> String {
    let word = changed(s, Stat::P99, Verb::Grew, from, to);
    format!(
        "{word} for {name} ({}, {})",
        from_to(&word, &from, &to),
        ratio(to.value / from.value.max(1.0))
    )
}

/// The tail under load: `rows` are (mechanism, idle p99, loaded p99) of a `d` wait,
/// cells whose samples resolve a p99. With two or more, the largest and the smallest
/// loaded/idle ratio are named as such; with one, its change alone.
pub fn load(rows: &[(&str, Est, Est)], d: u64, setting: &str) -> Sentence {
    let mut s = Sentence::default();
    let ratios: Vec<f64> = rows
        .iter()
        .map(|r| r.2.value / r.1.value.max(1.0))
        .collect();
    let (Some(hi), Some(lo)) = (
        sleeplab_stats::extreme_index(&ratios, Extreme::Most, RankBy::Signed),
        sleeplab_stats::extreme_index(&ratios, Extreme::Least, RankBy::Signed),
    ) else {
        s.push("No mechanism's p99 was resolved both idle and under load.");
        return s;
    };
    let head = format!("{setting}, the p99 of a {} wait", ns(d as f64));
    if rows.len() < 2 || hi == lo {
        let (n, a, b) = rows[hi];
        let part = change(&mut s, n, a, b);
        s.push(&format!("{head} {part}."));
        return s;
    }
    s.claim(Claim::Rank {
        extreme: Extreme::Most,
        by: RankBy::Signed,
        chosen: hi,
        among: ratios.clone(),
        intervals: Vec::new(),
    });
    s.claim(Claim::Rank {
        extreme: Extreme::Least,
        by: RankBy::Signed,
        chosen: lo,
        among: ratios,
        intervals: Vec::new(),
    });
    let (h, l) = (rows[hi], rows[lo]);
    let ph = change(&mut s, h.0, h.1, h.2);
    let pl = change(&mut s, l.0, l.1, l.2);
    s.push(&format!(
        "{head}: the largest loaded/idle ratio {BY_POINT_VALUE}: it {ph}; the smallest: it {pl}."
    ));
    s
}

/// Records the quotes of both cells' medians; the sample sizes under 100 to state
/// (`; n = 40, n = 60`), or nothing.
fn medians_quoted(s: &mut Sentence, h: &SweepCell, l: &SweepCell) -> String {
    let mut small = Vec::new();
    for c in [h, l] {
        s.claim(Claim::Quote {
            stat: Stat::Median,
            n: c.summary.count,
            shown: ns(c.summary.median_ns),
        });
        if c.summary.count < sleeplab_stats::SMALL_SAMPLE {
            small.push(format!("n = {}", c.summary.count));
        }
    }
    small.dedup();
    match small.as_slice() {
        [] => String::new(),
        [one] if h.summary.count == l.summary.count => format!("; {one} each"),
        _ => format!("; {}", small.join(", ")),
    }
}

/// The timer slack caption for the pairs (high slack, low slack) of one request: the
/// largest signed cut (said to be a cut only when it is one) and, by size of the change,
/// the mechanism that changed least.
pub fn slack(pairs: &[(&SweepCell, &SweepCell)], high: u64, low: u64, d: u64) -> Sentence {
    let mut s = Sentence::default();
    let gains: Vec<f64> = pairs
        .iter()
        .map(|(h, l)| h.summary.median_ns - l.summary.median_ns)
        .collect();
    let Some(most) = sleeplab_stats::extreme_index(&gains, Extreme::Most, RankBy::Signed) else {
        return s;
    };
    let (h, l) = pairs[most];
    let median = |c: &SweepCell| {
        c.est(Stat::Median)
            .unwrap_or(Est::point(c.summary.median_ns))
    };
    let word = changed(&mut s, Stat::Median, Verb::Longer, median(h), median(l));
    let cut = !word.contains(INDISTINGUISHABLE)
        && direction(h.summary.median_ns, l.summary.median_ns, SAME) == Direction::Down;
    let largest = pairs.len() >= 2 && cut;
    if largest {
        s.claim(Claim::Rank {
            extreme: Extreme::Most,
            by: RankBy::Signed,
            chosen: most,
            among: gains.clone(),
            intervals: Vec::new(),
        });
    }
    let q = medians_quoted(&mut s, h, l);
    s.push(&format!(
        "Dropping the timer slack from {} to {} made a {} {} {} (median {}{}){}",
        ns(high as f64),
        ns(low as f64),
        ns(d as f64),
        h.mechanism,
        word,
        from_to(&word, &median(h), &median(l)),
        q,
        if largest {
            format!(", the largest cut {BY_POINT_VALUE}")
        } else {
            String::new()
        }
    ));
    let least = sleeplab_stats::extreme_index(&gains, Extreme::Least, RankBy::Size);
    if let Some(i) = least.filter(|&i| i != most && pairs.len() >= 2) {
        s.claim(Claim::Rank {
            extreme: Extreme::Least,
            by: RankBy::Size,
            chosen: i,
            among: gains,
            intervals: Vec::new(),
        });
        let (h, l) = pairs[i];
        let q = medians_quoted(&mut s, h, l);
        s.push(&format!(
            "; {} changed least in size {BY_POINT_VALUE} ({} vs {}{})",
            h.mechanism,
            ns(h.summary.median_ns),
            ns(l.summary.median_ns),
            q
        ));
    }
    s.push(".");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::cell;
    use proptest::prelude::*;
    use sleeplab_stats::{Ci, Unit};

    /// A value with an interval over 10 rounds.
    fn est(v: f64, ci: Option<Ci>) -> Est {
        Est::units(v, ci, Unit::Round, 10)
    }

    /// A value with a ±1 % interval.
    fn narrow(v: f64) -> Est {
        est(v, Some(Ci(Some(0.99 * v), Some(1.01 * v))))
    }

    /// Where the intervals overlap, no direction is claimed and the intervals are shown.
    #[test]
    fn overlapping_intervals_are_not_called_a_change() {
        let wide = |v: f64| est(v, Some(Ci(Some(0.5 * v), Some(2.0 * v))));
        let rows = [("select", wide(3.0e6), wide(4.0e6))];
        let s = load(&rows, 1_000_000, "With 2 busy threads on 2 CPUs");
        assert_eq!(s.check(), Ok(()));
        assert!(
            s.text.contains("not measurably different (indistinguishable in this run) for select (3 ms [1.5–6 ms] → 4 ms [2–8 ms]"),
            "{}",
            s.text
        );
    }

    /// A past report: "grew … least for select (3.26 ms → 1.09 ms, ×0.33)", and one
    /// mechanism named both most and least.
    #[test]
    fn load_caption_words_follow_the_sign() {
        let rows = [
            ("select", narrow(3.26e6), narrow(1.09e6)),
            ("nanosleep", narrow(1.1e6), narrow(3.18e6)),
        ];
        let s = load(&rows, 1_000_000, "With 2 busy threads on 2 CPUs");
        s.check().unwrap();
        assert!(
            s.text.contains("shrank for select (3.26 ms → 1.09 ms"),
            "{}",
            s.text
        );
        assert!(s.text.contains("grew for nanosleep"), "{}", s.text);
        let one = load(&rows[..1], 1_000_000, "With 2 busy threads on 2 CPUs");
        one.check().unwrap();
        assert!(
            !one.text.contains("largest") && one.text.contains("shrank"),
            "{}",
            one.text
        );
    }

    /// A past report: timerfd "changed least (30 µs vs 41.6 µs)": sorted by signed gain.
    #[test]
    fn slack_caption_ranks_least_by_size() {
        let a = (
            cell("timerfd", 10_000, 0, 50_000, 30_000.0),
            cell("timerfd", 10_000, 0, 1, 41_600.0),
        );
        let b = (
            cell("nanosleep", 10_000, 0, 50_000, 68_000.0),
            cell("nanosleep", 10_000, 0, 1, 18_000.0),
        );
        let c = (
            cell("poll", 10_000, 0, 50_000, 20_000.0),
            cell("poll", 10_000, 0, 1, 19_000.0),
        );
        let pairs = [(&a.0, &a.1), (&b.0, &b.1), (&c.0, &c.1)];
        let s = slack(&pairs, 50_000, 1, 10_000);
        s.check().unwrap();
        assert!(
            s.text
                .contains("nanosleep shorter (median 68 µs → 18 µs), the largest cut"),
            "{}",
            s.text
        );
        assert!(s.text.contains("poll changed least in size"), "{}", s.text);
    }

    proptest! {
        #[test]
        fn captions_are_true_of_their_numbers(
            v in proptest::collection::vec((1.0f64..1e7, 1.0f64..1e7, 0.0f64..0.6), 1..6)
        ) {
            const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
            let est = |x: f64, w: f64| est(x, Some(Ci(Some(x * (1.0 - w)), Some(x * (1.0 + w)))));
            let rows: Vec<(&str, Est, Est)> = v
                .iter()
                .enumerate()
                .map(|(i, &(x, y, w))| (NAMES[i], est(x, w), est(y, w)))
                .collect();
            let s = load(&rows, 1_000_000, "With 5 busy threads on 2 CPUs");
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
            let cells: Vec<(SweepCell, SweepCell)> = v
                .iter()
                .enumerate()
                .map(|(i, &(x, y, _))| (cell(NAMES[i], 10_000, 0, 50_000, x), cell(NAMES[i], 10_000, 0, 1, y)))
                .collect();
            let pairs: Vec<(&SweepCell, &SweepCell)> = cells.iter().map(|(h, l)| (h, l)).collect();
            let s = slack(&pairs, 50_000, 1, 10_000);
            prop_assert!(s.check().is_ok(), "{:?}", s.check());
        }
    }
}
