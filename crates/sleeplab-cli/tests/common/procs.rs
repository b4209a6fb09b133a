//! The process table from /proc: a process by pid and start time, its descendants,
//! whether it still runs, its command line (the Ctrl-C tests check no child outlives a
//! command).

/// A process, identified by pid and start time (so a reused pid is not mistaken for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    /// Its process id.
    pub pid: i32,
    /// Its start time, in clock ticks after boot.
    pub start: u64,
}

/// (ppid, start time, state) of a process, from /proc/PID/stat.
pub fn stat(pid: i32) -> Option<(i32, u64, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: split after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); ppid is field 4, starttime field 22.
    Some((
        f.get(1)?.parse().ok()?,
        f.get(19)?.parse().ok()?,
        f.first()?.chars().next()?,
    ))
}

/// Every live descendant of `root`.
pub fn descendants(root: i32) -> Vec<Proc> {
    let all: Vec<(i32, i32, u64)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, start, _)| (pid, ppid, start)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid, start) in &all {
            if ppid == p {
                out.push(Proc { pid, start });
                frontier.push(pid);
            }
        }
    }
    out
}

/// Whether `p` still runs (a zombie waiting for a reaper does not run).
pub fn alive(p: Proc) -> bool {
    matches!(stat(p.pid), Some((_, start, state)) if start == p.start && state != 'Z')
}

/// The command line of a process, arguments joined by spaces.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}
