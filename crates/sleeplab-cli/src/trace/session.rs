//! A tracing session: the recorded tracepoints opened with `perf_event_open`, one event
//! per tracepoint and CPU, each sampling every occurrence into its own ring buffer with
//! a CLOCK_MONOTONIC timestamp, filtered in the kernel to the followed threads. Drained
//! between measurements, never inside one.
//!
//! `raw_syscalls:sys_exit` is opened per followed thread instead (any CPU, no filter):
//! it fires in the context of the thread whose system call returns, and a per-CPU event
//! would make every system call of every thread on the machine build a record only for
//! the filter to drop it. On the 2-core VM that doubled a `getppid` (≈ 420 → 820 ns)
//! for every other process; a per-thread event costs them only the tracepoint's slow
//! path (≈ 50–100 ns), since the kernel skips a CPU where no event of it is scheduled.
//!
//! Why perf events and not a tracefs instance: the kernel frees them with their file
//! descriptors, so no exit — a panic, Ctrl-C, SIGKILL — can leave tracing state behind
//! for the next run to clean, and nothing another tool set up in tracefs is touched;
//! their records carry nanosecond CLOCK_MONOTONIC times (tracefs' text output has
//! microseconds), and the kernel counts what a full buffer lost.

use super::TraceError;
use super::decode::{Decoders, Tracepoint};
use super::event::Event;
use super::tracefs::Tracefs;
use perf_event_open::config::{Clock, Cpu, Opts, Proc, SampleOn};
use perf_event_open::count::Counter;
use perf_event_open::event::tp::Tracepoint as PerfTracepoint;
use perf_event_open::sample::Sampler;
use perf_event_open::sample::record::Record;
use std::cell::Cell;
use std::ffi::CString;

/// Each ring buffer holds 2^7 pages (512 KiB): a few thousand wakes' events between
/// drains.
const RING_PAGES_LOG2: u8 = 7;

struct Stream {
    tracepoint: Tracepoint,
    /// The thread of a per-thread event; `None`: every thread on one CPU.
    tid: Option<i32>,
    /// Whether it records only for the followed set (filtered, or per thread).
    of_the_set: bool,
    /// Stopped by a change of the followed set: dropped once drained.
    retired: bool,
    counter: Counter,
    sampler: Sampler,
}

/// Where a perf event records.
#[derive(Debug, Clone, Copy)]
enum On<'a> {
    /// One thread, on whichever CPU it runs.
    Thread(i32),
    /// Every thread on one CPU, keeping what the filter (if any) lets through.
    Cpu(u32, Option<&'a str>),
}

/// Tracepoints recorded for a set of threads.
pub struct Session {
    decoders: Decoders,
    opts: Opts,
    cpus: Vec<u32>,
    streams: Vec<Stream>,
    lost: u64,
    tids: Vec<i32>,
    /// Whether the events record: set once `start` has enabled them, cleared while
    /// paused (the events a change of the set opens start only when it is set).
    enabled: Cell<bool>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("streams", &self.streams.len())
            .field("lost", &self.lost)
            .field("tids", &self.tids)
            .finish()
    }
}

/// What a drain found besides events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    /// Events decoded.
    pub events: usize,
    /// Events the kernel could not record (a ring buffer was full).
    pub lost: u64,
}

impl Session {
    /// Starts recording for the threads `tids` (on every CPU).
    pub fn start(tids: &[i32]) -> Result<Self, TraceError> {
        let fs = Tracefs::find_or_mount()?;
        let decoders = Decoders::load(&fs)?;
        let cpus = online_cpus();
        let mut opts = Opts {
            sample_on: SampleOn::Count(1),
            timer: Some(Clock::Monotonic),
            ..Opts::default()
        };
        opts.sample_format.raw = true;
        opts.record_id_format.time = true;
        opts.record_id_format.cpu = true;
        opts.record_id_format.task = true;
        let mut session = Self {
            decoders,
            opts,
            streams: Vec::with_capacity(Tracepoint::ALL.len() * cpus.len()),
            cpus,
            lost: 0,
            tids: Vec::new(),
            enabled: Cell::new(false),
        };
        for tp in Tracepoint::ALL {
            if tp.of_every_thread() {
                for cpu in session.cpus.clone() {
                    session.open(tp, On::Cpu(cpu, None))?;
                }
            }
        }
        session.follow(tids)?;
        for s in &session.streams {
            enable(&s.counter)?;
        }
        session.enabled.set(true);
        Ok(session)
    }

