//! The program followed: a running process by its id, or a command started for it
//! (held before its first instruction until the recording runs), its threads, whether
//! it still runs, and what `/proc` says of its threads when the kernel cannot be traced.

use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use crate::error::UsageError;

/// What to follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A running process.
    Pid(i32),
    /// A command to start, with its arguments.
    Command(Vec<String>),
}

/// A process being followed.
#[derive(Debug)]
pub struct Target {
    /// Its id.
    pub pid: i32,
    /// Its name (`/proc/PID/comm`) when it was found.
    pub comm: String,
    /// The command line given, for a command started here.
    pub command: Option<Vec<String>>,
    /// The started command, and the pipe that releases it.
    child: Option<(Child, Option<OwnedFd>)>,
}

impl Target {
    /// Finds the process or starts the command, held before its first instruction.
    /// A process that does not exist, or a command that cannot start: a usage error.
    pub fn open(spec: &TargetSpec) -> Result<Self, UsageError> {
        match spec {
            TargetSpec::Pid(pid) => {
                let comm = read_comm(*pid).ok_or_else(|| {
                    UsageError::new(format!("no such process: {pid} (nothing at /proc/{pid})"))
                })?;
                Ok(Self {
                    pid: *pid,
                    comm,
                    command: None,
                    child: None,
                })
            }
            TargetSpec::Command(argv) => start_held(argv),
        }
    }

    /// What the outputs tell of it.
    pub fn followed(&self) -> super::output::Followed {
        super::output::Followed {
            pid: self.pid,
            comm: self.comm.clone(),
            command: self.command.clone(),
        }
    }

    /// Lets a held command run (a process found by its id runs already).
    pub fn release(&mut self) {
        if let Some((_, gate)) = &mut self.child
            && let Some(fd) = gate.take()
        {
            let _ = fs::File::from(fd).write_all(b"go\n");
        }
    }

    /// The process's threads now (`/proc/PID/task`); empty once it has exited.
    pub fn threads(&self) -> Vec<i32> {
        threads_of(self.pid)
    }

    /// Whether it still runs (a started command: not yet exited; a process: its
    /// `/proc` entry is there and not a zombie).
    pub fn alive(&mut self) -> bool {
        match &mut self.child {
            Some((child, _)) => matches!(child.try_wait(), Ok(None)),
            None => read_state(self.pid).is_some_and(|s| s != 'Z' && s != 'X'),
        }
    }

    /// Ends a started command that still runs (SIGTERM, then waits for it) and returns
    /// how it ended, e.g. "exited with status 0"; `None` for a process found by its id.
    pub fn finish(&mut self) -> Option<String> {
        let (child, gate) = self.child.as_mut()?;
        drop(gate.take());
        if matches!(child.try_wait(), Ok(None)) {
            // SAFETY: kill has no memory preconditions; the pid is our child's.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let status = child.wait().ok()?;
        Some(
            match (
                status.code(),
                std::os::unix::process::ExitStatusExt::signal(&status),
            ) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(sig)) => format!("ended by signal {sig}"),
                _ => "ended".to_string(),
            },
        )
    }
}

/// Starts `argv` through `/bin/sh`, which waits on a pipe (its fd 3) before it execs
/// the command in its own place: the process id is known and followed before the
/// command's first instruction, and stdin, stdout and stderr are the user's.
fn start_held(argv: &[String]) -> Result<Target, UsageError> {
    let program = argv
        .first()
        .ok_or_else(|| UsageError::new("no command given after --".to_string()))?;
    let path = resolve(program).ok_or_else(|| {
        UsageError::new(format!(
            "cannot run `{program}`: no such executable (not a path, and not found in PATH)"
        ))
    })?;
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(UsageError::new(format!(
            "cannot start `{program}`: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: pipe2 just returned these two descriptors, owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let read_fd = read.as_raw_fd();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        // Released by a line on fd 3; the pipe closed without one (sleeplab ended
        // first) ends it unrun.
        .arg("read -r _ <&3 || exit 125; exec 3<&-; exec \"$0\" \"$@\"")
        .arg(&path)
        .args(&argv[1..]);
    // SAFETY: dup2 and fcntl are async-signal-safe; they run in the child before exec.
    unsafe {
        cmd.pre_exec(move || {
            // fd 3 without close-on-exec: a dup2 onto it clears the flag, but a pipe that
            // is fd 3 already keeps it, and would close at exec.
            let ok = if read_fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0) >= 0
            } else {
                libc::dup2(read_fd, 3) >= 0
            };
            if ok {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| UsageError::new(format!("cannot start `{program}`: {e}")))?;
    drop(read);
    let pid = child.id() as i32;
    Ok(Target {
        pid,
        comm: Path::new(program)
            .file_name()
            .map_or_else(|| program.clone(), |n| n.to_string_lossy().into_owned()),
        command: Some(argv.to_vec()),
        child: Some((child, Some(write))),
    })
}

/// `program` as an executable file: a path containing `/` as given, else the first
/// match in `PATH`.
fn resolve(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        fs::metadata(p).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        })
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| executable(p))
    })
}

