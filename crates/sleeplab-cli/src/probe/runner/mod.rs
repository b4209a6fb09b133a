//! Launching one probe process, bounded in time and output, killable.
//!
//! The child is started by [`super::child`]: its own process group (so a timeout or
//! Ctrl-C kills everything it started), `/dev/null` as stdin, death with sleeplab, a
//! watchdog that kills the group when the run is over (leftovers too), and the settings
//! it inherits, set before `exec`. Stdout is captured up to a cap; a probe that writes more is killed and reported. Stderr is kept (its tail) for
//! error messages. The exit code is mapped as the protocol says: 0 ok, 2 bad arguments,
//! 3 method unavailable, anything else (or a signal) a failure.

use super::child::{self, ChildSettings, Spawned};
use super::command::ProbeCommand;
use super::observe::{self, InForce};
use crate::interrupt::interrupted;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

/// How much of stderr is kept (its end: the last line is what matters).
const STDERR_KEEP: usize = 64 * 1024;
/// How long to keep reading the pipes after the probe exited (a grandchild may hold them).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Longest stderr line quoted in a verdict.
const REASON_CHARS: usize = 300;
/// Bounds on one probe run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Killed after this long.
    pub timeout: Duration,
    /// Killed once stdout exceeds this many bytes.
    pub output_cap: usize,
}

/// How the probe process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// It exited with this code.
    Exited(i32),
    /// It died by this signal.
    Signaled(i32),
    /// It ran past the timeout and was killed.
    TimedOut,
    /// It wrote more than the cap to stdout and was killed.
    OutputCapped,
    /// The user pressed Ctrl-C; it was killed.
    Interrupted,
}

/// What one probe run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Everything it wrote to stdout (at most the cap plus one read).
    pub stdout: Vec<u8>,
    /// The end of what it wrote to stderr.
    pub stderr: Vec<u8>,
    /// How it ended.
    pub termination: Termination,
    /// Wall time from spawn to exit (or kill).
    pub wall: Duration,
    /// The limits it ran under.
    pub limits: Limits,
    /// What was in force for the process, read from `/proc` when its first line of
    /// stdout arrived (`None` when it printed no complete line).
    pub in_force: Option<InForce>,
    /// The process id (its group's too).
    pub pid: u32,
    /// Its kernel thread ids when its first line of stdout arrived (`None` when it
    /// printed no complete line or they could not be read).
    pub threads: Option<Vec<u32>>,
}

/// The protocol's reading of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Exit 0: stdout holds the output.
    Ok,
    /// Exit 2: bad arguments (stderr's message).
    BadArguments(String),
    /// Exit 3: the method is unavailable (stderr's message).
    Unavailable(String),
    /// Anything else: why.
    Failed(String),
}

/// A probe that could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (missing, not executable).
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for it or reading its output failed.
    #[error("lost track of {program}: {source}")]
    Io {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
}

impl RunOutput {
    /// The last non-empty line of stderr, trimmed and shortened (empty if none).
    pub fn stderr_last_line(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let line = text
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        shorten(line)
    }

    /// The protocol's reading of how the run ended.
    pub fn verdict(&self) -> Verdict {
        let last = self.stderr_last_line();
        let said = |prefix: String| {
            if last.is_empty() {
                format!("{prefix} (nothing on stderr)")
            } else {
                format!("{prefix}: {last}")
            }
        };
        match self.termination {
            Termination::Exited(0) => Verdict::Ok,
            Termination::Exited(2) => Verdict::BadArguments(said("bad arguments (exit 2)".into())),
            Termination::Exited(3) => Verdict::Unavailable(if last.is_empty() {
                "unavailable (exit 3)".into()
            } else {
                last
            }),
            Termination::Exited(c) => Verdict::Failed(said(format!("exit code {c}"))),
            Termination::Signaled(s) => {
                Verdict::Failed(said(format!("killed by {}", signal_name(s))))
            }
            Termination::TimedOut => Verdict::Failed(format!(
                "hung: no exit within {} s, killed",
                self.limits.timeout.as_secs_f64()
            )),
            Termination::OutputCapped => Verdict::Failed(format!(
                "flooded stdout: more than {} bytes, killed",
                self.limits.output_cap
            )),
            Termination::Interrupted => Verdict::Failed("interrupted (Ctrl-C), killed".into()),
        }
    }
}

/// Shortens a message to one line of bounded length.
fn shorten(s: &str) -> String {
    let one = s.replace(['\n', '\r'], " ");
    match one.char_indices().nth(REASON_CHARS) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// A signal's name, e.g. `SIGSEGV (11)`.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("{name} ({sig})")
}

/// Kills a whole process group.
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) with a negative pid signals the process group; no memory is touched.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
    }
}

