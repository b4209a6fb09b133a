//! What was in force for a running probe, read back from `/proc/<pid>`: its scheduling
//! policy and priority, how much memory it had locked, its timer slack and the CPUs it
//! may run on. The runner reads it once the probe has printed its header line (the
//! protocol has probes apply `--mlock` before that and print it before measuring), so
//! it describes the process while it measures; and the process's threads then, among
//! which the measuring thread the header names (`tid`) must be.

pub use sleeplab_results::InForce;

/// Reads what is in force for process `pid` now.
pub fn read(pid: u32) -> InForce {
    let dir = format!("/proc/{pid}");
    let sched = std::fs::read_to_string(format!("{dir}/stat"))
        .ok()
        .and_then(|s| sched_of_stat(&s));
    let status = std::fs::read_to_string(format!("{dir}/status")).unwrap_or_default();
    let threads_differing = sched.and_then(|main| {
        let tasks = std::fs::read_dir(format!("{dir}/task")).ok()?;
        let differing = tasks
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
            .filter_map(|s| sched_of_stat(&s))
            .filter(|&s| s != main)
            .count();
        Some(differing as u32)
    });
    InForce {
        policy: sched.map(|(p, _)| policy_name(p)),
        priority: sched.map(|(_, prio)| prio),
        threads_differing,
        locked_kib: status_field(&status, "VmLck")
            .and_then(|v| v.trim_end_matches("kB").trim().parse().ok()),
        timer_slack_ns: std::fs::read_to_string(format!("{dir}/timerslack_ns"))
            .ok()
            .and_then(|s| s.trim().parse().ok()),
        cpus: status_field(&status, "Cpus_allowed_list").map(str::to_string),
    }
}

/// The kernel thread ids of process `pid` now (`/proc/<pid>/task`), ascending; `None`
/// when they cannot be read: the process is gone, or has exited and not been reaped yet
/// (a zombie lists its leader alone), or not Linux.
pub fn threads(pid: u32) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut ids: Vec<u32> = tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect();
    // Read after the list: alive now, so the list was of a live process.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let state = stat
        .get(stat.rfind(')')? + 1..)?
        .trim_start()
        .chars()
        .next()?;
    if matches!(state, 'Z' | 'X') || ids.is_empty() {
        return None;
    }
    ids.sort_unstable();
    Some(ids)
}

/// The process that thread `tid` belongs to now (`Tgid` of `/proc/<tid>/status`), or
/// `None` when no such thread exists (any more).
pub fn process_of_thread(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status_field(&status, "Tgid")?.parse().ok()
}

/// (policy, rt_priority) from the text of `/proc/<pid>/stat` (fields 41 and 40).
pub fn sched_of_stat(stat: &str) -> Option<(u32, u32)> {
    // The command name is in parentheses and may hold anything: count after the last ')'.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): field n is fields[n - 3].
    let priority = fields.get(40 - 3)?.parse().ok()?;
    let policy = fields.get(41 - 3)?.parse().ok()?;
    Some((policy, priority))
}

/// The name of a Linux scheduling policy number.
pub fn policy_name(policy: u32) -> String {
    match policy {
        0 => "other".into(),
        1 => "fifo".into(),
        2 => "rr".into(),
        3 => "batch".into(),
        5 => "idle".into(),
        6 => "deadline".into(),
        n => format!("policy {n}"),
    }
}

/// The value of `Name:` in `/proc/<pid>/status`, trimmed.
fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        // A command name with spaces and a ')' inside; priority 7, policy 1 (fifo).
        let mut fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        fields[40 - 3] = "7".into();
        fields[41 - 3] = "1".into();
        let stat = format!("1234 (a b) c) {}\n", fields.join(" "));
        assert_eq!(sched_of_stat(&stat), Some((1, 7)));
        assert_eq!(sched_of_stat("1234 (x) S 1 2"), None);
        assert_eq!(policy_name(2), "rr");
        assert_eq!(policy_name(9), "policy 9");
    }

    #[test]
    fn this_process_reads_back_as_it_is() {
        let me = read(std::process::id());
        assert_eq!(me.policy.as_deref(), Some("other"));
        assert_eq!(me.priority, Some(0));
        assert_eq!(me.timer_slack_ns, Some(sleeplab::system::timer_slack_ns()));
        assert!(me.locked_kib.is_some());
        assert!(
            me.cpus.as_ref().is_some_and(|c| c.starts_with('0')),
            "{me:?}"
        );
        assert_eq!(read(u32::MAX), InForce::default());
    }

    #[test]
    fn this_threads_id_is_among_its_process_threads() {
        // SAFETY: gettid takes no arguments and cannot fail.
        let me = unsafe { libc::gettid() } as u32;
        let other = std::thread::spawn(|| unsafe { libc::gettid() } as u32)
            .join()
            .unwrap();
        let ids = threads(std::process::id()).unwrap();
        assert!(ids.contains(&me), "{me} not in {ids:?}");
        assert!(ids.contains(&std::process::id()), "{ids:?}");
        assert!(
            !ids.contains(&other),
            "a thread that ended is gone: {ids:?}"
        );
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert_eq!(threads(u32::MAX), None);
        // An exited child not yet reaped (a zombie) has no threads to name.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        while std::fs::read_to_string(format!("/proc/{}/stat", child.id()))
            .is_ok_and(|s| !s.contains(") Z"))
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(threads(child.id()), None);
        child.wait().unwrap();
        assert_eq!(process_of_thread(me), Some(std::process::id()));
        assert_eq!(process_of_thread(1), Some(1));
        assert_eq!(process_of_thread(u32::MAX), None);
    }
}
