//! Sentences with their claims: every sentence the tool prints about its numbers (report
//! findings, chart captions, verdicts) is built as a [`Sentence`]: the text, and beside it
//! the claims the text makes, each with the numbers it rests on. [`Sentence::check`]
//! verifies the claims against those numbers, so tests (property tests over synthetic
//! results) can check every sentence generically instead of parsing strings:
//!
//! * a quoted statistic passes the quantile rule for its sample, its value appears in the
//!   text as formatted, and a sample under [`SMALL_SAMPLE`] is stated (`n = 22`);
//! * a change is described by the word its sign calls for (grew/shrank, slower/faster,
//!   longer/shorter) and compares one statistic with itself;
//! * "most"/"least" name the extreme of the values they rank, by the key they say
//!   (signed, or by size);
//! * a threshold the claim applies is stated in it;
//! * a median is the median of its values (even n: the mean of the two middle ones);
//! * a wait with fewer than [`BLOCKED_CSW`] voluntary context switches per call is said
//!   to return without sleeping ([`NEVER_BLOCKED`]), never called a sleep;
//! * a verdict between two values (lower, faster, "grew", meets a tolerance, CPU)
//!   holds only where their 95 % intervals separate and rest on a basis that decides
//!   ([`Claim::Verdict`], `verdict`, `basis`): intervals over the units the
//!   measurement varies by (blocks, rounds, runs: `stats::units`) or a fixed threshold,
//!   never intervals of pooled samples; a bare point value only where the text says
//!   [`BY_POINT_VALUE`], and another run's units only where it says [`WITHIN_RUN`].
//!   Where no interval decides, the text says [`INDISTINGUISHABLE`] (and the number of
//!   units, where they were too few). A change stated as a rise or a fall needs the
//!   verdict beside it; a ranking carries its intervals (the one named must clear every
//!   other's) or says it orders point values; "no change" needs an equivalence: the
//!   interval of the difference inside a stated margin ([`Claim::Equivalent`]).
//!
//! The claims live in this crate, below every experiment and the report, their main
//! user: this module imports only `stats` and `output`, so the experiments whose own
//! renders state a verdict (pace's frontier, advise's reason) use it without importing
//! the report (docs/ARCHITECTURE.md draws its layer).

mod basis;
mod verdict;

pub use basis::{
    BY_POINT_VALUE, Basis, Est, INDISTINGUISHABLE, NO_UNITS, Order, WITHIN_RUN, basis_note, order,
    order_by_point, rests_on_units,
};
pub use verdict::{
    difference, equivalent, indistinguishable, interval_text, median_est, with_interval,
};

use crate::stats::{Stat, Summary};

/// Samples below this size are named in a sentence that quotes them (`n = 22`).
pub const SMALL_SAMPLE: u64 = 100;

/// Voluntary context switches per call below which a call did not block.
pub const BLOCKED_CSW: f64 = 0.5;

/// The words a sentence uses for a call that did not block.
pub const NEVER_BLOCKED: &str = "without sleeping";

/// The rule behind [`NEVER_BLOCKED`] as a sentence states it: `under 0.5 voluntary
/// context switches per call` (from [`BLOCKED_CSW`], so text and check agree).
pub fn never_blocked_rule() -> String {
    format!("under {BLOCKED_CSW} voluntary context switches per call")
}

/// The direction of a change, and the words for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The value went up.
    Up,
    /// The value went down.
    Down,
    /// The value stayed within the tolerance.
    Same,
}

/// Which pair of words describes a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// grew / shrank / did not change.
    Grew,
    /// slower / faster / as fast (durations of the same thing).
    Slower,
    /// longer / shorter / as long.
    Longer,
}

impl Verb {
    /// The word for `d`.
    pub fn word(self, d: Direction) -> &'static str {
        match (self, d) {
            (Verb::Grew, Direction::Up) => "grew",
            (Verb::Grew, Direction::Down) => "shrank",
            (Verb::Grew, Direction::Same) => "did not change",
            (Verb::Slower, Direction::Up) => "slower",
            (Verb::Slower, Direction::Down) => "faster",
            (Verb::Slower, Direction::Same) => "as fast",
            (Verb::Longer, Direction::Up) => "longer",
            (Verb::Longer, Direction::Down) => "shorter",
            (Verb::Longer, Direction::Same) => "as long",
        }
    }
}

