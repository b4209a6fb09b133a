//! A tracing session: two private tracefs instances ([`Instance`]) recording the
//! tracepoints a wake's account needs, with CLOCK_MONOTONIC nanosecond timestamps
//! (trace clock `mono`), read page by page from each CPU's `trace_pipe_raw`
//! ([`crate::ring`]). Drained between measurements, never inside one.
//!
//! * The scheduling instance records the timer events and `sched_waking` /
//!   `sched_switch` of every thread; the drain keeps those that concern the followed
//!   threads ([`concerns`]: a filter in the kernel loses some, see there).
//!   The guest's interrupts and softirqs (`irq:*`, `irq_vectors:*`), where the
//!   kernel has them, are recorded there too; the drain keeps those that interrupted a
//!   followed thread or an idle CPU. So are the idle loop's states (`power:cpu_idle`:
//!   where it stopped the CPU, where it polled), where the kernel has them. A program's
//!   default detail ([`Detail::Interrupts`]) leaves out the local timer's interrupt and
//!   the idle states, whose tracepoints lie on the way of every wake from an idle CPU.
//! * The system-call instance records `raw_syscalls:sys_exit` for the followed threads
//!   only, by `set_event_pid`: the kernel then skips other threads' system calls
//!   before it builds a record, where an event filter would build each one only to
//!   drop it (on the 2-core VM a filtered per-CPU event doubled a `getppid` of every
//!   other process, ≈ 420 → 820 ns).
//! * A followed program's system calls share the scheduling instance instead, behind
//!   an event filter that follows its forks ([`SyscallsBy::Filter`], `lineage.rs`),
//!   unless the kernel's pid list is asked for: the list's hooks on every switch and
//!   wakeup are gone, which took about 0.5–1 µs off each of the program's wakes, and
//!   every other process's system calls cost more (each builds its records before the
//!   filter drops them: about 0.1 µs more than the list's on a `getppid`; a pipe round
//!   trip, two switches and two wakeups, cost about as much either way).
//!
//! Why tracefs instances and not `perf_event_open` on the same tracepoints: on the
//! kernels here (6.18 under a VM) perf loses the tracepoints that fire in a hard
//! interrupt while a CPU other than the first is idle — `perf record -a` saw 22 of
//! 100 timer expiries of a thread pinned to CPU 1, and none of its wakeups, where
//! ftrace saw all of them — and those are exactly the timer interrupt and the wakeup
//! of a sleeping thread. Ftrace has a blind spot of its own there: it records nothing
//! the idle task of CPU 1 emits outside interrupts, so a thread's switch onto an idle
//! CPU 1 is never seen (of 201 switches of a pinned Python thread out, 0 in; on CPU 0
//! all of them): a traced run measures on a CPU the kernel records fully
//! (`coverage.rs`), and wakes that still lose an event are counted partly
//! unexplained. An instance leaves the top-level buffer's settings alone; it is removed
//! when the session ends, and after a SIGKILL by the next run.

use crate::TraceError;
use crate::decode::{Decoders, Tracepoint, concerns};
use crate::event::{Detail, Event, Events, InterruptsRecorded, Kind, SyscallsBy};
use crate::instance::Instance;
use crate::lineage::{Lineage, LineageDecoders};
use crate::ring::{PageLayout, read_page};
use crate::stacks::{Pairing, StackDecoder, SwitchStack, TRIGGER};
use crate::tracefs::Tracefs;

/// Each CPU's buffer in the scheduling instance, KiB: tens of thousands of events
/// between drains (the timer events of the whole machine among them).
const SCHED_BUFFER_KB: u32 = 2048;
/// Each CPU's buffer in the system-call instance, KiB (the followed threads' only): a
/// program's burst of calls between two drains. The Python here makes about 9 100
/// system calls as it starts (helpers it runs included): with 256 KiB `explain -- python3
/// …` lost 600–1 400 events in 9 of 10 runs, with 1 MiB none in 10.
const SYSCALL_BUFFER_KB: u32 = 1024;

