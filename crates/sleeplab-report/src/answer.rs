//! The answer first: what a person came for, in the few lines the survey prints before
//! anything else and the report opens with. How long a sleep takes here, the way to wait
//! that this machine rewards (measured), and the largest causes of lateness found, each
//! with the change that removes it. Every line is a [`Sentence`] whose claims are checked
//! against its numbers; the terminal and the page draw the same [`Answer`].

use crate::findings::{common_stat, quote, short_request, sleep_call};
use crate::view::Results;
use sleeplab_results::sweep::SweepCell;
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Extreme, RankBy, Sentence, Stat, extreme_index, ratio, small_n,
    units::ns, units::num, units::pct,
};

/// The most CPU a way of waiting may cost to be the one this machine rewards, % of a core.
pub const CPU_BOUND_PERCENT: f64 = 5.0;

/// The most causes the answer names.
pub const MAX_CAUSES: usize = 3;

/// The widest line the terminal answer prints, columns.
pub const WIDTH: usize = 100;

/// The most lines the terminal answer prints (one screen with the report's path).
pub const MAX_LINES: usize = 22;

/// One line of the answer: what it answers, and the sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerLine {
    /// The question it answers, as a short label (`Sleeping`, `Waiting precisely`,
    /// `Cause 1, timer slack`, …).
    pub label: String,
    /// The answer, with its claims.
    pub sentence: Sentence,
}

/// The answer a result gives, first; empty where the result holds none of its inputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    /// Its lines, in order: sleeping, waiting precisely, then the causes, largest first.
    pub lines: Vec<AnswerLine>,
}

/// A cause of lateness: the time it adds to a short sleep (the ranking key) and the
/// sentence that says it with its fix.
struct Cause {
    label: &'static str,
    adds_ns: f64,
    sentence: Sentence,
}

impl Answer {
    /// The answer of `r`.
    pub fn of(r: &Results<'_>) -> Self {
        let mut lines = Vec::new();
        if let Some(s) = sleeping(r) {
            lines.push(line("Sleeping", s));
        }
        if let Some(s) = waiting(r) {
            lines.push(line("Waiting precisely", s));
        }
        let mut causes: Vec<Cause> = [slack(r), rounding(r)].into_iter().flatten().collect();
        causes.sort_by(|a, b| b.adds_ns.total_cmp(&a.adds_ns));
        causes.truncate(MAX_CAUSES);
        let adds: Vec<f64> = causes.iter().map(|c| c.adds_ns).collect();
        for (i, mut c) in causes.into_iter().enumerate() {
            if i == 0 && adds.len() >= 2 {
                // The first is the largest: said once, on its line.
                c.sentence.rank_by_point(Extreme::Most, 0, &adds);
                c.sentence.push(&format!(
                    " The largest of the {} causes found here, by the median time it adds \
                     to a short sleep, {BY_POINT_VALUE}.",
                    adds.len()
                ));
            }
            lines.push(line(&format!("Cause {}, {}", i + 1, c.label), c.sentence));
        }
        Self { lines }
    }

