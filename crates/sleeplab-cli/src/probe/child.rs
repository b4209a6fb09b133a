//! Starting a probe process, and what is set in the forked child before `exec`.
//!
//! **No orphans.** Whatever happens to sleeplab (Ctrl-C, a crash, `kill -9`), nothing it
//! started keeps running:
//! - the probe gets `PR_SET_PDEATHSIG(SIGKILL)`, so the kernel kills it when sleeplab
//!   dies; the call is made after `fork`, so the child then checks that its parent is
//!   still the process that forked it (if sleeplab died in between, the child was
//!   re-parented already and exits instead of running);
//! - the probe runs in a process group of its own, and a *watchdog* forked in the same
//!   group blocks reading a pipe whose only writer is sleeplab. When the write end
//!   closes (the run is over, or sleeplab died and the kernel closed it), the watchdog
//!   kills the whole group: the probe's own children (a launcher's JVM, a shell's
//!   background jobs, a double-forked helper) die with it. The death signal alone would
//!   not reach them: it is not inherited across `fork`.
//!
//! Processes that leave the group on purpose (`setsid`) are not killed; Wine's server and
//! services do so, and exit by themselves once their last client (the probe) is gone.
//!
//! The death signal is tied to the *thread* that forked: `spawn` must be called on a
//! thread that outlives the probe (the runner waits for it on the same thread).
//!
//! Everything here that runs in the child between `fork` and `exec` makes only
//! async-signal-safe system calls on stack data: sleeplab is multi-threaded, and a lock
//! another thread held at the fork stays locked forever in the child.

use super::command::ProbeCommand;
use sleeplab::system::Policy;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// Settings the probe process inherits (applied between fork and exec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChildSettings {
    /// `prctl(PR_SET_TIMERSLACK)` value, ns (0 resets to the default).
    pub timer_slack_ns: Option<u64>,
    /// CPU to pin the process to (`sched_setaffinity`).
    pub pin_cpu: Option<usize>,
    /// Scheduling policy and priority (`sched_setscheduler`); `None` = inherited. The
    /// threads the probe starts inherit them.
    pub scheduling: Option<(Policy, i32)>,
}

/// A started probe: the process, and the write end of its watchdog's pipe. Dropping
/// [`Spawned::watchdog`] tells the watchdog to kill the probe's process group.
#[derive(Debug)]
pub(super) struct Spawned {
    /// The probe process (its pid is its process group's id).
    pub child: Child,
    /// The only writer of the watchdog's pipe: closing it kills the group.
    pub watchdog: OwnedFd,
}

/// Starts `cmd` with `args` appended in a process group of its own, stdin from
/// `/dev/null`, stdout and stderr piped, dying with sleeplab, watched, under `settings`.
pub(super) fn spawn(
    cmd: &ProbeCommand,
    args: &[String],
    settings: ChildSettings,
) -> io::Result<Spawned> {
    spawn_for(cmd, args, settings, std::process::id())
}

/// [`spawn`], with the pid the child must find as its parent (tests give a wrong one).
fn spawn_for(
    cmd: &ProbeCommand,
    args: &[String],
    settings: ChildSettings,
    parent: u32,
) -> io::Result<Spawned> {
    let (read_end, write_end) = cloexec_pipe()?;
    let mut c = Command::new(&cmd.program);
    c.args(&cmd.args)
        .args(args)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &cmd.cwd {
        c.current_dir(dir);
    }
    let watch_fd = read_end.as_raw_fd();
    let parent = parent as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec (after std's setpgid)
    // and only makes async-signal-safe system calls on stack data (see the module docs).
    unsafe {
        c.pre_exec(move || in_child(parent, watch_fd, settings));
    }
    let child = c.spawn()?;
    drop(read_end);
    Ok(Spawned {
        child,
        watchdog: write_end,
    })
}

/// A pipe whose ends are closed on exec: `(read end, write end)`.
fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two-element array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In the forked child: die with the parent, start the watchdog, apply the settings.
fn in_child(parent: libc::pid_t, watch_fd: RawFd, settings: ChildSettings) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    if unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // If the parent died before the prctl, the signal will never come: the child was
    // re-parented already. Then it must not run at all.
    // SAFETY: getppid has no arguments.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    start_watchdog(watch_fd)?;
    apply_child_settings(settings)
}

/// Forks the watchdog of the calling process's group (see the module docs).
fn start_watchdog(watch_fd: RawFd) -> io::Result<()> {
    // SAFETY: getpid has no arguments. The child leads its own group (setpgid(0, 0)).
    let group = unsafe { libc::getpid() };
    // A bare clone(SIGCHLD) is fork without glibc's fork handlers, which take locks
    // (malloc's) that another thread of sleeplab may have held when this child was
    // forked. The watchdog then makes raw system calls only.
    // SAFETY: clone with no flags but the exit signal, no new stack: both processes
    // continue on a copy of the same stack, like fork.
    let pid = unsafe { libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0) };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => watchdog(watch_fd, group),
        _ => Ok(()),
    }
}

