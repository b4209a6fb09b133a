//! The one tracing harness every traced run uses: a [`Recording`] follows this thread,
//! given threads, or every thread; it is drained between measurements by its caller or
//! on a thread of its own; and its [`Recording::finish`] gives the timeline and the
//! run's [`Tracing`] status, whose notes are worded here and nowhere else.

use super::analysis::timeline::Timeline;
use super::log::Before;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::lab::noise::spin_log;
use sleeplab_capture::{Captured, Detail, Drainer, Kind, SyscallsBy, TraceError, Tracer, this_tid};

/// Whose events a recording keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// The calling thread (the measuring thread, which drains between its waits).
    ThisThread,
    /// These threads (a periodic timer's measuring threads).
    Threads(Vec<i32>),
    /// Every thread on the machine (a probe process, whose threads are named only once
    /// it runs).
    EveryThread,
    /// A running program: these threads and every thread they create from now on,
    /// their system calls' entries recorded too (what its own waits are found from) and
    /// kept to them as the [`SyscallsBy`] says, the machine's own work in the given
    /// detail.
    Program(Vec<i32>, Detail, SyscallsBy),
    /// A running program, as [`Follow::Program`], and the kernel stack of every task as
    /// it leaves a CPU (what held a waiting thread's CPU, and where it was).
    ProgramStacks(Vec<i32>, Detail, SyscallsBy),
}

/// Whether a run recorded the kernel's tracepoints, as its result keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tracing {
    /// True when the kernel's events were recorded; false when not: the partial /proc
    /// account, or nothing at all where the run traced no cell (`note` says which).
    pub kernel: bool,
    /// Why not, and what to run instead (when `kernel` is false); or that nothing was
    /// recorded, the run having measured no cell that could be traced.
    pub note: Option<String>,
    /// Events the kernel could not record (full buffers), over the run.
    pub lost_events: u64,
    /// The steal time the guest kernel accounted over the run (`/proc/stat`, the CPUs
    /// the followed threads ran on, after − before), ns; `null` where not read (untraced, or no `/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<u64>,
}

impl Tracing {
    /// The status of a run whose kernel events were recorded, `lost_events` of them lost
    /// (no steal read).
    pub fn kernel(lost_events: u64) -> Self {
        Self {
            kernel: true,
            note: None,
            lost_events,
            steal_ns: None,
        }
    }

    /// The status of a run the kernel did not trace (the partial /proc account), with
    /// why and what to run instead.
    pub fn partial(note: impl Into<String>) -> Self {
        Self {
            kernel: false,
            note: Some(note.into()),
            lost_events: 0,
            steal_ns: None,
        }
    }

    /// The status of a run that asked for tracing but made no recording: no cell it
    /// measured could be traced (none measured: every cell skipped, or stopped before the
    /// first; or only cells whose wakes the tracer does not follow). Not a kernel trace,
    /// and no /proc account either: `NOTHING_RECORDED` says so.
    pub fn nothing_recorded() -> Self {
        Self::partial(NOTHING_RECORDED)
    }

    /// Whether this is the status of a run that recorded nothing
    /// ([`Tracing::nothing_recorded`]), read back from its note.
    pub fn recorded_nothing(&self) -> bool {
        !self.kernel && self.note.as_deref() == Some(NOTHING_RECORDED)
    }

    /// Adds the status of one more recording of the same run to `run`: the run traced
    /// the kernel only if every recording did; its note is the first one; the lost
    /// events add up.
    pub fn absorb(run: &mut Option<Tracing>, next: Option<Tracing>) {
        let Some(next) = next else { return };
        match run {
            None => *run = Some(next),
            Some(r) => {
                r.kernel &= next.kernel;
                r.lost_events += next.lost_events;
                r.steal_ns = match (r.steal_ns, next.steal_ns) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                if r.note.is_none() {
                    r.note = next.note;
                }
            }
        }
    }
}

/// The note of a run that asked for tracing but recorded nothing
/// ([`Tracing::nothing_recorded`]): its one wording.
pub const NOTHING_RECORDED: &str =
    "nothing was recorded: the run measured no cell that could be traced";

