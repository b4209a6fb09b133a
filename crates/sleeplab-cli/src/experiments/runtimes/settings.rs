//! The settings the probe processes run under, from one place: what is checked before
//! anything runs ([`RuntimesConfig::validate`]), what the forked child sets before
//! `exec` (timer slack, CPU, scheduling policy), what each probe is asked to do itself
//! (memory locks do not survive `exec`, so a probe locks its own memory where its
//! language can, and a run that needs a probe that cannot is refused), what the
//! result records ([`RuntimesConfig::run_settings`], the same for `sleeplab runtimes`
//! and the survey), and the notes where what was in force differs from what was asked.

use super::RuntimesConfig;
use crate::experiments::{Hint, Wording};
use crate::probe::child::ChildSettings;
use crate::probe::observe::InForce;
use crate::probe::protocol::{Header, OPTION_MLOCK};
use sleeplab::system::{self, Policy};

/// A setting the probes cannot be given. Each names the values; the command line puts
/// its flags on them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeSettingError {
    /// The thread that tried the scheduling policy panicked.
    #[error("the policy's trial thread panicked")]
    PolicyTrial,
    /// This process may not give the probes the scheduling policy.
    #[error("policy {policy} at priority {priority}: cannot be given to the probes: {cause}")]
    Policy {
        /// The policy asked for.
        policy: Policy,
        /// Its priority.
        priority: i32,
        /// Why not.
        cause: String,
    },
    /// This process may not let the probes lock their memory.
    #[error(
        "the probes could not lock their memory: that needs CAP_IPC_LOCK (root) or an unlimited RLIMIT_MEMLOCK (ulimit -l unlimited)"
    )]
    MlockNotPermitted,
    /// Some probes cannot lock their own memory.
    #[error(
        "memory locking cannot be applied to the probe of {}: memory locks do not survive exec, and that language cannot lock its own memory",
        cannot.join(", ")
    )]
    MlockUnsupported {
        /// The runtimes whose probes cannot.
        cannot: Vec<String>,
        /// Those whose probes can.
        can: Vec<String>,
    },
}

/// `CAP_IPC_LOCK`: locking memory beyond `RLIMIT_MEMLOCK`.
const CAP_IPC_LOCK: u32 = 14;

/// The checks and child settings of a runtimes run that need this process: what its
/// probes may be given, and what each forked probe sets before `exec`.
pub trait ProbeSettings {
    /// Checks, before anything is built or run, that this process may give its probes
    /// the real-time policy and the locked memory asked for (the probes inherit its
    /// privileges). The priority's range is the command line's to check.
    fn validate(&self) -> Result<(), ProbeSettingError>;

    /// What the forked child sets before `exec`, at timer slack `slack`.
    fn child_settings(&self, slack: Option<u64>) -> ChildSettings;
}

impl ProbeSettings for RuntimesConfig {
    fn validate(&self) -> Result<(), ProbeSettingError> {
        if self.policy != Policy::Other {
            // Tried on a thread that ends at once: nothing here keeps the policy.
            let (policy, priority) = (self.policy, self.priority);
            let tried = std::thread::spawn(move || system::set_policy(policy, priority))
                .join()
                .map_err(|_| ProbeSettingError::PolicyTrial)?;
            if let Err(e) = tried {
                return Err(ProbeSettingError::Policy {
                    policy,
                    priority,
                    cause: e.to_string(),
                });
            }
        }
        if self.mlock && !may_lock_memory() {
            return Err(ProbeSettingError::MlockNotPermitted);
        }
        Ok(())
    }

    fn child_settings(&self, slack: Option<u64>) -> ChildSettings {
        ChildSettings {
            timer_slack_ns: slack,
            pin_cpu: self.pin_cpu,
            scheduling: (self.policy != Policy::Other).then_some((self.policy, self.priority)),
        }
    }
}

/// Whether a child of this process may `mlockall` a probe's memory: it holds
/// `CAP_IPC_LOCK`, or `RLIMIT_MEMLOCK` is unlimited.
fn may_lock_memory() -> bool {
    let cap = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct on the stack.
    let unlimited = unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } == 0
        && limit.rlim_cur == libc::RLIM_INFINITY;
    cap || unlimited
}

/// With memory locking asked for, fails unless every listed runtime's probe offers it
/// (its listing header's `options`), naming those that do not and those that do.
/// `listed` holds each listed runtime's id and header.
pub(super) fn check_mlock(
    mlock: bool,
    listed: &[(&str, &Header)],
) -> Result<(), ProbeSettingError> {
    if !mlock {
        return Ok(());
    }
    let (can, cannot): (Vec<&str>, Vec<&str>) = listed
        .iter()
        .map(|(id, h)| (*id, h.options().contains(&OPTION_MLOCK)))
        .fold((vec![], vec![]), |(mut can, mut cannot), (id, ok)| {
            if ok {
                can.push(id)
            } else {
                cannot.push(id)
            }
            (can, cannot)
        });
    if cannot.is_empty() {
        return Ok(());
    }
    let names = |v: Vec<&str>| v.into_iter().map(str::to_string).collect();
    Err(ProbeSettingError::MlockUnsupported {
        cannot: names(cannot),
        can: names(can),
    })
}