/// The watchdog: closes every descriptor but its pipe's read end (it must not hold the
/// probe's stdout or sleeplab's pipes open), waits for end-of-file, kills the group.
fn watchdog(watch_fd: RawFd, group: libc::pid_t) -> ! {
    close_all_but(watch_fd);
    let mut byte = 0u8;
    loop {
        // SAFETY: reading one byte into a stack variable.
        let r = unsafe { libc::read(watch_fd, (&raw mut byte).cast(), 1) };
        let interrupted = r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR);
        // Nothing is ever written; a byte would be a stray write: keep waiting.
        if r <= 0 && !interrupted {
            break;
        }
    }
    // SAFETY: kill and _exit with integer arguments; the group includes this process.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
        libc::_exit(0)
    }
}

/// Closes every file descriptor except `keep`.
fn close_all_but(keep: RawFd) {
    let keep = keep as libc::c_uint;
    // SAFETY: close_range and close take integers only.
    unsafe {
        let low = keep == 0 || libc::syscall(libc::SYS_close_range, 0, keep - 1, 0) == 0;
        let high = libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0) == 0;
        if !(low && high) {
            // Kernels before 5.9 have no close_range: close one by one.
            for fd in 0..4096 {
                if fd != keep as libc::c_int {
                    libc::close(fd);
                }
            }
        }
    }
}

/// Applies `settings` to the calling process (the forked child, before exec).
fn apply_child_settings(settings: ChildSettings) -> io::Result<()> {
    if let Some(ns) = settings.timer_slack_ns {
        // SAFETY: prctl(PR_SET_TIMERSLACK) takes an integer argument only.
        let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if let Some(cpu) = settings.pin_cpu {
        // SAFETY: cpu_set_t is plain data, zeroed then filled with CPU_SET within bounds
        // (the caller validated cpu against the machine's CPU count).
        let r = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if let Some((policy, priority)) = settings.scheduling {
        let raw = match policy {
            Policy::Other => libc::SCHED_OTHER,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
        };
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: a valid sched_param on the stack; 0 means the calling thread.
        if unsafe { libc::sched_setscheduler(0, raw, &param) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    /// (state, start time) of a process from /proc/PID/stat, `None` once it is gone.
    pub fn stat(pid: u32) -> Option<(char, u64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some((f.first()?.chars().next()?, f.get(19)?.parse().ok()?))
    }

    /// Waits up to `limit` for the process that had `start` as its start time to be gone
    /// (a zombie waiting for its reaper counts as gone); whether it went.
    pub fn gone_within(pid: u32, start: u64, limit: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            match stat(pid) {
                Some((state, s)) if s == start && state != 'Z' => {}
                _ => return true,
            }
            if t0.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn sh(script: &str) -> ProbeCommand {
        ProbeCommand::new("/bin/sh").with_args(["-c", script])
    }

    /// Reads the first line the child prints: a pid its shell started.
    fn first_pid(child: &mut Child) -> u32 {
        let mut out = child.stdout.take().unwrap();
        let mut text = Vec::new();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            text.push(byte[0]);
        }
        String::from_utf8(text).unwrap().trim().parse().unwrap()
    }

    #[test]
    fn a_child_whose_parent_changed_never_runs() {
        // As if sleeplab had died between fork and prctl: the parent the child finds is
        // not the one captured before the fork.
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let script = format!("touch {}", marker.display());
        let e = spawn_for(&sh(&script), &[], ChildSettings::default(), 1).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ESRCH), "{e}");
        assert!(!marker.exists(), "the command ran");
    }

    #[test]
    fn the_probe_dies_with_the_thread_that_started_it() {
        // PR_SET_PDEATHSIG fires when the forking thread exits: a thread that starts a
        // probe and ends stands in for a sleeplab that dies.
        let t0 = Instant::now();
        let mut s = std::thread::spawn(|| spawn(&sh("sleep 30"), &[], ChildSettings::default()))
            .join()
            .unwrap()
            .unwrap();
        let status = s.child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    }

    #[test]
    fn the_watchdog_kills_the_whole_group_when_its_pipe_closes() {
        // The shell's background job is a grandchild: no death signal reaches it.
        let mut s = spawn(
            &sh("sleep 30 >/dev/null 2>&1 & echo $!; wait"),
            &[],
            ChildSettings::default(),
        )
        .unwrap();
        let grandchild = first_pid(&mut s.child);
        let (_, start) = stat(grandchild).expect("the grandchild runs");
        // What the kernel does when sleeplab dies: the write end closes.
        drop(s.watchdog);
        let status = s.child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
        assert!(
            gone_within(grandchild, start, Duration::from_secs(10)),
            "the grandchild {grandchild} survived"
        );
    }

    #[test]
    fn the_watchdog_holds_no_pipe_of_the_probe() {
        // The probe exits at once; its stdout must reach end-of-file although the
        // watchdog (forked before exec) is still waiting.
        let t0 = Instant::now();
        let mut s = spawn(&sh("echo done"), &[], ChildSettings::default()).unwrap();
        let mut out = String::new();
        s.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "done\n");
        assert!(s.child.wait().unwrap().success());
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }
}
