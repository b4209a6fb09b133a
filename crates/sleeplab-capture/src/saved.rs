//! The saved trace: what a tracer captured ([`Captured`]), the wake windows it was kept
//! for and the writer's own description of the run, as one versioned file that an
//! account can be computed from later, byte for byte as it was live.
//!
//! Format version 1, every integer little-endian, documented in docs/RESULTS.md ("A saved
//! trace"):
//!
//! ```text
//! magic      8 bytes  "SLPTRACE"
//! version    u16      1
//! recorded   u8       0 all, 1 all but sys_exit, 2 a program's (sys_enter too)
//! interrupts u8       the guest's interrupts and softirqs: 0 not recorded, 1 recorded,
//!                     2 recorded but the local timer's
//! lost       u64      events the kernel could not record
//! meta       u32 length, then that many bytes of UTF-8 (the writer's JSON)
//! windows    u32 count, then per window: tid i32, from_ns u64, to_ns u64
//! events     u64 count, then per event:
//!            time_ns u64, cpu u32, pid i32, flags u8, kind u8, then the kind's fields:
//!            0 timer start    timer u64, soft_ns i64, hard_ns i64
//!            1 timer expire   timer u64, now_ns i64
//!            2 waking         pid i32, target_cpu i32
//!            3 switch         prev_pid i32, prev_state i64, prev_comm [16],
//!                             next_pid i32, next_comm [16]
//!            4 sys enter      id i64, args 6 × u64
//!            5 sys exit       id i64, ret i64
//!            6 irq entry      what u8 (0 device, 1 local timer, 2 vector, 3 softirq),
//!                             number i32
//!            7 irq exit       what u8, number i32
//!            8 idle enter     state u32
//!            9 idle exit      (nothing)
//! ```
//!
//! Nothing follows the last event. The reader checks every byte against this layout
//! and refuses what does not fit with a [`SavedTraceError`] (it never panics and never
//! allocates more than the file could hold: fuzzed, target `saved_trace`); a file it
//! accepts encodes back to the same bytes.

use crate::event::{Captured, Comm, Event, Events, Interrupt, InterruptsRecorded, Kind};
use thiserror::Error;

/// The file's first bytes.
pub const SAVED_MAGIC: &[u8; 8] = b"SLPTRACE";

/// The format version this build writes and reads.
pub const SAVED_VERSION: u16 = 1;

/// A wake window a trace was kept for: thread `tid`, from `from_ns` to `to_ns`
/// (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedWindow {
    /// The thread whose wait it is.
    pub tid: i32,
    /// Where the kept events begin.
    pub from_ns: u64,
    /// Where they end.
    pub to_ns: u64,
}

/// A saved trace: the captured events, the windows they were kept for (none: the whole
/// run), and the writer's description of the run (opaque here; sleeplab writes JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SavedTrace {
    /// The writer's description of the run.
    pub meta: String,
    /// The windows the events were kept for; empty for a whole run.
    pub windows: Vec<SavedWindow>,
    /// What was captured.
    pub captured: Captured,
}

/// Why a file is not a saved trace this build can read.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SavedTraceError {
    /// It does not begin with [`SAVED_MAGIC`].
    #[error("not a sleeplab saved trace (it does not begin with SLPTRACE)")]
    NotATrace,
    /// A version this build does not read.
    #[error("saved trace version {0}; this build reads version {SAVED_VERSION}")]
    UnknownVersion(u16),
    /// It ends inside `what`.
    #[error("truncated: the file ends inside {what}")]
    Truncated {
        /// The part it ends in.
        what: &'static str,
    },
    /// A field holds a value the format does not have.
    #[error("corrupt: {what} is {value}")]
    Invalid {
        /// The field.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// The description is not UTF-8.
    #[error("corrupt: the run's description is not UTF-8")]
    MetaNotUtf8,
    /// Bytes after the last event.
    #[error("corrupt: {0} bytes after the last event")]
    TrailingBytes(usize),
}

/// The bytes of the fields every event has (time, cpu, pid, flags, kind).
const EVENT_HEAD: usize = 8 + 4 + 4 + 1 + 1;

/// The bytes of a window.
const WINDOW_BYTES: usize = 4 + 8 + 8;