/// The direction from `from` to `to`, where a relative change within `tolerance`
/// (e.g. 0.02 for 2 %) is no change.
pub fn direction(from: f64, to: f64, tolerance: f64) -> Direction {
    let scale = from.abs().max(to.abs()).max(f64::MIN_POSITIVE);
    if (to - from).abs() <= tolerance * scale {
        Direction::Same
    } else if to > from {
        Direction::Up
    } else {
        Direction::Down
    }
}

/// Whether a ranking names the largest or the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extreme {
    /// "most", "largest", "slowest".
    Most,
    /// "least", "smallest", "cheapest".
    Least,
}

/// What a ranking orders by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankBy {
    /// The signed values.
    Signed,
    /// Their size (absolute value): "changed least".
    Size,
}

/// One claim a sentence makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// A statistic of a sample of `n` is quoted, written as `shown`.
    Quote {
        /// Which statistic.
        stat: Stat,
        /// Its sample size.
        n: u64,
        /// Its value as the text writes it.
        shown: String,
    },
    /// A change of `stat` from `from` to `to`, described with `verb`'s word for
    /// `direction` (within `tolerance`, relative).
    Change {
        /// The one statistic both sides are.
        stat: Stat,
        /// Before.
        from: f64,
        /// After.
        to: f64,
        /// The pair of words.
        verb: Verb,
        /// The relative change below which it is "no change".
        tolerance: f64,
        /// The direction the text states.
        stated: Direction,
    },
    /// `among[chosen]` is the `extreme` of `among` by `by`.
    Rank {
        /// Most or least.
        extreme: Extreme,
        /// Signed or by size.
        by: RankBy,
        /// Index of the one named.
        chosen: usize,
        /// Every value ranked.
        among: Vec<f64>,
        /// Their estimates with 95 % intervals (the one named must clear every
        /// other's, or the text says [`INDISTINGUISHABLE`]); empty for a ranking of
        /// point values, which the text must call one ([`BY_POINT_VALUE`]).
        intervals: Vec<Est>,
    },
    /// `a` and `b`, two values of `stat` with their intervals, are ordered as `stated`:
    /// below or above only where the intervals separate, indistinguishable (and said to
    /// be) where they overlap.
    Verdict {
        /// The statistic both are.
        stat: Stat,
        /// The first.
        a: Est,
        /// The second (a fixed threshold: [`Est::exact`]).
        b: Est,
        /// The order the text states.
        stated: Order,
    },
    /// `a` and `b`, two values of `stat`, are the same within `margin` (absolute, in
    /// their unit; written `shown` in the text): the interval of `a − b` lies inside
    /// ±`margin` (two one-sided tests), both sides on a basis that decides.
    Equivalent {
        /// The statistic both are.
        stat: Stat,
        /// The first.
        a: Est,
        /// The second.
        b: Est,
        /// The margin, absolute.
        margin: f64,
        /// The margin as the text states it (`2 %`, `2 µs`).
        shown: String,
    },
    /// `of / to` is quoted as `shown` (written by [`ratio`]): two values of the same
    /// statistic `stat`, which the text names.
    Ratio {
        /// The statistic both values are.
        stat: Stat,
        /// The numerator.
        of: f64,
        /// The denominator.
        to: f64,
        /// The ratio as the text writes it.
        shown: String,
    },
    /// A threshold the claim applies, as the text states it.
    Threshold {
        /// The threshold as written, e.g. `100 µs`.
        shown: String,
    },
    /// `value` is the median of `of`.
    Median {
        /// The values.
        of: Vec<f64>,
        /// The median claimed.
        value: f64,
    },
    /// A wait named in the sentence, with its voluntary context switches per call.
    Blocking {
        /// Its name as written.
        name: String,
        /// Voluntary context switches per call.
        voluntary_csw_per_call: f64,
        /// Whether the sentence calls it a sleep (it blocked).
        called_a_sleep: bool,
    },
}

/// A sentence and the claims it makes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sentence {
    /// The text.
    pub text: String,
    /// Its claims.
    pub claims: Vec<Claim>,
}

/// The median of `values` (even n: the mean of the two middle ones); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 0 {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    })
}