/// A run traced by several recordings in turn (one per cell, one per method): whether
/// tracing was asked for, and the run's status joined from each recording's
/// ([`Tracing::absorb`]). Once the kernel refused one, the rest are not attempted (the
/// run keeps the refusal's note).
#[derive(Debug)]
pub struct Recordings {
    wanted: bool,
    status: Option<Tracing>,
}

impl Recordings {
    /// A run whose cells are to be traced when `wanted`.
    pub fn new(wanted: bool) -> Self {
        Self {
            wanted,
            status: None,
        }
    }

    /// Whether the next recording is to be made: asked for, and the kernel not found
    /// unable so far.
    pub fn able(&self) -> bool {
        self.wanted && self.status.as_ref().is_none_or(|s| s.kernel)
    }

    /// Finishes `recording`: its timeline (`None` where the kernel recorded nothing) and
    /// the events it lost; its status joins the run's.
    pub fn finish(&mut self, recording: Recording) -> (Option<Timeline>, u64) {
        let (timeline, status) = recording.finish();
        let lost = status.as_ref().map_or(0, |s| s.lost_events);
        Tracing::absorb(&mut self.status, status);
        (timeline, lost)
    }

    /// The run's status as its result keeps it: `None` when tracing was not asked for;
    /// the recordings' joined status once one was finished; asked for but none finished
    /// (no cell measured, or none whose wakes could be followed),
    /// [`Tracing::nothing_recorded`] — never a kernel trace that was not taken.
    pub fn status(&self) -> Option<Tracing> {
        self.wanted.then(|| {
            self.status
                .clone()
                .unwrap_or_else(Tracing::nothing_recorded)
        })
    }
}

/// What a run without the kernel's events still says about its wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fallback {
    /// The partial account from /proc (run queue, timer slack): a thread that logs its
    /// own waits.
    Proc,
    /// Nothing: the waits are another thread's or another process's.
    Nothing,
}

impl Fallback {
    fn of(follow: &Follow) -> Self {
        match follow {
            Follow::ThisThread => Fallback::Proc,
            _ => Fallback::Nothing,
        }
    }

    /// What the run gives instead, as its note ends.
    fn then(self) -> &'static str {
        match self {
            Fallback::Proc => "the account is partial (/proc: run queue, timer slack)",
            Fallback::Nothing => "no wake is split",
        }
    }
}

/// The note of a run whose kernel could not be traced: why, what to do, what it gives
/// instead.
fn unavailable_note(e: &TraceError, fallback: Fallback) -> String {
    unavailable(e, fallback.then())
}

/// The one wording of "the kernel cannot be traced": why (`e`), what to do about it,
/// and what the caller does `instead`.
pub fn unavailable(e: &TraceError, instead: &str) -> String {
    let hint = match e {
        TraceError::NotPermitted(_) => "; run as root (sudo) for the kernel's account",
        TraceError::NoTracefs(_) => "; mount tracefs at /sys/kernel/tracing as root",
        _ => "",
    };
    format!("kernel tracing unavailable: {e}{hint}; {instead}")
}

/// The kernel side of a recording.
#[derive(Debug)]
enum Kernel {
    /// Not traced (not wanted, or unavailable: the note says which).
    None,
    /// Drained by the caller between its measurements (boxed: a session holds its
    /// page buffers and decoders).
    Caller(Box<Tracer>),
    /// Drained on a thread of its own.
    Drained(Drainer),
}

/// Tracing for one run (or one cell of it), when asked for. Never fails: where the
/// kernel cannot be traced the run goes on, and the status says why.
#[derive(Debug)]
pub struct Recording {
    wanted: bool,
    kernel: Kernel,
    fallback: Fallback,
    note: Option<String>,
    tid: i32,
    /// The threads followed (`None`: every thread).
    followed: Option<Vec<i32>>,
    /// Every CPU's steal when the kernel's recording began.
    steal_before: Option<Vec<(u32, u64)>>,
    /// The spin log this recording installed, taken down if it ends without `finish`.
    _spin_log: Option<SpinLogInstalled>,
}

/// The measuring thread's spin log, installed by a recording: uninstalled when dropped,
/// so a run that ends early (an error, a panic) leaves no log behind on its thread.
/// `finish` takes the log down itself; then dropping this does nothing.
#[derive(Debug)]
struct SpinLogInstalled {
    tid: i32,
}