impl SavedTrace {
    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Vec::with_capacity(64 + self.meta.len() + self.captured.events.len() * 40);
        w.extend_from_slice(SAVED_MAGIC);
        w.extend_from_slice(&SAVED_VERSION.to_le_bytes());
        w.push(recorded_code(self.captured.recorded));
        w.push(interrupts_code(&self.captured));
        w.extend_from_slice(&self.captured.lost.to_le_bytes());
        // A description over 4 GiB cannot be written; none comes near it.
        let meta = &self.meta.as_bytes()[..self.meta.len().min(u32::MAX as usize)];
        w.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        w.extend_from_slice(meta);
        let windows = &self.windows[..self.windows.len().min(u32::MAX as usize)];
        w.extend_from_slice(&(windows.len() as u32).to_le_bytes());
        for win in windows {
            w.extend_from_slice(&win.tid.to_le_bytes());
            w.extend_from_slice(&win.from_ns.to_le_bytes());
            w.extend_from_slice(&win.to_ns.to_le_bytes());
        }
        w.extend_from_slice(&(self.captured.events.len() as u64).to_le_bytes());
        for e in &self.captured.events {
            encode_event(&mut w, e);
        }
        w
    }

    /// Reads a saved trace from its bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, SavedTraceError> {
        let mut r = Reader { bytes, at: 0 };
        if bytes.len() < SAVED_MAGIC.len() || &bytes[..SAVED_MAGIC.len()] != SAVED_MAGIC {
            return Err(SavedTraceError::NotATrace);
        }
        r.at = SAVED_MAGIC.len();
        let version = u16::from_le_bytes(r.array("the version")?);
        if version != SAVED_VERSION {
            return Err(SavedTraceError::UnknownVersion(version));
        }
        let recorded = match r.u8("the header")? {
            0 => Events::All,
            1 => Events::NoSyscallExit,
            2 => Events::Program,
            v => return Err(invalid("the recorded events", v.into())),
        };
        let interrupts = match r.u8("the header")? {
            0 => InterruptsRecorded::None,
            1 => InterruptsRecorded::All,
            2 => InterruptsRecorded::ButLocalTimer,
            v => return Err(invalid("the interrupts flag", v.into())),
        };
        let lost = r.u64("the header")?;
        let meta_len = r.u32("the description")? as usize;
        let meta = String::from_utf8(r.take(meta_len, "the description")?.to_vec())
            .map_err(|_| SavedTraceError::MetaNotUtf8)?;
        let count = r.u32("the windows")? as usize;
        let mut windows = Vec::with_capacity(count.min(r.left() / WINDOW_BYTES));
        for _ in 0..count {
            windows.push(SavedWindow {
                tid: r.i32("a window")?,
                from_ns: r.u64("a window")?,
                to_ns: r.u64("a window")?,
            });
        }
        let count = r.u64("the events")?;
        let fits = (r.left() / EVENT_HEAD) as u64;
        let mut events = Vec::with_capacity(count.min(fits) as usize);
        for _ in 0..count {
            events.push(decode_event(&mut r)?);
        }
        if r.left() > 0 {
            return Err(SavedTraceError::TrailingBytes(r.left()));
        }
        Ok(Self {
            meta,
            windows,
            captured: Captured {
                events,
                recorded,
                lost,
                interrupts,
                stacks: Vec::new(),
                unpaired_stacks: 0,
                late_threads: 0,
            },
        })
    }
}

impl SavedTrace {
    /// The bytes `e` takes in a saved trace (its head and its kind's fields): what a
    /// writer that bounds a file's size counts. Counted by the encoder itself, so the
    /// layout is written once.
    pub fn event_len(e: &Event) -> usize {
        let mut n = Counted(0);
        encode_event(&mut n, e);
        n.0
    }
}

/// Where the encoder puts its bytes: a file's buffer, or a count of them.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Bytes counted, not kept.
struct Counted(usize);

