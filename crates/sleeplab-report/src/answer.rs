//! The answer first: what a person came for, in the few lines the survey prints before
//! anything else and the report opens with. How long a sleep takes here, the way to wait
//! that this machine rewards (measured), and the largest causes of lateness found, each
//! with the change that removes it. Every line is a [`Sentence`] whose claims are checked
//! against its numbers; the terminal and the page draw the same [`Answer`].

use crate::findings::{common_stat, quote, short_request, sleep_call};
use crate::view::Results;
use sleeplab_account::{CellAccount, Component, Machine};
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

/// The most lines the terminal answer prints: a 24-line screen with the survey's six
/// (blank lines, the hint and the report's path).
pub const MAX_LINES: usize = 18;

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
        let slack_found = slack(r);
        let traced = traced_cause(r, slack_found.is_none());
        let mut causes: Vec<Cause> = [slack_found, rounding(r), traced]
            .into_iter()
            .flatten()
            .collect();
        causes.sort_by(|a, b| b.adds_ns.total_cmp(&a.adds_ns));
        causes.truncate(MAX_CAUSES);
        let adds: Vec<f64> = causes.iter().map(|c| c.adds_ns).collect();
        for (i, mut c) in causes.into_iter().enumerate() {
            if i == 0 && adds.len() >= 2 {
                // The first is the largest: said once, on its line.
                c.sentence.rank_by_point(Extreme::Most, 0, &adds);
                c.sentence.push(&format!(
                    " (The largest of the {} causes by the time each adds, {BY_POINT_VALUE}.)",
                    adds.len()
                ));
            }
            lines.push(line(&format!("Cause {}, {}", i + 1, c.label), c.sentence));
        }
        Self { lines }
    }

    /// The answer for a terminal: each line `label: sentence`, wrapped at `WIDTH`
    /// columns with a hanging indent; at most `MAX_LINES` lines in all, the last
    /// answers left out whole where they would not fit (the report holds every one).
    pub fn terminal(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for l in &self.lines {
            let lead = format!("{}: ", l.label);
            let wrapped = wrap(&lead, &l.sentence.text, WIDTH);
            if out.len() + wrapped.len() > MAX_LINES {
                break;
            }
            out.extend(wrapped);
        }
        let mut s = out.join("\n");
        if !s.is_empty() {
            s.push('\n');
        }
        s
    }
}

fn line(label: &str, mut sentence: Sentence) -> AnswerLine {
    sentence.text = capitalized(&sentence.text);
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

/// What happened in a component of a wake, in a person's words, and the change that
/// would remove it (`None`: a component no setting removes, or one the answer says
/// elsewhere).
fn happened(c: Component) -> Option<(&'static str, &'static str)> {
    match c {
        Component::Entry => Some((
            "the timer was armed later than asked (a relative wait counts from its own \
             clock read; a coarse timeout is rounded up)",
            "an absolute deadline, in a nanosecond API",
        )),
        Component::Slack => Some((
            "the kernel let the timer fire late by the thread's timer slack",
            "set the timer slack to 1 ns (prctl PR_SET_TIMERSLACK)",
        )),
        Component::IdleDelivery | Component::IdleWakeup => Some((
            "the CPU was idle and took that long to wake (on a VM, the host running the \
             halted vCPU again)",
            "end each wait in a short spin (PreciseSleeper), or keep the CPU out of deep \
             idle (`sleeplab tune` measures it)",
        )),
        Component::RunQueue => Some((
            "another thread held the CPU",
            "a real-time scheduling policy, or fewer busy threads than CPUs",
        )),
        _ => None,
    }
}

/// The traced cell the answer reads: the first traced result's cell (as the findings
/// read it) of the plain sleep at 1 ms at its lowest load, else its first cell with a
/// typical wake.
fn traced_cell<'a>(r: &Results<'a>) -> Option<(CellAccount<'a>, Machine)> {
    let traced: Vec<_> = r
        .entries
        .iter()
        .filter_map(|e| Some((e, e.result.data.as_data().traced()?)))
        .filter(|(_, t)| !t.cells.is_empty())
        .collect();
    let (e, t) = traced
        .iter()
        .find(|(_, t)| !t.on_request)
        .or_else(|| traced.first())?;
    let machine = Machine::of(&e.result.fingerprint);
    let with_typical = |c: &&CellAccount<'a>| c.explanation.typical.is_some();
    let lowest = t.cells.iter().map(|c| c.load).min()?;
    let cell = t
        .cells
        .iter()
        .filter(with_typical)
        .find(|c| c.requested_ns == 1_000_000 && c.load == lowest && sleeps(&c.mechanism))
        .or_else(|| t.cells.iter().find(with_typical))?;
    Some((cell.clone(), machine))
}