impl Drop for SpinLogInstalled {
    fn drop(&mut self) {
        if this_tid() == self.tid && spin_log::installed() {
            spin_log::uninstall();
        }
    }
}

impl Recording {
    /// Records `follow` when `wanted`; the caller drains it between its measurements
    /// ([`Recording::drain`]).
    pub fn start(wanted: bool, follow: Follow) -> Self {
        Self::open(wanted, follow, false)
    }

    /// Records `follow` when `wanted`, drained on a thread of its own while the
    /// followed threads measure.
    pub fn drained(wanted: bool, follow: Follow) -> Self {
        Self::open(wanted, follow, true)
    }

    fn open(wanted: bool, follow: Follow, drained: bool) -> Self {
        let fallback = Fallback::of(&follow);
        let mut r = Self {
            wanted,
            kernel: Kernel::None,
            fallback,
            note: None,
            tid: this_tid(),
            followed: match &follow {
                Follow::ThisThread => Some(vec![this_tid()]),
                Follow::Threads(tids) => Some(tids.clone()),
                // A program's threads come and go: the steal of every CPU.
                Follow::EveryThread | Follow::Program(..) | Follow::ProgramStacks(..) => None,
            },
            steal_before: None,
            _spin_log: None,
        };
        if !wanted {
            return r;
        }
        let tracer = match &follow {
            Follow::ThisThread => Tracer::start(),
            Follow::Threads(tids) => Tracer::for_threads(tids),
            Follow::EveryThread => Tracer::every_thread(),
            Follow::Program(tids, detail, by) => Tracer::for_program(tids, *detail, *by),
            Follow::ProgramStacks(tids, detail, by) => {
                Tracer::for_program_with_stacks(tids, *detail, *by)
            }
        };
        let kernel = tracer.and_then(|t| {
            Ok(if drained {
                Kernel::Drained(Drainer::start(t)?)
            } else {
                Kernel::Caller(Box::new(t))
            })
        });
        match kernel {
            Ok(k) => {
                r.kernel = k;
                r.steal_before = super::steal::read_steal_ns();
                // The measuring thread's spins log their gaps for the host's share.
                if follow == Follow::ThisThread {
                    spin_log::install(SPIN_GAP_NS, SPIN_GAPS_KEPT);
                    r._spin_log = Some(SpinLogInstalled { tid: r.tid });
                }
            }
            Err(e) => r.note = Some(unavailable_note(&e, fallback)),
        }
        r
    }

    /// Logs the gaps of the calling thread's spins for the host's share, as a
    /// recording of [`Follow::ThisThread`] does by itself: for a thread that follows
    /// itself otherwise (the monitor's flight recorder records its own thread as a
    /// program) and splits its wakes too. Nothing without the kernel's events, or from
    /// another thread than the one that started the recording.
    pub fn log_spins(&mut self) {
        if self.kernel() && self._spin_log.is_none() && this_tid() == self.tid {
            spin_log::install(SPIN_GAP_NS, SPIN_GAPS_KEPT);
            self._spin_log = Some(SpinLogInstalled { tid: self.tid });
        }
    }

    /// Logs the calling thread's wakes for the partial /proc account only: the kernel
    /// is not traced, for the reason `why` gives ("kernel tracing off").
    pub fn without_kernel(why: &str) -> Self {
        let fallback = Fallback::Proc;
        Self {
            wanted: true,
            kernel: Kernel::None,
            fallback,
            note: Some(format!("{why}: {}", fallback.then())),
            tid: this_tid(),
            followed: Some(vec![this_tid()]),
            steal_before: None,
            _spin_log: None,
        }
    }

    /// Whether wakes are to be logged at all.
    pub fn wanted(&self) -> bool {
        self.wanted
    }

    /// Whether the kernel's events are recorded.
    pub fn kernel(&self) -> bool {
        !matches!(self.kernel, Kernel::None)
    }

    /// The thread that started the recording (the one [`Follow::ThisThread`] follows).
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// Moves the recorded events out of the kernel's buffers (between measurements);
    /// the events the kernel lost since the last drain.
    pub fn drain(&mut self) -> u64 {
        match &mut self.kernel {
            Kernel::Caller(t) => t.drain().lost,
            _ => 0,
        }
    }