impl Sink for Counted {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

fn invalid(what: &'static str, value: u64) -> SavedTraceError {
    SavedTraceError::Invalid { what, value }
}

fn recorded_code(e: Events) -> u8 {
    match e {
        Events::All => 0,
        Events::NoSyscallExit => 1,
        Events::Program => 2,
    }
}

/// The header's interrupts flag.
fn interrupts_code(c: &Captured) -> u8 {
    match c.interrupts {
        InterruptsRecorded::None => 0,
        InterruptsRecorded::All => 1,
        InterruptsRecorded::ButLocalTimer => 2,
    }
}

fn interrupt_code(i: Interrupt) -> u8 {
    match i {
        Interrupt::Device => 0,
        Interrupt::LocalTimer => 1,
        Interrupt::Vector => 2,
        Interrupt::Softirq => 3,
    }
}

fn encode_event(w: &mut impl Sink, e: &Event) {
    w.put(&e.time_ns.to_le_bytes());
    w.put(&e.cpu.to_le_bytes());
    w.put(&e.pid.to_le_bytes());
    w.put(&[e.flags]);
    match e.kind {
        Kind::TimerStart {
            timer,
            soft_ns,
            hard_ns,
        } => {
            w.put(&[0]);
            w.put(&timer.to_le_bytes());
            w.put(&soft_ns.to_le_bytes());
            w.put(&hard_ns.to_le_bytes());
        }
        Kind::TimerExpire { timer, now_ns } => {
            w.put(&[1]);
            w.put(&timer.to_le_bytes());
            w.put(&now_ns.to_le_bytes());
        }
        Kind::Waking { pid, target_cpu } => {
            w.put(&[2]);
            w.put(&pid.to_le_bytes());
            w.put(&target_cpu.to_le_bytes());
        }
        Kind::Switch {
            prev_pid,
            prev_state,
            prev_comm,
            next_pid,
            next_comm,
        } => {
            w.put(&[3]);
            w.put(&prev_pid.to_le_bytes());
            w.put(&prev_state.to_le_bytes());
            w.put(&prev_comm.0);
            w.put(&next_pid.to_le_bytes());
            w.put(&next_comm.0);
        }
        Kind::SysEnter { id, args } => {
            w.put(&[4]);
            w.put(&id.to_le_bytes());
            for a in args {
                w.put(&a.to_le_bytes());
            }
        }
        Kind::SysExit { id, ret } => {
            w.put(&[5]);
            w.put(&id.to_le_bytes());
            w.put(&ret.to_le_bytes());
        }
        Kind::IrqEntry { what, number } | Kind::IrqExit { what, number } => {
            w.put(&[if matches!(e.kind, Kind::IrqEntry { .. }) {
                6
            } else {
                7
            }]);
            w.put(&[interrupt_code(what)]);
            w.put(&number.to_le_bytes());
        }
        Kind::IdleEnter { state } => {
            w.put(&[8]);
            w.put(&state.to_le_bytes());
        }
        Kind::IdleExit => w.put(&[9]),
    }
}

fn decode_event(r: &mut Reader<'_>) -> Result<Event, SavedTraceError> {
    const WHAT: &str = "an event";
    let time_ns = r.u64(WHAT)?;
    let cpu = r.u32(WHAT)?;
    let pid = r.i32(WHAT)?;
    let flags = r.u8(WHAT)?;
    let kind = match r.u8(WHAT)? {
        0 => Kind::TimerStart {
            timer: r.u64(WHAT)?,
            soft_ns: r.i64(WHAT)?,
            hard_ns: r.i64(WHAT)?,
        },
        1 => Kind::TimerExpire {
            timer: r.u64(WHAT)?,
            now_ns: r.i64(WHAT)?,
        },
        2 => Kind::Waking {
            pid: r.i32(WHAT)?,
            target_cpu: r.i32(WHAT)?,
        },
        3 => Kind::Switch {
            prev_pid: r.i32(WHAT)?,
            prev_state: r.i64(WHAT)?,
            prev_comm: Comm(r.array(WHAT)?),
            next_pid: r.i32(WHAT)?,
            next_comm: Comm(r.array(WHAT)?),
        },
        4 => {
            let id = r.i64(WHAT)?;
            let mut args = [0u64; 6];
            for a in &mut args {
                *a = r.u64(WHAT)?;
            }
            Kind::SysEnter { id, args }
        }
        5 => Kind::SysExit {
            id: r.i64(WHAT)?,
            ret: r.i64(WHAT)?,
        },
        tag @ (6 | 7) => {
            let what = match r.u8(WHAT)? {
                0 => Interrupt::Device,
                1 => Interrupt::LocalTimer,
                2 => Interrupt::Vector,
                3 => Interrupt::Softirq,
                v => return Err(invalid("an interrupt's kind", v.into())),
            };
            let number = r.i32(WHAT)?;
            if tag == 6 {
                Kind::IrqEntry { what, number }
            } else {
                Kind::IrqExit { what, number }
            }
        }
        8 => Kind::IdleEnter {
            state: r.u32(WHAT)?,
        },
        9 => Kind::IdleExit,
        v => return Err(invalid("an event's kind", v.into())),
    };
    Ok(Event {
        time_ns,
        cpu,
        pid,
        flags,
        kind,
    })
}

/// Reads the file front to back.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], SavedTraceError> {
        if n > self.left() {
            return Err(SavedTraceError::Truncated { what });
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], SavedTraceError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, SavedTraceError> {
        Ok(self.take(1, what)?[0])
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, SavedTraceError> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, SavedTraceError> {
        self.array(what).map(i32::from_le_bytes)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, SavedTraceError> {
        self.array(what).map(u64::from_le_bytes)
    }

    fn i64(&mut self, what: &'static str) -> Result<i64, SavedTraceError> {
        self.array(what).map(i64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests;