/// `/proc/PID/comm`, trimmed.
fn read_comm(pid: i32) -> Option<String> {
    if pid <= 0 {
        return None;
    }
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The state letter of `/proc/PID/stat` (after the parenthesised name).
fn read_state(pid: i32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The thread ids of `pid`, ascending.
pub fn threads_of(pid: i32) -> Vec<i32> {
    let mut out: Vec<i32> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// What `/proc` says of one thread: its name, voluntary and involuntary context
/// switches, and where it sleeps in the kernel (its wait channel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCounts {
    /// The thread.
    pub tid: i32,
    /// Its name.
    pub comm: String,
    /// Voluntary context switches so far (it blocked).
    pub voluntary: u64,
    /// Involuntary ones (it was preempted).
    pub involuntary: u64,
    /// Its wait channel (`0`: running).
    pub wchan: String,
}

/// Every thread of `pid` as `/proc` tells it now.
pub fn thread_counts(pid: i32) -> Vec<ThreadCounts> {
    threads_of(pid)
        .into_iter()
        .filter_map(|tid| {
            let dir = format!("/proc/{pid}/task/{tid}");
            let status = fs::read_to_string(format!("{dir}/status")).ok()?;
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            };
            Some(ThreadCounts {
                tid,
                comm: fs::read_to_string(format!("{dir}/comm"))
                    .map(|s| s.trim_end().to_string())
                    .unwrap_or_default(),
                voluntary: field("voluntary_ctxt_switches:"),
                involuntary: field("nonvoluntary_ctxt_switches:"),
                wchan: fs::read_to_string(format!("{dir}/wchan")).unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_found_with_its_threads_and_counts() {
        let me = std::process::id() as i32;
        let t = Target::open(&TargetSpec::Pid(me)).unwrap();
        assert!(!t.comm.is_empty());
        assert!(t.threads().contains(&me));
        let counts = thread_counts(me);
        assert!(counts.iter().any(|c| c.tid == me));
    }

    #[test]
    fn a_missing_process_or_command_is_a_usage_error() {
        let e = Target::open(&TargetSpec::Pid(i32::MAX)).unwrap_err();
        assert!(e.to_string().contains("no such process"), "{e}");
        let e =
            Target::open(&TargetSpec::Command(vec!["sleeplab-no-such-cmd".into()])).unwrap_err();
        assert!(
            e.to_string().contains("cannot run `sleeplab-no-such-cmd`"),
            "{e}"
        );
        assert!(Target::open(&TargetSpec::Command(vec![])).is_err());
    }

    #[test]
    fn a_held_command_runs_only_once_released() {
        let argv = vec!["sh".to_string(), "-c".to_string(), "exit 7".to_string()];
        let mut t = Target::open(&TargetSpec::Command(argv)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(t.alive(), "held before its first instruction");
        t.release();
        // Let it run to its end (finish() ends one that still runs).
        let start = std::time::Instant::now();
        while t.alive() && start.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let ended = t.finish().unwrap();
        assert_eq!(ended, "exited with status 7");
    }

    #[test]
    fn an_executable_is_resolved_in_path_or_as_given() {
        assert!(resolve("sh").is_some());
        assert!(resolve("/bin/sh").is_some());
        assert!(resolve("/nonexistent/sh").is_none());
    }
}