    /// Stops recording until [`Recording::resume`] (a long-running caller records only
    /// while it measures, and pays nothing in between).
    pub fn pause(&self) -> Result<(), TraceError> {
        match &self.kernel {
            Kernel::Caller(t) => t.pause(),
            _ => Ok(()),
        }
    }

    /// Records again after [`Recording::pause`].
    pub fn resume(&self) -> Result<(), TraceError> {
        match &self.kernel {
            Kernel::Caller(t) => t.resume(),
            _ => Ok(()),
        }
    }

    /// The events recorded so far, taken (the recording goes on), and the events the
    /// kernel lost since the last take or drain; `None` without the kernel, or drained
    /// on a thread of its own.
    pub fn take(&mut self) -> Option<(Timeline, u64)> {
        match &mut self.kernel {
            Kernel::Caller(t) => {
                let captured = t.take();
                let lost = captured.lost;
                let tl = with_spin_gaps(Timeline::of(captured), self.tid, false);
                Some((tl, lost))
            }
            _ => None,
        }
    }

    /// What to read before a wait (outside its timed span): the thread's voluntary
    /// context switches when the kernel is traced, its run-queue time for the partial
    /// account when not; nothing when tracing is not wanted.
    #[inline]
    pub fn before_wait(&self) -> Before {
        match (self.wanted, self.kernel()) {
            (false, _) => Before::default(),
            (true, true) => Before::switches(),
            (true, false) => match self.fallback {
                Fallback::Proc => Before::run_queue(),
                Fallback::Nothing => Before::default(),
            },
        }
    }

    /// Stops: the timeline (when the kernel was traced) and the run's tracing status
    /// (`None` when tracing was not wanted).
    pub fn finish(self) -> (Option<Timeline>, Option<Tracing>) {
        if !self.wanted {
            return (None, None);
        }
        let captured: Option<Captured> = match self.kernel {
            Kernel::None => None,
            Kernel::Caller(t) => Some(t.finish()),
            Kernel::Drained(d) => Some(d.finish()),
        };
        // The CPUs the followed threads ran on (every CPU when every thread is followed).
        let followed = self.followed;
        let cpus: Vec<u32> = captured.as_ref().map_or_else(Vec::new, |c| {
            let mut cpus: Vec<u32> = c
                .events
                .iter()
                .filter(
                    |e| matches!(e.kind, Kind::Switch { next_pid, .. } if followed.as_ref().is_none_or(|t| t.contains(&next_pid))),
                )
                .map(|e| e.cpu)
                .collect();
            cpus.sort_unstable();
            cpus.dedup();
            cpus
        });
        let status = Tracing {
            kernel: captured.is_some(),
            note: self.note,
            lost_events: captured.as_ref().map_or(0, |c| c.lost),
            steal_ns: captured
                .as_ref()
                .and(self.steal_before.as_deref())
                .and_then(|before| {
                    Some(super::steal::steal_between(
                        before,
                        &super::steal::read_steal_ns()?,
                        &cpus,
                    ))
                }),
        };
        let tid = self.tid;
        let timeline = captured.map(|c| with_spin_gaps(Timeline::of(c), tid, true));
        (timeline, Some(status))
    }
}

/// A spin gap at least this long is logged for the host's share, ns (the noise
/// probe's threshold: a clock read takes 20–40 ns, a guest interrupt microseconds).
pub const SPIN_GAP_NS: u64 = 5_000;

/// The most spin gaps kept between two takes of a recording (1 MiB).
const SPIN_GAPS_KEPT: usize = 1 << 16;