/// Whether `name` is one of the plain sleeps the findings quote.
fn sleeps(name: &str) -> bool {
    [
        "nanosleep",
        "clock-nanosleep",
        "std-sleep",
        "clock-nanosleep-abs",
    ]
    .contains(&name)
}

/// The largest part of a traced wait's typical wake, where it is one a change removes
/// (timer slack only where no slack sweep said it already: `with_slack`; else the largest
/// part but the slack).
fn traced_cause(r: &Results<'_>, with_slack: bool) -> Option<Cause> {
    let (c, machine) = traced_cell(r)?;
    let x = c.explanation;
    let typical = x.typical.as_ref()?;
    // The parts ranked, timer slack left out where the slack sweep already said it.
    let ranked: Vec<(Component, f64)> = typical
        .ranked()
        .into_iter()
        .filter(|&(c, _)| with_slack || c != Component::Slack)
        .collect();
    let (biggest, mean) = *ranked.first()?;
    let (what, fix) = happened(biggest)?;
    let mut s = Sentence::default();
    let median = quote(&mut s, &x.lateness, Stat::Median)?;
    let among: Vec<f64> = ranked.iter().map(|&(_, v)| v).collect();
    s.rank_by_point(Extreme::Most, 0, &among);
    let of_any = if with_slack {
        "the most of any part"
    } else {
        "the most but the slack"
    };
    s.push(&format!(
        "a {} `{}` was a median {median} late{}; its typical wakes (p40–p60) spent {} of \
         it on average in {} ({of_any}, {BY_POINT_VALUE}): {what}. Fix: {fix}.",
        ns(c.requested_ns as f64),
        c.mechanism,
        small_n(x.lateness.count),
        ns(mean),
        biggest.label(machine),
    ));
    Some(Cause {
        label: "the kernel's account",
        adds_ns: mean,
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
        // The fixture holds no traced stage: its causes are the sweep's.
        // poll's 1 ms rounding adds about a millisecond, the slack tens of µs.
        assert_eq!(
            causes,
            ["Cause 1, millisecond API", "Cause 2, timer slack"],
            "{labels:?}"
        );
    }

    /// A traced 1 ms nanosleep whose typical wake is mostly the idle CPU's delivery:
    /// named in a person's words with its fix, and ranked among the sweep's causes.
    #[test]
    fn the_kernels_account_names_the_largest_part_and_its_fix() {
        use crate::testdata::{explain, explain_cell, result, survey, wakes};
        use sleeplab_results::model::ExperimentData;
        let w = wakes(
            200,
            &[
                (Component::IdleDelivery, 120_000),
                (Component::TimerIrq, 5_000),
            ],
            2,
            &[(Component::RunQueue, 900_000)],
        );
        let traced = result(ExperimentData::Explain(explain(
            vec![explain_cell("nanosleep", 1_000_000, 0, &w)],
            0,
        )));
        let top = survey(vec![("explain", traced)]);
        let a = Answer::of(&Results::of(&top));
        let cause = a
            .lines
            .iter()
            .find(|l| l.label.ends_with("the kernel's account"))
            .unwrap_or_else(|| panic!("{a:#?}"));
        cause.sentence.check().unwrap();
        let t = &cause.sentence.text;
        assert!(
            t.starts_with("A 1 ms `nanosleep` was a median 125 µs late"),
            "{t}"
        );
        assert!(t.contains("the CPU was idle"), "{t}");
        assert!(t.contains("Fix: end each wait in a short spin"), "{t}");
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