    /// The answer for a terminal: each line `label: sentence`, wrapped at [`WIDTH`]
    /// columns with a hanging indent, at most [`MAX_LINES`] lines in all.
    pub fn terminal(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for l in &self.lines {
            let lead = format!("{}: ", l.label);
            out.extend(wrap(&lead, &l.sentence.text, WIDTH));
        }
        out.truncate(MAX_LINES);
        let mut s = out.join("\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }
}

fn line(label: &str, sentence: Sentence) -> AnswerLine {
    AnswerLine {
        label: label.to_string(),
        sentence,
    }
}

/// "A 1 µs nanosleep took a median X (p99 Y); a 1 ms one, a median X (p99 Y)": the main
/// sweep's plain sleep with no load, at its short request and at 1 ms.
fn sleeping(r: &Results<'_>) -> Option<Sentence> {
    let m = r.main_sweep()?;
    let call = sleep_call(&m)?;
    let mut s = Sentence::default();
    let mut parts = Vec::new();
    for req in [short_request(&m), Some(1_000_000)].into_iter().flatten() {
        let Some(c) = m.cell(call, req, 0) else {
            continue;
        };
        let median = quote(&mut s, &c.summary, Stat::Median)?;
        let tail =
            quote(&mut s, &c.summary, Stat::P99).map_or(String::new(), |v| format!(", p99 {v}"));
        parts.push(format!(
            "asked for {}, `{call}` took a median {median}{tail}{}",
            ns(req as f64),
            small_n(c.summary.count)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    s.push(&format!("{} (no load).", capitalized(&parts.join("; "))));
    Some(s)
}

/// "At 60 Hz, `precise` woke p99 X late at Y % of a core, the least p99 of the N ways
/// under 5 % of a core, by point value (std-sleep: …)": the pace stage's contenders.
fn waiting(r: &Results<'_>) -> Option<Sentence> {
    let (_, p) = r.pace()?;
    let stat = common_stat(
        &[Stat::P99, Stat::P90],
        p.results.iter().map(|x| x.error.count),
    )?;
    let cheap: Vec<_> = p
        .results
        .iter()
        .filter(|x| x.cpu_percent <= CPU_BOUND_PERCENT && x.error.get(stat).is_some())
        .collect();
    let among: Vec<f64> = cheap
        .iter()
        .map(|x| x.error.get(stat).unwrap_or(0.0))
        .collect();
    let best = extreme_index(&among, Extreme::Least, RankBy::Signed)?;
    let mut s = Sentence::default();
    let chosen = cheap[best];
    let v = quote(&mut s, &chosen.error, stat)?;
    let bound = format!("{} of a core", pct(CPU_BOUND_PERCENT));
    s.claim(Claim::Threshold {
        shown: bound.clone(),
    });
    let mut text = format!(
        "at {} Hz, `{}` woke {stat} {v} late at {} of a core{}",
        num(p.config.rate_hz),
        chosen.strategy,
        pct(chosen.cpu_percent),
        small_n(chosen.error.count)
    );
    if cheap.len() >= 2 {
        s.rank_by_point(Extreme::Least, best, &among);
        text.push_str(&format!(
            ", the least {stat} of the {} ways to wait under {bound}, {BY_POINT_VALUE}",
            cheap.len()
        ));
    }
    if let Some(plain) = p
        .results
        .iter()
        .find(|x| x.strategy == "std-sleep" && x.strategy != chosen.strategy)
    {
        if let Some(pv) = quote(&mut s, &plain.error, stat) {
            text.push_str(&format!(
                " (a plain std-sleep: {stat} {pv} at {})",
                pct(plain.cpu_percent)
            ));
        }
    }
    s.push(&format!("{}.", capitalized(&text)));
    Some(s)
}

/// Timer slack: the main sweep's plain sleep at its short request under the high and the
/// low slack of the slack sweep, where the high slack's median is the larger.
fn slack(r: &Results<'_>) -> Option<Cause> {
    let sw = r.slack_sweep()?;
    let m = r.main_sweep()?;
    let call = sleep_call(&m)?;
    let req = short_request(&m)?;
    let (hi, lo) = sw
        .pairs()
        .into_iter()
        .find(|(h, _)| h.mechanism == call && h.requested_ns == req && h.load == 0)?;
    let adds = hi.summary.median_ns - lo.summary.median_ns;
    if adds <= 0.0 {
        return None;
    }
    let mut s = Sentence::default();
    let (a, b) = (
        quote(&mut s, &hi.summary, Stat::Median)?,
        quote(&mut s, &lo.summary, Stat::Median)?,
    );
    let shown = ratio(hi.summary.median_ns / lo.summary.median_ns);
    s.claim(Claim::Ratio {
        stat: Stat::Median,
        of: hi.summary.median_ns,
        to: lo.summary.median_ns,
        shown: shown.clone(),
    });
    s.push(&format!(
        "asked for {}, `{call}` took a median {a}{} at the thread's {} timer slack and {b}{} \
         at {} ({shown} the median at the lower slack). Fix: set the timer slack to 1 ns \
         (prctl PR_SET_TIMERSLACK); sleeplab's PreciseSleeper does.",
        ns(req as f64),
        small_n(hi.summary.count),
        ns(sw.high as f64),
        small_n(lo.summary.count),
        ns(sw.low as f64),
    ));
    Some(Cause {
        label: "timer slack",
        adds_ns: adds,
        sentence: s,
    })
}

/// A millisecond API: `poll` (or `epoll`) at the short request against its nanosecond
/// twin (`ppoll`, `epoll-pwait2`), where the first took a millisecond or more.
fn rounding(r: &Results<'_>) -> Option<Cause> {
    let m = r.main_sweep()?;
    let req = short_request(&m)?;
    let pair = |a: &str, b: &str| -> Option<(&SweepCell, &SweepCell)> {
        Some((m.cell(a, req, 0)?, m.cell(b, req, 0)?))
    };
    let (ms, fine) = pair("poll", "ppoll").or_else(|| pair("epoll", "epoll-pwait2"))?;
    if ms.summary.median_ns < 1_000_000.0 {
        return None;
    }
    let adds = ms.summary.median_ns - fine.summary.median_ns;
    let mut s = Sentence::default();
    let (a, b) = (
        quote(&mut s, &ms.summary, Stat::Median)?,
        quote(&mut s, &fine.summary, Stat::Median)?,
    );
    s.claim(Claim::Threshold {
        shown: "1 ms".into(),
    });
    s.push(&format!(
        "`{}` rounds a short timeout up to 1 ms: asked for {}, a median {a}{}, where `{}` \
         took {b}{}. Fix: `{}` (a nanosecond timeout).",
        ms.mechanism,
        ns(req as f64),
        small_n(ms.summary.count),
        fine.mechanism,
        small_n(fine.summary.count),
        fine.mechanism,
    ));
    Some(Cause {
        label: "millisecond API",
        adds_ns: adds,
        sentence: s,
    })
}

/// `text` with its first letter upper-case.
fn capitalized(text: &str) -> String {
    let mut c = text.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// `text` after `lead`, wrapped at `width` columns, the lines after the first indented
/// by two spaces.
fn wrap(lead: &str, text: &str, width: usize) -> Vec<String> {
    let mut out = vec![lead.trim_end().to_string()];
    let mut words = text.split_whitespace().peekable();
    while let Some(first) = words.next() {
        // A number and its unit (`0.37 %`, `1.08 ms,`) stay on one line.
        let mut word = first.to_string();
        if let Some(unit) = words.next_if(|w| is_unit(w)) {
            word = format!("{word} {unit}");
        }
        let last = out.last_mut().expect("one line at least");
        let (used, w) = (last.chars().count(), word.chars().count());
        if used + 1 + w > width && used > 2 {
            out.push(format!("  {word}"));
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(&word);
        }
    }
    out
}

/// Whether `word` is a unit (`%`, `ns`, `µs`, `ms`, `s`), with trailing punctuation.
fn is_unit(word: &str) -> bool {
    let bare = word.trim_end_matches([',', '.', ';', ':', ')']);
    ["%", "ns", "µs", "ms", "s"].contains(&bare)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::survey_fixture;

    #[test]
    fn the_fixture_answers_in_one_screen_of_checked_sentences() {
        let top = survey_fixture();
        let a = Answer::of(&Results::of(&top));
        assert!(a.lines.len() >= 3, "{a:#?}");
        for l in &a.lines {
            l.sentence.check().unwrap();
        }
        let t = a.terminal();
        assert!(t.lines().count() <= MAX_LINES, "{t}");
        for line in t.lines() {
            assert!(
                line.chars().count() <= WIDTH,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(
            t.starts_with("Sleeping: Asked for 1 µs, `nanosleep` took a median"),
            "{t}"
        );
    }

    #[test]
    fn causes_come_largest_first() {
        let top = survey_fixture();
        let a = Answer::of(&Results::of(&top));
        let labels: Vec<&str> = a.lines.iter().map(|l| l.label.as_str()).collect();
        let causes: Vec<&str> = labels
            .iter()
            .copied()
            .filter(|l| l.starts_with("Cause "))
            .collect();
        // poll's 1 ms rounding adds about a millisecond, the slack tens of µs.
        assert_eq!(
            causes,
            ["Cause 1, millisecond API", "Cause 2, timer slack"],
            "{labels:?}"
        );
    }

    #[test]
    fn wrapping_keeps_every_word_within_the_width() {
        let lines = wrap("Label: ", "aaa bbb ccc ddd eee", 12);
        assert_eq!(lines, ["Label: aaa", "  bbb ccc", "  ddd eee"]);
        assert_eq!(wrap("L: ", "", 12), ["L:"]);
        // A unit stays with its number.
        assert_eq!(wrap("L: ", "at 0.37 %).", 8), ["L: at", "  0.37 %)."]);
        assert_eq!(
            wrap("L: ", "took 1.08 ms, a", 12),
            ["L: took", "  1.08 ms, a"]
        );
    }

    #[test]
    fn an_empty_result_has_no_answer() {
        let top = crate::testdata::result(sleeplab_results::model::ExperimentData::Sweep(
            crate::testdata::sweep(vec![]),
        ));
        assert_eq!(Answer::of(&Results::of(&top)), Answer::default());
        assert_eq!(Answer::default().terminal(), "");
    }
}