/// `tl` with the gaps this thread's spins logged since the last take (uninstalling the
/// log when `last`), when this is the thread that logs them (thread `tid`) and none
/// was dropped: otherwise the host's share of its spins stays unknown.
fn with_spin_gaps(tl: Timeline, tid: i32, last: bool) -> Timeline {
    if !spin_log::installed() || this_tid() != tid {
        return tl;
    }
    let log = if last {
        spin_log::uninstall()
    } else {
        spin_log::take()
    };
    if log.dropped > 0 {
        return tl;
    }
    tl.with_spin_gaps(tid, log.gaps.iter().map(|g| (g.from_ns, g.to_ns)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_not_wanted_keeps_nothing() {
        let r = Recording::start(false, Follow::ThisThread);
        assert!(!r.wanted() && !r.kernel());
        assert_eq!(r.before_wait(), Before::default());
        let (tl, tracing) = r.finish();
        assert!(tl.is_none() && tracing.is_none());
    }

    /// The guard a recording keeps takes down the spin log of the thread it names when
    /// dropped, and leaves another thread's alone (the wiring into `Recording` needs a
    /// root tracer: tests/explain_cli.rs runs it).
    #[test]
    fn the_spin_log_guard_takes_down_its_threads_log_only() {
        let guard = SpinLogInstalled { tid: this_tid() };
        spin_log::install(SPIN_GAP_NS, 4);
        assert!(spin_log::installed());
        drop(guard);
        assert!(!spin_log::installed());
        // On another thread the guard leaves this thread's log alone.
        spin_log::install(SPIN_GAP_NS, 4);
        let other = std::thread::spawn(this_tid).join().unwrap();
        drop(SpinLogInstalled { tid: other });
        assert!(spin_log::installed());
        spin_log::uninstall();
    }

    #[test]
    fn notes_say_why_and_what_the_run_gives_instead() {
        let e = TraceError::NotPermitted("not root".into());
        assert_eq!(
            unavailable_note(&e, Fallback::Proc),
            "kernel tracing unavailable: not root; run as root (sudo) for the kernel's \
             account; the account is partial (/proc: run queue, timer slack)"
        );
        assert_eq!(
            unavailable_note(&TraceError::NoEvent("x".into()), Fallback::Nothing),
            "kernel tracing unavailable: the kernel has no tracepoint x; no wake is split"
        );
        let off = Recording::without_kernel("kernel tracing off");
        assert!(off.wanted() && !off.kernel());
        let (_, t) = off.finish();
        assert_eq!(
            t.unwrap().note.as_deref(),
            Some("kernel tracing off: the account is partial (/proc: run queue, timer slack)")
        );
    }

    #[test]
    fn a_runs_status_absorbs_each_recordings() {
        let ok = |lost| Some(Tracing::kernel(lost));
        let mut run = None;
        Tracing::absorb(&mut run, None);
        assert_eq!(run, None);
        Tracing::absorb(&mut run, ok(2));
        Tracing::absorb(&mut run, ok(3));
        assert_eq!(run, ok(5));
        Tracing::absorb(&mut run, Some(Tracing::partial("why")));
        let r = run.unwrap();
        assert!(!r.kernel && r.note.as_deref() == Some("why") && r.lost_events == 5);
    }

    /// Asked for but nothing recorded: not a kernel trace, and the note says so.
    #[test]
    fn a_run_that_recorded_nothing_says_so() {
        let status = Recordings::new(true).status().unwrap();
        assert_eq!(
            status,
            Tracing {
                kernel: false,
                note: Some(
                    "nothing was recorded: the run measured no cell that could be traced".into()
                ),
                lost_events: 0,
                steal_ns: None,
            }
        );
        assert!(status.recorded_nothing());
        assert!(!Tracing::kernel(0).recorded_nothing());
        assert!(!Tracing::partial("why").recorded_nothing());
    }

    #[test]
    fn a_run_not_traced_has_no_status() {
        assert_eq!(Recordings::new(false).status(), None);
    }

    /// A run that finished a recording keeps its status: a kernel trace (joined as
    /// `finish` joins it; unit tests start no tracer) with its lost events, or the
    /// refusal's partial note (a recording without the kernel, finished for real).
    #[test]
    fn a_run_that_recorded_keeps_its_recordings_status() {
        let mut run = Recordings::new(true);
        Tracing::absorb(&mut run.status, Some(Tracing::kernel(4)));
        assert_eq!(run.status(), Some(Tracing::kernel(4)));
        assert!(run.able());
        let mut refused = Recordings::new(true);
        let (tl, lost) = refused.finish(Recording::without_kernel("kernel tracing off"));
        assert!(tl.is_none() && lost == 0);
        let status = refused.status().unwrap();
        assert!(!status.kernel && !status.recorded_nothing());
        assert_eq!(
            status.note.as_deref(),
            Some("kernel tracing off: the account is partial (/proc: run queue, timer slack)")
        );
        assert!(!refused.able());
    }
}
