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
//!   where it stopped the CPU, where it polled), where the kernel has them.
//! * The system-call instance records `raw_syscalls:sys_exit` for the followed threads
//!   only, by `set_event_pid`: the kernel then skips other threads' system calls
//!   before it builds a record, where an event filter would build each one only to
//!   drop it (on the 2-core VM a filtered per-CPU event doubled a `getppid` of every
//!   other process, ≈ 420 → 820 ns).
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
use crate::event::{Detail, Event, Events};
use crate::instance::Instance;
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
    /// Whether the guest's interrupts and softirqs are recorded.
    interrupts: bool,
    /// The kernel stack records' layout, once [`Session::record_stacks`] set them up.
    stack_decoder: Option<StackDecoder>,
    /// The stacks drained, each paired with its switch.
    stacks: Vec<SwitchStack>,
    /// Which switch the next stack record of each CPU belongs to.
    pairing: Pairing,
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
    /// The followed threads' and their children's system calls; every event.
    Program,
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
    /// now on (tracefs's `event-fork`), and the scheduling and timer events of every
    /// thread, all kept: the program's threads are known by their system calls, and a
    /// thread may come and go between two drains. The machine's own work in `detail`.
    pub fn start_program(tids: &[i32], detail: Detail) -> Result<Self, TraceError> {
        Self::open(tids, Mode::Program, Events::Program, detail)
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
        let sched = Instance::create(&fs, &cpus, SCHED_BUFFER_KB)?;
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
            interrupts: false,
            stack_decoder: None,
            stacks: Vec::new(),
            pairing: Pairing::default(),
        };
        if mode == Mode::Program {
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
        session.interrupts = interrupts;
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
        if tp.per_thread() {
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
        if !self.every_thread_syscalls {
            self.syscalls.write("set_event_pid", &pids)?;
        }
        self.tids = tids.to_vec();
        Ok(())
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
        let (decoders, layout, tids) = (&self.decoders, &self.layout, &self.tids);
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
        let lost = self.sched.lost() + self.syscalls.lost();
        d.lost += lost.saturating_sub(self.lost);
        self.lost = self.lost.max(lost);
        d
    }

    /// Whether the guest's interrupts and softirqs are recorded (the kernel has their
    /// tracepoints and enabled them).
    pub fn interrupts(&self) -> bool {
        self.interrupts
    }

    /// Events lost since the start.
    pub fn lost(&self) -> u64 {
        self.lost
    }
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
mod tests {
    use super::*;
    use crate::event::Kind;
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

    /// Sleeps 1 ms twice. The message that woke this thread may have preempted the
    /// other test thread on its way to `recv` (then the first sleep hands the CPU back
    /// to it); by the second, the other has blocked, and this thread's switch out names
    /// a third task.
    fn sleep_after_the_other_blocked() {
        for _ in 0..2 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    fn getppids(n: usize) {
        for _ in 0..n {
            // SAFETY: no preconditions.
            unsafe { libc::getppid() };
        }
    }

    /// The session records the followed thread's system calls and no other's (and every
    /// task's switches: who held a CPU is named from them), and a new set replaces the
    /// old one: the new thread's system calls are recorded, the dropped thread's no more
    /// (as root; elsewhere skipped, but not under CI, which runs as root).
    #[test]
    fn events_follow_exactly_the_followed_threads() {
        let me = crate::this_tid();
        let mut s = match Session::start(&[me]) {
            Ok(s) => s,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        let (to_helper, orders) = mpsc::channel::<usize>();
        let (to_main, done) = mpsc::channel::<i32>();
        let helper = std::thread::spawn(move || {
            to_main.send(crate::this_tid()).unwrap();
            for n in orders {
                getppids(n);
                // Blocks while the test thread waits in `recv`: the helper leaves its CPU
                // to a task other than the test thread (idle or another), a switch that
                // concerns no followed thread.
                sleep_after_the_other_blocked();
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
        // Every task's switches are kept (who held a CPU is named from them): the
        // helper blocked in its sleep while the test thread waited.
        assert!(switches(&events, other, me, 0) >= 1, "{events:?}");

        s.follow(&[other]).unwrap();
        let followed = sleeplab::clock::monotonic_ns();
        events.clear();
        getppids(10);
        // Blocks while the helper waits in `recv`: this thread leaves its CPU to a task
        // other than the helper, a switch kept now although this thread is not followed.
        sleep_after_the_other_blocked();
        to_helper.send(10).unwrap();
        done.recv().unwrap();
        s.drain(&mut events);
        assert_eq!(sys_exits(&events, me, followed), 0);
        assert!(sys_exits(&events, other, followed) >= 10, "{events:?}");
        assert!(switches(&events, me, other, followed) >= 1, "{events:?}");
        // The helper was asleep in `recv` when its order came: it was switched in (from
        // this thread or another, which the filter keeps now for the helper's sake).
        assert!(switches(&events, other, -1, followed) >= 1, "{events:?}");
        drop(to_helper);
        helper.join().unwrap();
    }

    /// Without the system calls' returns, none is recorded, and the followed thread's
    /// switches still are (as root; elsewhere skipped, but not under CI).
    #[test]
    fn no_syscall_exit_records_the_rest() {
        let me = crate::this_tid();
        let mut s = match Session::start_with(&[me], Events::NoSyscallExit, Detail::Full) {
            Ok(s) => s,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        let from = sleeplab::clock::monotonic_ns();
        for _ in 0..5 {
            getppids(10);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut events = Vec::new();
        s.drain(&mut events);
        assert_eq!(sys_exits(&events, me, 0), 0, "{events:?}");
        assert!(switches(&events, me, -1, from) >= 5, "{events:?}");
    }

    /// A thread that spins 30 ms is interrupted by its CPU's timer at least once (the
    /// tick runs while a CPU is busy), and the session records that interrupt's entry
    /// and exit with the spinner as the interrupted task, where the kernel has the
    /// interrupts' tracepoints (as root; elsewhere skipped, but not under CI).
    #[test]
    fn a_spinners_interrupts_are_recorded() {
        let me = crate::this_tid();
        let mut s = match Session::start(&[me]) {
            Ok(s) => s,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        if !s.interrupts() {
            assert!(
                std::env::var_os("CI").is_none(),
                "under CI the kernel's interrupt tracepoints must be recorded"
            );
            return eprintln!("skipped: this kernel records no interrupts");
        }
        let until = sleeplab::clock::monotonic_ns() + 30_000_000;
        while sleeplab::clock::monotonic_ns() < until {
            std::hint::spin_loop();
        }
        let mut events = Vec::new();
        s.drain(&mut events);
        let mine = |entry: bool| {
            events
                .iter()
                .filter(|e| e.pid == me && e.in_hardirq())
                .filter(|e| match e.kind {
                    Kind::IrqEntry { .. } => entry,
                    Kind::IrqExit { .. } => !entry,
                    _ => false,
                })
                .count()
        };
        assert!(mine(true) >= 1 && mine(false) >= 1, "{events:?}");
        // Other threads' interrupts (not of an idle CPU) are not kept.
        assert!(events.iter().all(|e| match e.kind {
            Kind::IrqEntry { .. } | Kind::IrqExit { .. } => e.pid == me || e.pid == 0,
            _ => true,
        }));
    }

    /// A light session records a spinner's timer ticks and an idle CPU's states not at
    /// all, its sleeps' switches and system calls still (as root; elsewhere skipped,
    /// but not under CI).
    #[test]
    fn a_light_session_records_no_interrupt_and_no_idle_state() {
        let me = crate::this_tid();
        let mut s = match Session::start_with(&[me], Events::All, Detail::Light) {
            Ok(s) => s,
            Err(e) if std::env::var_os("CI").is_none() => return eprintln!("skipped: {e}"),
            Err(e) => panic!("tracing unavailable under CI: {e}"),
        };
        assert!(!s.interrupts());
        let until = sleeplab::clock::monotonic_ns() + 30_000_000;
        while sleeplab::clock::monotonic_ns() < until {
            std::hint::spin_loop();
        }
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut events = Vec::new();
        s.drain(&mut events);
        assert!(switches(&events, me, -1, 0) >= 5, "{events:?}");
        assert!(sys_exits(&events, me, 0) >= 5, "{events:?}");
        let machine = |e: &&Event| {
            matches!(
                e.kind,
                Kind::IrqEntry { .. }
                    | Kind::IrqExit { .. }
                    | Kind::IdleEnter { .. }
                    | Kind::IdleExit
            )
        };
        assert_eq!(events.iter().filter(machine).count(), 0, "{events:?}");
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