/// Names joined as prose: `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// ` (n = 22)` for a sample under [`SMALL_SAMPLE`], else nothing: a sentence that
/// quotes a small sample names its size.
pub fn small_n(n: u64) -> String {
    if n < SMALL_SAMPLE {
        format!(" (n = {n})")
    } else {
        String::new()
    }
}

/// `, n = 22` for a sample under [`SMALL_SAMPLE`], else nothing (inside parentheses).
pub fn n_clause(n: u64) -> String {
    if n < SMALL_SAMPLE {
        format!(", n = {n}")
    } else {
        String::new()
    }
}

/// A ratio as every sentence writes it: one decimal and `×` (`4.3×`), so a caption and
/// a finding that compare the same pair write the same figure.
pub fn ratio(r: f64) -> String {
    format!("{r:.1}×")
}

/// The index of the `extreme` of `values` by `by` (ties: the first).
pub fn extreme_index(values: &[f64], extreme: Extreme, by: RankBy) -> Option<usize> {
    let key = |v: f64| match by {
        RankBy::Signed => v,
        RankBy::Size => v.abs(),
    };
    let mut best: Option<usize> = None;
    for (i, &v) in values.iter().enumerate() {
        let better = match best {
            None => true,
            Some(b) => match extreme {
                Extreme::Most => key(v) > key(values[b]),
                Extreme::Least => key(v) < key(values[b]),
            },
        };
        if better {
            best = Some(i);
        }
    }
    best
}