/// Tracepoints recorded for a set of threads.
pub struct Session {
    decoders: Decoders,
    layout: PageLayout,
    sched: Instance,
    syscalls: Instance,
    page: Vec<u8>,
    /// Events lost so far, as the instances' statistics last said.
    lost: u64,
    tids: Vec<i32>,
    /// Keep the events of every thread (a probe process, whose threads are named only
    /// once it runs; a followed program's): `tids` does not filter the drain.
    every_thread: bool,
    /// Record the system calls of every thread (`set_event_pid` left empty).
    every_thread_syscalls: bool,
    /// Events lost before a change of the followed set, for the next drain to report.
    carried_lost: u64,
    /// Events drained when the followed set changed, kept for the next drain.
    pending: Vec<Event>,
    /// Which of the guest's interrupts and softirqs are recorded.
    interrupts: InterruptsRecorded,
    /// The kernel stack records' layout, once [`Session::record_stacks`] set them up.
    stack_decoder: Option<StackDecoder>,
    /// The stacks drained, each paired with its switch.
    stacks: Vec<SwitchStack>,
    /// Which switch the next stack record of each CPU belongs to.
    pairing: Pairing,
    /// A followed program's threads, where its system calls are kept to them by an
    /// event filter (`lineage.rs`) rather than by `set_event_pid`.
    lineage: Option<Lineage>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("sched", &self.sched)
            .field("syscalls", &self.syscalls)
            .field("lost", &self.lost)
            .field("tids", &self.tids)
            .finish()
    }
}

