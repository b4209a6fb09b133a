//! Why a wake was late, from the kernel's own timestamps.
//!
//! The kernel's tracepoints mark every step of a wake: the timer armed with its slack
//! (`timer:hrtimer_start`), its interrupt (`timer:hrtimer_expire_entry`), the wakeup
//! (`sched:sched_waking`), the switch onto the CPU and who held it until then
//! (`sched:sched_switch`), the system call's return (`raw_syscalls:sys_exit`). A
//! [`Tracer`] records them for the measuring threads while they wait; each wait's
//! window (clock reads before and after, its deadline) is then split into the
//! [`Component`]s of its lateness ([`account`]), and cells are summarised
//! ([`Explanation`]).
//!
//! * [`tracefs`], [`format`], [`decode`]: the kernel's event layouts, read at run time;
//! * [`instance`], [`ring`], [`session`]: the private tracefs instances that record
//!   them, their ring buffer pages, and the session over both (why instances and not
//!   perf events: there);
//! * [`timeline`], [`account`]: the events in order, one wake's split (pure);
//! * [`explanation`]: a cell's statistics of the split, and its JSON form;
//! * [`fallback`]: the partial account `/proc` gives where tracing is unavailable.

pub mod account;
pub mod background;
pub mod component;
pub mod coverage;
pub mod decode;
pub mod event;
pub mod explanation;
pub mod fallback;
pub mod format;
pub mod instance;
pub mod log;
pub mod render;
pub mod ring;
pub mod session;
pub mod timeline;
pub mod tracefs;

pub use account::{Holder, WakeAccount, Window, account};
pub use background::Background;
pub use component::{Component, Parts};
pub use coverage::{Placement, placement};
pub use explanation::{ComponentsNs, Explanation, WakeRecord};
pub use log::{Before, TraceRun, WakeLog};
pub use session::Events;
pub use session::Session;
pub use timeline::Timeline;

use event::Event;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why tracing is unavailable, or failed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum TraceError {
    /// Not allowed (not root).
    #[error("{0}")]
    NotPermitted(String),
    /// No tracefs, and none could be mounted.
    #[error("{0}")]
    NoTracefs(String),
    /// The kernel lacks an event the account needs.
    #[error("the kernel has no tracepoint {0}")]
    NoEvent(String),
    /// An event's layout lacks a field the account reads.
    #[error("unexpected event layout: {0}")]
    Format(String),
    /// Anything else the kernel refused.
    #[error("{0}")]
    Io(String),
}

impl TraceError {
    /// The one-line note a run prints when it goes on without tracing.
    pub fn note(&self) -> String {
        let hint = match self {
            TraceError::NotPermitted(_) => "; run as root (sudo) for the kernel's account",
            TraceError::NoTracefs(_) => "; mount tracefs at /sys/kernel/tracing as root",
            _ => "",
        };
        format!(
            "kernel tracing unavailable: {self}{hint}; the account is partial (/proc: run queue, timer slack)"
        )
    }
}

/// Whether tracing works here: opens and closes a session for this thread.
pub fn available() -> Result<(), TraceError> {
    Session::start(&[this_tid()]).map(drop)
}

/// The calling thread's id.
pub fn this_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Records one thread's waits and the kernel's events around them, then splits each
/// wait's lateness. Lives on the measuring thread; [`Tracer::drain`] between
/// measurements keeps the ring buffers from filling.
#[derive(Debug)]
pub struct Tracer {
    session: Session,
    events: Vec<Event>,
    recorded: Events,
}

impl Tracer {
    /// Starts tracing the calling thread.
    pub fn start() -> Result<Self, TraceError> {
        Self::for_threads(&[this_tid()])
    }

    /// Starts tracing the calling thread, recording `recorded`.
    pub fn start_with(recorded: Events) -> Result<Self, TraceError> {
        Ok(Self::new(
            Session::start_with(&[this_tid()], recorded)?,
            recorded,
        ))
    }

    /// Starts tracing the threads `tids`.
    pub fn for_threads(tids: &[i32]) -> Result<Self, TraceError> {
        Ok(Self::new(Session::start(tids)?, Events::All))
    }

    /// Starts tracing every thread on the machine (see [`Session::start_every_thread`]).
    pub fn every_thread() -> Result<Self, TraceError> {
        Ok(Self::new(Session::start_every_thread()?, Events::All))
    }

    fn new(session: Session, recorded: Events) -> Self {
        Self {
            session,
            events: Vec::new(),
            recorded,
        }
    }

    /// A timeline of `events`, marked with what this tracer records.
    fn timeline(&self, events: Vec<Event>) -> Timeline {
        Timeline::new(events).recording(self.recorded)
    }

    /// Moves the recorded events out of the kernel's buffers (outside measurements).
    pub fn drain(&mut self) -> session::Drained {
        self.session.drain(&mut self.events)
    }

    /// Stops recording until [`Tracer::resume`].
    pub fn pause(&self) -> Result<(), TraceError> {
        self.session.pause()
    }

    /// Records again after [`Tracer::pause`].
    pub fn resume(&self) -> Result<(), TraceError> {
        self.session.resume()
    }

    /// The recorded events so far as a timeline, emptying the tracer (it goes on
    /// recording); and the events lost since the last take.
    pub fn take(&mut self) -> (Timeline, u64) {
        let lost = self.drain().lost;
        let events = std::mem::take(&mut self.events);
        (self.timeline(events), lost)
    }

    /// Stops tracing: the timeline of everything recorded and the events lost.
    pub fn finish(mut self) -> (Timeline, u64) {
        self.drain();
        let lost = self.session.lost();
        let events = std::mem::take(&mut self.events);
        (self.timeline(events), lost)
    }
}

/// Whether a run recorded the kernel's tracepoints, as its result keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tracing {
    /// True when the kernel's events were recorded; false: the partial /proc account.
    pub kernel: bool,
    /// Why not, and what to run instead (when `kernel` is false).
    pub note: Option<String>,
    /// Events the kernel could not record (full buffers), over the run.
    pub lost_events: u64,
}

/// A tracer for the calling thread when `wanted`, or the note that says why there is
/// none (tracing unavailable, or not asked for).
pub fn start_if(wanted: bool) -> (Option<Tracer>, Option<String>) {
    if !wanted {
        return (None, None);
    }
    match Tracer::start() {
        Ok(t) => (Some(t), None),
        Err(e) => (None, Some(e.note())),
    }
}

/// Splits every window of `windows` on `timeline`, and summarises them.
pub fn explain_windows(timeline: &Timeline, windows: &[Window], lost_events: u64) -> Explanation {
    let accounts: Vec<WakeAccount> = windows.iter().map(|w| account(timeline, w)).collect();
    Explanation::of(&accounts, lost_events, false)
}