impl Sentence {
    /// A sentence of `text` with no claims yet.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            claims: Vec::new(),
        }
    }

    /// Appends text.
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Records a claim.
    pub fn claim(&mut self, c: Claim) -> &mut Self {
        self.claims.push(c);
        self
    }

    /// Records that `among[chosen]` is the `extreme` of `among` (signed values) by point
    /// value, a [`Claim::Rank`] without intervals (the text must say
    /// [`BY_POINT_VALUE`]), where there are two or more to rank.
    pub fn rank_by_point(&mut self, extreme: Extreme, chosen: usize, among: &[f64]) -> &mut Self {
        self.rank_over(extreme, chosen, among.to_vec(), Vec::new())
    }

    /// Records that `among[chosen]` is the `extreme` of `among` (signed values) over
    /// their `intervals` (one per value: the one named must clear every other's, or the
    /// text says [`INDISTINGUISHABLE`]), a [`Claim::Rank`], where there are two or more
    /// to rank.
    pub fn rank_over(
        &mut self,
        extreme: Extreme,
        chosen: usize,
        among: Vec<f64>,
        intervals: Vec<Est>,
    ) -> &mut Self {
        if among.len() >= 2 {
            self.claim(Claim::Rank {
                extreme,
                by: RankBy::Signed,
                chosen,
                among,
                intervals,
            });
        }
        self
    }

    /// `shown`, a value of `stat` over `n` samples, with its [`Claim::Quote`] recorded;
    /// returned with ` (n = 22)` appended for a sample under [`SMALL_SAMPLE`].
    pub fn quoted(&mut self, stat: Stat, n: u64, shown: String) -> String {
        let text = format!("{shown}{}", small_n(n));
        self.claim(Claim::Quote { stat, n, shown });
        text
    }

    /// The indices of the least and the most of `values` (signed), each recorded as a
    /// [`Claim::Rank`] of point values (the text must say [`BY_POINT_VALUE`]); `None`,
    /// and nothing recorded, unless the most exceeds the least.
    pub fn least_and_most(&mut self, values: &[f64]) -> Option<(usize, usize)> {
        let lo = extreme_index(values, Extreme::Least, RankBy::Signed)?;
        let hi = extreme_index(values, Extreme::Most, RankBy::Signed)?;
        if values[hi] <= values[lo] {
            return None;
        }
        for (extreme, chosen) in [(Extreme::Least, lo), (Extreme::Most, hi)] {
            self.rank_by_point(extreme, chosen, values);
        }
        Some((lo, hi))
    }

    /// `stat` of `s` as `fmt` writes it, with its [`Claim::Quote`] recorded (the checker
    /// then demands that text and, for a sample under [`SMALL_SAMPLE`], `n = …`); `None`,
    /// and nothing recorded, where the sample cannot resolve the statistic.
    pub fn quote(
        &mut self,
        s: &Summary,
        stat: Stat,
        fmt: impl Fn(f64) -> String,
    ) -> Option<String> {
        let shown = fmt(s.get(stat)?);
        self.claim(Claim::Quote {
            stat,
            n: s.count,
            shown: shown.clone(),
        });
        Some(shown)
    }

    /// Appends another sentence (its text and claims).
    pub fn append(&mut self, other: Sentence) -> &mut Self {
        self.text.push_str(&other.text);
        self.claims.extend(other.claims);
        self
    }

    /// Checks every claim against its numbers and the text; the first broken one.
    pub fn check(&self) -> Result<(), String> {
        let t = &self.text;
        let fail = |what: String| Err(format!("{what} in: {t}"));
        for c in &self.claims {
            match c {
                Claim::Quote { stat, n, shown } => {
                    if !stat.resolved_by(*n) {
                        return fail(format!("{stat} quoted from n = {n}"));
                    }
                    if !t.contains(shown.as_str()) {
                        return fail(format!("{stat} {shown} not in the text"));
                    }
                    if *n < SMALL_SAMPLE && !t.contains(&format!("n = {n}")) {
                        return fail(format!("a sample of {n} not stated"));
                    }
                }
                Claim::Change {
                    stat,
                    from,
                    to,
                    verb,
                    tolerance,
                    stated,
                } => {
                    verdict::check_change_backed(t, &self.claims, *stat, *from, *to, *stated)
                        .or_else(fail)?;
                    let truth = direction(*from, *to, *tolerance);
                    if truth != *stated {
                        return fail(format!(
                            "{from} → {to} is {truth:?}, the text says {stated:?}"
                        ));
                    }
                    if !t.contains(verb.word(*stated)) {
                        return fail(format!("the word \"{}\" missing", verb.word(*stated)));
                    }
                }
                Claim::Rank {
                    extreme,
                    by,
                    chosen,
                    among,
                    intervals,
                } => {
                    let want = extreme_index(among, *extreme, *by);
                    let key = |i: usize| match by {
                        RankBy::Signed => among[i],
                        RankBy::Size => among[i].abs(),
                    };
                    let ok = want.is_some_and(|w| *chosen < among.len() && key(w) == key(*chosen));
                    if !ok {
                        return fail(format!(
                            "{extreme:?} by {by:?} of {among:?} is not #{chosen}"
                        ));
                    }
                    if among.len() < 2 {
                        return fail("a ranking of fewer than two".to_string());
                    }
                    let most = *extreme == Extreme::Most;
                    verdict::check_ranked(t, most, *chosen, among, intervals).or_else(fail)?;
                }
                Claim::Verdict { stat, a, b, stated } => {
                    verdict::check_verdict(t, *stat, a, b, *stated).or_else(fail)?;
                }
                Claim::Equivalent {
                    stat,
                    a,
                    b,
                    margin,
                    shown,
                } => {
                    verdict::check_equivalent(t, *stat, a, b, *margin, shown).or_else(fail)?;
                }
                Claim::Ratio {
                    stat,
                    of,
                    to,
                    shown,
                } => {
                    if *shown != ratio(of / to) {
                        return fail(format!("{of} / {to} is {}, not {shown}", ratio(of / to)));
                    }
                    if !t.contains(shown.as_str()) {
                        return fail(format!("ratio {shown} not in the text"));
                    }
                    if !t.contains(stat.name()) {
                        return fail(format!("the ratio's statistic ({stat}) not named"));
                    }
                }
                Claim::Threshold { shown } => {
                    if !t.contains(shown.as_str()) {
                        return fail(format!("threshold {shown} not stated"));
                    }
                }
                Claim::Median { of, value } => {
                    let m = median(of);
                    if m.is_none_or(|m| (m - value).abs() > 1e-9 * m.abs().max(1.0)) {
                        return fail(format!("{value} is not the median {m:?} of {of:?}"));
                    }
                }
                Claim::Blocking {
                    name,
                    voluntary_csw_per_call,
                    called_a_sleep,
                } => {
                    let blocked = *voluntary_csw_per_call >= BLOCKED_CSW;
                    if *called_a_sleep && !blocked {
                        return fail(format!(
                            "{name} ({voluntary_csw_per_call:.2} voluntary switches per call) called a sleep"
                        ));
                    }
                    if !blocked && !t.contains(NEVER_BLOCKED) {
                        return fail(format!("{name} never blocked and the text does not say so"));
                    }
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Sentence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests;
