//! sleeplab's capture of the kernel's account of a wake: the tracepoints a wake passes
//! (`timer:hrtimer_start`, `timer:hrtimer_expire_entry`, `sched:sched_waking`,
//! `sched:sched_switch`, `raw_syscalls:sys_exit` (and for a followed program
//! `raw_syscalls:sys_enter`); the guest's interrupts and softirqs,
//! `irq:*` and `irq_vectors:*`, where the kernel has them) recorded in private tracefs instances
//! and decoded into [`Event`]s, the contract with the analysis (in the CLI's
//! `trace`), which splits each wake's lateness into components. Nothing here splits a
//! wake. A crate of its own, with no dependency beyond `libc`, `thiserror` and the
//! sleeplab library, so that the decoders of kernel memory layouts are fuzzed cheaply
//! (`fuzz/`, target `trace_pages`).
//!
//! Its modules are private; the list below is the crate's whole interface:
//!
//! * `event`: the decoded events ([`Event`], [`Kind`]), which tracepoints were recorded,
//!   what was captured ([`Captured`]);
//! * `tracefs`, `format`, `decode`: the kernel's event layouts, read at run time
//!   ([`Tracefs`], [`Format`], [`Decoders`]);
//! * `instance`, `ring`, `session`: the private tracefs instances that record them, their
//!   ring buffer pages, and the session over both ([`Session`]; why instances and not
//!   perf events: there);
//! * `lineage`: a followed program's threads from the kernel's forks and exits, and the
//!   event filter that keeps its system calls to them;
//! * `drain`: a session drained on a thread of its own ([`Drainer`]);
//! * `bpf`: a followed program recorded by BPF programs instead ([`BpfSession`],
//!   [`SyscallsBy::Bpf`]; the crate's `bpf` feature);
//! * `saved`: what was captured, as a versioned file ([`SavedTrace`]; fuzzed, target
//!   `saved_trace`);
//! * `coverage`: which CPUs the kernel records fully, and where a traced run measures
//!   ([`placement`]).

mod bpf;
mod coverage;
mod decode;
mod drain;
mod event;
mod format;
mod instance;
mod lineage;
mod ring;
mod saved;
mod session;
mod stacks;
#[cfg(test)]
mod test_support;
mod tracefs;

// The decoded events: the contract with the analysis.
pub use event::{
    Captured, Comm, Detail, Event, Events, FLAG_HARDIRQ, FLAG_NMI, FLAG_SOFTIRQ, IDLE_EXIT_STATE,
    Interrupt, InterruptsRecorded, Kind, SLEEPING_STATES, SyscallsBy,
};
// What was captured, saved to a file and read back.
pub use saved::{SAVED_MAGIC, SAVED_VERSION, SavedTrace, SavedTraceError, SavedWindow};

// Recording: tracefs, its instances and ring pages, the session and its drain; or BPF.
pub use bpf::BpfSession;
pub use decode::{Decoders, Tracepoint, concerns};
pub use drain::{DRAIN_EVERY, Drainer};
pub use format::{BytesField, Field, Format, FormatError, IntField};
pub use instance::Instance;
pub use ring::{PageLayout, PageSummary, RingError, read_page};
pub use session::{Drained, Session, parse_cpu_list};
pub use stacks::{SwitchStack, Symbols};
pub use tracefs::{MOUNT_POINT, Tracefs};

// Which CPUs the kernel records fully, and where a traced run measures.
pub use coverage::{
    Coverage, CpuProbe, MIN_IDLE_SWITCHES, PROBE_SLEEPS, Placement, Recorded, coverage, placement,
};
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
    recorder: Recorder,
    events: Vec<Event>,
    recorded: Events,
}

/// What records a tracer's events.
#[derive(Debug)]
enum Recorder {
    /// Private tracefs instances.
    Ftrace(Box<Session>),
    /// BPF programs (a followed program's, [`SyscallsBy::Bpf`]).
    Bpf(Box<BpfSession>),
}

impl Tracer {
    /// Starts tracing the calling thread.
    pub fn start() -> Result<Self, TraceError> {
        Self::for_threads(&[this_tid()])
    }

    /// Starts tracing the threads `tids`.
    pub fn for_threads(tids: &[i32]) -> Result<Self, TraceError> {
        Ok(Self::new(
            Recorder::Ftrace(Box::new(Session::start(tids)?)),
            Events::All,
        ))
    }