    /// Opens the perf event of `tp` `on` a thread or a CPU, disabled; nothing when the
    /// thread is gone.
    fn open(&mut self, tp: Tracepoint, on: On<'_>) -> Result<(), TraceError> {
        let event = PerfTracepoint {
            id: self.decoders.id(tp),
        };
        let (counter, tid, filter) = match on {
            On::Thread(t) => (
                Counter::new(event, (Proc(t.unsigned_abs()), Cpu::ALL), &self.opts),
                Some(t),
                None,
            ),
            On::Cpu(cpu, filter) => (
                Counter::new(event, (Proc::ALL, Cpu(cpu)), &self.opts),
                None,
                filter,
            ),
        };
        let counter = match counter {
            Ok(c) => c,
            Err(e) if tid.is_some() && e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
            Err(e) => return Err(TraceError::from_open(tp, e)),
        };
        if let Some(f) = filter {
            let c = CString::new(f).expect("no NUL in a filter");
            counter
                .with_ftrace_filter(&c)
                .map_err(|e| TraceError::Io(format!("setting a trace filter: {e}")))?;
        }
        let sampler = counter
            .sampler(RING_PAGES_LOG2)
            .map_err(|e| TraceError::Io(format!("perf ring buffer: {e}")))?;
        self.streams.push(Stream {
            tracepoint: tp,
            tid,
            of_the_set: tid.is_some() || filter.is_some(),
            retired: false,
            counter,
            sampler,
        });
        Ok(())
    }

    /// Follows the threads `tids` from now on (replacing the set). The kernel sets a
    /// perf event's filter once (EEXIST after), so the filtered events are opened anew
    /// with the new set's filter, as are per-thread events for threads not followed
    /// yet (a thread that has exited gets none); the events they replace stop before
    /// the new ones start (between measurements: no event is recorded twice) and are
    /// dropped once drained.
    pub fn follow(&mut self, tids: &[i32]) -> Result<(), TraceError> {
        let filter_tids = if tids.is_empty() { &[-1][..] } else { tids };
        let kept = |s: &Stream| s.tid.is_some_and(|t| tids.contains(&t));
        let first_new = self.streams.len();
        for tp in Tracepoint::ALL {
            if tp.per_thread() {
                for &tid in tids.iter().filter(|&&t| t > 0) {
                    let open = self
                        .streams
                        .iter()
                        .any(|s| !s.retired && s.tid == Some(tid) && s.tracepoint == tp);
                    if !open {
                        self.open(tp, On::Thread(tid))?;
                    }
                }
            } else if let Some(filter) = tp.filter(filter_tids) {
                for cpu in self.cpus.clone() {
                    self.open(tp, On::Cpu(cpu, Some(&filter)))?;
                }
            }
        }
        for s in &mut self.streams[..first_new] {
            if s.of_the_set && !s.retired && !kept(s) {
                s.retired = true;
                disable(&s.counter)?;
            }
        }
        if self.enabled.get() {
            for s in &self.streams[first_new..] {
                enable(&s.counter)?;
            }
        }
        self.tids = filter_tids.to_vec();
        Ok(())
    }

    /// Stops recording until [`Session::resume`] (the events stay open; a long-running
    /// caller traces only while it measures, and pays nothing in between).
    pub fn pause(&self) -> Result<(), TraceError> {
        self.enabled.set(false);
        for s in &self.streams {
            disable(&s.counter)?;
        }
        Ok(())
    }

    /// Records again after [`Session::pause`] (not the events a change of the set
    /// replaced).
    pub fn resume(&self) -> Result<(), TraceError> {
        for s in self.streams.iter().filter(|s| !s.retired) {
            enable(&s.counter)?;
        }
        self.enabled.set(true);
        Ok(())
    }

    /// The threads followed.
    pub fn tids(&self) -> &[i32] {
        &self.tids
    }

    /// Moves every recorded event into `into` (unsorted: streams one after another).
    pub fn drain(&mut self, into: &mut Vec<Event>) -> Drained {
        let mut d = Drained::default();
        for s in &self.streams {
            let Some(iter) = s.sampler.iter() else {
                continue;
            };
            for (_, record) in iter {
                match record {
                    Record::Sample(sample) => {
                        let id = &sample.record_id;
                        let (Some(time), Some(raw)) = (id.time, sample.raw.as_deref()) else {
                            continue;
                        };
                        let cpu = id.cpu.unwrap_or(0);
                        if let Some(e) = self.decoders.decode(s.tracepoint, raw, time, cpu) {
                            into.push(e);
                            d.events += 1;
                        }
                    }
                    Record::LostRecords(lost) => d.lost += lost.lost_records,
                    Record::LostSamples(lost) => d.lost += lost.lost_samples,
                    _ => {}
                }
            }
        }
        self.streams.retain(|s| !s.retired);
        self.lost += d.lost;
        d
    }