/// Which threads a session records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The followed threads' system calls; the events that concern them.
    Followed,
    /// Every thread's system calls and events.
    EveryThread,
    /// The followed threads' and their children's system calls, kept to them as
    /// said; every event.
    Program(SyscallsBy),
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
        Self::open(tids, Mode::Followed, Events::All, Detail::Full)
    }

    /// Starts recording `recorded` in `detail` for the threads `tids` (on every CPU).
    pub fn start_with(tids: &[i32], recorded: Events, detail: Detail) -> Result<Self, TraceError> {
        Self::open(tids, Mode::Followed, recorded, detail)
    }

    /// Starts recording the events of every thread on the machine (their system
    /// calls' returns too), for threads not known yet; the account picks each wake's
    /// thread out of them.
    pub fn start_every_thread() -> Result<Self, TraceError> {
        Self::open(&[], Mode::EveryThread, Events::All, Detail::Full)
    }

    /// Starts recording a running program ([`Events::Program`]): the system calls'
    /// entries and returns of its threads `tids` and of every thread they create from
    /// now on, kept to them `by` [`SyscallsBy`], and the scheduling and timer events
    /// of every thread, all kept: the program's threads are known by their system
    /// calls, and a thread may come and go between two drains. The machine's own work
    /// in `detail`. `TraceError::NoEvent` where a filter is asked for and the kernel
    /// lacks the fork and exit events it follows the program by.
    pub fn start_program(tids: &[i32], detail: Detail, by: SyscallsBy) -> Result<Self, TraceError> {
        Self::open(tids, Mode::Program(by), Events::Program, detail)
    }

    fn open(
        tids: &[i32],
        mode: Mode,
        recorded: Events,
        detail: Detail,
    ) -> Result<Self, TraceError> {
        let fs = Tracefs::find_or_mount()?;
        let decoders = Decoders::load(&fs)?;
        let layout = fs.page_layout()?;
        let cpus = online_cpus();
        let lineage = match mode {
            Mode::Program(SyscallsBy::Filter) => {
                let d = lineage_decoders(&fs)
                    .ok_or_else(|| TraceError::NoEvent("sched:sched_process_fork".into()))?;
                let (pid_max, newest, tasks) = crate::lineage::machine_pids();
                Some(Lineage::new(d, tids, newest, tasks, pid_max))
            }
            _ => None,
        };
        // A program's system calls share the scheduling instance, behind the filter.
        let sched_kb = SCHED_BUFFER_KB + lineage.as_ref().map_or(0, |_| SYSCALL_BUFFER_KB);
        let sched = Instance::create(&fs, &cpus, sched_kb)?;
        let syscalls = Instance::create(&fs, &cpus, SYSCALL_BUFFER_KB)?;
        let mut session = Self {
            decoders,
            layout,
            sched,
            syscalls,
            page: vec![0; fs.page_size()],
            lost: 0,
            tids: Vec::new(),
            every_thread: mode != Mode::Followed,
            every_thread_syscalls: mode == Mode::EveryThread,
            carried_lost: 0,
            pending: Vec::new(),
            interrupts: InterruptsRecorded::None,
            stack_decoder: None,
            stacks: Vec::new(),
            pairing: Pairing::default(),
            lineage,
        };
        if session.lineage.is_some() {
            for ev in ["sched_process_fork", "sched_process_exit"] {
                session.sched.enable_event("sched", ev)?;
            }
        } else if mode == Mode::Program(SyscallsBy::PidList) {
            // Threads the followed ones create are followed too, from their first call.
            session.syscalls.write("options/event-fork", "1")?;
        }
        session.follow(tids)?;
        if recorded.records_sys_enter() && !session.decoders.has(Tracepoint::SysEnter) {
            return Err(TraceError::NoEvent("raw_syscalls:sys_enter".into()));
        }
        let mut interrupts = detail.records_interrupts() && session.decoders.interrupts();
        for tp in Tracepoint::ALL
            .into_iter()
            .filter(|&tp| tp.recorded_by(recorded, detail) && session.decoders.has(tp))
        {
            let (sys, ev) = tp.path();
            match session.instance_of(tp).enable_event(sys, ev) {
                Ok(()) => {}
                Err(e) if tp.required() => return Err(e),
                // An interrupt's tracepoint the kernel lists but will not record: the
                // interrupts count as not recorded.
                Err(_) if tp.interrupt().is_some() => interrupts = false,
                // The idle states unrecorded: the account reads no idle state.
                Err(_) => {}
            }
        }
        let local_timer = detail.records_idle_path()
            && [Tracepoint::LocalTimerEntry, Tracepoint::LocalTimerExit]
                .into_iter()
                .all(|tp| session.decoders.has(tp));
        session.interrupts = match (interrupts, local_timer) {
            (false, _) => InterruptsRecorded::None,
            (true, false) => InterruptsRecorded::ButLocalTimer,
            (true, true) => InterruptsRecorded::All,
        };
        session.resume()?;
        Ok(session)
    }

    /// Records, from now on, the kernel stack of every task that leaves a CPU (all
    /// but the idle task), each paired with its switch: a `stacktrace` trigger on
    /// `sched_switch` ([`SwitchStack`]). An error where the kernel has no stack
    /// records or refuses the trigger.
    pub fn record_stacks(&mut self) -> Result<(), TraceError> {
        let fs = Tracefs::find_or_mount()?;
        let decoder = StackDecoder::from_format(&fs.format("ftrace", "kernel_stack")?)
            .ok_or_else(|| TraceError::NoEvent("ftrace:kernel_stack".into()))?;
        self.sched
            .write("events/sched/sched_switch/trigger", TRIGGER)?;
        self.stack_decoder = Some(decoder);
        Ok(())
    }

    /// The stacks drained so far, taken.
    pub fn take_stacks(&mut self) -> Vec<SwitchStack> {
        std::mem::take(&mut self.stacks)
    }

    /// Stack records that followed no switch on their CPU (a record lost between
    /// them): dropped, not paired with another switch.
    pub fn unpaired_stacks(&self) -> u64 {
        self.pairing.unpaired
    }

    fn instance_of(&self, tp: Tracepoint) -> &Instance {
        if tp.per_thread() && self.lineage.is_none() {
            &self.syscalls
        } else {
            &self.sched
        }
    }

    /// Follows the threads `tids` from now on (replacing the set; between
    /// measurements). What was recorded until now is drained for the old set first.
    pub fn follow(&mut self, tids: &[i32]) -> Result<(), TraceError> {
        let mut pending = std::mem::take(&mut self.pending);
        let drained = self.drain(&mut pending);
        self.pending = pending;
        self.carried_lost += drained.lost;
        let tids = if tids.is_empty() { &[-1][..] } else { tids };
        let pids: Vec<String> = tids
            .iter()
            .filter(|&&t| t > 0)
            .map(|t| t.to_string())
            .collect();
        // An empty set_event_pid would record every thread: -1 matches none.
        let pids = if pids.is_empty() {
            "-1".to_string()
        } else {
            pids.join(" ")
        };
        if let Some(lineage) = self.lineage.as_mut() {
            lineage.set_known(tids);
            let filter = lineage.initial_filter();
            self.write_syscall_filter(&filter)?;
        } else if !self.every_thread_syscalls {
            self.syscalls.write("set_event_pid", &pids)?;
        }
        self.tids = tids.to_vec();
        Ok(())
    }

    /// Keeps the system calls recorded to `filter` (a followed program's, [`Lineage`]).
    fn write_syscall_filter(&self, filter: &str) -> Result<(), TraceError> {
        for tp in [Tracepoint::SysEnter, Tracepoint::SysExit] {
            if self.decoders.has(tp) {
                let (sys, ev) = tp.path();
                self.sched
                    .write(&format!("events/{sys}/{ev}/filter"), filter)?;
            }
        }
        Ok(())
    }

    /// Children of a followed program born where its filter did not reach (the machine
    /// created tasks faster than the drains moved it on): their first system calls may
    /// be missing, and their waits with them.
    pub fn late_threads(&self) -> u64 {
        self.lineage.as_ref().map_or(0, Lineage::late)
    }

    /// Stops recording until [`Session::resume`] (a long-running caller traces only
    /// while it measures, and pays nothing in between).
    pub fn pause(&self) -> Result<(), TraceError> {
        self.sched.set_on(false)?;
        self.syscalls.set_on(false)
    }

    /// Records again after [`Session::pause`].
    pub fn resume(&self) -> Result<(), TraceError> {
        self.sched.set_on(true)?;
        self.syscalls.set_on(true)
    }

    /// Moves every recorded event of the followed threads into `into` (unsorted: CPUs
    /// one after another).
    pub fn drain(&mut self, into: &mut Vec<Event>) -> Drained {
        let mut d = Drained {
            events: self.pending.len(),
            lost: std::mem::take(&mut self.carried_lost),
        };
        into.append(&mut self.pending);
        let start = into.len();
        let (decoders, layout, tids) = (&self.decoders, &self.layout, &self.tids);
        let lineage = &mut self.lineage;
        let every_thread = self.every_thread;
        let (stack_decoder, stacks, pairing) =
            (self.stack_decoder, &mut self.stacks, &mut self.pairing);
        // Read up to the first page that reaches past the drain's start; what comes
        // later waits for the next drain.
        let now_ns = sleeplab::clock::monotonic_ns();
        for instance in [&mut self.sched, &mut self.syscalls] {
            // A read error leaves the rest of this buffer for the next drain; what it
            // never yields shows as partly unexplained wakes.
            let _ = instance.read_pages(&mut self.page, |cpu, page| {
                let mut last_ns = 0;
                let read = read_page(layout, page, |time_ns, record| {
                    last_ns = time_ns;
                    if lineage.as_mut().is_some_and(|l| l.take(record, time_ns)) {
                        return;
                    }
                    if let Some(sd) = stack_decoder.filter(|sd| sd.is_stack(record)) {
                        if let Some(switch_ns) = pairing.stack(cpu) {
                            stacks.push(SwitchStack {
                                cpu,
                                time_ns: switch_ns,
                                frames: sd.frames(record),
                            });
                        }
                        return;
                    }
                    let e = decoders.decode_record(record, time_ns, cpu);
                    if stack_decoder.is_some() {
                        let switch = e
                            .filter(|e| matches!(e.kind, crate::event::Kind::Switch { .. }))
                            .map(|e| e.time_ns);
                        pairing.record(cpu, switch);
                    }
                    if let Some(e) = e.filter(|e| every_thread || concerns(e, tids)) {
                        into.push(e);
                        d.events += 1;
                    }
                });
                read.is_ok() && last_ns < now_ns
            });
        }
        self.follow_lineage(into, start, &mut d);
        let lost = self.sched.lost() + self.syscalls.lost();
        d.lost += lost.saturating_sub(self.lost);
        self.lost = self.lost.max(lost);
        d
    }

    /// A followed program's forks and exits drained: its system calls among `into[start..]`
    /// kept (other tasks' in the filter's window dropped), and the filter moved on.
    fn follow_lineage(&mut self, into: &mut Vec<Event>, start: usize, d: &mut Drained) {
        let Some(lineage) = self.lineage.as_mut() else {
            return;
        };
        let kept = lineage.apply();
        let before = into.len();
        let mut index = 0;
        into.retain(|e| {
            let keep = index < start
                || !matches!(e.kind, Kind::SysEnter { .. } | Kind::SysExit { .. })
                || kept.contains(&e.pid);
            index += 1;
            keep
        });
        d.events -= before - into.len();
        if let Some(filter) = lineage.next_filter(crate::lineage::tasks()) {
            // Refused, the filter in force stays: children it misses are counted late.
            let _ = self.write_syscall_filter(&filter);
        }
    }

    /// Which of the guest's interrupts and softirqs are recorded (those whose
    /// tracepoints the kernel has and enabled; the local timer's on x86 kernels, in
    /// [`Detail::Full`]).
    pub fn interrupts(&self) -> InterruptsRecorded {
        self.interrupts
    }

    /// Events lost since the start.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// The layouts of the fork and exit events, where the kernel has both.
fn lineage_decoders(fs: &Tracefs) -> Option<LineageDecoders> {
    let fork = fs.format("sched", "sched_process_fork").ok()?;
    let exit = fs.format("sched", "sched_process_exit").ok()?;
    LineageDecoders::from_formats(&fork, &exit).ok()
}

/// The online CPUs, from `/sys/devices/system/cpu/online` ("0-1,4").
pub(crate) fn online_cpus() -> Vec<u32> {
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
mod tests;