    /// Starts tracing a running program whose threads are `tids` now (see
    /// [`Session::start_program`], or [`BpfSession::start_program`] where `by` is
    /// [`SyscallsBy::Bpf`]), the machine's own work in `detail`, its system calls kept
    /// to it `by`.
    pub fn for_program(tids: &[i32], detail: Detail, by: SyscallsBy) -> Result<Self, TraceError> {
        let recorder = match by {
            SyscallsBy::Bpf => Recorder::Bpf(Box::new(BpfSession::start_program(tids, detail)?)),
            _ => Recorder::Ftrace(Box::new(Session::start_program(tids, detail, by)?)),
        };
        Ok(Self::new(recorder, Events::Program))
    }

    /// [`Tracer::for_program`], recording the kernel stack of every task that leaves a
    /// CPU too (see [`Session::record_stacks`]): with ftrace only, so an error where
    /// `by` is [`SyscallsBy::Bpf`].
    pub fn for_program_with_stacks(
        tids: &[i32],
        detail: Detail,
        by: SyscallsBy,
    ) -> Result<Self, TraceError> {
        if by == SyscallsBy::Bpf {
            return Err(TraceError::Io(
                "kernel stacks are recorded with ftrace only, not by the BPF recorder".into(),
            ));
        }
        let mut session = Session::start_program(tids, detail, by)?;
        session.record_stacks()?;
        Ok(Self::new(
            Recorder::Ftrace(Box::new(session)),
            Events::Program,
        ))
    }

    /// Follows the threads `tids` from now on (a program's threads as they come and go;
    /// see [`Session::follow`]).
    pub fn follow(&mut self, tids: &[i32]) -> Result<(), TraceError> {
        match &mut self.recorder {
            Recorder::Ftrace(s) => s.follow(tids),
            Recorder::Bpf(s) => s.follow(tids),
        }
    }

    /// Starts tracing every thread on the machine (see [`Session::start_every_thread`]).
    pub fn every_thread() -> Result<Self, TraceError> {
        Ok(Self::new(
            Recorder::Ftrace(Box::new(Session::start_every_thread()?)),
            Events::All,
        ))
    }

    fn new(recorder: Recorder, recorded: Events) -> Self {
        Self {
            recorder,
            events: Vec::new(),
            recorded,
        }
    }

    /// Moves the recorded events out of the kernel's buffers (outside measurements).
    pub fn drain(&mut self) -> session::Drained {
        match &mut self.recorder {
            Recorder::Ftrace(s) => s.drain(&mut self.events),
            Recorder::Bpf(s) => s.drain(&mut self.events),
        }
    }

    /// Stops recording until [`Tracer::resume`].
    pub fn pause(&self) -> Result<(), TraceError> {
        match &self.recorder {
            Recorder::Ftrace(s) => s.pause(),
            Recorder::Bpf(s) => s.pause(),
        }
    }

    /// Records again after [`Tracer::pause`].
    pub fn resume(&self) -> Result<(), TraceError> {
        match &self.recorder {
            Recorder::Ftrace(s) => s.resume(),
            Recorder::Bpf(s) => s.resume(),
        }
    }

    /// The recorded events so far, emptying the tracer (it goes on recording); its
    /// `lost` counts the events lost since the last take.
    pub fn take(&mut self) -> Captured {
        let lost = self.drain().lost;
        self.captured(lost)
    }

    /// Stops tracing: everything recorded, and the events lost over the whole session.
    pub fn finish(mut self) -> Captured {
        self.drain();
        let lost = match &self.recorder {
            Recorder::Ftrace(s) => s.lost(),
            Recorder::Bpf(s) => s.lost(),
        };
        self.captured(lost)
    }

    /// What was drained, taken, with `lost` events lost.
    fn captured(&mut self, lost: u64) -> Captured {
        // Only ftrace records kernel stacks and follows a program by a pid window.
        let (interrupts, stacks, unpaired_stacks, late_threads) = match &mut self.recorder {
            Recorder::Ftrace(s) => (
                s.interrupts(),
                s.take_stacks(),
                s.unpaired_stacks(),
                s.late_threads(),
            ),
            Recorder::Bpf(s) => (s.interrupts(), Vec::new(), 0, s.late_threads()),
        };
        Captured {
            events: std::mem::take(&mut self.events),
            recorded: self.recorded,
            lost,
            interrupts,
            stacks,
            unpaired_stacks,
            late_threads,
        }
    }
}