/// Where what was in force for a probe (read back from `/proc`) differs from what was
/// set, one sentence each. `slack` is the timer slack set for this run (`None` =
/// inherited); `header_slack` the one the probe printed in its header, used when
/// `/proc` could not be read. A setting is named by its hint, in `hints`' words.
pub fn in_force_notes(
    config: &RuntimesConfig,
    slack: Option<u64>,
    header_slack: Option<u64>,
    f: Option<&InForce>,
    hints: Wording,
) -> Vec<String> {
    let mut notes = Vec::new();
    let realtime = config.policy != Policy::Other;
    let asked = realtime || config.mlock || config.pin_cpu.is_some() || slack.is_some();
    let Some(f) = f else {
        if asked {
            notes.push(
                "what was in force for the probe could not be read back (it printed no line while it ran)"
                    .into(),
            );
        }
        if let (Some(set), Some(seen), false) = (slack, header_slack, realtime) {
            if set != seen && set != 0 {
                notes.push(format!(
                    "timer slack {set} ns was set for the probe, but it reports {seen} ns"
                ));
            }
        }
        return notes;
    };
    if realtime {
        let want = (config.policy.to_string(), config.priority);
        let got = (f.policy.clone(), f.priority);
        if got.0.as_deref() != Some(want.0.as_str())
            || got.1.and_then(|p| i32::try_from(p).ok()) != Some(want.1)
        {
            notes.push(format!(
                "scheduling policy {} priority {} was set for the probe, but it ran under {} priority {}",
                want.0,
                want.1,
                got.0.as_deref().unwrap_or("an unknown policy"),
                got.1.map_or("unknown".into(), |p| p.to_string()),
            ));
        }
    }
    if let Some(n) = f.threads_differing.filter(|&n| n > 0) {
        notes.push(format!(
            "{n} of the probe's threads ran under another policy or priority than its main thread"
        ));
    }
    if config.mlock && f.locked_kib == Some(0) {
        notes.push(format!(
            "{} was asked for, but the probe had no memory locked (VmLck 0 kB)",
            hints.word(Hint::Mlock)
        ));
    }
    // Real-time threads get no timer slack whatever was set.
    if let (Some(set), Some(seen), false) = (slack, f.timer_slack_ns, realtime) {
        if set != seen && set != 0 {
            notes.push(format!(
                "timer slack {set} ns was set for the probe, but /proc reports {seen} ns"
            ));
        }
    }
    if let (Some(cpu), Some(cpus)) = (config.pin_cpu, &f.cpus) {
        if *cpus != cpu.to_string() {
            notes.push(format!(
                "the probe was pinned to CPU {cpu}, but it could run on CPUs {cpus}"
            ));
        }
    }
    notes
}