    /// Events lost since the start.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// Starts `counter` recording.
fn enable(counter: &Counter) -> Result<(), TraceError> {
    counter
        .enable()
        .map_err(|e| TraceError::Io(format!("enabling a perf event: {e}")))
}

/// Stops `counter` recording.
fn disable(counter: &Counter) -> Result<(), TraceError> {
    counter
        .disable()
        .map_err(|e| TraceError::Io(format!("disabling a perf event: {e}")))
}

/// The online CPUs, from `/sys/devices/system/cpu/online` ("0-1,4").
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let cpus = parse_cpu_list(text.trim());
    if cpus.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        (0..n).collect()
    } else {
        cpus
    }
}

/// A kernel CPU list ("0-3,8,10-11") as CPU numbers.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::Kind;
    use std::sync::mpsc;

    /// The system calls' returns of `tid` among `events`, at or after `from_ns`.
    fn sys_exits(events: &[Event], tid: i32, from_ns: u64) -> usize {
        events
            .iter()
            .filter(|e| matches!(e.kind, Kind::SysExit { .. }))
            .filter(|e| e.pid == tid && e.time_ns >= from_ns)
            .count()
    }

    /// The switches of `tid` (in or out) among `events`, at or after `from_ns`, but
    /// for those from or to `apart` (recorded for `apart` when it is followed).
    fn switches(events: &[Event], tid: i32, apart: i32, from_ns: u64) -> usize {
        events
            .iter()
            .filter(|e| e.time_ns >= from_ns)
            .filter(|e| {
                matches!(e.kind, Kind::Switch { prev_pid, next_pid, .. }
                    if (prev_pid == tid || next_pid == tid)
                        && prev_pid != apart && next_pid != apart)
            })
            .count()
    }

    fn getppids(n: usize) {
        for _ in 0..n {
            // SAFETY: no preconditions.
            unsafe { libc::getppid() };
        }
    }

    /// The per-thread `sys_exit` event records the followed thread's system calls and
    /// no other's, and a new set replaces the old one: the new thread's system calls
    /// and switches are recorded (the filtered events opened anew: the kernel refuses a
    /// second filter), the dropped thread's no more (as root; elsewhere skipped, but not
    /// under CI, which runs as root).
    #[test]
    fn events_follow_exactly_the_followed_threads() {
        let me = crate::trace::this_tid();
        let mut s = match Session::start(&[me]) {
            Ok(s) => s,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        let (to_helper, orders) = mpsc::channel::<usize>();
        let (to_main, done) = mpsc::channel::<i32>();
        let helper = std::thread::spawn(move || {
            to_main.send(crate::trace::this_tid()).unwrap();
            for n in orders {
                getppids(n);
                to_main.send(0).unwrap();
            }
        });
        let other = done.recv().unwrap();
        let mut events = Vec::new();
        getppids(10);
        to_helper.send(10).unwrap();
        done.recv().unwrap();
        s.drain(&mut events);
        assert!(sys_exits(&events, me, 0) >= 10, "{events:?}");
        assert_eq!(sys_exits(&events, other, 0), 0);
        assert_eq!(switches(&events, other, me, 0), 0);

        s.follow(&[other]).unwrap();
        let followed = sleeplab::clock::monotonic_ns();
        events.clear();
        getppids(10);
        to_helper.send(10).unwrap();
        done.recv().unwrap();
        s.drain(&mut events);
        assert_eq!(sys_exits(&events, me, followed), 0);
        assert!(sys_exits(&events, other, followed) >= 10, "{events:?}");
        assert_eq!(switches(&events, me, other, followed), 0);
        // The helper was asleep in `recv` when its order came: it was switched in (from
        // this thread or another, which the filter keeps now for the helper's sake).
        assert!(switches(&events, other, -1, followed) >= 1, "{events:?}");
        drop(to_helper);
        helper.join().unwrap();
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-1,4,6-7"), vec![0, 1, 4, 6, 7]);
        assert_eq!(parse_cpu_list("3"), vec![3]);
        assert!(parse_cpu_list("").is_empty());
        assert!(parse_cpu_list("x").is_empty());
    }
}