/// Runs `cmd` with `args` appended, under `settings` and `limits`, and collects what it
/// wrote. Never waits longer than the timeout (plus a short drain), never keeps more
/// than the cap, and kills the process group on timeout, flood or Ctrl-C.
pub fn run(
    cmd: &ProbeCommand,
    args: &[String],
    settings: ChildSettings,
    limits: Limits,
) -> Result<RunOutput, RunError> {
    let program = cmd.program.display().to_string();
    let start = Instant::now();
    let Spawned {
        mut child,
        watchdog,
    } = child::spawn(cmd, args, settings).map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    let pgid = child.id();
    let io_err = |source| RunError::Io {
        program: program.clone(),
        source,
    };
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut status = None;
    let mut exited_at: Option<Instant> = None;
    let mut killed: Option<Termination> = None;
    let mut in_force = None;
    let mut threads = None;
    let mut buf = vec![0u8; 64 * 1024];
    // A timeout too long to represent is no timeout (a run of centuries).
    let deadline = start
        .checked_add(limits.timeout)
        .unwrap_or_else(|| start + Duration::from_secs(1 << 40));
    loop {
        if status.is_none() {
            if let Some(st) = child.try_wait().map_err(io_err)? {
                status = Some(st);
                exited_at = Some(Instant::now());
            }
        }
        if status.is_some() && out_pipe.is_none() {
            // The probe exited and stdout is complete. Stderr may be held open by a
            // process it left behind (Wine's services inherit it): take what is there
            // now and stop.
            if let Some(p) = err_pipe.take() {
                drain_available(p, &mut stderr, 2 * STDERR_KEEP);
            }
            break;
        }
        if status.is_some() && exited_at.is_some_and(|t| t.elapsed() > DRAIN_GRACE) {
            break;
        }
        let pipes_open = out_pipe.is_some() || err_pipe.is_some();
        let now = Instant::now();
        if status.is_none() && now >= deadline {
            killed = Some(Termination::TimedOut);
            break;
        }
        if status.is_none() && interrupted() {
            killed = Some(Termination::Interrupted);
            break;
        }
        let wait_ms = deadline
            .saturating_duration_since(now)
            .as_millis()
            .clamp(1, 20) as libc::c_int;
        if !pipes_open {
            std::thread::sleep(Duration::from_millis(wait_ms as u64));
            continue;
        }
        let pollfd = |fd: Option<i32>| libc::pollfd {
            fd: fd.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = [
            pollfd(out_pipe.as_ref().map(|p| p.as_raw_fd())),
            pollfd(err_pipe.as_ref().map(|p| p.as_raw_fd())),
        ];
        // SAFETY: fds is a valid array of pollfd of the given length; negative fds are
        // ignored by poll(2).
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait_ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            kill_group(pgid);
            let _ = child.wait();
            return Err(io_err(e));
        }
        if fds[0].revents != 0 {
            if let Some(p) = out_pipe.as_mut() {
                match p.read(&mut buf) {
                    Ok(0) => out_pipe = None,
                    Ok(n) => {
                        stdout.extend_from_slice(&buf[..n]);
                        // The header line is out: the probe measures now, under what
                        // it applied before printing it.
                        if in_force.is_none() && buf[..n].contains(&b'\n') {
                            in_force = Some(observe::read(pgid));
                            threads = observe::threads(pgid);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => out_pipe = None,
                }
            }
            if stdout.len() > limits.output_cap {
                killed = Some(Termination::OutputCapped);
                break;
            }
        }
        if fds[1].revents != 0 {
            if let Some(p) = err_pipe.as_mut() {
                match p.read(&mut buf) {
                    Ok(0) => err_pipe = None,
                    Ok(n) => {
                        stderr.extend_from_slice(&buf[..n]);
                        if stderr.len() > 2 * STDERR_KEEP {
                            stderr.drain(..stderr.len() - STDERR_KEEP);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => err_pipe = None,
                }
            }
        }
    }
    let termination = match killed {
        Some(t) => {
            kill_group(pgid);
            let _ = child.wait();
            // What the probe wrote before it was stopped is kept (a stopped probe's
            // finished cells are data); a flood is not read further.
            if t != Termination::OutputCapped
                && let Some(p) = out_pipe.take()
            {
                drain_available(p, &mut stdout, limits.output_cap);
            }
            t
        }
        None => {
            let st = status.expect("the loop ends without a kill only once the child exited");
            match (st.code(), st.signal()) {
                (Some(c), _) => Termination::Exited(c),
                (None, Some(s)) => Termination::Signaled(s),
                (None, None) => Termination::Exited(-1),
            }
        }
    };
    // The run is over: the watchdog kills whatever the probe left in its group.
    drop(watchdog);
    Ok(RunOutput {
        stdout,
        stderr,
        termination,
        wall: start.elapsed(),
        limits,
        in_force,
        pid: pgid,
        threads,
    })
}

/// Reads whatever `pipe` holds right now without blocking, until `into` holds `cap`
/// bytes (the rest is dropped).
fn drain_available(mut pipe: impl Read + AsRawFd, into: &mut Vec<u8>, cap: usize) {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a file descriptor we own; only the O_NONBLOCK flag is changed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return;
        }
    }
    let mut buf = [0u8; 16 * 1024];
    while into.len() < cap {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => into.extend_from_slice(&buf[..n]),
        }
    }
}

#[cfg(test)]
mod tests;