/// A short account of what was in force, e.g. "fifo 5, 1.2 MiB locked, slack 0 ns,
/// CPUs 0" (`None` when nothing was read).
pub fn in_force_summary(f: &InForce) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(p) = &f.policy {
        parts.push(match f.priority {
            Some(prio) if prio > 0 => format!("{p} {prio}"),
            _ => p.clone(),
        });
    }
    if let Some(kib) = f.locked_kib {
        parts.push(format!("{kib} KiB locked"));
    }
    if let Some(s) = f.timer_slack_ns {
        parts.push(format!("slack {}", sleeplab_stats::fmt_ns(s)));
    }
    if let Some(c) = &f.cpus {
        parts.push(format!("CPUs {c}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::protocol::parse_list;

    fn config() -> RuntimesConfig {
        sleeplab_results::runtimes_config()
    }

    #[test]
    fn a_realtime_policy_is_refused_where_this_process_may_not_give_it() {
        assert!(config().validate().is_ok());
        let mut c = config();
        c.policy = Policy::Fifo;
        c.priority = 2;
        let permitted = std::thread::spawn(|| system::set_policy(Policy::Fifo, 2).is_ok())
            .join()
            .unwrap();
        match c.validate() {
            Ok(()) => assert!(permitted),
            Err(e) => {
                assert!(!permitted);
                assert!(
                    matches!(e, ProbeSettingError::Policy { priority: 2, .. }),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn recorded_settings_are_the_probes() {
        let mut c = config();
        c.timer_slacks_ns = vec![1_000, 50_000];
        c.pin_cpu = Some(1);
        c.policy = Policy::Fifo;
        c.priority = 7;
        c.mlock = true;
        let s = c.run_settings();
        assert_eq!(
            (s.timer_slack_ns, s.pin_cpu, s.policy, s.priority, s.mlock),
            (1_000, Some(1), Policy::Fifo, 7, true)
        );
        let child = c.child_settings(Some(50_000));
        assert_eq!(child.scheduling, Some((Policy::Fifo, 7)));
        assert_eq!(
            (child.timer_slack_ns, child.pin_cpu),
            (Some(50_000), Some(1))
        );
        // Inherited slack: this thread's, as the forked probe inherits it.
        let s = config().run_settings();
        assert_eq!(s.timer_slack_ns, system::timer_slack_ns());
        assert_eq!(config().child_settings(None).scheduling, None);
    }

    fn header(options: &str) -> Header {
        let text = format!(
            "{{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"x\",\"implementation\":\"i\",\"runtime_version\":\"1\",\"clock\":\"c\",\"platform\":\"p\"{options}}}\nend\n"
        );
        parse_list(text.as_bytes()).unwrap().header
    }

    #[test]
    fn mlock_is_refused_for_probes_that_cannot_and_names_them() {
        let yes = header(",\"options\":[\"mlock\"]");
        let no = header("");
        let other = header(",\"options\":[\"something\"]");
        assert!(check_mlock(true, &[("c", &yes), ("python", &yes)]).is_ok());
        assert!(check_mlock(false, &[("java", &no)]).is_ok());
        let e = check_mlock(true, &[("c", &yes), ("java", &no), ("node", &other)]).unwrap_err();
        assert_eq!(
            e,
            ProbeSettingError::MlockUnsupported {
                cannot: vec!["java".into(), "node".into()],
                can: vec!["c".into()],
            }
        );
        let e = check_mlock(true, &[("java", &no)]).unwrap_err();
        assert!(
            matches!(&e, ProbeSettingError::MlockUnsupported { can, .. } if can.is_empty()),
            "{e}"
        );
    }

    #[test]
    fn notes_say_where_what_was_in_force_differs() {
        let mut c = config();
        c.policy = Policy::Fifo;
        c.priority = 5;
        c.mlock = true;
        c.pin_cpu = Some(0);
        let as_asked = InForce {
            policy: Some("fifo".into()),
            priority: Some(5),
            threads_differing: Some(0),
            locked_kib: Some(1234),
            timer_slack_ns: Some(0),
            cpus: Some("0".into()),
        };
        // Real-time threads get no slack: a 1 µs slack read back as 0 is no finding.
        assert_eq!(
            in_force_notes(&c, Some(1_000), None, Some(&as_asked), Wording::NAMES),
            Vec::<String>::new()
        );
        let off = InForce {
            policy: Some("other".into()),
            priority: Some(0),
            threads_differing: Some(2),
            locked_kib: Some(0),
            timer_slack_ns: Some(50_000),
            cpus: Some("0-1".into()),
        };
        let notes = in_force_notes(&c, None, None, Some(&off), Wording::NAMES);
        assert_eq!(
            notes,
            [
                "scheduling policy fifo priority 5 was set for the probe, but it ran under other priority 0",
                "2 of the probe's threads ran under another policy or priority than its main thread",
                "Mlock was asked for, but the probe had no memory locked (VmLck 0 kB)",
                "the probe was pinned to CPU 0, but it could run on CPUs 0-1",
            ]
        );
        // Slack under the normal policy, from /proc, else from the probe's header.
        let plain = config();
        assert_eq!(
            in_force_notes(&plain, Some(1_000), None, Some(&off), Wording::NAMES),
            [
                "2 of the probe's threads ran under another policy or priority than its main thread",
                "timer slack 1000 ns was set for the probe, but /proc reports 50000 ns"
            ]
        );
        assert_eq!(
            in_force_notes(&plain, Some(1_000), Some(1_000), None, Wording::NAMES),
            [
                "what was in force for the probe could not be read back (it printed no line while it ran)"
            ]
        );
        assert_eq!(
            in_force_notes(&plain, None, Some(7), None, Wording::NAMES),
            Vec::<String>::new()
        );
        assert_eq!(
            in_force_notes(&plain, Some(1_000), Some(7), None, Wording::NAMES)[1],
            "timer slack 1000 ns was set for the probe, but it reports 7 ns"
        );
        assert_eq!(
            in_force_summary(&as_asked).as_deref(),
            Some("fifo 5, 1234 KiB locked, slack 0 ns, CPUs 0")
        );
        assert_eq!(in_force_summary(&InForce::default()), None);
    }
}
