//! The words of every [`Hint`]: what the experiments' and the report's sentences ask the
//! reader to do, said with this command line's flags. The one place below `cli.rs` and
//! the commands' own `Args` where a sentence names a flag; the layers below are handed
//! [`WORDING`] (`scripts/module_graph.py` fails on a flag named in a string there).

use crate::experiments::{Hint, Wording};

/// The command line's wording of the hints, handed to every run, render and report.
pub const WORDING: Wording = Wording(word);

/// `hint` in this command line's flags.
fn word(hint: Hint) -> String {
    match hint {
        Hint::LongerRun => "a longer --seconds".into(),
        Hint::RealtimePolicy => "a real-time policy (--policy fifo)".into(),
        Hint::CppZeroSleep => {
            "sleeplab runtimes --runtimes cpp --methods sleep_for-ns --durations 0".into()
        }
        Hint::Mechanisms(names) => format!("--mechanisms includes {names}"),
        Hint::Mlock => "--mlock".into(),
        Hint::ProbeMethods => "sleeplab runtimes --list".into(),
        Hint::Trace => "--trace".into(),
        Hint::Figure2 => "sleeplab sweep --mechanisms std-sleep,spin,seed-hybrid,precise --durations 1ns,10ns,100ns,1us,10us,100us,1ms,10ms,100ms,1s --iterations 100 --rounds 1 --json fig2.json, then sleeplab report fig2.json -o fig2-report".into(),
        Hint::Budget => "--budget".into(),
        Hint::Against => "--against".into(),
        Hint::Wide => "--wide".into(),
        Hint::Light => "--light".into(),
        Hint::IdleStates => "--idle-states".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use crate::experiments::advise::{Candidate, reason};
    use crate::experiments::pace::late_causes_intro;
    use crate::experiments::runtimes::{RuntimesConfig, in_force_notes};
    use crate::experiments::short::findings::{
        nanosleep_zero_vs_one, pselect_vs_yield, timerfd_vs_nanosleep,
    };
    use crate::probe::observe::InForce;
    use clap::{CommandFactory, Parser};

    /// Every hint, and the subcommands whose flags its words name.
    const HINTS: [(Hint, &[&str]); 13] = [
        (Hint::LongerRun, &["advise"]),
        (Hint::RealtimePolicy, &["advise"]),
        (Hint::CppZeroSleep, &["runtimes"]),
        (Hint::Mechanisms("pselect,yield"), &["short"]),
        (Hint::Mlock, &["runtimes"]),
        (Hint::ProbeMethods, &["runtimes"]),
        (Hint::Trace, &["pace", "sweep", "timers", "runtimes"]),
        (Hint::Figure2, &["sweep"]),
        (Hint::Budget, &["runtimes"]),
        (Hint::Against, &["compare"]),
        (Hint::Wide, &["explain", "sweep", "timers"]),
        (Hint::Light, &["explain"]),
        (Hint::IdleStates, &["explain"]),
    ];

    #[test]
    fn every_flag_a_hint_names_is_a_flag_of_its_commands() {
        // Built, so that global flags (`--wide`) reach every subcommand.
        let mut cli = Cli::command();
        cli.build();
        for (hint, commands) in HINTS {
            let words = WORDING.word(hint);
            let flags: Vec<&str> = words
                .split([' ', '(', ')'])
                .filter(|w| w.starts_with("--"))
                .collect();
            assert!(!flags.is_empty(), "{hint:?} names no flag: {words}");
            for name in commands {
                let sub = cli.find_subcommand(name).expect("a subcommand");
                for flag in &flags {
                    assert!(
                        sub.get_arguments()
                            .any(|a| a.get_long() == flag.strip_prefix("--")),
                        "{hint:?}: sleeplab {name} has no {flag}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_command_lines_hints_give_parse() {
        let figure2 = WORDING.word(Hint::Figure2);
        let (sweep, report) = figure2.split_once(", then ").expect("two commands");
        for line in [
            WORDING.word(Hint::CppZeroSleep),
            WORDING.word(Hint::ProbeMethods),
            sweep.to_string(),
            report.to_string(),
        ] {
            let parsed = Cli::try_parse_from(line.split(' '));
            assert!(parsed.is_ok(), "{line}: {parsed:?}");
        }
    }

    /// The sentences that hold hints read as they did when they named the flags
    /// themselves: results saved before and tests and docs that quote them agree.
    #[test]
    fn worded_sentences_read_as_before() {
        let undecided = Candidate {
            strategy: "precise".into(),
            timer_slack_ns: 1,
            waits: 1000,
            p50_ns: 9_000.0,
            p50_ci_ns: None,
            p99_ns: Some(19_000.0),
            p99_ci_ns: None,
            max_ns: 40_000,
            cpu_percent: 0.9,
            units: None,
            cpu_ci_percent: None,
        };
        let r = reason(&[undecided], 20_000, 0, false, WORDING).text;
        assert!(
            r.contains("); more waits (a longer --seconds) narrow the interval. The lowest p99"),
            "{r}"
        );
        assert!(r.ends_with(" This run cannot promise that tolerance; consider a real-time policy (--policy fifo), an isolated CPU, or a looser tolerance."), "{r}");
        assert_eq!(
            nanosleep_zero_vs_one(None, None, WORDING).1,
            "needs nanosleep at 0 and 1 ns (--mechanisms includes nanosleep)"
        );
        assert_eq!(
            timerfd_vs_nanosleep(None, &[], WORDING).1,
            "needs nanosleep at 1 ns (--mechanisms includes nanosleep)"
        );
        assert_eq!(
            pselect_vs_yield(None, None, WORDING).1,
            "needs pselect at 0 and yield (--mechanisms includes pselect,yield)"
        );
        let mlock = RuntimesConfig {
            mlock: true,
            ..RuntimesConfig::default()
        };
        let unlocked = InForce {
            locked_kib: Some(0),
            ..InForce::default()
        };
        assert_eq!(
            in_force_notes(&mlock, None, None, Some(&unlocked), WORDING),
            ["--mlock was asked for, but the probe had no memory locked (VmLck 0 kB)"]
        );
        assert!(late_causes_intro(WORDING).starts_with(
            "Why frames were late, from the kernel's own timestamps (`--trace`): each frame"
        ));
    }
}
