//! A tracing session: the recorded tracepoints opened with `perf_event_open`, one event
//! per tracepoint and CPU, each sampling every occurrence into its own ring buffer with
//! a CLOCK_MONOTONIC timestamp, filtered in the kernel to the followed threads. Drained
//! between measurements, never inside one.
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
use std::ffi::CString;

/// Each ring buffer holds 2^7 pages (512 KiB): a few thousand wakes' events between
/// drains.
const RING_PAGES_LOG2: u8 = 7;

struct Stream {
    tracepoint: Tracepoint,
    counter: Counter,
    sampler: Sampler,
}

/// Tracepoints recorded for a set of threads.
pub struct Session {
    decoders: Decoders,
    streams: Vec<Stream>,
    lost: u64,
    tids: Vec<i32>,
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
        let mut streams = Vec::with_capacity(Tracepoint::ALL.len() * cpus.len());
        for tp in Tracepoint::ALL {
            for &cpu in &cpus {
                let event = PerfTracepoint {
                    id: decoders.id(tp),
                };
                let counter = Counter::new(event, (Proc::ALL, Cpu(cpu)), &opts)
                    .map_err(|e| TraceError::from_open(tp, e))?;
                let sampler = counter
                    .sampler(RING_PAGES_LOG2)
                    .map_err(|e| TraceError::Io(format!("perf ring buffer: {e}")))?;
                streams.push(Stream {
                    tracepoint: tp,
                    counter,
                    sampler,
                });
            }
        }
        let mut session = Self {
            decoders,
            streams,
            lost: 0,
            tids: Vec::new(),
        };
        session.follow(tids)?;
        for s in &session.streams {
            s.counter
                .enable()
                .map_err(|e| TraceError::Io(format!("enabling a perf event: {e}")))?;
        }
        Ok(session)
    }

    /// Follows the threads `tids` from now on (replacing the set).
    pub fn follow(&mut self, tids: &[i32]) -> Result<(), TraceError> {
        let tids = if tids.is_empty() { &[-1][..] } else { tids };
        for s in &self.streams {
            if let Some(filter) = s.tracepoint.filter(tids) {
                let c = CString::new(filter).expect("no NUL in a filter");
                s.counter
                    .with_ftrace_filter(&c)
                    .map_err(|e| TraceError::Io(format!("setting a trace filter: {e}")))?;
            }
        }
        self.tids = tids.to_vec();
        Ok(())
    }

    /// Stops recording until [`Session::resume`] (the events stay open; a long-running
    /// caller traces only while it measures, and pays nothing in between).
    pub fn pause(&self) -> Result<(), TraceError> {
        for s in &self.streams {
            s.counter
                .disable()
                .map_err(|e| TraceError::Io(format!("disabling a perf event: {e}")))?;
        }
        Ok(())
    }

    /// Records again after [`Session::pause`].
    pub fn resume(&self) -> Result<(), TraceError> {
        for s in &self.streams {
            s.counter
                .enable()
                .map_err(|e| TraceError::Io(format!("enabling a perf event: {e}")))?;
        }
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
        self.lost += d.lost;
        d
    }

    /// Events lost since the start.
    pub fn lost(&self) -> u64 {
        self.lost
    }
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

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1"), vec![0, 1]);
        assert_eq!(parse_cpu_list("0-1,4,6-7"), vec![0, 1, 4, 6, 7]);
        assert_eq!(parse_cpu_list("3"), vec![3]);
        assert!(parse_cpu_list("").is_empty());
        assert!(parse_cpu_list("x").is_empty());
    }
}
