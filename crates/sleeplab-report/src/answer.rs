//! The answer first: what a person came for, in the few lines the survey prints before
//! anything else and the report opens with. How long a sleep takes here, the way to wait
//! that this machine rewards (measured), and the largest causes of lateness found, each
//! with the change that removes it. Every line is a [`Sentence`] whose claims are checked
//! against its numbers; the terminal and the page draw the same [`Answer`].

use crate::findings::{
    MATTERS_NS, Rounding, SLEEP_CALLS, common_stat, first_traced, quote, rounding, short_request,
    slack_effect, sleep_call,
};
use crate::view::Results;
use sleeplab_account::{CellAccount, Component, Machine};
use sleeplab_stats::{
    BY_POINT_VALUE, Claim, Est, Extreme, INDISTINGUISHABLE, Order, RankBy, Sentence, Stat,
    and_list, basis_note, extreme_index, interval_text, order, small_n, units::ns, units::num,
    units::pct, wrap,
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
        let mut causes: Vec<Cause> = [slack_found, rounding_cause(r), traced]
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
            let wrapped = wrap(&lead, &l.sentence.text, WIDTH, 2);
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
/// under 5 % of a core (std-sleep: …)": the pace stage's contenders whose CPU is under
/// the bound by point value, ranked over their intervals over blocks: the least only
/// where its interval clears every other's, else the least by point value, said to be
/// indistinguishable from those it does not clear.
fn waiting(r: &Results<'_>) -> Option<Sentence> {
    let (_, p) = r.pace()?;
    let stat = common_stat(
        &[Stat::P99, Stat::P90],
        p.results.iter().map(|x| x.error.count),
    )?;
    let cheap: Vec<_> = p
        .results
        .iter()
        .filter(|x| x.cpu_percent <= CPU_BOUND_PERCENT)
        .filter_map(|x| Some((x, x.est(stat)?)))
        .collect();
    let among: Vec<f64> = cheap.iter().map(|(_, e)| e.value).collect();
    let best = extreme_index(&among, Extreme::Least, RankBy::Signed)?;
    let mut s = Sentence::default();
    let (chosen, chosen_est) = cheap[best];
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
    if cheap.len() == 1 {
        text.push_str(&format!(
            ", the only way to wait under {bound} measured (CPU by point value)"
        ));
    } else {
        let ests: Vec<Est> = cheap.iter().map(|(_, e)| *e).collect();
        s.rank_over(Extreme::Least, best, among.clone(), ests.clone());
        let tied: Vec<String> = cheap
            .iter()
            .enumerate()
            .filter(|&(i, (_, e))| i != best && !chosen_est.below(e))
            .map(|(_, (x, _))| format!("`{}`", x.strategy))
            .collect();
        text.push_str(&format!(
            ", the least {stat} of the {} ways to wait under {bound} (CPU by point value)",
            cheap.len()
        ));
        if !tied.is_empty() {
            text.push_str(&format!(
                ", {BY_POINT_VALUE}: {INDISTINGUISHABLE} from {}{}",
                and_list(&tied),
                basis_note(&ests.iter().collect::<Vec<_>>())
            ));
        }
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

/// Timer slack, where the slack sweep shows it adds to a short sleep
/// ([`slack_effect`]: the interval of the median difference lies above zero, and the
/// median is at least the `MATTERS_NS` under which the findings call it noise): the
/// same estimate the timer-slack finding states.
fn slack(r: &Results<'_>) -> Option<Cause> {
    let e = slack_effect(r)?;
    let zero = Est::exact(0.0);
    if order(&zero, &e.added) != Order::Below || e.added.value < MATTERS_NS {
        return None;
    }
    let mut s = Sentence::default();
    s.claim(Claim::Verdict {
        stat: Stat::Median,
        a: zero,
        b: e.added,
        stated: Order::Below,
    });
    s.claim(Claim::Median {
        of: e.diffs.iter().map(|d| d.value).collect(),
        value: e.added.value,
    });
    let threshold = ns(MATTERS_NS);
    s.claim(Claim::Threshold {
        shown: threshold.clone(),
    });
    s.push(&format!(
        "timer slack adds a median {} {} to a sleep of 1–100 µs here (the median of {} \
         differences between the median sleeps at {} slack and at {}; above {threshold}). \
         Fix: set the timer slack to 1 ns (prctl PR_SET_TIMERSLACK); sleeplab's \
         PreciseSleeper does.",
        ns(e.added.value),
        interval_text(e.added.ci, ns),
        e.diffs.len(),
        ns(e.high as f64),
        ns(e.low as f64),
    ));
    Some(Cause {
        label: "timer slack",
        adds_ns: e.added.value,
        sentence: s,
    })
}

/// A millisecond API rounding a short timeout up ([`rounding`], the rule the
/// poll-rounding finding states), against its nanosecond twin where that was measured.
fn rounding_cause(r: &Results<'_>) -> Option<Cause> {
    let Rounding {
        request_ns,
        rounded,
        fine,
    } = rounding(r)?;
    let ms = rounded[0];
    let twin = if ms.mechanism == "poll" {
        "ppoll"
    } else {
        "epoll-pwait2"
    };
    let fine = fine.into_iter().find(|c| c.mechanism == twin)?;
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
        ns(request_ns as f64),
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

/// The change that removes an idle CPU's part of a wake.
const IDLE_FIX: &str = "end each wait in a short spin (PreciseSleeper), or keep the CPU out \
                        of deep idle (`sleeplab tune` measures it)";

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
        Component::IdleDelivery => Some((
            "the timer fired on an idle CPU and reached the guest that much later (on a \
             VM, read as the host running the halted vCPU again)",
            IDLE_FIX,
        )),
        Component::IdleWakeup => Some((
            "the thread was woken on an idle CPU and waited that long for it to run",
            IDLE_FIX,
        )),
        Component::RunQueue => Some((
            "another thread held the CPU",
            "a real-time scheduling policy, or fewer busy threads than CPUs",
        )),
        _ => None,
    }
}

/// The traced cell the answer reads: the [`first_traced`] result's cell of a plain sleep
/// at 1 ms at its lowest load, else its first cell with a typical wake.
fn traced_cell<'a>(r: &Results<'a>) -> Option<(CellAccount<'a>, Machine)> {
    let (t, machine) = first_traced(r)?;
    let with_typical = |c: &&CellAccount<'a>| c.explanation.typical.is_some();
    let lowest = t.cells.iter().map(|c| c.load).min()?;
    let cell = t
        .cells
        .iter()
        .filter(with_typical)
        .find(|c| {
            c.requested_ns == 1_000_000
                && c.load == lowest
                && SLEEP_CALLS.contains(&c.mechanism.as_ref())
        })
        .or_else(|| t.cells.iter().find(with_typical))?;
    Some((cell.clone(), machine))
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
         it on average {} ({of_any}, {BY_POINT_VALUE}): {what}. Fix: {fix}.",
        ns(c.requested_ns as f64),
        c.mechanism,
        small_n(x.lateness.count),
        ns(mean),
        biggest.phrase(machine),
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

    /// The fixture's slack sweep leaves slack's effect undecided (the timer-slack
    /// finding says "unclear"): the answer does not name it as a cause.
    #[test]
    fn an_undecided_slack_effect_is_no_cause() {
        let top = survey_fixture();
        let a = Answer::of(&Results::of(&top));
        let causes: Vec<&str> = a
            .lines
            .iter()
            .map(|l| l.label.as_str())
            .filter(|l| l.starts_with("Cause "))
            .collect();
        assert_eq!(causes, ["Cause 1, millisecond API"], "{a:#?}");
    }

    /// A slack sweep whose every pair took 50 µs longer at 50 µs slack than at 1 ns, over
    /// rounds that decide: timer slack is a cause, ranked below poll's millisecond.
    #[test]
    fn a_decided_slack_effect_is_a_cause_ranked_by_the_time_it_adds() {
        use crate::testdata::{cell, result, survey, sweep};
        use sleeplab_results::model::ExperimentData;
        // The main sweep (more cells than the slack sweep): poll rounds up to 1 ms.
        let mut main = Vec::new();
        for d in [1_000u64, 10_000, 1_000_000] {
            let poll = d.max(1_000_000) as f64 + 80_000.0;
            for (m, median) in [
                ("nanosleep", d as f64 + 60_000.0),
                ("poll", poll),
                ("ppoll", d as f64 + 61_000.0),
            ] {
                main.push(cell(m, d, 0, 50_000, median));
            }
        }
        let mut slack = Vec::new();
        for d in [1_000u64, 10_000, 100_000] {
            slack.push(cell("nanosleep", d, 0, 50_000, d as f64 + 60_000.0));
            slack.push(cell("nanosleep", d, 0, 1, d as f64 + 10_000.0));
        }
        let top = survey(vec![
            ("sweep", result(ExperimentData::Sweep(sweep(main)))),
            ("sweep-slack", result(ExperimentData::Sweep(sweep(slack)))),
        ]);
        let a = Answer::of(&Results::of(&top));
        let labels: Vec<&str> = a.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Sleeping",
                "Cause 1, millisecond API",
                "Cause 2, timer slack"
            ],
            "{a:#?}"
        );
        for l in &a.lines {
            l.sentence.check().unwrap();
        }
        let t = &a.lines[2].sentence.text;
        assert!(t.starts_with("Timer slack adds a median 50 µs"), "{t}");
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
        assert!(t.contains("the timer fired on an idle CPU"), "{t}");
        assert!(t.contains("Fix: end each wait in a short spin"), "{t}");
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
