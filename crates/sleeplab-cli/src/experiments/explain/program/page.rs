//! A program's waits as a report page (`index.html` in the report directory): the same
//! summary and lists the terminal prints (`render`'s views), with the kernel's account
//! of each call drawn as the report draws `explain`'s (charts of the typical wait and
//! the tail, the table of each component).

use std::path::{Path, PathBuf};

use sleeplab::system::Fingerprint;
use sleeplab_account::{CallSummary, Explanation, Found, Machine, Trap};
use sleeplab_report::{ProgramPage, program_page, write_index};

use super::output::Run;
use super::render;
use crate::experiments::Wording;

/// Writes the page of the run to `dir/index.html` (creating `dir`); returns its path.
pub fn write(
    dir: &Path,
    run: &Run,
    found: &Found,
    calls: &[CallSummary],
    traps: &[Trap],
    machine: &Fingerprint,
    hints: Wording,
) -> anyhow::Result<PathBuf> {
    let html = program_page(page(run, found, calls, traps, machine, hints)).render();
    write_index(dir, &html)
}

/// The page's parts.
fn page<'a>(
    run: &Run,
    found: &Found,
    calls: &'a [CallSummary],
    traps: &[Trap],
    machine: &Fingerprint,
    hints: Wording,
) -> ProgramPage<'a> {
    let t = &run.target;
    // A command's first word may be a launcher (`taskset`, `sudo`): the name its
    // waiting threads had says whose waits they are.
    let name = most_common(found.waits.iter().map(|w| w.comm.as_str()))
        .unwrap_or(&t.comm)
        .to_string();
    let mut facts = vec![
        ("program".to_string(), format!("{} (pid {})", t.comm, t.pid)),
        ("followed for".to_string(), format!("{:.1} s", run.seconds)),
        (
            "waits with a timeout".to_string(),
            found.waits.len().to_string(),
        ),
        ("events lost".to_string(), run.lost_events.to_string()),
        ("host".to_string(), machine.hostname.clone()),
        ("kernel".to_string(), machine.kernel_release.clone()),
        (
            "CPU".to_string(),
            format!("{} × {}", machine.cpu_count, machine.cpu_model),
        ),
    ];
    if let Some(v) = &machine.virtualization {
        facts.push(("virtualization".to_string(), v.clone()));
    }
    if let Some(argv) = &t.command {
        facts.insert(1, ("command".to_string(), argv.join(" ")));
    }
    let with_account: Vec<(String, &'a Explanation)> = calls
        .iter()
        .filter_map(|c| Some((c.call.name().to_string(), c.explanation.as_ref()?)))
        .collect();
    ProgramPage {
        title: format!("sleeplab: why {name}'s waits were late"),
        subtitle: format!(
            "{} waits of {name} (pid {}) on {}, from the kernel's own timestamps",
            found.waits.len(),
            t.pid,
            machine.hostname
        ),
        facts,
        summary: render::summary(run, found, calls, hints),
        calls: with_account,
        machine: Machine::of(machine),
        after: render::after(calls, traps),
        footer: vec![
            "Every number is from this run of the program on this machine: each wait found \
             from the program's own system calls, its lateness measured from the deadline \
             the kernel kept to the call's return."
                .into(),
        ],
    }
}

/// The name that comes most often in `names` (the first of equals); `None` for none.
fn most_common<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match counts.iter_mut().find(|(m, _)| *m == n) {
            Some((_, c)) => *c += 1,
            None => counts.push((n, 1)),
        }
    }
    let most = counts.iter().map(|(_, c)| *c).max()?;
    counts.into_iter().find(|&(_, c)| c == most).map(|(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::explain::program::output::Followed;

    #[test]
    fn the_most_common_name_comes_first_of_equals() {
        assert_eq!(
            most_common(["a", "b", "b", "a", "c"].into_iter()),
            Some("a")
        );
        assert_eq!(most_common(["x", "y", "y"].into_iter()), Some("y"));
        assert_eq!(most_common(std::iter::empty()), None);
    }

    /// The note on what the run did not record names the flag that records it (here
    /// by the hint's name); a run that recorded everything has none.
    #[test]
    fn the_summary_says_what_was_not_recorded_and_the_flag_that_records_it() {
        let note = |interrupts, idle_states| {
            let run = Run {
                interrupts,
                idle_states,
                ..a_run()
            };
            render::summary(&run, &Found::default(), &[], Wording::NAMES).terminal()
        };
        let light = note(false, false);
        assert!(
            light.contains("were not recorded (Light, or this kernel"),
            "{light}"
        );
        let default = note(true, false);
        assert!(default.contains("; IdleStates records them)"), "{default}");
        let full = note(true, true);
        assert!(!full.contains("were not recorded"), "{full}");
    }

    /// A run of `app --fast` (pid 7) that recorded the interrupts but not the idle states.
    fn a_run() -> Run {
        Run {
            target: Followed {
                pid: 7,
                comm: "app".into(),
                command: Some(vec!["app".into(), "--fast".into()]),
            },
            seconds: 1.5,
            exited_after: None,
            ended: None,
            lost_events: 0,
            interrupted: false,
            interrupts: true,
            idle_states: false,
            kept_by: super::super::output::KeptBy::Filter,
        }
    }

    #[test]
    fn a_run_with_no_wait_still_gets_its_page() {
        let run = a_run();
        let p = page(
            &run,
            &Found::default(),
            &[],
            &[],
            &Fingerprint::default(),
            Wording::NAMES,
        );
        assert_eq!(p.title, "sleeplab: why app's waits were late");
        assert!(p.calls.is_empty());
        assert!(
            p.facts
                .iter()
                .any(|(k, v)| k == "command" && v == "app --fast")
        );
        let html = program_page(p).render();
        assert!(
            html.contains("No wait with a timeout was recorded."),
            "{html}"
        );
    }
}
